//! Load sweep: capacity, interpolation, the throughput knee, provisioning, lints, the SLO-scale
//! curve, and one end-to-end run over the vLLM fixtures of tests/reference/make_sweep.py.

use slo_core::ingest::{self, Loaded, RequestRate, RunMeta};
use slo_core::spec::{ClassRule, ClassSpec, Spec, Targets, TtftTarget};
use slo_core::sweep::{
    capacity, evaluate_sweep, interpolate_crossing, per_gpu_goodput, prepare_sweep, provision,
    rate_from_name, replicas_needed, scale_curve, scaled_spec, sweep, sweep_points,
    throughput_knee, Bound, CapacityKind, LintKind, RateSource, SweepInput, SweepPoint,
    SweepReport, SCALE_FACTORS,
};
use slo_core::table::{RequestTable, Row, Status};

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn assert_close(got: Option<f64>, want: f64, what: &str) {
    let g = got.unwrap_or_else(|| panic!("{what}: got None, want {want}"));
    assert!(close(g, want), "{what}: got {g}, want {want}");
}

/// A completed request: TTFT, TPOT and start time; 11 to 13 output tokens (from the start time,
/// so lengths vary) and E2E = TTFT + (tokens - 1) TPOT.
fn ok(ttft_ms: f64, tpot_ms: f64, start_s: f64) -> Row {
    let n = 11.0 + (start_s * 7.0).floor() % 3.0;
    Row {
        ttft_ms: Some(ttft_ms),
        e2e_ms: Some(ttft_ms + (n - 1.0) * tpot_ms),
        output_tokens: Some(n),
        input_tokens: Some(100.0 + start_s.floor()),
        start_s: Some(start_s),
        ..Row::default()
    }
}

fn failed(start_s: f64) -> Row {
    Row {
        status: Status::Error,
        error: Some("Server disconnected".into()),
        start_s: Some(start_s),
        ..Row::default()
    }
}

/// `n` requests sent at `rate` (evenly), the first `slow` of them missing the TTFT target, the
/// next `errors` of them failed.
fn table(rate: f64, n: usize, slow: usize, errors: usize) -> RequestTable {
    let mut t = RequestTable::default();
    for k in 0..n {
        let start = k as f64 / rate;
        let row = if k < slow {
            ok(900.0, 20.0, start)
        } else if k < slow + errors {
            failed(start)
        } else {
            ok(100.0, 20.0, start)
        };
        t.push(row, 0, k as u32 + 2, "t");
    }
    t
}

fn point(rate: f64, n: usize, slow: usize, errors: usize) -> SweepPoint {
    SweepPoint::new(
        &format!("sweep_{rate}.json"),
        table(rate, n, slow, errors),
        RunMeta::default(),
        RequestRate::PerSecond(rate),
        RateSource::FileName,
    )
}

fn spec() -> Spec {
    let mut s = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    });
    s.min_requests = 100;
    s
}

fn kinds(r: &SweepReport, file: &str) -> Vec<LintKind> {
    r.lints
        .iter()
        .filter(|l| l.file.as_deref() == Some(file))
        .map(|l| l.kind)
        .collect()
}

// ---------------------------------------------------------------- interpolation and capacity

#[test]
fn interpolation() {
    let check = |r0, a0, r1, a1, obj, want: Option<f64>| {
        let got = interpolate_crossing(r0, a0, r1, a1, obj);
        match (got, want) {
            (Some(g), Some(w)) => assert!(close(g, w), "{r0},{a0} -> {r1},{a1}: {g} vs {w}"),
            (g, w) => assert_eq!(g, w, "{r0},{a0} -> {r1},{a1}"),
        }
    };
    check(6.0, 1.0, 8.0, 0.975, 0.99, Some(6.8));
    check(6.0, 0.995, 8.0, 0.98, 0.99, Some(6.0 + 2.0 / 3.0));
    check(6.0, 0.99, 8.0, 0.5, 0.99, Some(6.0)); // passing exactly at the objective
    check(4.0, 1.0, 6.0, 0.0, 0.5, Some(5.0));
    check(6.0, 0.98, 8.0, 0.97, 0.99, None); // both fail
    check(6.0, 1.0, 8.0, 0.995, 0.99, None); // both pass
    check(6.0, 0.99, 8.0, 0.99, 0.99, None); // flat at the objective: no failure
    check(f64::NAN, 1.0, 8.0, 0.5, 0.99, None);
    check(6.0, 1.0, 6.0, 0.5, 0.99, Some(6.0)); // two files at one rate
}

