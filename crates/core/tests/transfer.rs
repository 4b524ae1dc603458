//! A load moved between threads (the app's worker and page) comes back as it left: the same
//! requests, the same report, and nothing but an error from damaged bytes.

use slo_core::evaluate::{evaluate, report};
use slo_core::ingest::delimited::{self, Splitter};
use slo_core::ingest::{self, Format, IngestOptions, Loaded};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::transfer::{report_from_json, report_to_json, Batch, Column, Parts};

fn fixture(path: &str) -> (String, Vec<u8>) {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    let name = path.rsplit('/').next().unwrap_or(path).to_string();
    (name, std::fs::read(&full).expect(&full))
}

fn spec() -> Spec {
    let mut spec = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    });
    spec.bucket_edges = vec![1024];
    let same = spec.classes[0].targets[0];
    spec.classes[0].targets.push(same);
    spec
}

/// A CSV with ids, a label column, ITL lists, statuses, errors and timestamps, so every column
/// kind of the table travels.
const RICH: &str =
    "request_id,tenant,ttft_ms,e2e_ms,output_tokens,input_tokens,itl_ms,status,error,start_time\n\
r1,acme,120,900,20,300,40;41;39,ok,,1700000000\n\
r2,,700,2100,30,2000,50;60,ok,,1700000001\n\
r3,globex,90,,,,,error,upstream 503,1700000002\n\
r4,acme,200,1400,1,50,,ok,,1700000003\n\
r5,acme,abc,1400,1,50,,ok,,1700000004\n";

fn sources() -> Vec<(String, Vec<u8>)> {
    vec![
        fixture("worked_example.csv"),
        fixture("formats/vllm_new.json"),
        ("rich.csv".to_string(), RICH.as_bytes().to_vec()),
        ("empty.csv".to_string(), Vec::new()),
    ]
}

fn load() -> Batch {
    Batch::load(
        &sources(),
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    )
}

#[test]
fn a_batch_holds_what_parsing_each_file_and_combining_gives() {
    let batch = load();
    let parsed: Vec<Loaded> = sources()
        .iter()
        .map(|(n, b)| ingest::parse(n, b, &IngestOptions::default()))
        .collect();
    let readable: Vec<&Loaded> = parsed.iter().filter(|l| l.fatal.is_none()).collect();
    let combined = ingest::combine(&readable);
    assert_eq!(batch.files.len(), 4);
    assert!(batch.files.iter().all(|f| f.table.is_empty()));
    assert_eq!(
        batch
            .files
            .iter()
            .map(|f| &f.provenance)
            .collect::<Vec<_>>(),
        parsed.iter().map(|f| &f.provenance).collect::<Vec<_>>()
    );
    assert!(batch.files[3]
        .fatal
        .as_deref()
        .unwrap_or("")
        .starts_with("empty.csv: "));
    // 10 + 3 (vLLM: 4 requests, 1 failed and kept as a failure) + 4 good rows of rich.csv.
    assert_eq!(batch.table.len(), combined.len());
    let a = serde_json::to_string(&batch.table).unwrap();
    let b = serde_json::to_string(&combined).unwrap();
    assert_eq!(a, b);
    let duration = ingest::run_duration(&readable, &combined, None);
    let from_batch = evaluate(
        &batch.table,
        batch.prepared.as_ref().expect("prepared"),
        &spec(),
        &duration,
    );
    assert_eq!(from_batch, report(&combined, &spec(), &duration));
}

/// Takes `batch` apart and puts it back together, directly and through one buffer; both give
/// the batch back exactly (the same JSON, NaN as null, and the same bits in every column).
fn round_trip(batch: Batch) -> Batch {
    let json = serde_json::to_string(&batch).unwrap();
    let parts = batch.into_parts();
    let bytes = parts.to_bytes();
    let back = Batch::from_parts(parts).expect("from_parts");
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    assert_eq!(back.clone().into_parts().to_bytes(), bytes);
    let again = Batch::from_parts(Parts::from_bytes(&bytes).expect("from_bytes")).expect("again");
    assert_eq!(again.clone().into_parts().to_bytes(), bytes);
    back
}

