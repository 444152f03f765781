//! Turns raw input rows into typed `Payout`s or lists of field errors, and
//! the `payrun validate` command.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The payroll file (CSV).
    pub file: PathBuf,
    /// Config file (default: ./payrun.toml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn command(_args: ValidateArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not implemented yet")
}