#[test]
fn capacity_with_a_crossing() {
    let c = capacity(
        &[
            (1.0, 1.0),
            (2.0, 1.0),
            (4.0, 0.995),
            (6.0, 0.99),
            (8.0, 0.96),
        ],
        0.99,
    );
    assert_eq!(c.kind, CapacityKind::Crossing);
    assert_eq!(c.passing_rps, Some(6.0));
    assert_eq!(c.first_failing_rps, Some(8.0));
    assert_close(c.crossing_rps, 6.0, "crossing");
    assert!(c.rises_again_rps.is_empty());
    assert!(c.message.contains("linear interpolation"), "{}", c.message);
    assert_eq!(c.figure(), Some((6.0, Bound::Estimate)));
}

#[test]
fn capacity_reads_unsorted_input_in_rate_order() {
    let c = capacity(&[(8.0, 0.9), (2.0, 1.0), (6.0, 1.0), (4.0, 1.0)], 0.99);
    assert_eq!((c.passing_rps, c.first_failing_rps), (Some(6.0), Some(8.0)));
    assert_close(c.crossing_rps, 6.0 + 2.0 * 0.01 / 0.1, "crossing");
}

#[test]
fn capacity_when_every_rate_passes() {
    let c = capacity(&[(1.0, 1.0), (2.0, 0.999), (4.0, 0.995)], 0.99);
    assert_eq!(c.kind, CapacityKind::AllPass);
    assert_eq!(c.passing_rps, Some(4.0));
    assert_eq!(c.first_failing_rps, None);
    assert_eq!(c.crossing_rps, None);
    assert!(c.message.contains("at least 4 req/s"), "{}", c.message);
    assert_eq!(c.figure(), Some((4.0, Bound::AtLeast)));
}

#[test]
fn capacity_when_no_rate_passes() {
    let c = capacity(&[(2.0, 0.95), (4.0, 0.9)], 0.99);
    assert_eq!(c.kind, CapacityKind::NonePass);
    assert_eq!(c.passing_rps, None);
    assert_eq!(c.first_failing_rps, Some(2.0));
    assert_eq!(c.crossing_rps, None);
    assert!(c.message.contains("below 2 req/s"), "{}", c.message);
    assert_eq!(c.figure(), Some((2.0, Bound::AtMost)));
}

#[test]
fn capacity_of_nothing() {
    assert_eq!(capacity(&[], 0.99).kind, CapacityKind::NoData);
    assert_eq!(capacity(&[], 0.99).figure(), None);
    assert_eq!(
        capacity(&[(f64::NAN, 1.0)], 0.99).kind,
        CapacityKind::NoData
    );
}

#[test]
fn capacity_of_a_non_monotone_curve_stays_below_the_first_failure() {
    let c = capacity(
        &[
            (2.0, 1.0),
            (4.0, 0.995),
            (6.0, 0.97),
            (8.0, 0.992),
            (10.0, 0.95),
            (12.0, 0.96),
        ],
        0.99,
    );
    assert_eq!(c.kind, CapacityKind::Crossing);
    assert_eq!(c.passing_rps, Some(4.0));
    assert_eq!(c.first_failing_rps, Some(6.0));
    assert_eq!(c.rises_again_rps, vec![8.0, 12.0]);
    assert_eq!(c.passes_again_rps, vec![8.0]);
    assert!(c.message.contains("not monotone"), "{}", c.message);
    assert!(
        c.message.contains("rises again at 8, 12 req/s"),
        "{}",
        c.message
    );
    assert!(c.message.contains("again at 8 req/s"), "{}", c.message);
}

#[test]
fn capacity_ignores_wiggles_while_every_rate_passes() {
    let c = capacity(&[(2.0, 0.995), (4.0, 0.999), (6.0, 0.98)], 0.99);
    assert!(c.rises_again_rps.is_empty());
    assert_eq!(c.passing_rps, Some(4.0));
}

#[test]
fn capacity_below_the_lowest_rate_with_a_later_pass() {
    let c = capacity(&[(2.0, 0.98), (4.0, 0.995)], 0.99);
    assert_eq!(c.kind, CapacityKind::NonePass);
    assert_eq!(c.passes_again_rps, vec![4.0]);
}

// ---------------------------------------------------------------- throughput knee

#[test]
fn throughput_knee_cases() {
    let check =
        |pts: &[(f64, f64)], want: Option<f64>| assert_eq!(throughput_knee(pts), want, "{pts:?}");
    check(
        &[(1.0, 1.0), (2.0, 2.0), (4.0, 3.9), (6.0, 3.99)],
        Some(4.0),
    );
    check(&[(1.0, 1.0), (2.0, 2.0), (4.0, 2.05)], Some(2.0));
    check(&[(1.0, 1.0), (2.0, 2.0), (4.0, 1.8)], Some(2.0)); // falling throughput
    check(&[(1.0, 1.0), (2.0, 2.0), (4.0, 4.0)], None); // still growing
    check(&[(1.0, 1.0)], None);
    check(&[], None);
    check(&[(4.0, 3.9), (1.0, 1.0), (6.0, 3.9), (2.0, 2.0)], Some(4.0)); // unsorted
    check(&[(2.0, 2.0), (2.0, 1.0), (4.0, 4.0)], None); // same rate twice: skipped
}

