//! The loader thread's entry points: www/worker.js calls [`worker_load`] with the bytes of every
//! source, or, for one large CSV file read in two slices by two workers (`ingest::Slices`),
//! [`worker_load_first_slice`] with its first slice, and in the second worker it starts
//! [`worker_second_slice`] with the header's bytes and the second slice. The page's side is
//! `loader.rs`; what is computed is `slo_core::transfer::Batch::load` (or
//! `Batch::first_slice` and `Batch::read_slices` when two workers share the file).

use js_sys::{Array, Float64Array, Function, Object, Reflect, Uint32Array, Uint8Array};
use slo_core::ingest::{self, FirstSlice, IngestOptions, Slices};
use slo_core::spec::Spec;
use slo_core::transfer::{self, Batch, Column, Parts};
use wasm_bindgen::prelude::*;

/// True when this wasm runs in a worker rather than in the page.
pub fn in_worker() -> bool {
    web_sys::window().is_none()
}

/// A load in the worker: parsed (waiting for the SHA-256 digests the browser computes beside
/// it), or with only its first slice read (waiting for the other worker's part as well).
#[wasm_bindgen]
pub struct PendingLoad {
    state: State,
    /// The files, by name and bytes; the bytes are freed once every part is read, before
    /// `prepare` (a file read in slices keeps no bytes: `worker_load_first_slice`).
    sources: Vec<(String, Vec<u8>)>,
    /// Which sources are logs rather than saved reports (`Batch::logs_of`), for the digests.
    logs: Vec<bool>,
    options: IngestOptions,
    spec: Option<Spec>,
}

enum State {
    Loaded(Box<Batch>),
    /// The first slice's part of the one source, a file of `size` bytes, read here.
    FirstSlice {
        first: Box<FirstSlice>,
        size: u64,
    },
}

/// Parses `buffers` (one `Uint8Array` per name), combines them and prepares the result for
/// `spec_json`. `progress(phase, fraction)` is called as it goes. An unreadable spec only means
/// nothing is prepared (the page prepares it when it can). With `sha256_elsewhere` in the options
/// the files' digests are left to [`PendingLoad::finish`].
#[wasm_bindgen]
pub fn worker_load(
    names: Array,
    buffers: Array,
    options_json: &str,
    spec_json: &str,
    progress: &Function,
) -> Result<PendingLoad, JsValue> {
    let options = options_from(options_json)?;
    let sources: Vec<(String, Vec<u8>)> = names
        .iter()
        .zip(buffers.iter())
        .map(|(name, bytes)| {
            (
                name.as_string().unwrap_or_default(),
                bytes.unchecked_into::<Uint8Array>().to_vec(),
            )
        })
        .collect();
    let mut load = PendingLoad::new(sources, options, spec_json);
    let mut report = reporter(progress);
    let batch = Batch::read(&load.sources, &load.options, &mut report);
    load.prepare(batch, &mut report);
    Ok(load)
}

/// `[middle, first_end, head_end]` of a file of `size` bytes read in two slices
/// (`ingest::Slices`): the loader reads the bytes before `first_end`, the second worker those
/// before `head_end` and from `middle` on.
#[wasm_bindgen]
pub fn worker_slices(size: f64) -> Vec<f64> {
    let s = Slices::of(size as u64);
    vec![s.middle as f64, s.first_end as f64, s.head_end as f64]
}

/// The first step of loading one file of `size` bytes read in two slices by two workers:
/// `bytes` are its first slice (`worker_slices`), whose rows are read now; the slice's bytes
/// are not kept (the join needs only its header's), so that they are free for the join. The
/// load then waits for the second worker's part ([`PendingLoad::waiting`],
/// [`PendingLoad::join`]). `undefined` when the file is not read in slices
/// (`Batch::first_slice`): read it whole ([`worker_load`]).
#[wasm_bindgen]
pub fn worker_load_first_slice(
    name: &str,
    bytes: FileBytes,
    size: f64,
    options_json: &str,
    spec_json: &str,
    progress: &Function,
) -> Result<Option<PendingLoad>, JsValue> {
    let options = options_from(options_json)?;
    let (bytes, size) = (bytes.0, size as u64);
    let first = Batch::first_slice(name, &bytes, size, &options, &mut reporter(progress));
    drop(bytes);
    Ok(first.map(|first| {
        // No bytes kept: a CSV log, never a saved report (`Batch::first_slice`), as
        // `Batch::logs_of` finds empty bytes too.
        let mut load = PendingLoad::new(vec![(name.to_string(), Vec::new())], options, spec_json);
        load.state = State::FirstSlice {
            first: Box::new(first),
            size,
        };
        load
    }))
}

