//! The SLO document and the YAML/SQL exports: golden files, parse-back, escaping.
//!
//! Goldens live in `tests/golden/`. After an intended change, rewrite them with
//! `UPDATE_GOLDEN=1 cargo test -p slo-core --test document` and review the diff.

use std::path::PathBuf;

use serde::Deserialize;
use slo_core::document::{document, Measured};
use slo_core::evaluate::{report, Duration};
use slo_core::export::{export, openslo, prometheus, sloth, sql, ExportFormat};
use slo_core::ingest::{parse, IngestOptions};
use slo_core::presets::presets;
use slo_core::quantile::Method;
use slo_core::spec::{ClassRule, ClassSpec, Spec, Targets, TtftTarget};

const WORKED_EXAMPLE: &str = include_str!("../../../tests/fixtures/worked_example.csv");

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
        .join(name)
}

/// Compares `got` with the golden file `name`, or writes it when UPDATE_GOLDEN is set.
fn check_golden(name: &str, got: &str) {
    let path = golden_path(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden dir")).expect("create golden dir");
        std::fs::write(&path, got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; write it with UPDATE_GOLDEN=1 cargo test -p slo-core --test document",
            path.display()
        )
    });
    if want != got {
        let line = want
            .lines()
            .zip(got.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
        panic!(
            "{name} differs from its golden at line {}:\n  golden: {:?}\n  got:    {:?}\nIf the change is intended, run UPDATE_GOLDEN=1 cargo test -p slo-core --test document and review the diff.",
            line + 1,
            want.lines().nth(line),
            got.lines().nth(line)
        );
    }
}

/// The guide's worked example: TTFT 500 ms and TPOT 50 ms, 99 % over 28 days of 1,000,000
/// requests; nearest-rank percentiles, by which both p90s pass while only 80 % of requests are good.
fn worked_example_spec() -> Spec {
    let mut spec = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        tpot_ms: Some(50.0),
        ..Targets::default()
    });
    spec.service = "Chat API".to_string();
    spec.classes[0].name = "chat".to_string();
    spec.classes[0].description =
        "Interactive chat, every request (the guide's worked example).".to_string();
    spec.method = Method::NearestRank;
    spec.expected_requests_per_window = Some(1_000_000);
    spec.budget_policy = slo_core::presets::BUDGET_POLICY.to_string();
    spec
}

#[test]
fn document_without_measurements_matches_golden_for_every_preset() {
    for p in presets() {
        let md = document(&p.spec, None);
        assert_eq!(md, document(&p.spec, None), "deterministic");
        check_golden(&format!("document_{}.md", p.id), &md);
    }
}

#[test]
fn document_of_the_worked_example_matches_golden() {
    let spec = worked_example_spec();
    let md = document(&spec, None);
    assert!(md.contains("**10,000 bad requests per window**"), "{md}");
    assert!(md.contains("1 − 0.99 = 0.01"));
    assert!(md.contains("nearest_rank"));
    check_golden("document_worked_example.md", &md);
}

#[test]
fn document_with_measured_worked_example_matches_golden() {
    let spec = worked_example_spec();
    let loaded = parse(
        "worked_example.csv",
        WORKED_EXAMPLE.as_bytes(),
        &IngestOptions::default(),
    );
    assert_eq!(loaded.table.len(), 10);
    let r = report(
        &loaded.table,
        &spec,
        &Duration::known(10.0, "given by the user"),
    );
    let files = [loaded.provenance.clone()];
    let md = document(
        &spec,
        Some(&Measured {
            report: &r,
            files: &files,
        }),
    );
    // The answer first, then the trap the guide warns about, then the data's fingerprint.
    assert!(md.contains("**80 % of 10 attempted requests met every target**"));
    assert!(md.contains("p90 TTFT and p90 TPOT both pass, yet only 80 %"));
    assert!(md.contains("only 10 attempted requests"));
    assert!(md.contains("0.8 req/s"));
    assert!(md.contains(&loaded.provenance.sha256));
    assert!(md.contains("| worked\\_example.csv |"));
    assert_tables_are_rectangular(&md);
    check_golden("document_worked_example_measured.md", &md);
}

#[test]
fn exports_match_goldens_for_every_preset() {
    for p in presets() {
        for f in ExportFormat::ALL {
            let text = export(&p.spec, f, "requests");
            check_golden(&format!("{}_{}.{}", f.name(), p.id, f.extension()), &text);
        }
    }
}

