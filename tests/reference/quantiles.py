#!/usr/bin/env python3
"""Generate crates/core/tests/data/quantiles.json, the reference values for slo_core::quantile and
slo_core::stats (checked by crates/core/tests/quantile_reference.rs).

Usage (from the repository root):
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install -r tests/reference/requirements.txt
    /tmp/venv/bin/python tests/reference/quantiles.py

Deterministic: fixed seeds, no network. Sources of truth, recorded per case:
  * percentile:    numpy.percentile(x, q, method=NAME) for numpy's 13 methods, one scalar call per
                   (dataset, q, method), x as float64, q a Python float.
  * nearest_rank:  by definition (not in numpy): the smallest value with at least q% of the values at
                   or below it, i.e. sorted(x)[k - 1] with k = ceil(q * n / 100) clamped to [1, n]
                   (q = 0 gives the minimum). q * n / 100 is evaluated exactly from q's decimal text
                   (Fraction), and a value at most 4 ulps (4 * 2**-52 * max(r, 1)) above an integer
                   counts as that integer, so floating-point noise in a decimal q like 33.3 never moves
                   the rank; the Rust code computes q * n / 100 in f64 with the same 4-ulp allowance.
  * wilson:        the closed Wilson score formula evaluated in 40-digit decimal arithmetic.
  * binomial_cdf:  scipy.stats.binom.cdf when scipy is installed, else an exact Fraction sum
                   (math.comb) for small n only.
  * normal_cdf:    scipy.special.ndtr (skipped without scipy).
  * two_proportion: pooled z-test in 40-digit decimals; p-value 2 * scipy.stats.norm.sf(|z|).
  * ci95:          the percentile_ci95 rule (see its Rust docs) evaluated with exact Fractions for
                   n <= 5000 (scipy floats for larger n), on sorted = [0, 1, ..., n-1], so the wanted
                   values are the 0-based indices.

q values are written as strings (Python repr) so that Rust parses them with the correctly rounded
str::parse::<f64> and gets bit-identical q; numpy's discrete methods jump at exact boundaries.
"""

import json
import math
import random
import sys
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import numpy as np

try:
    import scipy
    from scipy import special, stats
except ImportError:  # the percentile cases only need numpy
    scipy = None

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "crates" / "core" / "tests" / "data" / "quantiles.json"

NUMPY_METHODS = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]

BASE_QS = [0, 0.1, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100]
Z95 = 1.959963984540054
ULP4 = Fraction(4, 2**52)


def datasets():
    rng = random.Random(20240601)
    ttft = [180, 220, 260, 310, 640, 300, 350, 240, 390, 410]
    e2e = [4010, 4690, 4860, 5240, 4420, 6900, 5230, 4600, 5220, 5330]
    d = {
        "ttft_ms": [float(v) for v in ttft],
        "tpot_ms": [(e - t) / 100 for e, t in zip(e2e, ttft)],
        "n1": [42.5],
        "n2": [1.0, 3.0],
        "n2_equal": [5.0, 5.0],
        "n3": [2.5, -5.0, 0.0],
        "n4": [1.0, 2.0, 3.0, 4.0],
        "n4_negative": [-3.0, -1.0, -2.0, -4.0],
        "n5_ties": [3.0, 2.0, 3.0, 2.0, 3.0],
        "n5_all_equal": [7.25] * 5,
        "n7_negative": [round(rng.uniform(-100, -1), 3) for _ in range(7)],
        "n10_ties": [float(rng.randint(1, 4)) for _ in range(10)],
        "n11_mixed": [round(rng.gauss(0, 1e3), 6) for _ in range(11)],
        "n100_latency": [round(rng.lognormvariate(5.5, 0.6), 1) for _ in range(100)],
        "n100_int_ties": [float(rng.randint(0, 20)) for _ in range(100)],
        "n1001_latency": [rng.lognormvariate(3.0, 1.0) for _ in range(1001)],
    }
    return d


def qs_for(name, n, rng):
    qs = set(float(q) for q in BASE_QS)
    qs.update(round(rng.uniform(0, 100), rng.choice([2, 6, 12])) for _ in range(4))
    qs.add(rng.uniform(0, 100))
    # q values where numpy's virtual indexes are (nearly) integers or halves: the jumps of the
    # discrete methods and nearest's round-half-to-even.
    if n <= 11:
        for den in {n, max(n - 1, 1)}:
            for k2 in range(0, 2 * den + 1):
                qs.add(100 * k2 / (2 * den))
    else:
        for den in (n, n - 1):
            for k in rng.sample(range(1, den), 6):
                qs.add(100 * k / den)
                qs.add(100 * (k + 0.5) / den)
    return sorted(q for q in qs if 0 <= q <= 100)


def nearest_rank(sorted_x, q):
    n = len(sorted_x)
    r = Fraction(repr(q)) * n / 100
    k = math.ceil(r - ULP4 * max(r, 1))
    k = min(max(k, 1), n)
    return sorted_x[k - 1]


