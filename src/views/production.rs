//! Production tab (being built).

use leptos::prelude::*;

#[component]
pub fn ProductionView() -> impl IntoView {
    view! {
        <section class="panel">
            <h1>"Production"</h1>
        </section>
    }
}
