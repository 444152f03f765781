//! `payrun run`: resolves the flags and `payrun.toml` into
//! [`engine::Settings`], watches for Ctrl-C and SIGTERM, runs the engine,
//! and shows its outcome: messages on stderr, the summary, the exit code.

use super::finish::{JsonLines, Say, deliver, result_json};
use super::{LogFormat, Signals, init_logging, runtime};
use crate::config::{Ambiguous, Config, DEFAULT_DB, DEFAULT_REPORT, DEFAULT_SANDBOX_DB};
use crate::engine::{
    self, EngineOptions, Event, ProgressTarget, ProviderChoice, RunOutcome, Settings, Stop,
};
use crate::exit::Exit;
use crate::machine::State;
use crate::shutdown::{self, Shutdown};
use anyhow::{Context, Result};
use secrecy::SecretString;
use serde_json::Value;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// One async worker: the engine's async side is I/O and JSON, which one core
/// drives at tens of thousands of calls/s; validation and the database
/// writer have threads of their own. Measured on the 2-core benchmark
/// machine, a second worker only added cross-thread wake-ups.
const RUN_WORKERS: usize = 1;

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
        },
        config: cfg,
    })
}

pub fn command(args: RunArgs) -> Result<Exit> {
    init_logging(args.log_format, "warn");
    let cfg = Config::load(args.config.as_deref())?;
    let on_finish = cfg.on_finish.clone();
    let rt = runtime(Some(RUN_WORKERS))?;
    let say = Say {
        json: args.log_format == LogFormat::Json,
    };
    rt.block_on(async {
        let settings = settings(&args, cfg)?;
        let bars = !args.quiet && !say.json && std::io::stderr().is_terminal();
        // With bars, the bars' last line shows the stop notice (a line
        // printed under them would be painted over).
        let shutdown = watch_signals(args.quiet || bars, say)?;
        let progress = if args.quiet {
            ProgressTarget::Hidden
        } else if say.json {
            ProgressTarget::Lines(Box::new(JsonLines::new()))
        } else if std::io::stderr().is_terminal() {
            ProgressTarget::Bars(indicatif::ProgressDrawTarget::stderr())
        } else {
            ProgressTarget::Lines(Box::new(std::io::stderr()))
        };
        let quiet = args.quiet;
        let notify = move |e: Event| {
            if !quiet {
                show_event(&e, say)
            }
        };
        let outcome = engine::run(&settings, progress, shutdown, &notify).await?;
        let (exit, result) = show_outcome(outcome, args.quiet, say, &args.file);
        if let Some(result) = result {
            if say.json {
                eprintln!("{result}");
            }
            if let Some(target) = &on_finish
                && let Err(e) = deliver(target, &result).await
            {
                say.warn(&format!("{e:#}"));
            }
        }
        Ok(exit)
    })
}

/// How long a stopping run may finish its calls in flight before the
/// process quits anyway: under systemd's default 90 s before SIGKILL (give
/// `docker stop` `-t 40`: its default is 10 s), yet long enough for a
/// provider call with its retries to end. Quitting then is as safe as a
/// crash (every intent is committed before its request leaves).
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// The first Ctrl-C (or SIGTERM) asks the engine to stop after the calls in
/// flight; a second Ctrl-C quits at once. That is as safe as a crash: every
/// intent is committed before its request leaves, and the next run resumes.
fn watch_signals(quiet: bool, say: Say) -> Result<Shutdown> {
    let (trigger, shutdown) = shutdown::channel();
    let mut signals = Signals::install()?;
    tokio::spawn(async move {
        signals.stop_requested().await;
        if !quiet {
            say.info("stopping after the calls in flight (Ctrl-C again to quit at once)");
        }
        trigger.fire();
        tokio::select! {
            _ = signals.interrupted() => {
                say.warn("quitting now; run the same command again to resume");
            }
            _ = tokio::time::sleep(STOP_GRACE) => {
                say.warn(&format!(
                    "calls still in flight after {}s; quitting now. Their intents are \
                     recorded: run the same command again to resume",
                    STOP_GRACE.as_secs()
                ));
            }
        }
        std::process::exit(Exit::Fatal.code());
    });
    Ok(shutdown)
}

fn show_event(e: &Event, say: Say) {
    match e {
        Event::SandboxStarted(url) => say.info(&format!(
            "using the built-in sandbox at {url} (no real money moves)"
        )),
        Event::Resuming {
            run_id,
            file_path,
            created_at,
        } => say.info(&format!(
            "resuming run {run_id} of {file_path} (started {created_at})"
        )),
    }
}

/// Shows how the run ended and chooses the exit code; returns the
/// run-result object when the run sent requests. The verdict is shown even
/// with `--quiet` (which hides progress only): a cron mail must say what
/// to do.
fn show_outcome(outcome: RunOutcome, quiet: bool, say: Say, file: &Path) -> (Exit, Option<Value>) {
    let ran = match outcome {
        RunOutcome::Rejected(r) => {
            for e in r.first_errors.iter() {
                say.warn(&format!("  {e}"));
            }
            say.warn(&format!(
                "{} of {} rows rejected; nothing was sent. Fix them (see {}) and run again.",
                r.rejected,
                r.rows,
                r.rejected_path.display()
            ));
            return (Exit::Invalid, None);
        }
        RunOutcome::DuplicateIds(lines) => {
            for line in &lines {
                say.warn(&format!("  {line}"));
            }
            say.warn("transaction ids already used; nothing was imported or sent.");
            return (Exit::Invalid, None);
        }
        RunOutcome::Imported {
            run_id,
            payouts,
            file_path,
        } => {
            say.info(&format!(
                "run {run_id} holds {payouts} payout(s) of {file_path}; nothing was sent (--import-only)"
            ));
            return (Exit::Ok, None);
        }
        RunOutcome::Ran(ran) => ran,
    };
    if !quiet && !say.json {
        super::report::show_summary(&ran.totals);
        eprintln!("report: {}", ran.report.display());
    }
    let exit = match &ran.stop {
        Some(Stop::Unauthorized(msg)) => {
            say.warn(&format!(
                "the provider refused the API key ({msg}); nothing more was sent. \
                 Fix the key and run the same command again to resume \
                 (or end the run with `payrun cancel {}`)",
                ran.run_id
            ));
            Exit::Fatal
        }
        Some(Stop::Interrupted) => {
            say.warn(
                "interrupted; in-flight calls finished and were recorded. \
                 Run the same command again to resume.",
            );
            Exit::Fatal
        }
        Some(Stop::Unreachable(msg)) => {
            say.warn(&format!(
                "the provider is not accepting requests ({msg}); progress is saved. \
                 Run the same command again to resume"
            ));
            Exit::Fatal
        }
        None => Exit::complete_if(ran.complete()),
    };
    if ran.stop.is_none() && ran.initiate_only {
        say.info(&format!(
            "initiation done, no money moved. {} payout(s) initiated; \
             run again without --initiate-only to execute them.",
            ran.count(State::Initiated)
        ));
    }
    let report = ran.report.display().to_string();
    for line in ran.verdict.advice(ran.run_id, &report) {
        say.info(&format!("next: {line}"));
    }
    let result = result_json(&ran, file, exit);
    (exit, Some(result))
}
