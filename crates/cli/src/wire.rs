//! The JSON shape of `slo report --format json`: a public contract (docs/cli.md). Change it
//! only on purpose, and say so in the changelog of docs/cli.md.

use std::collections::BTreeMap;

use serde::Serialize;
use slo_core::evaluate::{fmt_q, GroupReport, IndicatorReport, Report};
use slo_core::ingest::Provenance;
use slo_core::spec::Indicator;

#[derive(Serialize)]
pub struct ReportJson {
    pub overall: GroupJson,
    /// One per class × bucket cell.
    pub groups: Vec<GroupJson>,
    pub classes: Vec<GroupJson>,
    pub method: &'static str,
    pub objective: f64,
    pub duration_s: Option<f64>,
    pub duration_source: String,
    pub unassigned: u64,
    pub cancelled: CancelJson,
    pub failing_requests: Vec<FailingJson>,
    pub failing_total: u64,
    pub hidden_stalls: Vec<StallJson>,
    pub files: Vec<Provenance>,
    pub warnings: Vec<String>,
}

#[derive(Serialize)]
pub struct GroupJson {
    pub class: Option<String>,
    pub bucket: Option<String>,
    pub attempted: u64,
    pub completed: u64,
    pub failed: u64,
    pub excluded: u64,
    pub good: u64,
    pub attainment: Option<f64>,
    pub attainment_ci95: Option<[f64; 2]>,
    /// good / completed: vLLM's benchmark convention, which drops failures.
    pub attainment_of_completed_vllm: Option<f64>,
    pub goodput_rps: Option<f64>,
    pub throughput_rps: Option<f64>,
    pub meets_objective: Option<bool>,
    pub binding_target: Option<&'static str>,
    /// indicator key ("ttft_ms") -> percentile as vLLM writes it ("90", "99.9") -> value.
    pub percentiles: BTreeMap<&'static str, BTreeMap<String, Option<f64>>>,
    /// The same percentiles with the reference methods, intervals and verdicts.
    pub percentile_details: BTreeMap<&'static str, IndicatorJson>,
    pub failures: Vec<FailureJson>,
    pub hidden_stalls: u64,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct IndicatorJson {
    pub n: u64,
    pub mean: Option<f64>,
    pub target_ms: Option<f64>,
    pub met: u64,
    pub missed: u64,
    pub by_percentile: BTreeMap<String, PercentileJson>,
}

#[derive(Serialize)]
pub struct PercentileJson {
    pub value: Option<f64>,
    pub linear: Option<f64>,
    pub nearest: Option<f64>,
    pub nearest_rank: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub pass: Option<bool>,
    pub verdict_flips_with_method: bool,
}

#[derive(Serialize)]
pub struct FailureJson {
    pub label: String,
    pub missed: Vec<&'static str>,
    pub count: u64,
}

#[derive(Serialize)]
pub struct FailingJson {
    pub id: String,
    pub class: Option<String>,
    pub bucket: Option<String>,
    pub outcome: slo_core::evaluate::Outcome,
    pub missed: Vec<&'static str>,
    pub no_data: Vec<&'static str>,
}

#[derive(Serialize)]
pub struct StallJson {
    pub id: String,
    pub tpot_ms: Option<f64>,
    pub max_gap_ms: f64,
}

#[derive(Serialize)]
pub struct CancelJson {
    pub cancelled: u64,
    pub counted_as_ttft_failure: u64,
    pub wait_p50_ms: Option<f64>,
    pub wait_max_ms: Option<f64>,
}

fn pair(p: Option<(f64, f64)>) -> Option<[f64; 2]> {
    p.map(|(a, b)| [a, b])
}

fn key(i: Indicator) -> &'static str {
    i.key()
}

fn indicator_json(r: &IndicatorReport) -> IndicatorJson {
    let by_percentile = r
        .stats
        .percentiles
        .iter()
        .zip(&r.verdicts)
        .map(|(p, v)| {
            (
                fmt_q(p.q),
                PercentileJson {
                    value: p.value,
                    linear: p.linear,
                    nearest: p.nearest,
                    nearest_rank: p.nearest_rank,
                    ci95: pair(p.ci95),
                    pass: v.pass,
                    verdict_flips_with_method: v.flipped,
                },
            )
        })
        .collect();
    IndicatorJson {
        n: r.stats.n,
        mean: r.stats.mean,
        target_ms: r.target_ms,
        met: r.met,
        missed: r.missed,
        by_percentile,
    }
}

pub fn group(g: &GroupReport) -> GroupJson {
    let percentiles = g
        .indicators
        .iter()
        .map(|r| {
            let values = r
                .stats
                .percentiles
                .iter()
                .map(|p| (fmt_q(p.q), p.value))
                .collect();
            (key(r.indicator), values)
        })
        .collect();
    let percentile_details = g
        .indicators
        .iter()
        .map(|r| (key(r.indicator), indicator_json(r)))
        .collect();
    GroupJson {
        class: g.class.clone(),
        bucket: g.bucket.clone(),
        attempted: g.attempted,
        completed: g.completed,
        failed: g.failed,
        excluded: g.excluded,
        good: g.good,
        attainment: g.attainment,
        attainment_ci95: pair(g.attainment_ci95),
        attainment_of_completed_vllm: g.attainment_of_completed,
        goodput_rps: g.goodput_rps,
        throughput_rps: g.throughput_rps,
        meets_objective: g.meets_objective,
        binding_target: g.binding.map(key),
        percentiles,
        percentile_details,
        failures: g
            .failures
            .iter()
            .map(|f| FailureJson {
                label: f.label.clone(),
                missed: f.missed.iter().map(|i| key(*i)).collect(),
                count: f.count,
            })
            .collect(),
        hidden_stalls: g.hidden_stalls,
        warnings: g.warnings.clone(),
        notes: g.notes.clone(),
    }
}

pub fn report(r: &Report, files: Vec<Provenance>, warnings: Vec<String>) -> ReportJson {
    ReportJson {
        overall: group(&r.overall),
        groups: r.cells.iter().map(group).collect(),
        classes: r.classes.iter().map(group).collect(),
        method: r.method.name(),
        objective: r.objective,
        duration_s: r.duration.seconds,
        duration_source: r.duration.how.clone(),
        unassigned: r.unassigned,
        cancelled: CancelJson {
            cancelled: r.cancellations.cancelled,
            counted_as_ttft_failure: r.cancellations.counted_as_ttft_failure,
            wait_p50_ms: r.cancellations.wait_p50_ms,
            wait_max_ms: r.cancellations.wait_max_ms,
        },
        failing_requests: r
            .failing
            .iter()
            .map(|f| FailingJson {
                id: f.id.clone(),
                class: f.class.clone(),
                bucket: f.bucket.clone(),
                outcome: f.outcome,
                missed: f.missed.iter().map(|i| key(*i)).collect(),
                no_data: f.missing.iter().map(|i| key(*i)).collect(),
            })
            .collect(),
        failing_total: r.failing_total,
        hidden_stalls: r
            .stalled
            .iter()
            .map(|s| StallJson {
                id: s.id.clone(),
                tpot_ms: s.tpot_ms,
                max_gap_ms: s.max_gap_ms,
            })
            .collect(),
        files,
        warnings,
    }
}
