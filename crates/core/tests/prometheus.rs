//! Prometheus histograms: hand-checked fixtures, a three-replica merge against a direct count,
//! windows and counter resets.
//!
//! Hand-checked values for `replica_a.prom` + `replica_b.prom`, model Llama (TTFT):
//!
//! | le (s)  | a  | b  | merged |
//! |---------|----|----|--------|
//! | 0.1     | 20 | 10 | 30     |
//! | 0.25    | 50 | 30 | 80     |
//! | 0.5     | 80 | 60 | 140    |
//! | 1.0     | 95 | 90 | 185    |
//! | 2.5     | 99 | 98 | 197    |
//! | +Inf    |100 |100 | 200    |
//!
//! - 500 ms is an edge: 140 / 200 = 0.7 exactly.
//! - 300 ms lies in (0.25, 0.5]: bounds 80/200 = 0.4 and 0.7; interpolated
//!   (80 + 60 · 0.05/0.25) / 200 = 92 / 200 = 0.46.
//! - 4000 ms lies above 2.5 s: only the lower bound 197 / 200 = 0.985.
//! - p90: rank 180 falls in (0.5, 1.0] (140 → 185): 0.5 + 0.5 · 40/45 = 0.94444 s.
//!   Replica a: rank 90 in (0.5, 1.0] (80 → 95): 0.5 + 0.5 · 10/15 = 0.83333 s; replica b: rank 90
//!   in (0.5, 1.0] (60 → 90): 1.0 s. Mean of the two: 0.91667 s, off by -27.78 ms (-2.94 %).
//! - p50: rank 100 in (0.25, 0.5] (80 → 140): 0.25 + 0.25 · 20/60 = 0.33333 s.
//! - p99.9: rank 199.8 is above the 2.5 s bucket (197): 2.5 s, a lower bound; so are the
//!   replicas' (ranks 99.9 above 99 and 98), and their mean is not computed.

use slo_core::prometheus::{
    analyse, fraction_at_or_under, histogram_quantile, merge, read_dump, recommend_edges, Analysis,
    Dump, FractionKind, GroupAnalysis, HistogramQuery,
};
use slo_core::spec::Indicator;

const LLAMA: &str = "meta-llama/Llama-3.1-8B-Instruct";

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/prometheus/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn dump(replica: &str, file: &str) -> Dump {
    let d = read_dump(replica, &fixture(file));
    assert!(d.errors.is_empty(), "{file}: {:?}", d.errors);
    d
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn group<'a>(a: &'a Analysis, ind: Indicator, model: &str) -> &'a GroupAnalysis {
    a.groups
        .iter()
        .find(|g| {
            g.indicator == ind
                && g.labels
                    .iter()
                    .any(|(n, v)| n == "model_name" && v == model)
        })
        .unwrap_or_else(|| panic!("no {} group for {model}", ind.label()))
}

/// One fraction: kind, value, lower and upper bound.
fn check_fraction(g: &GroupAnalysis, target_ms: f64, kind: FractionKind, want: [f64; 3]) {
    let f = g
        .fractions
        .iter()
        .find(|f| f.target_ms == target_ms)
        .unwrap_or_else(|| panic!("no fraction for {target_ms} ms"));
    let got = [f.value, f.lower, f.upper];
    assert_eq!(f.kind, kind, "{target_ms} ms");
    assert!(
        got.iter().zip(want).all(|(g, w)| close(*g, w)),
        "{target_ms} ms: got {got:?}, want {want:?}"
    );
}

fn two_replicas() -> Analysis {
    let query = HistogramQuery {
        targets_ms: vec![
            (Indicator::Ttft, 300.0),
            (Indicator::Ttft, 500.0),
            (Indicator::Ttft, 4000.0),
            (Indicator::Tpot, 50.0),
            (Indicator::Itl, 50.0),
        ],
        percentiles: vec![50.0, 90.0, 99.9],
    };
    analyse(
        &[dump("a", "replica_a.prom"), dump("b", "replica_b.prom")],
        &[],
        &query,
    )
}

#[test]
fn fixture_fractions_on_between_and_above_edges() {
    let a = two_replicas();
    let ttft = group(&a, Indicator::Ttft, LLAMA);
    assert_eq!(
        ttft.merged.cumulative,
        vec![30.0, 80.0, 140.0, 185.0, 197.0]
    );
    assert_eq!(ttft.count, 200.0);
    assert!(close(ttft.mean_ms.unwrap_or(0.0), 87.5 / 200.0 * 1000.0));
    check_fraction(ttft, 500.0, FractionKind::Exact, [0.7, 0.7, 0.7]);
    check_fraction(ttft, 300.0, FractionKind::Interpolated, [0.46, 0.4, 0.7]);
    check_fraction(
        ttft,
        4000.0,
        FractionKind::LowerBoundOnly,
        [0.985, 0.985, 1.0],
    );
    let tpot = group(&a, Indicator::Tpot, LLAMA);
    check_fraction(tpot, 50.0, FractionKind::Exact, [0.875, 0.875, 0.875]);
}

