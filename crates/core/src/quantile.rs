//! Percentiles with a named definition.
//!
//! Every numpy `percentile` method is implemented with numpy's own arithmetic (virtual index, gamma,
//! `_lerp`), so results equal `numpy.percentile(x, q, method=NAME)` to the last bit or two; the
//! committed reference test (`tests/quantile_reference.rs`, data from `tests/reference/quantiles.py`)
//! checks thousands of cases. [`Method::NearestRank`] adds the textbook nearest-rank percentile that
//! many SLO tools report. [`percentile_ci95`] gives a distribution-free confidence interval.
//!
//! All functions take `q` in percent, `[0, 100]`, like `numpy.percentile` (not `numpy.quantile`).

use crate::stats::{binomial_cdf, binomial_mode, binomial_pmf, Z95};

/// A percentile definition: the 13 methods of `numpy.percentile` (numpy >= 1.22), by their numpy
/// names, plus the nearest-rank definition.
///
/// Types 1-9 are Hyndman & Fan, "Sample Quantiles in Statistical Packages" (1996).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// numpy `inverted_cdf`, H&F type 1.
    InvertedCdf,
    /// numpy `averaged_inverted_cdf`, H&F type 2.
    AveragedInvertedCdf,
    /// numpy `closest_observation`, H&F type 3.
    ClosestObservation,
    /// numpy `interpolated_inverted_cdf`, H&F type 4.
    InterpolatedInvertedCdf,
    /// numpy `hazen`, H&F type 5.
    Hazen,
    /// numpy `weibull`, H&F type 6.
    Weibull,
    /// numpy `linear`, H&F type 7: numpy's, R's and Excel `PERCENTILE.INC`'s default.
    Linear,
    /// numpy `median_unbiased`, H&F type 8.
    MedianUnbiased,
    /// numpy `normal_unbiased`, H&F type 9.
    NormalUnbiased,
    /// numpy `lower`: the order statistic at `floor((n-1)p)`.
    Lower,
    /// numpy `higher`: the order statistic at `ceil((n-1)p)`.
    Higher,
    /// numpy `midpoint`: the mean of `lower` and `higher`.
    Midpoint,
    /// numpy `nearest`: the order statistic at `(n-1)p` rounded half to even.
    Nearest,
    /// Nearest rank: the smallest value with at least q% of the values at or below it. Not a numpy
    /// method.
    NearestRank,
}

impl Method {
    /// Every method, numpy's 13 in numpy's documentation order, then [`Method::NearestRank`].
    pub const ALL: [Method; 14] = [
        Method::InvertedCdf,
        Method::AveragedInvertedCdf,
        Method::ClosestObservation,
        Method::InterpolatedInvertedCdf,
        Method::Hazen,
        Method::Weibull,
        Method::Linear,
        Method::MedianUnbiased,
        Method::NormalUnbiased,
        Method::Lower,
        Method::Higher,
        Method::Midpoint,
        Method::Nearest,
        Method::NearestRank,
    ];

    /// The numpy name (`"linear"`, `"inverted_cdf"`, …), or `"nearest_rank"`. Same as the serde name.
    ///
    /// # Example
    /// ```
    /// use slo_core::quantile::Method;
    /// assert_eq!(Method::MedianUnbiased.name(), "median_unbiased");
    /// assert_eq!(Method::NearestRank.name(), "nearest_rank");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Method::InvertedCdf => "inverted_cdf",
            Method::AveragedInvertedCdf => "averaged_inverted_cdf",
            Method::ClosestObservation => "closest_observation",
            Method::InterpolatedInvertedCdf => "interpolated_inverted_cdf",
            Method::Hazen => "hazen",
            Method::Weibull => "weibull",
            Method::Linear => "linear",
            Method::MedianUnbiased => "median_unbiased",
            Method::NormalUnbiased => "normal_unbiased",
            Method::Lower => "lower",
            Method::Higher => "higher",
            Method::Midpoint => "midpoint",
            Method::Nearest => "nearest",
            Method::NearestRank => "nearest_rank",
        }
    }

    /// Parses a [`Method::name`], ignoring ASCII case and treating `-` as `_`.
    ///
    /// # Edge cases
    /// Unknown names (including numpy's pre-1.22 `interpolation=` spellings) and surrounding
    /// whitespace give `None`.
    ///
    /// # Example
    /// ```
    /// use slo_core::quantile::Method;
    /// assert_eq!(Method::from_name("Nearest-Rank"), Some(Method::NearestRank));
    /// assert_eq!(Method::from_name("LINEAR"), Some(Method::Linear));
    /// assert_eq!(Method::from_name("type7"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<Method> {
        let wanted = s.to_ascii_lowercase().replace('-', "_");
        Method::ALL.into_iter().find(|m| m.name() == wanted)
    }

    /// One line for humans: the numpy name and the textbook definition.
    ///
    /// # Example
    /// ```
    /// use slo_core::quantile::Method;
    /// assert_eq!(
    ///     Method::Linear.describe(),
    ///     "numpy 'linear' (Hyndman & Fan type 7, numpy's default)"
    /// );
    /// ```
    pub fn describe(self) -> &'static str {
        match self {
            Method::InvertedCdf => {
                "numpy 'inverted_cdf' (Hyndman & Fan type 1: inverse of the empirical CDF)"
            }
            Method::AveragedInvertedCdf => {
                "numpy 'averaged_inverted_cdf' (Hyndman & Fan type 2: type 1, averaged at jumps)"
            }
            Method::ClosestObservation => {
                "numpy 'closest_observation' (Hyndman & Fan type 3: nearest order statistic, ties to even)"
            }
            Method::InterpolatedInvertedCdf => {
                "numpy 'interpolated_inverted_cdf' (Hyndman & Fan type 4: piecewise-linear empirical CDF)"
            }
            Method::Hazen => "numpy 'hazen' (Hyndman & Fan type 5)",
            Method::Weibull => "numpy 'weibull' (Hyndman & Fan type 6)",
            Method::Linear => "numpy 'linear' (Hyndman & Fan type 7, numpy's default)",
            Method::MedianUnbiased => {
                "numpy 'median_unbiased' (Hyndman & Fan type 8, approximately median-unbiased)"
            }
            Method::NormalUnbiased => {
                "numpy 'normal_unbiased' (Hyndman & Fan type 9, unbiased for normal data)"
            }
            Method::Lower => "numpy 'lower' (order statistic at floor((n-1)q/100))",
            Method::Higher => "numpy 'higher' (order statistic at ceil((n-1)q/100))",
            Method::Midpoint => "numpy 'midpoint' (mean of 'lower' and 'higher')",
            Method::Nearest => {
                "numpy 'nearest' (order statistic at (n-1)q/100 rounded half to even)"
            }
            Method::NearestRank => {
                "nearest rank (smallest value with at least q% of values at or below it; not numpy)"
            }
        }
    }
}

