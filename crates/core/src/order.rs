//! Stable sorts of the engine's small lists (sweep points, lints, failure rows, Prometheus
//! series), all through one sort of positions.
//!
//! `slice::sort_by` is generic over both the item type and the comparison, so each call site
//! gets its own copy of the standard library's sort, about 4 KB of wasm each: the app's wasm
//! had 19, and 6 remain. Here the sort itself runs once, on positions with a comparison behind
//! a reference; what each call site adds is the small loop that moves the items into place.
//!
//! The result is the one a stable sort must give: equal items keep their order. It costs a
//! call through a reference per comparison and a second pass to move the items: on a million
//! items about twice the standard sort's time (77 against 41 ms natively). So lists with one
//! entry per request keep the standard sort (`budget::events`, `budget::diagnose`), and large
//! columns of numbers go to `slo-sort` or `sort_by(f64::total_cmp)`, which is a single copy for
//! every caller.

use std::cmp::Ordering;

/// Sorts `items` stably by `cmp`: exactly what `items.sort_by(cmp)` gives.
pub fn sort_by<T>(items: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    sort_positions(&mut order, &|a, b| cmp(&items[a], &items[b]));
    // `order[k]` is the position of the item that belongs at k. Each cycle of the permutation
    // is walked once, swapping its items into place; a position done is marked by
    // `order[k] == k`.
    for start in 0..order.len() {
        let mut k = start;
        while order[k] != k {
            let next = order[k];
            order[k] = k;
            if next != start {
                items.swap(k, next);
            }
            k = next;
        }
    }
}

/// Sorts `items` stably by the key `key` gives: exactly what `items.sort_by_key(key)` gives.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// The one sort behind every call above. Not inlined, so that it stays one copy.
#[inline(never)]
fn sort_positions(order: &mut [usize], cmp: &dyn Fn(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| cmp(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::sequence;

    #[test]
    fn the_same_as_the_standard_stable_sort() {
        let mut next = sequence(7);
        for len in [0, 1, 2, 3, 5, 19, 20, 21, 64, 257, 1000] {
            // Few distinct keys, so that many are equal and stability shows.
            let items: Vec<(u64, usize)> = (0..len).map(|i| (next() % 7, i)).collect();
            let mut ours = items.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            let mut theirs = items.clone();
            theirs.sort_by_key(|a| a.0);
            assert_eq!(ours, theirs, "{len} items");
        }
    }

    #[test]
    fn equal_items_keep_their_order_and_reversed_input_sorts() {
        let mut words = vec!["pear", "fig", "apple", "kiwi", "date", "plum"];
        sort_by_key(&mut words, |w| w.len());
        assert_eq!(words, ["fig", "pear", "kiwi", "date", "plum", "apple"]);

        let mut down: Vec<i32> = (0..50).rev().collect();
        sort_by(&mut down, Ord::cmp);
        assert_eq!(down, (0..50).collect::<Vec<_>>());
    }

    #[test]
    fn floats_by_total_order() {
        let mut xs = vec![3.0, -0.0, f64::NAN, 0.0, -1.5, f64::INFINITY];
        sort_by(&mut xs, f64::total_cmp);
        let bits: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
        let mut want = [3.0, -0.0, f64::NAN, 0.0, -1.5, f64::INFINITY];
        want.sort_by(f64::total_cmp);
        assert_eq!(bits, want.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
    }
}
