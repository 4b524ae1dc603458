//! Comparing two runs: the fixtures of tests/reference/make_compare.py (2 classes × 2 buckets,
//! 1,000 requests per cell; one cell drops from 99 % to 90 % good), hand-computed z-tests, and
//! the edge cases of `compare`.

use slo_core::compare::{compare, Change, Comparison, GroupComparison, ALPHA};
use slo_core::evaluate::{report, Duration, Report};
use slo_core::ingest;
use slo_core::quantile::Method;
use slo_core::spec::{ClassRule, ClassSpec, Indicator, Spec, Targets, TtftTarget};
use slo_core::stats::wilson_ci95;
use slo_core::table::{RequestTable, Row};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/compare");

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn assert_close(got: Option<f64>, want: f64, what: &str) {
    let g = got.unwrap_or_else(|| panic!("{what}: got None, want {want}"));
    assert!(close(g, want), "{what}: got {g}, want {want}");
}

/// Relative comparison, for p-values far in the tail.
fn assert_close_rel(got: Option<f64>, want: f64, what: &str) {
    let g = got.unwrap_or_else(|| panic!("{what}: got None, want {want:e}"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs(),
        "{what}: got {g:e}, want {want:e}"
    );
}

fn fixture_report(name: &str, spec: &Spec) -> Report {
    let bytes = std::fs::read(format!("{FIXTURES}/{name}")).expect("fixture");
    let loaded = ingest::parse(name, &bytes, &Default::default());
    assert_eq!(loaded.fatal, None, "{name} could not be read");
    assert_eq!(loaded.error_count, 0, "{name}: {:?}", loaded.errors);
    report(&loaded.table, spec, &Duration::unknown("no timestamps"))
}

fn fixture_spec() -> Spec {
    let text = std::fs::read_to_string(format!("{FIXTURES}/spec.json")).expect("spec.json");
    Spec::from_json(&text).expect("valid spec")
}

fn fixtures() -> Comparison {
    let spec = fixture_spec();
    compare(
        &fixture_report("run_a.csv", &spec),
        &fixture_report("run_b.csv", &spec),
    )
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/expected.json")).expect("expected");
    serde_json::from_str(&text).expect("json")
}

fn cell<'a>(c: &'a Comparison, class: &str, bucket: &str) -> &'a GroupComparison {
    c.cells
        .iter()
        .find(|g| g.class.as_deref() == Some(class) && g.bucket.as_deref() == Some(bucket))
        .unwrap_or_else(|| panic!("no cell {class} / {bucket}"))
}

fn class<'a>(c: &'a Comparison, name: &str) -> &'a GroupComparison {
    c.classes
        .iter()
        .find(|g| g.class.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no class {name}"))
}

// ---------------------------------------------------------------- the fixtures

