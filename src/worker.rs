//! The loader thread's entry point: www/worker.js calls [`worker_load`] with the bytes of every
//! source. The page's side is `loader.rs`; what is computed is `slo_core::transfer::Batch::load`.

use js_sys::{Array, Float64Array, Function, Uint32Array, Uint8Array};
use slo_core::ingest::IngestOptions;
use slo_core::spec::Spec;
use slo_core::transfer::{Batch, Column};
use wasm_bindgen::prelude::*;

/// True when this wasm runs in a worker rather than in the page.
pub fn in_worker() -> bool {
    web_sys::window().is_none()
}

/// A load parsed in the worker, waiting for the SHA-256 digests the browser computes beside it.
#[wasm_bindgen]
pub struct PendingLoad {
    batch: Batch,
    sources: Vec<(String, Vec<u8>)>,
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
    let options: IngestOptions = serde_json::from_str(options_json)
        .map_err(|e| JsValue::from_str(&format!("load options: {e}")))?;
    let spec = Spec::from_json(spec_json).ok();
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
    let batch = Batch::load(&sources, &options, spec.as_ref(), &mut |phase, fraction| {
        let _ = progress.call2(&JsValue::NULL, &phase.into(), &fraction.into());
    });
    Ok(PendingLoad { batch, sources })
}

#[wasm_bindgen]
impl PendingLoad {
    /// The batch taken apart (`Batch::into_parts`), with `digests` (per source: the lower-case
    /// hex SHA-256, or null where the browser could not compute it; those are computed here):
    /// an array of the header (a `Uint8Array`), then each large column in order as a
    /// `Float64Array` or a `Uint32Array`. Each is its own buffer, so that worker.js can transfer
    /// them to the page and the page copies each straight into its wasm memory.
    pub fn finish(self, digests: Array) -> Array {
        let PendingLoad { mut batch, sources } = self;
        let digests: Vec<Option<String>> = digests.iter().map(|d| d.as_string()).collect();
        batch.fill_sha256(&sources, &digests);
        // The sources are no longer needed: free them before the columns are copied out.
        drop(sources);
        let parts = batch.into_parts();
        let out = Array::new();
        out.push(&Uint8Array::from(parts.header.as_slice()));
        // Each column is freed once copied, so that wasm memory can reuse it for the next.
        for column in parts.columns {
            match column {
                Column::F64(v) => out.push(&Float64Array::from(v.as_slice())),
                Column::U32(v) => out.push(&Uint32Array::from(v.as_slice())),
            };
        }
        out
    }
}
