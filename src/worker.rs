//! The loader thread's entry point: www/worker.js calls [`worker_load`] with the bytes of every
//! source. The page's side is `loader.rs`; what is computed is `slo_core::transfer::Batch::load`.

use js_sys::{Array, Function, Uint8Array};
use slo_core::ingest::IngestOptions;
use slo_core::spec::Spec;
use slo_core::transfer::Batch;
use wasm_bindgen::prelude::*;

/// True when this wasm runs in a worker rather than in the page.
pub fn in_worker() -> bool {
    web_sys::window().is_none()
}

/// Parses `buffers` (one `Uint8Array` per name), combines them and prepares the result for
/// `spec_json`; returns `Batch::encode`'s bytes. `progress(phase, fraction)` is called as it goes.
/// An unreadable spec only means nothing is prepared (the page prepares it when it can).
#[wasm_bindgen]
pub fn worker_load(
    names: Array,
    buffers: Array,
    options_json: &str,
    spec_json: &str,
    progress: &Function,
) -> Result<Uint8Array, JsValue> {
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
    // The sources are no longer needed: free them before the encoded copy is made.
    drop(sources);
    Ok(Uint8Array::from(batch.encode().as_slice()))
}
