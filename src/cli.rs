//! The command line: one subcommand per job. Each subcommand's flags are
//! declared beside the code that implements it (`validate::ValidateArgs`,
//! `engine::RunArgs`, ...); this module only routes to them and returns the
//! process exit code.

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "payrun",
    version,
    about = "Batch payout processor: validates a payroll file, pays every row exactly once through the provider's two-step payout API, survives crashes, and writes a reconciliation report."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a payroll file without sending anything.
    Validate(crate::validate::ValidateArgs),
    /// Validate, import and pay a payroll file (resumes an interrupted run).
    Run(crate::engine::RunArgs),
    /// Show the runs in a database: counts per state and totals per currency.
    Status(crate::engine::StatusArgs),
    /// Write the reconciliation report of a run again.
    Report(crate::report::ReportArgs),
    /// List and resolve payouts whose outcome is unknown.
    Reconcile(crate::engine::ReconcileArgs),
    /// Serve the provider simulator.
    Sandbox(crate::sandbox::SandboxArgs),
    /// Make one 3-D Secure card payment.
    Pay(crate::card::PayArgs),
}

/// Runs the chosen subcommand and returns the exit code (see `crate::exit`).
pub fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Validate(args) => crate::validate::command(args),
        Command::Run(args) => crate::engine::command_run(args),
        Command::Status(args) => crate::engine::command_status(args),
        Command::Report(args) => crate::report::command(args),
        Command::Reconcile(args) => crate::engine::command_reconcile(args),
        Command::Sandbox(args) => crate::sandbox::command(args),
        Command::Pay(args) => crate::card::command(args),
    }
}
