//! `slo sweep`: capacity from a load sweep, one result file per offered request rate.
//!
//! Every figure comes from `slo_core::sweep`; this file reads the files and flags, prints the
//! curves, and decides the exit status of `--check` (docs/sweep.md): exit 1 when
//! - `--peak-rps R --replicas N`: N replicas with one failed do not carry R
//!   (`replicas_needed(R, capacity) > N`);
//! - `--peak-rps R` alone: the swept deployment's SLO capacity (the highest measured rate meeting
//!   the objective) is below R;
//! - neither: no measured rate meets the objective.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::Serialize;
use slo_core::evaluate::{fmt_pct, fmt_q};
use slo_core::ingest::{IngestOptions, Provenance, RequestRate};
use slo_core::spec::{Indicator, Spec, TtftTarget};
use slo_core::sweep::{
    fmt_rate, provision, replicas_needed, scale_curve, sweep, sweep_points, Bound, Capacity,
    CapacityKind, CurvePoint, LintKind, Provisioning, RateSource, ScaleCurve, SweepInput,
    SweepReport, SCALE_FACTORS, SWEEP_INDICATORS,
};

use crate::input::{self, TargetFlags};
use crate::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// Result files, one per offered rate (vLLM bench serve JSON, or any log slo reads).
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<String>,
    /// SLO spec JSON (classes, buckets, targets, method, objective).
    #[arg(long, value_name = "SPEC.json")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub targets: TargetFlags,
    /// Joint-attainment objective, a fraction such as 0.99.
    #[arg(long, value_name = "FRACTION")]
    pub objective: Option<f64>,
    /// The offered rate of a file, in req/s or "inf" (repeatable). Wins over the file's own
    /// request_rate and over a rate in its name.
    #[arg(long = "rate", value_name = "FILE=RATE")]
    pub rates: Vec<String>,
    /// Peak traffic in req/s: replicas needed, with one spare for a failed replica.
    #[arg(long, value_name = "R")]
    pub peak_rps: Option<f64>,
    /// Replicas deployed: with --check and --peak-rps, the gate asks whether N - 1 of them carry
    /// the peak.
    #[arg(long, value_name = "N")]
    pub replicas: Option<u64>,
    /// GPUs per replica: total GPUs and per-GPU goodput (capacity / GPUs, as in DistServe).
    #[arg(long, value_name = "G")]
    pub gpus_per_replica: Option<u32>,
    /// The rate of the SLO-scale curve (the nearest measured one is used); default: the first
    /// failing rate, else the highest.
    #[arg(long, value_name = "R")]
    pub scale_at: Option<f64>,
    /// Output: text or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Exit 1 when the SLO capacity is below --peak-rps (with --replicas N: when N - 1 replicas
    /// do not carry it; without --peak-rps: when no measured rate meets the objective).
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<Outcome, String> {
    if !matches!(args.format.as_str(), "text" | "json") {
        return Err(format!("--format {:?}: use text or json", args.format));
    }
    let mut spec = input::spec_from(args.spec.as_deref(), &args.targets)?;
    if let Some(o) = args.objective {
        spec.objective = o;
    }
    let errors = spec.validate();
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        return Err(format!(
            "the SLO settings are not valid:\n{}",
            lines.join("\n")
        ));
    }
    if let Some(p) = args.peak_rps {
        if !(p.is_finite() && p >= 0.0) {
            return Err(format!("--peak-rps {p}: give a rate in req/s, 0 or more"));
        }
    }
    if args.gpus_per_replica == Some(0) {
        return Err("--gpus-per-replica 0: a replica has at least one GPU".to_string());
    }
    let typed = typed_rates(&args.rates, &args.files)?;
    let files = input::load_files(&args.files, &IngestOptions::default(), &spec)?;
    let provenance: Vec<Provenance> = files.iter().map(|f| f.provenance.clone()).collect();
    let inputs: Vec<SweepInput> = files
        .into_iter()
        .zip(typed)
        .map(|(loaded, rate_override)| SweepInput {
            loaded,
            rate_override,
        })
        .collect();
    let points = sweep_points(inputs).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        format!(
            "every file of a sweep needs its offered rate:\n{}",
            lines.join("\n")
        )
    })?;
    let report = sweep(&points, &spec);
    let provisioning = (args.peak_rps.is_some() || args.gpus_per_replica.is_some())
        .then(|| provision(&report.capacity, args.peak_rps, args.gpus_per_replica));
    let scale = args
        .scale_at
        .or_else(|| report.default_scale_rate())
        .and_then(|r| report.nearest_point(r))
        .and_then(|i| points.get(i))
        .map(|p| scale_curve(p, &spec, &SCALE_FACTORS));

    let mut out = crate::stdout();
    let written = if args.format == "json" {
        let json = to_json(&report, provisioning.as_ref(), scale.as_ref(), provenance);
        serde_json::to_writer_pretty(&mut out, &json)
            .map_err(|e| e.to_string())
            .and_then(|_| writeln!(out).map_err(|e| e.to_string()))
    } else {
        write!(
            out,
            "{}",
            text(
                &report,
                &spec,
                args.files.len(),
                provisioning.as_ref(),
                scale.as_ref()
            )
        )
        .map_err(|e| e.to_string())
    };
    crate::flushed(written, &mut out, "the sweep")?;

    if args.check {
        if let Some(why) = check_failure(&report.capacity, args.peak_rps, args.replicas) {
            eprintln!("check failed: {why}");
            return Ok(Outcome::CheckFailed);
        }
    }
    Ok(Outcome::Ok)
}

