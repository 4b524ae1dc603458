//! A load moved between threads (the app's worker and page) comes back as it left: the same
//! requests, the same report, and nothing but an error from damaged bytes.

use slo_core::evaluate::{evaluate, report};
use slo_core::ingest::delimited::{self, Splitter};
use slo_core::ingest::{self, Format, IngestOptions, Loaded};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::transfer::Batch;

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

#[test]
fn a_batch_comes_back_from_its_bytes_unchanged() {
    let batch = load();
    let before = serde_json::to_string(&batch).unwrap();
    let bytes = batch.encode();
    let back = Batch::decode(&bytes).expect("decode");
    // NaN marks absent cells, so compare through JSON (NaN as null) and through the bytes.
    assert_eq!(serde_json::to_string(&back).unwrap(), before);
    assert_eq!(back.table.id(0), "1");
    assert!((0..back.table.len()).any(|r| back.table.id(r) == "r3"));
    assert_eq!(back.clone().encode(), bytes);
    let spec = spec();
    let p = back.prepared.as_ref().expect("prepared");
    let duration = slo_core::evaluate::Duration::known(60.0, "test");
    assert_eq!(
        evaluate(&back.table, p, &spec, &duration),
        report(&back.table, &spec, &duration)
    );
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
    let back = Batch::decode(&batch.clone().encode()).unwrap();
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
    // The browser gave the first file's digest (any text is taken as given) and not the last's.
    batch.fill_sha256(
        &sources,
        &[Some("from-the-browser".to_string()), None, None],
    );
    assert_eq!(
        shas(&batch),
        ["from-the-browser".to_string(), ingest::sha256_hex(&b.1)]
    );
    // A load that computed its digests keeps them.
    let mut own = Batch::load(&sources, &IngestOptions::default(), None, &mut |_, _| {});
    own.fill_sha256(
        &sources,
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

#[test]
fn damaged_bytes_give_an_error_never_a_panic() {
    let bytes = load().encode();
    // About 400 cuts and 400 flips spread over the buffer (header, JSON and columns).
    let step = (bytes.len() / 400).max(1);
    for cut in (0..bytes.len()).step_by(step) {
        assert!(Batch::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = bytes.clone();
    extra.push(0);
    assert!(Batch::decode(&extra).is_err());
    // Flip bytes through the whole buffer: each decode returns, Ok or Err, and an Ok batch is
    // consistent enough to evaluate.
    let spec = spec();
    let duration = slo_core::evaluate::Duration::known(60.0, "test");
    for k in (0..bytes.len()).step_by(step) {
        let mut b = bytes.clone();
        b[k] ^= 0xA5;
        if let Ok(batch) = Batch::decode(&b) {
            let _ = report(&batch.table, &spec, &duration);
        }
    }
    assert!(Batch::decode(b"not a batch").is_err());
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

/// Found in review: a standard deviation that overflowed to infinity (latencies near f64::MAX)
/// came back from the JSON part as null, so the page showed "—" where a load on the page shows
/// the overflow. Such a preparation is not sent: the page prepares the table itself.
#[test]
fn statistics_that_overflowed_did_not_survive_the_trip_to_the_page() {
    let csv = "ttft_ms,e2e_ms,output_tokens\n1e300,1e300,2\n1.5e308,1.5e308,2\n100,200,2\n";
    let batch = Batch::load(
        &[("huge.csv".to_string(), csv.as_bytes().to_vec())],
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    );
    let table = batch.table.clone();
    let back = Batch::decode(&batch.encode()).expect("decode");
    assert!(back.prepared.is_none());
    let duration = slo_core::evaluate::Duration::known(60.0, "test");
    let on_page = report(&back.table, &spec(), &duration);
    assert_eq!(on_page, report(&table, &spec(), &duration));
}

#[test]
fn a_log_without_queue_times_or_gaps_travels_without_those_columns() {
    let batch = Batch::load(
        &[fixture("worked_example.csv")],
        &IngestOptions::default(),
        Some(&spec()),
        &mut |_, _| {},
    );
    let t = &batch.table;
    assert_eq!((t.len(), t.queue_ms.len(), t.start_s.len()), (10, 0, 0));
    assert_eq!(t.itl.offsets, [0]);
    let back = Batch::decode(&batch.clone().encode()).expect("decode");
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&batch).unwrap()
    );
    // A value column neither empty nor one value per request is refused.
    let mut bad = batch;
    bad.table.queue_ms = vec![1.0; 3];
    assert!(Batch::decode(&bad.encode()).is_err());
}