#[test]
fn fixture_percentiles_and_the_mean_of_replica_percentiles() {
    let a = two_replicas();
    let ttft = group(&a, Indicator::Ttft, LLAMA);
    let p = |q: f64| {
        ttft.percentiles
            .iter()
            .find(|p| p.q == q)
            .unwrap_or_else(|| panic!("p{q}"))
    };
    let p50 = p(50.0).merged.clone().unwrap();
    assert!(close(p50.value_ms, 1000.0 / 3.0), "{p50:?}");
    let p90 = p(90.0);
    let merged = p90.merged.clone().unwrap();
    assert!(close(merged.value_ms, 500.0 + 500.0 * 40.0 / 45.0));
    assert_eq!(merged.bucket_ms, (500.0, Some(1000.0)));
    let per: Vec<f64> = p90.per_replica_ms.iter().filter_map(|(_, v)| *v).collect();
    assert!(
        close(per[0], 500.0 + 500.0 * 10.0 / 15.0) && close(per[1], 1000.0),
        "{per:?}"
    );
    let mean = (per[0] + per[1]) / 2.0;
    assert!(close(p90.mean_of_replicas_ms.unwrap(), mean));
    assert!(close(p90.error_ms.unwrap(), mean - merged.value_ms));
    assert!(close(
        p90.relative_error.unwrap(),
        (mean - merged.value_ms) / merged.value_ms
    ));
    assert!((p90.error_ms.unwrap() + 27.777_777_8).abs() < 1e-6);
    let p999 = p(99.9).merged.clone().unwrap();
    assert_eq!((p999.value_ms, p999.lower_bound_only), (2500.0, true));
    // Both replicas' p99.9 lie above 2.5 s too: lower bounds, so their mean is no figure.
    assert_eq!(
        p(99.9)
            .per_replica_ms
            .iter()
            .map(|(_, v)| *v)
            .collect::<Vec<_>>(),
        [Some(2500.0), Some(2500.0)]
    );
    assert_eq!(p(99.9).mean_of_replicas_ms, None);
    assert_eq!(p(99.9).error_ms, None);
}

#[test]
fn fixture_labels_split_models_and_replica_labels_merge() {
    let a = two_replicas();
    let llama = group(&a, Indicator::Ttft, LLAMA);
    assert_eq!(llama.replicas, ["a[engine=0]", "b"]);
    assert_eq!(
        llama.labels,
        [("model_name".to_string(), LLAMA.to_string())]
    );
    let other = group(&a, Indicator::Ttft, "other");
    assert_eq!((other.count, other.replicas.len()), (4.0, 1));
    // One replica: no mean of replica percentiles to compare.
    assert!(other
        .percentiles
        .iter()
        .all(|p| p.mean_of_replicas_ms.is_none()));
}

#[test]
fn older_and_newer_itl_names_merge_without_double_counting() {
    let a = two_replicas();
    let itl = group(&a, Indicator::Itl, LLAMA);
    // a exports both names (same data): read once. b only has the older name.
    assert_eq!(itl.count, 20_000.0);
    assert_eq!(
        itl.families,
        [
            "vllm:inter_token_latency_seconds",
            "vllm:time_per_output_token_seconds"
        ]
    );
    check_fraction(itl, 50.0, FractionKind::Exact, [0.925, 0.925, 0.925]);
    assert!(
        a.notes.iter().any(|n| n.contains("exports both")),
        "{:?}",
        a.notes
    );
    assert!(itl
        .notes
        .iter()
        .any(|n| n.contains("counts gaps, not requests")));
}

#[test]
fn recommended_edges_add_the_targets() {
    let a = two_replicas();
    let ttft = group(&a, Indicator::Ttft, LLAMA);
    assert_eq!(
        ttft.recommended_edges_s,
        vec![0.1, 0.25, 0.3, 0.5, 1.0, 2.5, 4.0]
    );
    assert!(ttft.edges_need_change);
    let tpot = group(&a, Indicator::Tpot, LLAMA);
    assert!(!tpot.edges_need_change);
    assert_eq!(
        recommend_edges(&[0.5, 0.1], &[100.0, -1.0, f64::NAN]),
        vec![0.1, 0.5]
    );
}