impl Default for Method {
    /// [`Method::Linear`], numpy's default.
    fn default() -> Self {
        Method::Linear
    }
}

/// The q-th percentile of ascending data, by a named definition.
///
/// # Formula
/// With `n = sorted.len()`, `p = q / 100` and 0-based order statistics `x[i]`, numpy computes a
/// virtual index `v` and reads or interpolates the order statistics around it:
/// ```text
/// inverted_cdf               x[i], v = n·p - 1: i = v if v is an integer, else floor(v) + 1
/// averaged_inverted_cdf      like inverted_cdf, but the mean of x[v] and x[v+1] when v is an integer
/// closest_observation        v = n·p - 1.5: i = v if v is an odd integer, else floor(v) + 1
/// H&F types 4-9              v = n·p + (α + p·(1 - α - β)) - 1, interpolated:
///   interpolated_inverted_cdf  α = 0,   β = 1
///   hazen                      α = 1/2, β = 1/2
///   weibull                    α = 0,   β = 0
///   linear                     v = (n-1)·p          (α = β = 1)
///   median_unbiased            α = 1/3, β = 1/3
///   normal_unbiased            α = 3/8, β = 3/8
/// lower / higher / nearest   x[floor(v)] / x[ceil(v)] / x[round_half_even(v)], v = (n-1)·p
/// midpoint                   (x[floor(v)] + x[ceil(v)]) / 2, v = (n-1)·p
/// nearest_rank               x[ceil(n·q/100) - 1], clamped to [0, n-1]
/// ```
/// Interpolation is numpy's `_lerp`: with `g = v - floor(v)`, `x[i] + (x[i+1]-x[i])·g` for `g < 0.5`
/// and `x[i+1] - (x[i+1]-x[i])·(1-g)` otherwise. Indices below 0 read `x[0]`, at or above `n-1` read
/// `x[n-1]`. The float operations are done in numpy's order (q is divided by 100 first, as
/// `numpy.percentile` does), so results equal `numpy.percentile(x, q, method=NAME)` bit for bit in
/// all of the ~57,000 cases compared during development; the committed reference test checks them
/// to 1e-9 relative.
///
/// For `nearest_rank`, `r = n·q/100` is computed as `q·n/100` (so `90·10/100` is exactly 9), and an
/// `r` at most `4·f64::EPSILON·max(r, 1)` above an integer counts as that integer, so decimal
/// percentiles like 33.3 or 99.9 give the rank their decimal value implies despite binary rounding.
///
/// # Edge cases
/// Empty `sorted`: `None`. `q` outside `[0, 100]` or not finite: `None`. `n = 1`: the single value for
/// every q and method. `q = 0` gives the minimum and `q = 100` the maximum for every method.
/// `sorted` must be ascending without NaN (use [`percentiles`] for raw data); otherwise the result is
/// meaningless but the function does not panic. Infinite values behave as in numpy (interpolating
/// next to one can give NaN or ±inf).
///
/// # Example
/// ```
/// use slo_core::quantile::{percentile_sorted, Method};
/// let ttft_ms = [180.0, 220.0, 240.0, 260.0, 300.0, 310.0, 350.0, 390.0, 410.0, 640.0];
/// // numpy.percentile(ttft_ms, 90) prints 432.99999999999994, and so does this: v = 9·0.9 is
/// // 8.100000000000001 in binary floating point.
/// let p90 = percentile_sorted(&ttft_ms, 90.0, Method::Linear).unwrap_or(f64::NAN);
/// assert!((p90 - 433.0).abs() <= 1e-9 * 433.0);
/// assert_eq!(percentile_sorted(&ttft_ms, 90.0, Method::Nearest), Some(410.0));
/// assert_eq!(percentile_sorted(&ttft_ms, 90.0, Method::NearestRank), Some(410.0));
/// assert_eq!(percentile_sorted(&ttft_ms, 100.5, Method::Linear), None);
/// assert_eq!(percentile_sorted(&[], 50.0, Method::Linear), None);
/// ```
pub fn percentile_sorted(sorted: &[f64], q: f64, method: Method) -> Option<f64> {
    percentile_ranked(Ranked::Slice(sorted), q, method)
}

/// Values in ascending order, read by position (0-based): a sorted slice, or
/// the union of sorted runs that is never built (read through [`values_at_ranks`]). The
/// percentile functions read a few positions, chosen from the count alone, never the values.
#[derive(Clone, Copy)]
pub enum Ranked<'a> {
    /// A sorted slice, read where it is.
    Slice(&'a [f64]),
    /// `len` values; `at(i)` is the one at position `i` (below `len`).
    Read {
        len: usize,
        at: &'a dyn Fn(usize) -> f64,
    },
}

