//! Small, dependency-free statistics helpers: a compensated sum for means, Wilson score intervals for attainment rates, a pooled
//! two-proportion z-test for comparing two runs, the standard normal CDF and the binomial CDF that
//! [`crate::quantile::percentile_ci95`] uses to pick order statistics.
//!
//! Everything here is plain `f64` arithmetic with no IO. Invalid input (an empty sample, more successes
//! than trials) gives `None`, never NaN.

/// The two-sided 95% standard normal quantile, `Φ⁻¹(0.975)`.
pub const Z95: f64 = 1.959963984540054;

/// Above this variance `n·p·(1-p)` [`binomial_cdf`] switches from exact summation to the normal
/// approximation. Exact summation costs about `9·sqrt(n·p·(1-p))` terms, so the limit keeps one call
/// under ~100k terms; every `n <= 4·10^8` is below it and is computed exactly.
const BINOMIAL_EXACT_MAX_VARIANCE: f64 = 1e8;

/// Relative size below which the rest of a geometric-bounded tail sum is dropped.
const TAIL_EPS: f64 = 1e-17;

/// A sum of floats kept as a running total and the rounding errors of its additions
/// (Neumaier's form of Kahan's compensated summation), so that a mean of a million latencies is
/// the exact mean to within a unit or two in the last place, whatever the order of the values.
/// A plain running sum drifts by hundreds of units there, in a direction set by the order.
///
/// # Formula
/// For each `x`: `t = total + x`; the error of that addition, exactly `(total − t) + x` when
/// `|total| ≥ |x|` and `(x − t) + total` otherwise, is added to `carry`; `total = t`. The sum is
/// `total + carry`. Once the total is infinite or NaN no error is kept: the sum is then what
/// a plain sum gives.
///
/// # Example
/// ```
/// use slo_core::stats::Sum;
/// let values = [1e16, 1.0, -1e16, 1.0];
/// assert_eq!(values.iter().sum::<f64>(), 1.0); // the first 1 is lost
/// assert_eq!(Sum::of(&values).value(), 2.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sum {
    total: f64,
    carry: f64,
}

impl Sum {
    /// The sum of `values`, in their order.
    pub fn of(values: &[f64]) -> Sum {
        let mut sum = Sum::default();
        for &x in values {
            sum.add(x);
        }
        sum
    }

    /// Adds `x`.
    #[inline]
    pub fn add(&mut self, x: f64) {
        let t = self.total + x;
        if t.is_finite() {
            self.carry += if self.total.abs() >= x.abs() {
                (self.total - t) + x
            } else {
                (x - t) + self.total
            };
        }
        self.total = t;
    }

    /// Adds another sum (its total and its carry).
    pub fn add_sum(&mut self, other: Sum) {
        self.add(other.total);
        self.add(other.carry);
    }

    /// The sum.
    pub fn value(&self) -> f64 {
        if self.total.is_finite() {
            self.total + self.carry
        } else {
            self.total
        }
    }
}

/// 95% Wilson score interval for a proportion `successes / n`, with `z = 1.959963984540054`.
///
/// # Formula
/// See [`wilson_interval`]; this is `wilson_interval(successes, n, Z95)`.
///
/// # Edge cases
/// `n == 0` or `successes > n`: `None`. `successes == 0` gives a lower bound of exactly 0 and
/// `successes == n` an upper bound of exactly 1.
///
/// # Example
/// ```
/// use slo_core::stats::wilson_ci95;
/// let (lo, hi) = wilson_ci95(9, 10).unwrap();
/// assert!((lo - 0.5958499732047615).abs() < 1e-12);
/// assert!((hi - 0.9821237869049271).abs() < 1e-12);
/// assert_eq!(wilson_ci95(0, 0), None);
/// ```
pub fn wilson_ci95(successes: u64, n: u64) -> Option<(f64, f64)> {
    wilson_interval(successes, n, Z95)
}

