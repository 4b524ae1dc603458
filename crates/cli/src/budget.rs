//! `slo budget`: the error budget of the SLO window spent by a request log: consumed, remaining,
//! burn rate per slice, time to exhaustion, the burn-rate alerts that would have fired, and a
//! queue-vs-TTFT diagnosis of the slices where TTFT rose.

use std::io::Write;

use serde::Serialize;
use slo_core::budget::fmt_span as span;
use slo_core::budget::{
    budget, diagnose, events, BudgetConfig, BudgetError, BudgetReport, Diagnosis, DiagnosisConfig,
    Severity, VolumeSource,
};
use slo_core::evaluate::{fmt_pct, fmt_q};
use slo_core::ingest::{Format, IngestOptions, Provenance, TimeUnit};

use crate::input::{self, TargetFlags};
use crate::Outcome;

/// How many slices the text output lists.
const LISTED_SLICES: usize = 24;

#[derive(clap::Args)]
pub struct Args {
    /// Request logs with a start time per request (CSV, TSV, JSONL, JSON, ...).
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<String>,
    /// SLO spec JSON (classes, buckets, targets, objective, window).
    #[arg(long, value_name = "SPEC.json")]
    pub spec: Option<String>,
    #[command(flatten)]
    pub targets: TargetFlags,
    /// Joint-attainment objective, a fraction such as 0.99 (default: the spec's).
    #[arg(long, value_name = "FRACTION")]
    pub objective: Option<f64>,
    /// SLO window in days (default: the spec's, 28).
    #[arg(long, value_name = "DAYS")]
    pub window_days: Option<f64>,
    /// Requests per window (default: the spec's expected volume, else from the log).
    #[arg(long, value_name = "N")]
    pub volume: Option<f64>,
    /// Width of the burn-rate and diagnosis slices, minutes.
    #[arg(long, value_name = "M", default_value_t = 60.0)]
    pub slice_minutes: f64,
    /// Unit of time columns whose name has no unit suffix.
    #[arg(long, value_name = "s|ms|us|ns", default_value = "ms")]
    pub default_unit: String,
    /// Force the input format instead of detecting it.
    #[arg(long, value_name = "NAME")]
    pub input_format: Option<String>,
    /// Output: text or json.
    #[arg(long, default_value = "text")]
    pub format: String,
}

/// `--format json`.
#[derive(Serialize)]
struct BudgetJson<'a> {
    budget: &'a BudgetReport,
    diagnosis: Option<&'a Diagnosis>,
    /// Why there is no diagnosis.
    diagnosis_unavailable: Option<String>,
    requests: RequestsJson,
    files: Vec<Provenance>,
    warnings: &'a [String],
}

#[derive(Serialize)]
struct RequestsJson {
    attempted_with_timestamp: u64,
    excluded_cancellations: u64,
    unassigned: u64,
    without_timestamp: u64,
}

