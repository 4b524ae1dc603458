//! Sweep: one result file per offered rate; attainment against rate, the SLO capacity, and what
//! it means for provisioning.
//!
//! Every figure comes from `slo_core::sweep`. This view reads files, keeps the rates the user
//! typed, and formats. The files are prepared once per file set and grouping (`prepare_sweep`);
//! a target change only re-runs `evaluate_sweep`.
//!
//! Size: the app's wasm has a budget, and every `view!` costs generic code. The read-only
//! blocks are therefore HTML strings (every piece of text escaped with [`esc`]) in a few memos,
//! and the inputs inside them are read by one delegated event handler.

use leptos::prelude::*;
use plotly::common::{DashType, Fill, Font, Line, Mode, Title};
use plotly::layout::{Annotation, Axis, Layout, Margin, Shape, ShapeLine, ShapeType};
use plotly::Scatter;
use slo_core::evaluate::{fmt_pct, fmt_q};
use slo_core::ingest::{self, IngestOptions, Loaded, RequestRate};
use slo_core::spec::{Indicator, Spec};
use slo_core::sweep::{
    evaluate_sweep, fmt_rate, prepare_sweep, provision, scale_curve_prepared, sweep_points, Bound,
    Curve, CurvePoint, LintKind, RateError, ScaleCurve, SweepInput, SweepPoint, SweepReport,
    SCALE_FACTORS, SWEEP_INDICATORS,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::chart::{Chart, Figure};
use crate::fmt;
use crate::state::{AppState, Shared};

/// The sample sweep: seven vLLM result files (200 requests each, 1 to 12 req/s), the files of
/// `crates/core/tests/fixtures/sweep/`, copied by Trunk to `sample/` beside the app and fetched
/// on demand, so that they add nothing to the app's download until asked for.
const SAMPLE: [&str; 7] = [
    "sweep_1.json",
    "sweep_2.json",
    "sweep_4.json",
    "sweep_6.json",
    "sweep_8.json",
    "sweep_10.json",
    "sweep_12.json",
];

/// What the sweep tab holds. It lives outside the view (the view is rebuilt on every tab
/// switch), so that a sweep stays loaded while the user edits targets on another tab.
#[derive(Clone)]
struct Store {
    files: ArcRwSignal<Vec<Shared<Loaded>>>,
    /// One per file: the rate the user typed, if any.
    typed: ArcRwSignal<Vec<Option<RequestRate>>>,
    /// What the last load (or the last typed rate) said: (failed, sentence).
    notice: ArcRwSignal<Option<(bool, String)>>,
    peak_rps: ArcRwSignal<Option<f64>>,
    gpus: ArcRwSignal<Option<u32>>,
    /// The file of the SLO-scale curve (index into the files); `None`: the core's default.
    scale_at: ArcRwSignal<Option<usize>>,
}

thread_local! {
    static STORE: Store = Store {
        files: ArcRwSignal::new(Vec::new()),
        typed: ArcRwSignal::new(Vec::new()),
        notice: ArcRwSignal::new(None),
        peak_rps: ArcRwSignal::new(None),
        gpus: ArcRwSignal::new(None),
        scale_at: ArcRwSignal::new(None),
    };
}

fn store() -> Store {
    STORE.with(Store::clone)
}

/// The points of the sweep, or the files whose rate is unknown.
type Points = Shared<Result<Vec<SweepPoint>, Vec<RateError>>>;

/// Escapes text for HTML.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A sentence from a core message: first letter upper case, escaped, with a full stop.
pub(crate) fn sentence(s: &str) -> String {
    // A first word that is a name (a file `a.json`, a metric `vllm:ttft`, a field `e2e_ms`)
    // keeps its case; an ordinary word starts the sentence with a capital.
    let word = s.split_whitespace().next().unwrap_or("");
    let first: String = if word.chars().all(char::is_alphabetic) {
        let mut c = s.chars();
        c.next()
            .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
    } else {
        s.to_string()
    };
    let end = if first.ends_with('.') { "" } else { "." };
    format!("{}{end}", esc(&first))
}

/// A list of sentences as `<ul class="warnings">`, empty when there are none.
pub(crate) fn warning_list(test_id: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let li: String = items
        .iter()
        .map(|i| format!("<li>{}</li>", sentence(i)))
        .collect();
    format!("<ul class=\"warnings\" data-testid=\"{test_id}\">{li}</ul>")
}

/// Parses (name, bytes) sources; keeps the previous sweep when nothing could be read.
fn load(sources: Vec<(String, Vec<u8>)>, what: &str) {
    let s = store();
    let options = IngestOptions::default();
    let mut good = Vec::new();
    let mut problems = Vec::new();
    for (name, bytes) in &sources {
        let loaded = ingest::parse(name, bytes, &options);
        match &loaded.fatal {
            Some(fatal) => problems.push(fatal.clone()),
            None => good.push(Shared::new(loaded)),
        }
    }
    if good.is_empty() {
        problems.insert(
            0,
            "Nothing could be read; the previous sweep is still loaded.".to_string(),
        );
        s.notice.set(Some((true, problems.join(" "))));
        return;
    }
    let mut text = format!(
        "Loaded {what}{} file{}, one per load level.",
        good.len(),
        if good.len() == 1 { "" } else { "s" }
    );
    for p in &problems {
        text.push(' ');
        text.push_str(p);
    }
    s.notice.set(Some((!problems.is_empty(), text)));
    s.typed.set(vec![None; good.len()]);
    s.scale_at.set(None);
    s.files.set(good);
}

/// GETs `url` (same origin) as bytes: `fetch` through JS reflection, which needs no extra
/// web-sys features.
async fn fetch_bytes(url: &str) -> Result<Vec<u8>, JsValue> {
    let window = web_sys::window().ok_or("no window")?;
    let call =
        |target: &JsValue, method: &str, arg: &JsValue| -> Result<js_sys::Promise, JsValue> {
            let f: js_sys::Function = js_sys::Reflect::get(target, &method.into())?.dyn_into()?;
            f.call1(target, arg)?.dyn_into()
        };
    let response = JsFuture::from(call(&window, "fetch", &url.into())?).await?;
    if js_sys::Reflect::get(&response, &"ok".into())?.as_bool() != Some(true) {
        return Err(format!("{url} was not found beside the app").into());
    }
    let buffer = JsFuture::from(call(&response, "arrayBuffer", &JsValue::UNDEFINED)?).await?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

async fn load_sample() {
    let mut sources = Vec::new();
    for name in SAMPLE {
        match fetch_bytes(&format!("sample/{name}")).await {
            Ok(bytes) => sources.push((format!("{name} (sample)"), bytes)),
            Err(e) => {
                let why = e
                    .as_string()
                    .unwrap_or_else(|| "the page could not read its own files".to_string());
                store().notice.set(Some((
                    true,
                    format!("The sample sweep could not be fetched ({why}); load your own files instead."),
                )));
                return;
            }
        }
    }
    load(sources, "the sample sweep: ");
}

/// Reads every file of a FileList into (name, bytes).
async fn read_files(list: web_sys::FileList) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for k in 0..list.length() {
        let Some(file) = list.get(k) else { continue };
        if let Ok(buf) = JsFuture::from(file.array_buffer()).await {
            out.push((file.name(), js_sys::Uint8Array::new(&buf).to_vec()));
        }
    }
    out
}

/// A typed rate: empty is none, `inf` is a burst, otherwise req/s (the core checks the sign).
fn parse_rate(text: &str) -> Result<Option<RequestRate>, String> {
    let t = text.trim().trim_end_matches("req/s").trim();
    if t.is_empty() {
        return Ok(None);
    }
    if t.eq_ignore_ascii_case("inf") {
        return Ok(Some(RequestRate::Infinite));
    }
    t.replace(',', "")
        .parse::<f64>()
        .map(|r| Some(RequestRate::PerSecond(r)))
        .map_err(|_| format!("{t:?} is not a rate: type a number of req/s, or inf"))
}

/// The element an event came from, as an input (inputs and selects both have a value).
fn target_input(ev: &web_sys::Event) -> Option<web_sys::HtmlInputElement> {
    ev.target()?.dyn_into().ok()
}

/// A number typed into a field: empty or unreadable is `None`.
fn typed_number(ev: &web_sys::Event) -> Option<f64> {
    let text = event_target_value(ev).trim().replace(',', "");
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
}

#[component]
pub fn SweepView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let s = store();
    let files = RwSignal::from(s.files.clone());
    let typed = RwSignal::from(s.typed.clone());
    let notice = RwSignal::from(s.notice.clone());
    let peak = RwSignal::from(s.peak_rps.clone());
    let gpus = RwSignal::from(s.gpus.clone());
    let scale_at = RwSignal::from(s.scale_at.clone());
    let spec = state.spec;
    let dragging = RwSignal::new(false);

    // Files and typed rates → points; points and grouping → prepared; prepared and targets →
    // report. A target change re-runs only the last.
    let points: Memo<Points> = Memo::new(move |_| {
        let typed = typed.get();
        files.with(|f| {
            let inputs = f
                .iter()
                .enumerate()
                .map(|(k, l)| SweepInput {
                    loaded: (*l.0).clone(),
                    rate_override: typed.get(k).copied().flatten(),
                })
                .collect();
            Shared::new(sweep_points(inputs))
        })
    });
    let key = Memo::new(move |_| spec.with(Spec::grouping_key));
    let prepared = Memo::new(move |_| {
        key.track();
        let p = points.get();
        Shared::new(match p.0.as_ref() {
            Ok(pts) => spec.with_untracked(|s| prepare_sweep(pts, s)),
            Err(_) => Vec::new(),
        })
    });
    let report: Memo<Option<Shared<SweepReport>>> = Memo::new(move |_| {
        let p = points.get();
        let prep = prepared.get();
        let pts = p.0.as_ref().as_ref().ok().filter(|v| !v.is_empty())?;
        spec.with(|s| {
            s.validate()
                .is_empty()
                .then(|| Shared::new(evaluate_sweep(pts, &prep.0, s)))
        })
    });
    // The SLO-scale curve at one file: the chosen one, else the core's default.
    let scale_index = Memo::new(move |_| {
        scale_at.get().or_else(|| {
            report.with(|r| {
                let r = &r.as_ref()?.0;
                r.nearest_point(r.default_scale_rate()?)
            })
        })
    });
    let scale: Memo<Option<Shared<ScaleCurve>>> = Memo::new(move |_| {
        let k = scale_index.get()?;
        let p = points.get();
        let point = p.0.as_ref().as_ref().ok()?.get(k)?;
        spec.with(|s| {
            if !s.validate().is_empty() {
                return None;
            }
            let prepared = slo_core::evaluate::prepare(&point.table, s);
            Some(Shared::new(scale_curve_prepared(
                point,
                &prepared,
                s,
                &SCALE_FACTORS,
            )))
        })
    });

    // Text blocks (HTML) and figures (plotly JSON).
    let html_notice = Memo::new(move |_| {
        notice.with(|n| {
            n.as_ref().map_or(String::new(), |(failed, text)| {
                format!(
                    "<p class=\"notice {}\" role=\"status\" data-testid=\"sweep-notice\">{} {}</p>",
                    if *failed { "error" } else { "ok" },
                    if *failed { "✗" } else { "✓" },
                    esc(text)
                )
            })
        })
    });
    let html_answer = Memo::new(move |_| {
        let p = points.get();
        report.with(|r| match (r, p.0.as_ref()) {
            (Some(r), _) => answer_html(&r.0, spec.with(|s| s.classes.len())),
            (None, Err(errors)) => {
                let li: String = errors.iter().map(|e| format!("<li>{}</li>", esc(&e.to_string()))).collect();
                format!("<div class=\"notice error\" data-testid=\"sweep-rate-missing\"><strong>Every file needs its offered rate: type it in the table below.</strong><ul>{li}</ul></div>")
            }
            (None, Ok(v)) if v.is_empty() => "<p class=\"empty\" data-testid=\"sweep-empty\">No sweep loaded yet.</p>".to_string(),
            (None, Ok(_)) => "<p class=\"notice error\" data-testid=\"sweep-invalid\">The targets are not valid; fix them on the Targets tab.</p>".to_string(),
        })
    });
    let html_lints =
        Memo::new(move |_| report.with(|r| r.as_ref().map_or(String::new(), |r| lints_html(&r.0))));
    let html_files = Memo::new(move |_| {
        let p = points.get();
        let t = typed.get();
        report.with(|r| files.with(|f| files_html(f, &t, &p, r.as_ref().map(|r| r.0.as_ref()))))
    });
    let html_provision = Memo::new(move |_| {
        report.with(|r| {
            r.as_ref().map_or(String::new(), |r| {
                provision_html(&r.0, peak.get(), gpus.get())
            })
        })
    });
    let html_scale_options = Memo::new(move |_| {
        let chosen = scale_index.get();
        report.with(|r| {
            r.as_ref().map_or(String::new(), |r| {
                r.0.points
                    .iter()
                    .map(|p| {
                        format!(
                            "<option value=\"{}\"{}>{} req/s — {}</option>",
                            p.index,
                            if chosen == Some(p.index) {
                                " selected"
                            } else {
                                ""
                            },
                            fmt_rate(p.rate_rps),
                            esc(&p.name)
                        )
                    })
                    .collect()
            })
        })
    });
    let html_scale = Memo::new(move |_| {
        scale.with(|c| {
            c.as_ref().map_or(String::new(), |c| {
                format!(
                    "<p data-testid=\"sweep-scale-message\">{}</p>",
                    sentence(&c.0.message)
                )
            })
        })
    });
    let no_report = Memo::new(move |_| report.with(Option::is_none));
    let figure = move |f: fn(&SweepReport, &Spec) -> String| {
        Signal::derive(move || {
            report.with(|r| match r {
                Some(r) => spec.with(|s| f(&r.0, s)),
                None => Figure::new().to_json(),
            })
        })
    };
    let scale_figure = Signal::derive(move || {
        let objective = spec.with(|s| s.objective);
        scale.with(|c| {
            c.as_ref().map_or_else(
                || Figure::new().to_json(),
                |c| scale_figure(&c.0, objective),
            )
        })
    });

    // Events: one handler per kind of event for the whole tab, dispatched on the target's
    // `id`, `data-file` or `data-action` (the inputs live in HTML strings).
    let on_click = move |ev: web_sys::MouseEvent| {
        if action(&ev).as_deref() == Some("sample") {
            wasm_bindgen_futures::spawn_local(load_sample());
        }
    };
    let on_change = move |ev: web_sys::Event| {
        let Some(input) = target_input(&ev) else {
            return;
        };
        if input.id() == "sweep-upload" {
            if let Some(list) = input.files() {
                wasm_bindgen_futures::spawn_local(async move { load(read_files(list).await, "") });
            }
        } else if let Some(k) = input
            .get_attribute("data-file")
            .and_then(|k| k.parse::<usize>().ok())
        {
            match parse_rate(&input.value()) {
                Ok(v) => typed.update(|t| {
                    if t.len() <= k {
                        t.resize(k + 1, None);
                    }
                    if let Some(slot) = t.get_mut(k) {
                        *slot = v;
                    }
                }),
                Err(e) => notice.set(Some((true, e))),
            }
        } else if action(&ev).as_deref() == Some("scale") {
            scale_at.set(input.value().parse().ok());
        }
    };
    let on_input = move |ev: web_sys::Event| match action(&ev).as_deref() {
        Some("peak") => peak.set(typed_number(&ev)),
        Some("gpus") => gpus.set(
            typed_number(&ev)
                .filter(|g| *g >= 1.0 && g.fract() == 0.0 && *g <= f64::from(u32::MAX))
                .map(|g| g as u32),
        ),
        _ => {}
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(list) = ev.data_transfer().and_then(|d| d.files()) {
            wasm_bindgen_futures::spawn_local(async move { load(read_files(list).await, "") });
        }
    };
    // The provisioning fields, written once per visit so that typing never re-renders them.
    let provision_form = format!(
        "<div class=\"quick-targets provision-form\" role=\"group\" aria-label=\"Provisioning\">\
         <div class=\"field\"><label for=\"sweep-peak\">Peak traffic (req/s)</label>\
         <input id=\"sweep-peak\" data-testid=\"sweep-peak\" data-action=\"peak\" type=\"text\" inputmode=\"decimal\" value=\"{}\">\
         <small class=\"help\">the busiest rate the whole fleet must carry</small></div>\
         <div class=\"field\"><label for=\"sweep-gpus-per-replica\">GPUs per replica</label>\
         <input id=\"sweep-gpus-per-replica\" data-testid=\"sweep-gpus-per-replica\" data-action=\"gpus\" type=\"text\" inputmode=\"numeric\" value=\"{}\">\
         <small class=\"help\">as in the swept deployment</small></div></div>",
        peak.get_untracked().map_or(String::new(), fmt::spec_number),
        gpus.get_untracked().map_or(String::new(), |g| g.to_string())
    );

    let percentile_charts = SWEEP_INDICATORS.map(|ind| {
        let id: &'static str = match ind {
            Indicator::Ttft => "chart-sweep-ttft",
            Indicator::Tpot => "chart-sweep-tpot",
            _ => "chart-sweep-e2e",
        };
        let figure = Signal::derive(move || {
            report.with(|r| match r {
                Some(r) => spec.with(|s| percentile_figure(&r.0, s, ind)),
                None => Figure::new().to_json(),
            })
        });
        view! { <Chart id=id label="A percentile of one indicator against offered rate, with the target as a dashed line" figure=figure /> }
    });

    view! {
        <section class="panel sweep" on:click=on_click on:change=on_change on:input=on_input>
            <h1>"Load sweep: how much traffic holds the SLO"</h1>
            <p class="lead">
                "Measure one deployment at several offered request rates, one result file per rate (e.g. "
                <code>"vllm bench serve --request-rate R --save-result --save-detailed"</code>
                " for R = 1, 2, 4 …). Each file is judged against your targets exactly as on the Report tab; the capacity is the highest rate at which the objective still holds. Change a target on the Targets or Report tab and everything here follows."
            </p>
            <div
                class="dropzone sweep-load"
                class:over=move || dragging.get()
                on:dragover=move |ev: web_sys::DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop
            >
                <label for="sweep-upload">"Drop the result files here (one per rate), or choose them: "</label>
                <input id="sweep-upload" data-testid="sweep-upload" type="file" multiple />
                <p class="muted">
                    "No sweep at hand? "
                    <button class="primary" data-testid="sweep-sample" data-action="sample">"Load the sample sweep"</button>
                    " seven vLLM runs of 200 requests each, from 1 to 12 req/s."
                </p>
            </div>
            <div inner_html=html_notice></div>
            <div inner_html=html_answer></div>
            <div class="sweep-results" class:hidden=no_report>
                <Chart id="chart-sweep-attainment" label="Joint attainment against offered rate, with its 95 % interval, the objective and the capacity" figure=figure(attainment_figure) />
                <p class="muted chart-note">
                    "Each point is one file: the share of its requests that met every target at once (failures count as bad), with its 95 % interval shaded. "
                    "The dashed red line is the objective, the green line the capacity, the dotted grey line the interpolated crossing."
                </p>
                <div inner_html=html_lints></div>
            </div>
            <div class="scroll" inner_html=html_files></div>
            <div class="sweep-results" class:hidden=no_report>
                <h2>"Latency against rate"</h2>
                <p class="muted">"The spec's percentiles of each indicator at each rate; the dashed line is the target. Latency stays flat while the server keeps up, then climbs steeply once requests queue."</p>
                <div class="chart-grid">{percentile_charts}</div>
                <h2>"Throughput and goodput"</h2>
                <p class="muted">"Throughput counts completed requests per second, goodput only the good ones. The dotted diagonal is the offered rate: throughput falls away from it where the server saturates."</p>
                <Chart id="chart-sweep-throughput" label="Throughput and goodput against offered rate" figure=figure(throughput_figure) />
                <h2>"Provisioning"</h2>
                <p class="muted">"The sweep measured one replica. Type your peak traffic to size the fleet, with one spare replica for a failure."</p>
                <div inner_html=provision_form></div>
                <div inner_html=html_provision></div>
                <h2>"How much looser would the targets have to be?"</h2>
                <p class="muted">"DistServe's SLO-scale curve: attainment at one rate as every target is multiplied by a factor (0.5 = twice as strict, 2 = twice as loose)."</p>
                <label class="inline small">"At the rate of "
                    <select data-testid="sweep-scale-at" data-action="scale" inner_html=html_scale_options></select>
                </label>
                <div inner_html=html_scale></div>
                <Chart id="chart-sweep-scale" label="Attainment against the factor every target is multiplied by" figure=scale_figure />
            </div>
        </section>
    }
}

