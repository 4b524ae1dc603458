//! The engine against hand calculations: the guide's worked example and table-driven edge cases.

use slo_core::evaluate::{judge, prepare, report, Duration, Outcome, Report};
use slo_core::ingest::{parse, IngestOptions};
use slo_core::quantile::Method;
use slo_core::spec::{CancelPolicy, ClassRule, ClassSpec, Indicator, Spec, Targets, TtftTarget};
use slo_core::table::{RequestTable, Row, Status};

const WORKED: &str = include_str!("fixtures/worked_example.csv");

fn close(got: Option<f64>, want: f64) -> bool {
    got.is_some_and(|g| (g - want).abs() <= 1e-9 * want.abs().max(1.0))
}

fn chat_targets() -> Targets {
    Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    }
}

fn worked(method: Method) -> Report {
    let loaded = parse(
        "worked_example.csv",
        WORKED.as_bytes(),
        &IngestOptions::default(),
    );
    let mut spec = Spec::single(chat_targets());
    spec.percentiles = vec![90.0];
    spec.method = method;
    report(&loaded.table, &spec, &Duration::unknown("not needed"))
}

fn pct(r: &Report, ind: Indicator) -> &slo_core::evaluate::PercentileValue {
    &r.overall
        .indicators
        .iter()
        .find(|i| i.indicator == ind)
        .expect("indicator")
        .stats
        .percentiles[0]
}

#[test]
fn worked_example_matches_the_guide() {
    let r = worked(Method::Linear);
    let o = &r.overall;
    assert_eq!((o.attempted, o.good), (10, 8));
    assert_eq!(o.attainment, Some(0.8));
    // Hand calculation: sorted TTFT 180 220 240 260 300 310 350 390 410 640; linear p90 sits at
    // index 8.1: 410 + 0.1 * (640 - 410) = 433. TPOT = (E2E - TTFT) / 100 per request; sorted
    // 38.3 ... 49.3 66: 49.3 + 0.1 * (66 - 49.3) = 50.97.
    let ttft = pct(&r, Indicator::Ttft);
    assert!(close(ttft.linear, 433.0), "{:?}", ttft.linear);
    assert!(close(ttft.nearest, 410.0));
    assert!(close(ttft.nearest_rank, 410.0));
    let tpot = pct(&r, Indicator::Tpot);
    assert!(close(tpot.linear, 50.97), "{:?}", tpot.linear);
    assert!(close(tpot.nearest, 49.3));
    // Requests 5 and 6 fail different targets.
    let failing: Vec<(String, Vec<Indicator>)> = r
        .failing
        .iter()
        .map(|f| (f.id.clone(), f.missed.clone()))
        .collect();
    assert_eq!(
        failing,
        vec![
            ("5".to_string(), vec![Indicator::Ttft]),
            ("6".to_string(), vec![Indicator::Tpot])
        ]
    );
    let labels: Vec<(&str, u64)> = o
        .failures
        .iter()
        .map(|f| (f.label.as_str(), f.count))
        .collect();
    assert_eq!(labels, vec![("TPOT only", 1), ("TTFT only", 1)]);
    // By linear, TPOT p90 fails and the verdict flips with the method.
    let tpot_report = o
        .indicators
        .iter()
        .find(|i| i.indicator == Indicator::Tpot)
        .expect("tpot");
    assert_eq!(tpot_report.verdicts[0].pass, Some(false));
    assert!(tpot_report.verdicts[0].flipped);
}

#[test]
fn nearest_rank_makes_both_p90s_pass_and_the_report_says_joint_is_lower() {
    let r = worked(Method::NearestRank);
    assert_eq!(
        r.overall.notes,
        vec![
            "p90 TTFT and p90 TPOT both pass, yet only 80 % of requests met every target at once"
                .to_string()
        ]
    );
}

fn table(rows: &[Row]) -> RequestTable {
    let mut t = RequestTable::default();
    for (k, r) in rows.iter().enumerate() {
        t.push(r.clone(), 0, k as u32 + 2, "t");
    }
    t
}

fn ok(ttft: f64, e2e: f64, tokens: f64) -> Row {
    Row {
        ttft_ms: Some(ttft),
        e2e_ms: Some(e2e),
        output_tokens: Some(tokens),
        ..Row::default()
    }
}