/// `progress(phase, fraction)` as a Rust closure.
fn reporter(progress: &Function) -> impl FnMut(&str, f64) + '_ {
    move |phase: &str, fraction: f64| {
        let _ = progress.call2(&JsValue::NULL, &phase.into(), &fraction.into());
    }
}

/// A made-up CSV log of `rows` requests in three classes, with the columns most logs have,
/// for [`worker_warm_up`] and [`worker_warm_up_part`]. Its numbers come from a fixed
/// pseudo-random sequence, so that sorting and merging them is real work.
fn warm_up_log(rows: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % 10_000
    };
    let mut csv = String::from("class,input_tokens,ttft_ms,e2e_ms,output_tokens,status,error\n");
    for k in 0..rows {
        let class = ["chat", "code", "batch"][k % 3];
        let (input, ttft, out) = (next() * 3, next() as f64 / 7.0, next() / 10);
        let e2e = ttft + out as f64 * (20.0 + next() as f64 / 500.0);
        let (status, error) = if k % 200 == 0 {
            ("error", "upstream 503")
        } else {
            ("ok", "")
        };
        csv.push_str(&format!(
            "{class},{input},{ttft:.3},{e2e:.3},{out},{status},{error}\n"
        ));
    }
    csv.into_bytes()
}

/// Rows of the warm-up log: over a mebibyte, so that it is read in parts as a large file is.
const WARM_UP_ROWS: usize = 36_000;

/// The loader's whole path once, on a small made-up log (`warm_up_log`), for `spec_json` (the
/// page's spec): its first slice read here and the second too, joined, prepared, its report
/// written as JSON and the batch taken apart. www/worker.js runs it while the person is still
/// in the file dialog (`{warm: true}`): WebAssembly code is compiled when a function is
/// first called and optimised only once it has run hot, so the real load then runs on ready
/// code instead of paying for that on its way (docs/performance.md, ninth round).
#[wasm_bindgen]
pub fn worker_warm_up(spec_json: &str) {
    let bytes = warm_up_log(WARM_UP_ROWS);
    let (name, options) = ("warm-up.csv", IngestOptions::default());
    let spec = Spec::from_json(spec_json).ok();
    let size = bytes.len() as u64;
    let s = Slices::of(size);
    let first_bytes = bytes.get(..s.first_end as usize).unwrap_or_default();
    let first = Batch::first_slice(name, first_bytes, size, &options, &mut |_, _| {});
    let Some((first, second)) = first.zip(second_slice_of(name, &bytes, &options)) else {
        return;
    };
    if let Some(mut batch) = Batch::read_slices(name, size, &options, first, second) {
        batch.prepare_for(spec.as_ref(), &mut |_, _| {});
        if let Some(report) = spec.and_then(|spec| batch.report(&spec, None)) {
            let _ = transfer::report_to_json(&report);
        }
        let _ = parts_to_js(batch.into_parts());
    }
}

/// The second worker's path once, on the warm-up log: its slice read and taken apart, as
/// [`worker_second_slice`] does (see [`worker_warm_up`]).
#[wasm_bindgen]
pub fn worker_warm_up_part() {
    let bytes = warm_up_log(WARM_UP_ROWS);
    if let Some(part) = second_slice_of("warm-up.csv", &bytes, &IngestOptions::default()) {
        let _ = parts_to_js(Batch::part_into_parts(part));
    }
}

/// The second slice's part of the whole file `bytes`, for the warm-ups.
fn second_slice_of(name: &str, bytes: &[u8], options: &IngestOptions) -> Option<ingest::Part> {
    let size = bytes.len() as u64;
    let s = Slices::of(size);
    let head = bytes.get(..s.head_end as usize)?;
    let tail = bytes.get(s.middle as usize..)?;
    ingest::second_slice(name, head, tail, size, options, &mut |_| {})
}

/// The lower-case hex SHA-256 of `bytes`: www/worker.js asks for it where Web Crypto failed on
/// a file (the loader has freed its own copy of the file by then, see `PendingLoad::finish`).
#[wasm_bindgen]
pub fn worker_sha256(bytes: &[u8]) -> String {
    ingest::sha256_hex(bytes)
}