#[test]
fn a_batch_comes_back_from_its_parts_unchanged() {
    let batch = load();
    // Every kind of column travels: ids, errors, labels, gaps, absent cells, a preparation.
    assert!(batch.table.ttft_ms.iter().any(|v| v.is_nan()));
    assert!(!batch.table.itl.gaps_ms.is_empty());
    let back = round_trip(batch);
    assert_eq!(back.table.id(0), "1");
    assert!((0..back.table.len()).any(|r| back.table.id(r) == "r3"));
    let spec = spec();
    let p = back.prepared.as_ref().expect("prepared");
    let duration = slo_core::evaluate::Duration::known(60.0, "test");
    assert_eq!(
        evaluate(&back.table, p, &spec, &duration),
        report(&back.table, &spec, &duration)
    );
}

#[test]
fn every_bit_of_a_column_travels() {
    // Values that a copy through text or JSON would change: -0, infinities, a NaN with a
    // payload, the largest and smallest numbers.
    let mut batch = Batch::load(
        &[fixture("worked_example.csv")],
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    );
    let odd = [
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(0x7ff8_0000_0000_0001),
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
    ];
    batch.table.ttft_ms[..odd.len()].copy_from_slice(&odd);
    let back = Batch::from_parts(batch.into_parts()).expect("from_parts");
    let bits: Vec<u64> = back.table.ttft_ms.iter().map(|v| v.to_bits()).collect();
    assert_eq!(
        bits[..odd.len()],
        odd.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn columns_of_absent_cells_and_empty_gap_columns_travel() {
    // No ITL lists: the preparation's gap columns are empty, the table's gaps too; no queue
    // times or timestamps: those columns are empty (`RequestTable`: no request has a value).
    let batch = Batch::load(
        &[fixture("worked_example.csv")],
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    );
    let p = batch.prepared.as_ref().expect("prepared");
    assert!(p.itl_stat_ms.is_empty() && p.max_gap_ms.is_empty());
    let t = &batch.table;
    assert_eq!((t.len(), t.queue_ms.len(), t.start_s.len()), (10, 0, 0));
    assert_eq!(t.itl.offsets, [0]);
    // A value column neither empty nor one value per request is refused.
    let mut bad = batch.clone();
    bad.table.queue_ms = vec![1.0; 3];
    assert!(Batch::from_parts(bad.into_parts()).is_err());
    let back = round_trip(batch);
    let p = back.prepared.as_ref().expect("prepared");
    assert!(p.itl_stat_ms.is_empty() && p.max_gap_ms.is_empty());
    let t = &back.table;
    assert_eq!((t.len(), t.queue_ms.len(), t.start_s.len()), (10, 0, 0));
    assert_eq!(t.itl.offsets, [0]);
    assert!(back.table.itl.gaps_ms.is_empty());
    // A batch of nothing at all.
    let empty = round_trip(Batch::default());
    assert!(empty.table.is_empty() && empty.prepared.is_none());
}

#[test]
fn saved_reports_are_set_aside_and_an_invalid_spec_prepares_nothing() {
    let saved = r#"{"format": "slo-workbench-report", "version": 1}"#;
    let mut invalid = spec();
    invalid.objective = 2.0;
    let batch = Batch::load(
        &[
            ("r.json".to_string(), saved.as_bytes().to_vec()),
            fixture("worked_example.csv"),
        ],
        &IngestOptions::default(),
        Some(&invalid),
        &mut |_, _| {},
    );
    assert_eq!(batch.saved, vec![("r.json".to_string(), saved.to_string())]);
    assert_eq!(batch.files.len(), 1);
    assert_eq!(batch.table.len(), 10);
    assert!(batch.prepared.is_none());
    let back = round_trip(batch.clone());
    assert_eq!(back.saved, batch.saved);
    assert!(back.prepared.is_none());
}

#[test]
fn digests_left_to_the_caller_are_filled_in_source_order_past_saved_reports() {
    let saved = r#"{"format": "slo-workbench-report", "version": 1}"#;
    let (a, b) = (
        fixture("worked_example.csv"),
        ("b.csv".to_string(), b"ttft_ms\n5\n".to_vec()),
    );
    let sources = [
        a.clone(),
        ("r.json".to_string(), saved.as_bytes().to_vec()),
        b.clone(),
    ];
    let elsewhere = IngestOptions {
        sha256_elsewhere: true,
        ..IngestOptions::default()
    };
    let mut batch = Batch::load(&sources, &elsewhere, None, &mut |_, _| {});
    let shas = |batch: &Batch| -> Vec<String> {
        batch
            .files
            .iter()
            .map(|f| f.provenance.sha256.clone())
            .collect()
    };
    assert_eq!(shas(&batch), ["", ""]);
    // Known once the bytes are gone: the saved report in the middle is not a file.
    let logs = Batch::logs_of(&sources);
    assert_eq!(logs, [true, false, true]);
    // The browser gave the first file's digest (any text is taken as given) and not the last's:
    // that one stays empty (the caller computes a missing digest while it has the bytes).
    let mut partly = batch.clone();
    partly.fill_sha256(&logs, &[Some("from-the-browser".to_string()), None, None]);
    assert_eq!(shas(&partly), ["from-the-browser", ""]);
    // The third digest goes to the second file, past the saved report's.
    batch.fill_sha256(
        &logs,
        &[
            Some("from-the-browser".to_string()),
            Some("the-saved-report's".to_string()),
            Some(ingest::sha256_hex(&b.1)),
        ],
    );
    assert_eq!(
        shas(&batch),
        ["from-the-browser".to_string(), ingest::sha256_hex(&b.1)]
    );
    // A load that computed its digests keeps them.
    let mut own = Batch::load(&sources, &IngestOptions::default(), None, &mut |_, _| {});
    own.fill_sha256(
        &logs,
        &[
            Some("ignored".to_string()),
            None,
            Some("ignored".to_string()),
        ],
    );
    assert_eq!(
        shas(&own),
        [ingest::sha256_hex(&a.1), ingest::sha256_hex(&b.1)]
    );
}

#[test]
fn progress_rises_from_parsing_to_done() {
    let mut seen: Vec<(String, f64)> = Vec::new();
    Batch::load(
        &sources(),
        &IngestOptions::default(),
        Some(&spec()),
        &mut |phase, f| seen.push((phase.to_string(), f)),
    );
    assert_eq!(
        seen.first().map(|s| s.0.as_str()),
        Some("Parsing worked_example.csv")
    );
    assert_eq!(seen.last(), Some(&("Done".to_string(), 1.0)));
    assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
    assert!(seen.iter().any(|s| s.0.starts_with("Grouping")));
}

/// Whatever `parts` hold, putting them together returns: an error, or a batch consistent enough
/// to evaluate with its own preparation (as the page does) and afresh.
fn survives(parts: Parts) -> Result<(), String> {
    let batch = Batch::from_parts(parts)?;
    let spec = spec();
    let duration = slo_core::evaluate::Duration::known(60.0, "test");
    if let Some(p) = &batch.prepared {
        let _ = evaluate(&batch.table, p, &spec, &duration);
    }
    let _ = report(&batch.table, &spec, &duration);
    Ok(())
}

#[test]
fn missing_extra_or_mistyped_columns_give_an_error() {
    let parts = load().into_parts();
    let n = parts.columns.len();
    assert!(n >= 8, "{n} columns apart");
    assert!(survives(parts.clone()).is_ok());
    let check = |name: &str, change: &dyn Fn(&mut Parts)| {
        let mut p = parts.clone();
        change(&mut p);
        assert!(survives(p).is_err(), "{name}");
    };
    check("no columns", &|p| p.columns.clear());
    check("the last missing", &|p| {
        p.columns.pop();
    });
    check("the first missing", &|p| {
        p.columns.remove(0);
    });
    check("one too many", &|p| p.columns.push(Column::F64(vec![1.0])));
    check("an empty one too many", &|p| {
        p.columns.push(Column::U32(Vec::new()))
    });
    for k in 0..n {
        check(
            &format!("column {k} one value short"),
            &|p| match &mut p.columns[k] {
                Column::F64(v) => drop(v.pop()),
                Column::U32(v) => drop(v.pop()),
            },
        );
        check(
            &format!("column {k} one value long"),
            &|p| match &mut p.columns[k] {
                Column::F64(v) => v.push(0.0),
                Column::U32(v) => v.push(0),
            },
        );
        check(&format!("column {k} of the other type"), &|p| {
            let swapped = match &p.columns[k] {
                Column::F64(v) => Column::U32(vec![0; v.len()]),
                Column::U32(v) => Column::F64(vec![0.0; v.len()]),
            };
            p.columns[k] = swapped;
        });
    }
    check("no header", &|p| p.header.clear());
    check("a header of version 1", &|p| {
        p.header[..21].copy_from_slice(b"SLO-WORKBENCH-BATCH-1");
    });
    check("a byte after the header", &|p| p.header.push(0));
    // Label codes past their dictionary are refused, not looked up.
    let labels = load();
    let codes = labels.table.labels[0].codes.clone();
    let mut p = labels.into_parts();
    let at = p
        .columns
        .iter()
        .position(|c| matches!(c, Column::U32(v) if *v == codes))
        .expect("the label column apart");
    p.columns[at] = Column::U32(vec![7; codes.len()]);
    assert!(survives(p).is_err());
}

#[test]
fn damaged_bytes_give_an_error_never_a_panic() {
    let bytes = load().into_parts().to_bytes();
    // About 400 cuts and 400 flips spread over the buffer (header, JSON and columns).
    let step = (bytes.len() / 400).max(1);
    for cut in (0..bytes.len()).step_by(step) {
        assert!(Parts::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(Parts::from_bytes(&extra).is_err());
    // Flip bytes through the whole buffer: each read returns, Ok or Err, and an Ok batch is
    // consistent enough to evaluate.
    for k in (0..bytes.len()).step_by(step) {
        let mut b = bytes.clone();
        b[k] ^= 0xA5;
        if let Ok(parts) = Parts::from_bytes(&b) {
            let _ = survives(parts);
        }
    }
    // Cuts and flips of the header alone, with the right columns.
    let parts = load().into_parts();
    let step = (parts.header.len() / 400).max(1);
    for k in (0..parts.header.len()).step_by(step) {
        let mut cut = parts.clone();
        cut.header.truncate(k);
        assert!(survives(cut).is_err(), "header cut at {k}");
    }
    for k in (0..parts.header.len()).step_by(step) {
        let mut flipped = parts.clone();
        flipped.header[k] ^= 0xA5;
        let _ = survives(flipped);
    }
    assert!(Parts::from_bytes(b"not a batch").is_err());
    assert!(Batch::from_parts(Parts {
        header: b"not a batch".to_vec(),
        columns: Vec::new(),
    })
    .is_err());
}

/// The fuzz target `transfer` starts from these batches (`fuzz/seeds/transfer`, in the form of
/// `Parts::to_bytes`), so they must be of this version: a seed the target cannot read tests
/// nothing. `SLO_WRITE_SEEDS=1 cargo test -p slo-core --test transfer seeds` writes them afresh.
#[test]
fn the_fuzz_seeds_are_batches_of_this_version() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/transfer");
    let rich = vec![("rich.csv".to_string(), RICH.as_bytes().to_vec())];
    let options = IngestOptions::default();
    let seeds = [
        ("rich.batch", &rich, Some(spec())),
        ("rich_unprepared.batch", &rich, None),
        (
            "worked_example.batch",
            &vec![fixture("worked_example.csv")],
            Some(spec()),
        ),
    ];
    for (name, sources, spec) in seeds {
        let path = dir.join(name);
        if std::env::var_os("SLO_WRITE_SEEDS").is_some() {
            let batch = Batch::load(sources, &options, spec.as_ref(), &mut |_, _| {});
            std::fs::write(&path, batch.into_parts().to_bytes()).expect("seed written");
        }
        let seed = std::fs::read(&path).expect("seed");
        let batch = Parts::from_bytes(&seed).and_then(Batch::from_parts);
        assert!(
            batch.is_ok_and(|b| b.prepared.is_some() == spec.is_some()),
            "{name} is not a batch of this version: SLO_WRITE_SEEDS=1 cargo test -p slo-core --test transfer seeds"
        );
    }
}

#[test]
fn a_large_log_reports_progress_while_it_is_parsed() {
    // 200,000 rows: three reports inside the file (every 65,536 rows), for CSV and JSON Lines.
    let csv: String = std::iter::once("ttft_ms,e2e_ms,output_tokens\n".to_string())
        .chain((0..200_000).map(|i| format!("{},{},11\n", i % 900, 1000 + i % 900)))
        .collect();
    let jsonl: String = (0..200_000)
        .map(|i| {
            format!(
                "{{\"ttft_ms\": {}, \"e2e_ms\": {}}}\n",
                i % 900,
                1000 + i % 900
            )
        })
        .collect();
    // One thread (as in the app's worker): every reader reports three times.
    let one_thread = |name: &str, text: &str, splitter: Option<Splitter>, seen: &mut Vec<f64>| {
        let options = IngestOptions::default();
        let mut progress = |f| seen.push(f);
        match splitter {
            Some(s) => delimited::parse_with(name, text, Format::Csv, &options, s, &mut progress),
            None => ingest::parse_with_progress(name, text.as_bytes(), &options, &mut progress),
        }
    };
    for (name, text, splitter) in [
        ("big.csv", &csv, Some(Splitter::Quoted)),
        ("big.csv", &csv, Some(Splitter::Plain { pieces: 1 })),
        ("big.jsonl", &jsonl, None),
    ] {
        let mut seen = Vec::new();
        let loaded = one_thread(name, text, splitter, &mut seen);
        assert_eq!(loaded.table.len(), 200_000, "{name}");
        assert_eq!(seen.len(), 3, "{name} {splitter:?}: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{name}: {seen:?}");
        // Row 65,536 of 200,000 rows of about equal length is about a third of the way.
        assert!(
            (seen[0] - 65_536.0 / 200_000.0).abs() < 0.02,
            "{name} {splitter:?}: {seen:?}"
        );
    }
    // On several threads, the piece read on the calling thread reports, still in order.
    let mut seen = Vec::new();
    let loaded = ingest::parse_with_progress(
        "big.csv",
        csv.as_bytes(),
        &IngestOptions::default(),
        &mut |f| seen.push(f),
    );
    assert_eq!(loaded.table.len(), 200_000);
    assert!(
        !seen.is_empty() && seen.iter().all(|&f| f > 0.0 && f < 1.0),
        "{seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
}

/// A load of latencies near f64::MAX, whose standard deviations overflow to infinity.
fn overflowing_load() -> Batch {
    let csv = "ttft_ms,e2e_ms,output_tokens\n1e300,1e300,2\n1.5e308,1.5e308,2\n100,200,2\n";
    Batch::load(
        &[("huge.csv".to_string(), csv.as_bytes().to_vec())],
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    )
}

/// Found in review: a standard deviation that overflowed to infinity (latencies near f64::MAX)
/// came back from the JSON part as null, so the page showed "—" where a load on the page shows
/// the overflow. Such a preparation is not sent: the page prepares the table itself.
#[test]
fn statistics_that_overflowed_did_not_survive_the_trip_to_the_page() {
    let batch = overflowing_load();
    let table = batch.table.clone();
    let back = Batch::from_parts(batch.into_parts()).expect("from_parts");
    assert!(back.prepared.is_none());
    let duration = slo_core::evaluate::Duration::known(60.0, "test");
    let on_page = report(&back.table, &spec(), &duration);
    assert_eq!(on_page, report(&table, &spec(), &duration));
}

/// What the page computes once a batch has arrived, written out as src/state.rs does it (the
/// `report` memo over the files `commit` keeps, those without `fatal`): the run's duration
/// from the files that could be read, then `evaluate` with the batch's preparation.
fn report_on_page(back: &Batch, spec: &Spec, typed: Option<f64>) -> slo_core::evaluate::Report {
    let readable: Vec<&Loaded> = back.files.iter().filter(|f| f.fatal.is_none()).collect();
    let duration = ingest::run_duration(&readable, &back.table, typed);
    let prepared = back.prepared.as_ref().expect("prepared");
    evaluate(&back.table, prepared, spec, &duration)
}

#[test]
fn the_loaders_report_is_the_report_the_page_computes_after_the_trip() {
    // The worked example (no timestamps, no stated duration) beside an empty file that cannot be
    // read: the duration comes from the one readable file, as on the page.
    let sources = vec![
        fixture("worked_example.csv"),
        ("empty.csv".to_string(), Vec::new()),
    ];
    let batch = Batch::load(
        &sources,
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    );
    assert!(batch.files.iter().any(|f| f.fatal.is_some()));
    for typed in [None, Some(120.0)] {
        let early = batch.report(&spec(), typed).expect("a report");
        let back = round_trip(batch.clone());
        assert_eq!(early, report_on_page(&back, &spec(), typed));
        assert_eq!(early.duration.seconds, typed);
        // The guide's worked example: 8 of its 10 requests meet both targets.
        assert_eq!(early.overall.attempted, 10);
        assert_eq!(early.overall.good, 8);
        let json = report_to_json(&early).expect("JSON carries it");
        assert_eq!(report_from_json(&json), Ok(early));
    }
    // The same for the richer load: timestamps, ITL, errors, several files.
    let batch = load();
    let early = batch.report(&spec(), None).expect("a report");
    assert_eq!(early, report_on_page(&round_trip(batch), &spec(), None));
}

#[test]
fn no_early_report_where_the_page_would_show_none() {
    let csv = fixture("worked_example.csv");
    let load_with = |sources: Vec<(String, Vec<u8>)>, spec: Option<&Spec>| {
        Batch::load(&sources, &IngestOptions::default(), spec, &mut |_, _| {})
    };
    // Nothing prepared: no spec at load time.
    assert_eq!(
        load_with(vec![csv.clone()], None).report(&spec(), None),
        None
    );
    // Prepared for another grouping than the spec asked about.
    let mut other = spec();
    other.bucket_edges = vec![512];
    assert_eq!(
        load_with(vec![csv.clone()], Some(&spec())).report(&other, None),
        None
    );
    // An invalid spec.
    let mut invalid = spec();
    invalid.objective = 2.0;
    assert_eq!(
        load_with(vec![csv.clone()], Some(&spec())).report(&invalid, None),
        None
    );
    // No requests.
    let empty = load_with(
        vec![("h.csv".to_string(), b"ttft_ms\n".to_vec())],
        Some(&spec()),
    );
    assert_eq!(empty.report(&spec(), None), None);
    // A saved report among the files opens instead.
    let saved = r#"{"format": "slo-workbench-report", "version": 1}"#;
    let with_saved = load_with(
        vec![("r.json".to_string(), saved.as_bytes().to_vec()), csv],
        Some(&spec()),
    );
    assert!(with_saved.prepared.is_some());
    assert_eq!(with_saved.report(&spec(), None), None);
}

#[test]
fn a_report_json_cannot_carry_exactly_is_not_sent() {
    let early = overflowing_load().report(&spec(), None).expect("a report");
    // The standard deviation of TTFT overflowed to infinity, which JSON writes as null.
    assert_eq!(early.overall.indicators[0].stats.std, Some(f64::INFINITY));
    assert_eq!(report_to_json(&early), None);
}

/// One large CSV read by two workers, each holding only its own slice of the file: this one
/// reads the first slice, the other the header and the second slice and sends its part over
/// as parts; the load put together and prepared is the load read whole by one worker, bit for
/// bit, but for the file's digest, which no slice can give (the app fills it in later).
#[test]
fn a_load_read_by_two_workers_is_the_load_read_by_one() {
    let mut text = String::from("class,input_tokens,ttft_ms,e2e_ms,output_tokens,status\n");
    for i in 0..60_000u32 {
        let class = ["chat", "code", "batch"][(i % 3) as usize];
        let row = match i % 1_001 {
            7 => "chat,abc,1,2,3,ok".to_string(),
            _ => format!(
                "{class},{},{}.5,{},{},ok",
                100 + i % 3_000,
                40 + i % 900,
                2_000 + i % 7_000,
                1 + i % 400
            ),
        };
        text.push_str(&row);
        text.push('\n');
    }
    let sources = vec![("big.csv".to_string(), text.into_bytes())];
    let options = IngestOptions::default();
    let spec = spec();
    let mut one = Batch::load(&sources, &options, Some(&spec), &mut |_, _| {});
    assert_eq!(one.files[0].provenance.sha256.len(), 64);
    one.files[0].provenance.sha256.clear();

    let (name, bytes) = &sources[0];
    let size = bytes.len() as u64;
    let slices = ingest::Slices::of(size);
    let first_bytes = &bytes[..slices.first_end as usize];
    let mut last = 0.0;
    let first = Batch::first_slice(name, first_bytes, size, &options, &mut |_, f| last = f);
    let first = first.expect("a large CSV is read in slices");
    assert_eq!(
        last, 0.4,
        "the first slice is half the parse, which is 0.8 of the load"
    );
    let head = &bytes[..slices.head_end as usize];
    let tail = &bytes[slices.middle as usize..];
    let second = ingest::second_slice(name, head, tail, size, &options, &mut |_| {});
    let second = Batch::part_from_parts(Batch::part_into_parts(second.expect("the second slice")))
        .expect("part back");
    let mut two = Batch::read_slices(name, size, &options, first, second).expect("the slices fit");
    two.prepare_for(Some(&spec), &mut |_, _| {});
    assert_eq!(two.table.len(), 60_000 - 60);
    assert_eq!(two.files[0].error_count, 60);
    assert_eq!(two.files[0].provenance.size_bytes, size);
    assert_eq!(
        serde_json::to_string(&two).unwrap(),
        serde_json::to_string(&one).unwrap()
    );

    // Not read in slices: a saved report, a JSON log, and (found in review) a CSV whose first
    // bytes name the saved-report format, which the whole file read sets aside as a saved
    // report.
    let saved = r#"{"format": "slo-workbench-report", "version": 1}"#;
    let jsonl = "{\"ttft_ms\": 1, \"e2e_ms\": 2}\n".repeat(100);
    let look_alike = format!(
        "ttft_ms,e2e_ms,model\n1,2,slo-workbench-report\n{}",
        "1,2,m\n".repeat(1000)
    );
    let whole = Batch::read(
        &[("l.csv".to_string(), look_alike.clone().into_bytes())],
        &options,
        &mut |_, _| {},
    );
    assert_eq!((whole.saved.len(), whole.files.len()), (1, 0));
    for text in [saved, jsonl.as_str(), look_alike.as_str()] {
        let b = text.as_bytes();
        assert!(
            Batch::first_slice("r.json", b, b.len() as u64, &options, &mut |_, _| {}).is_none()
        );
    }
    // A damaged part is an error.
    let part = ingest::second_slice(name, head, tail, size, &options, &mut |_| {}).expect("part");
    let mut parts = Batch::part_into_parts(part);
    parts.columns.pop();
    assert!(Batch::part_from_parts(parts).is_err());
}