pub fn run(args: Args) -> Result<Outcome, String> {
    let mut spec = input::spec_from(args.spec.as_deref(), &args.targets)?;
    if let Some(o) = args.objective {
        spec.objective = o;
    }
    let window_days = args.window_days.unwrap_or_else(|| spec.window.days());
    let volume = args
        .volume
        .or(spec.expected_requests_per_window.map(|v| v as f64));
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
    let ev = events(&table, &spec);
    if ev.events.is_empty() && ev.no_timestamp > 0 {
        return Err(format!(
            "none of the {} attempted requests has a timestamp; the budget needs a start (or end) time per request, e.g. a start_time column",
            ev.no_timestamp
        ));
    }
    let mut config = BudgetConfig::new(spec.objective, window_days);
    config.volume = volume;
    config.slice_s = args.slice_minutes * 60.0;
    let report = budget(&ev.events, &config).map_err(|e| e.to_string())?;
    let diagnosis = diagnose(
        &table,
        &DiagnosisConfig {
            slice_s: config.slice_s,
            ..DiagnosisConfig::default()
        },
    );
    let mut warnings: Vec<String> = files
        .iter()
        .flat_map(|f| f.warnings.iter().cloned())
        .collect();
    if ev.no_timestamp > 0 {
        warnings.push(format!(
            "{} attempted requests ({} bad) have no timestamp and are left out of the budget",
            ev.no_timestamp, ev.no_timestamp_bad
        ));
    }
    if ev.unassigned > 0 {
        warnings.push(format!(
            "{} requests matched no class and are left out; add a default class to include them",
            ev.unassigned
        ));
    }
    if spec
        .classes
        .iter()
        .all(|c| c.targets.iter().all(|t| t.indicators().is_empty()))
    {
        warnings.push(
            "no latency target (--ttft, --tpot, --itl, --e2e or --spec): only errors and timeouts count as bad".to_string(),
        );
    }
    let mut out = crate::stdout();
    let written = match args.format.as_str() {
        "json" => {
            let (diagnosis, unavailable) = match &diagnosis {
                Ok(d) => (Some(d), None),
                Err(e) => (None, Some(e.to_string())),
            };
            let json = BudgetJson {
                budget: &report,
                diagnosis,
                diagnosis_unavailable: unavailable,
                requests: RequestsJson {
                    attempted_with_timestamp: ev.events.len() as u64,
                    excluded_cancellations: ev.excluded,
                    unassigned: ev.unassigned,
                    without_timestamp: ev.no_timestamp,
                },
                files: files.iter().map(|f| f.provenance.clone()).collect(),
                warnings: &warnings,
            };
            serde_json::to_writer_pretty(&mut out, &json)
                .map_err(|e| e.to_string())
                .and_then(|_| writeln!(out).map_err(|e| e.to_string()))
        }
        "text" => {
            let mut s = text(&report, ev.excluded);
            s.push_str(&diagnosis_text(&diagnosis));
            for w in &warnings {
                s.push_str(&format!("warning: {w}\n"));
            }
            write!(out, "{s}").map_err(|e| e.to_string())
        }
        other => return Err(format!("--format {other:?}: use text or json")),
    };
    crate::flushed(written, &mut out, "the result")?;
    Ok(Outcome::Ok)
}