#[test]
fn bad_lines_are_located_and_good_lines_kept() {
    let d = read_dump("bad", &fixture("bad_lines.prom"));
    let errors: Vec<String> = d.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        errors,
        [
            "4:56: expected ',' or '}', found 'l'",
            "6:67: \"fourty\" is not a sample value (a number, +Inf, -Inf or NaN)",
            "8:82: unexpected text \"extra\" after the sample",
            "9:1: this series already appeared on line 7; the first is kept",
            "12:54: \"\\q\" is not an escape of the exposition format (use \\\\, \\\" or \\n)",
            "13:41: \"sumary\" is not a metric type (counter, gauge, histogram, summary, untyped)",
        ]
    );
    assert_eq!(d.error_count, 6);
    let h = &d.histograms[0];
    assert_eq!(
        (h.edges_s.clone(), h.cumulative.clone(), h.count),
        (vec![1.0, 2.5, 5.0], vec![10.0, 30.0, 40.0], 50.0)
    );
    assert_eq!(h.sum, Some(91.25));
    let f = fraction_at_or_under(h, 2500.0).unwrap();
    assert_eq!((f.kind, f.value), (FractionKind::Exact, 0.6));
}

#[test]
fn window_increase_and_counter_reset() {
    let query = HistogramQuery {
        targets_ms: vec![(Indicator::Ttft, 500.0), (Indicator::E2e, 5000.0)],
        percentiles: vec![90.0],
    };
    let before = [dump("m", "window_before.prom")];
    let after = [dump("m", "window_after.prom")];
    let a = analyse(&after, &before, &query);
    assert!(a.windowed);
    // TTFT: (70-20, 150-50, 230-80, 270-95, 290-99) of 300-100.
    let ttft = group(&a, Indicator::Ttft, "m");
    assert_eq!(
        ttft.merged.cumulative,
        vec![50.0, 100.0, 150.0, 175.0, 191.0]
    );
    assert_eq!(ttft.count, 200.0);
    assert!(close(ttft.mean_ms.unwrap_or(0.0), 60.0 / 200.0 * 1000.0));
    check_fraction(ttft, 500.0, FractionKind::Exact, [0.75, 0.75, 0.75]);
    // E2E: the count went from 500 to 40: a reset; the later counts are the increase.
    let e2e = group(&a, Indicator::E2e, "m");
    assert_eq!(
        (e2e.merged.cumulative.clone(), e2e.count),
        (vec![10.0, 30.0], 40.0)
    );
    check_fraction(e2e, 5000.0, FractionKind::Exact, [0.75, 0.75, 0.75]);
    let resets: Vec<&String> = a
        .notes
        .iter()
        .filter(|n| n.contains("counter reset"))
        .collect();
    assert_eq!(resets.len(), 1, "{:?}", a.notes);
    assert!(resets[0].contains("vllm:e2e_request_latency_seconds{model_name=\"m\"}"));
    assert!(resets[0].contains("the total count went down"));
}

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Log-normal latency in seconds, median `median_s`.
    fn latency(&mut self, median_s: f64) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        median_s * (0.6 * z).exp()
    }
}

/// vLLM's default TTFT bucket edges (seconds).
const TTFT_EDGES: [f64; 18] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0,
];

/// The exposition text of one replica's observations, bucketed by hand.
fn exposition(observations: &[f64]) -> String {
    let family = "vllm:time_to_first_token_seconds";
    let labels = "model_name=\"m\"";
    let mut text = format!("# TYPE {family} histogram\n");
    for le in TTFT_EDGES {
        let count = observations.iter().filter(|&&x| x <= le).count();
        text.push_str(&format!(
            "{family}_bucket{{{labels},le=\"{le}\"}} {count}.0\n"
        ));
    }
    text.push_str(&format!(
        "{family}_bucket{{{labels},le=\"+Inf\"}} {}.0\n",
        observations.len()
    ));
    text.push_str(&format!(
        "{family}_count{{{labels}}} {}.0\n",
        observations.len()
    ));
    text.push_str(&format!(
        "{family}_sum{{{labels}}} {}\n",
        observations.iter().sum::<f64>()
    ));
    text
}

