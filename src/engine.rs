//! The payout engine.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    pub file: PathBuf,
}
#[derive(Debug, clap::Args)]
pub struct StatusArgs {}
#[derive(Debug, clap::Args)]
pub struct ReconcileArgs {}

pub fn command_run(_args: RunArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not implemented yet")
}
pub fn command_status(_args: StatusArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not implemented yet")
}
pub fn command_reconcile(_args: ReconcileArgs) -> anyhow::Result<i32> {
    anyhow::bail!("not implemented yet")
}