/// Wilson score interval for a proportion `successes / n` at normal quantile `z`.
///
/// # Formula
/// With `p̂ = successes / n`:
/// ```text
/// centre = (p̂ + z²/(2n)) / (1 + z²/n)
/// half   = z / (1 + z²/n) · sqrt(p̂(1-p̂)/n + z²/(4n²))
/// (lower, upper) = (centre - half, centre + half), clamped to [0, 1]
/// ```
/// (Wilson 1927; the interval `numpy`/`statsmodels` call `method="wilson"`.)
///
/// # Edge cases
/// `n == 0`, `successes > n`, or `z` negative or not finite: `None`. `successes == 0` gives a lower
/// bound of exactly 0, `successes == n` an upper bound of exactly 1; `z == 0` gives `(p̂, p̂)`.
///
/// # Example
/// ```
/// use slo_core::stats::wilson_interval;
/// // z = 1: the "one sigma" interval for 1 success out of 4.
/// let (lo, hi) = wilson_interval(1, 4, 1.0).unwrap();
/// assert!((lo - 0.1).abs() < 1e-12 && (hi - 0.5).abs() < 1e-12);
/// assert_eq!(wilson_interval(5, 4, 1.0), None);
/// ```
pub fn wilson_interval(successes: u64, n: u64, z: f64) -> Option<(f64, f64)> {
    if n == 0 || successes > n || !(z.is_finite() && z >= 0.0) {
        return None;
    }
    let nf = n as f64;
    let p_hat = successes as f64 / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let centre = (p_hat + z2 / (2.0 * nf)) / denom;
    let half = z / denom * (p_hat * (1.0 - p_hat) / nf + z2 / (4.0 * nf * nf)).sqrt();
    let lower = if successes == 0 {
        0.0
    } else {
        (centre - half).clamp(0.0, 1.0)
    };
    let upper = if successes == n {
        1.0
    } else {
        (centre + half).clamp(0.0, 1.0)
    };
    Some((lower, upper))
}

/// Result of [`two_proportion_test`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoProportion {
    /// `p2 - p1`, the change in proportion from the first run to the second.
    pub diff: f64,
    /// The pooled z statistic; positive when the second run has the larger proportion.
    pub z: f64,
    /// Two-sided p-value, `2·Φ(-|z|)`.
    pub p_value: f64,
}

/// Two-sided pooled two-proportion z-test, for comparing the attainment of two runs.
///
/// # Formula
/// ```text
/// p1 = s1/n1,  p2 = s2/n2,  p = (s1 + s2)/(n1 + n2)
/// z = (p2 - p1) / sqrt(p(1-p)(1/n1 + 1/n2))
/// p_value = 2·Φ(-|z|)
/// ```
/// (the textbook pooled z-test; equal to `statsmodels.stats.proportion.proportions_ztest` with its
/// default pooled variance, and to a 2x2 chi-square test without continuity correction).
///
/// # Edge cases
/// `n1 == 0`, `n2 == 0`, `s1 > n1` or `s2 > n2`: `None`. Pooled variance 0 (both runs all successes
/// or all failures): `None`, since z is undefined. The normal approximation is poor for small
/// counts (rule of thumb: fewer than 5 successes or failures in either run).
///
/// # Example
/// ```
/// use slo_core::stats::two_proportion_test;
/// let t = two_proportion_test(90, 100, 80, 100).unwrap();
/// assert!((t.diff - (-0.1)).abs() < 1e-12);
/// assert!((t.z - (-1.9802950859533481)).abs() < 1e-12);
/// assert!((t.p_value - 0.047670380656161464).abs() < 1e-12);
/// assert_eq!(two_proportion_test(10, 10, 5, 5), None);
/// ```
pub fn two_proportion_test(s1: u64, n1: u64, s2: u64, n2: u64) -> Option<TwoProportion> {
    if n1 == 0 || n2 == 0 || s1 > n1 || s2 > n2 {
        return None;
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let p1 = s1 as f64 / n1f;
    let p2 = s2 as f64 / n2f;
    let pooled = (s1 as f64 + s2 as f64) / (n1f + n2f);
    let variance = pooled * (1.0 - pooled) * (1.0 / n1f + 1.0 / n2f);
    if variance.is_nan() || variance <= 0.0 {
        return None;
    }
    let diff = p2 - p1;
    let z = diff / variance.sqrt();
    let p_value = (2.0 * normal_cdf(-z.abs())).min(1.0);
    Some(TwoProportion { diff, z, p_value })
}

/// Standard normal cumulative distribution function `Φ(x) = P(Z <= x)`.
///
/// # Formula
/// `Φ(x) = erfc(-x/√2) / 2`, with `erfc` evaluated by the positive-term series
/// `erf(t) = 2/√π · e^{-t²} · Σ 2^k t^{2k+1} / (1·3·…·(2k+1))` for `|t| < 2` and by the Laplace
/// continued fraction for `erfc` beyond. Relative error is about 1e-14 in both tails (tested against
/// `scipy.special.ndtr`), so `Φ(-30) ≈ 4.9e-198` is accurate, not rounded to 0.
///
/// # Edge cases
/// `Φ(-∞) = 0`, `Φ(+∞) = 1`, `Φ(NaN) = NaN`. Below about -38.5 the result underflows to 0.
///
/// # Example
/// ```
/// use slo_core::stats::normal_cdf;
/// assert_eq!(normal_cdf(0.0), 0.5);
/// assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 1e-15);
/// assert!((normal_cdf(-10.0) / 7.61985302416047e-24 - 1.0).abs() < 1e-12);
/// ```
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// Complementary error function, relative error ~1e-15.
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        return 1.0 - erf_series(x);
    }
    if x > 27.3 {
        // e^{-x²} underflows: erfc(27.3) < 1e-324.
        return 0.0;
    }
    erfc_continued_fraction(x)
}

