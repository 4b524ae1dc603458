//! Report: the answer first (joint attainment and verdict), then what explains it.

use leptos::prelude::*;
use plotly::common::{Line, Mode, Title};
use plotly::layout::{Axis, Layout, Shape, ShapeLine, ShapeType};
use plotly::{Bar, Scatter};
use slo_core::evaluate::{fmt_q, GroupReport, IndicatorReport, Outcome, Report};
use slo_core::spec::{Indicator, TtftTarget};

use crate::app::{go, Tab};
use crate::chart::{Chart, Figure};
use crate::fmt;
use crate::state::{AppState, Shared};

#[component]
pub fn ReportView() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <section class="panel">
            <SavedBanner />
            <SampleBanner />
            <QuickTargets />
            {move || match state.report.get() {
                Some(r) => view! { <Body report=r /> }.into_any(),
                None if state.table.with(|t| t.0.is_empty()) => view! {
                    <div class="empty" data-testid="report-empty">
                        <p>"No data yet. "</p>
                        <button class="primary" on:click=move |_| go(Tab::Data)>"Load request logs"</button>
                    </div>
                }.into_any(),
                None => view! {
                    <p class="notice error" data-testid="report-invalid">"The targets are not valid; see the messages next to the fields."</p>
                }.into_any(),
            }}
        </section>
    }
}

/// Reads a number field: empty is `Ok(None)`, a positive number `Ok(Some)`, anything else an error.
fn parse_target(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
        _ => Err(format!("{t:?} is not a positive number of milliseconds")),
    }
}

/// While the built-in sample is shown (the first visit opens on it), what it is and where one's
/// own logs go.
#[component]
fn SampleBanner() -> impl IntoView {
    let state = expect_context::<AppState>();
    // (Not over a loading file's report shown ahead of its data, as for the header's badge.)
    move || {
        (state.sample.get() && state.early.with(Option::is_none)).then(|| {
            view! {
                <p class="callout" data-testid="sample-banner">
                    "These figures are the built-in sample: the ten requests of the guide's worked example. "
                    <button class="link" on:click=move |_| go(Tab::Data)>"Load your own request logs"</button>
                    " on the Data tab; they stay in this browser."
                </p>
            }
        })
    }
}