impl Ranked<'_> {
    /// How many values there are.
    pub fn len(&self) -> usize {
        match self {
            Ranked::Slice(s) => s.len(),
            Ranked::Read { len, .. } => *len,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at position `i` (NaN past the end).
    pub fn at(&self, i: usize) -> f64 {
        match self {
            Ranked::Slice(s) => s.get(i).copied().unwrap_or(f64::NAN),
            Ranked::Read { len, at } if i < *len => at(i),
            Ranked::Read { .. } => f64::NAN,
        }
    }
}

/// Above this many runs (not counting empty ones), [`values_at_ranks`] sorts them together:
/// passing values costs about `a²` reads a position for `a` runs, where a sort costs the same
/// for any number of runs (natively, a million values in 30 runs: 2.3 ms passed against 17 ms
/// merged; in 200 runs: 53 ms passed, 26 ms merged, 15 ms sorted).
const PASS_UP_TO: usize = 32;

/// The values at `ranks` (0-based positions, ascending) of the union of sorted `runs`, as if
/// the runs had been merged into one sorted column: a group's percentiles read from its
/// cells' sorted columns.
///
/// # Method
/// Up to [`PASS_UP_TO`] runs, without merging them. From one wanted position to the next,
/// with `r` values still to pass and `a` runs not yet used up, it passes `m = max(1, r / a)`
/// values at once: the `m` next values of the run whose `m`-th next value is smallest (or its
/// last, when it has fewer left). Each other run holds at most `m - 1` values below that one,
/// so those `m` come within the next `a·(m - 1) + 1 <= r` values of the merged order: none of
/// them is the one wanted. The gap shrinks by a factor `1 - 1/a` a step, so a position costs
/// about `a² · ln(gap)` reads, and a few hundred of them over a million values in a few runs
/// take microseconds, where a merge passes every value. More runs are put together and
/// sorted ([`slo_sort::sort_total`]), and read where they are.
///
/// # Edge cases
/// Order is [`f64::total_cmp`]'s (runs must be sorted in it); equal values have equal bits, so
/// which run a tie is taken from cannot change a result. A rank past the union's end, or one
/// below the one before it, reads NaN. Empty runs are ignored.
pub fn values_at_ranks(runs: &[&[f64]], ranks: &[usize]) -> Vec<f64> {
    let runs: Vec<&[f64]> = runs.iter().copied().filter(|r| !r.is_empty()).collect();
    if runs.len() > PASS_UP_TO {
        let mut merged = runs.concat();
        slo_sort::sort_total(&mut merged);
        let mut last = 0;
        return ranks
            .iter()
            .map(|&rank| {
                let forward = rank >= last;
                last = last.max(rank);
                merged
                    .get(rank)
                    .copied()
                    .filter(|_| forward)
                    .unwrap_or(f64::NAN)
            })
            .collect();
    }
    // next[j]: how many values of run j are passed; `active`: runs not yet used up.
    let mut next = vec![0usize; runs.len()];
    let mut active = runs.len();
    let mut passed = 0usize;
    let mut out = Vec::with_capacity(ranks.len());
    for &rank in ranks {
        let Some(mut left) = rank.checked_sub(passed) else {
            out.push(f64::NAN);
            continue;
        };
        while left > 0 && active > 0 {
            let m = (left / active).max(1);
            // The run whose m-th next value (or last) is smallest, and how many values that is.
            let mut best: Option<(usize, usize, f64)> = None;
            for (j, (run, &k)) in runs.iter().zip(&next).enumerate() {
                let step = m.min(run.len().saturating_sub(k));
                let Some(&v) = run.get(k + step.saturating_sub(1)).filter(|_| step > 0) else {
                    continue;
                };
                if best.is_none_or(|(_, _, b)| v.total_cmp(&b).is_lt()) {
                    best = Some((j, step, v));
                }
            }
            let Some((j, step, _)) = best else {
                break;
            };
            if let (Some(k), Some(run)) = (next.get_mut(j), runs.get(j)) {
                *k += step;
                if *k == run.len() {
                    active -= 1;
                }
            }
            left -= step;
            passed += step;
        }
        // The smallest value not yet passed is the one at `rank`.
        let head = runs
            .iter()
            .zip(&next)
            .filter_map(|(run, &k)| run.get(k).copied())
            .min_by(f64::total_cmp);
        out.push(if left == 0 {
            head.unwrap_or(f64::NAN)
        } else {
            f64::NAN
        });
    }
    out
}

/// [`values_at_ranks`] of parts in any order: the values at `ranks` (0-based positions,
/// ascending) of the union of `parts` as if it were sorted, found without sorting it. For the
/// few positions a report reads (percentiles, their intervals, the extremes), where sorting
/// every column was a fifth of what the command line's report cost.
///
/// # Method
/// Each value's bits become an integer key in [`f64::total_cmp`] order
/// ([`slo_sort::total_key`]). Three passes over the values: the smallest and largest
/// key; how many keys fall in each of [`SELECT_BUCKETS`] equal ranges between them; and the keys
/// of the ranges that hold a wanted position, which are few (a handful of percentiles
/// touch a few ranges of thousands). The wanted positions are then positions among those keys,
/// which are read the same way (at most [`SELECT_LEVELS`] times) or, once at most
/// [`SELECT_SORT_UP_TO`] are left, sorted. The values found are exactly those a sort puts at
/// the positions: an order statistic does not depend on how it is found.
///
/// # Edge cases
/// As [`values_at_ranks`]: a rank past the union's end, or one below the one before it, reads
/// NaN; empty parts are ignored; NaN, infinities and -0 take their places in `total_cmp`'s order.
pub fn select_at_ranks(parts: &[&[f64]], ranks: &[usize]) -> Vec<f64> {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    // The ranks that can be read (ascending, inside the union), and where each goes.
    let mut last = 0;
    let readable: Vec<bool> = ranks
        .iter()
        .map(|&rank| {
            let forward = rank >= last;
            last = last.max(rank);
            forward && rank < n
        })
        .collect();
    let wanted: Vec<usize> = ranks
        .iter()
        .zip(&readable)
        .filter(|p| *p.1)
        .map(|p| *p.0)
        .collect();
    let keys = || {
        parts
            .iter()
            .flat_map(|p| p.iter().map(|&x| slo_sort::total_key(x)))
    };
    let mut found = select_keys(keys, n, &wanted, SELECT_LEVELS).into_iter();
    readable
        .iter()
        .map(|&ok| match ok {
            true => found.next().map_or(f64::NAN, slo_sort::from_total_key),
            false => f64::NAN,
        })
        .collect()
}

/// [`select_at_ranks`] splits the keys' span into this many ranges a pass.
const SELECT_BUCKETS: usize = 1 << 12;
/// [`select_at_ranks`] sorts what is left once it is this small.
const SELECT_SORT_UP_TO: usize = 1 << 12;
/// [`select_at_ranks`] narrows at most this many times, then sorts what is left (a span that
/// does not shrink: a few values far from all the others, each in a wanted range).
const SELECT_LEVELS: usize = 4;

/// The keys at `ranks` (ascending, each below `n`) among the `n` keys that `keys()` yields
/// (each call yields them again, in the same order): see [`select_at_ranks`]. `levels`: how
/// many more times the keys may be narrowed before they are sorted.
fn select_keys<I: Iterator<Item = u64>>(
    keys: impl Fn() -> I,
    n: usize,
    ranks: &[usize],
    mut levels: usize,
) -> Vec<u64> {
    let mut step = narrow(keys, n, ranks, levels);
    loop {
        match step {
            Narrowed::Found(found) => return found,
            Narrowed::Left(left, inner) => {
                levels = levels.saturating_sub(1);
                step = narrow(|| left.iter().copied(), left.len(), &inner, levels);
            }
        }
    }
}

/// One step of [`select_keys`].
enum Narrowed {
    /// The keys at the ranks.
    Found(Vec<u64>),
    /// Fewer keys that hold the wanted ones, and the ranks among them.
    Left(Vec<u64>, Vec<usize>),
}

/// The keys at `ranks` if they are few enough to sort (or `levels` is 0, or all are equal),
/// else the keys of the ranges that hold a wanted rank and the ranks among them.
fn narrow<I: Iterator<Item = u64>>(
    keys: impl Fn() -> I,
    n: usize,
    ranks: &[usize],
    levels: usize,
) -> Narrowed {
    let sorted = |keys: Vec<u64>| {
        let mut all = keys;
        all.sort_unstable();
        Narrowed::Found(ranks.iter().filter_map(|&r| all.get(r).copied()).collect())
    };
    if ranks.is_empty() {
        return Narrowed::Found(Vec::new());
    }
    let (lo, hi) = keys().fold((u64::MAX, 0), |(lo, hi), k| (lo.min(k), hi.max(k)));
    if n <= SELECT_SORT_UP_TO || levels == 0 || lo == hi {
        return sorted(keys().collect());
    }
    // Range of a key: its offset from the smallest, cut to the top bits of the span.
    let span_bits = u64::BITS - (hi - lo).leading_zeros();
    let shift = span_bits.saturating_sub(SELECT_BUCKETS.trailing_zeros());
    let range_of = |k: u64| ((k - lo) >> shift) as usize;
    let mut counts = vec![0usize; SELECT_BUCKETS];
    for k in keys() {
        if let Some(c) = counts.get_mut(range_of(k)) {
            *c += 1;
        }
    }
    // The range of each rank, and its position among the keys of the wanted ranges.
    let mut wanted = vec![false; SELECT_BUCKETS];
    let mut inner = Vec::with_capacity(ranks.len());
    // `start`: keys in the ranges before `range`; `kept`: those in wanted ranges.
    let (mut range, mut start, mut kept) = (0, 0usize, 0);
    for &rank in ranks {
        loop {
            let count = counts.get(range).copied().unwrap_or(usize::MAX);
            if rank < start.saturating_add(count) {
                break;
            }
            if wanted.get(range).copied().unwrap_or(false) {
                kept += count;
            }
            start += count;
            range += 1;
        }
        if let Some(w) = wanted.get_mut(range) {
            *w = true;
        }
        inner.push(kept + rank - start);
    }
    let left: Vec<u64> = keys()
        .filter(|&k| wanted.get(range_of(k)).copied().unwrap_or(false))
        .collect();
    if left.len() == n {
        // Nothing was set aside, and narrowing again would set nothing aside either.
        return sorted(left);
    }
    Narrowed::Left(left, inner)
}

/// [`percentile_sorted`] of values read by position.
pub fn percentile_ranked(sorted: Ranked, q: f64, method: Method) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&q) {
        return None;
    }
    let n = sorted.len();
    let nf = n as f64;
    let last = n - 1;
    let n_minus_1 = last as f64;
    // numpy.percentile divides first (np.true_divide(q, 100)) and works with the fraction.
    let p = q / 100.0;
    match method {
        Method::InvertedCdf => {
            let i = discrete_to_boundary(nf * p - 1.0, |_| true);
            Some(sorted.at(clamp_index(i, last)))
        }
        Method::ClosestObservation => {
            // H&F: "choose the nearest even order statistic at g = 0"; 1-based even is 0-based odd.
            let i = discrete_to_boundary(nf * p - 1.0 - 0.5, |prev| prev.rem_euclid(2.0) == 1.0);
            Some(sorted.at(clamp_index(i, last)))
        }
        Method::AveragedInvertedCdf => interpolate(sorted, nf * p - 1.0, averaged_gamma),
        Method::InterpolatedInvertedCdf => continuous(sorted, p, 0.0, 1.0),
        Method::Hazen => continuous(sorted, p, 0.5, 0.5),
        Method::Weibull => continuous(sorted, p, 0.0, 0.0),
        // numpy uses (n-1)·p rather than the (mathematically equal) α = β = 1 formula.
        Method::Linear => interpolate(sorted, n_minus_1 * p, |gamma, _| gamma),
        Method::MedianUnbiased => continuous(sorted, p, 1.0 / 3.0, 1.0 / 3.0),
        Method::NormalUnbiased => continuous(sorted, p, 3.0 / 8.0, 3.0 / 8.0),
        Method::Lower => Some(sorted.at(clamp_index((n_minus_1 * p).floor(), last))),
        Method::Higher => Some(sorted.at(clamp_index((n_minus_1 * p).ceil(), last))),
        Method::Nearest => {
            // np.around rounds half to even.
            let i = (n_minus_1 * p).round_ties_even();
            Some(sorted.at(clamp_index(i, last)))
        }
        Method::Midpoint => {
            let v = n_minus_1 * p;
            let v = 0.5 * (v.floor() + v.ceil());
            interpolate(sorted, v, |_, v| if v.fract() == 0.0 { 0.0 } else { 0.5 })
        }
        Method::NearestRank => {
            let rank = q * nf / 100.0;
            let rank = (rank - 4.0 * f64::EPSILON * rank.max(1.0)).ceil();
            Some(sorted.at(clamp_index(rank - 1.0, last)))
        }
    }
}

