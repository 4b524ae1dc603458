//! The one chart component: every plot in the app goes through here.
//!
//! Figures are built with the `plotly` crate's traces and layouts, written out by [`Figure`], and
//! drawn by plotly.js (bundled from npm, loaded by index.html). When plotly.js is missing the
//! chart says so instead of failing.
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

/// A plotly figure, written as the JSON plotly.js draws: `{"data": [traces], "layout": {...}}`.
///
/// It takes the `plotly` crate's traces (`Scatter`, `Bar`) and `Layout` as they are, and writes
/// each trace with its own type's serializer. `plotly::Plot` holds its traces as trait objects,
/// which made every field type of every trace compile a second, type-erased serializer: this
/// writer leaves 28 KB (gzipped) of that out of the app's wasm (docs/performance.md, fifteenth
/// round). The JSON is the same as `Plot::to_json`'s `data` and `layout`.
#[derive(Default)]
pub struct Figure {
    traces: Vec<String>,
    layout: Option<String>,
}

impl Figure {
    pub fn new() -> Figure {
        Figure::default()
    }

    /// Adds a trace, drawn above the ones added before it.
    pub fn add_trace(&mut self, trace: impl serde::Serialize) {
        self.traces.push(json(&trace));
    }

    pub fn set_layout(&mut self, layout: plotly::Layout) {
        self.layout = Some(json(&layout));
    }

    pub fn to_json(&self) -> String {
        format!(
            r#"{{"data":[{}],"layout":{}}}"#,
            self.traces.join(","),
            self.layout.as_deref().unwrap_or("{}")
        )
    }
}

/// A trace or a layout as JSON. The plotly crate's types have only string keys and finite
/// numbers where they are set, so writing them cannot fail; if it ever did, the part is left
/// empty and the chart misses it rather than the page failing.
fn json(part: &impl serde::Serialize) -> String {
    serde_json::to_string(part).unwrap_or_else(|_| "{}".to_string())
}

/// Draws `figure` (a plotly figure as JSON: [`Figure::to_json`]) into a div once the div is
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

#[cfg(test)]
mod tests {
    use super::Figure;
    use plotly::common::{Line, Mode, Title};
    use plotly::layout::{Axis, Layout};
    use plotly::{Bar, Plot, Scatter};
    use serde_json::Value;

    /// What plotly.js is given: the figure's `data` and `layout`.
    fn drawn(json: &str) -> (Value, Value) {
        let v: Value = serde_json::from_str(json).expect("a figure is JSON");
        (v["data"].clone(), v["layout"].clone())
    }

    #[test]
    fn a_figure_writes_what_plotly_s_own_plot_writes() {
        let layout = || {
            Layout::new()
                .title(Title::with_text("TTFT"))
                .height(320)
                .x_axis(
                    Axis::new()
                        .title(Title::with_text("ms"))
                        .range(vec![0.0, 9.5]),
                )
        };
        let line = || {
            Scatter::new(vec![1.0, 2.5, 4.0], vec![0.1, 0.5, 1.0])
                .mode(Mode::Lines)
                .name("chat")
                .line(Line::new().color("#c0392b").width(2.0))
        };
        let bars = || Bar::new(vec![3, 1], vec!["ttft".to_string(), "tpot".to_string()]);

        let mut ours = Figure::new();
        ours.add_trace(line());
        ours.add_trace(bars());
        ours.set_layout(layout());
        let mut plotly = Plot::new();
        plotly.add_trace(line());
        plotly.add_trace(bars());
        plotly.set_layout(layout());

        let (data, layout) = drawn(&ours.to_json());
        assert_eq!((data.clone(), layout.clone()), drawn(&plotly.to_json()));
        assert_eq!(data[0]["name"], "chat");
        assert_eq!(data[1]["type"], "bar");
        assert_eq!(layout["height"], 320);

        // An empty figure draws nothing, as an empty Plot does.
        assert_eq!(
            drawn(&Figure::new().to_json()),
            drawn(&Plot::new().to_json())
        );
    }
}