/// Bytes of a file gathered in this worker's wasm memory a chunk at a time: www/worker.js
/// reads a slice through one small buffer it reuses and adds each chunk here, so that the
/// slice is never also held whole in JavaScript (17 MB per worker for a 35 MB log, freed only
/// when the garbage collector comes round: much of the parsing phase's peak).
#[wasm_bindgen]
pub struct FileBytes(Vec<u8>);

#[wasm_bindgen]
impl FileBytes {
    /// Empty, with room for `capacity` bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(capacity: f64) -> FileBytes {
        FileBytes(Vec::with_capacity(capacity as usize))
    }

    /// Adds `chunk`, copied once, straight from JavaScript's memory.
    pub fn push(&mut self, chunk: &Uint8Array) {
        let at = self.0.len();
        self.0.resize(at + chunk.length() as usize, 0);
        if let Some(room) = self.0.get_mut(at..) {
            chunk.copy_to(room);
        }
    }
}

/// The SHA-256 of a file read a chunk at a time (`ingest::Sha256Digest`): www/worker.js
/// digests a large file this way, so that it never holds the whole file (Web Crypto takes the
/// bytes whole, and copies them).
#[wasm_bindgen]
#[derive(Default)]
pub struct FileDigest(ingest::Sha256Digest);

#[wasm_bindgen]
impl FileDigest {
    #[wasm_bindgen(constructor)]
    pub fn new() -> FileDigest {
        FileDigest::default()
    }

    /// Adds the file's next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The lower-case hex digest of every byte added.
    pub fn hex(self) -> String {
        self.0.hex()
    }
}

/// The second worker's part of one file of `size` bytes read in two slices
/// (`slo_core::ingest::second_slice`): `head` is the file's bytes before `head_end`, `tail`
/// those from `middle` on (`worker_slices`). `{header, columns}` as [`PendingLoad::finish`]
/// gives a batch (`Batch::part_into_parts`), or null when the file is not read in slices.
#[wasm_bindgen]
pub fn worker_second_slice(
    name: &str,
    head: Uint8Array,
    tail: FileBytes,
    size: f64,
    options_json: &str,
) -> Result<JsValue, JsValue> {
    let options = options_from(options_json)?;
    let (head, tail) = (head.to_vec(), tail.0);
    let part = ingest::second_slice(name, &head, &tail, size as u64, &options, &mut |_| {});
    drop(tail);
    Ok(match part {
        Some(part) => parts_to_js(Batch::part_into_parts(part)).into(),
        None => JsValue::NULL,
    })
}

#[wasm_bindgen]
impl PendingLoad {
    /// True while the other worker's part is still to be joined ([`PendingLoad::join`]).
    pub fn waiting(&self) -> bool {
        matches!(self.state, State::FirstSlice { .. })
    }

    /// Finishes a load read in slices with the other worker's part as it sent it (`{header,
    /// columns}` from [`worker_second_slice`]), then prepares it, as [`worker_load`] does.
    /// False, and nothing loaded, when the part is null (that worker failed or declined) or
    /// does not fit: then read the whole file with [`worker_load`].
    pub fn join(&mut self, other: JsValue, progress: &Function) -> bool {
        self.join_with(other, &mut reporter(progress))
    }

    /// The report of the prepared load (`Batch::report`) as JSON, for the page to show while
    /// the batch is still being taken apart and sent (`transfer::report_to_json`):
    /// `duration_s` is the run duration the user typed, if any. `undefined` where the page would
    /// show no report of this load, or JSON cannot carry it exactly; the page then computes
    /// the report once the batch has arrived, as before.
    pub fn report(&self, duration_s: Option<f64>) -> Option<String> {
        let (State::Loaded(batch), Some(spec)) = (&self.state, &self.spec) else {
            return None;
        };
        transfer::report_to_json(&batch.report(spec, duration_s)?)
    }

    /// The batch taken apart (`Batch::into_parts`) as `{header, columns}`, with `digests` (per
    /// source: the lower-case hex SHA-256 the browser computed; a file loaded with
    /// `sha256_elsewhere` whose digest is null keeps an empty one, so worker.js computes any
    /// that Web Crypto could not with [`worker_sha256`] first). The header is a `Uint8Array`,
    /// each large column in order a `Float64Array` or a `Uint32Array`, each its own buffer, so
    /// that worker.js can transfer them to the page and the page copies each straight into its
    /// wasm memory.
    pub fn finish(self, digests: Array) -> Object {
        let PendingLoad { state, logs, .. } = self;
        let State::Loaded(batch) = state else {
            return Object::new();
        };
        let mut batch = *batch;
        let digests: Vec<Option<String>> = digests.iter().map(|d| d.as_string()).collect();
        batch.fill_sha256(&logs, &digests);
        parts_to_js(batch.into_parts())
    }
}