/// numpy's gamma rule for `averaged_inverted_cdf`: average at an exact jump, else take the next value.
fn averaged_gamma(gamma: f64, _v: f64) -> f64 {
    if gamma == 0.0 {
        0.5
    } else {
        1.0
    }
}

/// numpy's `_discrete_interpolation_to_boundaries`: `floor(v)` when `v` is an integer and
/// `take_previous(floor(v))`, else `floor(v) + 1`.
fn discrete_to_boundary(v: f64, take_previous: impl Fn(f64) -> bool) -> f64 {
    let previous = v.floor();
    let gamma = v - previous;
    if gamma == 0.0 && take_previous(previous) {
        previous
    } else {
        previous + 1.0
    }
}

/// A float index clamped into `0..=last` (NaN maps to 0).
fn clamp_index(i: f64, last: usize) -> usize {
    if i.is_nan() || i <= 0.0 {
        0
    } else if i >= last as f64 {
        last
    } else {
        i as usize
    }
}

/// numpy's `_compute_virtual_index` for H&F types 4-9, then interpolation.
fn continuous(sorted: Ranked, p: f64, alpha: f64, beta: f64) -> Option<f64> {
    let n = sorted.len() as f64;
    let v = n * p + (alpha + p * (1.0 - alpha - beta)) - 1.0;
    interpolate(sorted, v, |gamma, _| gamma)
}

