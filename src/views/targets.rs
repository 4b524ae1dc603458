//! Targets: the SLO spec as a form — presets, classes, input-length buckets, targets per cell,
//! method, objective and window. Every change is validated, autosaved and re-evaluated at once.

use leptos::prelude::*;
use slo_core::evaluate::fmt_q;
use slo_core::presets::presets;
use slo_core::quantile::Method;
use slo_core::spec::{ClassRule, ClassSpec, Spec, Targets, TtftTarget, Window};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::download::{copy, download};
use crate::fmt;
use crate::state::AppState;

/// The form's structure: what changes which inputs exist (not their values).
fn shape(s: &Spec) -> (usize, usize, Vec<bool>, Vec<bool>) {
    let per_token = s
        .classes
        .iter()
        .flat_map(|c| {
            c.targets
                .iter()
                .map(|t| matches!(t.ttft, Some(TtftTarget::PerToken { .. })))
        })
        .collect();
    let defaults = s
        .classes
        .iter()
        .map(|c| c.rule == ClassRule::Default)
        .collect();
    (s.classes.len(), s.n_buckets(), per_token, defaults)
}

fn opt_ms(text: &str) -> Option<f64> {
    text.trim().replace(',', "").parse::<f64>().ok()
}

#[component]
pub fn TargetsView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let spec = state.spec;
    let problems = Memo::new(move |_| spec.with(|s| s.validate()));
    let layout = Memo::new(move |_| spec.with(shape));
    let cards = presets()
        .into_iter()
        .map(|p| {
            let chosen = p.spec.clone();
            let id = format!("preset-{}", p.id);
            view! {
                <button class="preset" data-testid=id on:click=move |_| spec.set(chosen.clone())>
                    <strong>{p.title}</strong>
                    <span>{p.summary}</span>
                </button>
            }
        })
        .collect_view();

    let text_field = move |label: &'static str,
                           id: &'static str,
                           help: &'static str,
                           get: fn(&Spec) -> String,
                           set: fn(&mut Spec, &str)| {
        view! {
            <div class="field">
                <label for=id>{label}</label>
                <input id=id data-testid=id type="text" prop:value=move || spec.with(get) on:change=move |ev| {
                    let v = event_target_value(&ev);
                    spec.update(|s| set(s, &v));
                } />
                <small class="help">{help}</small>
            </div>
        }
    };

    view! {
        <section class="panel targets">
            <h1>"Targets"</h1>
            <p class="lead">"Start from a preset, then adjust. Every change re-evaluates the report and is saved in this browser."</p>
            {move || state.spec_notice.get().map(|n| view! { <p class="notice ok" role="status" data-testid="spec-notice">{n}</p> })}
            <div class="presets">{cards}</div>

            <h2>"Definition"</h2>
            <div class="grid4">
                {text_field("Service", "spec-service", "what the SLO covers", |s| s.service.clone(), |s, v| s.service = v.to_string())}
                {text_field("Objective (% of requests good)", "spec-objective", "joint attainment: requests meeting every target at once, not two percentiles", |s| fmt::spec_number(s.objective * 100.0), |s, v| if let Some(x) = opt_ms(v) { s.objective = x / 100.0 })}
                {text_field("Window (days, rolling)", "spec-window", "the period the objective is judged over", |s| match s.window { Window::Rolling { days } => days.to_string(), Window::CalendarMonth => "30".into() }, |s, v| if let Ok(d) = v.trim().parse::<u32>() { s.window = Window::Rolling { days: d } })}
                {text_field("Input-length bucket edges (tokens)", "spec-buckets", "prefill grows with prompt length: one TTFT target rarely fits all", |s| s.bucket_edges.iter().map(u64::to_string).collect::<Vec<_>>().join(", "), set_edges)}
                {text_field("Percentiles shown", "spec-percentiles", "e.g. 50, 90, 99", |s| s.percentiles.iter().map(|q| fmt_q(*q)).collect::<Vec<_>>().join(", "), |s, v| {
                    let qs: Vec<f64> = v.split([',', ' ']).filter_map(|p| p.trim().parse().ok()).collect();
                    if !qs.is_empty() { s.percentiles = qs; }
                })}
                {text_field("Expected requests per window", "spec-volume", "turns the error budget into a count of bad requests", |s| s.expected_requests_per_window.map_or(String::new(), |v| v.to_string()), |s, v| s.expected_requests_per_window = v.trim().replace(',', "").parse().ok())}
                <div class="field">
                    <label for="spec-method">"Percentile method"</label>
                    <select id="spec-method" data-testid="spec-method" on:change=move |ev| {
                        if let Some(m) = Method::from_name(&event_target_value(&ev)) { spec.update(|s| s.method = m); }
                    }>
                        {Method::ALL.into_iter().map(|m| view! {
                            <option value=m.name() selected=move || spec.with(|s| s.method == m)>{m.name()}</option>
                        }).collect_view()}
                    </select>
                    <small class="help">"with few samples the method decides pass or fail: it belongs in the definition"</small>
                </div>
            </div>

            <h2>"Classes and targets (ms)"</h2>
            <p class="muted">"A request belongs to the first class whose rule matches; the default class takes the rest. Leave a target empty for no target. TPOT below reading speed (~50 ms) costs batch size, and so money, for no visible gain."</p>
            {move || {
                let (n_classes, n_buckets, _, _) = layout.get();
                (0..n_classes).map(|c| view! { <ClassForm c=c n_buckets=n_buckets /> }).collect_view()
            }}
            <button data-testid="add-class" on:click=move |_| spec.update(|s| {
                let n = s.n_buckets();
                s.classes.push(ClassSpec {
                    name: format!("class {}", s.classes.len() + 1),
                    description: String::new(),
                    rule: ClassRule::Equals { column: "class".into(), value: String::new() },
                    targets: vec![Targets::default(); n],
                });
            })>"+ Add a class"</button>

            <Policies />
            <div class="problems" data-testid="spec-problems">
                {move || {
                    let p = problems.get();
                    if p.is_empty() {
                        view! { <p class="ok-line">"✓ The spec is valid."</p> }.into_any()
                    } else {
                        view! { <ul class="field-error" role="alert">{p.into_iter().map(|e| view! { <li>{e.to_string()}</li> }).collect_view()}</ul> }.into_any()
                    }
                }}
            </div>
            <SpecFile />
        </section>
    }
}