/// Why `--check` fails, if it does.
fn check_failure(cap: &Capacity, peak_rps: Option<f64>, replicas: Option<u64>) -> Option<String> {
    if let (Some(peak), Some(n)) = (peak_rps, replicas) {
        let needed = cap
            .figure()
            .filter(|(_, b)| *b != Bound::AtMost)
            .and_then(|(c, _)| replicas_needed(peak, c));
        return match needed {
            Some(k) if k <= n => None,
            Some(k) => Some(format!(
                "a peak of {} req/s needs {k} replicas with one spare ({}), and {n} are deployed",
                fmt_rate(peak),
                cap.message
            )),
            None => Some(format!(
                "the replicas a peak of {} req/s needs cannot be counted: {}",
                fmt_rate(peak),
                cap.message
            )),
        };
    }
    match (peak_rps, cap.figure()) {
        (_, None) => Some("no capacity could be read from the sweep".to_string()),
        (None, Some((_, Bound::AtMost))) => Some(cap.message.clone()),
        (None, Some(_)) => None,
        (Some(peak), Some((c, bound))) => {
            let shown = match bound {
                Bound::AtMost => false,
                Bound::Estimate | Bound::AtLeast => c >= peak,
            };
            (!shown).then(|| match bound {
                Bound::AtMost => format!(
                    "no measured rate meets the objective, so the peak of {} req/s is not carried",
                    fmt_rate(peak)
                ),
                Bound::AtLeast => format!(
                    "every measured rate passes, but the highest, {} req/s, is below the peak of {} req/s: measure up to the peak",
                    fmt_rate(c),
                    fmt_rate(peak)
                ),
                Bound::Estimate => format!(
                    "the SLO capacity {} req/s is below the peak of {} req/s",
                    fmt_rate(c),
                    fmt_rate(peak)
                ),
            })
        }
    }
}

/// One typed rate per file (in the order of `files`), from `--rate FILE=RATE`.
fn typed_rates(entries: &[String], files: &[String]) -> Result<Vec<Option<RequestRate>>, String> {
    let mut typed = vec![None; files.len()];
    for entry in entries {
        let Some((file, rate)) = entry.rsplit_once('=') else {
            return Err(format!(
                "--rate {entry:?}: write FILE=RATE, e.g. --rate sweep_a.json=8"
            ));
        };
        let rate = match rate.trim().to_ascii_lowercase().as_str() {
            "inf" | "infinity" => RequestRate::Infinite,
            r => match r.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => RequestRate::PerSecond(x),
                _ => {
                    return Err(format!(
                        "--rate {entry:?}: {rate:?} is not a positive rate in req/s (or inf)"
                    ))
                }
            },
        };
        let mut matched = false;
        for (k, path) in files.iter().enumerate() {
            let name = Path::new(path).file_name().map(|n| n.to_string_lossy());
            if path == file || name.as_deref() == Some(file) {
                if let Some(slot) = typed.get_mut(k) {
                    *slot = Some(rate);
                    matched = true;
                }
            }
        }
        if !matched {
            return Err(format!(
                "--rate {entry:?}: {file:?} is not one of the input files"
            ));
        }
    }
    Ok(typed)
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
    }
}

