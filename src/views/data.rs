//! Data: paste, upload or drop request logs; see what was read and what was skipped.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::app::{go, Tab};
use crate::fmt;
use crate::state::AppState;

/// The guide's worked example: ten requests, two green p90s, 80 % joint attainment.
pub const SAMPLE_CSV: &str = include_str!("../../tests/fixtures/worked_example.csv");

/// Reads every file of a FileList into (name, bytes).
async fn read_files(list: web_sys::FileList) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for k in 0..list.length() {
        let Some(file) = list.get(k) else { continue };
        let bytes = match JsFuture::from(file.array_buffer()).await {
            Ok(buf) => js_sys::Uint8Array::new(&buf).to_vec(),
            Err(_) => Vec::new(),
        };
        out.push((file.name(), bytes));
    }
    out
}

#[component]
pub fn DataView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pasted = RwSignal::new(String::new());
    let dragging = RwSignal::new(false);

    let load = move |sources: Vec<(String, Vec<u8>)>| {
        if state.load(sources, false) {
            go(Tab::Report);
        }
    };
    let analyze = move |_| {
        load(vec![(
            "pasted text".to_string(),
            pasted.get_untracked().into_bytes(),
        )])
    };
    let on_files = move |ev: web_sys::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(list) = input.files() else { return };
        wasm_bindgen_futures::spawn_local(async move {
            let sources = read_files(list).await;
            load(sources);
        });
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        let Some(list) = ev.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        wasm_bindgen_futures::spawn_local(async move {
            let sources = read_files(list).await;
            load(sources);
        });
    };
    let sample = move |_| {
        if state.load(
            vec![(
                "worked_example.csv (sample)".to_string(),
                SAMPLE_CSV.as_bytes().to_vec(),
            )],
            true,
        ) {
            go(Tab::Report);
        }
    };

    view! {
        <section class="panel">
            <h1>"Your request logs"</h1>
            <p class="lead">
                "Paste or upload per-request logs (CSV, TSV, JSON Lines) or benchmark results. "
                "Columns such as " <code>"ttft_ms"</code> ", " <code>"e2e_ms"</code> " and " <code>"output_tokens"</code>
                " are recognised by name; units come from suffixes like " <code>"_ms"</code> " or " <code>"_s"</code> "."
            </p>
            <div class="two-col">
                <div>
                    <label for="paste">"Paste a log"</label>
                    <textarea
                        id="paste"
                        data-testid="paste"
                        rows="10"
                        spellcheck="false"
                        placeholder="request_id,ttft_ms,e2e_ms,output_tokens\n1,180,4010,101\n…"
                        prop:value=move || pasted.get()
                        on:input=move |ev| pasted.set(event_target_value(&ev))
                    ></textarea>
                    <button class="primary" data-testid="analyze" on:click=analyze>"Analyze pasted text"</button>
                </div>
                <div>
                    <label for="upload">"Or upload files"</label>
                    <div
                        class="dropzone"
                        class:over=move || dragging.get()
                        on:dragover=move |ev: web_sys::DragEvent| { ev.prevent_default(); dragging.set(true); }
                        on:dragleave=move |_| dragging.set(false)
                        on:drop=on_drop
                    >
                        <p>"Drop one or more files here, or"</p>
                        <input id="upload" data-testid="upload" type="file" multiple on:change=on_files />
                    </div>
                    <p class="muted">
                        "No data at hand? " <button class="link" data-testid="try-sample" on:click=sample>"Try the sample"</button>
                        " (the ten-request worked example)."
                    </p>
                </div>
            </div>
            <Notice />
            <Files />
        </section>
    }
}

/// What the last load said: a headline and the located problems.
#[component]
fn Notice() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        state.notice.get().map(|n| {
            let class = if n.failed {
                "notice error"
            } else {
                "notice ok"
            };
            let details = n
                .details
                .into_iter()
                .map(|d| view! { <li>{d}</li> })
                .collect_view();
            view! {
                <div class=class role="status" data-testid="load-notice">
                    <strong>{if n.failed { "✗ " } else { "✓ " }}{n.headline}</strong>
                    <ul data-testid="load-details">{details}</ul>
                </div>
            }
        })
    }
}

/// The loaded files with their provenance.
#[component]
fn Files() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let files = state.files.get();
        (!files.is_empty()).then(|| {
            let rows = files
                .iter()
                .map(|f| {
                    let p = &f.0.provenance;
                    view! {
                        <tr>
                            <td>{p.name.clone()}</td>
                            <td>{p.format.map_or("?", |f| f.describe())}</td>
                            <td class="num">{fmt::count(p.rows_read)}</td>
                            <td class="num">{fmt::count(p.rows_skipped)}</td>
                            <td class="num">{format!("{} bytes", fmt::count(p.size_bytes))}</td>
                            <td><code title=p.sha256.clone()>{p.sha256.get(..12).unwrap_or_default().to_string()}"…"</code></td>
                        </tr>
                    }
                })
                .collect_view();
            view! {
                <h2>"Loaded files"</h2>
                <table class="files" data-testid="files">
                    <thead><tr><th>"File"</th><th>"Format"</th><th>"Rows read"</th><th>"Skipped"</th><th>"Size"</th><th>"SHA-256"</th></tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            }
        })
    }
}
