//! Result files of benchmark tools. (Being written: vLLM, SGLang, AIPerf, GenAI-Perf, GuideLLM, LLMPerf.)

use super::{Format, IngestOptions, Loaded};

/// Tells the JSON formats apart by their keys.
pub fn detect_json(text: &str) -> Format {
    if text.starts_with('[') {
        return Format::JsonArray;
    }
    Format::JsonLines
}

/// Reads a benchmark result file.
pub fn parse(name: &str, _text: &str, format: Format, _options: &IngestOptions) -> Loaded {
    Loaded {
        fatal: Some(format!(
            "{name}: {} files are not read yet",
            format.describe()
        )),
        ..Loaded::default()
    }
}
