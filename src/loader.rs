//! Loading files without freezing the page: each load runs in its own Web Worker
//! (www/worker.js, running this same wasm's `worker::worker_load`), which reads the files (one
//! over 64 MB in chunks), parses them, combines them and prepares the grouping, and reports
//! progress on the way. The page shows a progress bar with a Cancel button (`LoadProgress`), then
//! puts the result back together from its parts (`slo_core::transfer`) and commits it like any
//! other load. A load that becomes the app's data (`load`) also has the worker compute its
//! report as soon as it is prepared and send it ahead of the columns: the page shows that report
//! (`AppState::show_early`) while the worker takes the batch apart and the page copies the
//! columns in, about 100 ms at a million requests.
//!
//! Where a worker cannot start (the single-file edition opened from disk: a `file://` page may
//! not start workers), the files are read and parsed on the page instead, as before.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use leptos::prelude::*;
use slo_core::transfer::Batch;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageEvent, Worker, WorkerOptions, WorkerType};

use crate::app::{go, Tab};
use crate::state::{AppState, EarlyReport, Notice, Shared};

/// One input of a load: a file the user chose (read by the worker) or bytes already in the page.
#[derive(Clone)]
pub enum Source {
    File(web_sys::File),
    Bytes { name: String, bytes: Vec<u8> },
}

impl Source {
    pub fn name(&self) -> String {
        match self {
            Source::File(f) => f.name(),
            Source::Bytes { name, .. } => name.clone(),
        }
    }

    fn size(&self) -> f64 {
        match self {
            Source::File(f) => f.size(),
            Source::Bytes { bytes, .. } => bytes.len() as f64,
        }
    }
}

/// How far the running load is, for the progress bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// What is happening ("Reading a.csv", "Parsing a.csv", ...).
    pub phase: String,
    /// 0 to 1.
    pub fraction: f64,
}

/// Pasted text below this size is parsed on the page: a worker's start-up would cost more.
const IN_PAGE_BYTES: f64 = 1_000_000.0;