/// numpy's `_get_indexes` + `_get_gamma` + `_lerp` for a virtual index `v`. `fix_gamma(gamma, v)` is
/// the method's gamma rule. As in numpy, gamma is measured from the *clamped* previous index (-1 for
/// `v >= n-1`, 0 for `v < 0`); both neighbours are then the same element, so it only picks the
/// `_lerp` branch.
fn interpolate(sorted: Ranked, v: f64, fix_gamma: impl Fn(f64, f64) -> f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let (previous, next, previous_for_gamma) = if v >= last as f64 {
        (last, last, -1.0)
    } else if v < 0.0 {
        (0, 0, 0.0)
    } else {
        let f = v.floor();
        let i = f as usize;
        (i, i + 1, f)
    };
    let gamma = fix_gamma(v - previous_for_gamma, v);
    Some(lerp(sorted.at(previous), sorted.at(next), gamma))
}

/// numpy's `_lerp`, including its switch to `b - (b-a)(1-t)` for `t >= 0.5`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Several percentiles of unsorted data: copies `values`, drops NaN, sorts, and evaluates each q.
///
/// # Formula
/// `percentile_sorted(sort(values without NaN), q, method)` for each `q` in `qs`, in order; see
/// [`percentile_sorted`]. Sorting is by `f64::total_cmp`, O(n log n) once for all qs.
///
/// # Edge cases
/// NaN values are ignored, as `numpy.nanpercentile` does (numpy.percentile would return NaN). If
/// nothing is left, every entry is `None`. A q outside `[0, 100]` gives `None` in its slot only.
///
/// # Example
/// ```
/// use slo_core::quantile::{percentiles, Method};
/// let got = percentiles(&[3.0, 1.0, f64::NAN, 2.0], &[0.0, 50.0, 101.0], Method::Linear);
/// assert_eq!(got, vec![Some(1.0), Some(2.0), None]);
/// assert_eq!(percentiles(&[], &[50.0], Method::Linear), vec![None]);
/// ```
pub fn percentiles(values: &[f64], qs: &[f64], method: Method) -> Vec<Option<f64>> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    qs.iter()
        .map(|&q| percentile_sorted(&sorted, q, method))
        .collect()
}

/// Coverage the confidence interval must reach.
const CI_COVERAGE: f64 = 0.95;

/// Above this `n·p·(1-p)` the interval ranks start from the normal approximation.
const CI_NORMAL_MIN_VARIANCE: f64 = 1000.0;

/// Distribution-free 95% confidence interval for the q-th percentile, from two order statistics.
///
/// # Formula
/// If `B ~ Binomial(n, p)`, `p = q/100`, counts the observations below the true percentile `ξ`, then
/// for 1-based ranks `r < s`: `P(x_(r) <= ξ < x_(s)) = P(r <= B < s) = F(s-1) - F(r-1)`, with `F` the
/// binomial CDF (any continuous distribution; Hahn & Meeker, *Statistical Intervals*, §5.2). The
/// function returns `(sorted[r-1], sorted[s-1])` (0-based indices `r-1 < s-1`) for ranks with
/// coverage `>= 0.95`, chosen as:
/// - `n·p·(1-p) <= 1000`: exactly. Start at the binomial mode `floor((n+1)p)` (kept inside `1..n-1`)
///   and grow the set of covered B values `r..=s-1` one value at a time, always adding the neighbour
///   with the larger probability (the lower one on a tie), summing the probabilities, until they
///   reach 0.95. This gives the shortest such interval, centred on `n·p` in probability.
/// - `n·p·(1-p) > 1000`: `r = floor(np - z·σ + 1/2)`, `s - 1 = ceil(np + z·σ - 1/2)` with
///   `σ = sqrt(np(1-p))` and `z = 1.959963984540054` (symmetric ranks from the continuity-corrected
///   normal approximation). The coverage of those ranks is then computed exactly with
///   [`binomial_cdf`], and if it is short of 0.95 the interval is grown as above.
///
/// Cost: O(sqrt(n·p·(1-p))) operations, independent of the data; n = 10^6 takes microseconds.
///
/// # Edge cases
/// `None` when `sorted` is empty, `q` is not inside the open interval `(0, 100)` (no pair of order
/// statistics can bracket the minimum or the maximum), or `n` is too small for any interval to reach
/// 95% coverage, i.e. when `1 - p^n - (1-p)^n < 0.95`: that needs n >= 6 for the median, n >= 29 for
/// p90, n >= 59 for p95, n >= 299 for p99 and n >= 2995 for p99.9. With ties, both ends may be equal.
/// `sorted` must be ascending.
///
/// # Example
/// ```
/// use slo_core::quantile::percentile_ci95;
/// let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
/// // The classic n = 10 median interval: x_(2)..x_(9), coverage 97.9%.
/// assert_eq!(percentile_ci95(&sorted, 50.0), Some((2.0, 9.0)));
/// // Ten values cannot bound p90 with 95% confidence.
/// assert_eq!(percentile_ci95(&sorted, 90.0), None);
/// ```
pub fn percentile_ci95(sorted: &[f64], q: f64) -> Option<(f64, f64)> {
    percentile_ci95_ranked(Ranked::Slice(sorted), q)
}

