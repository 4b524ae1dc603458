//! `slo compare`: two runs (a baseline A and a candidate B) under the same targets: did any
//! group's joint attainment change beyond chance, and how far did the percentiles move?

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;
use slo_core::compare::{compare, Comparison, GroupComparison, Side};
use slo_core::evaluate::{fmt_pct, fmt_q, report, Report};
use slo_core::ingest::{self, Format, IngestOptions, Provenance, TimeUnit};
use slo_core::spec::Spec;

use crate::input::{self, TargetFlags};
use crate::Outcome as Exit;

#[derive(clap::Args)]
pub struct Args {
    /// Run A, the baseline: a request log or benchmark result file.
    #[arg(value_name = "A")]
    pub a: String,
    /// Run B, the candidate, evaluated with the same spec.
    #[arg(value_name = "B")]
    pub b: String,
    /// SLO spec JSON (classes, buckets, targets, method).
    #[arg(long, value_name = "SPEC.json")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub targets: TargetFlags,
    /// Percentiles whose shift to report, comma-separated (default: the spec's).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub percentiles: Option<Vec<f64>>,
    /// Unit of time columns whose name has no unit suffix.
    #[arg(long, value_name = "s|ms|us|ns", default_value = "ms")]
    pub default_unit: String,
    /// Force the input format of both files instead of detecting it.
    #[arg(long, value_name = "NAME")]
    pub input_format: Option<String>,
    /// Output: text or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Exit 1 when any class × bucket cell's attainment got significantly worse (p < 0.05).
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<Exit, String> {
    let mut spec = input::spec_from(args.spec.as_deref(), &args.targets)?;
    if let Some(p) = &args.percentiles {
        spec.percentiles = p.clone();
        let errors = spec.validate();
        if !errors.is_empty() {
            let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
            return Err(format!("--percentiles is not valid:\n{}", lines.join("\n")));
        }
    }
    let options = IngestOptions {
        format: match &args.input_format {
            Some(f) => Some(
                Format::from_name(f)
                    .ok_or_else(|| format!("--input-format {f:?}: unknown format"))?,
            ),
            None => None,
        },
        default_time_unit: TimeUnit::from_name(&args.default_unit).ok_or_else(|| {
            format!(
                "--default-unit {:?}: use s, ms, us or ns",
                args.default_unit
            )
        })?,
        ..IngestOptions::default()
    };
    if !matches!(args.format.as_str(), "text" | "json") {
        return Err(format!("--format {:?}: use text or json", args.format));
    }
    let (a, files_a) = evaluate_run(&args.a, &options, &spec)?;
    let (b, files_b) = evaluate_run(&args.b, &options, &spec)?;
    let comparison = compare(&a, &b);

    let mut out = crate::stdout();
    let written = if args.format == "json" {
        let mut warnings: Vec<String> = a.warnings.iter().map(|w| format!("A: {w}")).collect();
        warnings.extend(b.warnings.iter().map(|w| format!("B: {w}")));
        warnings.extend(comparison.warnings.iter().cloned());
        let json = CompareJson {
            files_a,
            files_b,
            method_a: comparison.method_a.name(),
            method_b: comparison.method_b.name(),
            alpha: comparison.alpha,
            any_cell_worse: comparison.any_cell_worse(),
            overall: group_json(&comparison.overall),
            classes: comparison.classes.iter().map(group_json).collect(),
            groups: comparison.cells.iter().map(group_json).collect(),
            warnings,
        };
        serde_json::to_writer_pretty(&mut out, &json)
            .map_err(|e| e.to_string())
            .and_then(|_| writeln!(out).map_err(|e| e.to_string()))
    } else {
        write!(out, "{}", text(&comparison, &args.a, &args.b)).map_err(|e| e.to_string())
    };
    crate::flushed(written, &mut out, "the comparison")?;
    if args.check && comparison.any_cell_worse() {
        let worse: Vec<String> = comparison
            .cells
            .iter()
            .filter(|g| g.change == slo_core::compare::Change::Worse)
            .map(group_name)
            .collect();
        eprintln!(
            "check failed: attainment got significantly worse (p < {}) in {}",
            comparison.alpha,
            worse.join(", ")
        );
        return Ok(Exit::CheckFailed);
    }
    Ok(Exit::Ok)
}

/// Loads one run and evaluates it against `spec`.
fn evaluate_run(
    path: &str,
    options: &IngestOptions,
    spec: &Spec,
) -> Result<(Report, Vec<Provenance>), String> {
    let mut files = input::load_files(&[path.to_string()], options, spec)?;
    let table = input::combine(&mut files);
    let duration = ingest::run_duration(&files.iter().collect::<Vec<_>>(), &table, None);
    let report = report(&table, spec, &duration);
    Ok((report, files.into_iter().map(|f| f.provenance).collect()))
}

// ---------------------------------------------------------------- text

fn group_name(g: &GroupComparison) -> String {
    match (&g.class, &g.bucket) {
        (None, _) => "overall".to_string(),
        (Some(c), None) => c.clone(),
        (Some(c), Some(b)) => format!("{c} / {b}"),
    }
}

fn side_text(s: Option<&Side>) -> String {
    match s {
        None => "absent".to_string(),
        Some(s) => match (s.attainment, s.attainment_ci95) {
            (Some(a), Some((lo, hi))) => format!(
                "{} ({}–{}) n={}",
                fmt_pct(a),
                fmt_pct(lo),
                fmt_pct(hi),
                s.attempted
            ),
            _ => format!("— n={}", s.attempted),
        },
    }
}

/// A difference of attainments in percentage points: -0.09 -> "-9 pts".
fn signed_points(d: f64) -> String {
    let s = fmt_pct(d).replace(" %", " pts");
    if d > 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

fn p_text(p: Option<f64>) -> String {
    match p {
        None => "—".to_string(),
        Some(p) if p < 1e-4 => format!("{p:.1e}"),
        Some(p) => format!("{p:.4}"),
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(x) if x.abs() >= 100.0 => format!("{x:+.1}"),
        Some(x) => format!("{x:+.2}"),
    }
}

/// The readable comparison of `--format text`.
fn text(c: &Comparison, a: &str, b: &str) -> String {
    let mut s = format!(
        "A (baseline): {a}\nB (candidate): {b}\n\
         joint attainment, B − A; two-sided pooled z-test, significant at p < {}:\n",
        c.alpha
    );
    s.push_str(&format!(
        "  {:<24} {:<32} {:<32} {:>10} {:>7} {:>8}  verdict\n",
        "group", "A (95 % CI)", "B (95 % CI)", "B − A", "z", "p"
    ));
    let groups: Vec<&GroupComparison> = std::iter::once(&c.overall)
        .chain(&c.classes)
        .chain(&c.cells)
        .collect();
    for g in &groups {
        let verdict = match g.change {
            slo_core::compare::Change::Worse => "WORSE".to_string(),
            other => other.label().to_string(),
        };
        s.push_str(&format!(
            "  {:<24} {:<32} {:<32} {:>10} {:>7} {:>8}  {verdict}\n",
            group_name(g),
            side_text(g.a.as_ref()),
            side_text(g.b.as_ref()),
            g.diff.map_or("—".to_string(), signed_points),
            g.z.map_or("—".to_string(), |z| format!("{z:.2}")),
            p_text(g.p_value),
        ));
    }
    let method = if c.method_a == c.method_b {
        c.method_a.name().to_string()
    } else {
        format!("{} in A, {} in B", c.method_a.name(), c.method_b.name())
    };
    s.push_str(&format!(
        "\npercentile shifts, B − A in ms (method {method}):\n"
    ));
    for g in &groups {
        for ind in &g.shifts {
            let cells: Vec<String> = ind
                .percentiles
                .iter()
                .map(|p| format!("p{} {}", fmt_q(p.q), ms(p.shift_ms)))
                .collect();
            s.push_str(&format!(
                "  {:<24} {:<6} {}\n",
                group_name(g),
                ind.indicator.label(),
                cells.join("  ")
            ));
        }
    }
    for g in &groups {
        for n in &g.notes {
            s.push_str(&format!("note: {}: {n}\n", group_name(g)));
        }
    }
    for w in &c.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

// ---------------------------------------------------------------- json (docs/cli.md)

#[derive(Serialize)]
struct CompareJson {
    files_a: Vec<Provenance>,
    files_b: Vec<Provenance>,
    method_a: &'static str,
    method_b: &'static str,
    alpha: f64,
    /// The `--check` condition.
    any_cell_worse: bool,
    overall: GroupJson,
    classes: Vec<GroupJson>,
    /// One per class × bucket cell present in either run.
    groups: Vec<GroupJson>,
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct SideJson {
    attempted: u64,
    good: u64,
    attainment: Option<f64>,
    attainment_ci95: Option<[f64; 2]>,
}

#[derive(Serialize)]
struct ShiftJson {
    a: Option<f64>,
    b: Option<f64>,
    shift: Option<f64>,
}

#[derive(Serialize)]
struct GroupJson {
    class: Option<String>,
    bucket: Option<String>,
    a: Option<SideJson>,
    b: Option<SideJson>,
    diff: Option<f64>,
    z: Option<f64>,
    p_value: Option<f64>,
    /// "better", "worse", "no significant change" or "not tested".
    verdict: &'static str,
    /// indicator key ("ttft_ms") -> percentile as vLLM writes it ("90") -> A, B and B − A in ms.
    percentile_shifts: BTreeMap<&'static str, BTreeMap<String, ShiftJson>>,
    notes: Vec<String>,
}

fn side_json(s: &Side) -> SideJson {
    SideJson {
        attempted: s.attempted,
        good: s.good,
        attainment: s.attainment,
        attainment_ci95: s.attainment_ci95.map(|(lo, hi)| [lo, hi]),
    }
}

fn group_json(g: &GroupComparison) -> GroupJson {
    GroupJson {
        class: g.class.clone(),
        bucket: g.bucket.clone(),
        a: g.a.as_ref().map(side_json),
        b: g.b.as_ref().map(side_json),
        diff: g.diff,
        z: g.z,
        p_value: g.p_value,
        verdict: g.change.label(),
        percentile_shifts: g
            .shifts
            .iter()
            .map(|ind| {
                let by_q = ind
                    .percentiles
                    .iter()
                    .map(|p| {
                        (
                            fmt_q(p.q),
                            ShiftJson {
                                a: p.a_ms,
                                b: p.b_ms,
                                shift: p.shift_ms,
                            },
                        )
                    })
                    .collect();
                (ind.indicator.key(), by_q)
            })
            .collect(),
        notes: g.notes.clone(),
    }
}
