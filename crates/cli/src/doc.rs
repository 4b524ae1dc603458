//! `slo doc` (being written).

#[derive(clap::Args)]
pub struct Args {
    /// Input files.
    pub files: Vec<String>,
}

pub fn run(_args: Args) -> Result<crate::Outcome, String> {
    Err("`slo doc` is not available yet".to_string())
}