/// `erf(x)` for `0 <= x < 2` from the all-positive series (no cancellation).
fn erf_series(x: f64) -> f64 {
    let two_x2 = 2.0 * x * x;
    let mut term = x;
    let mut sum = x;
    let mut k = 0.0;
    while term > sum * 1e-17 {
        k += 1.0;
        term *= two_x2 / (2.0 * k + 1.0);
        sum += term;
    }
    std::f64::consts::FRAC_2_SQRT_PI * (-x * x).exp() * sum
}

/// `erfc(x)` for `x >= 2` from the continued fraction
/// `erfc(x) = e^{-x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))`, evaluated by modified Lentz.
fn erfc_continued_fraction(x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..500 {
        let a = k as f64 * 0.5;
        d = x + a * d;
        if d == 0.0 {
            d = TINY;
        }
        c = x + a / c;
        if c == 0.0 {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / (f * std::f64::consts::PI.sqrt())
}

/// Binomial cumulative distribution function `P(B <= k)` for `B ~ Binomial(n, p)`.
///
/// # Formula
/// `P(B <= k) = Σ_{i=0..k} C(n,i) p^i (1-p)^(n-i)`, evaluated as follows:
/// - exact (for `n·p·(1-p) <= 1e8`, which includes every `n <= 4·10^8`): the tail on the side of `k`
///   away from the mode is summed outward from `k`, starting from a probability mass computed with
///   Loader's saddle-point formula (the one R's `dbinom` uses; accurate to ~1e-15 relative for any n)
///   and stepping with the ratio `pmf(i±1)/pmf(i)`; the sum stops once the geometric bound on the
///   remaining terms drops below 1e-17 of the total. Cost ≈ `9·sqrt(n·p·(1-p))` terms, e.g. 5k terms
///   for `n = 10^6, p = 1/2`. If `k` is at or above the mode the upper tail is summed and the result is
///   `1 - upper`. Relative accuracy ~1e-12 (tested against `scipy.stats.binom.cdf`, including tails
///   near 1e-300).
/// - normal approximation with continuity correction, `Φ((k + 0.5 - np) / sqrt(np(1-p)))`, when
///   `n·p·(1-p) > 1e8`; its absolute error there is below about `|1-2p| / (15·sqrt(n·p·(1-p)))`,
///   i.e. < 1e-5.
///
/// # Edge cases
/// `k >= n`: 1. `p == 0`: 1. `p == 1` (and `k < n`): 0. `p` outside `[0, 1]` or NaN: NaN.
///
/// # Example
/// ```
/// use slo_core::stats::binomial_cdf;
/// assert!((binomial_cdf(2, 4, 0.5) - 11.0 / 16.0).abs() < 1e-15);
/// // far tail of a large binomial: P(B <= 4_990_000) for B ~ Binomial(10^7, 1/2)
/// let tail = binomial_cdf(4_990_000, 10_000_000, 0.5);
/// assert!((tail / 1.2724002455775383e-10 - 1.0).abs() < 1e-9);
/// ```
pub fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if k >= n || p == 0.0 {
        return 1.0;
    }
    if p == 1.0 {
        return 0.0;
    }
    let q = 1.0 - p;
    let nf = n as f64;
    let variance = nf * p * q;
    if variance > BINOMIAL_EXACT_MAX_VARIANCE {
        return normal_cdf((k as f64 + 0.5 - nf * p) / variance.sqrt());
    }
    let mode = binomial_mode(n, p);
    if k < mode {
        lower_tail(k, n, p, q)
    } else {
        (1.0 - upper_tail(k + 1, n, p, q)).max(0.0)
    }
}

/// The (largest) mode of Binomial(n, p): `floor((n + 1)·p)`, at most n.
pub(crate) fn binomial_mode(n: u64, p: f64) -> u64 {
    let m = ((n as f64 + 1.0) * p).floor();
    if m >= n as f64 {
        n
    } else if m > 0.0 {
        m as u64
    } else {
        0
    }
}

/// `P(B <= k)`, for `k` below the mode, summed from `k` downward.
fn lower_tail(k: u64, n: u64, p: f64, q: f64) -> f64 {
    let q_over_p = q / p;
    let mut term = binomial_pmf(k, n, p);
    let mut sum = term;
    let mut i = k;
    while i > 0 {
        // pmf(i - 1) / pmf(i); it only shrinks as i decreases below the mode.
        let ratio = i as f64 / (n - i + 1) as f64 * q_over_p;
        if ratio < 1.0 && term * ratio <= TAIL_EPS * sum * (1.0 - ratio) {
            break;
        }
        term *= ratio;
        sum += term;
        i -= 1;
    }
    sum.min(1.0)
}

/// `P(B >= k)`, for `k` above the mode, summed from `k` upward.
fn upper_tail(k: u64, n: u64, p: f64, q: f64) -> f64 {
    let p_over_q = p / q;
    let mut term = binomial_pmf(k, n, p);
    let mut sum = term;
    let mut i = k;
    while i < n {
        // pmf(i + 1) / pmf(i); it only shrinks as i increases above the mode.
        let ratio = (n - i) as f64 / (i + 1) as f64 * p_over_q;
        if ratio < 1.0 && term * ratio <= TAIL_EPS * sum * (1.0 - ratio) {
            break;
        }
        term *= ratio;
        sum += term;
        i += 1;
    }
    sum.min(1.0)
}

/// Binomial probability mass `P(B = k)` by Loader's saddle-point expansion ("Fast and accurate
/// computation of binomial probabilities", 2000), as in R's `dbinom_raw`: relative error ~1e-15
/// for every n, no overflow, no cancellation.
pub(crate) fn binomial_pmf(k: u64, n: u64, p: f64) -> f64 {
    if k > n || !(0.0..=1.0).contains(&p) {
        return 0.0;
    }
    let q = 1.0 - p;
    if p == 0.0 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    if q == 0.0 {
        return if k == n { 1.0 } else { 0.0 };
    }
    let nf = n as f64;
    if k == 0 {
        let lc = if p < 0.1 {
            -bd0(nf, nf * q) - nf * p
        } else {
            nf * q.ln()
        };
        return lc.exp();
    }
    if k == n {
        let lc = if q < 0.1 {
            -bd0(nf, nf * p) - nf * q
        } else {
            nf * p.ln()
        };
        return lc.exp();
    }
    let kf = k as f64;
    let lc = stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(kf, nf * p) - bd0(nf - kf, nf * q);
    let lf = (2.0 * std::f64::consts::PI).ln() + kf.ln() + (-kf / nf).ln_1p();
    (lc - 0.5 * lf).exp()
}

/// Stirling-formula error `ln(n!) - ln(sqrt(2π n) (n/e)^n)`.
fn stirlerr(n: u64) -> f64 {
    // ln(n!) - (n + 1/2) ln n + n - ln sqrt(2π) for n = 0..=15, computed to 25 digits with Python's
    // `decimal` (they agree with the table in R's stirlerr.c).
    const SMALL: [f64; 16] = [
        0.0, // unused: n = 0 never reaches here
        0.08106146679532726,
        0.0413406959554093,
        0.02767792568499834,
        0.020790672103765093,
        0.016644691189821193,
        0.013876128823070748,
        0.01189670994589177,
        0.010411265261972096,
        0.009255462182712733,
        0.00833056343336287,
        0.007573675487951841,
        0.00694284010720953,
        0.006408994188004207,
        0.0059513701127588475,
        0.005554733551962801,
    ];
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if let Some(v) = usize::try_from(n).ok().and_then(|i| SMALL.get(i)) {
        return *v;
    }
    let nf = n as f64;
    let nn = nf * nf;
    if nf > 500.0 {
        (S0 - S1 / nn) / nf
    } else if nf > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / nf
    } else if nf > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / nf
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / nf
    }
}