// ---------------------------------------------------------------- provisioning

#[test]
fn replicas_needed_cases() {
    let check = |peak: f64, cap: f64, want: Option<u64>| {
        assert_eq!(
            replicas_needed(peak, cap),
            want,
            "peak {peak}, capacity {cap}"
        )
    };
    check(40.0, 6.0, Some(8)); // ceil(6.67) = 7 carry the peak, + 1 spare
    check(36.0, 6.0, Some(7)); // exactly 6 carry it
    check(6.0, 6.0, Some(2));
    check(0.5, 6.0, Some(2));
    check(0.0, 6.0, Some(1));
    check(1.1, 0.1, Some(12)); // 1.1 / 0.1 = 11.000000000000002 in floats
    check(0.3, 0.1, Some(4));
    check(10.0, 0.0, None);
    check(10.0, -1.0, None);
    check(10.0, f64::NAN, None);
    check(f64::INFINITY, 1.0, None);
    check(-1.0, 1.0, None);
}

#[test]
fn per_gpu_goodput_cases() {
    assert_eq!(per_gpu_goodput(6.0, 2), Some(3.0));
    assert_eq!(per_gpu_goodput(6.0, 8), Some(0.75));
    assert_eq!(per_gpu_goodput(6.0, 0), None);
    assert_eq!(per_gpu_goodput(f64::NAN, 2), None);
}

#[test]
fn provisioning_follows_the_capacity_bound() {
    let all_pass = capacity(&[(2.0, 1.0), (4.0, 1.0)], 0.99);
    let p = provision(&all_pass, Some(40.0), Some(4));
    assert_eq!(p.replicas, Some(11));
    assert_eq!(p.replicas_bound, Bound::AtMost);
    assert_eq!(p.gpus, Some(44));
    assert_eq!(p.per_gpu_goodput_rps, Some(1.0));
    assert_eq!(p.per_gpu_goodput_bound, Bound::AtLeast);
    assert!(p.message.contains("at most 11 replicas"), "{}", p.message);

    let none_pass = capacity(&[(2.0, 0.5)], 0.99);
    let p = provision(&none_pass, Some(40.0), None);
    assert_eq!(p.replicas, Some(21));
    assert_eq!(p.replicas_bound, Bound::AtLeast);
    assert!(p.message.contains("at least 21 replicas"), "{}", p.message);

    let p = provision(&capacity(&[], 0.99), Some(40.0), Some(2));
    assert_eq!(
        (p.replicas, p.gpus, p.per_gpu_goodput_rps),
        (None, None, None)
    );
    assert!(p.message.contains("cannot be counted"), "{}", p.message);
}

// ---------------------------------------------------------------- rates

#[test]
fn rates_from_file_names() {
    let check = |name: &str, want: Option<f64>| {
        assert_eq!(
            rate_from_name(name),
            want.map(RequestRate::PerSecond),
            "{name}"
        )
    };
    check("sweep_8.json", Some(8.0));
    check("rate-2.5.json", Some(2.5));
    check("qps12.jsonl", Some(12.0));
    check("results/run_rate=0.5.json", Some(0.5));
    check("llama-3-70b_rate4.json", Some(4.0));
    check("llama70b_4rps.json", Some(4.0));
    check("bench_16qps.json", Some(16.0));
    check("6.json", Some(6.0));
    check("llama70b_6.json.gz", Some(6.0));
    check("results.json", None);
    check("generate.json", None);
    check("2024-05-01.json", None);
    check("rate_0.json", None);
    check("llama70b.json", None);
    assert_eq!(
        rate_from_name("sweep_inf.json"),
        Some(RequestRate::Infinite)
    );
}

fn loaded(name: &str, meta: RunMeta) -> Loaded {
    let mut l = Loaded {
        table: table(4.0, 20, 0, 0),
        meta,
        ..Loaded::default()
    };
    l.provenance.name = name.to_string();
    l
}

#[test]
fn the_rate_comes_from_typing_then_the_file_then_its_name() {
    let with_rate = RunMeta {
        request_rate: Some(RequestRate::PerSecond(5.0)),
        ..RunMeta::default()
    };
    let check = |input: SweepInput, rate: RequestRate, source: RateSource| {
        let p = SweepPoint::from_input(input).expect("a rate");
        assert_eq!((p.rate, p.rate_source), (rate, source));
    };
    check(
        SweepInput {
            loaded: loaded("sweep_8.json", with_rate.clone()),
            rate_override: Some(RequestRate::PerSecond(7.0)),
        },
        RequestRate::PerSecond(7.0),
        RateSource::Typed,
    );
    check(
        SweepInput {
            loaded: loaded("sweep_8.json", with_rate),
            rate_override: None,
        },
        RequestRate::PerSecond(5.0),
        RateSource::ResultFile,
    );
    check(
        SweepInput {
            loaded: loaded("sweep_8.json", RunMeta::default()),
            rate_override: None,
        },
        RequestRate::PerSecond(8.0),
        RateSource::FileName,
    );
}