def percentile_groups(data):
    rng = random.Random(7)
    groups, nr_groups = [], []
    for name, x in data.items():
        arr = np.asarray(x, dtype=np.float64)
        qs = qs_for(name, len(x), rng)
        for method in NUMPY_METHODS:
            want = [float(np.percentile(arr, q, method=method)) for q in qs]
            groups.append(
                {
                    "call": f"numpy.percentile(x, q, method='{method}') for each q",
                    "numpy_version": np.__version__,
                    "x": name,
                    "method": method,
                    "q": [repr(q) for q in qs],
                    "want": want,
                }
            )
        sx = sorted(x)
        nr_groups.append(
            {
                "call": "sorted(x)[clamp(ceil(q*n/100 - 4 ulp), 1, n) - 1], q*n/100 exact from decimal q",
                "x": name,
                "method": "nearest_rank",
                "q": [repr(q) for q in qs],
                "want": [nearest_rank(sx, q) for q in qs],
            }
        )
    return groups, nr_groups


def wilson_cases():
    getcontext().prec = 40
    cases = []
    pairs = [(0, 1), (1, 1), (0, 10), (1, 10), (5, 10), (9, 10), (10, 10), (1, 3), (2, 3),
             (95, 100), (99, 100), (999, 1000), (1, 1000000), (999999, 1000000), (123456, 1000000)]
    zs = [Z95, 1.0, 1.6448536269514722, 2.5758293035489004]
    for s, n in pairs:
        for z in zs:
            zd = Decimal(repr(z))
            nd = Decimal(n)
            p = Decimal(s) / nd
            denom = 1 + zd * zd / nd
            centre = (p + zd * zd / (2 * nd)) / denom
            half = zd / denom * (p * (1 - p) / nd + zd * zd / (4 * nd * nd)).sqrt()
            lo = max(centre - half, Decimal(0))
            hi = min(centre + half, Decimal(1))
            cases.append([s, n, repr(z), float(lo), float(hi)])
    return {
        "call": "Wilson score interval (p+z^2/2n)/(1+z^2/n) -/+ z/(1+z^2/n)*sqrt(p(1-p)/n+z^2/4n^2), "
        "clamped to [0, 1], in 40-digit decimals",
        "columns": ["successes", "n", "z", "want_lower", "want_upper"],
        "cases": cases,
    }


def binomial_cdf_cases():
    cases = []
    if scipy is None:
        for n in (1, 2, 5, 10, 30):
            for p in (0.1, 0.5, 0.9):
                pf = Fraction(p)
                acc = Fraction(0)
                for k in range(n + 1):
                    acc += math.comb(n, k) * pf**k * (1 - pf) ** (n - k)
                    cases.append([k, n, repr(p), float(acc)])
        return {"call": "sum(math.comb(n, i) * p**i * (1-p)**(n-i) for i <= k), exact Fractions",
                "columns": ["k", "n", "p", "want"], "cases": cases}
    for n in (1, 2, 5, 10, 30, 100, 1000, 10**4, 10**5, 10**6, 10**7):
        for p in (0.001, 0.01, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999):
            mu, sd = n * p, math.sqrt(n * p * (1 - p))
            ks = {0, n - 1, n, int(mu)}
            for t in (-30, -8, -5, -3, -1, 0, 1, 3, 5, 8):
                ks.add(min(max(int(round(mu + t * sd)), 0), n))
            for k in sorted(ks):
                cases.append([k, n, repr(p), float(stats.binom.cdf(k, n, p))])
    return {"call": "scipy.stats.binom.cdf(k, n, p)", "scipy_version": scipy.__version__,
            "columns": ["k", "n", "p", "want"], "cases": cases}


def normal_cdf_cases():
    if scipy is None:
        return {"call": "scipy.special.ndtr(x)", "columns": ["x", "want"], "cases": []}
    xs = sorted(set([round(float(v), 3) for v in np.linspace(-38, 9, 95)]
                    + [0.0, 1.0, -1.0, 1.959963984540054, -1.959963984540054, 1.4142, -1.4142,
                       2.8284, -2.8284, 1e-8, -1e-8, -37.5, -20.0]))
    return {"call": "scipy.special.ndtr(x)", "scipy_version": scipy.__version__,
            "columns": ["x", "want"], "cases": [[repr(x), float(special.ndtr(x))] for x in xs]}


def two_proportion_cases():
    getcontext().prec = 40
    cases = []
    if scipy is not None:
        for s1, n1, s2, n2 in [(90, 100, 80, 100), (80, 100, 90, 100), (5, 10, 5, 10), (1, 2, 3, 3),
                               (950, 1000, 900, 1000), (9900, 10000, 9950, 10000), (0, 5, 5, 5),
                               (3, 7, 10, 13), (499, 1000, 541, 1000), (1, 1000000, 10, 1000000)]:
            p1, p2 = Decimal(s1) / n1, Decimal(s2) / n2
            pool = Decimal(s1 + s2) / (n1 + n2)
            z = (p2 - p1) / (pool * (1 - pool) * (Decimal(1) / n1 + Decimal(1) / n2)).sqrt()
            pv = 2 * stats.norm.sf(abs(float(z)))
            cases.append([s1, n1, s2, n2, float(p2 - p1), float(z), float(pv)])
    return {"call": "pooled two-proportion z-test in 40-digit decimals; p_value = 2*scipy.stats.norm.sf(|z|)",
            "columns": ["s1", "n1", "s2", "n2", "want_diff", "want_z", "want_p_value"],
            "cases": cases}


