//! App state: one context of signals, provided once by `App`.
//!
//! Loading parses files (slo-core), evaluation is a chain of memos: the combined table, the
//! prepared grouping (recomputed only when classes, buckets, method or percentiles change) and the
//! report (recomputed on every target change, which is cheap).

use std::sync::Arc;

use leptos::prelude::*;
use slo_core::evaluate::{evaluate, prepare, Report};
use slo_core::ingest::{self, IngestOptions, Loaded};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::table::RequestTable;

/// Shared, immutable data in a signal: equal when it is the same allocation, so memos do not
/// compare a million rows.
#[derive(Debug)]
pub struct Shared<T>(pub Arc<T>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }
}

/// What the last load said.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// True when nothing was loaded and the previous data stays.
    pub failed: bool,
    pub headline: String,
    /// Located problems, one per line.
    pub details: Vec<String>,
}

/// The app's state.
#[derive(Clone, Copy)]
pub struct AppState {
    pub files: RwSignal<Vec<Shared<Loaded>>>,
    pub spec: RwSignal<Spec>,
    /// Duration typed by the user, for goodput, in seconds.
    pub duration_s: RwSignal<Option<f64>>,
    pub notice: RwSignal<Option<Notice>>,
    /// A sentence about the spec (opened from a link, a stored spec unreadable, an import).
    pub spec_notice: RwSignal<Option<String>>,
    /// True while the shown data is the built-in sample.
    pub sample: RwSignal<bool>,
    pub table: Memo<Shared<RequestTable>>,
    pub report: Memo<Option<Shared<Report>>>,
}

/// localStorage key of the autosaved spec, and of a stored spec that no longer parses.
const SPEC_KEY: &str = "slo-workbench.spec.v1";
const SPEC_BACKUP_KEY: &str = "slo-workbench.spec.unreadable";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

/// The spec to start with, and a sentence when something needs saying: a share link's spec, else
/// the autosaved one, else the default. A stored spec that no longer parses is kept aside under
/// its own key, never dropped.
fn initial_spec() -> (Spec, Option<String>) {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    if hash.contains(slo_core::spec::SHARE_KEY) {
        return match slo_core::spec::from_share_fragment(&hash) {
            Ok(spec) => (
                spec,
                Some("Opened the spec from the shared link.".to_string()),
            ),
            Err(errors) => {
                (
                    stored_spec().0,
                    Some(format!(
                    "The shared link's spec could not be read ({}); your own spec is unchanged.",
                    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
                )),
                )
            }
        };
    }
    stored_spec()
}

fn stored_spec() -> (Spec, Option<String>) {
    let Some(store) = storage() else {
        return (starting_spec(), None);
    };
    let Some(text) = store.get_item(SPEC_KEY).ok().flatten() else {
        return (starting_spec(), None);
    };
    match Spec::from_json(&text) {
        Ok(spec) => (spec, None),
        Err(errors) => {
            let _ = store.set_item(SPEC_BACKUP_KEY, &text);
            (
                starting_spec(),
                Some(format!(
                    "The spec saved in this browser could not be read ({}). It is kept aside under \"{SPEC_BACKUP_KEY}\" in local storage; the default spec is shown.",
                    errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
                )),
            )
        }
    }
}

fn save_spec(spec: &Spec) {
    if let Some(store) = storage() {
        let _ = store.set_item(SPEC_KEY, &spec.to_json());
    }
}

/// The spec a first visit starts with: the guide's chat targets, one class, one bucket.
pub fn starting_spec() -> Spec {
    let mut spec = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    });
    spec.service = "My LLM service".to_string();
    spec.percentiles = vec![50.0, 90.0, 99.0];
    spec
}

impl AppState {
    pub fn new() -> AppState {
        let files = RwSignal::new(Vec::<Shared<Loaded>>::new());
        let (first, spec_notice) = initial_spec();
        let spec = RwSignal::new(first);
        // Autosave every valid change.
        Effect::new(move |_| {
            spec.with(|s| {
                if s.validate().is_empty() {
                    save_spec(s);
                }
            })
        });
        let duration_s = RwSignal::new(None);
        let table = Memo::new(move |_| {
            files.with(|f| {
                let loaded: Vec<&Loaded> = f.iter().map(|s| s.0.as_ref()).collect();
                Shared::new(ingest::combine(&loaded))
            })
        });
        let key = Memo::new(move |_| spec.with(Spec::grouping_key));
        let prepared = Memo::new(move |_| {
            key.track();
            let t = table.get();
            Shared::new(spec.with_untracked(|s| prepare(&t.0, s)))
        });
        let report = Memo::new(move |_| {
            let t = table.get();
            if t.0.is_empty() {
                return None;
            }
            let p = prepared.get();
            let typed = duration_s.get();
            let duration = files.with(|f| {
                let loaded: Vec<&Loaded> = f.iter().map(|s| s.0.as_ref()).collect();
                ingest::run_duration(&loaded, &t.0, typed)
            });
            spec.with(|s| {
                if !s.validate().is_empty() {
                    return None;
                }
                Some(Shared::new(evaluate(&t.0, &p.0, s, &duration)))
            })
        });
        AppState {
            files,
            spec,
            duration_s,
            notice: RwSignal::new(None),
            spec_notice: RwSignal::new(spec_notice),
            sample: RwSignal::new(false),
            table,
            report,
        }
    }

    /// Parses `sources` (name, bytes) and, if anything could be read, makes them the loaded data.
    /// Returns true when the data changed. A load that reads nothing keeps the previous data.
    pub fn load(&self, sources: Vec<(String, Vec<u8>)>, sample: bool) -> bool {
        let options = IngestOptions::default();
        let mut good = Vec::new();
        let mut details = Vec::new();
        let mut skipped = 0u64;
        for (name, bytes) in &sources {
            let loaded = ingest::parse(name, bytes, &options);
            if let Some(fatal) = &loaded.fatal {
                details.push(fatal.clone());
                continue;
            }
            skipped += loaded.error_count;
            details.extend(loaded.errors.iter().map(|e| e.to_string()));
            if loaded.error_count > loaded.errors.len() as u64 {
                details.push(format!(
                    "… and {} more skipped rows in {name}",
                    loaded.error_count - loaded.errors.len() as u64
                ));
            }
            details.extend(loaded.warnings.iter().cloned());
            good.push(Shared::new(loaded));
        }
        if good.is_empty() {
            let had = !self.files.with_untracked(Vec::is_empty);
            self.notice.set(Some(Notice {
                failed: true,
                headline: if had {
                    "Nothing could be read; the previous data is still loaded.".to_string()
                } else {
                    "Nothing could be read.".to_string()
                },
                details,
            }));
            return false;
        }
        let rows: usize = good.iter().map(|g| g.0.table.len()).sum();
        let headline = format!(
            "Loaded {} request{} from {} file{}{}.",
            crate::fmt::count(rows as u64),
            if rows == 1 { "" } else { "s" },
            good.len(),
            if good.len() == 1 { "" } else { "s" },
            if skipped > 0 {
                format!("; {} rows skipped (see below)", crate::fmt::count(skipped))
            } else {
                String::new()
            }
        );
        self.notice.set(Some(Notice {
            failed: false,
            headline,
            details,
        }));
        self.sample.set(sample);
        self.files.set(good);
        true
    }
}