#[test]
fn files_without_a_rate_are_all_listed() {
    let inputs = vec![
        SweepInput {
            loaded: loaded("a.json", RunMeta::default()),
            rate_override: None,
        },
        SweepInput {
            loaded: loaded("sweep_2.json", RunMeta::default()),
            rate_override: None,
        },
        SweepInput {
            loaded: loaded("b.json", RunMeta::default()),
            rate_override: Some(RequestRate::PerSecond(0.0)),
        },
    ];
    let errors = sweep_points(inputs).expect_err("two files lack a usable rate");
    let files: Vec<&str> = errors.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, ["a.json", "b.json"]);
    assert!(errors[0].to_string().contains("--rate FILE=RATE"));
    assert!(errors[0].message.contains("the file states none"));
    // A rate the file states but that is not positive is said as such.
    let zero = RunMeta {
        request_rate: Some(RequestRate::PerSecond(0.0)),
        ..RunMeta::default()
    };
    let errors = sweep_points(vec![SweepInput {
        loaded: loaded("c.json", zero),
        rate_override: None,
    }])
    .expect_err("no usable rate");
    assert!(
        errors[0]
            .message
            .contains("the file's request_rate, 0 req/s, is not a positive rate"),
        "{}",
        errors[0]
    );
}

// ---------------------------------------------------------------- the sweep

#[test]
fn attainment_counts_failures_as_attempted_and_bad() {
    // 1 slow, 2 failed of 100: 97 good of 100 attempted, 97 of 98 completed.
    let r = sweep(&[point(2.0, 100, 1, 2)], &spec());
    let p = &r.curves[0].points[0];
    assert_eq!(
        (p.attempted, p.completed, p.failed, p.good),
        (100, 98, 2, 97)
    );
    assert_close(p.attainment, 0.97, "attainment");
    assert_close(p.attainment_of_completed, 97.0 / 98.0, "of completed");
    let (lo, hi) = p.attainment_ci95.expect("an interval");
    assert!(lo < 0.97 && hi > 0.97);
}

#[test]
fn throughput_and_goodput_are_per_second_of_the_run() {
    // 100 requests sent 0.5 s apart: the span is 49.5 s + the last request's E2E.
    let pt = point(2.0, 100, 10, 0);
    let span = 49.5 + pt.table.e2e_ms[99] / 1000.0;
    let r = sweep(&[pt], &spec());
    let p = &r.curves[0].points[0];
    assert_close(p.throughput_rps, 100.0 / span, "throughput");
    assert_close(p.goodput_rps, 90.0 / span, "goodput");
    assert_close(
        p.percentile(slo_core::spec::Indicator::Ttft, 50.0),
        100.0,
        "p50 TTFT",
    );
    assert_close(
        p.percentile(slo_core::spec::Indicator::Tpot, 99.0),
        20.0,
        "p99 TPOT",
    );
}

#[test]
fn sweep_finds_the_crossing_and_sorts_by_rate() {
    let points = [
        point(8.0, 200, 6, 0),
        point(2.0, 200, 0, 0),
        point(4.0, 200, 0, 0),
        point(6.0, 200, 1, 0),
    ];
    let r = sweep(&points, &spec());
    let rates: Vec<f64> = r.points.iter().map(|p| p.rate_rps).collect();
    assert_eq!(rates, [2.0, 4.0, 6.0, 8.0]);
    assert_eq!(r.points[0].index, 1);
    assert_eq!(r.capacity.kind, CapacityKind::Crossing);
    assert_eq!(r.capacity.passing_rps, Some(6.0));
    assert_eq!(r.capacity.first_failing_rps, Some(8.0));
    // 99.5 % at 6, 97 % at 8.
    assert_close(
        r.capacity.crossing_rps,
        6.0 + 2.0 * 0.005 / 0.025,
        "crossing",
    );
    assert_eq!(r.default_scale_rate(), Some(8.0));
    assert_eq!(r.nearest_point(7.1), Some(0));
}

#[test]
fn evaluate_sweep_reuses_preparation_after_a_target_change() {
    let points = [point(2.0, 200, 0, 0), point(4.0, 200, 3, 0)];
    let s = spec();
    let prepared = prepare_sweep(&points, &s);
    let strict = evaluate_sweep(&points, &prepared, &s);
    let loose = evaluate_sweep(&points, &prepared, &scaled_spec(&s, 2.0));
    assert_eq!(strict.capacity.kind, CapacityKind::Crossing);
    assert_eq!(loose.capacity.kind, CapacityKind::AllPass);
    assert_eq!(strict, sweep(&points, &s));
}

