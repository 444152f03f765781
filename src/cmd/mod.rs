//! The command line: one file per subcommand, each with its clap arguments
//! and its printing (the layout of xsv/qsv's `cmd/`). Commands resolve flags
//! and `payrun.toml` once into the settings the library takes, call it, show
//! what it returns, and map it to an [`Exit`]. Only this layer (and
//! `main.rs`) prints, builds the async runtime, installs signal handlers,
//! sets up logging or exits the process.

pub mod approve;
pub mod cancel;
pub mod db;
pub mod finish;
pub mod help;
pub mod init;
pub mod pay;
pub mod probe;
pub mod reconcile;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod status;
pub mod summary;
pub mod validate;

use crate::exit::Exit;
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

/// The API key of `cfg` (`PAYRUN_API_KEY` or `api_key_file`), its file's
/// warning (readable by others: `chmod 600`) told on stderr.
pub fn api_key(cfg: &crate::config::Config) -> Result<secrecy::SecretString> {
    api_key_warning_with(cfg, |w| eprintln!("payrun: warning: {w}"))
}

/// [`api_key`], telling the warning through `warn`.
pub fn api_key_warning_with(
    cfg: &crate::config::Config,
    warn: impl FnOnce(&str),
) -> Result<secrecy::SecretString> {
    let read = cfg.api_key()?;
    if let Some(w) = &read.warning {
        warn(w);
    }
    Ok(read.key)
}

#[derive(Debug, Parser)]
#[command(
    name = "payrun",
    version,
    about = "Batch payout processor: validates a payroll file, pays every row exactly once through the provider's two-step payout API, survives crashes, and writes a reconciliation report.",
    after_help = "Start with `payrun init`, then `payrun run FILE --sandbox` to rehearse.\n\
                  The API key comes from PAYRUN_API_KEY (or `api_key_file`), never a flag.\n\
                  Exit codes: 0 done; 1 could not proceed; 2 rows rejected, nothing sent; 3 finished with payouts not executed."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check a payroll file without sending anything.
    Validate(validate::ValidateArgs),
    /// Validate, import and pay a payroll file (resumes an interrupted run).
    Run(run::RunArgs),
    /// Write a commented payrun.toml and a template payroll, or the [columns] table of a file.
    Init(init::InitArgs),
    /// Show the runs in a database: counts per state and totals per currency.
    Status(status::StatusArgs),
    /// A run at a glance, and its printable approval page (--html).
    Summary(summary::SummaryArgs),
    /// Approve a run's initiated payouts for execution (four eyes), or --revoke.
    Approve(approve::ApproveArgs),
    /// Write the reconciliation report of a run again.
    Report(report::ReportArgs),
    /// List every payout that is not final, and settle them (statement, status call, operator).
    Reconcile(reconcile::ReconcileArgs),
    /// End a run whose payouts were never executed (they become `cancelled`).
    Cancel(cancel::CancelArgs),
    /// Serve the provider simulator.
    Sandbox(sandbox::SandboxArgs),
    /// Make one 3-D Secure card payment.
    Pay(pay::PayArgs),
    /// Ask the provider how it answers, with calls that move no money.
    Probe(probe::ProbeArgs),
}

/// Runs the chosen subcommand.
pub fn run(cli: Cli) -> Result<Exit> {
    match cli.command {
        Command::Validate(args) => validate::command(args),
        Command::Run(args) => run::command(args),
        Command::Init(args) => init::command(args),
        Command::Status(args) => status::command(args),
        Command::Summary(args) => summary::command(args),
        Command::Approve(args) => approve::command(args),
        Command::Report(args) => report::command(args),
        Command::Reconcile(args) => reconcile::command(args),
        Command::Cancel(args) => cancel::command(args),
        Command::Sandbox(args) => sandbox::command(args),
        Command::Pay(args) => pay::command(args),
        Command::Probe(args) => probe::command(args),
    }
}

/// The error ended because whoever read standard output went away
/// (`payrun status | head`): not a failure of payrun.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Logs go to standard error, filtered by `RUST_LOG` (else `default`).
/// Nothing payrun logs carries a secret or card data beyond its masked
/// number; the end-to-end tests check this at `RUST_LOG=trace`.
pub fn init_logging(format: LogFormat, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for a person at a terminal, never in a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// The async runtime, built in this one place. `Threads::PerCore` lets
/// tokio choose (one worker per core).
pub fn runtime(threads: Threads) -> Result<tokio::runtime::Runtime> {
    let mut builder = match threads {
        Threads::Caller => tokio::runtime::Builder::new_current_thread(),
        Threads::Workers(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
        Threads::PerCore => tokio::runtime::Builder::new_multi_thread(),
    };
    builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Where a command's async tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// On the thread that starts the runtime, with no worker thread.
    Caller,
    Workers(usize),
    PerCore,
}

/// The process's stop signals, watched from [`Signals::install`] on (inside
/// the runtime): Ctrl-C and, on unix, SIGTERM, which a service manager
/// sends and which is treated exactly like a first Ctrl-C.
#[cfg(unix)]
pub struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    pub fn install() -> Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt()).context("cannot watch SIGINT")?,
            terminate: signal(SignalKind::terminate()).context("cannot watch SIGTERM")?,
        })
    }

    /// Ctrl-C or SIGTERM: a request to stop cleanly.
    pub async fn stop_requested(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }

    /// Ctrl-C only: an operator insisting.
    pub async fn interrupted(&mut self) {
        if self.interrupt.recv().await.is_none() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(not(unix))]
pub struct Signals;

#[cfg(not(unix))]
impl Signals {
    pub fn install() -> Result<Signals> {
        Ok(Signals)
    }

    pub async fn stop_requested(&mut self) {
        self.interrupted().await
    }

    pub async fn interrupted(&mut self) {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_is_found_through_the_error_chain() {
        let pipe = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed");
        let err = anyhow::Error::from(pipe).context("cannot write the status");
        assert!(is_broken_pipe(&err));
        let other = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "no");
        assert!(!is_broken_pipe(&anyhow::Error::from(other).context("x")));
        assert!(!is_broken_pipe(&anyhow::anyhow!("Broken pipe")));
    }
}