fn set_edges(s: &mut Spec, v: &str) {
    let edges: Vec<u64> = v
        .split([',', ' '])
        .filter_map(|p| p.trim().replace('k', "000").parse().ok())
        .collect();
    s.set_bucket_edges(edges);
}

/// One class: name, rule, and a row of targets per bucket.
#[component]
fn ClassForm(c: usize, n_buckets: usize) -> impl IntoView {
    let spec = expect_context::<AppState>().spec;
    let get = move |f: fn(&ClassSpec) -> String| {
        move || spec.with(|s| s.classes.get(c).map(f).unwrap_or_default())
    };
    let is_default = move || {
        spec.with(|s| {
            s.classes
                .get(c)
                .is_some_and(|k| k.rule == ClassRule::Default)
        })
    };
    let rows = (0..n_buckets)
        .map(|b| {
            let cell = move |read: fn(&Targets) -> Option<f64>, write: fn(&mut Targets, Option<f64>), testid: String| {
                view! {
                    <td><input type="text" inputmode="decimal" class="cell-input" data-testid=testid aria-label="target in ms"
                        prop:value=move || spec.with(|s| s.classes.get(c).and_then(|k| k.targets.get(b)).and_then(read).map_or(String::new(), fmt::spec_number))
                        on:change=move |ev| {
                            let v = opt_ms(&event_target_value(&ev));
                            spec.update(|s| if let Some(t) = s.classes.get_mut(c).and_then(|k| k.targets.get_mut(b)) { write(t, v) });
                        } /></td>
                }
            };
            let per_token = move || spec.with(|s| matches!(s.classes.get(c).and_then(|k| k.targets.get(b)).and_then(|t| t.ttft), Some(TtftTarget::PerToken { .. })));
            let ttft_cell = if per_token() {
                view! {
                    <td class="per-token">
                        <input type="text" inputmode="decimal" class="cell-input" data-testid=format!("cell-{c}-{b}-ttft-base") aria-label="TTFT base in ms"
                            prop:value=move || spec.with(|s| match s.classes.get(c).and_then(|k| k.targets.get(b)).and_then(|t| t.ttft) { Some(TtftTarget::PerToken { base_ms, .. }) => fmt::spec_number(base_ms), _ => String::new() })
                            on:change=move |ev| { let v = opt_ms(&event_target_value(&ev)).unwrap_or(0.0); spec.update(|s| if let Some(Some(TtftTarget::PerToken { base_ms, .. })) = s.classes.get_mut(c).and_then(|k| k.targets.get_mut(b)).map(|t| t.ttft.as_mut()) { *base_ms = v }); } />
                        " + "
                        <input type="text" inputmode="decimal" class="cell-input narrow" data-testid=format!("cell-{c}-{b}-ttft-per-token") aria-label="TTFT allowance per input token in ms"
                            prop:value=move || spec.with(|s| match s.classes.get(c).and_then(|k| k.targets.get(b)).and_then(|t| t.ttft) { Some(TtftTarget::PerToken { per_token_ms, .. }) => fmt::spec_number(per_token_ms), _ => String::new() })
                            on:change=move |ev| { let v = opt_ms(&event_target_value(&ev)).unwrap_or(0.0); spec.update(|s| if let Some(Some(TtftTarget::PerToken { per_token_ms, .. })) = s.classes.get_mut(c).and_then(|k| k.targets.get_mut(b)).map(|t| t.ttft.as_mut()) { *per_token_ms = v }); } />
                        " /token"
                    </td>
                }
                .into_any()
            } else {
                cell(|t| t.ttft.and_then(TtftTarget::fixed_ms), |t, v| t.ttft = v.map(|ms| TtftTarget::Fixed { ms }), format!("cell-{c}-{b}-ttft")).into_any()
            };
            let toggle = move |ev| {
                let on = event_target_checked(&ev);
                spec.update(|s| if let Some(t) = s.classes.get_mut(c).and_then(|k| k.targets.get_mut(b)) {
                    t.ttft = if on {
                        Some(TtftTarget::PerToken { base_ms: t.ttft.and_then(TtftTarget::fixed_ms).unwrap_or(300.0), per_token_ms: 0.1 })
                    } else {
                        Some(TtftTarget::Fixed { ms: t.ttft.and_then(|x| x.threshold_ms(Some(0.0))).unwrap_or(500.0) })
                    };
                });
            };
            view! {
                <tr>
                    <th scope="row">{move || spec.with(|s| s.bucket_label(b))}
                        <label class="inline tiny"><input type="checkbox" prop:checked=per_token on:change=toggle data-testid=format!("cell-{c}-{b}-ttft-mode") />"TTFT per token"</label>
                    </th>
                    {ttft_cell}
                    {cell(|t| t.tpot_ms, |t, v| t.tpot_ms = v, format!("cell-{c}-{b}-tpot"))}
                    {cell(|t| t.itl_ms, |t, v| t.itl_ms = v, format!("cell-{c}-{b}-itl"))}
                    {cell(|t| t.e2e_ms, |t, v| t.e2e_ms = v, format!("cell-{c}-{b}-e2e"))}
                    {cell(|t| t.queue_ms, |t, v| t.queue_ms = v, format!("cell-{c}-{b}-queue"))}
                </tr>
            }
        })
        .collect_view();
    view! {
        <fieldset class="class-form" data-testid=format!("class-{c}")>
            <legend>{move || spec.with(|s| s.classes.get(c).map(|k| k.name.clone()).unwrap_or_default())}</legend>
            <div class="grid4">
                <div class="field"><label>"Name"
                    <input type="text" data-testid=format!("class-{c}-name") prop:value=get(|k| k.name.clone())
                        on:change=move |ev| { let v = event_target_value(&ev); spec.update(|s| if let Some(k) = s.classes.get_mut(c) { k.name = v }); } /></label></div>
                <div class="field"><label>"Rule: column"
                    <input type="text" data-testid=format!("class-{c}-column") disabled=is_default
                        prop:value=get(|k| match &k.rule { ClassRule::Equals { column, .. } => column.clone(), ClassRule::Default => String::new() })
                        on:change=move |ev| { let v = event_target_value(&ev); spec.update(|s| if let Some(ClassRule::Equals { column, .. }) = s.classes.get_mut(c).map(|k| &mut k.rule) { *column = v }); } /></label></div>
                <div class="field"><label>"equals value"
                    <input type="text" data-testid=format!("class-{c}-value") disabled=is_default
                        prop:value=get(|k| match &k.rule { ClassRule::Equals { value, .. } => value.clone(), ClassRule::Default => String::new() })
                        on:change=move |ev| { let v = event_target_value(&ev); spec.update(|s| if let Some(ClassRule::Equals { value, .. }) = s.classes.get_mut(c).map(|k| &mut k.rule) { *value = v }); } /></label></div>
                <div class="field"><label class="inline">
                    <input type="checkbox" data-testid=format!("class-{c}-default") prop:checked=is_default on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        spec.update(|s| if let Some(k) = s.classes.get_mut(c) {
                            k.rule = if on { ClassRule::Default } else { ClassRule::Equals { column: "class".into(), value: k.name.clone() } };
                        });
                    } />
                    " default class (takes every request no other class claims)"</label></div>
            </div>
            <table class="cells">
                <thead><tr><th>"input length"</th><th>"TTFT ≤"</th><th>"TPOT ≤"</th><th>"ITL (worst gap) ≤"</th><th>"E2E ≤"</th><th>"queue ≤"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <button class="link" data-testid=format!("class-{c}-remove") on:click=move |_| spec.update(|s| { if s.classes.len() > 1 { s.classes.remove(c); } })>"Remove this class"</button>
        </fieldset>
    }
}