/// The `data-action` of the element an event came from.
pub(crate) fn action(ev: &web_sys::Event) -> Option<String> {
    ev.target()?
        .dyn_into::<web_sys::Element>()
        .ok()?
        .get_attribute("data-action")
}

/// "6 req/s", "≥ 12 req/s", "< 1 req/s".
fn rate_with_bound(rate: f64, bound: Bound) -> String {
    let w = match bound {
        Bound::Estimate => "",
        Bound::AtLeast => "≥ ",
        Bound::AtMost => "< ",
    };
    format!("{w}{} req/s", fmt_rate(rate))
}

/// The capacity as a headline figure and the sentence under it.
fn capacity_sentence(r: &SweepReport) -> (String, String) {
    let tp = &r.throughput;
    let suggest = match tp.max_throughput_rps {
        Some(t) if tp.levelled_off => {
            format!("; throughput alone would suggest {} req/s", fmt_rate(t))
        }
        Some(t) => format!(
            "; throughput alone would suggest at least {} req/s (it was still growing at the highest rate)",
            fmt_rate(t)
        ),
        None => String::new(),
    };
    let obj = fmt_pct(r.objective);
    match r.capacity.figure() {
        Some((c, b)) => {
            let text = match b {
                Bound::Estimate => format!(
                    "This deployment holds the SLO (objective {obj}) up to {} req/s{suggest}.",
                    fmt_rate(c)
                ),
                Bound::AtLeast => format!(
                    "This deployment holds the SLO (objective {obj}) at every measured rate, so up to at least {} req/s{suggest}. Measure higher rates to find the limit.",
                    fmt_rate(c)
                ),
                Bound::AtMost => format!(
                    "This deployment misses the SLO (objective {obj}) even at the lowest measured rate, {} req/s{suggest}. Measure lower rates.",
                    fmt_rate(c)
                ),
            };
            (rate_with_bound(c, b), text)
        }
        None => (
            "—".to_string(),
            sentence(&format!(
                "No capacity could be read: {}",
                r.capacity.message
            )),
        ),
    }
}

