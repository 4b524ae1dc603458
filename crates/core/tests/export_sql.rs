//! The SQL export, run for real: DuckDB (through tests/reference/run_sql.py) and slo-core's engine
//! must count the same attempted, good and excluded requests in every class × bucket cell.
//!
//! Needs python3 with the duckdb package (scripts/setup.sh installs it). Goldens: the SQL and the
//! DuckDB result, in tests/golden/; rewrite them with
//! `UPDATE_GOLDEN=1 cargo test -p slo-core --test export_sql` and review the diff.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use slo_core::evaluate::{report, Duration};
use slo_core::export::sql;
use slo_core::ingest::fields::MappedColumn;
use slo_core::ingest::{parse, ColumnMapping, Field, IngestOptions, TimeUnit};
use slo_core::spec::{ClassRule, ClassSpec, Spec, Targets, TtftTarget};

const FIXTURE: &str = "tests/fixtures/sql_requests.csv";

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn workspace_root() -> PathBuf {
    manifest_dir().join("..").join("..")
}

fn check_golden(name: &str, got: &str) {
    let path = manifest_dir().join("tests").join("golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("create golden dir");
        std::fs::write(&path, got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with UPDATE_GOLDEN=1 cargo test -p slo-core --test export_sql",
            path.display()
        )
    });
    assert!(
        want == got,
        "{name} differs from its golden; if the change is intended, run UPDATE_GOLDEN=1 cargo test -p slo-core --test export_sql and review the diff.\n--- got ---\n{got}"
    );
}

/// Two classes (chat by rule, batch by default), two buckets (<2k, >=2k), every indicator, a
/// per-token TTFT target and a cell without a TTFT target.
fn spec() -> Spec {
    let mut spec = Spec::single(Targets::default());
    spec.service = "SQL check".to_string();
    spec.bucket_edges = vec![2000];
    spec.classes = vec![
        ClassSpec {
            name: "chat".to_string(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".to_string(),
                value: "chat".to_string(),
            },
            targets: vec![
                Targets {
                    ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
                    tpot_ms: Some(50.0),
                    itl_ms: Some(200.0),
                    ..Targets::default()
                },
                Targets {
                    ttft: Some(TtftTarget::PerToken {
                        base_ms: 200.0,
                        per_token_ms: 0.1,
                    }),
                    tpot_ms: Some(50.0),
                    itl_ms: Some(200.0),
                    ..Targets::default()
                },
            ],
        },
        ClassSpec {
            name: "batch".to_string(),
            description: String::new(),
            rule: ClassRule::Default,
            targets: vec![
                Targets {
                    ttft: Some(TtftTarget::Fixed { ms: 5000.0 }),
                    e2e_ms: Some(20000.0),
                    queue_ms: Some(1000.0),
                    ..Targets::default()
                },
                Targets {
                    e2e_ms: Some(30000.0),
                    ..Targets::default()
                },
            ],
        },
    ];
    assert!(spec.validate().is_empty(), "{:?}", spec.validate());
    spec
}

/// (attempted, good, excluded) per (class, bucket).
type Counts = BTreeMap<(String, String), (u64, u64, u64)>;

/// Runs `query` in DuckDB over the fixture; the rows as JSON. Fails (never skips) when python3
/// or duckdb is missing.
fn duckdb(query: &str, table: &str) -> serde_json::Value {
    let root = workspace_root();
    let script = root.join("tests/reference/run_sql.py");
    let csv = manifest_dir().join(FIXTURE);
    let mut child = Command::new("python3")
        .arg(&script)
        .arg("--csv")
        .arg(&csv)
        .arg("--table")
        .arg(table)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): this test needs python3 with duckdb; run scripts/setup.sh")
        });
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(query.as_bytes())
        .expect("write the query");
    let out = child.wait_with_output().expect("wait for run_sql.py");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {}
        Some(3) => panic!("{stderr}\nthis test needs duckdb: run scripts/setup.sh"),
        _ => panic!("run_sql.py failed ({}): {stderr}", out.status),
    }
    serde_json::from_slice(&out.stdout).expect("run_sql.py prints JSON")
}

