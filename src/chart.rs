//! The one chart component: every plot in the app goes through here.
//!
//! Figures are built with the `plotly` crate and drawn by plotly.js (bundled from npm, loaded by
//! index.html). When plotly.js is missing the chart says so instead of failing.

use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

/// Draws `figure` (a plotly figure as JSON: `plotly::Plot::to_json`) into a div and redraws it
/// whenever the figure changes.
#[component]
pub fn Chart(
    /// Element id and test id, unique on the page.
    id: &'static str,
    /// Accessible description of what the chart shows.
    label: &'static str,
    /// The figure as JSON.
    #[prop(into)]
    figure: Signal<String>,
) -> impl IntoView {
    let missing = RwSignal::new(false);
    Effect::new(move |_| {
        let json = figure.get();
        // Each chart draws in a task of its own: a report with six charts would otherwise block
        // the page for the time of all six at once.
        set_timeout(
            move || {
                if let Err(e) = draw(id, &json) {
                    missing.set(true);
                    web_sys::console::warn_1(&e);
                }
            },
            std::time::Duration::ZERO,
        );
    });
    view! {
        <figure class="chart-wrap">
            <div id=id class="chart" data-testid=id role="img" aria-label=label></div>
            <Show when=move || missing.get()>
                <p class="muted">"The chart library did not load; the numbers above are complete without it."</p>
            </Show>
        </figure>
    }
}

fn draw(id: &str, json: &str) -> Result<(), JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let plotly = js_sys::Reflect::get(&window, &"Plotly".into())?;
    if plotly.is_undefined() {
        return Err("plotly.js is not loaded".into());
    }
    let Some(element) = window.document().and_then(|d| d.get_element_by_id(id)) else {
        return Ok(());
    };
    let figure = js_sys::JSON::parse(json)?;
    let get = |k: &str| js_sys::Reflect::get(&figure, &k.into());
    let config = js_sys::JSON::parse(
        r#"{"responsive": true, "displaylogo": false, "modeBarButtonsToRemove": ["sendDataToCloud"]}"#,
    )?;
    let react: js_sys::Function = js_sys::Reflect::get(&plotly, &"react".into())?.dyn_into()?;
    let args = js_sys::Array::of4(&element, &get("data")?, &get("layout")?, &config);
    react.apply(&plotly, &args)?;
    Ok(())
}