/// TTFT, TPOT, ITL and E2E targets for every cell, and the percentiles: the fastest way to play.
#[component]
fn QuickTargets() -> impl IntoView {
    let state = expect_context::<AppState>();
    let spec = state.spec;
    let field = move |ind: Indicator, label: &'static str, help: &'static str| {
        let error = RwSignal::new(None::<String>);
        let id = format!("target-{}", ind.key());
        // One field sets every cell, so it is offered only while every cell has the same
        // target: typed into, it would overwrite targets set per class or input length.
        let varies = Memo::new(move |_| spec.with(|s| s.uniform_target(ind).is_none()));
        let shown = move || {
            spec.with_untracked(|s| {
                s.uniform_target(ind)
                    .flatten()
                    .map_or(String::new(), fmt::spec_number)
            })
        };
        let on_input = move |ev| {
            let text = event_target_value(&ev).replace(',', "");
            match parse_target(&text) {
                Ok(v) => {
                    error.set(None);
                    spec.update(|s| {
                        for class in &mut s.classes {
                            for t in &mut class.targets {
                                match ind {
                                    Indicator::Ttft => {
                                        t.ttft = v.map(|ms| TtftTarget::Fixed { ms })
                                    }
                                    Indicator::Tpot => t.tpot_ms = v,
                                    Indicator::Itl => t.itl_ms = v,
                                    Indicator::E2e => t.e2e_ms = v,
                                    Indicator::Queue => t.queue_ms = v,
                                }
                            }
                        }
                    });
                }
                Err(e) => error.set(Some(e)),
            }
        };
        view! {
            <div class="field">
                <label for=id.clone()>{label}</label>
                {move || if varies.get() {
                    view! {
                        <input id=id.clone() data-testid=id.clone() type="text" disabled placeholder="varies" />
                        <small class="help">"differs by class or input length: set it on the Targets tab"</small>
                    }.into_any()
                } else {
                    view! {
                        <input id=id.clone() data-testid=id.clone() type="text" inputmode="decimal" value=shown() on:input=on_input
                            aria-invalid=move || error.get().is_some().then_some("true") />
                        <small class="help">{help}" (every class)"</small>
                    }.into_any()
                }}
                {move || error.get().map(|e| view! { <small class="field-error" role="alert">{e}</small> })}
            </div>
        }
    };
    let q_error = RwSignal::new(None::<String>);
    let q_text = spec.with_untracked(|s| {
        s.percentiles
            .iter()
            .map(|q| fmt_q(*q))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let on_q = move |ev| {
        let text = event_target_value(&ev);
        let parsed: Result<Vec<f64>, String> = text
            .split([',', ' '])
            .filter(|p| !p.trim().is_empty())
            .map(|p| match p.trim().trim_start_matches('p').parse::<f64>() {
                Ok(q) if (0.0..=100.0).contains(&q) => Ok(q),
                _ => Err(format!(
                    "{:?} is not a percentile between 0 and 100",
                    p.trim()
                )),
            })
            .collect();
        match parsed {
            Ok(qs) if !qs.is_empty() => {
                q_error.set(None);
                spec.update(|s| s.percentiles = qs);
            }
            Ok(_) => q_error.set(Some("name at least one percentile, e.g. 90".to_string())),
            Err(e) => q_error.set(Some(e)),
        }
    };
    view! {
        <form class="quick-targets" on:submit=|ev| ev.prevent_default() aria-label="Targets">
            {field(Indicator::Ttft, "TTFT target (ms)", "time to first token")}
            {field(Indicator::Tpot, "TPOT target (ms)", "mean gap after the first token")}
            {field(Indicator::Itl, "ITL target (ms)", "worst gap in a request; empty = none")}
            {field(Indicator::E2e, "E2E target (ms)", "whole request; empty = none")}
            <div class="field">
                <label for="percentiles">"Percentiles"</label>
                <input id="percentiles" data-testid="percentiles" type="text" value=q_text on:input=on_q />
                <small class="help">"comma-separated, e.g. 50, 90, 99"</small>
                {move || q_error.get().map(|e| view! { <small class="field-error" role="alert">{e}</small> })}
            </div>
        </form>
    }
}

#[component]
fn Body(report: Shared<Report>) -> impl IntoView {
    let r = report.0;
    let o = &r.overall;
    view! {
        <div class="report-actions"><SaveReport /></div>
        <Headline g=o.clone() objective=r.objective />
        <SkippedRows />
        <div class="cards">
            <div class="card" data-testid="goodput">
                <h3>"Goodput"</h3>
                {match o.goodput_rps {
                    Some(g) => view! {
                        <p class="big">{format!("{} req/s", fmt::num(g))}</p>
                        <p class="muted">{format!("good requests per second, of {} req/s completed ({})", fmt::opt(o.throughput_rps), r.duration.how)}</p>
                    }.into_any(),
                    None => view! {
                        <p class="big">"—"</p>
                        <p class="muted">{format!("Unknown: {}.", r.duration.how)}</p>
                    }.into_any(),
                }}
                <DurationField />
            </div>
            <div class="card">
                <h3>"Requests"</h3>
                <p class="big">{fmt::count(o.attempted)}</p>
                <p class="muted">{format!("attempted: {} completed, {} failed (errors and timeouts), {} cancelled and counted as bad; {} more cancelled and left out", fmt::count(o.completed), fmt::count(o.failed), fmt::count(o.cancelled_counted), fmt::count(o.excluded))}</p>
            </div>
        </div>
        {o.notes.iter().map(|n| view! { <p class="callout" data-testid="joint-gap">"⚠ " {n.clone()}</p> }).collect_view()}
        <Matrix report=r.clone() />
        <Percentiles g=o.clone() method=r.method.name() />
        <Failures report=r.clone() />
        <Cdfs g=o.clone() />
        <Stalls report=r.clone() />
        <crate::views::compare::Compare />
        {(!o.warnings.is_empty()).then(|| view! {
            <h2>"Warnings"</h2>
            <ul class="warnings" data-testid="warnings">{o.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view()}</ul>
        })}
    }
}

/// The class × input-length matrix: attainment per cell, pass/fail in words, the binding target.
#[component]
fn Matrix(report: std::sync::Arc<Report>) -> impl IntoView {
    if report.cells.len() <= 1 {
        return ().into_any();
    }
    let mut buckets: Vec<String> = Vec::new();
    for c in &report.cells {
        if let Some(b) = &c.bucket {
            if !buckets.contains(b) {
                buckets.push(b.clone());
            }
        }
    }
    let head = buckets
        .iter()
        .map(|b| view! { <th scope="col">{b.clone()}</th> })
        .collect_view();
    let rows = report
        .classes
        .iter()
        .map(|class| {
            let name = class.class.clone().unwrap_or_default();
            let cells = buckets
                .iter()
                .map(|b| {
                    let cell = report.cells.iter().find(|c| c.class.as_deref() == Some(name.as_str()) && c.bucket.as_deref() == Some(b.as_str()));
                    match cell {
                        Some(c) if c.attempted > 0 => {
                            let pass = c.meets_objective == Some(true);
                            let binding = c.binding.map(|i| format!(" {}", i.label())).unwrap_or_default();
                            let title = format!(
                                "{} of {} good; 95 % CI {}",
                                fmt::count(c.good),
                                fmt::count(c.attempted),
                                c.attainment_ci95.map_or("—".to_string(), |(lo, hi)| format!("{}–{}", fmt::pct(Some(lo)), fmt::pct(Some(hi))))
                            );
                            view! {
                                <td class=if pass { "cell pass" } else { "cell fail" } title=title>
                                    {fmt::pct(c.attainment)} {if pass { " ✓".to_string() } else { format!(" ✗{binding}") }}
                                    <small class="n">{format!("n = {}", fmt::count(c.attempted))}</small>
                                </td>
                            }
                            .into_any()
                        }
                        _ => view! { <td class="cell no-requests">"—"<small class="n">"no requests"</small></td> }.into_any(),
                    }
                })
                .collect_view();
            let mark = match class.meets_objective {
                Some(true) => " ✓",
                Some(false) => " ✗",
                None => "",
            };
            view! { <tr><th scope="row">{name}</th>{cells}<td class="whole">{fmt::pct(class.attainment)}{mark}</td></tr> }
        })
        .collect_view();
    view! {
        <h2>"Class × input length"</h2>
        <p class="muted">"Joint attainment per cell against the objective; ✗ names the target that fails the most requests there."</p>
        <div class="scroll">
            <table class="matrix" data-testid="matrix">
                <thead><tr><th>"class"</th>{head}<th>"whole class"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

/// Requests whose TPOT passed but whose stream stalled; and cancellations.
#[component]
fn Stalls(report: std::sync::Arc<Report>) -> impl IntoView {
    let c = &report.cancellations;
    let cancel = (c.cancelled > 0).then(|| {
        view! {
            <p data-testid="cancellations">{format!(
                "{} requests were cancelled by the client (median wait {}, longest {}); {} of them waited past the TTFT target and count as TTFT failures.",
                fmt::count(c.cancelled), fmt::opt(c.wait_p50_ms).to_string() + " ms", fmt::opt(c.wait_max_ms).to_string() + " ms", fmt::count(c.counted_as_ttft_failure)
            )}</p>
        }
    });
    let stalls = (!report.stalled.is_empty()).then(|| {
        let rows = report
            .stalled
            .iter()
            .take(50)
            .map(|s| view! { <tr><td>{s.id.clone()}</td><td class="num">{fmt::opt(s.tpot_ms)}</td><td class="num">{fmt::num(s.max_gap_ms)}</td></tr> })
            .collect_view();
        view! {
            <h2>"Hidden stalls"</h2>
            <p data-testid="stalls">{format!("{} requests had a fine TPOT but a gap in the stream above the stall rule: TPOT averages stalls away, ITL shows them.", fmt::count(report.overall.hidden_stalls))}</p>
            <table><thead><tr><th>"Request"</th><th>"TPOT (ms)"</th><th>"worst gap (ms)"</th></tr></thead><tbody>{rows}</tbody></table>
        }
    });
    view! { {cancel} {stalls} }
}

/// Says when a saved report is being viewed, and offers to leave it.
#[component]
fn SavedBanner() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        // (Not over a loading file's report shown ahead of its data.)
        let early = state.early.with(Option::is_some);
        state.viewing.get().filter(|_| !early).map(|saved| {
            view! {
                <p class="notice ok" data-testid="saved-banner">
                    {saved.0.describe()}
                    " Targets cannot be changed without the data. "
                    <button class="link" on:click=move |_| state.viewing.set(None)>"Close the saved report"</button>
                </p>
            }
        })
    }
}

/// "Save report": the spec, the results, the provenance and, if ticked, the request data.
#[component]
fn SaveReport() -> impl IntoView {
    let state = expect_context::<AppState>();
    let with_data = RwSignal::new(false);
    let save = move |_| {
        let Some(report) = state.report.get_untracked() else {
            return;
        };
        let created = String::from(js_sys::Date::new_0().to_iso_string());
        let files = state.provenance.get_untracked();
        let table = state.table.get_untracked();
        let data = (with_data.get_untracked() && state.viewing.with_untracked(Option::is_none))
            .then_some(table.0.as_ref());
        let saved = state.spec.with_untracked(|spec| {
            slo_core::saved::SavedReport::new(&created, spec, &report.0, &files, data)
        });
        crate::download::download("slo-report.json", "application/json", &saved.to_json());
    };
    view! {
        // Not while a load's early report shows (its data is still on its way) or its file's
        // digest is being computed.
        <button data-testid="save-report" on:click=save disabled=move || state.provenance_pending()>"Save report"</button>
        <label class="inline small"><input type="checkbox" data-testid="save-with-data" on:change=move |ev| with_data.set(event_target_checked(&ev)) />"include the request data"</label>
    }
}

/// The run's duration, typed, for goodput when the log does not tell.
#[component]
fn DurationField() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <label class="inline small">"Duration (s): "
            <input type="text" inputmode="decimal" class="cell-input" data-testid="duration"
                prop:value=move || state.duration_s.get().map_or(String::new(), fmt::spec_number)
                on:change=move |ev| state.duration_s.set(event_target_value(&ev).trim().replace(',', "").parse::<f64>().ok().filter(|d| *d > 0.0)) />
        </label>
    }
}

