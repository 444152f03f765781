//! Card payments (`payrun pay`).

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct PayArgs {
    /// The payment request as JSON (a file, or - for standard input).
    #[arg(long)]
    pub request: PathBuf,
}

pub fn command(_args: PayArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not implemented yet")
}