/// How indicators are measured and how errors, cancellations and stalls count; the budget policy.
#[component]
fn Policies() -> impl IntoView {
    use slo_core::spec::{CancelPolicy, Indicator, ItlStatistic, MeasurementPoint, StallRule};
    let spec = expect_context::<AppState>().spec;
    let points = Indicator::ALL
        .into_iter()
        .map(|ind| {
            let id = format!("point-{}", ind.key());
            view! {
                <div class="field">
                    <label for=id.clone()>{format!("{} measured at", ind.label())}</label>
                    <select id=id.clone() data-testid=id on:change=move |ev| {
                        let p = match event_target_value(&ev).as_str() { "client" => MeasurementPoint::Client, "engine" => MeasurementPoint::Engine, _ => MeasurementPoint::Gateway };
                        spec.update(|s| match ind {
                            Indicator::Ttft => s.measurement.ttft = p,
                            Indicator::Tpot => s.measurement.tpot = p,
                            Indicator::Itl => s.measurement.itl = p,
                            Indicator::E2e => s.measurement.e2e = p,
                            Indicator::Queue => s.measurement.queue = p,
                        });
                    }>
                        {[MeasurementPoint::Gateway, MeasurementPoint::Client, MeasurementPoint::Engine].map(|p| view! {
                            <option value=p.name() selected=move || spec.with(|s| s.measurement.of(ind) == p)>{p.name()}</option>
                        })}
                    </select>
                </div>
            }
        })
        .collect_view();
    let cancel_options = [
        (
            CancelPolicy::ExcludeUnlessWaitedPastTtft,
            "exclude, unless they waited past the TTFT target",
        ),
        (CancelPolicy::Exclude, "always exclude"),
        (CancelPolicy::CountAsBad, "always count as bad"),
    ];
    view! {
        <h2>"Measurement and counting"</h2>
        <p class="muted">"Define the SLO where the user is (gateway or client); engine metrics leave out the queue in front of the engine and the network."</p>
        <div class="grid4">{points}</div>
        <div class="grid4">
            <div class="field wide">
                <label for="spec-cancel">"Client cancellations"</label>
                <select id="spec-cancel" data-testid="spec-cancel" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    let p = match v.as_str() { "exclude" => CancelPolicy::Exclude, "bad" => CancelPolicy::CountAsBad, _ => CancelPolicy::ExcludeUnlessWaitedPastTtft };
                    spec.update(|s| s.cancellations = p);
                }>
                    {cancel_options.map(|(p, label)| {
                        let value = match p { CancelPolicy::Exclude => "exclude", CancelPolicy::CountAsBad => "bad", CancelPolicy::ExcludeUnlessWaitedPastTtft => "waited" };
                        view! { <option value=value selected=move || spec.with(|s| s.cancellations == p)>{label}</option> }
                    })}
                </select>
                <small class="help">"a request cancelled after waiting at least the TTFT target for its first token is a TTFT failure; errors and timeouts always count as bad"</small>
            </div>
            <div class="field">
                <label for="spec-itl-stat">"ITL checked per request as"</label>
                <input id="spec-itl-stat" data-testid="spec-itl-stat" type="text"
                    prop:value=move || spec.with(|s| match s.itl_statistic { ItlStatistic::Max => "max".to_string(), ItlStatistic::Percentile { q } => format!("p{}", fmt_q(q)) })
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        let stat = match v.trim().trim_start_matches('p').parse::<f64>() { Ok(q) => ItlStatistic::Percentile { q }, Err(_) => ItlStatistic::Max };
                        spec.update(|s| s.itl_statistic = stat);
                    } />
                <small class="help">"max (the worst gap) or a percentile of the request's gaps, e.g. p99"</small>
            </div>
            <div class="field">
                <label for="spec-stall">"A stall is a gap above (ms)"</label>
                <input id="spec-stall" data-testid="spec-stall" type="text"
                    prop:value=move || spec.with(|s| match s.stall { Some(StallRule::AbsoluteMs { ms }) => fmt::spec_number(ms), Some(StallRule::TimesTpot { k }) => format!("{}x", fmt::spec_number(k)), None => String::new() })
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        let t = v.trim();
                        let rule = if let Some(k) = t.strip_suffix('x').or_else(|| t.strip_suffix('×')).and_then(|k| k.trim().parse().ok()) {
                            Some(StallRule::TimesTpot { k })
                        } else {
                            opt_ms(t).map(|ms| StallRule::AbsoluteMs { ms })
                        };
                        spec.update(|s| s.stall = rule);
                    } />
                <small class="help">"e.g. 600, or 10x for ten times the request's own TPOT; shows stalls TPOT hides"</small>
            </div>
            <div class="field">
                <label for="spec-min">"Warn below (requests per cell)"</label>
                <input id="spec-min" data-testid="spec-min" type="text" prop:value=move || spec.with(|s| s.min_requests.to_string())
                    on:change=move |ev| { if let Ok(n) = event_target_value(&ev).trim().replace(',', "").parse() { spec.update(|s| s.min_requests = n); } } />
                <small class="help">"SLO decisions need thousands of requests per class per window"</small>
            </div>
        </div>
        <div class="field">
            <label for="spec-policy">"Error-budget policy"</label>
            <textarea id="spec-policy" data-testid="spec-policy" rows="3" prop:value=move || spec.with(|s| s.budget_policy.clone())
                on:change=move |ev| { let v = event_target_value(&ev); spec.update(|s| s.budget_policy = v); }></textarea>
            <small class="help">"what happens when the budget is spent, e.g. releases pause until attainment recovers"</small>
        </div>
    }
}