fn rate_num(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |x| format!("{x:.3}"))
}

fn targets_text(spec: &Spec) -> String {
    match spec.classes.as_slice() {
        [one] if one.targets.len() == 1 => {
            let Some(t) = one.targets.first() else {
                return String::new();
            };
            let mut parts = Vec::new();
            for ind in t.indicators() {
                match (ind, t.fixed_ms(ind), t.ttft) {
                    (_, Some(ms), _) => parts.push(format!("{} <= {ms} ms", ind.label())),
                    (
                        Indicator::Ttft,
                        None,
                        Some(TtftTarget::PerToken {
                            base_ms,
                            per_token_ms,
                        }),
                    ) => parts.push(format!(
                        "TTFT <= {base_ms} ms + {per_token_ms} ms per input token"
                    )),
                    _ => {}
                }
            }
            if parts.is_empty() {
                "no targets set".to_string()
            } else {
                parts.join(", ")
            }
        }
        classes => format!("{} classes, targets as in the spec", classes.len()),
    }
}

fn attainment_row(p: &CurvePoint) -> String {
    let ci = p.attainment_ci95.map_or("—".to_string(), |(lo, hi)| {
        format!("{}–{}", fmt_pct(lo), fmt_pct(hi))
    });
    format!(
        "  {:>8}  {:<18} {:>9} {:>6} {:>6} {:>11}  {:<19} {:>10} {:>10}\n",
        fmt_rate(p.rate_rps),
        p.file,
        p.attempted,
        p.failed,
        p.good,
        p.attainment.map_or("—".to_string(), fmt_pct),
        ci,
        rate_num(p.throughput_rps),
        rate_num(p.goodput_rps),
    )
}

