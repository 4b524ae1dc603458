//! Compare the current run with another (a log or a saved report): per cell, attainment of each,
//! the difference and whether it is significant; percentile shifts.

use leptos::prelude::*;
use slo_core::compare::{compare, Change, Comparison, GroupComparison};
use slo_core::evaluate::{evaluate, fmt_q, report, Report};
use slo_core::ingest::{self, Loaded};
use slo_core::transfer::Batch;
use wasm_bindgen::JsCast;

use crate::fmt;
use crate::loader::{self, Source};
use crate::state::AppState;

/// The other run's report: a saved report's numbers, or the loaded log evaluated with the current
/// spec (the loader prepared it for that spec). Errors start with the file's name.
fn other_report(batch: Batch, state: &AppState) -> Result<Report, String> {
    if let Some((name, text)) = batch.saved.first() {
        return slo_core::saved::from_json(text)
            .map(|s| s.report)
            .map_err(|e| format!("{name}: {e}"));
    }
    if let Some(fatal) = batch.files.iter().find_map(|f| f.fatal.clone()) {
        return Err(fatal);
    }
    let files: Vec<&Loaded> = batch.files.iter().collect();
    let duration = ingest::run_duration(&files, &batch.table, None);
    Ok(state.spec.with_untracked(|spec| match &batch.prepared {
        Some(prepared) => evaluate(&batch.table, prepared, spec, &duration),
        None => report(&batch.table, spec, &duration),
    }))
}

#[component]
pub fn Compare() -> impl IntoView {
    let state = expect_context::<AppState>();
    let other = RwSignal::new(None::<(String, Result<Report, String>)>);
    let on_file = move |ev: web_sys::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(file) = input.files().and_then(|l| l.get(0)) else {
            return;
        };
        let name = file.name();
        // Parsed off the page like any load (a large run must not freeze it).
        loader::run(
            state,
            vec![Source::File(file)],
            Box::new(move |state: AppState, batch| {
                // The view may be gone by now (another tab): then there is nothing to show.
                let _ = other.try_set(Some((name, other_report(batch, &state))));
            }),
        );
        input.set_value("");
    };
    let result = move || {
        let (name, other) = other.get()?;
        Some(match (other, state.report.get()) {
            (Err(e), _) => view! { <p class="notice error" role="alert">{e}</p> }.into_any(),
            (Ok(b), Some(a)) => {
                view! { <ComparisonTable c=compare(&a.0, &b) name=name /> }.into_any()
            }
            (Ok(_), None) => view! { <p class="muted">"Load a run first."</p> }.into_any(),
        })
    };
    view! {
        <h2>"Compare with another run"</h2>
        <p class="muted">"Load a second log or a saved report (say, after an engine upgrade). The current run is A, the other B; a change is significant when a two-proportion test gives p < 0.05."</p>
        <label class="button-like">"Other run…" <input type="file" data-testid="compare-file" on:click=move |_| loader::warm(state) on:change=on_file
            // One load at a time: a comparison would stop the data's load still running.
            disabled=move || state.loading.with(Option::is_some) /></label>
        {result}
    }
}

fn side(g: &GroupComparison, a: bool) -> String {
    let s = if a { &g.a } else { &g.b };
    s.as_ref().map_or("—".to_string(), |s| {
        format!(
            "{} (n = {}{})",
            fmt::pct(s.attainment),
            fmt::count(s.attempted),
            s.attainment_ci95.map_or(String::new(), |(lo, hi)| format!(
                ", {}–{}",
                fmt::pct(Some(lo)),
                fmt::pct(Some(hi))
            ))
        )
    })
}

#[component]
fn ComparisonTable(c: Comparison, name: String) -> impl IntoView {
    let rows = std::iter::once(&c.overall)
        .chain(&c.classes)
        .chain(&c.cells)
        .map(|g| {
            let label = match (&g.class, &g.bucket) {
                (None, _) => "overall".to_string(),
                (Some(k), None) => k.clone(),
                (Some(k), Some(b)) => format!("{k} / {b}"),
            };
            let class = match g.change {
                Change::Worse => "cell fail",
                Change::Better => "cell pass",
                _ => "",
            };
            let mark = match g.change {
                Change::Worse => "✗ ",
                Change::Better => "✓ ",
                _ => "",
            };
            let shifts = g
                .shifts
                .iter()
                .flat_map(|s| {
                    s.percentiles.iter().filter_map(move |p| p.shift_ms.map(|d| format!("{} p{} {}{} ms", s.indicator.label(), fmt_q(p.q), if d >= 0.0 { "+" } else { "" }, fmt::num(d))))
                })
                .collect::<Vec<_>>()
                .join(" · ");
            view! {
                <tr data-testid="compare-row">
                    <th scope="row">{label}</th>
                    <td>{side(g, true)}</td>
                    <td>{side(g, false)}</td>
                    <td class="num">{g.diff.map_or("—".to_string(), |d| format!("{}{} pts", if d >= 0.0 { "+" } else { "" }, fmt::num(d * 100.0)))}</td>
                    <td class="num">{g.p_value.map_or("—".to_string(), |p| if p < 0.0001 { "< 0.0001".to_string() } else { format!("{p:.4}") })}</td>
                    <td class=class>{mark}{g.change.label()}</td>
                    <td class="small">{shifts}</td>
                </tr>
            }
        })
        .collect_view();
    let worse = c.worse().count();
    view! {
        <p data-testid="compare-summary">{if worse == 0 {
            format!("B ({name}) is not significantly worse than A anywhere.")
        } else {
            format!("B ({name}) is significantly worse than A in {worse} group(s).")
        }}</p>
        <div class="scroll">
            <table data-testid="compare-table">
                <thead><tr><th>"group"</th><th>"A attainment"</th><th>"B attainment"</th><th>"B − A"</th><th>"p-value"</th><th>"verdict"</th><th>"percentile shifts"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