/// The one sentence and one number at the top.
#[component]
fn Headline(g: GroupReport, objective: f64) -> impl IntoView {
    let met = g.meets_objective == Some(true);
    let ci = g.attainment_ci95.map_or(String::new(), |(lo, hi)| {
        format!(" (95 % CI {}–{})", fmt::pct(Some(lo)), fmt::pct(Some(hi)))
    });
    let sentence = format!(
        "of {} requests met every target at once{ci}.",
        fmt::count(g.attempted)
    );
    view! {
        <div class="headline" data-testid="headline">
            <span class="big" data-testid="attainment">{fmt::pct(g.attainment)}</span>
            " " {sentence}
            <span class=if met { "verdict pass" } else { "verdict fail" } data-testid="verdict">
                {format!("Objective {}: {}", fmt::pct(Some(objective)), if met { "✓ met" } else { "✗ not met" })}
            </span>
        </div>
    }
}

/// Rows of the loaded files that could not be read: not in any figure, so said beside them.
#[component]
fn SkippedRows() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let skipped = state.rows_skipped();
        (skipped > 0).then(|| {
            view! {
                <p class="callout" data-testid="rows-skipped">
                    {format!(
                        "⚠ {} row{} of the files could not be read and {} not in these figures: ",
                        fmt::count(skipped),
                        if skipped == 1 { "" } else { "s" },
                        if skipped == 1 { "is" } else { "are" }
                    )}
                    <button class="link" on:click=move |_| go(Tab::Data)>"see why on the Data tab"</button>
                </p>
            }
        })
    }
}