impl PendingLoad {
    fn new(
        sources: Vec<(String, Vec<u8>)>,
        options: IngestOptions,
        spec_json: &str,
    ) -> PendingLoad {
        PendingLoad {
            state: State::Loaded(Box::default()),
            logs: Batch::logs_of(&sources),
            sources,
            options,
            spec: Spec::from_json(spec_json).ok(),
        }
    }

    /// [`PendingLoad::join`], telling `progress(phase, fraction)` how far along the load is.
    fn join_with(&mut self, other: JsValue, progress: &mut dyn FnMut(&str, f64)) -> bool {
        let State::FirstSlice { first, size } =
            std::mem::replace(&mut self.state, State::Loaded(Box::default()))
        else {
            return false;
        };
        let second = match parts_from_js(&other).and_then(Batch::part_from_parts) {
            Ok(part) => part,
            Err(e) => {
                if !other.is_null() {
                    web_sys::console::warn_1(
                        &format!("the second loader's part could not be read ({e})").into(),
                    );
                }
                return false;
            }
        };
        let Some((name, _)) = self.sources.first() else {
            return false;
        };
        // Said on the progress bar (and seen by the browser test of a large load).
        progress(&format!("Joining the halves of {name}"), 0.0);
        match Batch::read_slices(name, size, &self.options, *first, second) {
            Some(batch) => {
                self.prepare(batch, progress);
                true
            }
            None => false,
        }
    }

    /// Frees the files' bytes, then prepares `batch` and keeps it. The bytes are the largest
    /// thing in this worker's memory; freed first, `prepare`'s columns reuse that memory
    /// instead of growing it (the renderer's peak for a 35 MB log: 35 MiB less).
    fn prepare(&mut self, mut batch: Batch, progress: &mut dyn FnMut(&str, f64)) {
        for (_, bytes) in &mut self.sources {
            *bytes = Vec::new();
        }
        batch.prepare_for(self.spec.as_ref(), progress);
        self.state = State::Loaded(Box::new(batch));
    }
}

fn options_from(json: &str) -> Result<IngestOptions, JsValue> {
    slo_core::transfer::read_json(json.as_bytes())
        .map_err(|e| JsValue::from_str(&format!("load options: {e}")))
}

/// `{header, columns}`: the header as a `Uint8Array`, each column as a typed array of its own.
fn parts_to_js(parts: Parts) -> Object {
    let columns = Array::new();
    // Each column is freed once copied, so that wasm memory can reuse it for the next.
    for column in parts.columns {
        match column {
            Column::F64(v) => columns.push(&Float64Array::from(v.as_slice())),
            Column::U32(v) => columns.push(&Uint32Array::from(v.as_slice())),
        };
    }
    let out = Object::new();
    let _ = Reflect::set(
        &out,
        &"header".into(),
        &Uint8Array::from(parts.header.as_slice()),
    );
    let _ = Reflect::set(&out, &"columns".into(), &columns);
    out
}

/// The parts in `{header, columns}` ([`parts_to_js`]'s form), each column copied once, straight
/// into wasm memory. Anything but a `Uint8Array` header and typed-array columns is an error.
pub fn parts_from_js(data: &JsValue) -> Result<Parts, String> {
    let get = |key: &str| Reflect::get(data, &key.into()).unwrap_or(JsValue::UNDEFINED);
    let header = get("header")
        .dyn_into::<Uint8Array>()
        .map_err(|_| "the header is missing".to_string())?
        .to_vec();
    let columns = get("columns")
        .dyn_into::<Array>()
        .map_err(|_| "the columns are missing".to_string())?
        .iter()
        .enumerate()
        .map(|(k, c)| {
            if let Some(f) = c.dyn_ref::<Float64Array>() {
                Ok(Column::F64(f.to_vec()))
            } else if let Some(u) = c.dyn_ref::<Uint32Array>() {
                Ok(Column::U32(u.to_vec()))
            } else {
                Err(format!("column {k} is not a Float64Array or a Uint32Array"))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Parts { header, columns })
}
