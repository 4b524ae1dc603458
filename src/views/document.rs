//! Document: the written SLO, with the measured section when data is loaded; copy, download, exports.

use leptos::prelude::*;
use slo_core::document::{document, Measured};
use slo_core::export::{export, ExportFormat};
use slo_core::ingest::Provenance;

use crate::download::{copy, download};
use crate::state::AppState;

#[component]
pub fn DocumentView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let markdown = Memo::new(move |_| {
        // Not measured here while a load's report shows ahead of its data (the files it came
        // from are not the loaded files yet) or its file's digest is being computed.
        let report = (!state.provenance_pending())
            .then(|| state.report.get())
            .flatten();
        let files: Vec<Provenance> = state
            .files
            .with(|f| f.iter().map(|l| l.0.provenance.clone()).collect());
        state.spec.with(|spec| match &report {
            Some(r) => document(
                spec,
                Some(&Measured {
                    report: &r.0,
                    files: &files,
                }),
            ),
            None => document(spec, None),
        })
    });
    let exports = [
        (
            ExportFormat::OpenSlo,
            "OpenSLO YAML",
            "openslo.yaml",
            "application/yaml",
        ),
        (
            ExportFormat::Sloth,
            "Sloth YAML",
            "sloth.yaml",
            "application/yaml",
        ),
        (
            ExportFormat::Prometheus,
            "Prometheus rules",
            "prometheus-rules.yaml",
            "application/yaml",
        ),
        (
            ExportFormat::Sql,
            "SQL (warehouse)",
            "slo.sql",
            "text/plain",
        ),
    ]
    .map(|(format, label, file, mime)| {
        view! {
            <button data-testid=format!("export-{file}") on:click=move |_| {
                let text = state.spec.with(|s| export(s, format, "requests"));
                download(file, mime, &text);
            }>{label}</button>
        }
    });
    view! {
        <section class="panel document">
            <h1>"SLO document"</h1>
            <p class="lead">"A definition someone else can implement without asking questions. It follows the Targets tab; with data loaded it adds what was measured."</p>
            <div class="doc-layout">
                <div>
                    <div class="rendered" data-testid="document-preview" inner_html=move || crate::markdown::to_html(&markdown.get())></div>
                    <details>
                        <summary>"Markdown source"</summary>
                        <pre class="markdown" data-testid="document" tabindex="0">{move || markdown.get()}</pre>
                    </details>
                </div>
                <aside class="actions-col">
                    <button class="primary" data-testid="doc-copy" on:click=move |_| copy(&markdown.get_untracked())>"Copy Markdown"</button>
                    <button data-testid="doc-download" on:click=move |_| download("slo.md", "text/markdown", &markdown.get_untracked())>"Download .md"</button>
                    <button on:click=move |_| { if let Some(w) = web_sys::window() { let _ = w.print(); } }>"Print"</button>
                    <h3>"Export"</h3>
                    {exports}
                    <p class="muted">"Histogram-based exports give per-indicator fractions, not joint attainment: check every target per request at the gateway."</p>
                </aside>
            </div>
        </section>
    }
}
