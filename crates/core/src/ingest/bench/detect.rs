//! Telling the JSON formats apart by the keys in the first 64 KB, without parsing the file.

use crate::ingest::Format;

/// How much of the text detection looks at. Every format names its distinctive keys long
/// before this (a 40 MB vLLM result starts with its settings; JSON Lines repeat them per line).
const HEAD_BYTES: usize = 64 * 1024;

/// Object keys in `head`, each with the nesting depth of the object that holds it (1 = a
/// top-level object or a JSON Lines record, 2 = an object inside one, or inside a top-level
/// array). A string followed by `:` is a key; strings are skipped with their escapes, so a
/// key-like text inside a value is not taken for a key.
fn keys(head: &str) -> Vec<(usize, &str)> {
    let bytes = head.as_bytes();
    let mut out: Vec<(usize, &str)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        match c {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while let Some(&d) = bytes.get(j) {
                    if d == b'\\' {
                        j += 2;
                        continue;
                    }
                    if d == b'"' {
                        break;
                    }
                    j += 1;
                }
                if j >= bytes.len() {
                    break;
                }
                let mut k = j + 1;
                while bytes.get(k).is_some_and(u8::is_ascii_whitespace) {
                    k += 1;
                }
                if bytes.get(k) == Some(&b':') {
                    if let Some(key) = head.get(start..j) {
                        if !out.contains(&(depth, key)) {
                            out.push((depth, key));
                        }
                    }
                }
                i = j + 1;
            }
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

fn head(text: &str) -> &str {
    let mut n = text.len().min(HEAD_BYTES);
    while n > 0 && !text.is_char_boundary(n) {
        n -= 1;
    }
    text.get(..n).unwrap_or("")
}

/// Keys that only vLLM's result files have (SGLang's copy of the script renamed or dropped them).
const VLLM_KEYS: &[&str] = &[
    "date",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "burstiness",
    "endpoint_type",
    "label",
    "failed",
    "mean_e2el_ms",
    "median_e2el_ms",
    "latencies",
    "start_times",
    "queue_times",
    "request_goodput",
    "request_goodput:",
    "total_token_throughput",
    "max_concurrent_requests",
    "rtfx",
];
/// Keys that only SGLang's bench_serving output has.
const SGLANG_KEYS: &[&str] = &[
    "dataset_name",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "server_info",
    "total_output_tokens_retokenized",
    "input_throughput",
    "total_throughput",
    "mean_e2e_latency_ms",
    "median_e2e_latency_ms",
    "p99_e2e_latency_ms",
    "concurrency",
    "accept_length",
    "tag",
];
/// Per-request arrays of vLLM and SGLang.
const ARRAY_KEYS: &[&str] = &["ttfts", "itls", "input_lens", "output_lens"];
/// Summary keys of vLLM and SGLang (a file saved without per-request data has only these).
const SUMMARY_KEYS: &[&str] = &[
    "mean_ttft_ms",
    "median_ttft_ms",
    "p99_ttft_ms",
    "mean_tpot_ms",
    "mean_itl_ms",
    "request_throughput",
];
/// Keys of LLMPerf's per-request records.
const LLMPERF_KEYS: &[&str] = &[
    "ttft_s",
    "end_to_end_latency_s",
    "inter_token_latency_s",
    "number_input_tokens",
    "number_output_tokens",
    "error_code",
    "error_msg",
    "request_output_throughput_token_per_s",
    "number_total_tokens",
];

/// Tells the JSON formats apart by their keys (see docs/formats.md for the rules).
pub fn detect(text: &str) -> Format {
    let text = text.trim_start();
    let keys = keys(head(text));
    let has = |depth: usize, key: &str| keys.contains(&(depth, key));
    let any = |key: &str| keys.iter().any(|(_, k)| *k == key);
    if text.starts_with('[') {
        let llmperf = LLMPERF_KEYS.iter().filter(|k| has(2, k)).count();
        if has(2, "ttft_s") && llmperf >= 3 {
            return Format::Llmperf;
        }
        return Format::JsonArray;
    }
    if has(1, "experiments")
        && (any("response_timestamps") || any("experiment") || has(1, "service_kind"))
    {
        return Format::GenaiPerf;
    }
    if has(1, "benchmarks") || any("guidellm_version") {
        return Format::Guidellm;
    }
    if has(1, "metadata") && has(1, "metrics") {
        return Format::Aiperf;
    }
    let serving = ARRAY_KEYS.iter().any(|k| has(1, k))
        || SUMMARY_KEYS.iter().any(|k| has(1, k))
        || (has(1, "completed") && has(1, "duration"));
    if serving {
        let vllm = VLLM_KEYS.iter().filter(|k| has(1, k)).count();
        let sglang = SGLANG_KEYS.iter().filter(|k| has(1, k)).count();
        return if sglang > vllm {
            Format::Sglang
        } else {
            Format::Vllm
        };
    }
    if keys
        .iter()
        .any(|(d, k)| *d == 1 && k.starts_with("results_ttft_s"))
    {
        // LLMPerf's *_summary.json: read as LLMPerf, which says it is a summary only.
        return Format::Llmperf;
    }
    Format::JsonLines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_know_depth_and_skip_values() {
        let k = keys(r#"{"a": {"b": "c:"}, "d\"e": [{"f": 1}], "g": "h"}"#);
        assert_eq!(
            k,
            vec![(1, "a"), (2, "b"), (1, "d\\\"e"), (3, "f"), (1, "g")]
        );
    }

    #[test]
    fn head_stops_on_a_char_boundary() {
        let text = format!("{}é", "a".repeat(HEAD_BYTES - 1));
        assert_eq!(head(&text).len(), HEAD_BYTES - 1);
    }

    #[test]
    fn generic_logs_stay_generic() {
        assert_eq!(
            detect(r#"{"ttft_ms": 1, "e2e_ms": 2, "duration": 3}"#),
            Format::JsonLines
        );
        assert_eq!(
            detect(r#"[{"ttft_s": 1, "end_to_end_latency_s": 2}]"#),
            Format::JsonArray
        );
    }
}