/// The answer: capacity, the sentence, the core's reading of the curves, classes, lints.
fn answer_html(r: &SweepReport, n_classes: usize) -> String {
    let (figure, text) = capacity_sentence(r);
    let binding = match (&r.binding_class, n_classes > 1) {
        (Some(c), true) => format!(
            " The class <strong>{}</strong> binds: it is the first to miss the objective.",
            esc(c)
        ),
        _ => String::new(),
    };
    let mut out = format!(
        "<div class=\"headline sweep-answer\"><span class=\"big\" data-testid=\"sweep-capacity\">{}</span> <span class=\"muted\">SLO capacity</span>\
         <p class=\"sentence\" data-testid=\"sweep-sentence\">{}{binding}</p>\
         <p class=\"muted\" data-testid=\"sweep-reading\">{} {}</p></div>",
        esc(&figure),
        esc(&text),
        sentence(&r.capacity.message),
        sentence(&r.throughput.message)
    );
    if n_classes > 1 {
        out.push_str("<table class=\"files\" data-testid=\"sweep-classes\"><thead><tr><th>Class</th><th>Capacity</th><th>Reading of its curve</th></tr></thead><tbody>");
        for c in r.curves.iter().filter(|c| c.class.is_some()) {
            let cap = c
                .capacity
                .figure()
                .map_or("—".to_string(), |(x, b)| rate_with_bound(x, b));
            out.push_str(&format!(
                "<tr><th scope=\"row\">{}</th><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(c.class.as_deref().unwrap_or_default()),
                esc(&cap),
                sentence(&c.capacity.message)
            ));
        }
        out.push_str("</tbody></table>");
    }
    out
}