fn with(row: Row, status: Status) -> Row {
    Row { status, ..row }
}

fn overall(rows: &[Row], targets: Targets) -> slo_core::evaluate::GroupReport {
    let spec = Spec::single(targets);
    report(&table(rows), &spec, &Duration::unknown("-")).overall
}

/// (case, rows, targets, want attempted, want good, want excluded)
type Case = (&'static str, Vec<Row>, Targets, u64, u64, u64);

#[test]
fn edge_cases() {
    let t = chat_targets();
    let cases: Vec<Case> = vec![
        ("one request", vec![ok(100.0, 600.0, 11.0)], t, 1, 1, 0),
        (
            "inclusive thresholds",
            vec![ok(500.0, 1000.0, 11.0)],
            t,
            1,
            1,
            0,
        ),
        ("all equal", vec![ok(100.0, 600.0, 11.0); 5], t, 5, 5, 0),
        (
            "one output token passes TPOT",
            vec![ok(100.0, 5000.0, 1.0)],
            t,
            1,
            1,
            0,
        ),
        (
            "zero output tokens passes TPOT",
            vec![ok(100.0, 100.0, 0.0)],
            t,
            1,
            1,
            0,
        ),
        (
            "all failed",
            vec![
                with(Row::default(), Status::Error),
                with(Row::default(), Status::Timeout),
            ],
            t,
            2,
            0,
            0,
        ),
        (
            "cancelled before the TTFT target is excluded",
            vec![with(
                Row {
                    e2e_ms: Some(200.0),
                    ..Row::default()
                },
                Status::Cancelled,
            )],
            t,
            0,
            0,
            1,
        ),
        (
            "cancelled after waiting past the TTFT target is a TTFT failure",
            vec![with(
                Row {
                    e2e_ms: Some(800.0),
                    ..Row::default()
                },
                Status::Cancelled,
            )],
            t,
            1,
            0,
            0,
        ),
        (
            "cancelled after a late first token is a TTFT failure",
            vec![with(
                Row {
                    ttft_ms: Some(900.0),
                    e2e_ms: Some(1000.0),
                    ..Row::default()
                },
                Status::Cancelled,
            )],
            t,
            1,
            0,
            0,
        ),
        (
            "no targets: every completed request is good",
            vec![ok(1e6, 2e6, 3.0)],
            Targets::default(),
            1,
            1,
            0,
        ),
        (
            "missing TTFT with a TTFT target is bad",
            vec![Row {
                e2e_ms: Some(1.0),
                ..Row::default()
            }],
            t,
            1,
            0,
            0,
        ),
    ];
    for (name, rows, targets, attempted, good, excluded) in cases {
        let g = overall(&rows, targets);
        assert_eq!(
            (g.attempted, g.good, g.excluded),
            (attempted, good, excluded),
            "{name}"
        );
    }
}

#[test]
fn count_as_bad_counts_every_cancellation_and_blames_ttft_only_for_a_late_one() {
    // TTFT target 500 ms. Cancelled after 200 ms (before the target), after 800 ms without a
    // first token, and after a first token at 900 ms.
    let cancelled = |ttft: Option<f64>, e2e: f64| {
        with(
            Row {
                ttft_ms: ttft,
                e2e_ms: Some(e2e),
                ..Row::default()
            },
            Status::Cancelled,
        )
    };
    let rows = [
        cancelled(None, 200.0),
        cancelled(None, 800.0),
        cancelled(Some(900.0), 1000.0),
    ];
    let mut spec = Spec::single(chat_targets());
    spec.cancellations = CancelPolicy::CountAsBad;
    let r = report(&table(&rows), &spec, &Duration::unknown("-"));
    assert_eq!((r.overall.attempted, r.overall.good), (3, 0));
    // Only the two that waited past the target are TTFT failures.
    assert_eq!(r.cancellations.counted_as_ttft_failure, 2);
    let outcomes: Vec<(Outcome, usize)> = r
        .failing
        .iter()
        .map(|f| (f.outcome, f.missed.len()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (Outcome::CancelledCounted, 0),
            (Outcome::CancelledWaiting, 1),
            (Outcome::CancelledWaiting, 1),
        ]
    );
    // Without a TTFT target no cancellation is a TTFT failure, yet each still counts as bad.
    let mut no_ttft = Spec::single(Targets {
        ttft: None,
        ..chat_targets()
    });
    no_ttft.cancellations = CancelPolicy::CountAsBad;
    let r = report(&table(&rows), &no_ttft, &Duration::unknown("-"));
    assert_eq!((r.overall.attempted, r.overall.good), (3, 0));
    assert_eq!(r.cancellations.counted_as_ttft_failure, 0);
    // And under the default policy a cell without a TTFT target leaves them all out.
    let default = Spec::single(Targets {
        ttft: None,
        ..chat_targets()
    });
    let r = report(&table(&rows), &default, &Duration::unknown("-"));
    assert_eq!((r.overall.attempted, r.overall.excluded), (0, 3));
}

#[test]
fn empty_sets_give_none_never_nan() {
    let g = overall(&[], chat_targets());
    assert_eq!(g.attainment, None);
    assert_eq!(g.attainment_ci95, None);
    assert!(g
        .indicators
        .iter()
        .all(|i| i.stats.mean.is_none() && i.stats.percentiles.iter().all(|p| p.value.is_none())));
    let all_failed = overall(&[with(Row::default(), Status::Error)], chat_targets());
    assert_eq!(all_failed.attainment, Some(0.0));
    assert_eq!(all_failed.attainment_of_completed, None);
}

#[test]
fn failures_stay_in_the_denominator_and_vllm_convention_is_reported_beside() {
    let g = overall(
        &[
            ok(100.0, 600.0, 11.0),
            ok(100.0, 600.0, 11.0),
            with(Row::default(), Status::Error),
        ],
        chat_targets(),
    );
    assert!(close(g.attainment, 2.0 / 3.0));
    assert_eq!(g.attainment_of_completed, Some(1.0));
    assert_eq!(g.failed, 1);
}

#[test]
fn per_token_ttft_target() {
    // base 200 ms + 0.1 ms per input token: 1000 tokens allow 300 ms, 5000 allow 700 ms.
    let targets = Targets {
        ttft: Some(TtftTarget::PerToken {
            base_ms: 200.0,
            per_token_ms: 0.1,
        }),
        ..Targets::default()
    };
    let rows = vec![
        Row {
            input_tokens: Some(1000.0),
            ..ok(350.0, 400.0, 2.0)
        },
        Row {
            input_tokens: Some(5000.0),
            ..ok(650.0, 700.0, 2.0)
        },
    ];
    let g = overall(&rows, targets);
    assert_eq!(g.good, 1);
    assert_eq!(g.binding, Some(Indicator::Ttft));
}

fn two_class_spec() -> Spec {
    let mut spec = Spec::single(chat_targets());
    spec.bucket_edges = vec![2000];
    spec.classes = vec![
        ClassSpec {
            name: "chat".into(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".into(),
                value: "chat".into(),
            },
            targets: vec![
                chat_targets(),
                Targets {
                    ttft: Some(TtftTarget::Fixed { ms: 2000.0 }),
                    ..chat_targets()
                },
            ],
        },
        ClassSpec {
            name: "batch".into(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".into(),
                value: "batch".into(),
            },
            targets: vec![
                Targets {
                    e2e_ms: Some(60_000.0),
                    ..Targets::default()
                };
                2
            ],
        },
        ClassSpec {
            name: "other".into(),
            description: String::new(),
            rule: ClassRule::Default,
            targets: vec![Targets::default(); 2],
        },
    ];
    spec
}

#[test]
fn classes_and_buckets_each_have_their_targets() {
    let labelled = |class: &str, input: f64, row: Row| Row {
        labels: vec![("class".into(), class.into())],
        input_tokens: Some(input),
        ..row
    };
    let rows = vec![
        labelled("chat", 100.0, ok(400.0, 1400.0, 21.0)), // chat <2k: good
        labelled("chat", 100.0, ok(900.0, 1900.0, 21.0)), // chat <2k: TTFT miss
        labelled("chat", 5000.0, ok(900.0, 1900.0, 21.0)), // chat >=2k: 2000 ms allowed, good
        labelled("batch", 5000.0, ok(9000.0, 70_000.0, 2.0)), // batch: E2E miss
    ];
    let spec = two_class_spec();
    assert!(spec.validate().is_empty());
    let r = report(&table(&rows), &spec, &Duration::known(4.0, "typed"));
    let cell = |c: &str, b: &str| {
        r.cells
            .iter()
            .find(|g| g.class.as_deref() == Some(c) && g.bucket.as_deref() == Some(b))
            .expect("cell")
    };
    assert_eq!(cell("chat", "<2k").attainment, Some(0.5));
    assert_eq!(cell("chat", "<2k").binding, Some(Indicator::Ttft));
    assert_eq!(cell("chat", ">=2k").attainment, Some(1.0));
    assert_eq!(cell("batch", ">=2k").binding, Some(Indicator::E2e));
    // A class with no requests reports nothing, not zero.
    assert_eq!(cell("other", "<2k").attempted, 0);
    assert_eq!(cell("other", "<2k").attainment, None);
    assert_eq!(r.overall.attempted, 4);
    assert_eq!(r.overall.good, 2);
    assert_eq!(r.overall.goodput_rps, Some(0.5));
    assert_eq!(
        r.classes.iter().map(|c| c.attempted).collect::<Vec<_>>(),
        vec![3, 1, 0]
    );
}

#[test]
fn judge_marks_missing_data_apart_from_slow() {
    let t = table(&[Row {
        ttft_ms: Some(100.0),
        e2e_ms: Some(900.0),
        ..Row::default()
    }]);
    let spec = Spec::single(chat_targets());
    let p = prepare(&t, &spec);
    let v = judge(&t, &p, 0, &chat_targets(), spec.cancellations);
    assert_eq!(v.outcome, Outcome::Missed);
    assert_eq!(v.missing, Indicator::Tpot.bit());
}

#[test]
fn itl_pools_gaps_checks_per_request_statistic_and_finds_hidden_stalls() {
    use slo_core::spec::{ItlStatistic, StallRule};
    // Request 1 streams 10 gaps of 40 ms with one 600 ms stall; request 2 has smooth 45 ms gaps.
    let stalled_gaps = {
        let mut g = vec![40.0; 10];
        g[5] = 600.0;
        g
    };
    let smooth = vec![45.0; 11];
    let rows = vec![
        // TPOT = (1060 - 100) / (21 - 1) = 48 ms; request 2: (595 - 100) / (12 - 1) = 45 ms.
        Row {
            itl_ms: Some(stalled_gaps.clone()),
            ..ok(100.0, 1060.0, 21.0)
        },
        Row {
            itl_ms: Some(smooth.clone()),
            ..ok(100.0, 595.0, 12.0)
        },
    ];
    let mut spec = Spec::single(Targets {
        tpot_ms: Some(50.0),
        itl_ms: Some(500.0),
        ..Targets::default()
    });
    spec.stall = Some(StallRule::AbsoluteMs { ms: 500.0 });
    let t = table(&rows);
    let r = report(&t, &spec, &Duration::unknown("-"));
    // Marginal ITL pools all 21 gaps of completed requests.
    let itl = r
        .overall
        .indicators
        .iter()
        .find(|i| i.indicator == Indicator::Itl)
        .expect("itl");
    assert_eq!(itl.stats.n, 21);
    // Request 1's worst gap (600) misses the ITL target, though its TPOT (48 ms) passes.
    assert_eq!(r.failing.len(), 1);
    assert_eq!(r.failing[0].missed, vec![Indicator::Itl]);
    assert_eq!(r.overall.hidden_stalls, 1);
    assert_eq!(r.stalled[0].max_gap_ms, 600.0);
    // With the per-request p50 of gaps as the ITL statistic, request 1 passes (median gap 40 ms).
    spec.itl_statistic = ItlStatistic::Percentile { q: 50.0 };
    assert_eq!(report(&t, &spec, &Duration::unknown("-")).overall.good, 2);
}

/// `prepare` classifies and gathers rows a block at a time (on several threads where there are
/// some). Over four blocks: "unknown length" cells are numbered in the order their first
/// requests come (batch, the default class, then chat here, unlike the classes' order), a later
/// request of the same class joins its cell, and every cell's TTFTs are its own rows', gathered
/// and sorted by hand.
#[test]
fn prepare_in_blocks_numbers_unknown_cells_by_first_request_and_keeps_every_value() {
    let n = 200_000;
    // One per block: batch, other, chat, batch again.
    let unknown_length = [30_000, 70_001, 140_000, 199_998];
    let class_of = |i: usize| match i % 3 {
        0 => "batch",
        _ if i % 1000 == 1 => "other", // the default class takes it
        _ => "chat",
    };
    let ttft_of = |i: usize| ((i * 7919) % 100_000) as f64 / 100.0;
    let mut table = RequestTable::default();
    for i in 0..n {
        let row = Row {
            status: if i % 211 == 0 {
                Status::Error
            } else {
                Status::Ok
            },
            input_tokens: (!unknown_length.contains(&i)).then_some((i % 4000) as f64),
            ttft_ms: Some(ttft_of(i)),
            e2e_ms: Some(ttft_of(i) + 2000.0),
            output_tokens: Some(101.0),
            labels: vec![("class".into(), class_of(i).into())],
            ..Row::default()
        };
        table.push(row, 0, i as u32 + 2, "blocks.csv");
    }
    let spec = two_class_spec();
    let prepared = prepare(&table, &spec);

    let keys: Vec<(usize, Option<usize>)> =
        prepared.cells.iter().map(|k| (k.class, k.bucket)).collect();
    // chat is class 0, batch 1, the default class ("other") 2; bucket 0 is under 2000 tokens.
    let known = [
        (0, Some(0)),
        (0, Some(1)),
        (1, Some(0)),
        (1, Some(1)),
        (2, Some(0)),
        (2, Some(1)),
    ];
    assert_eq!(keys[..6], known);
    assert_eq!(keys[6..], [(1, None), (2, None), (0, None)]);
    let cells: Vec<u32> = unknown_length
        .iter()
        .map(|&i| prepared.cell_of[i])
        .collect();
    assert_eq!(cells, [6, 7, 8, 6]);
    assert_eq!(prepared.cell_of[1_001], 4); // other, 1001 input tokens
    assert_eq!(prepared.unassigned, 0);

    // Each known cell: its completed requests' TTFTs, sorted here.
    let names = ["chat", "batch", "other"];
    for (cell, &(class, bucket)) in known.iter().enumerate() {
        let mut ttfts: Vec<f64> = (0..n)
            .filter(|&i| class_of(i) == names[class] && i % 211 != 0)
            .filter(|&i| {
                !unknown_length.contains(&i) && Some(usize::from(i % 4000 >= 2000)) == bucket
            })
            .map(ttft_of)
            .collect();
        ttfts.sort_by(f64::total_cmp);
        let ttft = prepared.cell_stats[cell]
            .iter()
            .find(|s| s.indicator == Indicator::Ttft)
            .expect("a TTFT statistic");
        assert_eq!(ttft.n, ttfts.len() as u64, "cell {cell}");
        assert_eq!(
            (ttft.min, ttft.max),
            (ttfts.first().copied(), ttfts.last().copied())
        );
        // numpy's linear p90: h = (n - 1) * 0.9, between the values at floor(h) and floor(h) + 1.
        let h = (ttfts.len() - 1) as f64 * 0.9;
        let lo = h.floor() as usize;
        let want = ttfts[lo] + (h - lo as f64) * (ttfts[lo + 1] - ttfts[lo]);
        let p90 = ttft.percentiles.iter().find(|p| p.q == 90.0).expect("p90");
        assert!(
            close(p90.linear, want),
            "cell {cell}: {:?} vs {want}",
            p90.linear
        );
    }
}

#[test]
fn a_cell_without_requests_has_no_sample_size_warning() {
    // Two buckets; every request is short, so the >=2k cell is empty.
    let rows: Vec<Row> = (0..3)
        .map(|_| Row {
            input_tokens: Some(100.0),
            ..ok(100.0, 600.0, 11.0)
        })
        .collect();
    let mut spec = Spec::single(chat_targets());
    spec.bucket_edges = vec![2000];
    spec.classes[0].targets = vec![chat_targets(); 2];
    let r = report(&table(&rows), &spec, &Duration::unknown("-"));
    let short = &r.cells[0];
    let long = &r.cells[1];
    assert_eq!((short.attempted, long.attempted), (3, 0));
    assert!(short
        .warnings
        .iter()
        .any(|w| w.starts_with("only 3 attempted")));
    assert!(long.warnings.is_empty(), "{:?}", long.warnings);
}
