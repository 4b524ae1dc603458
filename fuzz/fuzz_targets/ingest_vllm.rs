//! vLLM result files, the format forced (as `--format vllm` or the format picker does).
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::ingest::{self, Format, IngestOptions};

fuzz_target!(|data: &[u8]| {
    let options = IngestOptions {
        format: Some(Format::Vllm),
        ..IngestOptions::default()
    };
    let loaded = ingest::parse("fuzz.json", data, &options);
    slo_fuzz::check_loaded("fuzz.json", &loaded);
});