/// The running load: its worker and the handlers that must live as long as it does.
struct Job {
    worker: Worker,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

/// A loader worker started before its load (see `warm`), with the handler that drops it if its
/// script fails meanwhile.
struct Spare {
    worker: Worker,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

thread_local! {
    static JOB: RefCell<Option<Job>> = const { RefCell::new(None) };
    static SPARE: RefCell<Option<Spare>> = const { RefCell::new(None) };
    /// Counts loads and cancellations: work scheduled for an older one is dropped.
    static GENERATION: Cell<u32> = const { Cell::new(0) };
    /// True once the page has read a report JSON (see `warm`): once is enough.
    static PAGE_WARM: Cell<bool> = const { Cell::new(false) };
    /// The worker computing the loaded file's digest after its load (`digest_later`).
    static DIGEST: RefCell<Option<Job>> = const { RefCell::new(None) };
}

impl Job {
    /// Ends the worker; its handlers go with the job (a handler running now finishes first).
    fn end(self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

fn stop_worker() {
    if let Some(job) = JOB.with(|j| j.borrow_mut().take()) {
        job.end();
    }
}

/// What to do with a finished load.
type Done = Box<dyn FnOnce(AppState, Batch)>;

/// Shared between a job's handlers: whichever finishes the load takes it.
type SharedDone = Rc<RefCell<Option<Done>>>;

/// Loads `sources` as the new data, then shows the report. Small pasted text is parsed at once;
/// files go to a worker. A load started while another runs replaces it. The sources are kept
/// for re-reading (a new mapping, format or unit) only once something was read from them.
pub fn load(state: AppState, sources: Vec<Source>) {
    if sources.is_empty() {
        return;
    }
    let kept = sources.clone();
    let done: Done = Box::new(move |state: AppState, batch| {
        // The report this load showed ahead of its data (any other was dropped when this load
        // started); it already took the user to the report.
        let early = state.early.get_untracked();
        let shown = early.is_some();
        if state.commit(batch, false, early) {
            state.last_sources.set_value(kept);
            if !shown {
                go(Tab::Report);
            }
        }
    });
    start(state, sources, done, true);
}

/// Parses, combines and prepares `sources` (for the current spec and mapping) without blocking
/// the page, with the progress bar, and hands the result to `done`. One load runs at a time.
pub fn run(state: AppState, sources: Vec<Source>, done: Done) {
    start(state, sources, done, false);
}

/// [`run`], and with `early` the worker's report is shown before the result arrives (for a
/// load that becomes the app's data).
fn start(state: AppState, sources: Vec<Source>, done: Done, early: bool) {
    stop_digest(state);
    stop_worker();
    GENERATION.set(GENERATION.get().wrapping_add(1));
    state.drop_early();
    let in_page = sources.iter().all(|s| matches!(s, Source::Bytes { .. }))
        && sources.iter().map(Source::size).sum::<f64>() < IN_PAGE_BYTES;
    if in_page {
        state.loading.set(None);
        let batch = state.load_batch(
            sources.into_iter().map(into_bytes).collect(),
            &state.ingest_options(),
        );
        done(state, batch);
        return;
    }
    let done: SharedDone = Rc::new(RefCell::new(Some(done)));
    if let Err(reason) = start_worker(state, &sources, done.clone(), early) {
        web_sys::console::warn_1(&format!("loading on the page: {reason}").into());
        load_in_page(state, sources, done);
    }
}

/// Stops the running load, if any, without a word: its result will not land and a report it
/// showed ahead of its data goes. For a load that replaces it on the page.
pub fn stop(state: AppState) {
    stop_digest(state);
    stop_worker();
    GENERATION.set(GENERATION.get().wrapping_add(1));
    state.loading.set(None);
    state.drop_early();
}

/// Stops the running load; the data loaded before stays.
pub fn cancel(state: AppState) {
    stop(state);
    let had = !state.table.with_untracked(|t| t.0.is_empty());
    state.notice.set(Some(Notice {
        failed: true,
        headline: if had {
            "Loading cancelled; the previous data is still loaded.".to_string()
        } else {
            "Loading cancelled.".to_string()
        },
        details: Vec::new(),
        unmapped: Vec::new(),
    }));
}

fn into_bytes(source: Source) -> (String, Vec<u8>) {
    match source {
        Source::Bytes { name, bytes } => (name, bytes),
        Source::File(f) => (f.name(), Vec::new()),
    }
}

/// Reads every source on the page, then parses there (no worker).
fn load_in_page(state: AppState, sources: Vec<Source>, done: SharedDone) {
    state.loading.set(Some(Progress {
        phase: "Reading the files".to_string(),
        fraction: 0.0,
    }));
    let generation = GENERATION.get();
    wasm_bindgen_futures::spawn_local(async move {
        let mut read = Vec::new();
        for source in sources {
            match source {
                Source::File(file) => {
                    let bytes = match JsFuture::from(file.array_buffer()).await {
                        Ok(buf) => Uint8Array::new(&buf).to_vec(),
                        Err(_) => Vec::new(),
                    };
                    read.push((file.name(), bytes));
                }
                Source::Bytes { name, bytes } => read.push((name, bytes)),
            }
        }
        if GENERATION.get() != generation {
            return; // cancelled or replaced meanwhile
        }
        let batch = state.load_batch(read, &state.ingest_options());
        state.loading.set(None);
        if let Some(done) = done.borrow_mut().take() {
            done(state, batch);
        }
    });
}

fn new_worker() -> Result<Worker, String> {
    let options = WorkerOptions::new();
    options.set_type(WorkerType::Module);
    Worker::new_with_options("./worker.js", &options).map_err(|e| format!("no worker: {e:?}"))
}

/// Starts the next load's worker now, while the user is still choosing a file (a click on a
/// control that opens a file dialog for a load, a file dragged over the drop zone), and tells
/// it to start its second worker too. Starting two workers and instantiating the wasm in each
/// takes 50 to 80 ms, which then passes behind the file dialog instead of after the file is
/// given. At most one such pair waits (about 19 MiB while it does; a cancelled dialog leaves
/// it for the next load); the next load takes it (and ends it with itself). Where no worker
/// can start, this does nothing and the load starts its own, or reads on the page. Meanwhile
/// both run their part of a load once on a small made-up log, for the current spec
/// (`worker::worker_warm_up`), so that the real load finds its code compiled and optimised.
pub fn warm(state: AppState) {
    if SPARE.with(|s| s.borrow().is_some()) {
        return;
    }
    let Ok(worker) = new_worker() else {
        return;
    };
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(|ev: web_sys::Event| {
        ev.prevent_default();
        if let Some(spare) = SPARE.with(|s| s.borrow_mut().take()) {
            spare.worker.terminate();
        }
    });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let message = Object::new();
    set(&message, "warm", &JsValue::TRUE);
    set(
        &message,
        "spec",
        &state.spec.with_untracked(|s| s.to_json()).into(),
    );
    if worker.post_message(&message).is_err() {
        worker.terminate();
        return;
    }
    SPARE.with(|s| {
        *s.borrow_mut() = Some(Spare {
            worker,
            _on_error: on_error,
        })
    });
    // The page's side of a load, once per page, on the report shown now: the worker's report
    // arrives as JSON, and the code that reads it then runs compiled.
    if PAGE_WARM.get() {
        return;
    }
    if let Some(json) = state.report.with_untracked(|r| {
        r.as_ref()
            .and_then(|r| slo_core::transfer::report_to_json(&r.0))
    }) {
        let _ = slo_core::transfer::report_from_json(&json);
        PAGE_WARM.set(true);
    }
}

/// What a load's early report was asked for: the spec and the typed duration sent.
type Asked = Option<(slo_core::spec::Spec, Option<f64>)>;

fn start_worker(
    state: AppState,
    sources: &[Source],
    done: SharedDone,
    early: bool,
) -> Result<(), String> {
    // The spare's error handler stays alive until the job's replaces it below.
    let spare = SPARE.with(|s| s.borrow_mut().take());
    let worker = match &spare {
        Some(spare) => spare.worker.clone(),
        None => new_worker()?,
    };

    let fallback = sources.to_vec();
    let fallback_done = done.clone();
    let again = sources.to_vec();
    let spec = state.spec.get_untracked();
    let duration_s = state.duration_s.get_untracked();
    let asked: Asked = early.then(|| (spec.clone(), duration_s));
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        on_message(state, ev.data(), &done, &again, &asked);
    });
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        // The worker's script could not start (or failed outside worker_load): load on the page.
        ev.prevent_default();
        stop_worker();
        state.drop_early();
        web_sys::console::warn_1(&"the loader worker failed; loading on the page".into());
        load_in_page(state, fallback.clone(), fallback_done.clone());
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    drop(spare);