#[test]
fn merge_of_three_replicas_equals_a_direct_count() {
    let mut rng = Lcg(2024);
    // Three replicas of different sizes and speeds.
    let replicas: Vec<Vec<f64>> = [(3000, 0.2), (1000, 0.35), (2000, 0.6)]
        .iter()
        .map(|&(n, median)| (0..n).map(|_| rng.latency(median)).collect())
        .collect();
    let all: Vec<f64> = replicas.iter().flatten().copied().collect();
    let dumps: Vec<Dump> = replicas
        .iter()
        .enumerate()
        .map(|(k, obs)| {
            let d = read_dump(&format!("r{k}"), &exposition(obs));
            assert!(d.errors.is_empty() && d.warnings.is_empty(), "{d:?}");
            d
        })
        .collect();
    let query = HistogramQuery {
        targets_ms: vec![(Indicator::Ttft, 500.0), (Indicator::Ttft, 300.0)],
        percentiles: vec![50.0, 90.0, 99.0],
    };
    let a = analyse(&dumps, &[], &query);
    assert_eq!(a.groups.len(), 1);
    let g = &a.groups[0];
    assert_eq!(g.replicas, ["r0", "r1", "r2"]);
    // Every merged bucket equals the count of all observations at or under its edge.
    for (le, got) in g.merged.edges_s.iter().zip(&g.merged.cumulative) {
        let want = all.iter().filter(|&&x| x <= *le).count() as f64;
        assert_eq!(*got, want, "le={le}");
    }
    assert_eq!(g.count, all.len() as f64);
    let direct_sum: f64 = all.iter().sum();
    assert!((g.merged.sum.unwrap_or(0.0) - direct_sum).abs() < 1e-6 * direct_sum);
    // On an edge, the fraction is the direct one exactly.
    let direct = all.iter().filter(|&&x| x <= 0.5).count() as f64 / all.len() as f64;
    check_fraction(g, 500.0, FractionKind::Exact, [direct, direct, direct]);
    // Between edges, the direct fraction lies within the bounds.
    let f300 = g.fractions.iter().find(|f| f.target_ms == 300.0).unwrap();
    let direct300 = all.iter().filter(|&&x| x <= 0.3).count() as f64 / all.len() as f64;
    assert!(
        f300.lower <= direct300 && direct300 <= f300.upper,
        "{f300:?} vs {direct300}"
    );
    // The merged percentile lies in the bucket of the true percentile; the replicas' mean may not.
    let mut sorted = all.clone();
    sorted.sort_by(f64::total_cmp);
    for p in &g.percentiles {
        let merged = p.merged.clone().unwrap();
        let rank = ((p.q / 100.0 * all.len() as f64).ceil() as usize).max(1);
        let truth_ms = sorted[rank - 1] * 1000.0;
        let (lo, hi) = merged.bucket_ms;
        assert!(
            lo <= truth_ms && hi.is_none_or(|h| truth_ms <= h),
            "p{}: {truth_ms} not in {lo}..{hi:?}",
            p.q
        );
        assert_eq!(p.per_replica_ms.len(), 3);
        assert!(p.mean_of_replicas_ms.is_some() && p.error_ms.is_some());
    }
    // The same merge through `merge` directly.
    let parts: Vec<_> = dumps.iter().map(|d| &d.histograms[0]).collect();
    let m = merge(&parts).unwrap();
    assert!(m.dropped_edges_s.is_empty());
    assert_eq!(m.histogram.cumulative, g.merged.cumulative);
    let p99 = histogram_quantile(&m.histogram, 99.0).unwrap();
    assert!(close(
        p99.value_ms,
        g.percentiles[2].merged.clone().unwrap().value_ms
    ));
}

#[test]
fn different_edges_merge_on_the_common_ones_and_say_so() {
    let text = |edges: &[(&str, u32)], total: u32| {
        let mut t = String::new();
        for (le, c) in edges {
            t.push_str(&format!(
                "vllm:e2e_request_latency_seconds_bucket{{le=\"{le}\"}} {c}\n"
            ));
        }
        t.push_str(&format!(
            "vllm:e2e_request_latency_seconds_bucket{{le=\"+Inf\"}} {total}\n"
        ));
        t
    };
    let a = read_dump("a", &text(&[("1", 5), ("2", 8), ("5", 9)], 10));
    let b = read_dump("b", &text(&[("1", 1), ("5", 4)], 10));
    let query = HistogramQuery {
        targets_ms: vec![(Indicator::E2e, 2000.0)],
        percentiles: vec![],
    };
    let an = analyse(&[a, b], &[], &query);
    let g = &an.groups[0];
    assert_eq!(g.merged.edges_s, vec![1.0, 5.0]);
    assert_eq!(g.merged.cumulative, vec![6.0, 13.0]);
    assert_eq!(g.dropped_edges_s, vec![2.0]);
    assert!(
        g.notes.iter().any(|n| n.contains("leaving out 2 s")),
        "{:?}",
        g.notes
    );
    // 2 s is no longer an edge of the merge: interpolated in (1, 5].
    check_fraction(
        g,
        2000.0,
        FractionKind::Interpolated,
        [(6.0 + 7.0 / 4.0) / 20.0, 0.3, 0.65],
    );
}

#[test]
fn a_target_without_a_histogram_is_said() {
    let query = HistogramQuery {
        targets_ms: vec![(Indicator::E2e, 2000.0)],
        percentiles: vec![],
    };
    let a = analyse(&[dump("b", "replica_b.prom")], &[], &query);
    assert_eq!(a.missing, [Indicator::E2e]);
    assert!(a
        .notes
        .iter()
        .any(|n| n.contains("vllm:e2e_request_latency_seconds")));
}