/// [`percentile_ci95`] of values read by position.
pub fn percentile_ci95_ranked(sorted: Ranked, q: f64) -> Option<(f64, f64)> {
    let (lo, hi) = ci95_indices(sorted.len() as u64, q)?;
    let lo = usize::try_from(lo).ok()?;
    let hi = usize::try_from(hi).ok()?;
    Some((sorted.at(lo), sorted.at(hi)))
}

/// The 0-based indices `(r-1, s-1)` that [`percentile_ci95`] reads, for a sample of size `n`.
pub(crate) fn ci95_indices(n: u64, q: f64) -> Option<(u64, u64)> {
    if n < 2 || !(q > 0.0 && q < 100.0) {
        return None;
    }
    let p = q / 100.0;
    let one_minus_p = 1.0 - p;
    let nf = n as f64;
    let variance = nf * p * one_minus_p;
    // Covered values of B: lo..=hi, always inside 1..=n-1 (B = 0 and B = n cannot be bracketed).
    let (lo, hi, mass) = if variance > CI_NORMAL_MIN_VARIANCE {
        let mean = nf * p;
        let sd = variance.sqrt();
        let lo = (mean - Z95 * sd + 0.5).floor().max(1.0);
        let hi = (mean + Z95 * sd - 0.5).ceil().min(nf - 1.0);
        // max/min above also turn a NaN into a bound, so lo and hi are numbers here.
        if lo > hi {
            return None;
        }
        let (lo, hi) = (lo as u64, hi as u64);
        let mass = binomial_cdf(hi, n, p) - binomial_cdf(lo - 1, n, p);
        (lo, hi, mass)
    } else {
        let mode = binomial_mode(n, p).clamp(1, n - 1);
        (mode, mode, binomial_pmf(mode, n, p))
    };
    let (lo, hi) = grow_to_coverage(n, p, lo, hi, mass)?;
    Some((lo - 1, hi))
}