fn two_class_spec() -> Spec {
    let mut s = spec();
    let strict = Targets {
        ttft: Some(TtftTarget::Fixed { ms: 200.0 }),
        ..Targets::default()
    };
    s.classes = vec![
        ClassSpec {
            name: "chat".into(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".into(),
                value: "chat".into(),
            },
            targets: vec![strict],
        },
        ClassSpec {
            name: "batch".into(),
            description: String::new(),
            rule: ClassRule::Default,
            targets: vec![Targets {
                e2e_ms: Some(10_000.0),
                ..Targets::default()
            }],
        },
    ];
    s
}

/// 100 chat requests (the first `slow_chat` at 300 ms TTFT) and 100 batch requests.
fn mixed(rate: f64, slow_chat: usize) -> SweepPoint {
    let mut t = RequestTable::default();
    for k in 0..200 {
        let class = if k % 2 == 0 { "chat" } else { "batch" };
        let slow = class == "chat" && k / 2 < slow_chat;
        let mut row = ok(if slow { 300.0 } else { 100.0 }, 20.0, k as f64 / rate);
        row.labels = vec![("class".into(), class.into())];
        t.push(row, 0, k as u32 + 2, "m");
    }
    SweepPoint::new(
        &format!("mixed_{rate}.json"),
        t,
        RunMeta::default(),
        RequestRate::PerSecond(rate),
        RateSource::FileName,
    )
}

#[test]
fn per_class_curves_and_the_binding_class() {
    let r = sweep(
        &[mixed(2.0, 0), mixed(4.0, 0), mixed(6.0, 5)],
        &two_class_spec(),
    );
    let names: Vec<Option<&str>> = r.curves.iter().map(|c| c.class.as_deref()).collect();
    assert_eq!(names, [None, Some("chat"), Some("batch")]);
    let chat = &r.curves[1];
    assert_close(chat.points[2].attainment, 0.95, "chat at 6 req/s");
    assert_eq!(chat.capacity.passing_rps, Some(4.0));
    assert_eq!(r.curves[2].capacity.kind, CapacityKind::AllPass);
    // Overall, 195 of 200 is 97.5 %: it fails too, but the chat class is what binds.
    assert_eq!(r.binding_class.as_deref(), Some("chat"));
    assert_eq!(r.capacity, chat.capacity);
}

#[test]
fn throughput_view_compares_with_slo_capacity() {
    // Throughput levels off at 3 req/s (durations stretched past 3 req/s); SLO capacity 2.
    let mut points = Vec::new();
    for (rate, thr, slow) in [
        (1.0, 1.0, 0),
        (2.0, 2.0, 0),
        (3.0, 3.0, 10),
        (4.0, 3.02, 50),
    ] {
        let mut p = point(rate, 100, slow, 0);
        // No start times: the duration stated by the file decides the throughput.
        p.table.start_s.iter_mut().for_each(|s| *s = f64::NAN);
        p.meta.duration_s = Some(100.0 / thr);
        p = SweepPoint::new(&p.name, p.table, p.meta, p.rate, p.rate_source);
        points.push(p);
    }
    let r = sweep(&points, &spec());
    assert_eq!(r.capacity.passing_rps, Some(2.0));
    let t = &r.throughput;
    assert_eq!(t.knee_rps, Some(3.0));
    assert!(t.levelled_off);
    assert_close(t.max_throughput_rps, 3.02, "max throughput");
    assert_close(t.overstatement, 1.51, "overstatement");
    assert_eq!(t.overstatement_bound, Bound::Estimate);
    assert!(
        t.message.contains("overstates the SLO capacity by 1.5×"),
        "{}",
        t.message
    );
}

#[test]
fn closed_loop_points_are_placed_by_achieved_rate() {
    let mut p = point(3.0, 100, 0, 0);
    let span = 33.0 + p.table.e2e_ms[99] / 1000.0;
    p.rate = RequestRate::Infinite;
    p.meta.max_concurrency = Some(8);
    p.name = "conc8.json".into();
    let r = sweep(&[point(1.0, 100, 0, 0), p], &spec());
    let placed = &r.points[1];
    assert!(placed.closed_loop);
    assert_close(Some(placed.rate_rps), 100.0 / span, "achieved rate");
    let lint = r
        .lints
        .iter()
        .find(|l| l.kind == LintKind::ClosedLoop)
        .expect("a closed-loop lint");
    assert_eq!(lint.file.as_deref(), Some("conc8.json"));
    assert!(
        lint.message.contains("max concurrency 8"),
        "{}",
        lint.message
    );
    assert!(
        lint.message.contains("placed at its achieved rate"),
        "{}",
        lint.message
    );
    // Closed-loop points are not part of the throughput knee.
    assert_eq!(
        r.throughput.max_throughput_rps,
        r.curves[0].points[0].throughput_rps
    );
}

