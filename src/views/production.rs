//! Production: what running replicas measured. Two sources, two sections:
//!
//! - vLLM's Prometheus histograms, pasted per replica (`slo_core::prometheus`): the fraction of
//!   observations at or under each target, merged percentiles against the mean of per-replica
//!   ones, bucket advice, counter resets;
//! - the request logs loaded on the Data tab (`slo_core::budget`): the error budget spent, the
//!   burn rate, the alerts that would have fired, and the queue-vs-TTFT diagnosis.
//!
//! Every figure comes from the core; this view keeps the pasted text and formats. As in the
//! Sweep view, read-only blocks are escaped HTML strings and the inputs are read by delegated
//! handlers (`data-action`, `data-replica`), which keeps the app's wasm small.

use leptos::prelude::*;
use plotly::common::{DashType, Line, LineShape, Title};
use plotly::layout::{Axis, AxisType, Shape, ShapeLayer, ShapeLine, ShapeType};
use slo_core::budget::fmt_span as span;
use slo_core::budget::{
    budget, diagnose, events, BudgetConfig, BudgetError, BudgetReport, Diagnosis, DiagnosisConfig,
    Severity, SliceVerdict, VolumeSource,
};
use slo_core::evaluate::{fmt_pct, fmt_q};
use slo_core::prometheus::{
    analyse, read_dump, Analysis, Dump, FractionKind, FractionUnder, GroupAnalysis, HistogramQuery,
    VLLM_LATENCY_FAMILIES,
};
use wasm_bindgen::{JsCast, JsValue};

use super::sweep::{
    action, esc, hlabel, hline, label, layout, sentence, trace, warning_list, GREY, RED,
};
use crate::chart::{Chart, Figure};
use crate::fmt;
use crate::state::{AppState, Shared};

/// Two replicas for "try the example": a newer vLLM (`engine` label, both ITL family names) and
/// an older one (ITL under its older name, no `engine` label).
const EXAMPLE: [(&str, &str); 2] = [
    (
        "replica-a",
        include_str!("../../crates/core/tests/fixtures/prometheus/replica_a.prom"),
    ),
    (
        "replica-b",
        include_str!("../../crates/core/tests/fixtures/prometheus/replica_b.prom"),
    ),
];

/// The core's caveat (`prometheus::JOINT_CAVEAT`), said for this page: the logs below can do
/// what the histograms cannot.
const CAVEAT: &str = "Histograms give one share per indicator, not joint attainment: the requests slow to start and those slow to stream can be different ones, so the share that met every target at once can be lower than every share here. The error budget below, from request logs, counts requests that met every target.";

/// One replica's pasted text: its name, its dump now, and an earlier dump (may be empty).
#[derive(Clone, Default, PartialEq)]
struct Replica {
    name: String,
    now: String,
    before: String,
}

/// The tab's inputs, kept outside the view so that they survive a tab switch.
#[derive(Clone)]
struct Store {
    replicas: ArcRwSignal<Vec<Replica>>,
    /// Bumped when replicas are added, removed or replaced: the editors are re-drawn then only,
    /// never while the user types.
    layout: ArcRwSignal<u32>,
    /// Width of the burn-rate and diagnosis slices.
    slice_s: ArcRwSignal<f64>,
}

thread_local! {
    static STORE: Store = Store {
        replicas: ArcRwSignal::new(vec![Replica { name: "replica-1".to_string(), ..Replica::default() }]),
        layout: ArcRwSignal::new(0),
        slice_s: ArcRwSignal::new(3600.0),
    };
}

/// The dumps as read, and what the core made of them.
struct Histograms {
    /// (replica name, dump now, earlier dump) for every replica with text.
    dumps: Vec<(String, Dump, Option<Dump>)>,
    analysis: Analysis,
    /// What the spec's targets cannot tell histograms (per-token TTFT targets).
    notes: Vec<String>,
    n_targets: usize,
}

/// What the logs say about the budget: the report or why there is none, and the diagnosis.
struct BudgetResult {
    report: Result<BudgetReport, NoBudget>,
    diagnosis: Result<Diagnosis, BudgetError>,
    /// Attempted requests without a timestamp, and how many of them were bad.
    no_timestamp: (u64, u64),
    excluded: u64,
}

/// Why there is no budget report. A log without timestamps is a log that cannot give one, said
/// in amber beside what the rest of the page still shows; anything else needs fixing (red).
enum NoBudget {
    /// No attempted request has a start or end time.
    NoTimestamps(String),
    /// Invalid targets, or the budget's own error.
    Error(String),
}

