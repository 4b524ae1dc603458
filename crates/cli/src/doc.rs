//! `slo doc`: the written SLO document (Markdown) for a spec, with measured results when request
//! logs or result files are given.

use std::io::Write;

use slo_core::document::{document, Measured};
use slo_core::evaluate::report;
use slo_core::ingest::{self, IngestOptions, Loaded, Provenance};

use crate::input::{self, TargetFlags};
use crate::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// Request logs or benchmark result files to add a "Measured results" section from.
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,
    /// SLO spec JSON (classes, buckets, targets, method, objective, policies).
    #[arg(long, value_name = "SPEC.json")]
    pub spec: String,
    /// Run duration in seconds, for goodput (default: from request timestamps or the file).
    #[arg(long, value_name = "S")]
    pub duration_s: Option<f64>,
    /// Write the document to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
}

pub fn run(args: Args) -> Result<Outcome, String> {
    let spec = input::spec_from(Some(&args.spec), &TargetFlags::default())?;
    let text = if args.files.is_empty() {
        document(&spec, None)
    } else {
        let mut files = input::load_files(&args.files, &IngestOptions::default(), &spec)?;
        let table = input::combine(&mut files);
        let refs: Vec<&Loaded> = files.iter().collect();
        let duration = ingest::run_duration(&refs, &table, args.duration_s);
        let report = report(&table, &spec, &duration);
        let provenance: Vec<Provenance> = files.iter().map(|f| f.provenance.clone()).collect();
        document(
            &spec,
            Some(&Measured {
                report: &report,
                files: &provenance,
            }),
        )
    };
    match &args.out {
        Some(path) => std::fs::write(path, text.as_bytes())
            .map_err(|e| format!("{path}: cannot write: {e}"))?,
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            out.write_all(text.as_bytes())
                .map_err(|e| format!("writing the document: {e}"))?;
        }
    }
    Ok(Outcome::Ok)
}