#[test]
fn a_closed_loop_point_without_duration_is_left_out() {
    let mut t = RequestTable::default();
    t.push(ok(100.0, 20.0, 0.0), 0, 2, "x");
    t.start_s[0] = f64::NAN;
    let p = SweepPoint::new(
        "inf.json",
        t,
        RunMeta::default(),
        RequestRate::Infinite,
        RateSource::FileName,
    );
    let r = sweep(&[p, point(1.0, 100, 0, 0)], &spec());
    assert_eq!(r.points.len(), 1);
    assert_eq!(kinds(&r, "inf.json"), [LintKind::Unplaced]);
}

// ---------------------------------------------------------------- lints

#[test]
fn lint_closed_loop_from_max_concurrency_at_a_finite_rate() {
    let mut p = point(2.0, 100, 0, 0);
    p.meta.max_concurrency = Some(16);
    let r = sweep(&[p], &spec());
    assert_eq!(kinds(&r, "sweep_2.json"), [LintKind::ClosedLoop]);
    assert!(r.lints[0].message.contains("hides queueing"));
}

#[test]
fn lint_burstiness() {
    for (b, words) in [(0.5, "burstier"), (2.0, "smoother")] {
        let mut p = point(2.0, 100, 0, 0);
        p.meta.burstiness = Some(b);
        let r = sweep(&[p], &spec());
        assert_eq!(kinds(&r, "sweep_2.json"), [LintKind::Burstiness]);
        assert!(r.lints[0].message.contains(words), "{}", r.lints[0].message);
    }
    let mut p = point(2.0, 100, 0, 0);
    p.meta.burstiness = Some(1.0);
    assert!(sweep(&[p], &spec()).lints.is_empty());
}

#[test]
fn lint_fixed_lengths() {
    let check = |input: Option<f64>, output: Option<f64>, want: Option<&str>| {
        // Two failed requests, whose output length (none) must not matter.
        let mut p = point(2.0, 100, 0, 2);
        if let Some(i) = input {
            p.table.input_tokens.iter_mut().for_each(|x| *x = i as u32);
        }
        if let Some(o) = output {
            p.table
                .output_tokens
                .iter_mut()
                .skip(2)
                .for_each(|x| *x = o as u32);
        }
        let r = sweep(&[p], &spec());
        match want {
            Some(words) => {
                assert_eq!(kinds(&r, "sweep_2.json"), [LintKind::FixedLength]);
                assert!(r.lints[0].message.contains(words), "{}", r.lints[0].message);
                assert!(r.lints[0].message.contains("fixed-length benchmark"));
            }
            None => assert!(r.lints.is_empty(), "{:?}", r.lints),
        }
    };
    check(
        Some(2000.0),
        None,
        Some("all 100 requests have 2000 input tokens"),
    );
    check(
        None,
        Some(300.0),
        Some("all 98 completed requests have 300 output tokens"),
    );
    check(
        Some(2000.0),
        Some(300.0),
        Some("2000 input and 300 output tokens"),
    );
    check(None, None, None);
}

#[test]
fn lint_client_saturated() {
    // Offered 4 req/s, but 1000 requests went out at 2 req/s.
    let mut p = point(2.0, 1000, 0, 0);
    p.rate = RequestRate::PerSecond(4.0);
    p.name = "sweep_4.json".into();
    let r = sweep(&[p], &spec());
    assert_eq!(kinds(&r, "sweep_4.json"), [LintKind::ClientSaturated]);
    assert!(
        r.lints[0].message.contains("sent at 2 req/s"),
        "{}",
        r.lints[0].message
    );
    // 3.9 of 4 with 1000 Poisson arrivals is within chance.
    let mut p = point(3.9, 1000, 0, 0);
    p.rate = RequestRate::PerSecond(4.0);
    assert!(sweep(&[p], &spec()).lints.is_empty());
}

#[test]
fn lint_few_requests() {
    let r = sweep(&[point(2.0, 50, 0, 0)], &spec());
    assert_eq!(kinds(&r, "sweep_2.json"), [LintKind::FewRequests]);
    assert!(r.lints[0].message.contains("fewer than the spec's 100"));
}

#[test]
fn lint_failures_the_file_summary_drops() {
    let mut p = point(2.0, 100, 0, 3);
    p.meta.failed = Some(3);
    p.meta.summary.insert("request_goodput".into(), 1.9);
    let r = sweep(&[p], &spec());
    assert_eq!(kinds(&r, "sweep_2.json"), [LintKind::HiddenFailures]);
    let m = &r.lints[0].message;
    assert!(m.contains("3 of 100 attempted requests failed"), "{m}");
    assert!(m.contains("request_goodput"), "{m}");
    assert!(
        m.contains("attainment 97 % over attempted, 100 % over completed"),
        "{m}"
    );
}