/// The lints as a short list: the same warning for seven files is one warning about seven files.
fn lints_html(r: &SweepReport) -> String {
    let mut out = String::new();
    if !r.lints.is_empty() {
        let mut li = String::new();
        for (k, l) in r.lints.iter().enumerate() {
            let same = |o: &&slo_core::sweep::Lint| o.kind == l.kind && o.message == l.message;
            if r.lints.iter().take(k).any(|o| same(&o)) {
                continue;
            }
            let files: Vec<&str> = r
                .lints
                .iter()
                .filter(same)
                .filter_map(|o| o.file.as_deref())
                .collect();
            li.push_str(&format!(
                "<li><strong>{}</strong>{}: {}</li>",
                lint_title(l.kind),
                match files.len() {
                    0 => String::new(),
                    n if n > 2 && n == r.points.len() => format!(" · all {n} files"),
                    _ => format!(" · {}", esc(&files.join(", "))),
                },
                sentence(&l.message)
            ));
        }
        out.push_str(&format!(
            "<h2>Warnings about the sweep</h2><ul class=\"warnings\" data-testid=\"sweep-lints\">{li}</ul>"
        ));
    }
    out
}

fn lint_title(kind: LintKind) -> &'static str {
    match kind {
        LintKind::ClosedLoop => "Closed loop",
        LintKind::Burstiness => "Burstiness",
        LintKind::FixedLength => "Fixed lengths",
        LintKind::ClientSaturated => "Client saturated",
        LintKind::FewRequests => "Few requests",
        LintKind::HiddenFailures => "Hidden failures",
        LintKind::MissingFailures => "Missing failures",
        LintKind::RateOverridden => "Rate overridden",
        LintKind::DuplicateRate => "Duplicate rate",
        LintKind::Unplaced => "Not placed",
    }
}