fn duckdb_counts(rows: &serde_json::Value) -> Counts {
    rows.as_array()
        .expect("an array of rows")
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().expect(k).to_string();
            let n = |k: &str| r[k].as_u64().expect(k);
            (
                (s("class"), s("bucket")),
                (n("attempted"), n("good"), n("excluded")),
            )
        })
        .collect()
}

fn engine_counts(spec: &Spec) -> Counts {
    let bytes = std::fs::read(manifest_dir().join(FIXTURE)).expect("read the fixture");
    // The export's itl_max_ms column is each request's largest gap: read it as a one-gap list,
    // whose max is itself.
    let options = IngestOptions {
        mapping: ColumnMapping {
            columns: vec![MappedColumn {
                header: "itl_max_ms".to_string(),
                field: Field::Itl,
                unit: Some(TimeUnit::Ms),
            }],
        },
        ..IngestOptions::default()
    };
    let loaded = parse("sql_requests.csv", &bytes, &options);
    assert_eq!(loaded.error_count, 0, "{:?}", loaded.errors);
    assert_eq!(loaded.table.len(), 38);
    let r = report(&loaded.table, spec, &Duration::unknown("not needed"));
    r.cells
        .iter()
        .map(|c| {
            (
                (
                    c.class.clone().expect("cell class"),
                    c.bucket.clone().expect("cell bucket"),
                ),
                (c.attempted, c.good, c.excluded),
            )
        })
        .collect()
}

#[test]
fn sql_export_in_duckdb_counts_like_the_engine() {
    let spec = spec();
    let query = sql(&spec, "requests");
    check_golden("sql_requests.sql", &query);
    let rows = duckdb(&query, "requests");
    let mut json = serde_json::to_string_pretty(&rows).expect("JSON");
    json.push('\n');
    check_golden("sql_requests_duckdb.json", &json);

    let engine = engine_counts(&spec);
    let db = duckdb_counts(&rows);
    assert_eq!(db, engine, "DuckDB (left) and the engine (right) disagree");
    // The fixture exercises what it is meant to: every cell kind, exclusions, unknown lengths.
    assert_eq!(engine.len(), 6, "{engine:?}");
    let total = |f: fn(&(u64, u64, u64)) -> u64| engine.values().map(f).sum::<u64>();
    assert_eq!(total(|c| c.0), 34, "attempted");
    assert_eq!(total(|c| c.1), 14, "good");
    assert_eq!(total(|c| c.2), 4, "excluded");
    assert_eq!(
        engine.get(&("chat".to_string(), "unknown length".to_string())),
        Some(&(1, 1, 0))
    );
}

#[test]
fn hostile_names_run_safely_in_duckdb() {
    let mut spec = spec();
    spec.service = "evil\n; DROP TABLE requests; --".to_string();
    spec.classes[0].name = "<img src=x onerror=alert(1)>".to_string();
    spec.classes[0].rule = ClassRule::Equals {
        column: "class".to_string(),
        value: "x'); DROP TABLE requests; --".to_string(),
    };
    spec.classes[1].name = "O'Brien \"q\"".to_string();
    let table = "my \"requests\"; --";
    let rows = duckdb(&sql(&spec, table), table);
    let db = duckdb_counts(&rows);
    // Nothing matches the hostile rule, so every request is in the default class.
    let img = "<img src=x onerror=alert(1)>".to_string();
    assert_eq!(db.get(&(img, "<2k".to_string())), Some(&(0, 0, 0)));
    let batch: u64 = db
        .iter()
        .filter(|((c, _), _)| c == "O'Brien \"q\"")
        .map(|(_, v)| v.0 + v.2)
        .sum();
    assert_eq!(batch, 38, "every request counted once in the default class");
}
