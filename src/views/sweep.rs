//! probe
use crate::state::AppState;
use leptos::prelude::*;
use slo_core::ingest::{parse, IngestOptions};
use slo_core::sweep::*;

#[component]
pub fn SweepView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = RwSignal::new(String::new());
    let out = move || {
        let t = text.get();
        let l = parse("sweep_4.json", t.as_bytes(), &IngestOptions::default());
        let pts = sweep_points(vec![SweepInput {
            loaded: l,
            rate_override: None,
        }])
        .unwrap_or_default();
        let spec = state.spec.get();
        let prep = prepare_sweep(&pts, &spec);
        let r = evaluate_sweep(&pts, &prep, &spec);
        let p = provision(&r.capacity, Some(3.0), Some(2));
        let s = pts
            .first()
            .map(|p| scale_curve_prepared(p, &prep[0], &spec, &SCALE_FACTORS).message)
            .unwrap_or_default();
        format!(
            "{} {} {} {} {:?}",
            r.capacity.message, r.throughput.message, p.message, s, r.lints
        )
    };
    view! {
        <section class="panel">
            <h1>"Sweep"</h1>
            <textarea on:input=move |ev| text.set(event_target_value(&ev))></textarea>
            <p>{out}</p>
        </section>
    }
}