/// One row per file, by rate (files that could not be placed last): the rate and where it came
/// from, the file's numbers, and a field to type the rate (`data-file` = the file's index).
fn files_html(
    files: &[Shared<Loaded>],
    typed: &[Option<RequestRate>],
    p: &Points,
    r: Option<&SweepReport>,
) -> String {
    if files.is_empty() {
        return String::new();
    }
    let overall = r.and_then(SweepReport::overall);
    let mut order: Vec<usize> =
        r.map_or(Vec::new(), |r| r.points.iter().map(|i| i.index).collect());
    let rest: Vec<usize> = (0..files.len()).filter(|k| !order.contains(k)).collect();
    order.extend(rest);
    let mut rows = String::new();
    for k in order {
        let Some(f) = files.get(k) else { continue };
        let name = &f.0.provenance.name;
        let pos = r.and_then(|r| r.points.iter().position(|i| i.index == k));
        let info = pos.and_then(|pos| r.and_then(|r| r.points.get(pos)));
        let cp: Option<&CurvePoint> =
            pos.and_then(|pos| overall.and_then(|c: &Curve| c.points.get(pos)));
        let rate = match (info, p.0.as_ref()) {
            (Some(i), _) => {
                let offered = match i.offered {
                    RequestRate::PerSecond(x) => format!("{} req/s", fmt_rate(x)),
                    RequestRate::Infinite => {
                        format!("inf, placed at its achieved {} req/s", fmt_rate(i.rate_rps))
                    }
                };
                format!(
                    "{offered} <span class=\"muted\">({})</span>",
                    i.rate_source.describe()
                )
            }
            (None, Err(errors)) => match errors.iter().find(|e| &e.file == name) {
                Some(e) => format!(
                    "<span class=\"field-error\">✗ {}</span>",
                    sentence(&e.message)
                ),
                None => "—".to_string(),
            },
            (None, Ok(_)) => "not placed (see the warnings)".to_string(),
        };
        let cell = |v: Option<String>| {
            v.map_or("<td></td>".to_string(), |v| {
                format!("<td class=\"num\">{v}</td>")
            })
        };
        let verdict = match cp.and_then(|c| c.meets_objective) {
            Some(true) => "<td class=\"cell pass\">✓ meets</td>",
            Some(false) => "<td class=\"cell fail\">✗ misses</td>",
            None => "<td></td>",
        };
        let now = typed
            .get(k)
            .copied()
            .flatten()
            .map_or(String::new(), |t| match t {
                RequestRate::PerSecond(x) => fmt_rate(x),
                RequestRate::Infinite => "inf".to_string(),
            });
        rows.push_str(&format!(
            "<tr{}><td>{}</td><td>{rate}</td>{}{}{verdict}{}{}\
             <td><input type=\"text\" class=\"cell-input\" inputmode=\"decimal\" data-testid=\"sweep-rate-input\" data-file=\"{k}\" aria-label=\"Offered rate of {}, req/s\" placeholder=\"{}\" value=\"{}\"></td></tr>",
            if info.is_none() { " class=\"missing\"" } else { "" },
            esc(name),
            cell(cp.map(|c| fmt::count(c.attempted))),
            cell(cp.map(|c| fmt::pct(c.attainment))),
            cell(cp.map(|c| fmt::opt(c.throughput_rps))),
            cell(cp.map(|c| fmt::opt(c.goodput_rps))),
            esc(name),
            if info.is_none() { "type req/s" } else { "override" },
            esc(&now)
        ));
    }
    format!(
        "<h2>Files</h2><table class=\"files\" data-testid=\"sweep-files\"><thead><tr>\
         <th>File</th><th>Offered rate</th><th>Requests</th>\
         <th title=\"good / attempted: requests that met every target at once; failures count as bad\">Attainment</th>\
         <th>Objective</th><th title=\"completed requests per second\">Throughput (req/s)</th>\
         <th title=\"good requests per second\">Goodput (req/s)</th>\
         <th title=\"wins over the file's own rate and its name; req/s or inf\">Type a rate</th>\
         </tr></thead><tbody>{rows}</tbody></table>"
    )
}

