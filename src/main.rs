//! SLO Workbench in the browser. This file only mounts the app; see ARCHITECTURE.md.

mod app;
mod chart;
mod download;
mod fmt;
mod state;
mod views;

fn main() {
    app::install_panic_hook();
    leptos::mount::mount_to_body(app::App);
}
