//! Result files of benchmark tools: vLLM, SGLang, AIPerf, GenAI-Perf, GuideLLM and LLMPerf.
//!
//! Each tool has its own module; they share the JSON helpers in `json`. Every parser turns the
//! tool's per-request records into [`Row`](crate::table::Row)s in our units (durations in ms,
//! timestamps in s), fills [`RunMeta`](super::RunMeta) with what the file says about the run, and
//! reports each bad value with its JSON path (`$.ttfts[17]`). A file that cannot give rows (a
//! summary without per-request data, truncated JSON) is one sentence in `fatal`.
//! docs/formats.md has the field-by-field mapping and where each tool's meaning differs from ours.
//!
//! - `detect`: which format a JSON text is, from the keys in its first 64 KB.
//! - `vllm`: vLLM `bench serve` results and SGLang `bench_serving` output (parallel arrays).
//! - `aiperf`: AIPerf `profile_export.jsonl` (one record per request).
//! - `genai_perf`: GenAI-Perf `profile_export.json` (request and response timestamps in ns).
//! - `guidellm`: GuideLLM `benchmarks.json` (requests by status).
//! - `llmperf`: LLMPerf `*_individual_responses.json`.

mod aiperf;
mod detect;
mod genai_perf;
mod guidellm;
mod json;
mod llmperf;
mod vllm;

use super::{Format, IngestOptions, Loaded};

/// Tells the JSON formats apart by their keys, looking only at the first 64 KB.
///
/// # Example
/// ```
/// use slo_core::ingest::{bench::detect_json, Format};
/// assert_eq!(detect_json(r#"{"date": "20250101-000000", "model_id": "m", "ttfts": [0.1]}"#), Format::Vllm);
/// assert_eq!(detect_json(r#"{"ttft_ms": 120, "e2e_ms": 900}"#), Format::JsonLines);
/// assert_eq!(detect_json(r#"[{"ttft_ms": 120}]"#), Format::JsonArray);
/// ```
pub fn detect_json(text: &str) -> Format {
    detect::detect(text)
}

/// Reads a benchmark result file of `format`. The units of each tool are fixed, so `options`
/// (the column mapping of generic logs) does not apply.
///
/// # Example
/// ```
/// use slo_core::ingest::{bench::parse, Format};
/// let text = r#"{"duration": 2.0, "completed": 1, "failed": 1, "request_rate": "inf",
///   "ttfts": [0.25, 0.0], "itls": [[0.05, 0.05], []], "input_lens": [10, 10],
///   "output_lens": [3, 0], "errors": ["", "Bad Gateway"]}"#;
/// let loaded = parse("run.json", text, Format::Vllm, &Default::default());
/// assert_eq!(loaded.table.ttft_ms(0), Some(250.0));
/// assert_eq!(loaded.table.e2e_ms(0), Some(350.0)); // rebuilt: 0.25 s + 0.05 s + 0.05 s
/// assert_eq!(loaded.table.ttft_ms(1), None); // a failed request, not a fast one
/// assert!(loaded.meta.e2e_reconstructed);
/// ```
pub fn parse(name: &str, text: &str, format: Format, options: &IngestOptions) -> Loaded {
    let _ = options;
    let text = &json::Source::new(text);
    let mut loaded = match format {
        Format::Vllm => vllm::parse(name, text, vllm::Tool::Vllm),
        Format::Sglang => vllm::parse(name, text, vllm::Tool::Sglang),
        Format::Aiperf => aiperf::parse(name, text),
        Format::GenaiPerf => genai_perf::parse(name, text),
        Format::Guidellm => guidellm::parse(name, text),
        Format::Llmperf => llmperf::parse(name, text),
        Format::Csv | Format::Tsv | Format::JsonLines | Format::JsonArray => Loaded {
            fatal: Some(format!(
                "{name}: a {} is not a benchmark result file",
                format.describe()
            )),
            ..Loaded::default()
        },
    };
    if loaded.fatal.is_some() {
        loaded.table = Default::default();
    } else if loaded.table.is_empty() && loaded.error_count == 0 {
        loaded.fatal = Some(format!(
            "{name}: this {} holds no requests",
            format.describe()
        ));
    }
    loaded
}
