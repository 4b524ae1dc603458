//! CSV/TSV request logs: any bytes, read as a delimited log (the delimiter is still detected).
//! Also: the `csv` crate's reader and our own splitter (in one piece and in several) must give
//! the same result on every text, and so must the file read in two slices by two readers that
//! each hold only their own bytes (`ingest::Slices`), wherever they do not decline.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::ingest::delimited::{self, Splitter};
use slo_core::ingest::{self, Format, IngestOptions};

fuzz_target!(|data: &[u8]| {
    let options = IngestOptions {
        format: Some(Format::Csv),
        ..IngestOptions::default()
    };
    let loaded = ingest::parse("fuzz.csv", data, &options);
    slo_fuzz::check_loaded("fuzz.csv", &loaded);
    if let Some(sliced) = ingest::parse_in_slices("fuzz.csv", data, &options) {
        let whole = ingest::parse(
            "fuzz.csv",
            data,
            &IngestOptions {
                sha256_elsewhere: true,
                ..options.clone()
            },
        );
        assert_eq!(format!("{sliced:?}"), format!("{whole:?}"), "read in slices");
    }

    let Ok(text) = ingest::decode_text(data, &mut Vec::new()) else {
        return;
    };
    let read = |splitter| {
        let loaded = delimited::parse_with(
            "fuzz.csv",
            &text,
            Format::Csv,
            &options,
            splitter,
            &mut |_| {},
        );
        // Debug text: NaN ("absent") is not equal to itself.
        format!("{loaded:?}")
    };
    let quoted = read(Splitter::Quoted);
    for pieces in [1, 3] {
        assert_eq!(read(Splitter::Plain { pieces }), quoted, "{pieces} pieces");
    }
});

