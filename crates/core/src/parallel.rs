//! How the engine runs its work: spread over the machine's cores where there are threads (the
//! command line, native tests), in order on the calling thread where there are none
//! (WebAssembly), and long loops a block per call.
//!
//! Every function here gives the same result on one thread as on many: jobs are independent,
//! and results come back in the order of the jobs.
//!
//! # Long loops, and the browser
//! A WebAssembly engine (V8) gives a function its optimised code from its next call on, never
//! to the call that is running: one call over a million rows, or over a whole file, runs in
//! baseline code to the end, several times slower. So the engine's long loops run a block per
//! call: [`for_each_row`] and [`row_blocks`] here, and the same idea where a loop has its own
//! shape (the CSV readers, the SHA-256, the line count). Natively this costs nothing.

/// How many threads the work of one call may use: the machine's cores, at most 8; 1 in
/// WebAssembly, which has no threads here.
pub fn threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// `f` applied to every job, on up to [`threads`] threads, results in the order of `jobs`.
/// Each thread takes the next job not yet taken, so a few large jobs and many small ones share
/// the threads fairly when the large ones come first.
///
/// # Example
/// ```
/// let squares = slo_core::parallel::map((1..=5).collect(), |x: u64| x * x);
/// assert_eq!(squares, [1, 4, 9, 16, 25]);
/// ```
pub fn map<T: Send, R: Send>(jobs: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = jobs.len();
    let threads = threads().min(n);
    if threads <= 1 {
        return jobs.into_iter().map(f).collect();
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::Mutex;
        let queue = Mutex::new(jobs.into_iter().enumerate());
        let next = || queue.lock().ok().and_then(|mut q| q.next());
        let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
            let workers: Vec<_> = (1..threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut out = Vec::new();
                        while let Some((k, job)) = next() {
                            out.push((k, f(job)));
                        }
                        out
                    })
                })
                .collect();
            let mut out = Vec::new();
            while let Some((k, job)) = next() {
                out.push((k, f(job)));
            }
            for w in workers {
                // A worker that panicked re-raises its panic here, as a loop would.
                match w.join() {
                    Ok(mut theirs) => out.append(&mut theirs),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            out
        });
        done.sort_unstable_by_key(|(k, _)| *k);
        done.into_iter().map(|(_, r)| r).collect()
    }
    #[cfg(target_arch = "wasm32")]
    {
        unreachable!("one thread in WebAssembly")
    }
}

/// `(a(), b())`, with `a` on another thread where there is one. `b` runs on the calling
/// thread, so it may borrow what is not `Send` (a progress callback).
pub fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    #[cfg(not(target_arch = "wasm32"))]
    if threads() > 1 {
        return std::thread::scope(|s| {
            let a = s.spawn(a);
            let b = b();
            match a.join() {
                Ok(a) => (a, b),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
    }
    (a(), b())
}

/// Rows per block of [`row_blocks`] and [`fill`].
const BLOCK: usize = 1 << 16;

/// `0..n` in blocks of 65,536 rows, for a loop over every request that runs a call per block
/// (see the module's notes on the browser).
pub fn row_blocks(n: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..n)
        .step_by(BLOCK)
        .map(move |start| start..(start + BLOCK).min(n))
}

/// `out[row] = f(row)` for every row, a block of rows per job of [`map`]: on several threads
/// where there are some, in order and a call per block in WebAssembly.
///
/// # Example
/// ```
/// let mut squares = vec![0u64; 100_000];
/// slo_core::parallel::fill(&mut squares, |row| (row * row) as u64);
/// assert_eq!(squares[99_999], 99_999 * 99_999);
/// ```
pub fn fill<T: Send>(out: &mut [T], f: impl Fn(usize) -> T + Sync) {
    let blocks: Vec<(usize, &mut [T])> = out
        .chunks_mut(BLOCK)
        .enumerate()
        .map(|(k, block)| (k * BLOCK, block))
        .collect();
    map(blocks, |(start, block)| {
        for (row, slot) in (start..).zip(block.iter_mut()) {
            *slot = f(row);
        }
    });
}

/// `f` on every row of `0..n`, in order, on this thread, a call per block of [`row_blocks`].
///
/// # Example
/// ```
/// let mut seen = Vec::new();
/// slo_core::parallel::for_each_row(70_000, |row| seen.push(row));
/// assert_eq!(seen, (0..70_000).collect::<Vec<_>>());
/// ```
pub fn for_each_row(n: usize, mut f: impl FnMut(usize)) {
    #[inline(never)]
    fn block(rows: std::ops::Range<usize>, f: &mut impl FnMut(usize)) {
        for row in rows {
            f(row);
        }
    }
    for rows in row_blocks(n) {
        block(rows, &mut f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_the_order_of_the_jobs_whatever_thread_ran_them() {
        // Uneven jobs, so that threads finish out of order.
        let jobs: Vec<u64> = (0..200).map(|k| (k * 7919) % 1000).collect();
        let want: Vec<u64> = jobs.iter().map(|&x| (0..x).sum()).collect();
        assert_eq!(map(jobs, |x| (0..x).sum::<u64>()), want);
        assert_eq!(map(Vec::<u8>::new(), |x| x), Vec::<u8>::new());
    }

    #[test]
    fn join_gives_both_results() {
        let mut heard = Vec::new();
        let (a, ()) = join(|| 6 * 7, || heard.push(1));
        assert_eq!((a, heard), (42, vec![1]));
    }
}
