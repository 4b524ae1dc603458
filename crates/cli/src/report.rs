//! `slo report`: evaluate request logs against targets.

use std::io::Write;

use slo_core::evaluate::{
    evaluate, fmt_pct, fmt_q, judge, prepare_without_cdf, GroupReport, Outcome, Report,
};
use slo_core::ingest::{self, Format, IngestOptions, TimeUnit};
use slo_core::quantile::Method;
use slo_core::spec::Indicator;

use crate::input::{self, TargetFlags};
use crate::{wire, Outcome as Exit};

#[derive(clap::Args)]
pub struct Args {
    /// Request logs or benchmark result files (CSV, TSV, JSONL, JSON, vLLM, ...).
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,
    /// SLO spec JSON (classes, buckets, targets, method, objective).
    #[arg(long, value_name = "SPEC.json")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub targets: TargetFlags,
    /// Percentiles to report, comma-separated.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub percentiles: Option<Vec<f64>>,
    /// Percentile method: a numpy method name, or nearest_rank.
    #[arg(long, value_name = "NAME")]
    pub method: Option<String>,
    /// Joint-attainment objective, a fraction such as 0.99.
    #[arg(long, value_name = "FRACTION")]
    pub objective: Option<f64>,
    /// Input-length bucket edges in tokens, e.g. 2000,16000.
    #[arg(long, value_name = "EDGES", value_delimiter = ',')]
    pub buckets: Option<Vec<u64>>,
    /// Run duration in seconds, for goodput.
    #[arg(long, value_name = "S")]
    pub duration_s: Option<f64>,
    /// Unit of time columns whose name has no unit suffix.
    #[arg(long, value_name = "s|ms|us|ns", default_value = "ms")]
    pub default_unit: String,
    /// Force the input format instead of detecting it.
    #[arg(long, value_name = "NAME")]
    pub input_format: Option<String>,
    /// Output: text, json, markdown or csv (one row per request).
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Exit 1 when any cell's attainment is below the objective.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<Exit, String> {
    let mut spec = input::spec_from(args.spec.as_deref(), &args.targets)?;
    if let Some(p) = &args.percentiles {
        spec.percentiles = p.clone();
    }
    if let Some(m) = &args.method {
        spec.method = Method::from_name(m).ok_or_else(|| {
            let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
            format!(
                "--method {m:?}: unknown method; use one of {}",
                names.join(", ")
            )
        })?;
    }
    if let Some(o) = args.objective {
        spec.objective = o;
    }
    if let Some(edges) = &args.buckets {
        spec.bucket_edges = edges.clone();
        for class in &mut spec.classes {
            let first = class.targets.first().copied().unwrap_or_default();
            class.targets = vec![first; spec.bucket_edges.len() + 1];
        }
    }
    let errors = spec.validate();
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        return Err(format!(
            "the SLO settings are not valid:\n{}",
            lines.join("\n")
        ));
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
    let mut files = input::load_files(&args.files, &options, &spec)?;
    let table = input::combine(&mut files);
    let duration = ingest::run_duration(&files.iter().collect::<Vec<_>>(), &table, args.duration_s);
    // No output of `slo report` shows a distribution: its percentiles are selected, not sorted.
    let prepared = prepare_without_cdf(&table, &spec);
    let report = evaluate(&table, &prepared, &spec, &duration);
    let mut warnings: Vec<String> = files
        .iter()
        .flat_map(|f| f.warnings.iter().cloned())
        .collect();
    warnings.extend(report.warnings.iter().cloned());

