//! `slo export`: the spec as OpenSLO, Sloth, Prometheus rules or SQL.

use std::io::Write;

use slo_core::export::{export, ExportFormat};

use crate::input::{self, TargetFlags};
use crate::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// Output format: openslo, sloth, prometheus or sql.
    #[arg(long, value_name = "FORMAT")]
    pub to: String,
    /// SLO spec JSON.
    #[arg(long, value_name = "SPEC.json")]
    pub spec: String,
    /// SQL only: the table of request logs (schema-qualified names like logs.requests work).
    #[arg(long, value_name = "NAME", default_value = "requests")]
    pub table: String,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<String>,
}

pub fn run(args: Args) -> Result<Outcome, String> {
    let format = ExportFormat::from_name(&args.to).ok_or_else(|| {
        let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.name()).collect();
        format!("--to {:?}: use one of {}", args.to, names.join(", "))
    })?;
    let spec = input::spec_from(Some(&args.spec), &TargetFlags::default())?;
    let text = export(&spec, format, &args.table);
    match &args.out {
        Some(path) => std::fs::write(path, text.as_bytes())
            .map_err(|e| format!("{path}: cannot write: {e}"))?,
        None => {
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            out.write_all(text.as_bytes())
                .map_err(|e| format!("writing the export: {e}"))?;
        }
    }
    Ok(Outcome::Ok)
}
