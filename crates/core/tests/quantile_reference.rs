//! Reference test: `slo_core::quantile` and `slo_core::stats` against values recorded by
//! `tests/reference/quantiles.py` (numpy.percentile for all 13 methods, scipy for the binomial and
//! normal CDFs, high-precision decimals for Wilson and the two-proportion test).
//!
//! Regenerate the data with `python3 tests/reference/quantiles.py` (numpy pinned in
//! `tests/reference/requirements.txt`). Every failing case is printed with the call that produced it.

use std::collections::HashMap;

use serde::Deserialize;
use slo_core::quantile::{percentile_ci95, percentiles, Method};
use slo_core::stats::{binomial_cdf, normal_cdf, two_proportion_test, wilson_interval};

#[derive(Deserialize)]
struct Reference {
    numpy_version: String,
    datasets: HashMap<String, Vec<f64>>,
    percentile: Vec<Group>,
    nearest_rank: Vec<Group>,
    wilson: Section<(u64, u64, String, f64, f64)>,
    binomial_cdf: Section<(u64, u64, String, f64)>,
    normal_cdf: Section<(String, f64)>,
    two_proportion: Section<(u64, u64, u64, u64, f64, f64, f64)>,
    ci95: Section<(u64, String, Option<u64>, Option<u64>)>,
}

/// One dataset and method, evaluated at every q (strings, parsed bit-exactly by `str::parse`).
#[derive(Deserialize)]
struct Group {
    call: String,
    x: String,
    method: String,
    q: Vec<String>,
    want: Vec<f64>,
}

#[derive(Deserialize)]
struct Section<T> {
    call: String,
    cases: Vec<T>,
}

fn load() -> Reference {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quantiles.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"))
}

/// The house float rule.
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

/// Relative rule for probabilities that can be as small as 1e-300, where `close` would accept 0.
fn close_rel(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs() + 1e-300
}

fn parse(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|e| panic!("bad float {s:?} in reference data: {e}"))
}

fn report(section: &str, checked: usize, failures: &[String]) {
    assert!(checked > 0, "{section}: no reference cases");
    assert!(
        failures.is_empty(),
        "{section}: {} of {checked} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn check_groups(
    section: &str,
    groups: &[Group],
    datasets: &HashMap<String, Vec<f64>>,
    numpy: &str,
) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for g in groups {
        let method = Method::from_name(&g.method)
            .unwrap_or_else(|| panic!("unknown method {:?} in {}", g.method, g.call));
        assert_eq!(method.name(), g.method);
        let x = datasets
            .get(&g.x)
            .unwrap_or_else(|| panic!("unknown dataset {:?}", g.x));
        assert_eq!(
            g.q.len(),
            g.want.len(),
            "{}: q and want lengths differ",
            g.call
        );
        let qs: Vec<f64> = g.q.iter().map(|q| parse(q)).collect();
        let got = percentiles(x, &qs, method);
        for ((q, want), got) in g.q.iter().zip(&g.want).zip(got) {
            checked += 1;
            match got {
                Some(v) if close(v, *want) => {}
                _ => failures.push(format!(
                    "  {} with x = datasets[{:?}], q = {q}: want {want:?} (numpy {numpy}), got {got:?}",
                    g.call, g.x
                )),
            }
        }
    }
    report(section, checked, &failures);
}

#[test]
fn numpy_percentile_all_methods() {
    let r = load();
    let methods: std::collections::HashSet<&str> =
        r.percentile.iter().map(|g| g.method.as_str()).collect();
    assert_eq!(methods.len(), 13, "expected all 13 numpy methods");
    check_groups(
        "numpy.percentile",
        &r.percentile,
        &r.datasets,
        &r.numpy_version,
    );
}

#[test]
fn nearest_rank_definition() {
    let r = load();
    check_groups(
        "nearest_rank",
        &r.nearest_rank,
        &r.datasets,
        &r.numpy_version,
    );
}

#[test]
fn wilson_reference() {
    let r = load();
    let mut failures = Vec::new();
    for (s, n, z, lo, hi) in &r.wilson.cases {
        let got = wilson_interval(*s, *n, parse(z));
        match got {
            Some((gl, gh)) if close(gl, *lo) && close(gh, *hi) => {}
            _ => failures.push(format!(
                "  {} with successes={s}, n={n}, z={z}: want ({lo:?}, {hi:?}), got {got:?}",
                r.wilson.call
            )),
        }
    }
    report("wilson", r.wilson.cases.len(), &failures);
}

#[test]
fn binomial_cdf_reference() {
    let r = load();
    let mut failures = Vec::new();
    for (k, n, p, want) in &r.binomial_cdf.cases {
        let got = binomial_cdf(*k, *n, parse(p));
        if !close_rel(got, *want) {
            failures.push(format!(
                "  {} with k={k}, n={n}, p={p}: want {want:e}, got {got:e}",
                r.binomial_cdf.call
            ));
        }
    }
    report("binomial_cdf", r.binomial_cdf.cases.len(), &failures);
}

#[test]
fn normal_cdf_reference() {
    let r = load();
    let mut failures = Vec::new();
    for (x, want) in &r.normal_cdf.cases {
        let got = normal_cdf(parse(x));
        if !close_rel(got, *want) {
            failures.push(format!(
                "  {} with x={x}: want {want:e}, got {got:e}",
                r.normal_cdf.call
            ));
        }
    }
    report("normal_cdf", r.normal_cdf.cases.len(), &failures);
}

#[test]
fn two_proportion_reference() {
    let r = load();
    let mut failures = Vec::new();
    for (s1, n1, s2, n2, diff, z, p_value) in &r.two_proportion.cases {
        let got = two_proportion_test(*s1, *n1, *s2, *n2);
        match got {
            Some(t) if close(t.diff, *diff) && close(t.z, *z) && close_rel(t.p_value, *p_value) => {}
            _ => failures.push(format!(
                "  {} with ({s1}/{n1}, {s2}/{n2}): want diff={diff:?} z={z:?} p={p_value:e}, got {got:?}",
                r.two_proportion.call
            )),
        }
    }
    report("two_proportion", r.two_proportion.cases.len(), &failures);
}

#[test]
fn percentile_ci95_reference() {
    let r = load();
    let mut failures = Vec::new();
    let largest = r.ci95.cases.iter().map(|c| c.0).max().unwrap_or(0);
    // sorted = [0, 1, ..., n-1]: the interval's values are its 0-based indices.
    let index_values: Vec<f64> = (0..largest).map(|i| i as f64).collect();
    for (n, q, lo, hi) in &r.ci95.cases {
        let sorted = index_values.get(..*n as usize).unwrap_or(&[]);
        let got = percentile_ci95(sorted, parse(q));
        let want = lo.zip(*hi).map(|(l, h)| (l as f64, h as f64));
        if got != want {
            failures.push(format!(
                "  {} with n={n}, q={q}: want {want:?}, got {got:?}",
                r.ci95.call
            ));
        }
    }
    report("ci95", r.ci95.cases.len(), &failures);
}
