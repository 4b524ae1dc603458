//! App state: one context of signals, provided once by `App`.
//!
//! A load (`loader.rs`: in a worker for files, on the page for small pasted text) ends in
//! [`AppState::commit`], which sets the files and their combined table. Evaluation is then a chain
//! of memos: the prepared grouping (recomputed only when classes, buckets, method or percentiles
//! change; a worker's load brings it ready-made) and the report (recomputed on every target
//! change, which is cheap). A worker's load also sends its report ahead of its columns
//! ([`EarlyReport`]): it is shown while the columns are on their way, then kept as the loaded
//! table's report so that the page does not compute and draw the same report again.

use std::sync::Arc;

use leptos::prelude::*;
use slo_core::evaluate::{evaluate, prepare, Prepared, Report};
use slo_core::ingest::fields::TimeUnit;
use slo_core::ingest::{self, ColumnMapping, Format, IngestOptions, Loaded, Provenance};
use slo_core::saved::SavedReport;
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::table::RequestTable;
use slo_core::transfer::Batch;

use crate::loader::{Progress, Source};

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

/// A report the loader worker computed before its load reached the page (`loader.rs`), with
/// the spec and typed duration it was computed for.
#[derive(Clone, Debug)]
pub struct EarlyReport {
    pub report: Shared<Report>,
    pub spec: Spec,
    pub duration_s: Option<f64>,
}

/// What the last load said.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// True when nothing was loaded and the previous data stays.
    pub failed: bool,
    pub headline: String,
    /// Located problems, one per line.
    pub details: Vec<String>,
    /// Headers no field claimed, for the column-mapping step.
    pub unmapped: Vec<String>,
}

