//! Data: paste, upload or drop request logs; see what was read and what was skipped.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::app::{go, Tab};
use crate::fmt;
use crate::loader::{self, Source};
use crate::state::AppState;

/// The guide's worked example: ten requests, two green p90s, 80 % joint attainment.
pub const SAMPLE_CSV: &str = include_str!("../../tests/fixtures/worked_example.csv");

/// The files of a FileList, to load.
fn sources(list: web_sys::FileList) -> Vec<Source> {
    (0..list.length())
        .filter_map(|k| list.get(k))
        .map(Source::File)
        .collect()
}

#[component]
pub fn DataView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pasted = RwSignal::new(String::new());
    let dragging = RwSignal::new(false);

    let analyze = move |_| {
        loader::load(
            state,
            vec![Source::Bytes {
                name: "pasted text".to_string(),
                bytes: pasted.get_untracked().into_bytes(),
            }],
        )
    };
    let on_files = move |ev: web_sys::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(list) = input.files() else { return };
        loader::load(state, sources(list));
        // The same file chosen again must fire `change` again.
        input.set_value("");
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        let Some(list) = ev.data_transfer().and_then(|d| d.files()) else {
            return;
        };
        loader::load(state, sources(list));
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
                        on:dragover=move |ev: web_sys::DragEvent| { ev.prevent_default(); dragging.set(true); loader::warm(state); }
                        on:dragleave=move |_| dragging.set(false)
                        on:drop=on_drop
                    >
                        <p>"Drop one or more files here, or"</p>
                        <input id="upload" data-testid="upload" type="file" multiple on:click=move |_| loader::warm(state) on:change=on_files />
                    </div>
                    <p class="muted">
                        "No data at hand? " <button class="link" data-testid="try-sample" on:click=sample>"Try the sample"</button>
                        " (the ten-request worked example)."
                    </p>
                </div>
            </div>
            <ReadOptions />
            <Notice />
            <Mapping />
            <Files />
        </section>
    }
}

/// How files are read: detected or chosen format, and the unit of times whose header names none.
/// A change re-reads what is loaded (not the built-in sample).
#[component]
fn ReadOptions() -> impl IntoView {
    use slo_core::ingest::fields::TimeUnit;
    use slo_core::ingest::Format;
    let state = expect_context::<AppState>();
    const UNITS: [(TimeUnit, &str); 4] = [
        (TimeUnit::Ms, "milliseconds"),
        (TimeUnit::S, "seconds"),
        (TimeUnit::Us, "microseconds"),
        (TimeUnit::Ns, "nanoseconds"),
    ];
    let reread = move || {
        let sources = state.last_sources.get_value();
        if !sources.is_empty() && !state.sample.get_untracked() {
            loader::load(state, sources);
        }
    };
    let on_format = move |ev: web_sys::Event| {
        state
            .format
            .set(Format::from_name(&event_target_value(&ev)));
        reread();
    };
    let on_unit = move |ev: web_sys::Event| {
        let k: usize = event_target_value(&ev).parse().unwrap_or(0);
        state
            .default_unit
            .set(UNITS.get(k).map_or(TimeUnit::Ms, |u| u.0));
        reread();
    };
    let formats = Format::ALL
        .map(|f| {
            let selected = move || state.format.get() == Some(f);
            view! { <option value=f.name() selected=selected>{f.describe()}</option> }
        })
        .collect_view();
    let units = UNITS
        .iter()
        .enumerate()
        .map(|(k, (u, label))| {
            let u = *u;
            view! { <option value=k.to_string() selected=move || state.default_unit.get() == u>{*label}</option> }
        })
        .collect_view();
    view! {
        <div class="read-options">
            <label>"Format "
                <select data-testid="input-format" on:change=on_format>
                    <option value="" selected=move || state.format.get().is_none()>"detect from the content"</option>
                    {formats}
                </select>
            </label>
            <label>"Times in columns whose name has no unit are in "
                <select data-testid="default-unit" on:change=on_unit>{units}</select>
            </label>
            <span class="muted small">"Changing either reads the loaded files again."</span>
        </div>
    }
}

