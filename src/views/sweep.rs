//! Sweep tab (being built).

use leptos::prelude::*;

#[component]
pub fn SweepView() -> impl IntoView {
    view! {
        <section class="panel">
            <h1>"Sweep"</h1>
        </section>
    }
}