#[test]
fn lint_failures_counted_by_the_file_but_missing_from_its_rows() {
    let mut p = point(2.0, 100, 0, 0);
    p.meta.failed = Some(4);
    let r = sweep(&[p], &spec());
    assert_eq!(kinds(&r, "sweep_2.json"), [LintKind::MissingFailures]);
    assert!(r.lints[0]
        .message
        .contains("only 0 failed requests could be read"));
}

#[test]
fn lint_typed_rate_over_the_files_own() {
    let meta = RunMeta {
        request_rate: Some(RequestRate::PerSecond(5.0)),
        ..RunMeta::default()
    };
    let mut l = loaded("x.json", meta);
    l.table = table(4.0, 100, 0, 0);
    let p = SweepPoint::from_input(SweepInput {
        loaded: l,
        rate_override: Some(RequestRate::PerSecond(4.0)),
    })
    .expect("typed");
    let r = sweep(&[p], &spec());
    assert_eq!(kinds(&r, "x.json"), [LintKind::RateOverridden]);
    assert!(r.lints[0].message.contains("says its rate is 5 req/s"));
}

#[test]
fn lint_duplicate_rate() {
    let mut a = point(2.0, 100, 0, 0);
    a.name = "a.json".into();
    let mut b = point(2.0, 100, 0, 0);
    b.name = "b.json".into();
    let r = sweep(&[b, a], &spec());
    assert_eq!(kinds(&r, "b.json"), [LintKind::DuplicateRate]);
    assert_eq!(r.points[0].name, "a.json");
}

#[test]
fn a_clean_point_has_no_lints() {
    let mut p = point(2.0, 100, 0, 0);
    p.meta.burstiness = Some(1.0);
    p.meta.failed = Some(0);
    assert!(sweep(&[p], &spec()).lints.is_empty());
}

// ---------------------------------------------------------------- SLO-scale curve

#[test]
fn scale_curve_multiplies_every_target() {
    // TTFT 100..=1000 ms in steps of 100, TPOT 20 ms: at 500 ms half pass.
    let mut t = RequestTable::default();
    for k in 1..=10 {
        t.push(ok(100.0 * k as f64, 20.0, k as f64), 0, k + 1, "s");
    }
    let p = SweepPoint::new(
        "sweep_8.json",
        t,
        RunMeta::default(),
        RequestRate::PerSecond(8.0),
        RateSource::FileName,
    );
    let mut s = spec();
    s.objective = 0.9;
    let c = scale_curve(&p, &s, &SCALE_FACTORS);
    let got: Vec<(f64, Option<f64>)> = c.points.iter().map(|x| (x.factor, x.attainment)).collect();
    let want = [
        (0.5, 0.2),
        (0.75, 0.3),
        (1.0, 0.5),
        (1.25, 0.6),
        (1.5, 0.7),
        (1.75, 0.8),
        (2.0, 1.0), // 1000 ms and TPOT 20 <= 100 ms
        (2.25, 1.0),
        (2.5, 1.0),
        (2.75, 1.0),
        (3.0, 1.0),
    ];
    assert_eq!(got.len(), want.len());
    for ((f, a), (wf, wa)) in got.iter().zip(want) {
        assert_eq!(*f, wf);
        assert_close(*a, wa, &format!("factor {f}"));
    }
    assert_eq!(c.passing_from_factor, Some(2.0));
    assert_eq!(c.rate_rps, Some(8.0));
    assert!(
        c.message.contains("multiplied by 2 (looser)"),
        "{}",
        c.message
    );
}

#[test]
fn scale_curve_skips_bad_factors_and_says_when_nothing_passes() {
    let p = point(2.0, 10, 10, 0); // every request at 900 ms
    let c = scale_curve(&p, &spec(), &[0.0, -1.0, f64::NAN, 1.0, 1.5]);
    assert_eq!(c.points.len(), 2);
    assert_eq!(c.passing_from_factor, None);
    assert!(
        c.message
            .contains("not met even with every target multiplied by 1.5"),
        "{}",
        c.message
    );
}

// ---------------------------------------------------------------- end to end: vLLM fixtures

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sweep");