    let mut out = crate::stdout();
    let written = match args.format.as_str() {
        "json" => {
            let json = wire::report(
                &report,
                files.iter().map(|f| f.provenance.clone()).collect(),
                warnings,
            );
            serde_json::to_writer_pretty(&mut out, &json)
                .map_err(|e| e.to_string())
                .and_then(|_| writeln!(out).map_err(|e| e.to_string()))
        }
        "text" => write!(out, "{}", text(&report)).map_err(|e| e.to_string()),
        "markdown" | "md" => write!(out, "{}", markdown(&report)).map_err(|e| e.to_string()),
        "csv" => per_request_csv(&mut out, &table, &prepared, &spec),
        other => {
            return Err(format!(
                "--format {other:?}: use text, json, markdown or csv"
            ))
        }
    };
    crate::flushed(written, &mut out, "the report")?;
    let failing = report
        .cells
        .iter()
        .any(|c| c.meets_objective == Some(false));
    if args.check && failing {
        eprintln!(
            "check failed: at least one cell's joint attainment is below the objective {}",
            fmt_pct(spec.objective)
        );
        return Ok(Exit::CheckFailed);
    }
    Ok(Exit::Ok)
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "—".to_string(),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.2}"),
    }
}

fn group_name(g: &GroupReport) -> String {
    match (&g.class, &g.bucket) {
        (None, _) => "overall".to_string(),
        (Some(c), None) => c.clone(),
        (Some(c), Some(b)) => format!("{c} / {b}"),
    }
}

fn headline(g: &GroupReport, objective: f64) -> String {
    match (g.attainment, g.attainment_ci95) {
        (Some(a), Some((lo, hi))) => format!(
            "{}: {} of {} attempted requests met every target (95 % CI {}–{}); objective {}: {}",
            group_name(g),
            fmt_pct(a),
            g.attempted,
            fmt_pct(lo),
            fmt_pct(hi),
            fmt_pct(objective),
            if a >= objective { "met" } else { "NOT met" }
        ),
        _ => format!("{}: no attempted requests", group_name(g)),
    }
}

/// The readable table of `--format text`.
fn text(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&headline(&r.overall, r.objective));
    s.push('\n');
    match r.overall.goodput_rps {
        Some(g) => s.push_str(&format!("goodput: {g:.3} req/s ({})\n", r.duration.how)),
        None => s.push_str(&format!("goodput: unknown ({})\n", r.duration.how)),
    }
    for note in &r.overall.notes {
        s.push_str(&format!("note: {note}\n"));
    }
    s.push_str(&format!(
        "\npercentiles (ms): value by the method {}, with linear and nearest-rank beside it:\n",
        r.method.name()
    ));
    s.push_str(&format!(
        "{:<6} {:>6} {:>12} {:>12} {:>12} {:>10} {}\n",
        "", "p", "value", "linear", "nearest-rank", "target", "verdict"
    ));
    for ind in &r.overall.indicators {
        if ind.stats.n == 0 {
            continue;
        }
        for (p, v) in ind.stats.percentiles.iter().zip(&ind.verdicts) {
            let verdict = match v.pass {
                Some(true) => "pass",
                Some(false) => "FAIL",
                None => "",
            };
            let flip = if v.flipped {
                "  (verdict flips with method)"
            } else {
                ""
            };
            s.push_str(&format!(
                "{:<6} {:>6} {:>12} {:>12} {:>12} {:>10} {verdict}{flip}\n",
                ind.indicator.label(),
                format!("p{}", fmt_q(p.q)),
                num(p.value),
                num(p.linear),
                num(p.nearest_rank),
                ind.target_ms.map_or(String::new(), |t| format!("{t}")),
            ));
        }
    }
    if r.cells.len() > 1 {
        s.push_str("\nclass × bucket:\n");
        for c in &r.cells {
            s.push_str(&format!(
                "  {:<28} {:>9}  n={:<8} {}\n",
                group_name(c),
                c.attainment.map_or("—".to_string(), fmt_pct),
                c.attempted,
                c.binding
                    .map_or(String::new(), |b| format!("binding: {}", b.label()))
            ));
        }
    }
    if !r.overall.failures.is_empty() {
        s.push_str("\nwhy requests failed:\n");
        for f in &r.overall.failures {
            s.push_str(&format!("  {:<40} {}\n", f.label, f.count));
        }
    }
    if !r.failing.is_empty() {
        s.push_str("\nfailing requests:\n");
        for f in r.failing.iter().take(20) {
            let what: Vec<&str> = f.missed.iter().map(|i| i.label()).collect();
            let what = if what.is_empty() {
                format!("{:?}", f.outcome).to_lowercase()
            } else {
                what.join(" + ")
            };
            s.push_str(&format!("  request {} missed {what}\n", f.id));
        }
        if r.failing_total > 20 {
            s.push_str(&format!("  ... {} in all\n", r.failing_total));
        }
    }
    for w in r.overall.warnings.iter() {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

/// `--format markdown`: the same tables as Markdown.
fn markdown(r: &Report) -> String {
    let mut s = String::from("# SLO report\n\n");
    s.push_str(&format!("{}\n\n", headline(&r.overall, r.objective)));
    s.push_str("| group | attempted | good | attainment | 95 % CI | binding |\n|---|---:|---:|---:|---|---|\n");
    for g in std::iter::once(&r.overall)
        .chain(&r.classes)
        .chain(&r.cells)
    {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            group_name(g).replace('|', "\\|"),
            g.attempted,
            g.good,
            g.attainment.map_or("—".to_string(), fmt_pct),
            g.attainment_ci95.map_or("—".to_string(), |(a, b)| format!(
                "{}–{}",
                fmt_pct(a),
                fmt_pct(b)
            )),
            g.binding.map_or("", |b| b.label())
        ));
    }
    s.push_str(&format!("\n| indicator | percentile | {} | linear | nearest-rank | target |\n|---|---|---:|---:|---:|---:|\n", r.method.name()));
    for ind in &r.overall.indicators {
        for p in &ind.stats.percentiles {
            if ind.stats.n == 0 {
                continue;
            }
            s.push_str(&format!(
                "| {} | p{} | {} | {} | {} | {} |\n",
                ind.indicator.label(),
                fmt_q(p.q),
                num(p.value),
                num(p.linear),
                num(p.nearest_rank),
                ind.target_ms.map_or("—".to_string(), |t| format!("{t} ms"))
            ));
        }
    }
    s
}