/// Grows the covered B values `lo..=hi` (inside `1..=n-1`) by the more probable neighbour until
/// their probability `mass` reaches [`CI_COVERAGE`]; `None` if `1..=n-1` is not enough.
fn grow_to_coverage(n: u64, p: f64, mut lo: u64, mut hi: u64, mut mass: f64) -> Option<(u64, u64)> {
    let q_over_p = (1.0 - p) / p;
    let p_over_q = p / (1.0 - p);
    let mut pmf_lo = binomial_pmf(lo, n, p);
    let mut pmf_hi = if hi == lo {
        pmf_lo
    } else {
        binomial_pmf(hi, n, p)
    };
    while mass < CI_COVERAGE {
        // pmf(lo - 1) = pmf(lo) · lo / (n - lo + 1) · (1-p)/p, pmf(hi + 1) = pmf(hi) · (n - hi)/(hi + 1) · p/(1-p)
        let below = (lo > 1).then(|| pmf_lo * (lo as f64 / (n - lo + 1) as f64) * q_over_p);
        let above = (hi + 1 < n).then(|| pmf_hi * ((n - hi) as f64 / (hi + 1) as f64) * p_over_q);
        match (below, above) {
            (Some(b), Some(a)) if b >= a => {
                lo -= 1;
                pmf_lo = b;
                mass += b;
            }
            (Some(b), None) => {
                lo -= 1;
                pmf_lo = b;
                mass += b;
            }
            (_, Some(a)) => {
                hi += 1;
                pmf_hi = a;
                mass += a;
            }
            (None, None) => return None,
        }
    }
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTFT_MS: [f64; 10] = [
        180.0, 220.0, 260.0, 310.0, 640.0, 300.0, 350.0, 240.0, 390.0, 410.0,
    ];
    const E2E_MS: [f64; 10] = [
        4010.0, 4690.0, 4860.0, 5240.0, 4420.0, 6900.0, 5230.0, 4600.0, 5220.0, 5330.0,
    ];

    fn tpot_ms() -> Vec<f64> {
        E2E_MS
            .iter()
            .zip(TTFT_MS.iter())
            .map(|(e2e, ttft)| (e2e - ttft) / 100.0)
            .collect()
    }

    fn check(values: &[f64], q: f64, method: Method, want: Option<f64>) {
        let got = percentiles(values, &[q], method)
            .into_iter()
            .next()
            .flatten();
        match (got, want) {
            (Some(g), Some(w)) => assert!(
                (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                "percentile({values:?}, {q}, {}) = {g}, want {w}",
                method.name()
            ),
            _ => assert_eq!(got, want, "percentile({values:?}, {q}, {})", method.name()),
        }
    }

    #[test]
    fn worked_example_ttft_and_tpot_p90() {
        check(&TTFT_MS, 90.0, Method::Linear, Some(433.0));
        check(&TTFT_MS, 90.0, Method::Nearest, Some(410.0));
        check(&TTFT_MS, 90.0, Method::NearestRank, Some(410.0));
        check(&tpot_ms(), 90.0, Method::Linear, Some(50.97));
        check(&tpot_ms(), 90.0, Method::Nearest, Some(49.3));
        check(&tpot_ms(), 90.0, Method::NearestRank, Some(49.3));
    }

    #[test]
    fn empty_and_out_of_range_give_none() {
        for m in Method::ALL {
            check(&[], 50.0, m, None);
            check(&[f64::NAN], 50.0, m, None);
            check(&[1.0, 2.0], -0.001, m, None);
            check(&[1.0, 2.0], 100.001, m, None);
            check(&[1.0, 2.0], f64::NAN, m, None);
            check(&[1.0, 2.0], f64::INFINITY, m, None);
            check(&[1.0, 2.0], f64::NEG_INFINITY, m, None);
        }
    }

    #[test]
    fn single_value_and_all_equal() {
        for m in Method::ALL {
            for q in [0.0, 0.1, 33.3, 50.0, 99.9, 100.0] {
                check(&[7.5], q, m, Some(7.5));
                check(&[-2.0; 9], q, m, Some(-2.0));
            }
        }
    }

    #[test]
    fn q0_is_min_and_q100_is_max() {
        let values = [5.0, -1.0, 3.0, 3.0, 10.0, 0.5];
        for m in Method::ALL {
            check(&values, 0.0, m, Some(-1.0));
            check(&values, 100.0, m, Some(10.0));
        }
    }

    #[test]
    fn discrete_methods_on_four_values() {
        // numpy.percentile([1, 2, 3, 4], q, method=...), and nearest_rank by its definition.
        let x = [1.0, 2.0, 3.0, 4.0];
        check(&x, 50.0, Method::InvertedCdf, Some(2.0));
        check(&x, 50.0, Method::AveragedInvertedCdf, Some(2.5));
        check(&x, 50.0, Method::ClosestObservation, Some(2.0));
        check(&x, 50.0, Method::Lower, Some(2.0));
        check(&x, 50.0, Method::Higher, Some(3.0));
        check(&x, 50.0, Method::Midpoint, Some(2.5));
        check(&x, 50.0, Method::Nearest, Some(3.0)); // 1.5 rounds half to even: index 2
        check(&x, 50.0, Method::NearestRank, Some(2.0));
        check(&x, 25.0, Method::Linear, Some(1.75));
        check(&x, 25.0, Method::Hazen, Some(1.5));
        check(&x, 25.0, Method::Weibull, Some(1.25));
        check(&x, 25.0, Method::InterpolatedInvertedCdf, Some(1.0));
        check(&x, 25.0, Method::NearestRank, Some(1.0));
        check(&x, 25.1, Method::NearestRank, Some(2.0));
    }

    #[test]
    fn nearest_rounds_half_to_even() {
        // (n-1)·p = 0.5 → index 0; 2.5 → index 2.
        check(&[1.0, 2.0], 50.0, Method::Nearest, Some(1.0));
        check(
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            50.0,
            Method::Nearest,
            Some(3.0),
        );
    }

    #[test]
    fn nearest_rank_decimal_q_is_exact() {
        let x: Vec<f64> = (1..=1000).map(f64::from).collect();
        // 99.9% of 1000 is exactly 999 values; 33.3% of 10 is 3.33 → rank 4; 66.7% of 3 → rank 3.
        check(&x, 99.9, Method::NearestRank, Some(999.0));
        check(&x, 0.1, Method::NearestRank, Some(1.0));
        check(&x[..10], 33.3, Method::NearestRank, Some(4.0));
        check(&x[..10], 90.0, Method::NearestRank, Some(9.0));
        check(&x[..3], 66.7, Method::NearestRank, Some(3.0));
        check(&x[..3], 0.0, Method::NearestRank, Some(1.0));
    }

    #[test]
    fn method_names_round_trip() {
        for m in Method::ALL {
            assert_eq!(Method::from_name(m.name()), Some(m));
            assert_eq!(
                Method::from_name(&m.name().to_uppercase().replace('_', "-")),
                Some(m)
            );
            let json = format!("\"{}\"", m.name());
            assert_eq!(serde_json::to_string(&m).ok(), Some(json.clone()));
            assert_eq!(serde_json::from_str::<Method>(&json).ok(), Some(m));
            assert!(m
                .describe()
                .contains(m.name().split('_').next().unwrap_or("")));
        }
        assert_eq!(Method::default(), Method::Linear);
        assert_eq!(Method::from_name(""), None);
        assert_eq!(Method::from_name(" linear"), None);
    }

    fn check_ci(n: u64, q: f64, want: Option<(u64, u64)>) {
        assert_eq!(ci95_indices(n, q), want, "ci95_indices({n}, {q})");
        if let Some((lo, hi)) = want {
            let p = q / 100.0;
            let coverage = binomial_cdf(hi, n, p) - binomial_cdf(lo, n, p);
            assert!(
                coverage >= CI_COVERAGE,
                "coverage {coverage} for n={n} q={q}"
            );
        }
    }

    #[test]
    fn ci95_small_samples() {
        check_ci(0, 50.0, None);
        check_ci(1, 50.0, None);
        check_ci(5, 50.0, None); // 1 - 2/32 = 0.9375 < 0.95
        check_ci(6, 50.0, Some((0, 5))); // 1 - 2/64 = 0.96875
        check_ci(10, 50.0, Some((1, 8)));
        check_ci(28, 90.0, None);
        check_ci(29, 90.0, Some((20, 28)));
        check_ci(298, 99.0, None);
        check_ci(299, 99.0, Some((288, 298)));
        check_ci(100, 0.0, None);
        check_ci(100, 100.0, None);
        check_ci(100, f64::NAN, None);
    }

    #[test]
    fn ci95_large_sample_is_symmetric_and_covers() {
        // n = 10^6, median: σ = 500, ranks 500000 ± 980.
        check_ci(1_000_000, 50.0, Some((499_019, 500_980)));
        let (lo, hi) = ci95_indices(1_000_000, 99.9).unwrap_or((0, 0));
        assert!(lo < 999_000 && hi > 999_000, "p99.9 interval ({lo}, {hi})");
    }

    /// Values a column of latencies should not hold, and every order statistic must place.
    const SPECIAL: [f64; 6] = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        5e-324,
    ];

    /// The parts merged and sorted, and positions to read there, ascending: every one when
    /// there are at most `every_up_to` values, else `random` of them with repeats, the ends and
    /// the middle's neighbours.
    fn merged_and_positions(
        parts: &[Vec<f64>],
        every_up_to: usize,
        random: usize,
        next: &mut impl FnMut() -> u64,
    ) -> (Vec<f64>, Vec<usize>) {
        let mut merged: Vec<f64> = parts.concat();
        merged.sort_by(f64::total_cmp);
        let n = merged.len();
        let mut ranks: Vec<usize> = if n <= every_up_to {
            (0..n).collect()
        } else {
            let mut r: Vec<usize> = (0..random).map(|_| (next() as usize) % n).collect();
            r.extend([0, 1, n / 2, n / 2, n / 2 + 1, n - 2, n - 1]);
            r
        };
        ranks.sort_unstable();
        (merged, ranks)
    }

    /// `values_at_ranks` reads, at every position, what the runs merged and sorted hold there,
    /// bit for bit: runs of any lengths (empty ones too), heavy ties across runs, -0 and 0,
    /// infinities and NaN, from 1 to 12 runs, and 40 or 45 (sorted together rather than passed).
    #[test]
    fn values_at_ranks_read_the_merged_runs() {
        let mut next = crate::testing::sequence(0x5851_f42d_4c95_7f2d);
        for case in 0..300 {
            let k = match case % 15 {
                12 => 40,
                13 => 45,
                c => 1 + c,
            };
            let mut runs: Vec<Vec<f64>> = (0..k)
                .map(|_| {
                    let len = match next() % 5 {
                        0 => 0,
                        1 => (next() % 4) as usize,
                        _ => (next() % 3000) as usize,
                    };
                    (0..len)
                        .map(|_| match next() % 10 {
                            0 => SPECIAL[(next() % 6) as usize],
                            1..=4 => (next() % 8) as f64, // ties across runs
                            _ => (next() % 1_000_000) as f64 / 7.0 - 1000.0,
                        })
                        .collect()
                })
                .collect();
            runs.iter_mut().for_each(|r| r.sort_by(f64::total_cmp));
            let (merged, ranks) = merged_and_positions(&runs, 400, 300, &mut next);
            let n = merged.len();
            let parts: Vec<&[f64]> = runs.iter().map(Vec::as_slice).collect();
            let got = values_at_ranks(&parts, &ranks);
            let want: Vec<u64> = ranks.iter().map(|&i| merged[i].to_bits()).collect();
            let got: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
            assert_eq!(got, want, "case {case}: {k} runs, {n} values");
        }
    }

    /// `select_at_ranks` reads, at every position asked, what the parts merged and sorted hold
    /// there, bit for bit, from parts in any order: small samples (sorted outright) and large
    /// ones (narrowed), latency-like values with heavy ties, a few values far from the rest
    /// (the span hardly shrinks), one value repeated, and -0, 0, infinities, NaN and subnormals.
    #[test]
    fn select_at_ranks_reads_what_a_sort_puts_there() {
        let mut next = crate::testing::sequence(0x2545_f491_4f6c_dd1d);
        for case in 0..60 {
            let parts_n = 1 + (next() % 4) as usize;
            let size = match case % 4 {
                0 => (next() % 300) as usize,
                1 => (next() % 5_000) as usize,
                _ => (next() % 60_000) as usize,
            };
            let parts: Vec<Vec<f64>> = (0..parts_n)
                .map(|_| {
                    (0..size)
                        .map(|_| match (case % 6, next() % 100) {
                            (5, _) => 42.5,
                            (_, 0) => SPECIAL[(next() % 6) as usize],
                            (3, 1..=2) => f64::from_bits(next()),
                            (4, 1) => 1e300,
                            (_, 3..=20) => (next() % 50) as f64,
                            _ => (next() % 10_000_000) as f64 / 1000.0,
                        })
                        .collect()
                })
                .collect();
            let (merged, ranks) = merged_and_positions(&parts, 300, 40, &mut next);
            let n = merged.len();
            let slices: Vec<&[f64]> = parts.iter().map(Vec::as_slice).collect();
            let got: Vec<u64> = select_at_ranks(&slices, &ranks)
                .iter()
                .map(|x| x.to_bits())
                .collect();
            let want: Vec<u64> = ranks.iter().map(|&i| merged[i].to_bits()).collect();
            assert_eq!(got, want, "case {case}: {parts_n} parts, {n} values");
        }
    }

    /// Past the end or backwards: NaN, from sorted runs and (`select_at_ranks`) from parts in
    /// any order alike.
    #[test]
    fn values_at_ranks_past_the_end_or_backwards_read_nan() {
        let runs: [&[f64]; 3] = [&[1.0, 4.0], &[], &[2.0, 3.0]];
        let unsorted: [&[f64]; 3] = [&[4.0, 1.0], &[], &[3.0, 2.0]];
        let ranks = [0, 2, 2, 1, 3, 4, 9];
        let want = [1.0, 3.0, 3.0, f64::NAN, 4.0, f64::NAN, f64::NAN];
        for got in [
            values_at_ranks(&runs, &ranks),
            select_at_ranks(&unsorted, &ranks),
        ] {
            assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        assert!(values_at_ranks(&[], &[0]).iter().all(|x| x.is_nan()));
        // The same when so many runs are sorted together rather than passed.
        let many: Vec<Vec<f64>> = (0..40).map(|k| vec![f64::from(k)]).collect();
        let runs: Vec<&[f64]> = many.iter().map(Vec::as_slice).collect();
        let got = values_at_ranks(&runs, &[0, 39, 39, 5, 40]);
        let want = [0.0, 39.0, 39.0, f64::NAN, f64::NAN];
        assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn ci95_reads_sorted_values() {
        let sorted: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile_ci95(&sorted, 50.0), Some((2.0, 9.0)));
        assert_eq!(percentile_ci95(&[], 50.0), None);
        assert_eq!(percentile_ci95(&[1.0; 6], 50.0), Some((1.0, 1.0)));
    }
}
