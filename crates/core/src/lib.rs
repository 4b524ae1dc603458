//! slo-core: the SLO Workbench engine.
//!
//! Text or bytes in, plain structs out. No IO, no web, no globals: the app, the CLI and the JS
//! API are thin layers over these functions, so every number is computed here, once.
//!
//! - [`table`]: the columnar request table every parser produces.
//! - [`ingest`]: parsers for request logs and benchmark result files.
//! - [`spec`]: the SLO definition (classes, buckets, targets, policies).
//! - [`evaluate`]: joint attainment, percentiles, goodput, failure decomposition.
//! - [`quantile`], [`stats`]: percentile methods and intervals.
//! - [`transfer`]: one load of files, and its byte form for the app's worker.
//! - `order` (private): stable sorts of small lists, through one copy of the sort.
//! - [`parallel`]: work spread over the cores where there are threads (not in WebAssembly);
//!   long loops a block per call.

pub mod budget;
pub mod compare;
pub mod document;
pub mod evaluate;
pub mod export;
pub mod ingest;
mod order;
pub mod parallel;
pub mod presets;
pub mod prometheus;
pub mod quantile;
pub mod saved;
pub mod spec;
pub mod stats;
pub mod sweep;
pub mod table;
pub mod transfer;

/// Helpers for the engine's own tests.
#[cfg(test)]
pub(crate) mod testing {
    /// A fixed pseudo-random sequence (xorshift64) from `seed`, for test data that is the same
    /// on every run.
    pub fn sequence(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }
}