    let message = Object::new();
    let list = Array::new();
    for source in sources {
        let entry = Object::new();
        set(&entry, "name", &source.name().into());
        match source {
            Source::File(f) => set(&entry, "file", f),
            Source::Bytes { bytes, .. } => {
                set(&entry, "bytes", &Uint8Array::from(bytes.as_slice()))
            }
        }
        list.push(&entry);
    }
    let options = state.ingest_options();
    set(&message, "sources", &list);
    set(
        &message,
        "options",
        &serde_json::to_string(&options).unwrap_or_default().into(),
    );
    set(&message, "spec", &spec.to_json().into());
    set(&message, "early", &early.into());
    // A load that becomes the data lets its one large file's digest come after it.
    set(&message, "lateDigest", &early.into());
    set(
        &message,
        "durationS",
        &duration_s.map_or(JsValue::NULL, JsValue::from),
    );
    if let Err(e) = worker.post_message(&message) {
        worker.set_onmessage(None);
        worker.set_onerror(None);
        worker.terminate();
        return Err(format!("the worker refused the files: {e:?}"));
    }
    let what = match sources {
        [one] => one.name(),
        [first, rest @ ..] => format!("{} and {} more", first.name(), rest.len()),
        [] => String::new(),
    };
    state.loading.set(Some(Progress {
        phase: format!("Loading {what}"),
        fraction: 0.0,
    }));
    JOB.with(|j| {
        *j.borrow_mut() = Some(Job {
            worker,
            _on_message: on_message,
            _on_error: on_error,
        })
    });
    Ok(())
}

fn set(target: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &key.into(), value);
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn on_message(
    state: AppState,
    data: JsValue,
    done: &SharedDone,
    sources: &[Source],
    asked: &Asked,
) {
    match get(&data, "kind").as_string().as_deref() {
        Some("report") => {
            // Shown only if the spec and the duration are still what the report was computed
            // for; otherwise the page computes the report once the columns arrive.
            let Some((spec, duration_s)) = asked else {
                return;
            };
            let unchanged = state.spec.with_untracked(|s| s == spec)
                && state.duration_s.get_untracked() == *duration_s;
            let json = get(&data, "report").as_string().unwrap_or_default();
            match slo_core::transfer::report_from_json(&json) {
                Ok(report) if unchanged => {
                    state.show_early(EarlyReport {
                        report: Shared::new(report),
                        spec: spec.clone(),
                        duration_s: *duration_s,
                    });
                    state.loading.set(Some(Progress {
                        phase: "Report shown; readying the data for new targets".to_string(),
                        fraction: 1.0,
                    }));
                    go(Tab::Report);
                }
                Ok(_) => {}
                Err(e) => web_sys::console::warn_1(
                    &format!("the loader's report could not be read ({e})").into(),
                ),
            }
        }
        Some("progress") => state.loading.set(Some(Progress {
            phase: get(&data, "phase").as_string().unwrap_or_default(),
            fraction: get(&data, "fraction").as_f64().unwrap_or(0.0),
        })),
        Some("done") => {
            stop_worker();
            let generation = GENERATION.get();
            let done = done.clone();
            let sources = sources.to_vec();
            let take = move || take_result(state, &data, done, sources, generation);
            let hidden = web_sys::window()
                .and_then(|w| w.document())
                .is_some_and(|d| d.hidden());
            if state.early.with_untracked(Option::is_some) && !hidden {
                // The early report has just been drawn: the browser paints it before the
                // columns are copied in (a task after the next frame; a hidden page draws no
                // frames, so there it goes on at once).
                request_animation_frame(move || set_timeout(take, std::time::Duration::ZERO));
            } else {
                take();
            }
        }
        _ => {
            stop_worker();
            state.loading.set(None);
            state.drop_early();
            let message = get(&data, "message").as_string().unwrap_or_default();
            failed(state, format!("loading failed: {message}"));
        }
    }
}

/// The worker's result (`data`, its "done" message) put back together and handed to `done`,
/// unless the load was cancelled or replaced since (`generation`).
fn take_result(
    state: AppState,
    data: &JsValue,
    done: SharedDone,
    sources: Vec<Source>,
    generation: u32,
) {
    let current = move || GENERATION.get() == generation;
    if !current() {
        return;
    }
    let parts = crate::worker::parts_from_js(data);
    // One large file's digest, left out of its load (www/worker.js): asked for once it is in.
    let late = match (get(data, "lateDigest").as_bool(), sources.as_slice()) {
        (Some(true), [Source::File(file)]) => Some(file.clone()),
        _ => None,
    };
    if state.early.with_untracked(Option::is_none) {
        state.loading.set(Some(Progress {
            phase: "Showing the report".to_string(),
            fraction: 1.0,
        }));
    }
    // Copying the columns in, putting the batch together and showing the result are three
    // tasks, so that none holds the page for long (at a million requests about 70, 60 and
    // 105 ms).
    set_timeout(
        move || {
            if !current() {
                return; // cancelled or replaced meanwhile
            }
            let batch = parts.and_then(Batch::from_parts);
            set_timeout(
                move || {
                    if !current() {
                        return;
                    }
                    match batch {
                        Ok(batch) => {
                            state.loading.set(None);
                            if let Some(done) = done.borrow_mut().take() {
                                done(state, batch);
                                if let Some(file) = late {
                                    digest_later(state, file);
                                }
                            }
                        }
                        // The worker's result did not survive the trip (a file's own summary
                        // held a NaN, say, which JSON cannot carry): read the files on the page
                        // instead, as if there were no worker (its report shown ahead goes:
                        // the re-read may take seconds).
                        Err(e) => {
                            state.drop_early();
                            web_sys::console::warn_1(
                                &format!(
                                    "the loader's result could not be read ({e}); loading on the page"
                                )
                                .into(),
                            );
                            load_in_page(state, sources, done);
                        }
                    }
                },
                std::time::Duration::ZERO,
            );
        },
        std::time::Duration::ZERO,
    );
}

/// Computes the SHA-256 of `file`, the one file just loaded, in a worker of its own, and fills
/// it into the loaded file's provenance when it comes, if that file is still the one loaded.
/// Its load left it out (www/worker.js, `lateDigest`): the browser's copy of the file for the
/// digest held the loader back. Until it comes, `AppState::digesting` is true.
fn digest_later(state: AppState, file: web_sys::File) {
    let Some(loaded) = state.files.with_untracked(|f| match f.as_slice() {
        [one] if one.0.provenance.sha256.is_empty() => Some(one.clone()),
        _ => None,
    }) else {
        return;
    };
    let Ok(worker) = new_worker() else {
        return;
    };
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let hex = get(&ev.data(), "hex").as_string().unwrap_or_default();
        let still = state
            .files
            .with_untracked(|f| matches!(f.as_slice(), [one] if *one == loaded));
        if still && !hex.is_empty() {
            let mut with = loaded.0.as_ref().clone();
            with.provenance.sha256 = hex;
            state.files.set(vec![Shared::new(with)]);
        }
        stop_digest(state);
    });
    let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |ev: web_sys::Event| {
        ev.prevent_default();
        stop_digest(state);
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let message = Object::new();
    set(&message, "digestOf", &file);
    if worker.post_message(&message).is_err() {
        worker.terminate();
        return;
    }
    state.digesting.set(true);
    DIGEST.with(|d| {
        *d.borrow_mut() = Some(Job {
            worker,
            _on_message: on_message,
            _on_error: on_error,
        })
    });
}

/// Ends the digest worker, if any (its answer came, or the loaded data is being replaced).
fn stop_digest(state: AppState) {
    if let Some(job) = DIGEST.with(|d| d.borrow_mut().take()) {
        job.end();
    }
    if state.digesting.get_untracked() {
        state.digesting.set(false);
    }
}

fn failed(state: AppState, detail: String) {
    state.notice.set(Some(Notice {
        failed: true,
        headline: "Nothing could be read; the previous data is still loaded.".to_string(),
        details: vec![detail],
        unmapped: Vec::new(),
    }));
}

/// The progress bar and Cancel button of a running load, shown on every tab.
#[component]
pub fn LoadProgress() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        state.loading.get().map(|p| {
            let percent = (p.fraction.clamp(0.0, 1.0) * 100.0).round();
            view! {
                <div class="load-progress" role="status" aria-live="polite" data-testid="load-progress">
                    <label for="load-bar">{p.phase.clone()} "…"</label>
                    <progress id="load-bar" max="100" value=percent.to_string()>{format!("{percent} %")}</progress>
                    <span class="muted small">{format!("{percent} %")}</span>
                    <button data-testid="cancel-load" on:click=move |_| cancel(state)>"Cancel"</button>
                </div>
            }
        })
    }
}
