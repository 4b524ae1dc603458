//! Saved reports: what the user saw, in one versioned JSON file that the app reopens.
//!
//! A saved report holds the spec, the computed report, the provenance of every input and, only
//! when the user asks, the request data itself. Opening it shows the same numbers without the
//! original files; with the data included, everything can be recomputed.

use serde::{Deserialize, Serialize};

use crate::evaluate::Report;
use crate::ingest::Provenance;
use crate::spec::Spec;
use crate::table::RequestTable;

/// The `format` field of every saved report.
pub const FORMAT: &str = "slo-workbench-report";
/// The version this build writes; it reads every version up to this one.
pub const VERSION: u32 = 1;

/// A saved report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedReport {
    pub format: String,
    pub version: u32,
    /// When it was saved (ISO 8601, from the saving app's clock).
    pub created: String,
    /// Which build saved it.
    pub generator: String,
    pub spec: Spec,
    pub report: Report,
    pub files: Vec<Provenance>,
    /// The request data, only when the user ticked "include the data".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<RequestTable>,
}

impl SavedReport {
    pub fn new(
        created: &str,
        spec: &Spec,
        report: &Report,
        files: &[Provenance],
        data: Option<&RequestTable>,
    ) -> SavedReport {
        SavedReport {
            format: FORMAT.to_string(),
            version: VERSION,
            created: created.to_string(),
            generator: format!("SLO Workbench {}", env!("CARGO_PKG_VERSION")),
            spec: spec.clone(),
            report: report.clone(),
            files: files.to_vec(),
            data: data.cloned(),
        }
    }

    /// Compact JSON; deterministic for the same inputs.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// One sentence on what this is: "Saved 2026-11-29T10:00:00Z from worked.csv (10 rows) …".
    pub fn describe(&self) -> String {
        let files: Vec<String> = self
            .files
            .iter()
            .map(|f| format!("{} ({} rows)", f.name, f.rows_read))
            .collect();
        format!(
            "Saved report from {} by {}, computed from {}{}.",
            self.created,
            self.generator,
            if files.is_empty() {
                "no files".to_string()
            } else {
                files.join(", ")
            },
            if self.data.is_some() {
                "; the request data is included"
            } else {
                "; the request data is not included"
            }
        )
    }
}

/// True when `text` looks like a saved report (cheap: looks at the start only).
pub fn looks_saved(text: &str) -> bool {
    let head = text.get(..text.len().min(200)).unwrap_or(text);
    head.contains(FORMAT)
}

/// Reads a saved report.
///
/// # Edge cases
/// Not JSON, not a saved report, a newer version than this build reads, or a damaged body: one
/// clear sentence, never a panic.
/// # Example
/// ```
/// assert!(slo_core::saved::from_json("{}").unwrap_err().contains("not a saved SLO Workbench report"));
/// let newer = r#"{"format": "slo-workbench-report", "version": 9}"#;
/// assert!(slo_core::saved::from_json(newer).unwrap_err().contains("version 9"));
/// ```
pub fn from_json(text: &str) -> Result<SavedReport, String> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("not a saved report: the JSON is damaged ({e})"))?;
    if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(
            "not a saved SLO Workbench report (no \"format\": \"slo-workbench-report\")"
                .to_string(),
        );
    }
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(v) if v >= 1 && v <= u64::from(VERSION) => {}
        Some(v) => {
            return Err(format!(
                "this saved report is format version {v}; this build reads versions 1 to {VERSION}: open it with a newer SLO Workbench"
            ))
        }
        None => return Err("this saved report has no version number".to_string()),
    }
    serde_json::from_value(value).map_err(|e| format!("the saved report is damaged: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::{report, Duration};
    use crate::ingest::{parse, IngestOptions};

    #[test]
    fn round_trips_with_and_without_data() {
        let loaded = parse(
            "w.csv",
            b"ttft_ms,e2e_ms,output_tokens\n100,600,11\n900,1000,2\n",
            &IngestOptions::default(),
        );
        let spec = Spec::default();
        let r = report(&loaded.table, &spec, &Duration::unknown("-"));
        for data in [None, Some(&loaded.table)] {
            let saved = SavedReport::new(
                "2026-11-29T10:00:00Z",
                &spec,
                &r,
                std::slice::from_ref(&loaded.provenance),
                data,
            );
            let text = saved.to_json();
            assert!(looks_saved(&text));
            let back = from_json(&text).expect("reads back");
            // Tables hold NaN for absent cells (NaN != NaN), so compare what was written.
            assert_eq!(back.to_json(), text);
            assert_eq!(back.report, saved.report);
            assert!(back.describe().contains("w.csv (2 rows)"));
        }
    }

    #[test]
    fn damaged_files_get_a_sentence() {
        assert!(from_json("{").unwrap_err().contains("damaged"));
        assert!(from_json(r#"{"format": "slo-workbench-report"}"#)
            .unwrap_err()
            .contains("no version"));
        assert!(
            from_json(r#"{"format": "slo-workbench-report", "version": 1}"#)
                .unwrap_err()
                .contains("damaged")
        );
    }
}