/// Every YAML document in `text`.
fn yaml_docs(text: &str) -> Vec<serde_yaml::Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde_yaml::Value::deserialize(d).expect("valid YAML"))
        .collect()
}

fn get<'a>(v: &'a serde_yaml::Value, path: &[&str]) -> &'a serde_yaml::Value {
    path.iter().fold(v, |v, k| &v[*k])
}

#[test]
fn yaml_exports_parse_back_and_carry_the_objective() {
    for p in presets() {
        let docs = yaml_docs(&openslo(&p.spec));
        assert_eq!(docs.len(), p.spec.classes.len() + 1, "{}", p.id);
        assert_eq!(get(&docs[0], &["kind"]).as_str(), Some("Service"));
        for (doc, class) in docs[1..].iter().zip(&p.spec.classes) {
            assert_eq!(get(doc, &["apiVersion"]).as_str(), Some("openslo/v1"));
            assert_eq!(get(doc, &["kind"]).as_str(), Some("SLO"));
            let target = get(doc, &["spec", "objectives"])[0]["target"].as_f64();
            assert_eq!(target, Some(p.spec.objective), "{}", p.id);
            assert_eq!(
                get(doc, &["spec", "budgetingMethod"]).as_str(),
                Some("Occurrences")
            );
            let query = get(
                doc,
                &[
                    "spec",
                    "indicator",
                    "spec",
                    "ratioMetric",
                    "good",
                    "metricSource",
                    "spec",
                    "query",
                ],
            )
            .as_str()
            .expect("query");
            assert!(
                query.contains(&format!("class=\"{}\"", class.name)),
                "{query}"
            );
        }

        let docs = yaml_docs(&sloth(&p.spec));
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0]["version"].as_str(), Some("prometheus/v1"));
        let slos = docs[0]["slos"].as_sequence().expect("slos");
        assert_eq!(slos.len(), p.spec.classes.len());
        for slo in slos {
            assert_eq!(slo["objective"].as_f64(), Some(99.0), "{}", p.id);
            assert!(slo["sli"]["events"]["error_query"]
                .as_str()
                .expect("error query")
                .contains("[{{.window}}]"));
        }

        let docs = yaml_docs(&prometheus(&p.spec));
        assert_eq!(docs.len(), 1);
        let groups = docs[0]["groups"].as_sequence().expect("groups");
        assert_eq!(groups.len(), 2, "{}: recording and alerts", p.id);
        let alerts = groups[1]["rules"].as_sequence().expect("alert rules");
        assert!(!alerts.is_empty());
        for a in alerts {
            let expr = a["expr"].as_str().expect("expr");
            // The budget (1 - objective) is in every alert condition.
            assert!(expr.contains("* 0.01)"), "{expr}");
            assert!(["page", "ticket"].contains(&a["labels"]["severity"].as_str().expect("sev")));
        }
    }
}

#[test]
fn prometheus_rules_follow_the_sre_workbook_and_vllm_buckets() {
    let chat = presets()
        .into_iter()
        .find(|p| p.id == "chat")
        .expect("chat");
    let y = prometheus(&chat.spec);
    for needle in [
        "vllm:time_to_first_token_seconds_bucket{le=\"0.5\"}[5m]",
        "vllm:time_to_first_token_seconds_count[3d]",
        "vllm:request_time_per_output_token_seconds_bucket{le=\"0.05\"}",
        "llm_slo:ttft_miss:ratio_rate1h{slo_service=\"Chat assistant\", threshold_seconds=\"10\"} > (14.4 * 0.01)",
        "llm_slo:ttft_miss:ratio_rate30m{slo_service=\"Chat assistant\", threshold_seconds=\"10\"} > (6 * 0.01)",
        "llm_slo:ttft_miss:ratio_rate6h{slo_service=\"Chat assistant\", threshold_seconds=\"10\"} > (1 * 0.01)",
        // The batch class's 600 s E2E target is not a default edge of vLLM's E2E histogram.
        "WARNING: 600 s is not one of vLLM's default bucket edges",
        "960.0, 1920.0, 7680.0]",
        "per-request check belongs",
    ] {
        assert!(y.contains(needle), "missing {needle:?} in\n{y}");
    }
    // 600 s is read at the edge below it, 480 s.
    assert!(y.contains("vllm:e2e_request_latency_seconds_bucket{le=\"480.0\"}[5m]"));

    let long = presets()
        .into_iter()
        .find(|p| p.id == "long")
        .expect("long");
    let y = prometheus(&long.spec);
    assert!(y.contains("cannot be"), "per-token TTFT is called out");
    assert!(
        !y.contains("vllm:inter_token_latency_seconds"),
        "no rules for an indicator without targets"
    );
}

