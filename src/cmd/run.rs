//! `payrun run`: resolves the flags and `payrun.toml` into
//! [`engine::Settings`], watches for Ctrl-C and SIGTERM, runs the engine,
//! and shows its outcome: messages on stderr, the summary, the exit code.

use super::{LogFormat, Signals, init_logging, runtime};
use crate::config::{Ambiguous, Config, DEFAULT_DB, DEFAULT_REPORT, DEFAULT_SANDBOX_DB};
use crate::engine::retry::Backoff;
use crate::engine::{
    self, EngineOptions, Event, ProgressTarget, ProviderChoice, RunOutcome, Settings, Stop,
};
use crate::exit::Exit;
use crate::machine::State;
use crate::shutdown::{self, Shutdown};
use anyhow::{Context, Result, bail};
use secrecy::SecretString;
use std::io::IsTerminal;
use std::path::PathBuf;

/// One async worker: the engine's async side is I/O and JSON, which one core
/// drives at tens of thousands of calls/s; validation and the database
/// writer have threads of their own. Measured on the 2-core benchmark
/// machine, a second worker only added cross-thread wake-ups.
const RUN_WORKERS: usize = 1;

/// Test hook: the retry backoff base in milliseconds (cap 50 × base). Read
/// once here, at the edge, into [`EngineOptions::backoff`]; the library
/// never reads the environment. The end-to-end tests set it so that no
/// test waits on real backoff. Not a user setting: real runs keep the
/// defaults, chosen for real providers.
const BACKOFF_ENV: &str = "PAYRUN_BACKOFF_MS";