/// Loader's deviance term `x ln(x/np) + np - x`, computed without cancellation when `x ≈ np`.
fn bd0(x: f64, np: f64) -> f64 {
    if (x - np).abs() < 0.1 * (x + np) {
        let mut v = (x - np) / (x + np);
        let mut s = (x - np) * v;
        let mut ej = 2.0 * x * v;
        v *= v;
        let mut j = 1.0;
        loop {
            ej *= v;
            let s1 = s + ej / (2.0 * j + 1.0);
            if s1 == s {
                return s1;
            }
            s = s1;
            j += 1.0;
        }
    }
    x * (x / np).ln() + np - x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1.0)
    }

    /// Relative comparison for tiny tail probabilities, where the absolute rule is meaningless.
    fn close_rel(got: f64, want: f64, rel: f64) -> bool {
        got == want || (got - want).abs() <= rel * want.abs()
    }

    #[test]
    fn wilson_edge_cases() {
        fn check(successes: u64, n: u64, z: f64, want: Option<(f64, f64)>) {
            let got = wilson_interval(successes, n, z);
            match (got, want) {
                (Some((gl, gh)), Some((wl, wh))) => assert!(
                    close(gl, wl) && close(gh, wh),
                    "wilson_interval({successes}, {n}, {z}) = {got:?}, want {want:?}"
                ),
                _ => assert_eq!(got, want, "wilson_interval({successes}, {n}, {z})"),
            }
        }
        check(0, 0, Z95, None);
        check(3, 2, Z95, None);
        check(1, 2, -1.0, None);
        check(1, 2, f64::NAN, None);
        check(1, 2, f64::INFINITY, None);
        check(0, 10, Z95, Some((0.0, 0.2775327998628892)));
        check(10, 10, Z95, Some((0.7224672001371107, 1.0)));
        check(1, 4, 1.0, Some((0.1, 0.5)));
        check(3, 7, 0.0, Some((3.0 / 7.0, 3.0 / 7.0)));
        check(5, 10, Z95, Some((0.236593090512564, 0.7634069094874361)));
    }

    #[test]
    fn wilson_ci95_is_wilson_interval_at_z95() {
        for (s, n) in [(0, 1), (1, 1), (7, 9), (990, 1000)] {
            assert_eq!(wilson_ci95(s, n), wilson_interval(s, n, Z95));
        }
    }

    #[test]
    fn two_proportion_edge_cases() {
        fn check(s1: u64, n1: u64, s2: u64, n2: u64, want: Option<(f64, f64, f64)>) {
            let got = two_proportion_test(s1, n1, s2, n2);
            match (got, want) {
                (Some(t), Some((d, z, pv))) => assert!(
                    close(t.diff, d) && close(t.z, z) && close(t.p_value, pv),
                    "two_proportion_test({s1}, {n1}, {s2}, {n2}) = {t:?}, want {want:?}"
                ),
                (None, None) => {}
                _ => panic!("two_proportion_test({s1}, {n1}, {s2}, {n2}) = {got:?}, want {want:?}"),
            }
        }
        check(1, 0, 1, 1, None);
        check(1, 1, 1, 0, None);
        check(2, 1, 1, 1, None);
        check(0, 5, 0, 7, None);
        check(5, 5, 7, 7, None);
        check(5, 10, 5, 10, Some((0.0, 0.0, 1.0)));
        check(
            90,
            100,
            80,
            100,
            Some((-0.1, -1.9802950859533481, 0.047670380656161464)),
        );
        check(
            80,
            100,
            90,
            100,
            Some((0.1, 1.9802950859533481, 0.047670380656161464)),
        );
    }

    #[test]
    fn normal_cdf_values() {
        fn check(x: f64, want: f64) {
            let got = normal_cdf(x);
            assert!(
                close_rel(got, want, 1e-13),
                "normal_cdf({x}) = {got:e}, want {want:e}"
            );
        }
        check(0.0, 0.5);
        check(f64::NEG_INFINITY, 0.0);
        check(f64::INFINITY, 1.0);
        check(1.0, 0.8413447460685429);
        check(-1.0, 0.15865525393145707);
        check(-2.8284271247461903, 0.0023388674905236288);
        check(-10.0, 7.61985302416047e-24);
        check(-30.0, 4.906713927147908e-198);
        check(-40.0, 0.0);
        assert!(normal_cdf(f64::NAN).is_nan());
    }

    #[test]
    fn binomial_cdf_edge_cases() {
        fn check(k: u64, n: u64, p: f64, want: f64) {
            let got = binomial_cdf(k, n, p);
            assert!(
                close_rel(got, want, 1e-12),
                "binomial_cdf({k}, {n}, {p}) = {got:e}, want {want:e}"
            );
        }
        check(0, 0, 0.3, 1.0);
        check(5, 5, 0.3, 1.0);
        check(9, 5, 0.3, 1.0);
        check(0, 5, 0.0, 1.0);
        check(4, 5, 1.0, 0.0);
        check(0, 1, 0.25, 0.75);
        check(0, 3, 0.5, 0.125);
        check(1, 3, 0.5, 0.5);
        check(2, 3, 0.5, 0.875);
        check(2, 4, 0.5, 11.0 / 16.0);
        // Exact small cases: sum of C(10, i) 0.1^i 0.9^(10-i) for i <= 1.
        check(1, 10, 0.1, 0.7360989291);
        assert!(binomial_cdf(1, 3, -0.1).is_nan());
        assert!(binomial_cdf(1, 3, 1.5).is_nan());
        assert!(binomial_cdf(1, 3, f64::NAN).is_nan());
    }

    #[test]
    fn binomial_cdf_is_monotone_and_sums_to_one() {
        for (n, p) in [
            (1u64, 0.5),
            (7, 0.3),
            (50, 0.99),
            (1000, 0.001),
            (2000, 0.5),
        ] {
            let mut prev = 0.0;
            for k in 0..=n {
                let c = binomial_cdf(k, n, p);
                assert!(c >= prev - 1e-15, "not monotone at n={n} p={p} k={k}");
                let pmf = binomial_pmf(k, n, p);
                assert!(close(c - prev, pmf), "cdf step != pmf at n={n} p={p} k={k}");
                prev = c;
            }
            assert_eq!(prev, 1.0);
        }
    }

    #[test]
    fn binomial_cdf_for_very_large_n() {
        // scipy.stats.binom.cdf(k, n, p). n·p·(1-p) = 9e7 is still summed exactly; 2.5e8 uses the
        // continuity-corrected normal approximation, documented as accurate to < 1e-5 there.
        fn check(k: u64, n: u64, p: f64, want: f64, tolerance: f64) {
            let got = binomial_cdf(k, n, p);
            assert!(
                (got - want).abs() <= tolerance,
                "binomial_cdf({k}, {n}, {p}) = {got}, want {want}"
            );
        }
        check(100_010_000, 1_000_000_000, 0.1, 0.8540914331952238, 1e-12);
        check(499_999_999, 1_000_000_000, 0.5, 0.49998738433739354, 1e-7);
        check(500_050_000, 1_000_000_000, 0.5, 0.9992173838767915, 1e-7);
    }

    #[test]
    fn binomial_pmf_matches_direct_formula() {
        // C(20, 7) 0.3^7 0.7^13
        let want = 77520.0 * 0.3f64.powi(7) * 0.7f64.powi(13);
        assert!(close_rel(binomial_pmf(7, 20, 0.3), want, 1e-14));
        assert_eq!(binomial_pmf(21, 20, 0.3), 0.0);
        assert_eq!(binomial_pmf(0, 0, 0.3), 1.0);
        assert!(close_rel(
            binomial_pmf(0, 20, 0.05),
            0.95f64.powi(20),
            1e-14
        ));
        assert!(close_rel(
            binomial_pmf(20, 20, 0.95),
            0.95f64.powi(20),
            1e-14
        ));
    }
}