fn verdict(pass: Option<bool>) -> &'static str {
    match pass {
        Some(true) => "✓ pass",
        Some(false) => "✗ fail",
        None => "",
    }
}

/// Marginal percentiles by the chosen method, linear, nearest and nearest-rank, with verdicts.
#[component]
fn Percentiles(g: GroupReport, method: &'static str) -> impl IntoView {
    let spec = expect_context::<AppState>().spec;
    // Targets that differ by class or input length: the pooled percentiles have no one target.
    let per_cell = move |ind: Indicator| spec.with_untracked(|s| s.uniform_target(ind).is_none());
    let rows: Vec<&IndicatorReport> = g.indicators.iter().filter(|i| i.stats.n > 0).collect();
    let body = rows
        .iter()
        .flat_map(|ind| {
            let key = ind.indicator.key().trim_end_matches("_ms");
            ind.stats.percentiles.iter().zip(&ind.verdicts).map(move |(p, v)| {
                let id = |m: &str| format!("pct-{key}-{}-{m}", fmt_q(p.q));
                // Against its target: a figure that differs never reads as the target.
                let measured = |x: Option<f64>| {
                    x.map_or("—".to_string(), |x| slo_core::document::fmt_measured(x, ind.target_ms))
                };
                view! {
                    <tr class:flipped=v.flipped>
                        <th scope="row">{ind.indicator.label()}</th>
                        <td>{format!("p{}", fmt_q(p.q))}</td>
                        <td class="num strong" data-testid=id("value")>{measured(p.value)}</td>
                        <td class="num" data-testid=id("linear")>{measured(p.linear)}</td>
                        <td class="num" data-testid=id("nearest")>{measured(p.nearest)}</td>
                        <td class="num" data-testid=id("nearest_rank")>{measured(p.nearest_rank)}</td>
                        <td class="num">{p.ci95.map_or("—".to_string(), |(a, b)| format!("{}–{}", fmt::num(a), fmt::num(b)))}</td>
                        <td class="num">{match ind.target_ms {
                            Some(t) => format!("≤ {}", fmt::spec_number(t)),
                            None if per_cell(ind.indicator) => "per cell".to_string(),
                            None => String::new(),
                        }}</td>
                        <td data-testid=id("verdict")>{verdict(v.pass)}{v.flipped.then_some(" — flips with method")}</td>
                    </tr>
                }
            })
        })
        .collect_view();
    view! {
        <h2>"Marginal percentiles (ms)"</h2>
        <p class="muted">
            {format!("Method: {method}. ")}
            "Each percentile looks at one indicator alone; the headline counts requests that met every target at once. "
            "Rows marked “flips” pass by one method and fail by another: write the method into the SLO."
            {g.indicators.iter().any(|i| i.stats.n > 0 && i.target_ms.is_none() && per_cell(i.indicator)).then_some(
                " A target “per cell” differs by class or input length: these percentiles pool every request, so each cell's verdict is in the class × input length table."
            )}
        </p>
        <div class="scroll">
            <table class="pct" data-testid="percentiles-table">
                <thead><tr>
                    <th>"Indicator"</th><th>"p"</th>
                    <th title="the value the verdict uses: the spec's percentile method">{format!("value (spec: {method})")}</th>
                    <th title="numpy 'linear' (Hyndman & Fan type 7), vLLM's choice">"linear"</th>
                    <th title="numpy 'nearest'">"nearest"</th>
                    <th title="smallest value with at least q % of values at or below it">"nearest-rank"</th>
                    <th title="distribution-free 95 % interval from order statistics; — when there are too few requests to bound that percentile">"95 % CI"</th>
                    <th>"target"</th><th>"verdict"</th>
                </tr></thead>
                <tbody>{body}</tbody>
            </table>
        </div>
    }
}