/// The readable output of `--format text`.
fn text(
    r: &SweepReport,
    spec: &Spec,
    files: usize,
    provisioning: Option<&Provisioning>,
    scale: Option<&ScaleCurve>,
) -> String {
    let mut s = String::new();
    // A file that could not be placed on the curve (see the lints) is given but not a point.
    let placed = if r.points.len() == files {
        format!("{files} files")
    } else {
        format!("{files} files, {} on the curve", r.points.len())
    };
    s.push_str(&format!(
        "load sweep: {placed}; objective {} of requests meeting every target ({}); percentiles by {}\n",
        fmt_pct(r.objective),
        targets_text(spec),
        spec.method.name()
    ));
    let closed: Vec<&str> = r
        .points
        .iter()
        .filter(|p| p.closed_loop)
        .map(|p| p.name.as_str())
        .collect();
    if !closed.is_empty() {
        s.push_str(&format!(
            "closed-loop points, placed at their achieved rate: {}\n",
            closed.join(", ")
        ));
    }
    let typed_or_named: Vec<String> = r
        .points
        .iter()
        .filter(|p| p.rate_source != RateSource::ResultFile)
        .map(|p| format!("{} ({})", p.name, p.rate_source.describe()))
        .collect();
    if !typed_or_named.is_empty() {
        s.push_str(&format!(
            "rates typed or read from the file name, not from the file: {}\n",
            typed_or_named.join(", ")
        ));
    }
    let header = format!(
        "  {:>8}  {:<18} {:>9} {:>6} {:>6} {:>11}  {:<19} {:>10} {:>10}\n",
        "req/s",
        "file",
        "attempted",
        "failed",
        "good",
        "attainment",
        "95 % CI",
        "throughput",
        "goodput"
    );
    let several = spec.classes.len() > 1;
    for curve in &r.curves {
        if curve.class.is_some() && !several {
            continue;
        }
        match &curve.class {
            None => s.push_str(
                "\nall requests (attainment = good / attempted; failures count as bad):\n",
            ),
            Some(c) => s.push_str(&format!("\nclass {c}:\n")),
        }
        s.push_str(&header);
        for p in &curve.points {
            s.push_str(&attainment_row(p));
        }
        if curve.class.is_none() {
            s.push_str(&format!(
                "\n  {:>8}  {}\n",
                "req/s",
                SWEEP_INDICATORS
                    .iter()
                    .map(|i| {
                        let qs: Vec<String> = spec
                            .percentiles
                            .iter()
                            .map(|q| format!("p{}", fmt_q(*q)))
                            .collect();
                        format!("{:<24}", format!("{} {} ms", i.label(), qs.join("/")))
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
            for p in &curve.points {
                let cols: Vec<String> = SWEEP_INDICATORS
                    .iter()
                    .map(|&i| {
                        let vals: Vec<String> = spec
                            .percentiles
                            .iter()
                            .map(|&q| num(p.percentile(i, q)))
                            .collect();
                        format!("{:<24}", vals.join(" / "))
                    })
                    .collect();
                s.push_str(&format!(
                    "  {:>8}  {}\n",
                    fmt_rate(p.rate_rps),
                    cols.join(" ")
                ));
            }
        }
        if several {
            s.push_str(&format!("  capacity: {}\n", curve.capacity.message));
        }
    }
    s.push_str(&format!("\ncapacity: {}\n", r.capacity.message));
    if several {
        if let Some(c) = &r.binding_class {
            s.push_str(&format!(
                "  (the lowest over the classes: class {c} binds)\n"
            ));
        }
    }
    s.push_str(&format!("throughput-only: {}\n", r.throughput.message));
    if let Some(p) = provisioning {
        s.push_str(&format!("provisioning: {}\n", p.message));
    }
    if let Some(c) = scale {
        s.push_str("\nSLO scale (every target × factor):\n  ");
        let cells: Vec<String> = c
            .points
            .iter()
            .map(|p| {
                format!(
                    "×{} {}",
                    p.factor,
                    p.attainment.map_or("—".to_string(), fmt_pct)
                )
            })
            .collect();
        s.push_str(&cells.join("  "));
        s.push_str(&format!("\n  {}\n", c.message));
    }
    if !r.lints.is_empty() {
        // One line per finding; files with the same finding share it.
        let mut groups: Vec<(LintKind, &str, Vec<&str>)> = Vec::new();
        for l in &r.lints {
            let file = l.file.as_deref().unwrap_or("sweep");
            match groups
                .iter_mut()
                .find(|(k, m, _)| *k == l.kind && *m == l.message)
            {
                Some((_, _, files)) => files.push(file),
                None => groups.push((l.kind, &l.message, vec![file])),
            }
        }
        s.push_str("\nlints:\n");
        for (kind, message, files) in groups {
            s.push_str(&format!(
                "  {}: {}: {message}\n",
                files.join(", "),
                lint_label(kind)
            ));
        }
    }
    s
}

fn lint_label(k: LintKind) -> &'static str {
    match k {
        LintKind::ClosedLoop => "closed-loop load",
        LintKind::Burstiness => "burstiness",
        LintKind::FixedLength => "fixed lengths",
        LintKind::ClientSaturated => "client saturated",
        LintKind::FewRequests => "few requests",
        LintKind::HiddenFailures => "failures left out by the file",
        LintKind::MissingFailures => "failures missing",
        LintKind::RateOverridden => "typed rate",
        LintKind::DuplicateRate => "duplicate rate",
        LintKind::Unplaced => "not placed",
    }
}

// ---------------------------------------------------------------- JSON (docs/sweep.md)

#[derive(Serialize)]
struct SweepJson {
    objective: f64,
    /// The binding capacity (the lowest over the classes).
    capacity: CapacityJson,
    binding_class: Option<String>,
    throughput_only: ThroughputJson,
    provisioning: Option<ProvisioningJson>,
    slo_scale: Option<ScaleJson>,
    points: Vec<PointJson>,
    curves: Vec<CurveJson>,
    lints: Vec<LintJson>,
    files: Vec<Provenance>,
}

#[derive(Serialize)]
struct CapacityJson {
    kind: CapacityKind,
    /// The highest measured rate meeting the objective, every lower rate meeting it too.
    capacity_rps: Option<f64>,
    first_failing_rps: Option<f64>,
    /// Linear interpolation between the two: an estimate.
    crossing_rps_linear: Option<f64>,
    rises_again_rps: Vec<f64>,
    passes_again_rps: Vec<f64>,
    message: String,
}

#[derive(Serialize)]
struct ThroughputJson {
    knee_rps: Option<f64>,
    max_throughput_rps: Option<f64>,
    levelled_off: bool,
    overstatement: Option<f64>,
    overstatement_bound: Bound,
    message: String,
}

#[derive(Serialize)]
struct ProvisioningJson {
    peak_rps: Option<f64>,
    capacity_rps: Option<f64>,
    capacity_bound: Option<Bound>,
    replicas: Option<u64>,
    replicas_bound: Bound,
    gpus_per_replica: Option<u32>,
    gpus: Option<u64>,
    per_gpu_goodput_rps: Option<f64>,
    per_gpu_goodput_bound: Bound,
    message: String,
}

#[derive(Serialize)]
struct ScaleJson {
    file: String,
    rate_rps: Option<f64>,
    points: Vec<ScalePointJson>,
    passing_from_factor: Option<f64>,
    message: String,
}

#[derive(Serialize)]
struct ScalePointJson {
    factor: f64,
    attempted: u64,
    good: u64,
    attainment: Option<f64>,
    attainment_ci95: Option<[f64; 2]>,
    meets_objective: Option<bool>,
}

#[derive(Serialize)]
struct PointJson {
    file: String,
    /// The offered rate in req/s; `null` for rate inf.
    offered_rps: Option<f64>,
    rate_source: RateSource,
    /// Where the point sits on the curves.
    rate_rps: f64,
    closed_loop: bool,
    duration_s: Option<f64>,
    duration_source: String,
    send_rate_rps: Option<f64>,
}

#[derive(Serialize)]
struct CurveJson {
    /// `null` for all requests.
    class: Option<String>,
    capacity: CapacityJson,
    points: Vec<CurvePointJson>,
}

#[derive(Serialize)]
struct CurvePointJson {
    file: String,
    rate_rps: f64,
    attempted: u64,
    completed: u64,
    failed: u64,
    good: u64,
    attainment: Option<f64>,
    attainment_ci95: Option<[f64; 2]>,
    /// good / completed: vLLM's benchmark convention, which drops failures.
    attainment_of_completed_vllm: Option<f64>,
    throughput_rps: Option<f64>,
    goodput_rps: Option<f64>,
    meets_objective: Option<bool>,
    /// indicator key ("ttft_ms") -> percentile as vLLM writes it ("99") -> value, spec's method.
    percentiles: BTreeMap<&'static str, BTreeMap<String, Option<f64>>>,
}

#[derive(Serialize)]
struct LintJson {
    kind: LintKind,
    file: Option<String>,
    message: String,
}

fn capacity_json(c: &Capacity) -> CapacityJson {
    CapacityJson {
        kind: c.kind,
        capacity_rps: c.passing_rps,
        first_failing_rps: c.first_failing_rps,
        crossing_rps_linear: c.crossing_rps,
        rises_again_rps: c.rises_again_rps.clone(),
        passes_again_rps: c.passes_again_rps.clone(),
        message: c.message.clone(),
    }
}

fn curve_point_json(p: &CurvePoint) -> CurvePointJson {
    let mut percentiles: BTreeMap<&'static str, BTreeMap<String, Option<f64>>> = BTreeMap::new();
    for x in &p.percentiles {
        percentiles
            .entry(x.indicator.key())
            .or_default()
            .insert(fmt_q(x.q), x.value_ms);
    }
    CurvePointJson {
        file: p.file.clone(),
        rate_rps: p.rate_rps,
        attempted: p.attempted,
        completed: p.completed,
        failed: p.failed,
        good: p.good,
        attainment: p.attainment,
        attainment_ci95: p.attainment_ci95.map(|(a, b)| [a, b]),
        attainment_of_completed_vllm: p.attainment_of_completed,
        throughput_rps: p.throughput_rps,
        goodput_rps: p.goodput_rps,
        meets_objective: p.meets_objective,
        percentiles,
    }
}

fn to_json(
    r: &SweepReport,
    provisioning: Option<&Provisioning>,
    scale: Option<&ScaleCurve>,
    files: Vec<Provenance>,
) -> SweepJson {
    SweepJson {
        objective: r.objective,
        capacity: capacity_json(&r.capacity),
        binding_class: r.binding_class.clone(),
        throughput_only: ThroughputJson {
            knee_rps: r.throughput.knee_rps,
            max_throughput_rps: r.throughput.max_throughput_rps,
            levelled_off: r.throughput.levelled_off,
            overstatement: r.throughput.overstatement,
            overstatement_bound: r.throughput.overstatement_bound,
            message: r.throughput.message.clone(),
        },
        provisioning: provisioning.map(|p| ProvisioningJson {
            peak_rps: p.peak_rps,
            capacity_rps: p.capacity_rps,
            capacity_bound: p.capacity_bound,
            replicas: p.replicas,
            replicas_bound: p.replicas_bound,
            gpus_per_replica: p.gpus_per_replica,
            gpus: p.gpus,
            per_gpu_goodput_rps: p.per_gpu_goodput_rps,
            per_gpu_goodput_bound: p.per_gpu_goodput_bound,
            message: p.message.clone(),
        }),
        slo_scale: scale.map(|c| ScaleJson {
            file: c.file.clone(),
            rate_rps: c.rate_rps,
            points: c
                .points
                .iter()
                .map(|p| ScalePointJson {
                    factor: p.factor,
                    attempted: p.attempted,
                    good: p.good,
                    attainment: p.attainment,
                    attainment_ci95: p.attainment_ci95.map(|(a, b)| [a, b]),
                    meets_objective: p.meets_objective,
                })
                .collect(),
            passing_from_factor: c.passing_from_factor,
            message: c.message.clone(),
        }),
        points: r
            .points
            .iter()
            .map(|p| PointJson {
                file: p.name.clone(),
                offered_rps: match p.offered {
                    RequestRate::PerSecond(x) => Some(x),
                    RequestRate::Infinite => None,
                },
                rate_source: p.rate_source,
                rate_rps: p.rate_rps,
                closed_loop: p.closed_loop,
                duration_s: p.duration.seconds,
                duration_source: p.duration.how.clone(),
                send_rate_rps: p.send_rate_rps,
            })
            .collect(),
        curves: r
            .curves
            .iter()
            .map(|c| CurveJson {
                class: c.class.clone(),
                capacity: capacity_json(&c.capacity),
                points: c.points.iter().map(curve_point_json).collect(),
            })
            .collect(),
        lints: r
            .lints
            .iter()
            .map(|l| LintJson {
                kind: l.kind,
                file: l.file.clone(),
                message: l.message.clone(),
            })
            .collect(),
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slo_core::sweep::capacity;

    #[test]
    fn typed_rates_match_paths_or_file_names() {
        let files = vec!["runs/a.json".to_string(), "b=1.json".to_string()];
        let got = typed_rates(&["a.json=4".into(), "b=1.json=inf".into()], &files)
            .expect("valid entries");
        assert_eq!(
            got,
            [
                Some(RequestRate::PerSecond(4.0)),
                Some(RequestRate::Infinite)
            ]
        );
        assert!(typed_rates(&["c.json=4".into()], &files)
            .expect_err("unknown file")
            .contains("not one of the input files"));
        assert!(typed_rates(&["a.json=0".into()], &files)
            .expect_err("zero")
            .contains("not a positive rate"));
        assert!(typed_rates(&["a.json".into()], &files)
            .expect_err("no =")
            .contains("FILE=RATE"));
    }

    #[test]
    fn check_compares_capacity_with_the_peak() {
        let crossing = capacity(&[(4.0, 1.0), (6.0, 0.995), (8.0, 0.98)], 0.99);
        assert_eq!(check_failure(&crossing, None, None), None);
        assert_eq!(check_failure(&crossing, Some(6.0), None), None);
        assert!(check_failure(&crossing, Some(6.5), None).is_some());
        // 40 req/s at 6 per replica: 7 carry it, 8 with the spare.
        assert_eq!(check_failure(&crossing, Some(40.0), Some(8)), None);
        assert!(check_failure(&crossing, Some(40.0), Some(7))
            .is_some_and(|m| m.contains("needs 8 replicas")));
        let all_pass = capacity(&[(4.0, 1.0)], 0.99);
        assert_eq!(check_failure(&all_pass, Some(4.0), None), None);
        assert!(check_failure(&all_pass, Some(5.0), None)
            .is_some_and(|m| m.contains("measure up to the peak")));
        let none_pass = capacity(&[(4.0, 0.5)], 0.99);
        assert!(check_failure(&none_pass, None, None).is_some());
        assert!(check_failure(&none_pass, Some(1.0), None).is_some());
        assert!(check_failure(&none_pass, Some(1.0), Some(100)).is_some());
        assert!(check_failure(&capacity(&[], 0.99), None, None).is_some());
    }
}