/// The app's state.
#[derive(Clone, Copy)]
pub struct AppState {
    /// What each loaded file said (provenance, metadata, skipped rows). Their requests are in
    /// `table`, not here.
    pub files: RwSignal<Vec<Shared<Loaded>>>,
    pub spec: RwSignal<Spec>,
    /// Duration typed by the user, for goodput, in seconds.
    pub duration_s: RwSignal<Option<f64>>,
    pub notice: RwSignal<Option<Notice>>,
    /// A sentence about the spec (opened from a link, a stored spec unreadable, an import).
    pub spec_notice: RwSignal<Option<String>>,
    /// True while the shown data is the built-in sample.
    pub sample: RwSignal<bool>,
    /// The requests of every loaded file, one source per file.
    pub table: RwSignal<Shared<RequestTable>>,
    /// The grouping a worker prepared with the table, used once if the spec still matches.
    prepared_seed: StoredValue<Option<Shared<Prepared>>>,
    /// The running load's report, shown until the load commits or stops (None otherwise).
    pub early: RwSignal<Option<EarlyReport>>,
    /// The early report of the load just committed, with its table: that table's report, once,
    /// if the spec and the typed duration are still the ones it was computed for.
    report_seed: StoredValue<Option<(EarlyReport, Shared<RequestTable>)>>,
    /// True while the loaded file's SHA-256 is still being computed, after its load
    /// (`loader.rs`, `digest_later`): its provenance is not complete yet.
    pub digesting: RwSignal<bool>,
    /// The running load's progress (None when nothing is loading).
    pub loading: RwSignal<Option<Progress>>,
    /// The user's column mapping (remembered in this browser), applied to every load.
    pub mapping: RwSignal<ColumnMapping>,
    /// A format chosen by the user instead of detecting it (None: detect).
    pub format: RwSignal<Option<Format>>,
    /// The unit of time columns whose header names none.
    pub default_unit: RwSignal<TimeUnit>,
    /// The inputs of the last load, so a new mapping can re-read them.
    pub last_sources: StoredValue<Vec<Source>, LocalStorage>,
    /// A saved report being viewed (opened without its request data).
    pub viewing: RwSignal<Option<Shared<SavedReport>>>,
    /// Provenance of what the report was computed from (loaded files, or the saved report's).
    pub provenance: Memo<Vec<Provenance>>,
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

const MAPPING_KEY: &str = "slo-workbench.mapping.v1";

fn stored_mapping() -> ColumnMapping {
    storage()
        .and_then(|s| s.get_item(MAPPING_KEY).ok().flatten())
        .and_then(|t| slo_core::transfer::read_json(t.as_bytes()).ok())
        .unwrap_or_default()
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
        let table = RwSignal::new(Shared::new(RequestTable::default()));
        let prepared_seed = StoredValue::new(None::<Shared<Prepared>>);
        let key = Memo::new(move |_| spec.with(Spec::grouping_key));
        let prepared = Memo::new(move |_| {
            let key = key.get();
            let t = table.get();
            let seed = prepared_seed
                .try_update_value(Option::take)
                .flatten()
                .filter(|p| p.0.key == key && p.0.cell_of.len() == t.0.len());
            seed.unwrap_or_else(|| Shared::new(spec.with_untracked(|s| prepare(&t.0, s))))
        });
        let viewing = RwSignal::new(None::<Shared<SavedReport>>);
        let mapping = RwSignal::new(stored_mapping());
        Effect::new(move |_| {
            mapping.with(|m| {
                if let (Some(store), Ok(json)) = (storage(), serde_json::to_string(m)) {
                    let _ = store.set_item(MAPPING_KEY, &json);
                }
            })
        });
        let provenance = Memo::new(move |_| match viewing.get() {
            Some(saved) => saved.0.files.clone(),
            None => files.with(|f| f.iter().map(|l| l.0.provenance.clone()).collect()),
        });
        let early = RwSignal::new(None::<EarlyReport>);
        let report_seed = StoredValue::new(None::<(EarlyReport, Shared<RequestTable>)>);
        // The run's duration, apart from the report: a file's digest filled in after its load
        // changes `files` but not the duration, and so does not evaluate the report again.
        let run = Memo::new(move |_| {
            let t = table.get();
            let typed = duration_s.get();
            files.with(|f| {
                let loaded: Vec<&Loaded> = f.iter().map(|s| s.0.as_ref()).collect();
                ingest::run_duration(&loaded, &t.0, typed)
            })
        });
        let report = Memo::new(move |_| {
            // A running load's report, until the load itself arrives (whatever the spec does
            // meanwhile: the table shown so far is the previous load's).
            if let Some(early) = early.get() {
                return Some(early.report);
            }
            if let Some(saved) = viewing.get() {
                return Some(Shared::new(saved.0.report.clone()));
            }
            let t = table.get();
            if t.0.is_empty() {
                return None;
            }
            let p = prepared.get();
            let typed = duration_s.get();
            let duration = run.get();
            spec.with(|s| {
                if !s.validate().is_empty() {
                    return None;
                }
                // The same Shared as the early report shown: nothing below redraws.
                let seed = report_seed
                    .try_update_value(Option::take)
                    .flatten()
                    .filter(|(e, table)| *table == t && e.spec == *s && e.duration_s == typed);
                if let Some((e, _)) = seed {
                    return Some(e.report);
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
            prepared_seed,
            early,
            report_seed,
            digesting: RwSignal::new(false),
            loading: RwSignal::new(None),
            viewing,
            provenance,
            mapping,
            format: RwSignal::new(None),
            default_unit: RwSignal::new(TimeUnit::default()),
            last_sources: StoredValue::new_local(Vec::new()),
            report,
        }
    }

    /// Opens a saved report: with its request data, as loaded data (everything recomputes);
    /// without, as a read-only view of the saved numbers. The saved spec becomes the spec.
    pub fn open_saved(&self, saved: SavedReport) {
        let description = saved.describe();
        // A preparation or report waiting for the previous load must not meet this table.
        self.prepared_seed.set_value(None);
        self.report_seed.set_value(None);
        self.spec.set(saved.spec.clone());
        match saved.data.clone() {
            Some(table) => {
                let provenance = saved.files.first().cloned().unwrap_or_default();
                let rows = table.len() as u64;
                let loaded = Loaded {
                    provenance: Provenance {
                        rows_read: rows,
                        ..provenance
                    },
                    ..Loaded::default()
                };
                self.viewing.set(None);
                self.files.set(vec![Shared::new(loaded)]);
                self.table.set(Shared::new(table));
            }
            None => self.viewing.set(Some(Shared::new(saved))),
        }
        self.sample.set(false);
        self.notice.set(Some(Notice {
            failed: false,
            headline: description,
            details: Vec::new(),
            unmapped: Vec::new(),
        }));
    }

    /// Parses `sources` (name, bytes) on the page and, if anything could be read, makes them the
    /// loaded data. For small inputs (the sample, pasted text); files go through `loader`.
    /// Returns true when the data changed.
    /// The built-in sample is read with the default format and unit (it is a CSV in
    /// milliseconds whatever the user chose for their own files), and is never re-read.
    pub fn load(&self, sources: Vec<(String, Vec<u8>)>, sample: bool) -> bool {
        let kept: Vec<Source> = sources
            .iter()
            .map(|(name, bytes)| Source::Bytes {
                name: name.clone(),
                bytes: bytes.clone(),
            })
            .collect();
        let options = if sample {
            IngestOptions {
                mapping: self.mapping.get_untracked(),
                ..IngestOptions::default()
            }
        } else {
            self.ingest_options()
        };
        // It replaces a load still running in a worker (which must not land afterwards).
        crate::loader::stop(*self);
        let changed = self.commit(self.load_batch(sources, &options), sample, None);
        if changed {
            self.last_sources.set_value(kept);
        }
        changed
    }

    /// Rows of the loaded files that could not be read (tracked: for the notices that say so).
    pub fn rows_skipped(&self) -> u64 {
        self.files
            .with(|files| slo_core::ingest::rows_skipped(files.iter().map(|f| &*f.0)))
    }

    /// How files are read: the chosen format, the default time unit and the column mapping,
    /// with the columns the current spec's class rules read (a rule written after the load
    /// finds its column only once the files are read again; until then the report warns).
    pub fn ingest_options(&self) -> IngestOptions {
        IngestOptions {
            format: self.format.get_untracked(),
            default_time_unit: self.default_unit.get_untracked(),
            mapping: self.mapping.get_untracked(),
            ..IngestOptions::default()
        }
        .reading_rule_columns(&self.spec.get_untracked())
    }

    /// Parses, combines and prepares `sources` on the page, with `options` and the current spec.
    pub fn load_batch(&self, sources: Vec<(String, Vec<u8>)>, options: &IngestOptions) -> Batch {
        self.spec
            .with_untracked(|spec| Batch::load(&sources, options, Some(spec), &mut |_, _| {}))
    }

    /// Makes a finished load the loaded data, if anything could be read, and says what happened.
    /// A saved report among the files opens as a report. Returns true when the data changed; a
    /// load that reads nothing keeps the previous data. `early` is the report this load showed
    /// ahead of its data (`loader.rs`), kept as its table's report while the spec and typed
    /// duration are those it was computed for. An early report still showing is dropped.
    pub fn commit(&self, batch: Batch, sample: bool, early: Option<EarlyReport>) -> bool {
        let Batch {
            files,
            saved,
            table,
            prepared,
        } = batch;
        let mut details = Vec::new();
        // The first saved report that reads opens; the others are named.
        for (name, text) in &saved {
            match slo_core::saved::from_json(text) {
                Ok(saved) => {
                    self.open_saved(saved);
                    self.drop_early();
                    return true;
                }
                Err(e) => details.push(format!("{name}: {e}")),
            }
        }
        let mut good = Vec::new();
        let mut unmapped: Vec<String> = Vec::new();
        let skipped = slo_core::ingest::rows_skipped(files.iter().filter(|f| f.fatal.is_none()));
        for loaded in files {
            let name = loaded.provenance.name.clone();
            for h in &loaded.unmapped_columns {
                if !unmapped.contains(h) {
                    unmapped.push(h.clone());
                }
            }
            if let Some(fatal) = &loaded.fatal {
                details.push(fatal.clone());
                continue;
            }
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
                unmapped,
            }));
            self.drop_early();
            return false;
        }
        let rows = table.len();
        let headline = format!(
            "Loaded {} request{} from {} file{}{}.",
            crate::fmt::count(rows as u64),
            if rows == 1 { "" } else { "s" },
            good.len(),
            if good.len() == 1 { "" } else { "s" },
            if skipped > 0 {
                format!(
                    "; {} row{} skipped (see below)",
                    crate::fmt::count(skipped),
                    if skipped == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        );
        self.notice.set(Some(Notice {
            failed: false,
            headline,
            details,
            unmapped,
        }));
        self.sample.set(sample);
        self.viewing.set(None);
        self.prepared_seed.set_value(prepared.map(Shared::new));
        let table = Shared::new(table);
        self.report_seed
            .set_value(early.map(|early| (early, table.clone())));
        self.files.set(good);
        self.table.set(table);
        // Last: the seed above is in place before the report memo looks past the early report.
        self.drop_early();
        true
    }

    /// Shows `early` as the report until the running load commits or stops (`loader.rs`).
    pub fn show_early(&self, early: EarlyReport) {
        self.early.set(Some(early));
    }

    /// True while what was loaded is not all known yet: a load's report shows ahead of its
    /// data, or its file's digest is still being computed. Saving and the document's measured
    /// section wait.
    pub fn provenance_pending(&self) -> bool {
        self.early.with(Option::is_some) || self.digesting.get()
    }

    /// Stops showing a running load's early report (the load committed, stopped or failed).
    pub fn drop_early(&self) {
        if self.early.with_untracked(Option::is_some) {
            self.early.set(None);
        }
    }
}
