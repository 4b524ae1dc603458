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
    const SIGN: u64 = 1 << 63;
    // A negative float has every bit flipped, a positive one only its sign bit.
    let key = |x: f64| {
        let b = x.to_bits();
        if b & SIGN != 0 {
            !b
        } else {
            b | SIGN
        }
    };
    let unkey = |k: u64| f64::from_bits(if k & SIGN != 0 { k & !SIGN } else { !k });
    let mut keys: Vec<u64> = std::mem::take(values).into_iter().map(key).collect();
    keys.sort_unstable();
    *values = keys.into_iter().map(unkey).collect();
}

/// Sorts `values`, made of sorted runs put one after another (the sorted columns of a group of
/// more cells than `slo_core::quantile::values_at_ranks` reads across cheaply), in
/// [`f64::total_cmp`] order. The stable sort finds the runs and merges them,
/// in about linear time for a few runs; equal values have equal bits, so the result is the
/// same as any sort's.
///
/// Latencies have no sign bit set, and for such floats `total_cmp`'s order is the order of
/// their bits as unsigned integers: then the runs are merged comparing bits, a cheaper
/// comparison (about a fifth less time in V8). Any value with its sign bit set (a negative
/// number, −0, a negative NaN) takes `total_cmp` itself.
pub fn merge_runs(values: &mut [f64]) {
    if values.iter().all(|x| x.is_sign_positive()) {
        values.sort_by_key(|x| x.to_bits());
    } else {
        values.sort_by(f64::total_cmp);
    }
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

    /// Both of `merge_runs`'s ways give `total_cmp`'s order, bit for bit.
    #[test]
    fn merge_runs_matches_total_cmp_with_and_without_signs() {
        let mut next = sequence(0x2545_f491_4f6c_dd1d);
        for signed in [false, true] {
            // Three sorted runs of latency-like values, positive specials among them.
            let mut runs: Vec<Vec<f64>> = (0..3)
                .map(|r| {
                    (0..20_000 + r * 777)
                        .map(|k| match next() % 8 {
                            0 => f64::INFINITY,
                            1 => f64::NAN,
                            2 => 0.0,
                            3 if signed => -((next() % 1000) as f64),
                            4 if signed && k % 2 == 0 => -0.0,
                            _ => (next() % 100_000) as f64 / 1000.0,
                        })
                        .collect()
                })
                .collect();
            runs.iter_mut().for_each(|r| r.sort_by(f64::total_cmp));
            let mut got: Vec<f64> = runs.concat();
            let mut want = got.clone();
            want.sort_by(f64::total_cmp);
            merge_runs(&mut got);
            assert_eq!(bits(&got), bits(&want), "signed: {signed}");
        }
    }

    #[test]
    fn merge_runs_gives_the_sorted_whole() {
        let runs = [
            vec![-1.0, -0.0, 0.5, 7.0],
            vec![f64::NAN],
            vec![0.0, 0.5, 2.0, 9.0],
        ];
        let mut values: Vec<f64> = runs.concat();
        merge_runs(&mut values);
        // total_cmp puts -0 before 0, and a positive NaN after every number.
        let want = [-1.0, -0.0, 0.0, 0.5, 0.5, 2.0, 7.0, 9.0, f64::NAN];
        assert_eq!(bits(&values), bits(&want));
    }
}
