//! `slo histogram`: vLLM's Prometheus latency histograms, merged across replicas: the fraction
//! under each target, percentiles, and bucket edges that would make every target exact.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use slo_core::evaluate::{fmt_pct, fmt_q};
use slo_core::prometheus::{
    analyse, read_dump, Analysis, Dump, FractionKind, GroupAnalysis, HistogramQuery, JOINT_CAVEAT,
    VLLM_LATENCY_FAMILIES,
};
use slo_core::spec::Indicator;

use crate::input::{self, TargetFlags};
use crate::Outcome;

/// How many located errors are printed per dump before counting the rest.
const PRINTED_ERRORS: usize = 10;

#[derive(clap::Args)]
#[command(mut_arg("itl", |a| a.help("ITL target in ms, compared with every gap (a histogram counts gaps, not requests)")))]
pub struct Args {
    /// `/metrics` dumps (Prometheus text exposition), one per replica.
    #[arg(value_name = "DUMP", required = true)]
    pub dumps: Vec<String>,
    /// Replica names, comma-separated, in the order of the dumps (default: the file names).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub replica_names: Option<Vec<String>>,
    /// Earlier dumps of the same replicas, in the same order: the window between the two is
    /// analysed (counters subtracted, resets detected). Put it last, or repeat it per file.
    #[arg(long, value_name = "DUMP", num_args = 1..)]
    pub before: Vec<String>,
    /// SLO spec JSON: its fixed targets and percentiles are read.
    #[arg(long, value_name = "SPEC.json")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub targets: TargetFlags,
    /// Queue-time target in ms.
    #[arg(long, value_name = "MS")]
    pub queue: Option<f64>,
    /// Percentiles to read, comma-separated (default: the spec's, 50,90,99).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub percentiles: Option<Vec<f64>>,
    /// Output: text or json.
    #[arg(long, default_value = "text")]
    pub format: String,
}

/// `--format json`.
#[derive(Serialize)]
struct HistogramJson<'a> {
    analysis: &'a Analysis,
    dumps: Vec<DumpJson>,
    before: Vec<DumpJson>,
    targets_ms: &'a [(Indicator, f64)],
    caveat: &'static str,
    notes: &'a [String],
}

#[derive(Serialize)]
struct DumpJson {
    file: String,
    replica: String,
    samples: u64,
    histograms: usize,
    error_count: u64,
    errors: Vec<String>,
    warnings: Vec<String>,
}

fn dump_json(path: &str, d: &Dump) -> DumpJson {
    DumpJson {
        file: path.to_string(),
        replica: d.replica.clone(),
        samples: d.n_samples,
        histograms: d.histograms.len(),
        error_count: d.error_count,
        errors: d.errors.iter().map(|e| format!("{path}:{e}")).collect(),
        warnings: d.warnings.clone(),
    }
}

/// Reads one dump; prints its located errors and warnings to stderr.
fn load(path: &str, replica: &str) -> Result<Dump, String> {
    let bytes = crate::file::read(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
    let mut warnings = Vec::new();
    let text =
        slo_core::ingest::decode_text(&bytes, &mut warnings).map_err(|e| format!("{path}: {e}"))?;
    let dump = read_dump(replica, &text);
    for w in warnings.iter().chain(&dump.warnings) {
        eprintln!("warning: {path}: {w}");
    }
    for e in dump.errors.iter().take(PRINTED_ERRORS) {
        eprintln!("skipped: {path}:{e}");
    }
    if dump.error_count > PRINTED_ERRORS as u64 {
        eprintln!(
            "skipped: ... and {} more problems in {path}",
            dump.error_count - PRINTED_ERRORS as u64
        );
    }
    if dump.n_samples == 0 {
        return Err(format!(
            "{path}: no sample could be read; is this a /metrics dump (Prometheus text format)?"
        ));
    }
    if !dump.histograms.iter().any(|h| h.indicator.is_some()) {
        eprintln!("warning: {path}: no vLLM latency histogram in this dump");
    }
    Ok(dump)
}

fn default_name(path: &str) -> String {
    let p = Path::new(path);
    p.file_stem()
        .or_else(|| p.file_name())
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

pub fn run(args: Args) -> Result<Outcome, String> {
    let spec = input::spec_from(args.spec.as_deref(), &args.targets)?;
    let (mut query, mut notes) = HistogramQuery::from_spec(&spec);
    if let Some(ms) = args.queue {
        if !(ms.is_finite() && ms > 0.0) {
            return Err(format!(
                "--queue {ms}: a target must be a positive number of milliseconds"
            ));
        }
        query.targets_ms.retain(|(i, _)| *i != Indicator::Queue);
        query.targets_ms.push((Indicator::Queue, ms));
    }
    if let Some(p) = &args.percentiles {
        if let Some(bad) = p.iter().find(|q| !(0.0..=100.0).contains(*q)) {
            return Err(format!(
                "--percentiles: a percentile lies in 0..100, not {bad}"
            ));
        }
        query.percentiles = p.clone();
    }
    let names: Vec<String> = match &args.replica_names {
        Some(names) if names.len() != args.dumps.len() => {
            return Err(format!(
                "--replica-names has {} names for {} dumps; give one name per dump, in order",
                names.len(),
                args.dumps.len()
            ))
        }
        Some(names) => names.iter().map(|n| n.trim().to_string()).collect(),
        None => args.dumps.iter().map(|p| default_name(p)).collect(),
    };
    if !args.before.is_empty() && args.before.len() != args.dumps.len() {
        return Err(format!(
            "--before has {} dumps for {} replicas; give the earlier dump of every replica, in the same order",
            args.before.len(),
            args.dumps.len()
        ));
    }
    let dumps = args
        .dumps
        .iter()
        .zip(&names)
        .map(|(p, n)| load(p, n))
        .collect::<Result<Vec<Dump>, String>>()?;
    let before = args
        .before
        .iter()
        .zip(&names)
        .map(|(p, n)| load(p, n))
        .collect::<Result<Vec<Dump>, String>>()?;
    let analysis = analyse(&dumps, &before, &query);
    if analysis.groups.is_empty() {
        let names: Vec<&str> = VLLM_LATENCY_FAMILIES.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "no vLLM latency histogram in the dumps (looked for {})",
            names.join(", ")
        ));
    }
    if query.targets_ms.is_empty() {
        notes.push(
            "no targets given (--ttft, --tpot, --itl, --e2e, --queue or --spec): only percentiles are shown".to_string(),
        );
    }
    let mut out = crate::stdout();
    let written = match args.format.as_str() {
        "json" => {
            let json = HistogramJson {
                analysis: &analysis,
                dumps: args
                    .dumps
                    .iter()
                    .zip(&dumps)
                    .map(|(p, d)| dump_json(p, d))
                    .collect(),
                before: args
                    .before
                    .iter()
                    .zip(&before)
                    .map(|(p, d)| dump_json(p, d))
                    .collect(),
                targets_ms: &query.targets_ms,
                caveat: JOINT_CAVEAT,
                notes: &notes,
            };
            serde_json::to_writer_pretty(&mut out, &json)
                .map_err(|e| e.to_string())
                .and_then(|_| writeln!(out).map_err(|e| e.to_string()))
        }
        "text" => write!(out, "{}", text(&analysis, &names, &notes)).map_err(|e| e.to_string()),
        other => return Err(format!("--format {other:?}: use text or json")),
    };
    crate::flushed(written, &mut out, "the result")?;
    Ok(Outcome::Ok)
}