fn per_request_csv(
    out: &mut impl Write,
    table: &slo_core::table::RequestTable,
    prepared: &slo_core::evaluate::Prepared,
    spec: &slo_core::spec::Spec,
) -> Result<(), String> {
    let e = |e: std::io::Error| e.to_string();
    writeln!(
        out,
        "id,class,bucket,status,ttft_ms,tpot_ms,itl_ms,e2e_ms,queue_ms,good,missed"
    )
    .map_err(e)?;
    let cell_targets = |row: usize| {
        let key = prepared.cells.get(*prepared.cell_of.get(row)? as usize)?;
        let class = spec.classes.get(key.class)?;
        Some((
            class,
            key,
            class
                .targets
                .get(key.bucket.unwrap_or(0))
                .copied()
                .unwrap_or_default(),
        ))
    };
    let cell = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    let quote = |t: &str| {
        if t.contains([',', '"', '\n']) {
            format!("\"{}\"", t.replace('"', "\"\""))
        } else {
            t.to_string()
        }
    };
    for row in 0..table.len() {
        let Some((class, key, targets)) = cell_targets(row) else {
            continue;
        };
        let v = judge(table, prepared, row, &targets, spec.cancellations);
        let missed: Vec<&str> = Indicator::ALL
            .iter()
            .filter(|i| v.missed & i.bit() != 0)
            .map(|i| i.key())
            .collect();
        let present = |x: Option<&f64>| x.copied().filter(|x| !x.is_nan());
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            quote(&table.id(row)),
            quote(&class.name),
            quote(
                &key.bucket
                    .map_or("unknown length".to_string(), |b| spec.bucket_label(b))
            ),
            table.status.get(row).map_or("", |s| s.name()),
            cell(table.ttft_ms(row)),
            cell(present(prepared.tpot_ms.get(row))),
            cell(present(prepared.itl_stat_ms.get(row))),
            cell(table.e2e_ms(row)),
            cell(table.queue_ms(row)),
            if v.attempted() {
                (v.outcome == Outcome::Good).to_string()
            } else {
                "excluded".to_string()
            },
            missed.join(";"),
        )
        .map_err(e)?;
    }
    Ok(())
}
