//! `slo`: the SLO Workbench engine on the command line, for CI gates and scripts.
//!
//! Every number comes from `slo-core`; this crate reads files, parses flags and prints.
//! Exit status: 0 when it ran; 1 when `--check` found a failure; 2 for bad usage or input.

mod alloc;
mod budget;
mod compare;
mod doc;
mod export;
mod file;
mod histogram;
mod input;
mod report;
mod sweep;
mod wire;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[global_allocator]
static ALLOCATOR: alloc::HugeForLarge = alloc::HugeForLarge;

#[derive(Parser)]
#[command(
    name = "slo",
    version,
    about = "Evaluate LLM-serving latency SLOs from request logs and benchmark results"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Joint attainment, percentiles, goodput and failures per class × bucket.
    Report(report::Args),
    /// The written SLO document (Markdown) for a spec, with measured results when files are given.
    Doc(doc::Args),
    /// The spec as OpenSLO, Sloth, Prometheus rules or SQL.
    Export(export::Args),
    /// Capacity from a load sweep: attainment vs request rate, one result file per rate.
    Sweep(sweep::Args),
    /// Prometheus histograms: fraction under each target, merged across replicas.
    Histogram(histogram::Args),
    /// Error budget and burn rate over the SLO window.
    Budget(budget::Args),
    /// Two runs under the same targets: attainment change per class × bucket (z-test), percentile shifts.
    Compare(compare::Args),
}

/// Standard output, buffered: a report goes out in a few system calls instead of one per line
/// (`slo report --format csv` of a million requests made a million). End with [`flushed`]:
/// dropping the writer flushes too, but loses the error.
pub fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// `written` (the result of writing `what` to `out`), then `out` flushed; either error becomes
/// "writing `what`: ...".
pub fn flushed(
    written: Result<(), String>,
    out: &mut impl std::io::Write,
    what: &str,
) -> Result<(), String> {
    written
        .and_then(|_| out.flush().map_err(|e| e.to_string()))
        .map_err(|e| format!("writing {what}: {e}"))
}

/// The outcome of a command: exit 0, 1 (a `--check` gate failed) or 2 (usage or input).
pub enum Outcome {
    Ok,
    CheckFailed,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Report(args) => report::run(args),
        Command::Doc(args) => doc::run(args),
        Command::Export(args) => export::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Histogram(args) => histogram::run(args),
        Command::Budget(args) => budget::run(args),
        Command::Compare(args) => compare::run(args),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::CheckFailed) => ExitCode::from(1),
        Err(message) => {
            eprintln!("slo: {message}");
            ExitCode::from(2)
        }
    }
}
