//! The engine's sorts of float columns, in [`f64::total_cmp`] order.
//!
//! They live in a crate of their own for one reason: the app's WebAssembly is built for size
//! (`opt-level = "z"`), and a sort built that way runs about four times slower than one built
//! for speed (a million values: 87 ms against 22 ms in V8). The workspace builds this crate at
//! `opt-level = 3` (`[profile.release.package.slo-sort]`), which costs a few kilobytes. The
//! standard library's sorts are generic, so their code is generated in the crate that calls
//! them: here. Keep these functions non-generic and without `#[inline]`, or the sort is
//! generated again inside `slo-core`, at that crate's `opt-level`. `slo-core` sorts every
//! column of latencies (and each request's gaps) through them.

/// Sorts `values` in [`f64::total_cmp`] order: the same result, bit for bit, as
/// `values.sort_unstable_by(f64::total_cmp)`, in about two thirds of the time.
///
/// Each float becomes an integer key whose unsigned order is `total_cmp`'s order, the keys are
/// sorted as plain integers (a cheaper comparison than `total_cmp`'s), and turned back. Floats
/// equal under `total_cmp` have the same bits, so the order of equal elements cannot differ.
/// The keys live in the column's own memory (a `Vec<f64>` mapped to a `Vec<u64>` of the same
/// size is collected in place), so a million values cost no second 8 MB.
/// (An LSD radix sort was tried too: no faster on a million values here, being bound by memory.)
pub fn sort_total(values: &mut Vec<f64>) {
    let mut keys: Vec<u64> = std::mem::take(values).into_iter().map(total_key).collect();
    keys.sort_unstable();
    *values = keys.into_iter().map(from_total_key).collect();
}

const SIGN: u64 = 1 << 63;

/// The integer key of `x` whose unsigned order is [`f64::total_cmp`]'s: a negative float with
/// every bit flipped, a positive one with its sign bit set. (Inlined where it is called: it is
/// a few instructions, not a sort.)
#[inline]
pub fn total_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b & SIGN != 0 {
        !b
    } else {
        b | SIGN
    }
}

/// The float whose [`total_key`] is `k`.
#[inline]
pub fn from_total_key(k: u64) -> f64 {
    f64::from_bits(if k & SIGN != 0 { k & !SIGN } else { !k })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence (xorshift) from `seed`.
    fn sequence(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// `sort_total` must give exactly what the comparison sort gives, bit for bit.
    fn check_sort(values: Vec<f64>) {
        let mut want = values.clone();
        want.sort_unstable_by(f64::total_cmp);
        let mut got = values;
        let memory = got.as_ptr();
        sort_total(&mut got);
        // Sorted where it was: the keys took no memory of their own.
        assert!(got.is_empty() || got.as_ptr() == memory);
        assert_eq!(bits(&got), bits(&want));
    }

    #[test]
    fn sort_total_matches_total_cmp() {
        let mut next = sequence(0x9e37_79b9_7f4a_7c15);
        let special = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE / 2.0,
            f64::MAX,
            f64::MIN,
        ];
        for n in [0, 1, 2, 100, 5000, 70_000] {
            // Latency-like values with duplicates, any bit pattern, and the special values.
            let values: Vec<f64> = (0..n)
                .map(|k| match next() % 4 {
                    0 => (next() % 100_000) as f64 / 1000.0,
                    1 => f64::from_bits(next()),
                    2 => special[k % special.len()],
                    _ => -((next() % 1000) as f64),
                })
                .collect();
            check_sort(values);
        }
        check_sort(vec![42.5; 10_000]);
    }
}