/// What the last load said: a headline and the located problems.
#[component]
fn Notice() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        state.notice.get().map(|n| {
            // Loaded, but with rows left out: not the plain green of a clean load.
            let skipped = !n.failed && state.rows_skipped() > 0;
            let (class, mark) = match (n.failed, skipped) {
                (true, _) => ("notice error", "✗ "),
                (false, true) => ("notice warn", "⚠ "),
                (false, false) => ("notice ok", "✓ "),
            };
            let details = n
                .details
                .into_iter()
                .map(|d| view! { <li>{d}</li> })
                .collect_view();
            view! {
                <div class=class role="status" data-testid="load-notice">
                    <strong>{mark}{n.headline}</strong>
                    <ul data-testid="load-details">{details}</ul>
                </div>
            }
        })
    }
}

/// The column-mapping step: tell the tool what unknown headers mean; remembered in this browser.
#[component]
fn Mapping() -> impl IntoView {
    use slo_core::ingest::fields::{Field, MappedColumn};
    use slo_core::ingest::TimeUnit;
    let state = expect_context::<AppState>();
    let fields = || -> [(Field, &'static str); 12] {
        [
            (Field::Ignore, "ignore"),
            (Field::Ttft, "TTFT"),
            (Field::E2e, "E2E latency"),
            (Field::Itl, "inter-token gaps (list)"),
            (Field::Queue, "queue time"),
            (Field::InputTokens, "input tokens"),
            (Field::OutputTokens, "output tokens"),
            (Field::Id, "request id"),
            (Field::Status, "status"),
            (Field::Error, "error text"),
            (Field::Start, "start time"),
            (Field::Label, "label (for class rules)"),
        ]
    };
    move || {
        let unmapped = state
            .notice
            .with(|n| n.as_ref().map(|n| n.unmapped.clone()).unwrap_or_default());
        if unmapped.is_empty() {
            return None;
        }
        let choices: Vec<(String, RwSignal<usize>, RwSignal<usize>)> = unmapped
            .iter()
            .map(|h| (h.clone(), RwSignal::new(0), RwSignal::new(1)))
            .collect();
        let rows = choices
            .iter()
            .enumerate()
            .map(|(k, (header, field, unit))| {
                let (field, unit) = (*field, *unit);
                view! {
                    <tr>
                        <th scope="row"><code>{header.clone()}</code></th>
                        <td><select data-testid=format!("map-field-{k}") aria-label=format!("meaning of column {header}")
                            on:change=move |ev| field.set(event_target_value(&ev).parse().unwrap_or(0))>
                            {fields().into_iter().enumerate().map(|(i, (_, label))| view! { <option value=i.to_string()>{label}</option> }).collect_view()}
                        </select></td>
                        <td><select data-testid=format!("map-unit-{k}") aria-label=format!("unit of column {header}")
                            // A unit only means something for a time.
                            disabled=move || !fields().get(field.get()).is_some_and(|(f, _)| f.is_duration() || f.is_timestamp())
                            on:change=move |ev| unit.set(event_target_value(&ev).parse().unwrap_or(1))>
                            <option value="0">"s"</option><option value="1" selected>"ms"</option><option value="2">"µs"</option><option value="3">"ns"</option>
                        </select></td>
                    </tr>
                }
            })
            .collect_view();
        let apply_choices = choices.clone();
        let apply = move |_| {
            let choices = &apply_choices;
            let units = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns];
            state.mapping.update(|m| {
                for (header, field, unit) in choices {
                    let f = fields()
                        .get(field.get_untracked())
                        .map_or(Field::Ignore, |(f, _)| *f);
                    m.columns.retain(|c| &c.header != header);
                    m.columns.push(MappedColumn {
                        header: header.clone(),
                        field: f,
                        unit: units.get(unit.get_untracked()).copied(),
                    });
                }
            });
            loader::load(state, state.last_sources.get_value());
        };
        Some(view! {
            <div class="mapping" data-testid="mapping">
                <h2>"Columns the tool did not recognise"</h2>
                <p class="muted">"Say what each one holds and in which unit; the mapping is remembered in this browser for the next file."</p>
                <table><thead><tr><th>"column"</th><th>"holds"</th><th>"unit (times)"</th></tr></thead><tbody>{rows}</tbody></table>
                <button class="primary" data-testid="map-apply" on:click=apply>"Apply and re-read"</button>
            </div>
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
                <div class="scroll">
                    <table class="files" data-testid="files">
                        <thead><tr><th>"File"</th><th>"Format"</th><th>"Rows read"</th><th>"Skipped"</th><th>"Size"</th><th>"SHA-256"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
            }
        })
    }
}
