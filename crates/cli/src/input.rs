//! Reading files and specs for every command: errors go to stderr with their location.

use std::path::Path;

use slo_core::ingest::{self, IngestOptions, Loaded};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::table::RequestTable;

/// How many row errors are printed per file before counting the rest.
const PRINTED_ERRORS: usize = 10;

/// Reads and parses every file for `spec` (a column its class rules read is read as a label,
/// see `IngestOptions::reading_rule_columns`); prints warnings and row errors to stderr. A file
/// that cannot be read at all is an error (exit 2).
pub fn load_files(
    paths: &[String],
    options: &IngestOptions,
    spec: &Spec,
) -> Result<Vec<Loaded>, String> {
    let options = &options.clone().reading_rule_columns(spec);
    if paths.is_empty() {
        return Err("no input files (give one or more request logs or result files)".to_string());
    }
    let mut out = Vec::new();
    for path in paths {
        let bytes = crate::file::read(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
        let name = Path::new(path)
            .file_name()
            .map_or(path.clone(), |n| n.to_string_lossy().into_owned());
        let loaded = ingest::parse(&name, &bytes, options);
        // Messages start with the file name (a few warnings name none); on a command line the
        // path as typed says more.
        let located = |message: &str| match message.strip_prefix(name.as_str()) {
            Some(rest) => format!("{path}{rest}"),
            None => format!("{path}: {message}"),
        };
        if let Some(fatal) = &loaded.fatal {
            return Err(located(fatal));
        }
        for w in &loaded.warnings {
            eprintln!("warning: {}", located(w));
        }
        for e in loaded.errors.iter().take(PRINTED_ERRORS) {
            eprintln!("skipped: {}", located(&e.to_string()));
        }
        if loaded.error_count > PRINTED_ERRORS as u64 {
            eprintln!(
                "skipped: ... and {} more rows of {path}",
                loaded.error_count - PRINTED_ERRORS as u64
            );
        }
        out.push(loaded);
    }
    Ok(out)
}

/// Reads `--spec`, or builds a one-class spec from the target flags.
pub fn spec_from(path: Option<&str>, flags: &TargetFlags) -> Result<Spec, String> {
    let mut spec = match path {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{p}: cannot read: {e}"))?;
            Spec::from_json(&text).map_err(|errors| {
                let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
                format!("{p}: the spec is not valid:\n{}", lines.join("\n"))
            })?
        }
        None => Spec::single(Targets::default()),
    };
    // Flags override every cell's target on that indicator.
    let any =
        flags.ttft.is_some() || flags.tpot.is_some() || flags.itl.is_some() || flags.e2e.is_some();
    if any {
        for class in &mut spec.classes {
            for t in &mut class.targets {
                if let Some(ms) = flags.ttft {
                    t.ttft = Some(TtftTarget::Fixed { ms });
                }
                t.tpot_ms = flags.tpot.or(t.tpot_ms);
                t.itl_ms = flags.itl.or(t.itl_ms);
                t.e2e_ms = flags.e2e.or(t.e2e_ms);
            }
        }
    }
    let errors = spec.validate();
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        return Err(format!("the targets are not valid:\n{}", lines.join("\n")));
    }
    Ok(spec)
}

/// Target flags shared by commands.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TargetFlags {
    /// TTFT target in ms (overrides the spec's, in every cell).
    #[arg(long, value_name = "MS")]
    pub ttft: Option<f64>,
    /// TPOT target in ms.
    #[arg(long, value_name = "MS")]
    pub tpot: Option<f64>,
    /// ITL target in ms (compared with each request's ITL statistic, max gap by default).
    #[arg(long, value_name = "MS")]
    pub itl: Option<f64>,
    /// E2E target in ms.
    #[arg(long, value_name = "MS")]
    pub e2e: Option<f64>,
}

/// Merges loaded files into one table, moving their requests out (the files keep their
/// provenance and metadata).
pub fn combine(files: &mut [Loaded]) -> RequestTable {
    ingest::take_combined(files)
}
