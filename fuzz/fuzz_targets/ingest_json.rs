//! JSON inputs through format detection: JSON Lines, JSON arrays and every benchmark format
//! (vLLM, SGLang, AIPerf, GenAI-Perf, GuideLLM, LLMPerf), as the app reads a dropped file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::ingest::{self, IngestOptions};

fuzz_target!(|data: &[u8]| {
    let loaded = ingest::parse("fuzz.json", data, &IngestOptions::default());
    slo_fuzz::check_loaded("fuzz.json", &loaded);
});