/// Export, import and share the spec (never the data).
#[component]
fn SpecFile() -> impl IntoView {
    let state = expect_context::<AppState>();
    let spec = state.spec;
    let on_import = move |ev: web_sys::Event| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(file) = input.files().and_then(|l| l.get(0)) else {
            return;
        };
        wasm_bindgen_futures::spawn_local(async move {
            let text = JsFuture::from(file.text())
                .await
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            match Spec::from_json(&text) {
                Ok(s) => {
                    spec.set(s);
                    state
                        .spec_notice
                        .set(Some(format!("Imported the spec from {}.", file.name())));
                }
                Err(errors) => state.spec_notice.set(Some(format!(
                    "{} is not a valid spec, so the current spec is unchanged: {}",
                    file.name(),
                    errors
                        .iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join("; ")
                ))),
            }
        });
    };
    let link_text = RwSignal::new(String::new());
    let share = move |_| {
        let fragment = spec.with(slo_core::spec::to_share_fragment);
        if let Some(loc) = web_sys::window().map(|w| w.location()) {
            let base = loc.href().unwrap_or_default();
            let base = base.split('#').next().unwrap_or_default().to_string();
            let link = format!("{base}#{fragment}");
            copy(&link);
            state.spec_notice.set(Some(
                "A link carrying this spec (not the data) was copied to the clipboard.".to_string(),
            ));
            link_text.set(link);
        }
    };
    view! {
        <h2>"Save and share"</h2>
        <div class="actions">
            <button data-testid="spec-export" on:click=move |_| download("slo-spec.json", "application/json", &spec.with(Spec::to_json))>"Download spec (JSON)"</button>
            <label class="button-like">"Import spec…" <input type="file" accept=".json,application/json" data-testid="spec-import" on:change=on_import /></label>
            <button data-testid="spec-share" on:click=share>"Copy share link"</button>
        </div>
        <Show when=move || !link_text.get().is_empty()>
            <input type="text" readonly class="share-link" data-testid="share-link" aria-label="share link" prop:value=move || link_text.get() />
        </Show>
    }
}