/// A spec whose every name is hostile.
fn hostile_spec() -> Spec {
    let mut spec = Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
        ..Targets::default()
    });
    spec.service = "</script>".to_string();
    spec.classes[0].name = "<img src=x onerror=alert(1)>".to_string();
    spec.classes[0].description =
        "a | b\n# heading\n`tick` [link](javascript:alert(1))".to_string();
    spec.classes.insert(
        0,
        ClassSpec {
            name: "O'Brien \"quoted\"\nnext: line # not a comment".to_string(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".to_string(),
                value: "x'); DROP TABLE requests; --".to_string(),
            },
            targets: vec![Targets {
                e2e_ms: Some(1000.0),
                ..Targets::default()
            }],
        },
    );
    spec.budget_policy = "<b>bold</b>\n\n- not a list".to_string();
    assert!(spec.validate().is_empty(), "{:?}", spec.validate());
    spec
}

#[test]
fn hostile_names_are_inert_in_the_document() {
    let spec = hostile_spec();
    let md = document(&spec, None);
    for raw in ["<img", "</script", "<b>", "\n# heading", "[link]", "`tick`"] {
        assert!(!md.contains(raw), "raw {raw:?} in\n{md}");
    }
    assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(md.contains("# SLO: &lt;/script&gt;\n"));
    assert!(md.contains("&lt;b&gt;bold&lt;/b&gt;"));
    assert!(md.contains("\\- not a list"));
    assert_tables_are_rectangular(&md);
}

/// Cell separators in a Markdown table row: `|` not escaped with a backslash.
fn separators(row: &str) -> usize {
    let mut n = 0;
    let mut escaped = false;
    for c in row.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '|' if !escaped => n += 1,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    n
}

/// Every row of every table has as many cells as its header: no user "|" or line break got through.
fn assert_tables_are_rectangular(md: &str) {
    let mut header: Option<usize> = None;
    for line in md.lines() {
        if line.starts_with('|') {
            let n = separators(line);
            match header {
                None => header = Some(n),
                Some(h) => assert_eq!(n, h, "row with a different cell count: {line}"),
            }
        } else {
            header = None;
        }
    }
}

#[test]
fn hostile_names_are_quoted_in_yaml_and_sql() {
    let spec = hostile_spec();
    let img = "<img src=x onerror=alert(1)>";
    let docs = yaml_docs(&openslo(&spec));
    assert_eq!(
        docs[0]["metadata"]["displayName"].as_str(),
        Some("</script>")
    );
    assert_eq!(
        docs[2]["metadata"]["displayName"].as_str(),
        Some(format!("</script>: {img}").as_str())
    );
    let query = docs[2]["spec"]["indicator"]["spec"]["ratioMetric"]["total"]["metricSource"]
        ["spec"]["query"]
        .as_str()
        .expect("query");
    assert_eq!(
        query,
        format!("sum(llm_slo_requests_attempted_total{{service=\"</script>\", class=\"{img}\"}})")
    );
    let docs = yaml_docs(&sloth(&spec));
    assert_eq!(
        docs[0]["slos"][0]["labels"]["slo_class"].as_str(),
        Some("O'Brien \"quoted\"\nnext: line # not a comment")
    );
    let docs = yaml_docs(&prometheus(&spec));
    assert_eq!(
        docs[0]["groups"][0]["rules"][0]["labels"]["slo_service"].as_str(),
        Some("</script>")
    );

    let q = sql(&spec, "my \"requests\"");
    assert!(q.contains("'x''); DROP TABLE requests; --'"), "{q}");
    assert!(q.contains(&format!("'{img}'")));
    assert!(q.contains("'O''Brien \"quoted\"\nnext: line # not a comment'"));
    assert!(q.contains("FROM \"my \"\"requests\"\"\" AS r"));
    // A line break in the service name cannot end a comment and start a statement.
    let mut evil = spec.clone();
    evil.service = "evil\nDROP TABLE requests; --".to_string();
    for line in sql(&evil, "requests").lines() {
        if line.contains("DROP TABLE") {
            assert!(
                line.starts_with("-- ") || line.contains("'x''); DROP TABLE requests; --'"),
                "{line}"
            );
        }
    }
}