fn ms(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

fn seconds_list(edges: &[f64]) -> String {
    let list: Vec<String> = edges.iter().map(|e| format!("{e}")).collect();
    list.join(", ")
}

fn group_title(g: &GroupAnalysis) -> String {
    let labels: Vec<String> = g
        .labels
        .iter()
        .map(|(n, v)| format!("{n}=\"{v}\""))
        .collect();
    let labels = if labels.is_empty() {
        String::new()
    } else {
        format!("{{{}}} ", labels.join(","))
    };
    format!(
        "{} {labels}— {}; replicas {}",
        g.indicator.label(),
        g.families.join(" + "),
        g.replicas.join(", ")
    )
}

fn text(a: &Analysis, names: &[String], notes: &[String]) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{} dump{} ({}){}\n",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", "),
        if a.windowed {
            "; counts are the increase since the --before dumps"
        } else {
            "; counts are totals since each process started (give --before for a window)"
        }
    ));
    for g in &a.groups {
        s.push('\n');
        s.push_str(&group_title(g));
        s.push('\n');
        s.push_str(&format!(
            "  observations: {}{}\n",
            g.count,
            g.mean_ms
                .map_or(String::new(), |m| format!(", mean {}", ms(m)))
        ));
        for f in &g.fractions {
            let line = match f.kind {
                FractionKind::Exact => format!(
                    "{} (exact: {} s is a bucket edge)",
                    fmt_pct(f.value),
                    f.target_ms / 1000.0
                ),
                FractionKind::Interpolated => format!(
                    "~{} (estimate, interpolated in the {}–{} s bucket; between {} and {})",
                    fmt_pct(f.value),
                    f.bucket_s.0,
                    f.bucket_s.1.map_or("+Inf".to_string(), |e| format!("{e}")),
                    fmt_pct(f.lower),
                    fmt_pct(f.upper)
                ),
                FractionKind::LowerBoundOnly => format!(
                    "at least {} ({} s is above the last finite edge, {} s; only a lower bound is known)",
                    fmt_pct(f.value),
                    f.target_ms / 1000.0,
                    f.bucket_s.0
                ),
            };
            s.push_str(&format!("  at or under {} ms: {line}\n", f.target_ms));
        }
        for p in &g.percentiles {
            let Some(m) = &p.merged else {
                s.push_str(&format!("  p{}: —\n", fmt_q(p.q)));
                continue;
            };
            let value = if m.lower_bound_only {
                format!(">= {} (above the last finite edge)", ms(m.value_ms))
            } else {
                ms(m.value_ms)
            };
            let mut line = format!("  p{} {value}", fmt_q(p.q));
            if let (Some(mean), Some(err), Some(rel)) =
                (p.mean_of_replicas_ms, p.error_ms, p.relative_error)
            {
                line.push_str(&format!(
                    "; the mean of the replicas' p{} is {}, off by {}{} ({}{})",
                    fmt_q(p.q),
                    ms(mean),
                    if err > 0.0 { "+" } else { "" },
                    ms(err),
                    if rel > 0.0 { "+" } else { "" },
                    fmt_pct(rel)
                ));
            }
            s.push_str(&line);
            s.push('\n');
        }
        if g.edges_need_change {
            s.push_str(&format!(
                "  buckets: to make every target exact, use the edges {} (seconds)\n",
                seconds_list(&g.recommended_edges_s)
            ));
        }
        for n in &g.notes {
            s.push_str(&format!("  note: {n}\n"));
        }
    }
    if !a.notes.is_empty() || !notes.is_empty() {
        s.push('\n');
    }
    for n in notes.iter().chain(&a.notes) {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&format!("\ncaveat: {JOINT_CAVEAT}\n"));
    s
}