fn backoff_from_env() -> Result<Backoff> {
    match std::env::var(BACKOFF_ENV) {
        Err(_) => Ok(Backoff::default()),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(Backoff::from_base_ms)
            .with_context(|| format!("{BACKOFF_ENV}={v:?} is not a whole number of milliseconds")),
    }
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The payroll file (CSV, or a workbook where supported).
    pub file: PathBuf,
    /// Config file (default: ./payrun.toml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The provider's base URL (overrides `base_url` in the config).
    #[arg(long)]
    pub base_url: Option<String>,
    /// The checkpoint database [default: payrun.db, or payrun-sandbox.db with --sandbox].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Where to write the report; `rejected.csv` and `PATH.summary.csv` go beside it.
    #[arg(long, default_value = DEFAULT_REPORT)]
    pub report: PathBuf,
    /// Provider calls per second (overrides `rate`).
    #[arg(long)]
    pub rate: Option<u32>,
    /// Maximum requests in flight (overrides `concurrency`).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// What to do with payouts whose execution outcome is unknown (overrides `ambiguous`).
    #[arg(long, value_enum)]
    pub ambiguous: Option<Ambiguous>,
    /// Stop after initiation (no money moves) and print the totals for approval.
    #[arg(long)]
    pub initiate_only: bool,
    /// Validate and record the file in the database, send nothing.
    #[arg(long, conflicts_with = "initiate_only")]
    pub import_only: bool,
    /// Run against the built-in provider simulator, started in-process.
    #[arg(long)]
    pub sandbox: bool,
    /// A label distinguishing two runs of byte-identical files.
    #[arg(long, default_value = "")]
    pub label: String,
    /// Start a new run even though an unfinished run of a file with the same
    /// name is in the database (see "Editing a file after a partial run").
    #[arg(long)]
    pub new_run: bool,
    /// Worksheet to read, for workbook input.
    #[arg(long)]
    pub sheet: Option<String>,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// Log line format on stderr.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// Flags over `payrun.toml` over defaults, once.
pub fn settings(args: &RunArgs, cfg: Config) -> Result<Settings> {
    let provider = if args.sandbox {
        ProviderChoice::Sandbox
    } else {
        let base_url = args.base_url.clone().or(cfg.base_url.clone()).context(
            "no provider URL: pass --base-url, set base_url in payrun.toml, or use --sandbox",
        )?;
        // `--import-only` sends nothing, so it needs no key.
        let api_key = if args.import_only {
            SecretString::from(String::new())
        } else {
            cfg.api_key()?
        };
        ProviderChoice::Remote { base_url, api_key }
    };
    let db = args.db.clone().unwrap_or_else(|| {
        PathBuf::from(if args.sandbox {
            DEFAULT_SANDBOX_DB
        } else {
            DEFAULT_DB
        })
    });
    Ok(Settings {
        file: args.file.clone(),
        provider,
        db,
        report: args.report.clone(),
        label: args.label.clone(),
        new_run: args.new_run,
        sheet: args.sheet.clone(),
        import_only: args.import_only,
        engine: EngineOptions {
            rate: args.rate.unwrap_or(cfg.rate()).max(1),
            concurrency: args.concurrency.unwrap_or(cfg.concurrency()).max(1),
            ambiguous: args.ambiguous.unwrap_or(cfg.ambiguous()),
            initiate_only: args.initiate_only,
            backoff: backoff_from_env()?,
        },
        config: cfg,
    })
}

pub fn command(args: RunArgs) -> Result<Exit> {
    init_logging(args.log_format, "warn");
    let cfg = Config::load(args.config.as_deref())?;
    let rt = runtime(Some(RUN_WORKERS))?;
    rt.block_on(async {
        let settings = settings(&args, cfg)?;
        let shutdown = watch_signals(args.quiet)?;
        let progress = if args.quiet {
            ProgressTarget::Hidden
        } else if std::io::stderr().is_terminal() {
            ProgressTarget::Bars(indicatif::ProgressDrawTarget::stderr())
        } else {
            ProgressTarget::Lines(Box::new(std::io::stderr()))
        };
        let quiet = args.quiet;
        let notify = move |e: Event| {
            if !quiet {
                show_event(&e)
            }
        };
        let outcome = engine::run(&settings, progress, shutdown, &notify).await?;
        show_outcome(outcome, args.quiet)
    })
}

/// The first Ctrl-C (or SIGTERM) asks the engine to stop after the calls in
/// flight; a second Ctrl-C quits at once. That is as safe as a crash: every
/// intent is committed before its request leaves, and the next run resumes.
fn watch_signals(quiet: bool) -> Result<Shutdown> {
    let (trigger, shutdown) = shutdown::channel();
    let mut signals = Signals::install()?;
    tokio::spawn(async move {
        signals.stop_requested().await;
        if !quiet {
            eprintln!("payrun: stopping after the calls in flight (Ctrl-C again to quit at once)");
        }
        trigger.fire();
        signals.interrupted().await;
        eprintln!("payrun: quitting now; run the same command again to resume");
        std::process::exit(Exit::Fatal.code());
    });
    Ok(shutdown)
}

fn show_event(e: &Event) {
    match e {
        Event::SandboxStarted(url) => {
            eprintln!("payrun: using the built-in sandbox at {url} (no real money moves)")
        }
        Event::Resuming {
            run_id,
            file_path,
            created_at,
        } => eprintln!("payrun: resuming run {run_id} of {file_path} (started {created_at})"),
    }
}

fn show_outcome(outcome: RunOutcome, quiet: bool) -> Result<Exit> {
    let ran = match outcome {
        RunOutcome::Rejected(r) => {
            for e in r.first_errors.iter() {
                eprintln!("  {e}");
            }
            eprintln!(
                "payrun: {} of {} rows rejected; nothing was sent. Fix them (see {}) and run again.",
                r.rejected,
                r.rows,
                r.rejected_path.display()
            );
            return Ok(Exit::Invalid);
        }
        RunOutcome::DuplicateIds(lines) => {
            for line in &lines {
                eprintln!("  {line}");
            }
            eprintln!("payrun: transaction ids already used; nothing was imported or sent.");
            return Ok(Exit::Invalid);
        }
        RunOutcome::Imported {
            run_id,
            payouts,
            file_path,
        } => {
            if !quiet {
                eprintln!(
                    "payrun: run {run_id} holds {payouts} payout(s) of {file_path}; nothing was sent (--import-only)"
                );
            }
            return Ok(Exit::Ok);
        }
        RunOutcome::Ran(ran) => ran,
    };
    if !quiet {
        super::report::show_summary(&ran.totals);
        eprintln!("report: {}", ran.report.display());
    }
    match &ran.stop {
        Some(Stop::Unauthorized(msg)) => bail!(
            "the provider refused the API key ({msg}); nothing more was sent. \
             Fix the key and run the same command again to resume"
        ),
        Some(Stop::Interrupted) => {
            eprintln!(
                "payrun: interrupted; in-flight calls finished and were recorded. \
                 Run the same command again to resume."
            );
            return Ok(Exit::Fatal);
        }
        Some(Stop::Unreachable(msg)) => bail!(
            "the provider is not accepting requests ({msg}); progress is saved. \
             Run the same command again to resume"
        ),
        None => {}
    }
    if ran.initiate_only && !quiet {
        eprintln!(
            "payrun: initiation done, no money moved. {} payout(s) initiated; \
             run again without --initiate-only to execute them.",
            ran.count(State::Initiated)
        );
    }
    Ok(Exit::complete_if(ran.complete()))
}