/// An axis of whole requests: with few, a tick at each one (plotly would put one at 0.2).
fn whole_counts(axis: Axis, most: u64) -> Axis {
    let axis = axis.tick_format("d");
    if most <= 5 {
        axis.dtick(1.0)
    } else {
        axis
    }
}

fn outcome_words(o: Outcome) -> &'static str {
    match o {
        Outcome::Error => "error",
        Outcome::Timeout => "timeout",
        Outcome::CancelledWaiting => "cancelled after waiting for the first token",
        Outcome::CancelledCounted => "cancelled (counted as bad)",
        Outcome::Excluded => "excluded",
        Outcome::Good => "good",
        Outcome::Missed => "missed",
    }
}

/// Why requests failed: counts by missed set, a bar chart, and the requests by name.
#[component]
fn Failures(report: std::sync::Arc<Report>) -> impl IntoView {
    let o = &report.overall;
    if o.failures.is_empty() {
        return view! { <h2>"Why requests failed"</h2><p data-testid="no-failures">"✓ Every attempted request met every target."</p> }.into_any();
    }
    let mut plot = Figure::new();
    let labels: Vec<String> = o.failures.iter().map(|f| f.label.clone()).collect();
    let counts: Vec<u64> = o.failures.iter().map(|f| f.count).collect();
    let most = counts.iter().copied().max().unwrap_or(0);
    plot.add_trace(
        Bar::new(counts, labels)
            .orientation(plotly::common::Orientation::Horizontal)
            .name("bad requests"),
    );
    plot.set_layout(
        Layout::new()
            .height(60 + 30 * o.failures.len())
            .margin(
                plotly::layout::Margin::new()
                    .left(220)
                    .right(20)
                    .top(10)
                    .bottom(40),
            )
            .x_axis(whole_counts(
                Axis::new().title(Title::with_text("bad requests")),
                most,
            )),
    );
    let figure = plot.to_json();
    let summary = o
        .failures
        .iter()
        .map(|f| format!("{}: {}", f.label, fmt::count(f.count)))
        .collect::<Vec<_>>()
        .join("; ");
    let rows = report
        .failing
        .iter()
        .take(200)
        .map(|f| {
            let missed = if f.missed.is_empty() {
                outcome_words(f.outcome).to_string()
            } else {
                f.missed
                    .iter()
                    .map(|i| {
                        if f.missing.contains(i) {
                            format!("{} (no data)", i.label())
                        } else {
                            i.label().to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" + ")
            };
            view! {
                <tr data-testid="failing-row">
                    <td>{f.id.clone()}</td>
                    <td>{f.class.clone().unwrap_or_default()}</td>
                    <td>{f.bucket.clone().unwrap_or_default()}</td>
                    <td>{missed}</td>
                </tr>
            }
        })
        .collect_view();
    let more = (report.failing_total > 200).then(|| {
        format!(
            "Showing 200 of {} bad requests.",
            fmt::count(report.failing_total)
        )
    });
    view! {
        <h2>"Why requests failed"</h2>
        <p data-testid="failure-summary">{summary}</p>
        <Chart id="chart-failures" label="Bad requests by the targets they missed" figure=Signal::stored(figure) />
        <details open=report.failing_total <= 20>
            <summary>{format!("Bad requests by name ({})", fmt::count(report.failing_total))}</summary>
            <table class="failing" data-testid="failing-requests">
                <thead><tr><th>"Request"</th><th>"Class"</th><th>"Input length"</th><th>"Missed"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            {more}
        </details>
    }
    .into_any()
}

/// A CDF figure for one indicator with its target as a vertical line.
fn cdf_figure(ind: &IndicatorReport) -> String {
    let xs: Vec<f64> = ind.stats.cdf.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = ind.stats.cdf.iter().map(|p| p.1).collect();
    let mut plot = Figure::new();
    plot.add_trace(
        Scatter::new(xs, ys)
            .mode(Mode::Lines)
            .name(ind.indicator.label())
            .line(Line::new().shape(plotly::common::LineShape::Hv)),
    );
    let mut layout = Layout::new()
        .height(300)
        .margin(
            plotly::layout::Margin::new()
                .left(60)
                .right(20)
                .top(30)
                .bottom(50),
        )
        .title(Title::with_text(format!("{} CDF", ind.indicator.label())))
        .x_axis(Axis::new().title(Title::with_text(format!("{} (ms)", ind.indicator.label()))))
        .y_axis(
            Axis::new()
                .title(Title::with_text("fraction of requests ≤ x"))
                .range(vec![0.0, 1.0]),
        );
    if let Some(t) = ind.target_ms {
        layout = layout.shapes(vec![Shape::new()
            .shape_type(ShapeType::Line)
            .x_ref("x")
            .y_ref("paper")
            .x0(t)
            .x1(t)
            .y0(0)
            .y1(1)
            .line(
                ShapeLine::new()
                    .color("#c0392b")
                    .dash(plotly::common::DashType::Dash),
            )]);
    }
    plot.set_layout(layout);
    plot.to_json()
}

/// CDF plots of the targeted indicators (TTFT always first).
#[component]
fn Cdfs(g: GroupReport) -> impl IntoView {
    let charts = g
        .indicators
        .iter()
        .filter(|i| i.stats.n > 0 && (i.targeted || i.indicator == Indicator::Ttft))
        .map(|ind| {
            let id: &'static str = match ind.indicator {
                Indicator::Ttft => "chart-cdf-ttft",
                Indicator::Tpot => "chart-cdf-tpot",
                Indicator::Itl => "chart-cdf-itl",
                Indicator::E2e => "chart-cdf-e2e",
                Indicator::Queue => "chart-cdf-queue",
            };
            view! { <Chart id=id label="Cumulative distribution with the target as a dashed line" figure=Signal::stored(cdf_figure(ind)) /> }
        })
        .collect_view();
    view! {
        <h2>"Distributions"</h2>
        <p class="muted">"Each curve shows the fraction of requests at or below a latency; a dashed line marks the target when every class and input length has the same one."</p>
        <div class="chart-grid">{charts}</div>
    }
}
