//! The page: header, tabs (each reachable by URL fragment), and the current view.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use crate::state::AppState;
use crate::views;

/// The tabs, in the order of the workflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tab {
    Data,
    Targets,
    Report,
    Sweep,
    Production,
    Document,
}

impl Tab {
    pub const ALL: [Tab; 6] = [
        Tab::Data,
        Tab::Targets,
        Tab::Report,
        Tab::Sweep,
        Tab::Production,
        Tab::Document,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            Tab::Data => "data",
            Tab::Targets => "targets",
            Tab::Report => "report",
            Tab::Sweep => "sweep",
            Tab::Production => "production",
            Tab::Document => "document",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Tab::Data => "Data",
            Tab::Targets => "Targets",
            Tab::Report => "Report",
            Tab::Sweep => "Sweep",
            Tab::Production => "Production",
            Tab::Document => "Document",
        }
    }

    fn from_hash(hash: &str) -> Option<Tab> {
        let slug = hash.trim_start_matches('#');
        Tab::ALL.into_iter().find(|t| t.slug() == slug)
    }
}

fn current_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Shows the tab and records it in the URL fragment.
pub fn go(tab: Tab) {
    if let Some(w) = web_sys::window() {
        let _ = w.location().set_hash(tab.slug());
    }
}

/// A panic leaves an apology on the page rather than a dead one.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("SLO Workbench crashed: {info}").into());
        if let Some(body) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.body())
        {
            if let Ok(div) = body
                .owner_document()
                .map_or(Err(JsValue::NULL), |d| d.create_element("div"))
            {
                div.set_class_name("crash");
                div.set_attribute("role", "alert").ok();
                div.set_attribute("data-testid", "crash").ok();
                div.set_text_content(Some(
                    "Sorry: SLO Workbench hit a bug and stopped. Reload the page to continue: your spec is kept in this browser. Your data never left this page.",
                ));
                let _ = body.prepend_with_node_1(&div);
            }
        }
    }));
}

/// On the very first visit the worked example is loaded, labelled as sample data, so the first
/// thing a visitor sees is a full report. Returns true on that first visit.
fn show_demo_on_first_visit(state: &AppState) -> bool {
    const KEY: &str = "slo-workbench.visited";
    let Some(store) = web_sys::window().and_then(|w| w.local_storage().ok().flatten()) else {
        return false;
    };
    if store.get_item(KEY).ok().flatten().is_some() {
        return false;
    }
    let _ = store.set_item(KEY, "1");
    state.load(
        vec![(
            "worked_example.csv (sample)".to_string(),
            views::data::SAMPLE_CSV.as_bytes().to_vec(),
        )],
        true,
    )
}

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    provide_context(state);
    let first_visit = show_demo_on_first_visit(&state);
    let start = Tab::from_hash(&current_hash()).unwrap_or(if first_visit {
        Tab::Report
    } else {
        Tab::Data
    });
    let tab = RwSignal::new(start);
    let on_hash = Closure::<dyn Fn()>::new(move || {
        if let Some(t) = Tab::from_hash(&current_hash()) {
            tab.set(t);
        }
    });
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("hashchange", on_hash.as_ref().unchecked_ref());
    }
    on_hash.forget();

    let tabs = Tab::ALL.map(|t| {
        view! {
            <a
                href=format!("#{}", t.slug())
                class="tab"
                class:active=move || tab.get() == t
                aria-current=move || (tab.get() == t).then_some("page")
                data-testid=format!("tab-{}", t.slug())
            >
                {t.title()}
            </a>
        }
    });
    view! {
        <header class="top">
            <div class="brand">
                <span class="logo" aria-hidden="true">"◔"</span>
                " SLO Workbench"
            </div>
            <nav class="tabs" aria-label="Steps">{tabs}</nav>
            // (Not over a loading file's report shown ahead of its data.)
            <Show when=move || state.sample.get() && state.early.with(Option::is_none)>
                <span class="badge sample" data-testid="sample-badge" title="The numbers below come from built-in sample data">
                    "sample data"
                </span>
            </Show>
        </header>
        <p class="privacy">"Your data stays in this browser: nothing you paste or upload is sent anywhere."</p>
        <crate::loader::LoadProgress />
        <main>
            {move || match tab.get() {
                Tab::Data => views::data::DataView().into_any(),
                Tab::Targets => views::targets::TargetsView().into_any(),
                Tab::Report => views::report::ReportView().into_any(),
                Tab::Sweep => views::sweep::SweepView().into_any(),
                Tab::Production => views::production::ProductionView().into_any(),
                Tab::Document => views::document::DocumentView().into_any(),
            }}
        </main>
    }
}