#[component]
pub fn ProductionView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let s = STORE.with(Store::clone);
    let replicas = RwSignal::from(s.replicas.clone());
    let layout_version = RwSignal::from(s.layout.clone());
    let slice_s = RwSignal::from(s.slice_s.clone());
    let spec = state.spec;

    let histograms = Memo::new(move |_| {
        let (query, notes) = spec.with(HistogramQuery::from_spec);
        let mut dumps = Vec::new();
        replicas.with(|list| {
            for r in list.iter().filter(|r| !r.now.trim().is_empty()) {
                let name = r.name.trim().to_string();
                let now = read_dump(&name, &r.now);
                let before = (!r.before.trim().is_empty()).then(|| read_dump(&name, &r.before));
                dumps.push((name, now, before));
            }
        });
        let now: Vec<Dump> = dumps.iter().map(|d| d.1.clone()).collect();
        let before: Vec<Dump> = dumps.iter().filter_map(|d| d.2.clone()).collect();
        let analysis = analyse(&now, &before, &query);
        Shared::new(Histograms {
            dumps,
            analysis,
            notes,
            n_targets: query.targets_ms.len(),
        })
    });
    let budget_result = Memo::new(move |_| {
        let table = state.table.get();
        if table.0.is_empty() {
            return None;
        }
        let slice = slice_s.get();
        spec.with(|spec| {
            let ev = events(&table.0, spec);
            let report = if !spec.validate().is_empty() {
                Err(NoBudget::Error(
                    "the targets are not valid; fix them on the Targets tab".to_string(),
                ))
            } else if ev.events.is_empty() {
                Err(NoBudget::NoTimestamps(format!(
                    "none of the {} attempted requests has a timestamp; the error budget needs a start (or end) time per request, such as a start_time column",
                    fmt::count(ev.no_timestamp)
                )))
            } else {
                let mut config = BudgetConfig::new(spec.objective, spec.window.days());
                config.volume = spec.expected_requests_per_window.map(|v| v as f64);
                config.slice_s = slice;
                budget(&ev.events, &config).map_err(|e| NoBudget::Error(e.to_string()))
            };
            let diagnosis = diagnose(
                &table.0,
                &DiagnosisConfig {
                    slice_s: slice,
                    ..DiagnosisConfig::default()
                },
            );
            Some(Shared::new(BudgetResult {
                report,
                diagnosis,
                no_timestamp: (ev.no_timestamp, ev.no_timestamp_bad),
                excluded: ev.excluded,
            }))
        })
    });

    let html_editors = Memo::new(move |_| {
        layout_version.track();
        replicas.with_untracked(|list| editors_html(list))
    });
    let html_histograms = Memo::new(move |_| histograms.with(|h| histograms_html(&h.0)));
    let html_budget = Memo::new(move |_| {
        let slice = slice_s.get_untracked();
        budget_result.with(|r| {
            r.as_ref()
                .map_or_else(budget_empty_html, |r| budget_html(&r.0, slice))
        })
    });
    let html_diagnosis = Memo::new(move |_| {
        budget_result.with(|r| r.as_ref().map_or(String::new(), |r| diagnosis_html(&r.0)))
    });
    let no_budget = Memo::new(move |_| {
        budget_result.with(|r| !matches!(r.as_ref().map(|r| &r.0.report), Some(Ok(_))))
    });
    let no_diagnosis = Memo::new(move |_| {
        budget_result.with(|r| !matches!(r.as_ref().map(|r| &r.0.diagnosis), Some(Ok(_))))
    });
    let burndown = Signal::derive(move || {
        budget_result.with(|r| match r.as_ref().map(|r| &r.0.report) {
            Some(Ok(b)) => burndown_figure(b),
            _ => Figure::new().to_json(),
        })
    });
    let burn = Signal::derive(move || {
        budget_result.with(|r| match r.as_ref().map(|r| &r.0.report) {
            Some(Ok(b)) => burn_figure(b),
            _ => Figure::new().to_json(),
        })
    });
    let diag = Signal::derive(move || {
        budget_result.with(|r| match r.as_ref().map(|r| &r.0.diagnosis) {
            Some(Ok(d)) => diagnosis_figure(d),
            _ => Figure::new().to_json(),
        })
    });

    // Events, dispatched on `data-action` and `data-replica` of the target.
    let replica_of = |ev: &web_sys::Event| -> Option<usize> {
        ev.target()?
            .dyn_into::<web_sys::Element>()
            .ok()?
            .get_attribute("data-replica")?
            .parse()
            .ok()
    };
    let on_input = move |ev: web_sys::Event| {
        let (Some(k), Some(what)) = (replica_of(&ev), action(&ev)) else {
            return;
        };
        let text = event_target_value(&ev);
        replicas.update(|v| {
            if let Some(r) = v.get_mut(k) {
                match what.as_str() {
                    "name" => r.name = text,
                    "now" => r.now = text,
                    "before" => r.before = text,
                    _ => {}
                }
            }
        });
    };
    let on_click = move |ev: web_sys::MouseEvent| {
        let changed = match action(&ev).as_deref() {
            Some("add") => {
                replicas.update(|v| {
                    let name = format!("replica-{}", v.len() + 1);
                    v.push(Replica {
                        name,
                        ..Replica::default()
                    })
                });
                true
            }
            Some("remove") => {
                if let Some(k) = replica_of(&ev) {
                    replicas.update(|v| {
                        if k < v.len() && v.len() > 1 {
                            v.remove(k);
                        }
                    });
                }
                true
            }
            Some("example") => {
                replicas.set(
                    EXAMPLE
                        .iter()
                        .map(|(name, text)| Replica {
                            name: name.to_string(),
                            now: text.to_string(),
                            before: String::new(),
                        })
                        .collect(),
                );
                true
            }
            _ => false,
        };
        if changed {
            layout_version.update(|n| *n += 1);
        }
    };
    let on_change = move |ev: web_sys::Event| {
        if action(&ev).as_deref() == Some("slice") {
            if let Ok(s) = event_target_value(&ev).parse::<f64>() {
                slice_s.set(s);
            }
        }
    };

    view! {
        <section class="panel production" on:input=on_input on:click=on_click on:change=on_change>
            <h1>"Production: what your replicas measured"</h1>
            <p class="lead">
                "Two ways to check the SLO on live traffic. The engine's Prometheus histograms tell, per indicator, how much traffic stayed under each target. "
                "Request logs with timestamps tell which requests met every target at once, how fast the error budget is being spent, and which alerts would have fired."
            </p>
            <h2>"Engine histograms (Prometheus " <code>"/metrics"</code> ")"</h2>
            <p class="muted">
                "Paste what " <code>"curl http://REPLICA:8000/metrics"</code> " returned, one box per replica; the replicas are merged bucket by bucket. "
                "For a window (say the last hour) instead of totals since each process started, open “Earlier dump” and paste what the same replica served at the start of the window."
            </p>
            <div class="replicas" data-testid="prod-replicas" inner_html=html_editors></div>
            <p class="actions">
                <button data-action="add" data-testid="prod-add-replica">"+ Add replica"</button>
                " "
                <button class="link" data-action="example" data-testid="prod-example">"Try two example replicas"</button>
            </p>
            <div inner_html=html_histograms></div>
            <h2>"Error budget from request logs"</h2>
            <div inner_html=html_budget></div>
            <div class:hidden=no_budget>
                <Chart id="chart-burndown" label="Error budget remaining over time" figure=burndown />
                <Chart id="chart-burn" label="Burn rate per slice, with the alert thresholds" figure=burn />
                <p class="muted chart-note">"Burn rate 1 spends exactly the budget over the window; 14.4 spends 2 % of a 30-day budget in one hour. The dashed lines are the alert thresholds; an alert also needs its short window above the line."</p>
            </div>
            <div inner_html=html_diagnosis></div>
            <div class:hidden=no_diagnosis>
                <Chart id="chart-diagnosis" label="TTFT and queue time per slice, incidents shaded" figure=diag />
            </div>
        </section>
    }
}