def ci95_indices(n, q):
    """The percentile_ci95 rule (documented in quantile.rs). Returns 0-based (lo, hi) or None.

    For n <= 5000 every probability is exact: with p = a/D as an exact binary fraction, the
    integers N(k) = comb(n, k) a^k (D-a)^(n-k) are the masses scaled by D^n."""
    if n < 2 or not (0 < q < 100):
        return None
    p = q / 100
    variance = n * p * (1 - p)
    exact = n <= 5000
    if exact:
        pf = Fraction(p)
        a, d = pf.numerator, pf.denominator
        b = d - a
        total = d**n  # mass 1 in N units
        target_met = lambda mass: 20 * mass >= 19 * total  # noqa: E731
        pmf = lambda k: math.comb(n, k) * a**k * b ** (n - k)  # noqa: E731
        down = lambda nk, k: nk * k * b // ((n - k + 1) * a)  # N(k-1) from N(k)  # noqa: E731
        up = lambda nk, k: nk * (n - k) * a // ((k + 1) * b)  # N(k+1) from N(k)  # noqa: E731
    else:
        target_met = lambda mass: mass >= 0.95  # noqa: E731
        pmf = lambda k: float(stats.binom.pmf(k, n, p))  # noqa: E731
        down = lambda nk, k: pmf(k - 1)  # noqa: E731
        up = lambda nk, k: pmf(k + 1)  # noqa: E731

    if variance > 1000:
        mean = n * p
        sd = math.sqrt(variance)
        lo = max(math.floor(mean - Z95 * sd + 0.5), 1)
        hi = min(math.ceil(mean + Z95 * sd - 0.5), n - 1)
        if exact:
            mass, nk = 0, pmf(lo)
            n_lo = nk
            for k in range(lo, hi + 1):
                mass += nk
                n_hi = nk
                nk = up(nk, k)
        else:
            mass = float(stats.binom.cdf(hi, n, p) - stats.binom.cdf(lo - 1, n, p))
            n_lo, n_hi = pmf(lo), pmf(hi)
    else:
        mode = min(max(math.floor((n + 1) * p), 1), n - 1)
        lo = hi = mode
        n_lo = n_hi = mass = pmf(mode)
    while not target_met(mass):
        below = down(n_lo, lo) if lo > 1 else None
        above = up(n_hi, hi) if hi + 1 < n else None
        if below is None and above is None:
            return None
        if above is None or (below is not None and below >= above):
            lo -= 1
            n_lo = below
            mass += below
        else:
            hi += 1
            n_hi = above
            mass += above
    return (lo - 1, hi)


def ci95_cases():
    cases = []
    qs = [0, 0.1, 1, 5, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100]
    ns = [1, 2, 5, 6, 10, 20, 28, 29, 30, 58, 59, 100, 298, 299, 300, 1000, 1001, 2994, 2995, 5000]
    if scipy is not None:
        ns += [10**4, 10**5, 10**6, 10**7]
    for n in ns:
        for q in qs:
            got = ci95_indices(n, float(q))
            cases.append([n, repr(float(q)), got[0] if got else None, got[1] if got else None])
    return {
        "call": "percentile_ci95(range(n), q) by its documented rule: exact integer arithmetic for "
        "n <= 5000, scipy.stats.binom pmf/cdf above; want = 0-based indices (null = None)",
        "columns": ["n", "q", "want_lo_index", "want_hi_index"],
        "cases": cases,
    }


def main():
    data = datasets()
    groups, nr_groups = percentile_groups(data)
    out = {
        "generator": "tests/reference/quantiles.py",
        "numpy_version": np.__version__,
        "scipy_version": scipy.__version__ if scipy else None,
        "python_version": sys.version.split()[0],
        "note": "q values are strings (Python repr) so Rust parses them bit-exactly",
        "datasets": data,
        "percentile": groups,
        "nearest_rank": nr_groups,
        "wilson": wilson_cases(),
        "binomial_cdf": binomial_cdf_cases(),
        "normal_cdf": normal_cdf_cases(),
        "two_proportion": two_proportion_cases(),
        "ci95": ci95_cases(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(out, separators=(",", ":"))
    OUT.write_text(text + "\n")
    n_pct = sum(len(g["q"]) for g in groups)
    n_nr = sum(len(g["q"]) for g in nr_groups)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(text) // 1024} KiB, {n_pct} numpy percentile cases, "
          f"{n_nr} nearest_rank, {len(out['wilson']['cases'])} wilson, "
          f"{len(out['binomial_cdf']['cases'])} binomial_cdf, {len(out['normal_cdf']['cases'])} normal_cdf, "
          f"{len(out['two_proportion']['cases'])} two_proportion, {len(out['ci95']['cases'])} ci95 "
          f"(numpy {np.__version__})")


if __name__ == "__main__":
    main()