/// Replicas, GPUs and per-GPU goodput for the typed peak.
fn provision_html(r: &SweepReport, peak: Option<f64>, gpus: Option<u32>) -> String {
    let p = provision(&r.capacity, peak, gpus);
    let word = |b: Bound| match b {
        Bound::Estimate => "",
        Bound::AtLeast => "≥ ",
        Bound::AtMost => "≤ ",
    };
    let per_gpu = match p.per_gpu_goodput_bound {
        Bound::AtMost => "< ",
        b => word(b),
    };
    let card = |title: &str, id: &str, value: String, help: &str| {
        format!(
            "<div class=\"card\"><h3>{title}</h3><p class=\"big\" data-testid=\"{id}\">{}</p><p class=\"muted\">{help}</p></div>",
            esc(&value)
        )
    };
    format!(
        "<div class=\"cards\">{}{}{}</div><p class=\"muted\" data-testid=\"sweep-provision\">{}</p>",
        card(
            "Replicas",
            "sweep-replicas",
            p.replicas.map_or("—".to_string(), |n| format!("{}{}", word(p.replicas_bound), fmt::count(n))),
            "to carry the peak with one replica down"
        ),
        card(
            "GPUs",
            "sweep-gpus",
            p.gpus.map_or("—".to_string(), |n| format!("{}{}", word(p.replicas_bound), fmt::count(n))),
            "replicas × GPUs per replica"
        ),
        card(
            "Per-GPU goodput",
            "sweep-per-gpu",
            p.per_gpu_goodput_rps.map_or("—".to_string(), |x| format!("{per_gpu}{} req/s", fmt_rate(x))),
            "capacity ÷ GPUs per replica (DistServe)"
        ),
        sentence(&p.message)
    )
}