// ---- Prometheus histograms ----

/// The replicas' text boxes. Drawn when replicas are added or removed, not while typing.
fn editors_html(list: &[Replica]) -> String {
    let mut out = String::new();
    for (k, r) in list.iter().enumerate() {
        let remove = if list.len() > 1 {
            format!("<button class=\"link\" data-action=\"remove\" data-replica=\"{k}\">remove</button>")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "<div class=\"replica\" data-testid=\"prod-replica\">\
             <div class=\"replica-head\"><label>Replica <input type=\"text\" class=\"cell-input\" data-testid=\"prod-replica-name\" data-action=\"name\" data-replica=\"{k}\" value=\"{}\"></label>{remove}</div>\
             <textarea rows=\"6\" spellcheck=\"false\" data-testid=\"prod-dump\" data-action=\"now\" data-replica=\"{k}\" aria-label=\"{} /metrics text\" placeholder=\"# TYPE vllm:time_to_first_token_seconds histogram&#10;vllm:time_to_first_token_seconds_bucket{{le=&quot;0.5&quot;}} 80&#10;…\">{}</textarea>\
             <details{}><summary>Earlier dump (optional: the counts become the increase over the window)</summary>\
             <textarea rows=\"4\" spellcheck=\"false\" data-testid=\"prod-dump-before\" data-action=\"before\" data-replica=\"{k}\" aria-label=\"{} earlier /metrics text\">{}</textarea></details></div>",
            esc(&r.name),
            esc(&r.name),
            esc(&r.now),
            if r.before.trim().is_empty() { "" } else { " open" },
            esc(&r.name),
            esc(&r.before)
        ));
    }
    out
}

/// "70 %", "≈ 56 %", "≥ 95 %": the fraction, marked when it is an estimate or a bound.
fn fraction_value(f: &FractionUnder) -> String {
    match f.kind {
        FractionKind::Exact => fmt_pct(f.value),
        FractionKind::Interpolated => format!("≈ {}", fmt_pct(f.value)),
        FractionKind::LowerBoundOnly => format!("≥ {}", fmt_pct(f.value)),
    }
}