#[test]
fn fixture_regression_is_found_and_nothing_else() {
    let c = fixtures();
    assert_eq!(c.cells.len(), 4);
    assert_eq!(cell(&c, "chat", ">=2k").change, Change::Worse);
    for (cls, bucket) in [("chat", "<2k"), ("batch", "<2k"), ("batch", ">=2k")] {
        let g = cell(&c, cls, bucket);
        assert_eq!(g.change, Change::NoSignificantChange, "{cls} / {bucket}");
        assert!(g.p_value.is_some_and(|p| p >= ALPHA), "{cls} / {bucket}");
    }
    assert_eq!(class(&c, "chat").change, Change::Worse);
    assert_eq!(class(&c, "batch").change, Change::NoSignificantChange);
    assert_eq!(c.overall.change, Change::Worse);
    assert!(c.any_cell_worse());
    let worse: Vec<(Option<&str>, Option<&str>)> = c
        .worse()
        .map(|g| (g.class.as_deref(), g.bucket.as_deref()))
        .collect();
    assert_eq!(
        worse,
        [
            (None, None),
            (Some("chat"), None),
            (Some("chat"), Some(">=2k"))
        ]
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!((c.method_a, c.method_b), (Method::Linear, Method::Linear));
}

#[test]
fn fixture_counts_and_intervals_match_the_generator() {
    let c = fixtures();
    let want = expected();
    for run in ["a", "b"] {
        for (key, w) in want[run].as_object().expect("cells") {
            let g = cell(
                &c,
                w["class"].as_str().expect("class"),
                w["bucket"].as_str().expect("b"),
            );
            let side = if run == "a" { &g.a } else { &g.b };
            let side = side
                .as_ref()
                .unwrap_or_else(|| panic!("{run} {key}: no side"));
            assert_eq!(Some(side.attempted), w["attempted"].as_u64(), "{run} {key}");
            assert_eq!(Some(side.good), w["good"].as_u64(), "{run} {key}");
            assert_eq!(
                side.attainment_ci95,
                wilson_ci95(side.good, side.attempted),
                "{run} {key}"
            );
        }
    }
}

/// The regression cell, by hand: 990 of 1,000 good in A, 900 of 1,000 in B.
#[test]
fn regression_cell_z_and_p_value_by_hand() {
    let c = fixtures();
    let g = cell(&c, "chat", ">=2k");
    // diff = 0.900 - 0.990 = -0.09; pooled p = (990 + 900) / 2000 = 0.945;
    // se = sqrt(0.945 · 0.055 · (1/1000 + 1/1000)) = sqrt(0.00010395) = 0.0101956...;
    // z = -0.09 / 0.0101956 = -8.82734829504...
    let pooled: f64 = 1890.0 / 2000.0;
    let z = (0.900 - 0.990) / (pooled * (1.0 - pooled) * (2.0 / 1000.0)).sqrt();
    assert_close(Some(z), -8.827348295047488, "hand z");
    assert_close(g.diff, -0.09, "diff");
    assert_close(g.z, z, "z");
    // p = 2·Φ(-|z|) = erfc(|z|/√2); Python: math.erfc(8.827348295047488 / math.sqrt(2)).
    assert_close_rel(g.p_value, 1.071866131126375e-18, "p-value");
    let (a, b) = (g.a.as_ref().expect("a"), g.b.as_ref().expect("b"));
    assert_eq!(
        (a.good, a.attempted, b.good, b.attempted),
        (990, 1000, 900, 1000)
    );
    assert_close(a.attainment, 0.99, "A attainment");
    assert_close(b.attainment, 0.90, "B attainment");
}

/// Every other group, by the same hand formula (z and p-value from Python's math.erfc).
#[test]
fn other_groups_z_and_p_value_by_hand() {
    fn check(g: &GroupComparison, counts: (u64, u64, u64, u64), z: f64, p: f64) {
        let what = format!("{:?} / {:?}", g.class, g.bucket);
        let (a, b) = (g.a.as_ref().expect("a"), g.b.as_ref().expect("b"));
        assert_eq!((a.good, a.attempted, b.good, b.attempted), counts, "{what}");
        let (s1, n1, s2, n2) = (
            counts.0 as f64,
            counts.1 as f64,
            counts.2 as f64,
            counts.3 as f64,
        );
        let pooled = (s1 + s2) / (n1 + n2);
        let hand = (s2 / n2 - s1 / n1) / (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
        assert_close(Some(hand), z, &format!("{what}: hand z"));
        assert_close(g.z, z, &format!("{what}: z"));
        assert_close_rel(g.p_value, p, &format!("{what}: p-value"));
    }
    let c = fixtures();
    check(
        cell(&c, "chat", "<2k"),
        (990, 1000, 988, 1000),
        -0.42876616763661474,
        0.6680934023170401,
    );
    check(
        cell(&c, "batch", "<2k"),
        (990, 1000, 992, 1000),
        0.47354026829137097,
        0.6358277790151305,
    );
    check(
        cell(&c, "batch", ">=2k"),
        (990, 1000, 991, 1000),
        0.23051328487783054,
        0.8176929415810015,
    );
    check(
        class(&c, "chat"),
        (1980, 2000, 1888, 2000),
        -8.143059810841962,
        3.8541175407168497e-16,
    );
    check(
        class(&c, "batch"),
        (1980, 2000, 1983, 2000),
        0.49549394552939063,
        0.6202514947216277,
    );
    check(
        &c.overall,
        (3960, 4000, 3871, 4000),
        -6.919632596481701,
        4.528164777947105e-12,
    );
}

#[test]
fn fixture_percentile_shifts_match_the_generator() {
    let c = fixtures();
    let want = expected();
    for (key, w) in want["a"].as_object().expect("cells") {
        let g = cell(
            &c,
            w["class"].as_str().expect("class"),
            w["bucket"].as_str().expect("b"),
        );
        for indicator in [Indicator::Ttft, Indicator::Tpot] {
            let shifts = g
                .shifts
                .iter()
                .find(|s| s.indicator == indicator)
                .unwrap_or_else(|| panic!("{key}: no {indicator:?} shifts"));
            assert_eq!(shifts.percentiles.len(), 3, "{key} {indicator:?}");
            for p in &shifts.percentiles {
                let q = slo_core::evaluate::fmt_q(p.q);
                let ind = indicator.key();
                let what = format!("{key} {ind} p{q}");
                assert_close(p.a_ms, want["a"][key][ind][&q].as_f64().expect("a"), &what);
                assert_close(p.b_ms, want["b"][key][ind][&q].as_f64().expect("b"), &what);
                let shift = want["shift_b_minus_a"][key][ind][&q]
                    .as_f64()
                    .expect("shift");
                assert_close(p.shift_ms, shift, &what);
            }
        }
    }
    // The regression's slow requests reach the p99 TTFT of the worse cell: a large shift there.
    let worst = cell(&c, "chat", ">=2k");
    let ttft = worst
        .shifts
        .iter()
        .find(|s| s.indicator == Indicator::Ttft)
        .expect("ttft");
    assert!(ttft.percentiles[2].shift_ms.is_some_and(|s| s > 100.0));
}

#[test]
fn swapping_the_runs_turns_worse_into_better() {
    let spec = fixture_spec();
    let (a, b) = (
        fixture_report("run_a.csv", &spec),
        fixture_report("run_b.csv", &spec),
    );
    let c = compare(&b, &a);
    assert_eq!(cell(&c, "chat", ">=2k").change, Change::Better);
    assert_close(cell(&c, "chat", ">=2k").z, 8.827348295047488, "z");
    assert!(!c.any_cell_worse());
    assert_eq!(c.worse().count(), 0);
}

// ---------------------------------------------------------------- edge cases

/// A report of one class rule per (class name, good, bad): good requests have TTFT 100 ms, bad
/// ones 900 ms, against a 500 ms target.
fn run(groups: &[(&str, u64, u64)], method: Method) -> Report {
    let mut t = RequestTable::default();
    let mut line = 2;
    for &(class, good, bad) in groups {
        for k in 0..good + bad {
            let ttft = if k < good { 100.0 + k as f64 } else { 900.0 };
            let row = Row {
                ttft_ms: Some(ttft),
                e2e_ms: Some(ttft + 1000.0),
                output_tokens: Some(11.0),
                labels: vec![("class".to_string(), class.to_string())],
                ..Row::default()
            };
            t.push(row, 0, line, "run");
            line += 1;
        }
    }
    let targets = Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        ..Targets::default()
    };
    let mut spec = Spec::single(targets);
    spec.classes = ["x", "y", "z"]
        .iter()
        .map(|name| ClassSpec {
            name: name.to_string(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".to_string(),
                value: name.to_string(),
            },
            targets: vec![targets],
        })
        .collect();
    spec.method = method;
    report(&t, &spec, &Duration::unknown("no timestamps"))
}

#[test]
fn verdicts_from_counts() {
    fn check(a: (u64, u64), b: (u64, u64), want: Change) {
        let c = compare(
            &run(&[("x", a.0, a.1)], Method::Linear),
            &run(&[("x", b.0, b.1)], Method::Linear),
        );
        assert_eq!(class(&c, "x").change, want, "{a:?} -> {b:?}");
    }
    check((90, 10), (80, 20), Change::Worse); // p = 0.0477
    check((80, 20), (90, 10), Change::Better);
    check((90, 10), (85, 15), Change::NoSignificantChange); // p = 0.285
    check((50, 50), (50, 50), Change::NoSignificantChange);
    check((100, 0), (100, 0), Change::NoSignificantChange); // no variance: no test
    check((0, 100), (0, 100), Change::NoSignificantChange);
    check((0, 0), (10, 0), Change::NotTested); // A attempted nothing
}

#[test]
fn all_good_in_both_runs_is_no_change_without_a_z() {
    let c = compare(
        &run(&[("x", 50, 0)], Method::Linear),
        &run(&[("x", 70, 0)], Method::Linear),
    );
    let g = class(&c, "x");
    assert_eq!(g.change, Change::NoSignificantChange);
    assert_eq!((g.diff, g.z, g.p_value), (Some(0.0), None, None));
}

#[test]
fn a_group_only_one_run_has_is_not_tested() {
    // Classes with no request still get a (zero) group in a report; both runs have x, y, z.
    let c = compare(
        &run(&[("x", 90, 10)], Method::Linear),
        &run(&[("x", 90, 10), ("y", 40, 0)], Method::Linear),
    );
    let y = class(&c, "y");
    assert_eq!(y.change, Change::NotTested);
    assert_eq!(y.a.as_ref().map(|s| s.attempted), Some(0));
    assert!(
        y.notes
            .iter()
            .any(|n| n.contains("run A attempted no request")),
        "{:?}",
        y.notes
    );
    assert_eq!(y.diff, None);

    // A report without the group at all (classes renamed): matched by label, one side None.
    let mut b = run(&[("x", 90, 10)], Method::Linear);
    for g in b.classes.iter_mut().chain(b.cells.iter_mut()) {
        if g.class.as_deref() == Some("z") {
            g.class = Some("new".to_string());
        }
    }
    let c = compare(&run(&[("x", 90, 10)], Method::Linear), &b);
    let z = class(&c, "z");
    assert_eq!((z.a.is_some(), z.b.is_none()), (true, true));
    assert_eq!(z.change, Change::NotTested);
    assert!(z.notes.iter().any(|n| n == "run B has no such group"));
    let new = class(&c, "new");
    assert_eq!((new.a.is_none(), new.b.is_some()), (true, true));
    assert_eq!(
        c.classes.last().and_then(|g| g.class.as_deref()),
        Some("new")
    );
}

#[test]
fn small_counts_get_a_note() {
    let c = compare(
        &run(&[("x", 97, 3)], Method::Linear),
        &run(&[("x", 90, 10)], Method::Linear),
    );
    let x = class(&c, "x");
    assert!(x.z.is_some());
    assert!(
        x.notes
            .iter()
            .any(|n| n.starts_with("run A has fewer than 5")),
        "{:?}",
        x.notes
    );
    assert!(
        !x.notes.iter().any(|n| n.starts_with("run B")),
        "{:?}",
        x.notes
    );
}

#[test]
fn different_methods_give_a_warning() {
    let c = compare(
        &run(&[("x", 90, 10)], Method::Linear),
        &run(&[("x", 90, 10)], Method::Nearest),
    );
    assert_eq!((c.method_a, c.method_b), (Method::Linear, Method::Nearest));
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].contains("different percentile methods"));
}