#[test]
fn vllm_fixture_sweep_matches_the_generator() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{FIXTURES}/expected.json")).expect("expected.json"),
    )
    .expect("json");
    let files = expected["files"].as_array().expect("files");
    let mut inputs = Vec::new();
    for f in files {
        let name = f["file"].as_str().expect("name");
        let bytes = std::fs::read(format!("{FIXTURES}/{name}")).expect("fixture");
        let loaded = ingest::parse(name, &bytes, &Default::default());
        assert_eq!(loaded.fatal, None, "{name} could not be read");
        assert_eq!(loaded.error_count, 0, "{name}: {:?}", loaded.errors);
        inputs.push(SweepInput {
            loaded,
            rate_override: None,
        });
    }
    let points = sweep_points(inputs).expect("every fixture states its rate");
    assert!(points
        .iter()
        .all(|p| p.rate_source == RateSource::ResultFile));
    let mut s = spec();
    s.min_requests = 200;
    let r = sweep(&points, &s);
    let overall = &r.curves[0];
    assert_eq!(overall.points.len(), files.len());
    for (p, f) in overall.points.iter().zip(files) {
        let what = p.file.as_str();
        assert_eq!(Some(what), f["file"].as_str());
        assert_close(
            Some(p.rate_rps),
            f["rate_rps"].as_f64().unwrap_or(f64::NAN),
            what,
        );
        assert_eq!(
            Some(p.attempted),
            f["attempted"].as_u64(),
            "{what} attempted"
        );
        assert_eq!(
            Some(p.completed),
            f["completed"].as_u64(),
            "{what} completed"
        );
        assert_eq!(Some(p.good), f["good"].as_u64(), "{what} good");
        let num = |k: &str| f[k].as_f64().unwrap_or(f64::NAN);
        assert_close(
            p.attainment,
            num("attainment"),
            &format!("{what} attainment"),
        );
        assert_close(
            p.throughput_rps,
            num("throughput_rps"),
            &format!("{what} throughput"),
        );
        assert_close(
            p.goodput_rps,
            num("goodput_rps"),
            &format!("{what} goodput"),
        );
        for (ind, key) in [
            (slo_core::spec::Indicator::Ttft, "ttft"),
            (slo_core::spec::Indicator::Tpot, "tpot"),
            (slo_core::spec::Indicator::E2e, "e2e"),
        ] {
            for q in [50.0, 90.0, 99.0] {
                let want = f["percentiles_linear_ms"][key][format!("{q:.0}")]
                    .as_f64()
                    .unwrap_or(f64::NAN);
                assert_close(p.percentile(ind, q), want, &format!("{what} p{q} {key}"));
            }
        }
    }
    let num = |k: &str| expected[k].as_f64().unwrap_or(f64::NAN);
    assert_eq!(r.capacity.kind, CapacityKind::Crossing);
    assert_close(r.capacity.passing_rps, num("capacity_rps"), "capacity");
    assert_close(
        r.capacity.first_failing_rps,
        num("first_failing_rps"),
        "first failing",
    );
    assert_close(r.capacity.crossing_rps, num("crossing_rps"), "crossing");
    assert_close(r.throughput.knee_rps, num("throughput_knee_rps"), "knee");
    assert_close(
        r.throughput.max_throughput_rps,
        num("max_throughput_rps"),
        "max throughput",
    );
    // The files at 10 and 12 req/s state failures that vLLM's own summary leaves out.
    let hidden: Vec<&str> = r
        .lints
        .iter()
        .filter(|l| l.kind == LintKind::HiddenFailures)
        .filter_map(|l| l.file.as_deref())
        .collect();
    assert_eq!(hidden, ["sweep_10.json", "sweep_12.json"]);
    assert!(
        r.lints.iter().all(|l| l.kind == LintKind::HiddenFailures),
        "{:?}",
        r.lints
    );
    // Scale curve at the first failing rate: 97.5 % as written, passing once loosened.
    let at = r
        .nearest_point(r.default_scale_rate().unwrap_or(f64::NAN))
        .expect("a point");
    let c = scale_curve(&points[at], &s, &SCALE_FACTORS);
    assert_eq!(c.rate_rps, Some(8.0));
    let as_written = c
        .points
        .iter()
        .find(|x| x.factor == 1.0)
        .and_then(|x| x.attainment);
    assert_close(as_written, 0.975, "attainment at 8 req/s as written");
    assert!(c.passing_from_factor.is_some_and(|f| f > 1.0));
}

#[test]
fn two_files_at_one_rate_pass_it_only_together_whatever_their_order() {
    // At 8 req/s one file fails (97.5 %) and one passes (100 %): 8 does not hold the SLO, in
    // whichever order the files came (their names decide it).
    let passing_first = [(1.0, 1.0), (6.0, 1.0), (8.0, 1.0), (8.0, 0.975)];
    let failing_first = [(1.0, 1.0), (6.0, 1.0), (8.0, 0.975), (8.0, 1.0)];
    for curve in [passing_first, failing_first] {
        let c = slo_core::sweep::capacity(&curve, 0.99);
        assert_eq!(
            (c.passing_rps, c.first_failing_rps),
            (Some(6.0), Some(8.0)),
            "{curve:?}: {}",
            c.message
        );
    }
}
