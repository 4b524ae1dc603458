//! SLO Workbench in the browser. This file only mounts the app (or, in the loader worker,
//! nothing); see ARCHITECTURE.md.

mod app;
mod chart;
mod download;
mod fmt;
mod loader;
mod markdown;
mod state;
mod views;
mod worker;

fn main() {
    // In the loader worker (www/worker.js) this wasm only parses: no page to mount.
    if worker::in_worker() {
        return;
    }
    app::install_panic_hook();
    leptos::mount::mount_to_body(app::App);
}