#[test]
fn shifts_are_b_minus_a_and_skip_indicators_without_data() {
    // A: TTFT 100..=189 then ten at 900; B: TTFT 100..=179 then twenty at 900.
    let c = compare(
        &run(&[("x", 90, 10)], Method::Linear),
        &run(&[("x", 80, 20)], Method::Linear),
    );
    let x = class(&c, "x");
    let indicators: Vec<Indicator> = x.shifts.iter().map(|s| s.indicator).collect();
    // Only TTFT, TPOT and E2E have values; ITL and queue have none in either run.
    assert_eq!(
        indicators,
        [Indicator::Ttft, Indicator::Tpot, Indicator::E2e]
    );
    let ttft = &x.shifts[0].percentiles;
    let qs: Vec<f64> = ttft.iter().map(|p| p.q).collect();
    assert_eq!(qs, [50.0, 90.0, 99.0]);
    // numpy linear p50 of 100 values: mean of the 50th and 51st, h = 49.5.
    // A: (149 + 150)/2 = 149.5; B: also 149.5 -> shift 0.
    assert_close(ttft[0].a_ms, 149.5, "A p50");
    assert_close(ttft[0].shift_ms, 0.0, "p50 shift");
    // p90, h = 89.1: A = 189 + 0.1·(900 - 189) = 260.1; B = 900 -> shift 639.9.
    assert_close(ttft[1].a_ms, 260.1, "A p90");
    assert_close(ttft[1].b_ms, 900.0, "B p90");
    assert_close(ttft[1].shift_ms, 639.9, "p90 shift");
}