// ---- Figures (the helpers are shared with the Production view) ----

pub(crate) const RED: &str = "#c0392b";
pub(crate) const GREEN: &str = "#1e8449";
pub(crate) const GREY: &str = "#7f8c8d";
const BLUE: &str = "#2563eb";
/// The classes' curves: none of them the objective's red, the capacity's green or the blue of
/// all requests.
const CLASS_COLOURS: [&str; 5] = ["#7c3aed", "#ea580c", "#0891b2", "#db2777", "#854d0e"];

/// A line at `y` across the plot.
pub(crate) fn hline(y: f64, color: &'static str, dash: DashType) -> Shape {
    Shape::new()
        .shape_type(ShapeType::Line)
        .x_ref("paper")
        .y_ref("y")
        .x0(0)
        .x1(1)
        .y0(y)
        .y1(y)
        .line(ShapeLine::new().color(color).dash(dash))
}

/// A line at `x` from bottom to top.
pub(crate) fn vline(x: f64, color: &'static str, dash: DashType) -> Shape {
    Shape::new()
        .shape_type(ShapeType::Line)
        .x_ref("x")
        .y_ref("paper")
        .x0(x)
        .x1(x)
        .y0(0)
        .y1(1)
        .line(ShapeLine::new().color(color).dash(dash))
}

/// A label above the plot at `x` (data units).
pub(crate) fn label(x: f64, text: String, color: &'static str) -> Annotation {
    Annotation::new()
        .x(x)
        .y(1.0)
        .x_ref("x")
        .y_ref("paper")
        .y_anchor(plotly::common::Anchor::Bottom)
        .text(text)
        .show_arrow(false)
        .font(Font::new().color(color).size(12))
}

/// A label at `y` (data units), at the right edge, just above the line.
pub(crate) fn hlabel(y: f64, text: String, color: &'static str) -> Annotation {
    Annotation::new()
        .x(1.0)
        .y(y)
        .x_ref("paper")
        .y_ref("y")
        .x_anchor(plotly::common::Anchor::Right)
        .y_anchor(plotly::common::Anchor::Bottom)
        .text(text)
        .show_arrow(false)
        .font(Font::new().color(color).size(12))
}

/// A line with markers through (x, y).
pub(crate) fn trace(name: &str, xs: Vec<f64>, ys: Vec<f64>) -> Box<Scatter<f64, f64>> {
    Scatter::new(xs, ys).mode(Mode::LinesMarkers).name(name)
}

/// The common layout: axis titles, a height, the legend below.
pub(crate) fn layout(x: &str, y: &str, height: usize) -> Layout {
    Layout::new()
        .height(height)
        .margin(Margin::new().left(72).right(24).top(40).bottom(50))
        .x_axis(Axis::new().title(Title::with_text(x)).zero_line(false))
        .y_axis(Axis::new().title(Title::with_text(y)))
        .legend(
            plotly::layout::Legend::new()
                .orientation(plotly::common::Orientation::Horizontal)
                .y(1.12),
        )
}

/// (rate, value) over a curve's points where the value is known.
fn series(c: &Curve, value: fn(&CurvePoint) -> Option<f64>) -> (Vec<f64>, Vec<f64>) {
    c.points
        .iter()
        .filter_map(|p| Some((p.rate_rps, value(p)?)))
        .unzip()
}

/// The hero: attainment against rate, the 95 % band, the objective, the capacity.
fn attainment_figure(r: &SweepReport, spec: &Spec) -> String {
    let mut plot = Figure::new();
    let Some(all) = r.overall() else {
        return plot.to_json();
    };
    let band = "rgba(37,99,235,0.15)";
    let (bx, lo) = series(all, |p| p.attainment_ci95.map(|c| c.0));
    let (_, hi) = series(all, |p| p.attainment_ci95.map(|c| c.1));
    plot.add_trace(
        Scatter::new(bx.clone(), lo)
            .mode(Mode::Lines)
            .line(Line::new().width(0.0).color(band))
            .show_legend(false)
            .hover_info(plotly::common::HoverInfo::Skip),
    );
    plot.add_trace(
        Scatter::new(bx, hi)
            .mode(Mode::Lines)
            .fill(Fill::ToNextY)
            .fill_color(band)
            .line(Line::new().width(0.0).color(band))
            .name("95 % interval")
            .hover_info(plotly::common::HoverInfo::Skip),
    );
    let (x, y) = series(all, |p| p.attainment);
    plot.add_trace(
        trace("all requests", x, y)
            .line(Line::new().color(BLUE).width(3.0))
            .hover_template("%{x} req/s: %{y:.1%} met every target<extra></extra>"),
    );
    if spec.classes.len() > 1 {
        // Colours of their own: plotly's next defaults include the red and green of the
        // objective and capacity lines, and a dashed class read as the objective.
        let colours = CLASS_COLOURS.iter().cycle();
        for (c, colour) in r.curves.iter().filter(|c| c.class.is_some()).zip(colours) {
            let (x, y) = series(c, |p| p.attainment);
            plot.add_trace(
                trace(c.class.as_deref().unwrap_or_default(), x, y)
                    .line(Line::new().dash(DashType::Dot).width(2.0).color(*colour)),
            );
        }
    }
    let mut shapes = vec![hline(r.objective, RED, DashType::Dash)];
    let mut notes = vec![hlabel(
        r.objective,
        format!("objective {}", fmt_pct(r.objective)),
        RED,
    )];
    if let Some((c, bound)) = r.capacity.figure() {
        shapes.push(vline(c, GREEN, DashType::Solid));
        notes.push(label(
            c,
            format!("capacity {}", rate_with_bound(c, bound)),
            GREEN,
        ));
    }
    if let Some(x) = r.capacity.crossing_rps {
        shapes.push(vline(x, GREY, DashType::Dot));
    }
    plot.set_layout(
        layout("offered rate (req/s)", "", 420)
            .y_axis(
                Axis::new()
                    .title(Title::with_text("requests meeting every target"))
                    .tick_format(".0%"),
            )
            .shapes(shapes)
            .annotations(notes),
    );
    plot.to_json()
}