fn fraction_how(f: &FractionUnder) -> String {
    match f.kind {
        FractionKind::Exact => format!("exact: {} s is a bucket edge", f.target_ms / 1000.0),
        FractionKind::Interpolated => format!(
            "estimate: the target lies inside the {}–{} s bucket, so the true share is between {} and {}",
            f.bucket_s.0,
            f.bucket_s.1.map_or("+Inf".to_string(), |e| e.to_string()),
            fmt_pct(f.lower),
            fmt_pct(f.upper)
        ),
        FractionKind::LowerBoundOnly => format!(
            "lower bound only: the target is above the last finite bucket edge, {} s",
            f.bucket_s.0
        ),
    }
}

fn labels_text(g: &GroupAnalysis) -> String {
    g.labels
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ms(v: f64) -> String {
    format!("{} ms", fmt::num(v))
}

/// What each replica's text gave, and what it could not read.
fn read_html(h: &Histograms) -> String {
    let mut items = Vec::new();
    for (name, now, before) in &h.dumps {
        for (d, which) in [(Some(now), "now"), (before.as_ref(), "earlier")] {
            let Some(d) = d else { continue };
            let mut line = format!(
                "<strong>{}</strong> ({which}): {} samples, {} histogram series",
                esc(name),
                fmt::count(d.n_samples),
                fmt::count(d.histograms.len() as u64)
            );
            if d.n_samples == 0 {
                line.push_str(
                    " — nothing could be read; is this a /metrics page (Prometheus text format)?",
                );
            } else if !d.histograms.iter().any(|h| h.indicator.is_some()) {
                line.push_str(" — no vLLM latency histogram in it");
            }
            // Lines skipped, then what was read but should be known (a bucket repaired, a
            // total taken from _count): the warnings are not skipped lines.
            let problems: Vec<String> = d.errors.iter().map(|e| format!("line {e}")).collect();
            if d.error_count > 0 {
                line.push_str(&format!(
                    "; {} line{} skipped:{}",
                    fmt::count(d.error_count),
                    if d.error_count == 1 { "" } else { "s" },
                    warning_list("prod-errors", &problems)
                ));
            }
            if !d.warnings.is_empty() {
                // After the list of skipped lines, a sentence of its own.
                line.push_str(&format!(
                    "{} with {}:{}",
                    if d.error_count > 0 { "Read" } else { "; read" },
                    if d.warnings.len() == 1 {
                        "a warning"
                    } else {
                        "warnings"
                    },
                    warning_list("prod-warnings", &d.warnings)
                ));
            }
            items.push(format!("<li>{line}</li>"));
        }
    }
    format!(
        "<details class=\"small\" data-testid=\"prod-read\"><summary>What was read</summary><ul>{}</ul></details>",
        items.join("")
    )
}

/// The one sentence, the caveat, then a card per indicator × traffic labels.
fn histograms_html(h: &Histograms) -> String {
    let a = &h.analysis;
    if h.dumps.is_empty() {
        return "<p class=\"empty\" data-testid=\"prod-empty\">Paste a /metrics dump above, or try the example, to see how much traffic stayed under each target.</p>".to_string();
    }
    if a.groups.is_empty() {
        let names: Vec<&str> = VLLM_LATENCY_FAMILIES.iter().map(|(n, _)| *n).collect();
        return format!(
            "<p class=\"notice error\" data-testid=\"prod-headline\">No vLLM latency histogram was found in the pasted text (looked for {}).</p>{}",
            esc(&names.join(", ")),
            read_html(h)
        );
    }
    let several = |g: &GroupAnalysis| {
        a.groups
            .iter()
            .filter(|o| o.indicator == g.indicator)
            .count()
            > 1
    };
    let parts: Vec<String> = a
        .groups
        .iter()
        .flat_map(|g| {
            let who = if several(g) {
                format!(" ({})", labels_text(g))
            } else {
                String::new()
            };
            g.fractions.iter().map(move |f| {
                format!(
                    "{} of {} observations{who} were at or under {}",
                    fraction_value(f),
                    g.indicator.label(),
                    ms(f.target_ms)
                )
            })
        })
        .collect();
    let replicas = h.dumps.len();
    let when = if a.windowed {
        "In the window between the two dumps"
    } else {
        "Since the replicas started"
    };
    let headline = if parts.is_empty() {
        format!("{when}: the spec has no fixed target to compare with, so only percentiles are shown below.")
    } else {
        format!(
            "{when}, across {replicas} replica{}: {}.",
            if replicas == 1 { "" } else { "s" },
            parts.join("; ")
        )
    };
    let counts = if a.windowed {
        "Counts are the increase between the earlier and the later dump of each replica."
    } else {
        "Counts are totals since each replica's process started; paste earlier dumps for a window."
    };
    let no_targets = if h.n_targets == 0 {
        " Set fixed targets on the Targets tab to read the share under each."
    } else {
        ""
    };
    // A note every group carries (such as "measured inside the engine") is said once, above.
    let common: Vec<String> = a
        .groups
        .first()
        .map(|g| {
            g.notes
                .iter()
                .filter(|n| a.groups.iter().all(|o| o.notes.contains(n)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let notes: Vec<String> = h
        .notes
        .iter()
        .chain(&a.notes)
        .chain(&common)
        .cloned()
        .collect();
    let groups: String = a.groups.iter().map(|g| group_html(g, &common)).collect();
    format!(
        "<p class=\"headline sentence\" data-testid=\"prod-headline\">{}</p>\
         <p class=\"callout\" data-testid=\"prod-caveat\">⚠ {}</p>\
         <p class=\"muted\">{counts}{no_targets}</p>{}{}<div class=\"groups\">{groups}</div>",
        esc(&headline),
        CAVEAT,
        warning_list("prod-notes", &notes),
        read_html(h)
    )
}

/// One indicator for one set of traffic labels, merged over replicas.
fn group_html(g: &GroupAnalysis, said: &[String]) -> String {
    let key = g.indicator.key().trim_end_matches("_ms");
    let labels = labels_text(g);
    let mut out = format!(
        "<div class=\"card group\" data-testid=\"prod-group\"><h3>{}{}</h3><p class=\"muted small\">{} observations from {}{} · {}</p>",
        g.indicator.label(),
        if labels.is_empty() { String::new() } else { format!(" · {}", esc(&labels)) },
        fmt::num(g.count),
        esc(&g.replicas.join(", ")),
        g.mean_ms.map_or(String::new(), |m| format!("; mean {}", ms(m))),
        esc(&g.families.join(" + "))
    );
    if !g.fractions.is_empty() {
        out.push_str("<ul class=\"fractions\">");
        for f in &g.fractions {
            out.push_str(&format!(
                "<li>At or under {}: <strong class=\"big-inline\" data-testid=\"prod-fraction-{key}\">{}</strong> <span class=\"muted\">— {}</span></li>",
                ms(f.target_ms),
                esc(&fraction_value(f)),
                esc(&fraction_how(f))
            ));
        }
        out.push_str("</ul>");
    }
    if !g.percentiles.is_empty() {
        let several = g.replicas.len() > 1;
        out.push_str(if several {
            "<table class=\"pct\"><thead><tr><th>p</th>\
             <th title=\"histogram_quantile over the merged buckets: the right answer, to bucket resolution\">merged</th>\
             <th title=\"what a dashboard that averages the replicas' percentiles shows\">mean of the replicas' own</th>\
             <th title=\"mean of the replicas' percentiles minus the merged one\">averaging is off by</th><th>each replica</th></tr></thead><tbody>"
        } else {
            "<table class=\"pct narrow\"><thead><tr><th>p</th><th title=\"histogram_quantile over the buckets\">value</th></tr></thead><tbody>"
        });
        for p in &g.percentiles {
            let merged = p.merged.as_ref().map_or("—".to_string(), |m| {
                if m.lower_bound_only {
                    format!("≥ {}", ms(m.value_ms))
                } else {
                    ms(m.value_ms)
                }
            });
            out.push_str(&format!(
                "<tr><th scope=\"row\">p{q}</th><td class=\"num\" data-testid=\"prod-p-{key}-{q}\">{}</td>",
                esc(&merged),
                q = fmt_q(p.q)
            ));
            if several {
                let off = match (p.error_ms, p.relative_error) {
                    (Some(e), Some(r)) => format!(
                        "{}{} ({}{})",
                        if e > 0.0 { "+" } else { "" },
                        ms(e),
                        if r > 0.0 { "+" } else { "" },
                        fmt_pct(r)
                    ),
                    _ => "—".to_string(),
                };
                let each = p
                    .per_replica_ms
                    .iter()
                    .map(|(n, v)| format!("{n}: {}", v.map_or("—".to_string(), ms)))
                    .collect::<Vec<_>>()
                    .join(" · ");
                out.push_str(&format!(
                    "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"muted small\">{}</td>",
                    p.mean_of_replicas_ms.map_or("—".to_string(), ms),
                    esc(&off),
                    esc(&each)
                ));
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table>");
    }
    if g.edges_need_change {
        let edges: Vec<String> = g
            .recommended_edges_s
            .iter()
            .map(|e| e.to_string())
            .collect();
        out.push_str(&format!(
            "<p class=\"small\" data-testid=\"prod-edges-{key}\">Buckets: to make every target exact, use the edges <code>{}</code> (seconds).</p>",
            edges.join(", ")
        ));
    } else if !g.fractions.is_empty() {
        out.push_str("<p class=\"small muted\">✓ Every target is a bucket edge, so these shares are exact.</p>");
    }
    let notes: Vec<String> = g
        .notes
        .iter()
        .filter(|n| !said.contains(n))
        .cloned()
        .collect();
    out.push_str(&warning_list("prod-group-notes", &notes));
    out.push_str("</div>");
    out
}

// ---- Error budget and diagnosis from request logs ----

/// Seconds on the log's clock that look like epoch seconds (1973 to 5138), as the CLI reads them.
fn is_epoch(t: f64) -> bool {
    t > 1e8 && t < 1e11
}

/// A time on the log's clock: "2026-11-01 12:00 UTC" for epoch seconds, else "t = 3,600 s".
fn when(t: f64) -> String {
    if !is_epoch(t) {
        return format!("t = {} s", fmt::num(t));
    }
    let iso: String = js_sys::Date::new(&JsValue::from_f64(t * 1000.0))
        .to_iso_string()
        .into();
    format!("{} UTC", iso.get(..16).unwrap_or(&iso).replace('T', " "))
}

/// A time for a plotly axis: epoch seconds go on a date axis, which counts milliseconds.
fn axis_x(t: f64) -> f64 {
    if is_epoch(t) {
        t * 1000.0
    } else {
        t
    }
}

fn time_axis(first: Option<f64>) -> Axis {
    if first.is_some_and(is_epoch) {
        Axis::new()
            .type_(AxisType::Date)
            .title(Title::with_text("time (UTC)"))
    } else {
        Axis::new().title(Title::with_text("time (s, on the log's clock)"))
    }
}

fn budget_empty_html() -> String {
    "<div class=\"empty\" data-testid=\"budget-empty\"><p>Load request logs with a start time per request (a <code>start_time</code> column) on the Data tab to see how much of the error budget they spent.</p><a class=\"button-like\" href=\"#data\">Load request logs</a></div>".to_string()
}

/// The budget's sentence, its cards, the slice choice and the alerts.
fn budget_html(r: &BudgetResult, slice_s: f64) -> String {
    let b = match &r.report {
        Err(why) => {
            let (tone, text) = match why {
                NoBudget::NoTimestamps(text) => ("warn", text),
                NoBudget::Error(text) => ("error", text),
            };
            return format!(
                "<p class=\"notice {tone}\" data-testid=\"budget-headline\">{}</p>",
                sentence(text)
            );
        }
        Ok(b) => b,
    };
    let window = format!("{} days", fmt::num(b.window_days));
    let headline = match (b.consumed, b.allowed_bad_requests) {
        (Some(c), Some(allowed)) if c > 1.0 => format!(
            "The error budget is exhausted: {} bad requests where {} were allowed in a {window} window at objective {}, {}× the budget.",
            fmt::count(b.bad),
            fmt::num(allowed),
            fmt_pct(b.objective),
            fmt::num(c)
        ),
        (Some(c), Some(allowed)) => format!(
            "{} of the error budget is spent: {} bad requests of {} allowed in a {window} window at objective {}.",
            fmt_pct(c),
            fmt::count(b.bad),
            fmt::num(allowed),
            fmt_pct(b.objective)
        ),
        _ => format!(
            "{} bad requests of {}; the budget in requests is unknown.",
            fmt::count(b.bad),
            fmt::count(b.attempted)
        ),
    };
    let volume = match b.volume_source {
        Some(VolumeSource::Typed) => "the spec's expected requests per window".to_string(),
        Some(VolumeSource::Log) => "the log, which covers the whole window".to_string(),
        Some(VolumeSource::Extrapolated { covered_s }) => format!(
            "the log's request rate, extrapolated: it covers {} of the {window} (set the expected requests per window in the spec for the real volume)",
            span(covered_s)
        ),
        None => "unknown".to_string(),
    };
    let mut notes = b.notes.clone();
    if r.no_timestamp.0 > 0 {
        notes.push(format!(
            "{} attempted requests ({} bad) have no timestamp and are left out",
            fmt::count(r.no_timestamp.0),
            fmt::count(r.no_timestamp.1)
        ));
    }
    if r.excluded > 0 {
        notes.push(format!(
            "{} cancelled requests are excluded by the spec's cancellation policy",
            fmt::count(r.excluded)
        ));
    }
    let exhaustion = match b.time_to_exhaustion_s {
        Some(t) if t <= 0.0 => "it is already gone".to_string(),
        Some(t) => format!("it lasts {}", span(t)),
        None => "nothing is being spent".to_string(),
    };
    let card = |title: &str, id: &str, value: String, help: String| {
        format!(
            "<div class=\"card\"><h3>{title}</h3><p class=\"big\" data-testid=\"{id}\">{}</p><p class=\"muted\">{}</p></div>",
            esc(&value),
            esc(&help)
        )
    };
    let slices: String = [
        (60.0, "1 minute"),
        (300.0, "5 minutes"),
        (900.0, "15 minutes"),
        (3600.0, "1 hour"),
        (86_400.0, "1 day"),
    ]
    .iter()
    .map(|(s, l)| {
        format!(
            "<option value=\"{s}\"{}>{l}</option>",
            if *s == slice_s { " selected" } else { "" }
        )
    })
    .collect();
    let peak = b.peak.as_ref().map_or(String::new(), |p| {
        format!(
            " The worst slice started {}: burn rate {}× ({} bad of {}).",
            when(p.start_s),
            fmt::num(p.burn_rate),
            fmt::count(p.bad),
            fmt::count(p.attempted)
        )
    });
    format!(
        "<p class=\"headline sentence\" data-testid=\"budget-headline\">{}</p><div class=\"cards\">{}{}{}</div>\
         <p class=\"muted small\">{}</p>{}\
         <label class=\"inline small\">Burn rate in slices of <select data-testid=\"budget-slice\" data-action=\"slice\">{slices}</select></label>{}",
        esc(&headline),
        card(
            "Budget spent",
            "budget-consumed",
            fmt::pct(b.consumed),
            format!(
                "{} of {} requests bad ({}); {} may be bad",
                fmt::count(b.bad),
                fmt::count(b.attempted),
                fmt::pct(b.bad_fraction),
                fmt_pct(b.allowed_bad_fraction)
            )
        ),
        card(
            "Remaining",
            "budget-remaining",
            fmt::pct(b.remaining),
            b.remaining_requests
                .map_or(String::new(), |x| if x > 0.0 { format!("{} more bad requests allowed", fmt::num(x)) } else { "no more bad requests allowed".to_string() })
        ),
        card(
            "Burn rate now",
            "budget-burn",
            b.current_burn.map_or("—".to_string(), |x| format!("{}×", fmt::num(x))),
            format!("over the last {} of the log; at this pace {exhaustion}", span(b.current_s))
        ),
        esc(&format!(
            "Requests from {} to {}. Volume per window: {} requests, from {volume}.{peak}",
            b.from_s.map_or("—".to_string(), when),
            b.to_s.map_or("—".to_string(), when),
            fmt::opt(b.volume)
        )),
        warning_list("budget-notes", &notes),
        alerts_html(b)
    )
}

/// Which burn-rate alerts would have fired over the logs, and when.
fn alerts_html(b: &BudgetReport) -> String {
    let mut rows = String::new();
    for h in &b.alerts {
        let a = &h.alert;
        let fired = if h.intervals.is_empty() {
            "<td class=\"cell pass\">✓ would not have fired</td>".to_string()
        } else {
            let list: Vec<String> = h
                .intervals
                .iter()
                .map(|i| {
                    if i.ongoing {
                        format!(
                            "from {} to the end of the log (still firing)",
                            when(i.start_s)
                        )
                    } else {
                        format!("{} for {}", when(i.start_s), span(i.duration_s()))
                    }
                })
                .collect();
            format!(
                "<td class=\"cell fail\">✗ would have fired {}×: {}</td>",
                h.intervals.len(),
                esc(&list.join("; "))
            )
        };
        rows.push_str(&format!(
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>burn &gt; {}× over {} and over {}</td>{fired}</tr>",
            match a.severity {
                Severity::Page => "page",
                Severity::Ticket => "ticket",
            },
            esc(&a.name),
            fmt::num(a.burn_rate),
            span(a.long_s),
            span(a.short_s)
        ));
    }
    format!(
        "<h3>Burn-rate alerts (Google SRE workbook, multiwindow)</h3><table class=\"files\" data-testid=\"budget-alerts\">\
         <thead><tr><th>Kind</th><th>Budget share</th><th>Fires when</th><th>Over these logs</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

fn diagnosis_html(r: &BudgetResult) -> String {
    let head = "<h2>Queueing or prefill?</h2>";
    let d = match &r.diagnosis {
        Err(e) => {
            return format!(
                "{head}<p class=\"muted\" data-testid=\"diagnosis\">{}</p>",
                sentence(&e.to_string())
            )
        }
        Ok(d) => d,
    };
    let q = format!("p{}", fmt_q(d.q));
    let usual = d.baseline_ttft_ms.map_or("—".to_string(), ms);
    let text = if d.incidents.is_empty() {
        format!("TTFT ({q} per slice) never rose well above its usual {usual}: nothing to explain.")
    } else {
        format!(
            "TTFT ({q} per slice) rose well above its usual {usual} {} time{}; below, whether queueing or a slower prefill was the cause.",
            d.incidents.len(),
            if d.incidents.len() == 1 { "" } else { "s" }
        )
    };
    let items: String = d
        .incidents
        .iter()
        .map(|i| {
            format!(
                "<li><strong>{} – {}</strong>: {} (peak {q} TTFT {}, queue {})</li>",
                esc(&when(i.start_s)),
                esc(&when(i.end_s)),
                sentence(i.verdict.describe()),
                ms(i.peak_ttft_ms),
                i.queue_ms_at_peak.map_or("—".to_string(), ms)
            )
        })
        .collect();
    format!(
        "{head}<p class=\"sentence\" data-testid=\"diagnosis\">{}</p><ul class=\"incidents\" data-testid=\"diagnosis-incidents\">{items}</ul>{}",
        esc(&text),
        warning_list("diagnosis-notes", &d.notes)
    )
}

fn severity_color(s: Severity) -> &'static str {
    match s {
        Severity::Page => RED,
        Severity::Ticket => GREY,
    }
}

/// The budget left after each slice (core: `budget::burn_down`), with the zero line.
fn burndown_figure(b: &BudgetReport) -> String {
    let points = slo_core::budget::burn_down(b);
    let xs: Vec<f64> = points.iter().map(|p| axis_x(p.0)).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.1 * 100.0).collect();
    let mut plot = Figure::new();
    plot.add_trace(
        trace("budget left", xs, ys)
            .line(Line::new().shape(LineShape::Hv).width(2.0))
            .hover_template("%{y:.1f} % of the budget left<extra></extra>"),
    );
    plot.set_layout(
        layout("Error budget burn-down", "budget left (%)", 300)
            .x_axis(time_axis(points.first().map(|p| p.0 - b.slice_s))),
    );
    plot.to_json()
}

/// Burn rate per slice as steps, with each alert's threshold.
fn burn_figure(b: &BudgetReport) -> String {
    let mut plot = Figure::new();
    let (xs, ys): (Vec<f64>, Vec<f64>) = b
        .slices
        .iter()
        .filter_map(|s| Some((axis_x(s.start_s), s.burn_rate?)))
        .unzip();
    plot.add_trace(
        trace("burn rate", xs, ys)
            .line(Line::new().shape(LineShape::Hv).width(2.0))
            .hover_template("%{y:.2f}× the budget pace<extra></extra>"),
    );
    // Each alert's threshold as a flat line across the slices, named in the legend.
    let ends: Vec<f64> = [b.slices.first(), b.slices.last()]
        .iter()
        .flatten()
        .map(|s| axis_x(s.start_s))
        .collect();
    for h in &b.alerts {
        let kind = match h.alert.severity {
            Severity::Page => "page",
            Severity::Ticket => "ticket",
        };
        plot.add_trace(
            trace(
                &format!(
                    "{kind} above {}× ({})",
                    fmt::num(h.alert.burn_rate),
                    h.alert.name
                ),
                ends.clone(),
                vec![h.alert.burn_rate; ends.len()],
            )
            .mode(plotly::common::Mode::Lines)
            .line(
                Line::new()
                    .dash(DashType::Dash)
                    .color(severity_color(h.alert.severity))
                    .width(1.5),
            ),
        );
    }
    plot.set_layout(
        layout("", "burn rate (× the budget pace)", 360)
            .x_axis(time_axis(b.slices.first().map(|s| s.start_s))),
    );
    plot.to_json()
}

/// TTFT and queue time per slice, the usual TTFT, incidents shaded.
fn diagnosis_figure(d: &Diagnosis) -> String {
    let mut plot = Figure::new();
    let q = format!("p{}", fmt_q(d.q));
    let (x, y): (Vec<f64>, Vec<f64>) = d
        .slices
        .iter()
        .filter_map(|s| Some((axis_x(s.start_s), s.ttft_ms?)))
        .unzip();
    plot.add_trace(trace(&format!("{q} TTFT"), x, y).line(Line::new().shape(LineShape::Hv)));
    let (x, y): (Vec<f64>, Vec<f64>) = d
        .slices
        .iter()
        .filter_map(|s| Some((axis_x(s.start_s), s.queue_ms?)))
        .unzip();
    plot.add_trace(
        trace(&format!("{q} queue time"), x, y)
            .line(Line::new().shape(LineShape::Hv).dash(DashType::Dash)),
    );
    let mut shapes: Vec<Shape> = d
        .incidents
        .iter()
        .map(|i| {
            Shape::new()
                .shape_type(ShapeType::Rect)
                .x_ref("x")
                .y_ref("paper")
                .x0(axis_x(i.start_s))
                .x1(axis_x(i.end_s))
                .y0(0)
                .y1(1)
                .fill_color("rgba(192,57,43,0.12)")
                .layer(ShapeLayer::Below)
                .line(ShapeLine::new().width(0.0))
        })
        .collect();
    let mut notes = Vec::new();
    if let Some(t) = d.baseline_ttft_ms {
        shapes.push(hline(t, GREY, DashType::Dot));
        notes.push(hlabel(t, format!("usual TTFT {}", ms(t)), GREY));
    }
    for i in &d.incidents {
        let text = match i.verdict {
            SliceVerdict::ShortOfCapacity => "queueing",
            SliceVerdict::PrefillSlower(_) => "slower prefill",
            _ => "TTFT up",
        };
        notes.push(label(axis_x(i.start_s), text.to_string(), RED));
    }
    plot.set_layout(
        layout("", "ms", 340)
            .x_axis(time_axis(d.slices.first().map(|s| s.start_s)))
            .shapes(shapes)
            .annotations(notes),
    );
    plot.to_json()
}
