//! The one chart component: every plot in the app goes through here.
//!
//! Figures are built with the `plotly` crate and drawn by plotly.js (bundled from npm, loaded by
//! index.html). When plotly.js is missing the chart says so instead of failing.
//!
//! A chart is drawn only once it is in the viewport or about to be (an IntersectionObserver
//! says so). Drawing takes plotly tens of milliseconds per chart and a report has up to seven,
//! most of them below the fold: this way the report's numbers are painted first, each chart
//! follows in a task of its own as it comes into view, and a chart nobody scrolls to costs
//! nothing. Before printing, every chart not yet drawn is drawn.

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{IntersectionObserver, IntersectionObserverEntry, IntersectionObserverInit};

/// How far outside the viewport a chart counts as about to be visible (CSS margin of the
/// viewport): far enough that a reader scrolling at an ordinary pace finds it drawn.
const NEAR: &str = "200px 0px";

/// Draws `figure` (a plotly figure as JSON: `plotly::Plot::to_json`) into a div once the div is
/// near the viewport, and redraws it whenever the figure changes while it is.
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
    let node = NodeRef::<leptos::html::Div>::new();
    // Whether the chart is in the viewport or within NEAR of it.
    let near = RwSignal::new(false);
    // The figure drawn (or about to be): scrolling a chart out and back in does not redraw it.
    let drawn = StoredValue::new(None::<String>);
    let watch = StoredValue::new_local(None::<Watch>);
    Effect::new(move |_| {
        if let Some(element) = node.get() {
            match Watch::start(&element, near) {
                Some(w) => watch.set_value(Some(w)),
                // No IntersectionObserver in this browser: draw at once.
                None => near.set(true),
            }
        }
    });
    Effect::new(move |_| {
        // Read before the figure: a chart that is not near does not even look at its figure.
        if !near.get() {
            return;
        }
        let json = figure.get();
        if drawn.with_value(|d| d.as_ref() == Some(&json)) {
            return;
        }
        drawn.set_value(Some(json.clone()));
        // Each chart draws in a task of its own: a report with six charts would otherwise block
        // the page for the time of all six at once.
        set_timeout(move || show(id, &json, missing), std::time::Duration::ZERO);
    });
    // Printing lays out the whole page right after this event, without waiting for a task or
    // for the observer: draw now.
    let on_print = window_event_listener_untyped("beforeprint", move |_| {
        let json = figure.get_untracked();
        if drawn.with_value(|d| d.as_ref() != Some(&json)) {
            drawn.set_value(Some(json.clone()));
            show(id, &json, missing);
        }
    });
    on_cleanup(move || on_print.remove());
    view! {
        <figure class="chart-wrap">
            <div id=id class="chart" data-testid=id role="img" aria-label=label node_ref=node></div>
            <Show when=move || missing.get()>
                <p class="muted">"The chart library did not load; the numbers above are complete without it."</p>
            </Show>
        </figure>
    }
}

/// An IntersectionObserver that keeps a chart's `near` up to date. It lives as long as the
/// chart: dropped, it stops observing (its callback must not be called once freed).
struct Watch {
    observer: IntersectionObserver,
    _callback: Closure<dyn FnMut(js_sys::Array)>,
}

impl Watch {
    /// Starts watching `element`; `None` where the browser has no IntersectionObserver.
    fn start(element: &web_sys::Element, near: RwSignal<bool>) -> Option<Watch> {
        let callback = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
            // Entries come oldest first: the last one says where the chart is now.
            let now = entries
                .iter()
                .last()
                .and_then(|e| e.dyn_into::<IntersectionObserverEntry>().ok())
                .map(|e| e.is_intersecting());
            if let Some(now) = now.filter(|&now| now != near.get_untracked()) {
                near.set(now);
            }
        });
        let options = IntersectionObserverInit::new();
        options.set_root_margin(NEAR);
        let observer =
            IntersectionObserver::new_with_options(callback.as_ref().unchecked_ref(), &options)
                .ok()?;
        observer.observe(element);
        Some(Watch {
            observer,
            _callback: callback,
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// Draws, or says that the chart library is missing.
fn show(id: &str, json: &str, missing: RwSignal<bool>) {
    if let Err(e) = draw(id, json) {
        missing.set(true);
        web_sys::console::warn_1(&e);
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