/// A time on the log's clock: UTC date and time for epoch seconds, else seconds.
fn when(t: f64) -> String {
    if !(t > 1e8 && t < 1e11) {
        return format!("t={t:.0} s");
    }
    let secs = t.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn rate(b: f64) -> String {
    if b >= 10.0 {
        format!("{b:.1}")
    } else {
        format!("{b:.2}")
    }
}

fn text(r: &BudgetReport, excluded: u64) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "error budget: objective {} of requests good over {} days → {} may be bad\n",
        fmt_pct(r.objective),
        r.window_days,
        fmt_pct(r.allowed_bad_fraction)
    ));
    let (Some(from), Some(to)) = (r.from_s, r.to_s) else {
        s.push_str("no attempted requests with a timestamp: nothing was spent\n");
        return s;
    };
    s.push_str(&format!(
        "log: {} attempted requests from {} to {}{}\n",
        r.attempted,
        when(from),
        when(to),
        if excluded > 0 {
            format!(" ({excluded} cancellations excluded)")
        } else {
            String::new()
        }
    ));
    if let (Some(v), Some(src)) = (r.volume, r.volume_source) {
        let how = match src {
            VolumeSource::Typed => "given".to_string(),
            VolumeSource::Log => "the log covers the whole window".to_string(),
            VolumeSource::Extrapolated { covered_s } => format!(
                "extrapolated: the log covers {} of the window",
                span(covered_s)
            ),
        };
        s.push_str(&format!("volume: {v:.0} requests per window ({how})\n"));
    }
    if let Some(allowed) = r.allowed_bad_requests {
        s.push_str(&format!("allowed bad: {allowed:.1} requests\n"));
    }
    match (r.consumed, r.remaining, r.remaining_requests) {
        (Some(c), Some(rem), Some(rr)) => s.push_str(&format!(
            "spent: {} bad requests = {} of the budget; {} left ({rr:.1} requests)\n",
            r.bad,
            fmt_pct(c),
            fmt_pct(rem)
        )),
        _ => s.push_str(&format!("spent: {} bad requests\n", r.bad)),
    }
    match r.current_burn {
        Some(b) => {
            let eta = match r.time_to_exhaustion_s {
                Some(t) if t <= 0.0 => "; the budget is already spent".to_string(),
                Some(t) => format!("; at this rate the budget runs out in {}", span(t)),
                None => "; nothing is being spent".to_string(),
            };
            s.push_str(&format!(
                "current burn (last {}): {}×{eta}\n",
                span(r.current_s),
                rate(b)
            ));
        }
        None => s.push_str(&format!(
            "current burn (last {}): no requests\n",
            span(r.current_s)
        )),
    }
    if let Some(p) = &r.peak {
        s.push_str(&format!(
            "peak burn: {}× in the {} slice from {} ({} of {} bad)\n",
            rate(p.burn_rate),
            span(r.slice_s),
            when(p.start_s),
            p.bad,
            p.attempted
        ));
    }
    s.push_str("\nburn-rate alerts (Google SRE workbook, multiwindow):\n");
    for a in &r.alerts {
        let kind = match a.alert.severity {
            Severity::Page => "page",
            Severity::Ticket => "ticket",
        };
        let head = format!(
            "  {kind:<6} {:<12} burn > {} over {} and {} ({} of this window's budget per {})",
            a.alert.name,
            a.alert.burn_rate,
            span(a.alert.long_s),
            span(a.alert.short_s),
            fmt_pct(a.budget_fraction_for_window),
            span(a.alert.long_s)
        );
        match a.first_fired_s {
            None => s.push_str(&format!("{head}: would not have fired\n")),
            Some(first) => {
                s.push_str(&format!(
                    "{head}: would have fired {} time{}, first at {}\n",
                    a.intervals.len(),
                    if a.intervals.len() == 1 { "" } else { "s" },
                    when(first)
                ));
                for i in &a.intervals {
                    s.push_str(&format!(
                        "           {} → {} ({}{})\n",
                        when(i.start_s),
                        when(i.end_s),
                        span(i.duration_s()),
                        if i.ongoing {
                            ", still firing at the end of the log"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
    }
    let mut hot: Vec<_> = r.slices.iter().filter(|sl| sl.over_budget()).collect();
    if !hot.is_empty() {
        s.push_str(&format!(
            "\nslices spending faster than the budget allows (burn > 1), {} of {}:\n",
            hot.len(),
            r.slices.len()
        ));
        let total = hot.len();
        hot.truncate(LISTED_SLICES);
        for sl in hot {
            s.push_str(&format!(
                "  {}  {:>7} requests  {:>6} bad  burn {}\n",
                when(sl.start_s),
                sl.attempted,
                sl.bad,
                sl.burn_rate.map_or("—".to_string(), rate)
            ));
        }
        if total > LISTED_SLICES {
            s.push_str(&format!(
                "  ... {} more (--format json lists every slice)\n",
                total - LISTED_SLICES
            ));
        }
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

fn diagnosis_text(d: &Result<Diagnosis, BudgetError>) -> String {
    let d = match d {
        Ok(d) => d,
        Err(e) => return format!("\nqueue vs TTFT: not available: {e}\n"),
    };
    let opt =
        |v: Option<f64>, unit: &str| v.map_or("—".to_string(), |x| format!("{x:.0} {unit}"));
    let mut s = format!(
        "\nqueue vs TTFT (p{} per {} slice; baseline = median of the slices: TTFT {}, queue {}, prompts {}):\n",
        fmt_q(d.q),
        span(d.slice_s),
        opt(d.baseline_ttft_ms, "ms"),
        opt(d.baseline_queue_ms, "ms"),
        opt(d.baseline_input_tokens, "tokens")
    );
    if d.incidents.is_empty() {
        s.push_str("  no slice with a TTFT rise\n");
    }
    for i in &d.incidents {
        s.push_str(&format!(
            "  {} → {}: {} (peak TTFT {}, queue {}, prompts {})\n",
            when(i.start_s),
            when(i.end_s),
            i.verdict.describe(),
            opt(Some(i.peak_ttft_ms), "ms"),
            opt(i.queue_ms_at_peak, "ms"),
            opt(i.input_tokens_at_peak, "tokens")
        ));
    }
    for n in &d.notes {
        s.push_str(&format!("  note: {n}\n"));
    }
    s
}
