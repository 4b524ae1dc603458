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
    if let Some(sliced) = read_in_slices(data, &options) {
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

/// `data` read in two slices, each reader given only the bytes `Slices` names; `None` where
/// either declines.
fn read_in_slices(data: &[u8], options: &IngestOptions) -> Option<ingest::Loaded> {
    let size = data.len() as u64;
    let s = ingest::Slices::of(size);
    let first_bytes = data.get(..s.first_end as usize)?;
    let first = ingest::first_slice("fuzz.csv", first_bytes, size, options, &mut |_| {})?;
    let head = data.get(..s.head_end as usize)?;
    let tail = data.get(s.middle as usize..)?;
    let second = ingest::second_slice("fuzz.csv", head, tail, size, options, &mut |_| {})?;
    ingest::join_slices("fuzz.csv", size, options, first, second)
}