/// The spec's percentiles of one indicator against rate, with its fixed targets.
fn percentile_figure(r: &SweepReport, spec: &Spec, ind: Indicator) -> String {
    let mut plot = Figure::new();
    let Some(all) = r.overall() else {
        return plot.to_json();
    };
    for &q in &spec.percentiles {
        let (x, y): (Vec<f64>, Vec<f64>) = all
            .points
            .iter()
            .filter_map(|p| Some((p.rate_rps, p.percentile(ind, q)?)))
            .unzip();
        if !y.is_empty() {
            plot.add_trace(trace(&format!("p{}", fmt_q(q)), x, y));
        }
    }
    let mut targets: Vec<f64> = Vec::new();
    for t in spec.classes.iter().flat_map(|c| c.targets.iter()) {
        if let Some(ms) = t.fixed_ms(ind) {
            if !targets.contains(&ms) {
                targets.push(ms);
            }
        }
    }
    let shapes: Vec<Shape> = targets
        .iter()
        .map(|t| hline(*t, RED, DashType::Dash))
        .collect();
    let notes: Vec<Annotation> = targets
        .iter()
        .map(|t| hlabel(*t, format!("target {} ms", fmt::spec_number(*t)), RED))
        .collect();
    plot.set_layout(
        layout(
            "offered rate (req/s)",
            &format!("{} (ms)", ind.label()),
            320,
        )
        .title(Title::with_text(ind.label()))
        .margin(Margin::new().left(72).right(24).top(60).bottom(50))
        .legend(
            plotly::layout::Legend::new()
                .orientation(plotly::common::Orientation::Horizontal)
                .x(1.0)
                .x_anchor(plotly::common::Anchor::Right)
                .y(1.18),
        )
        .shapes(shapes)
        .annotations(notes),
    );
    plot.to_json()
}

/// Throughput and goodput against rate, the offered rate as a diagonal, and the knee.
fn throughput_figure(r: &SweepReport, _: &Spec) -> String {
    let mut plot = Figure::new();
    let Some(all) = r.overall() else {
        return plot.to_json();
    };
    let offered: Vec<f64> = all.points.iter().map(|p| p.rate_rps).collect();
    plot.add_trace(
        Scatter::new(offered.clone(), offered)
            .mode(Mode::Lines)
            .name("offered")
            .line(Line::new().dash(DashType::Dot).color(GREY)),
    );
    let (x, y) = series(all, |p| p.throughput_rps);
    plot.add_trace(trace("throughput", x, y).line(Line::new().color(BLUE)));
    let (x, y) = series(all, |p| p.goodput_rps);
    plot.add_trace(trace("goodput", x, y).line(Line::new().color(GREEN)));
    let mut shapes = Vec::new();
    let mut notes = Vec::new();
    if let Some(k) = r.throughput.knee_rps {
        shapes.push(vline(k, GREY, DashType::Dash));
        notes.push(label(
            k,
            format!("throughput stops growing after {} req/s", fmt_rate(k)),
            GREY,
        ));
    }
    if let Some((c, b)) = r.capacity.figure() {
        shapes.push(vline(c, GREEN, DashType::Solid));
        notes.push(label(
            c,
            format!("SLO capacity {}", rate_with_bound(c, b)),
            GREEN,
        ));
    }
    plot.set_layout(
        layout("offered rate (req/s)", "req/s", 360)
            .legend(
                plotly::layout::Legend::new()
                    .orientation(plotly::common::Orientation::Horizontal)
                    .y(-0.2),
            )
            .shapes(shapes)
            .annotations(notes),
    );
    plot.to_json()
}

/// The SLO-scale curve: attainment against the factor, the objective, the targets as written.
fn scale_figure(c: &ScaleCurve, objective: f64) -> String {
    let mut plot = Figure::new();
    let (x, y): (Vec<f64>, Vec<f64>) = c
        .points
        .iter()
        .filter_map(|p| Some((p.factor, p.attainment?)))
        .unzip();
    plot.add_trace(
        trace("attainment", x, y)
            .line(Line::new().color(BLUE))
            .hover_template("targets × %{x}: %{y:.1%}<extra></extra>"),
    );
    plot.set_layout(
        layout("every target multiplied by", "", 320)
            .show_legend(false)
            .y_axis(
                Axis::new()
                    .title(Title::with_text("requests meeting every target"))
                    .tick_format(".0%"),
            )
            .shapes(vec![
                hline(objective, RED, DashType::Dash),
                vline(1.0, GREY, DashType::Dot),
            ])
            .annotations(vec![
                hlabel(objective, format!("objective {}", fmt_pct(objective)), RED),
                label(1.0, "targets as written".to_string(), GREY),
            ]),
    );
    plot.to_json()
}
