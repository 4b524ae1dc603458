//! The SLO Workbench engine for JavaScript: `pkg/slo.js` (ES module) and `pkg/node/slo.js`.
//!
//! Every function takes and returns plain JS objects (serde-wasm-bindgen). The shapes are the
//! core's serde shapes, documented in docs/js-api.md: a public contract.

use serde::{Deserialize, Serialize};
use slo_core::evaluate::{report as evaluate_report, Report};
use slo_core::ingest::{self, IngestOptions, Loaded, Provenance, RowError};
use slo_core::spec::Spec;
use slo_core::sweep;
use wasm_bindgen::prelude::*;

/// One input file: a name for messages and its text.
#[derive(Deserialize)]
struct LogInput {
    name: String,
    text: String,
}

#[derive(Deserialize, Default)]
struct Options {
    /// Run duration in seconds, for goodput.
    #[serde(default)]
    duration_s: Option<f64>,
    #[serde(default)]
    ingest: IngestOptions,
}

#[derive(Serialize)]
struct FileResult {
    provenance: Provenance,
    errors: Vec<RowError>,
    error_count: u64,
    warnings: Vec<String>,
    fatal: Option<String>,
}

#[derive(Serialize)]
struct ReportResult {
    report: Option<Report>,
    files: Vec<FileResult>,
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let serializer = serde_wasm_bindgen::Serializer::new()
        .serialize_maps_as_objects(true)
        .serialize_missing_as_null(true);
    value
        .serialize(&serializer)
        .map_err(|e| JsValue::from_str(&e.to_string()))
}

fn from_js<T: for<'de> Deserialize<'de>>(value: JsValue, what: &str) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(value).map_err(|e| JsValue::from_str(&format!("{what}: {e}")))
}

fn spec_from(spec: JsValue) -> Result<Spec, JsValue> {
    if spec.is_undefined() || spec.is_null() {
        return Ok(Spec::default());
    }
    // Through JSON so that validation messages are the same as the CLI's.
    let json =
        js_sys::JSON::stringify(&spec).map_err(|_| JsValue::from_str("spec: not serialisable"))?;
    let text = json.as_string().unwrap_or_default();
    Spec::from_json(&text).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        JsValue::from_str(&format!("spec is not valid: {}", lines.join("; ")))
    })
}

fn load(logs: JsValue, options: &IngestOptions) -> Result<Vec<Loaded>, JsValue> {
    let inputs: Vec<LogInput> = from_js(logs, "logs must be an array of {name, text}")?;
    Ok(inputs
        .iter()
        .map(|l| ingest::parse(&l.name, l.text.as_bytes(), options))
        .collect())
}

/// Evaluates request logs against a spec.
///
/// `logs`: `[{name, text}]`; `spec`: a spec object (`version: 1`, see docs/spec.md) or undefined
/// for one class with no targets; `options`: `{duration_s?, ingest?}`.
/// Returns `{report, files}`: `report` is null when no file could be read.
#[wasm_bindgen]
pub fn report(logs: JsValue, spec: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let options: Options = if options.is_undefined() || options.is_null() {
        Options::default()
    } else {
        from_js(options, "options")?
    };
    let spec = spec_from(spec)?;
    let loaded = load(logs, &options.ingest.clone().reading_rule_columns(&spec))?;
    let good: Vec<&Loaded> = loaded.iter().filter(|l| l.fatal.is_none()).collect();
    let report = (!good.is_empty()).then(|| {
        let table = ingest::combine(&good);
        let duration = ingest::run_duration(&good, &table, options.duration_s);
        evaluate_report(&table, &spec, &duration)
    });
    let files = loaded
        .into_iter()
        .map(|l| FileResult {
            provenance: l.provenance,
            errors: l.errors,
            error_count: l.error_count,
            warnings: l.warnings,
            fatal: l.fatal,
        })
        .collect();
    to_js(&ReportResult { report, files })
}

/// One file of a sweep: a name, its text and, optionally, its offered rate in req/s.
#[derive(Deserialize)]
struct SweepFileInput {
    name: String,
    text: String,
    #[serde(default)]
    rate: Option<f64>,
}

/// Capacity from a load sweep: one result file per offered rate.
///
/// `files`: `[{name, text, rate?}]` (`rate` when given, as a typed rate; else the file's own
/// rate, else its name's);
/// `spec` as for `report`. Returns the sweep report (curves, capacity, lints), or throws a
/// sentence naming every file whose rate is unknown or that could not be read.
#[wasm_bindgen]
pub fn sweep(files: JsValue, spec: JsValue) -> Result<JsValue, JsValue> {
    let spec = spec_from(spec)?;
    let inputs: Vec<SweepFileInput> =
        from_js(files, "files must be an array of {name, text, rate?}")?;
    let options = IngestOptions::default().reading_rule_columns(&spec);
    let mut problems = Vec::new();
    let mut points = Vec::new();
    for f in inputs {
        let loaded = ingest::parse(&f.name, f.text.as_bytes(), &options);
        if let Some(fatal) = &loaded.fatal {
            problems.push(fatal.clone());
            continue;
        }
        points.push(sweep::SweepInput {
            loaded,
            rate_override: f.rate.map(ingest::RequestRate::PerSecond),
        });
    }
    let points = sweep::sweep_points(points).map_err(|errors| {
        problems.extend(errors.iter().map(|e| e.to_string()));
        JsValue::from_str(&problems.join("; "))
    })?;
    if !problems.is_empty() {
        return Err(JsValue::from_str(&problems.join("; ")));
    }
    to_js(&sweep::sweep(&points, &spec))
}

/// The written SLO document (Markdown) for `spec`; with `result` (what `report` returned) it adds
/// the measured section.
#[wasm_bindgen]
pub fn document(spec: JsValue, result: JsValue) -> Result<String, JsValue> {
    let spec = spec_from(spec)?;
    if result.is_undefined() || result.is_null() {
        return Ok(slo_core::document::document(&spec, None));
    }
    let result: ReportResultIn = from_js(result, "result must be what report() returned")?;
    let files: Vec<Provenance> = result.files.into_iter().map(|f| f.provenance).collect();
    Ok(match &result.report {
        Some(r) => slo_core::document::document(
            &spec,
            Some(&slo_core::document::Measured {
                report: r,
                files: &files,
            }),
        ),
        None => slo_core::document::document(&spec, None),
    })
}

#[derive(Deserialize)]
struct FileIn {
    provenance: Provenance,
}

#[derive(Deserialize)]
struct ReportResultIn {
    report: Option<Report>,
    files: Vec<FileIn>,
}

/// Parses and validates a spec; returns it with defaults filled in, or throws the problems.
#[wasm_bindgen(js_name = validateSpec)]
pub fn validate_spec(spec: JsValue) -> Result<JsValue, JsValue> {
    to_js(&spec_from(spec)?)
}

/// The engine's version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
