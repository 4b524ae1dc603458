//! CSV/TSV request logs: any bytes, read as a delimited log (the delimiter is still detected).
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::ingest::{self, Format, IngestOptions};

fuzz_target!(|data: &[u8]| {
    let options = IngestOptions {
        format: Some(Format::Csv),
        ..IngestOptions::default()
    };
    let loaded = ingest::parse("fuzz.csv", data, &options);
    slo_fuzz::check_loaded("fuzz.csv", &loaded);
});
