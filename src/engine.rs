//! The payout engine: `payrun run`, `status` and `reconcile`. It imports a
//! validated file into the checkpoint, then moves every payout through the
//! state machine of DESIGN.md section 2 with bounded concurrency under one
//! shared rate limiter, committing each intent before its request leaves and
//! each outcome after its answer arrives (section 3). It never talks SQL: it
//! sends commands to the store's writer thread and awaits their commit.
//!
//! Initiation and execution overlap: a payout is executed as soon as it is
//! initiated, so the pipeline never idles between phases. The commit that
//! records "initiated" is also the intent to execute (`executing`), which
//! saves one fsync per payout without weakening the rule.

use crate::config::{Ambiguous, Config};
use crate::payout::State;
use crate::provider::{Client, Outcome};
use crate::report;
use crate::store::{self, NewRun, RunLock, Store, Transition, Work, Writer};
use anyhow::{Context, Result, bail};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use rand::Rng;
use secrecy::SecretString;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::{IsTerminal, Read};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Attempts per call for answers that are safe to retry (request not sent;
/// 5xx on an initiation). Eight attempts with capped backoff span up to ~20 s:
/// enough to ride out a blip, not enough to hammer a provider that is down.
pub const MAX_ATTEMPTS: u32 = 8;
/// 429s tolerated in a row for one call before the payout is given up for
/// this run (it stays resumable). A provider that keeps answering 429 after
/// this many pauses is not going to recover within the run.
pub const MAX_RATE_LIMITED: u32 = 50;
/// Backoff base and cap (full jitter: a random wait in `[0, min(cap, base * 2^n))`).
pub const BACKOFF_BASE: Duration = Duration::from_millis(100);
pub const BACKOFF_CAP: Duration = Duration::from_secs(5);
/// Default database file, and the one used with `--sandbox` so that a demo
/// run on the simulator can never be mistaken for a real run of the same file.
pub const DEFAULT_DB: &str = "payrun.db";
pub const DEFAULT_SANDBOX_DB: &str = "payrun-sandbox.db";
pub const DEFAULT_REPORT: &str = "report.csv";
/// How often the plain progress line is printed when stderr is not a
/// terminal (cron, CI): often enough to see life, rarely enough to read.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
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

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The checkpoint database.
    #[arg(long, default_value = DEFAULT_DB)]
    pub db: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct ReconcileArgs {
    /// The checkpoint database.
    #[arg(long, default_value = DEFAULT_DB)]
    pub db: PathBuf,
    /// Only this run (default: every run).
    #[arg(long)]
    pub run: Option<i64>,
    /// Re-send execute for every unknown payout, under its transactionId.
    #[arg(long, conflicts_with = "mark")]
    pub resend: bool,
    /// Print the audit trail of operators' decisions instead.
    #[arg(long, conflicts_with_all = ["mark", "resend"])]
    pub audit: bool,
    /// Record an operator's decision for the given transaction ids.
    #[arg(long, value_enum, requires = "reason", requires = "ids")]
    pub mark: Option<Mark>,
    /// Transaction ids to mark.
    #[arg(requires = "mark")]
    pub ids: Vec<String>,
    /// Why (e.g. "provider statement of 2026-05-31 shows it paid").
    #[arg(long)]
    pub reason: Option<String>,
    /// Config file (for --resend: base_url and key).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The provider's base URL (for --resend).
    #[arg(long)]
    pub base_url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mark {
    Executed,
    Failed,
}

// ---------------------------------------------------------------------------
// Commands

pub fn command_run(args: RunArgs) -> Result<i32> {
    init_logging(args.log_format);
    let cfg = Config::load(args.config.as_deref())?;
    // One async worker: the engine's async side is I/O and JSON, which one
    // core drives at tens of thousands of calls/s; validation and the
    // database writer have threads of their own. Measured on the 2-core
    // benchmark machine, a second worker only added cross-thread wake-ups.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(run(args, cfg))
}

pub fn command_status(args: StatusArgs) -> Result<i32> {
    if !args.db.exists() {
        bail!("no database at {}; pass --db", args.db.display());
    }
    let store = Store::open(&args.db)?;
    let runs = store.runs()?;
    if runs.is_empty() {
        println!("no runs in {}", args.db.display());
    }
    for run in runs {
        let counts = store.state_counts(run.id)?;
        let status = if run.finished_at.is_some() {
            "finished"
        } else {
            "in progress"
        };
        println!(
            "run {}  {}  {}  {} rows  {}",
            run.id, run.file_path, run.created_at, run.rows_total, status
        );
        let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
        println!("  states: {}", counts.join(", "));
        for (currency, states) in store.totals(run.id)? {
            let cells: Vec<String> = states
                .iter()
                .map(|(s, t)| format!("{s} {} ({})", t.count, t.total))
                .collect();
            println!("  {currency}: {}", cells.join(", "));
        }
    }
    Ok(crate::exit::OK)
}

pub fn command_reconcile(args: ReconcileArgs) -> Result<i32> {
    if !args.db.exists() {
        bail!("no database at {}; pass --db", args.db.display());
    }
    let _lock = RunLock::acquire(&args.db)?;
    let mut store = Store::open(&args.db)?;
    if args.audit {
        let runs = match args.run {
            Some(id) => vec![id],
            None => store.runs()?.into_iter().map(|r| r.id).collect(),
        };
        println!("run,transaction_id,at,action,from_state,to_state,reason");
        for run in runs {
            for [tx, at, action, from, to, reason] in store.audit(run)? {
                println!(
                    "{run},{tx},{at},{action},{from},{to},{}",
                    crate::report::safe_cell(&reason).replace(',', ";")
                );
            }
        }
        return Ok(crate::exit::OK);
    }
    if let Some(mark) = args.mark {
        let reason = args.reason.clone().unwrap_or_default();
        if reason.trim().is_empty() {
            bail!("--reason must say why (e.g. the provider statement that shows it)");
        }
        let (to, code) = match mark {
            Mark::Executed => (State::Executed, "OPERATOR_MARKED_EXECUTED"),
            Mark::Failed => (State::ExecuteFailed, "OPERATOR_MARKED_FAILED"),
        };
        for id in &args.ids {
            let p = store
                .payout_by_transaction_id(id)?
                .with_context(|| format!("no payout with transaction id {id:?}"))?;
            if p.state != State::Unknown {
                bail!(
                    "payout {id} is {}, not unknown; only unknown payouts can be marked",
                    p.state
                );
            }
            store.resolve(p.id, State::Unknown, to, "mark", reason.trim(), code)?;
            println!("{id}: unknown -> {to} ({})", reason.trim());
        }
        return Ok(crate::exit::OK);
    }
    let unresolved = store.unresolved(args.run)?;
    if unresolved.is_empty() {
        println!("no unknown payouts");
        return Ok(crate::exit::OK);
    }
    if !args.resend {
        println!(
            "run,row,transaction_id,account_id,amount,currency,provider_code,provider_message"
        );
        for u in &unresolved {
            println!(
                "{},{},{},{},{},{},{},{}",
                u.run_id,
                u.row,
                u.transaction_id,
                u.account_id,
                u.amount,
                u.currency,
                u.provider_code,
                u.provider_message.replace(',', ";")
            );
        }
        println!(
            "{} unknown payout(s): check them with the provider, then `payrun reconcile --resend` \
             or `payrun reconcile --mark executed|failed ID... --reason TEXT`",
            unresolved.len()
        );
        return Ok(crate::exit::INCOMPLETE);
    }
    let cfg = Config::load(args.config.as_deref())?;
    let base_url = args
        .base_url
        .clone()
        .or(cfg.base_url.clone())
        .context("no provider URL: pass --base-url or set base_url in the config")?;
    let profile = crate::provider::Profile::from_config(&cfg)?;
    let client = Client::with_profile(&base_url, &cfg.api_key()?, profile)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut left = 0;
    for u in unresolved {
        let outcome = rt.block_on(client.execute(&u.transaction_id));
        let (to, note) = match &outcome {
            Outcome::Accepted { .. } => (Some(State::Executed), "executed"),
            Outcome::Refused {
                transaction_failed: true,
                ..
            } => (Some(State::ExecuteFailed), "failed"),
            Outcome::Unauthorized { http, .. } => {
                bail!("the provider refused the API key (HTTP {http})")
            }
            _ => (None, "still unknown"),
        };
        match to {
            Some(to) => {
                let reason = format!("resend: {} {}", outcome.code(), outcome.message());
                store.resolve(u.id, State::Unknown, to, "resend", &reason, outcome.code())?;
            }
            None => left += 1,
        }
        println!(
            "{}: {note} ({}: {})",
            u.transaction_id,
            outcome.code(),
            outcome.message()
        );
    }
    Ok(if left == 0 {
        crate::exit::OK
    } else {
        crate::exit::INCOMPLETE
    })
}

fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// SHA-256 of the file's bytes, streamed.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// The run's identity: the file's hash, or the hash of hash and label.
pub fn run_identity(file_sha256: &str, label: &str) -> String {
    if label.is_empty() {
        file_sha256.to_string()
    } else {
        let mut h = Sha256::new();
        h.update(file_sha256.as_bytes());
        h.update([0]);
        h.update(label.as_bytes());
        hex::encode(h.finalize())
    }
}

/// The transaction id of a row without one: fixed by the run identity and
/// the row number, so re-importing the same file gives the same ids. The
/// row is zero-padded to nine digits so ids sort in row order, which keeps
/// the database's unique index append-only during import.
pub fn derived_transaction_id(identity: &str, row: u64) -> String {
    format!("pr-{}-{row:09}", &identity[..16.min(identity.len())])
}

/// Valid payouts travel from the validation thread to the importer in
/// batches (one wake-up per batch, not per row: per-row hand-offs cost more
/// in futex calls than the parsing itself), with a few batches in flight:
/// enough to absorb jitter, small enough to keep memory flat (~1 MiB).
const IMPORT_BATCH: usize = 512;
const IMPORT_CHANNEL: usize = 4;

async fn run(args: RunArgs, cfg: Config) -> Result<i32> {
    let file_sha = file_sha256(&args.file)?;
    let identity = run_identity(&file_sha, &args.label);

    // Provider: the built-in sandbox, or the configured one.
    let mut sandbox = None;
    let (client, provider) = if args.sandbox {
        let key = format!("sk_sandbox_{:016x}", rand::rng().random::<u64>());
        let config = crate::sandbox::SandboxConfig {
            api_key: key.clone(),
            ..Default::default()
        };
        let running = crate::sandbox::start(config)
            .await
            .context("cannot start the built-in sandbox")?;
        let client = Client::new(&running.base_url(), &SecretString::from(key))?;
        if !args.quiet {
            eprintln!(
                "payrun: using the built-in sandbox at {} (no real money moves)",
                running.base_url()
            );
        }
        sandbox = Some(running);
        (client, "sandbox".to_string())
    } else {
        let base_url = args.base_url.clone().or(cfg.base_url.clone()).context(
            "no provider URL: pass --base-url, set base_url in payrun.toml, or use --sandbox",
        )?;
        // `--import-only` sends nothing, so it needs no key; the client
        // built for it is never used.
        let key = if args.import_only {
            SecretString::from(String::new())
        } else {
            cfg.api_key()?
        };
        let profile = crate::provider::Profile::from_config(&cfg)?;
        let client = Client::with_profile(&base_url, &key, profile)?;
        let provider = client.base_url().to_string();
        (client, provider)
    };

    let db = args.db.clone().unwrap_or_else(|| {
        PathBuf::from(if args.sandbox {
            DEFAULT_SANDBOX_DB
        } else {
            DEFAULT_DB
        })
    });
    let _lock = RunLock::acquire(&db)?;
    let mut store = Store::open(&db)?;
    let rejected_path = sibling(&args.report, "rejected.csv");

    let run = match store.find_run(&identity)? {
        Some(run) => {
            if run.provider != provider {
                bail!(
                    "run {} of this file was made against {}, not {}; \
                     resume it against the same provider (or use --label to start a separate run)",
                    run.id,
                    run.provider,
                    provider
                );
            }
            if !args.quiet {
                eprintln!(
                    "payrun: resuming run {} of {} (started {})",
                    run.id, run.file_path, run.created_at
                );
            }
            run
        }
        None => {
            if !args.new_run {
                refuse_if_edited_copy(&store, &args.file)?;
            }
            match import(
                &mut store,
                &args,
                &cfg,
                &file_sha,
                &identity,
                &provider,
                &rejected_path,
            )? {
                Some(id) => store.run(id)?.context("run vanished after import")?,
                None => return Ok(crate::exit::INVALID),
            }
        }
    };

    if args.import_only {
        let counts = store.state_counts(run.id)?;
        let n: u64 = counts.values().sum();
        if !args.quiet {
            eprintln!(
                "payrun: run {} holds {n} payout(s) of {}; nothing was sent (--import-only)",
                run.id, run.file_path
            );
        }
        return Ok(crate::exit::OK);
    }
    let opts = EngineOptions {
        rate: args.rate.unwrap_or(cfg.rate()).max(1),
        concurrency: args.concurrency.unwrap_or(cfg.concurrency()).max(1),
        ambiguous: args.ambiguous.unwrap_or(cfg.ambiguous()),
        initiate_only: args.initiate_only,
        progress: if args.quiet {
            ProgressMode::Quiet
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Bars
        } else {
            ProgressMode::Plain
        },
    };
    // Resume: payouts left in an intent state, or initiated but not executed.
    let mut resume = Vec::new();
    for state in [State::Executing, State::Initiating, State::Initiated] {
        resume.extend(store.works_in_state(run.id, state)?);
    }
    let total_open = store.open_count(run.id)?;
    let (writer, thread) = Writer::spawn(store);
    let result = execute_run(&client, &writer, run.id, resume, total_open, &opts).await;
    drop(writer);
    let mut store = thread.join()?;
    let stats = result?;

    let counts = store.state_counts(run.id)?;
    let open = [
        State::Pending,
        State::Initiating,
        State::Initiated,
        State::Executing,
    ]
    .iter()
    .any(|s| counts.get(s).copied().unwrap_or(0) > 0);
    if !open && stats.stop.is_none() {
        store.mark_finished(run.id)?;
    }
    let totals = report::write_report(&store, run.id, &args.report)?;
    if let Some(s) = sandbox.take() {
        s.shutdown().await.ok();
    }
    if !args.quiet {
        report::print_summary(&totals);
        eprintln!("report: {}", args.report.display());
    }

    match stats.stop {
        Some(Stop::Unauthorized(msg)) => {
            bail!(
                "the provider refused the API key ({msg}); nothing more was sent. \
                 Fix the key and run the same command again to resume"
            )
        }
        Some(Stop::Interrupted) => {
            eprintln!(
                "payrun: interrupted; in-flight calls finished and were recorded. \
                 Run the same command again to resume."
            );
            return Ok(crate::exit::FATAL);
        }
        Some(Stop::Unreachable(msg)) => {
            bail!(
                "the provider is not accepting requests ({msg}); progress is saved. \
                 Run the same command again to resume"
            )
        }
        None => {}
    }
    let count = |s: State| counts.get(&s).copied().unwrap_or(0);
    if args.initiate_only {
        if !args.quiet {
            eprintln!(
                "payrun: initiation done, no money moved. {} payout(s) initiated; \
                 run again without --initiate-only to execute them.",
                count(State::Initiated)
            );
        }
        let failed = count(State::InitiateFailed) + count(State::Unknown);
        return Ok(if failed == 0 && count(State::Pending) == 0 {
            crate::exit::OK
        } else {
            crate::exit::INCOMPLETE
        });
    }
    let executed = count(State::Executed);
    let all: u64 = counts.values().sum();
    Ok(if executed == all {
        crate::exit::OK
    } else {
        crate::exit::INCOMPLETE
    })
}

/// A file whose name matches an unfinished run but whose bytes differ is
/// most likely that payroll, edited after a partial run. Its derived
/// transaction ids would differ, so running it would pay again everyone the
/// first run already paid: refuse, and say how to proceed.
fn refuse_if_edited_copy(store: &Store, file: &Path) -> Result<()> {
    let Some(name) = file.file_name() else {
        return Ok(());
    };
    for run in store.runs()? {
        if run.finished_at.is_some() || Path::new(&run.file_path).file_name() != Some(name) {
            continue;
        }
        let counts = store.state_counts(run.id)?;
        let done: u64 = [
            State::Executed,
            State::Executing,
            State::Initiated,
            State::Unknown,
        ]
        .iter()
        .map(|s| counts.get(s).copied().unwrap_or(0))
        .sum();
        bail!(
            "run {} of {} (started {}) is unfinished, with {done} payout(s) initiated or paid, \
             and {} differs from the file it was started with. A changed file is a new run with \
             new transaction ids, so it would pay those rows again. Finish run {} by running its \
             original file (or resolve it with `payrun reconcile`); if this really is a separate \
             payroll, pass --new-run",
            run.id,
            run.file_path,
            run.created_at,
            file.display(),
            run.id
        );
    }
    Ok(())
}

/// `name` in the folder of `path`.
fn sibling(path: &Path, name: &str) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
        _ => PathBuf::from(name),
    }
}

/// Validates and imports the file as a new run. `Ok(None)` means rows were
/// rejected: nothing was recorded and `rejected.csv` says why.
fn import(
    store: &mut Store,
    args: &RunArgs,
    cfg: &Config,
    file_sha: &str,
    identity: &str,
    provider: &str,
    rejected_path: &Path,
) -> Result<Option<i64>> {
    let sender = crate::provider::wire::Sender {
        email: cfg.sender.email.clone().unwrap_or_default(),
        firstname: cfg.sender.firstname.clone().unwrap_or_default(),
        lastname: cfg.sender.lastname.clone().unwrap_or_default(),
        address: cfg.sender.address.clone().unwrap_or_default(),
        phone: cfg.sender.phone.clone().unwrap_or_default(),
    };
    let file_path = args.file.display().to_string();
    let new = NewRun {
        identity,
        file_sha256: file_sha,
        label: &args.label,
        file_path: &file_path,
        provider,
        sender: &sender,
    };
    let mut imp = store.begin_import(&new)?;
    let opts = crate::validate::ScanOptions {
        sheet: args.sheet.clone(),
        rejected_path: Some(rejected_path.to_path_buf()),
    };
    // Validation (parsing, checks) runs on its own thread and hands valid
    // payouts over a bounded channel to this one, which inserts them: the
    // two halves overlap, and the channel bound keeps memory constant.
    let (summary, first_errors) = std::thread::scope(|scope| -> Result<_> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<crate::payout::Payout>>(IMPORT_CHANNEL);
        let scanner = scope.spawn(move || {
            let mut first_errors: Vec<String> = Vec::new();
            let mut batch = Vec::with_capacity(IMPORT_BATCH);
            let summary = crate::validate::scan(&args.file, cfg, &opts, |outcome| {
                match outcome {
                    crate::validate::RowOutcome::Valid(p) => {
                        batch.push(p);
                        if batch.len() == IMPORT_BATCH {
                            let full =
                                std::mem::replace(&mut batch, Vec::with_capacity(IMPORT_BATCH));
                            tx.send(full)
                                .map_err(|_| anyhow::anyhow!("import stopped"))?;
                        }
                    }
                    crate::validate::RowOutcome::Rejected(r) => {
                        if first_errors.len() < 10 {
                            first_errors.extend(r.errors.iter().map(|e| e.to_string()));
                        }
                    }
                }
                Ok(())
            });
            if summary.is_ok() && !batch.is_empty() {
                let _ = tx.send(batch);
            }
            (summary, first_errors)
        });
        let mut insert_error = None;
        'batches: for batch in rx.iter() {
            for p in batch {
                let id = match &p.transaction_id {
                    Some(t) => std::borrow::Cow::Borrowed(t.as_str()),
                    None => std::borrow::Cow::Owned(derived_transaction_id(identity, p.row)),
                };
                if let Err(e) = imp.add(&p, &id) {
                    insert_error = Some(e);
                    break 'batches;
                }
            }
        }
        drop(rx);
        let (summary, first_errors) = scanner
            .join()
            .map_err(|_| anyhow::anyhow!("the validation thread panicked"))?;
        if let Some(e) = insert_error {
            return Err(e);
        }
        Ok((summary?, first_errors))
    })?;
    if summary.rejected == 0 {
        // The file holds only its header: remove it, so that a rejected.csv
        // beside the report always means rows to fix.
        let _ = std::fs::remove_file(rejected_path);
    }
    if summary.rejected > 0 {
        drop(imp);
        for e in first_errors.iter().take(10) {
            eprintln!("  {e}");
        }
        eprintln!(
            "payrun: {} of {} rows rejected; nothing was sent. Fix them (see {}) and run again.",
            summary.rejected,
            summary.rows,
            rejected_path.display()
        );
        return Ok(None);
    }
    match imp.commit() {
        Ok(id) => Ok(Some(id)),
        Err(e) => match e.downcast::<store::DuplicateIds>() {
            Ok(dups) => {
                for line in &dups.0 {
                    eprintln!("  {line}");
                }
                eprintln!("payrun: transaction ids already used; nothing was imported or sent.");
                Ok(None)
            }
            Err(e) => Err(e),
        },
    }
}

// ---------------------------------------------------------------------------
// The engine proper

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    Quiet,
    Bars,
    Plain,
}

#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub rate: u32,
    pub concurrency: usize,
    pub ambiguous: Ambiguous,
    pub initiate_only: bool,
    pub progress: ProgressMode,
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Unauthorized(String),
    Interrupted,
    Unreachable(String),
}

#[derive(Debug, Default)]
pub struct RunStats {
    pub stop: Option<Stop>,
}

#[derive(Default)]
struct Counters {
    initiated: AtomicU64,
    executed: AtomicU64,
    failed: AtomicU64,
    unknown: AtomicU64,
    calls: AtomicU64,
}

struct Ctx {
    client: Client,
    writer: Writer,
    limiter: Limiter,
    opts: EngineOptions,
    stopping: AtomicBool,
    stop: Mutex<Option<Stop>>,
    halted: Mutex<HashSet<String>>,
    counters: Counters,
}

impl Ctx {
    fn request_stop(&self, why: Stop) {
        let mut s = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(why);
        }
        self.stopping.store(true, Ordering::SeqCst);
    }
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
    fn halted(&self, currency: &str) -> bool {
        self.halted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(currency)
    }
    fn halt(&self, currency: &str) {
        self.halted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(currency.to_string());
    }
}

/// Moves every open payout of a run to a final state (or to `initiated`
/// with `initiate_only`). Returns when done, stopped or interrupted.
pub async fn execute_run(
    client: &Client,
    writer: &Writer,
    run_id: i64,
    resume: Vec<Work>,
    total_open: u64,
    opts: &EngineOptions,
) -> Result<RunStats> {
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        writer: writer.clone(),
        limiter: Limiter::new(opts.rate),
        opts: opts.clone(),
        stopping: AtomicBool::new(false),
        stop: Mutex::new(None),
        halted: Mutex::new(HashSet::new()),
        counters: Counters::default(),
    });

    let progress = Progress::start(ctx.clone(), total_open, opts.progress);

    let interrupt = {
        let ctx = ctx.clone();
        AbortOnDrop(tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                ctx.request_stop(Stop::Interrupted);
                if !matches!(ctx.opts.progress, ProgressMode::Quiet) {
                    eprintln!(
                        "payrun: stopping after the calls in flight (Ctrl-C again to quit at once)"
                    );
                }
            }
            // A second Ctrl-C quits at once. That is as safe as a crash:
            // every intent is committed before its request leaves, and the
            // next run resumes.
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("payrun: quitting now; run the same command again to resume");
                std::process::exit(crate::exit::FATAL);
            }
        }))
    };

    let sem = Arc::new(Semaphore::new(opts.concurrency));
    let mut tasks: JoinSet<Result<()>> = JoinSet::new();
    let mut held: Vec<Transition> = Vec::new();
    let mut error: Option<anyhow::Error> = None;

    let mut queue: std::collections::VecDeque<(Work, Phase)> = resume
        .into_iter()
        .filter_map(|w| match w.state {
            State::Initiating => Some((w, Phase::Initiate { resumed: true })),
            State::Executing => Some((w, Phase::Execute { resumed: true })),
            State::Initiated if !opts.initiate_only => Some((w, Phase::Execute { resumed: false })),
            _ => None,
        })
        .collect();
    // Claim as many as can be in flight, so the claimed-but-unsent window
    // stays one round deep.
    let claim_size = opts.concurrency.clamp(8, 512);
    loop {
        if ctx.stopping() {
            break;
        }
        if queue.is_empty() {
            match writer.claim(run_id, claim_size).await {
                Ok(batch) if batch.is_empty() => break,
                Ok(batch) => queue.extend(
                    batch
                        .into_iter()
                        .map(|w| (w, Phase::Initiate { resumed: false })),
                ),
                Err(e) => {
                    error = Some(e);
                    ctx.request_stop(Stop::Interrupted);
                    break;
                }
            }
        }
        while let Some((work, phase)) = queue.pop_front() {
            let permit = tokio::select! {
                p = sem.clone().acquire_owned() => p.expect("semaphore closed"),
                Some(res) = tasks.join_next(), if !tasks.is_empty() => {
                    note_task(res, &ctx, &mut error);
                    queue.push_front((work, phase));
                    continue;
                }
            };
            if ctx.stopping() {
                queue.push_front((work, phase));
                break;
            }
            let ctx2 = ctx.clone();
            tasks.spawn(async move {
                let _permit = permit;
                pay_one(&ctx2, work, phase).await
            });
        }
        // Reap finished tasks without waiting.
        while let Some(res) = tasks.try_join_next() {
            note_task(res, &ctx, &mut error);
        }
    }
    // Payouts claimed but never sent go back to pending. Resumed intents
    // stay as they are: their outcome is still open.
    for (work, phase) in queue {
        if phase == (Phase::Initiate { resumed: false }) {
            held.push(Transition::to(work.id, State::Pending));
        }
    }
    while let Some(res) = tasks.join_next().await {
        note_task(res, &ctx, &mut error);
    }
    let held = if held.is_empty() {
        Ok(())
    } else {
        writer.apply(held).await
    };
    drop(interrupt);
    progress.finish();
    if let Some(e) = error {
        return Err(e);
    }
    held?;
    let stop = ctx.stop.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(RunStats { stop })
}

/// Aborts a background task however the function that owns it returns.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn note_task(
    res: std::result::Result<Result<()>, tokio::task::JoinError>,
    ctx: &Ctx,
    error: &mut Option<anyhow::Error>,
) {
    let err = match res {
        Ok(Ok(())) => return,
        Ok(Err(e)) => e,
        Err(e) => anyhow::anyhow!("a payout task failed: {e}"),
    };
    ctx.request_stop(Stop::Interrupted);
    if error.is_none() {
        *error = Some(err);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Send `/initiates`. `resumed`: the payout was found `initiating`.
    Initiate { resumed: bool },
    /// Send `/executes`. `resumed`: found `executing` (outcome unknown).
    Execute { resumed: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Initiate,
    Execute,
}

/// The end of one call, after retries.
struct CallEnd {
    outcome: Option<Outcome>,
    /// Requests that left (or may have left) the process.
    sent: u32,
    /// Some attempt may have been carried out by the provider.
    maybe_landed: bool,
}

/// Drives one payout from its current phase to its next resting state.
async fn pay_one(ctx: &Ctx, work: Work, phase: Phase) -> Result<()> {
    let id = work.id;
    if let Phase::Initiate { resumed } = phase {
        let end = call_with_retries(ctx, Call::Initiate, &work).await;
        let Some(outcome) = end.outcome else {
            // Stopped before an answer: never sent means back to pending.
            if !end.maybe_landed && !resumed {
                let mut t = Transition::to(id, State::Pending);
                t.attempts = end.sent;
                ctx.writer.apply(vec![t]).await?;
            }
            return Ok(());
        };
        fault::hit("after_answer");
        match outcome {
            Outcome::Accepted { code, message, .. } => {
                ctx.counters.initiated.fetch_add(1, Ordering::Relaxed);
                let next = if ctx.opts.initiate_only || ctx.halted(&work.request.currency) {
                    State::Initiated
                } else {
                    State::Executing
                };
                let mut t = Transition::to(id, next);
                t.code = Some(code);
                t.message = Some(message);
                t.attempts = end.sent;
                t.stamp_initiated = true;
                if next == State::Initiated && !ctx.opts.initiate_only {
                    t.code = Some("NOT_EXECUTED".into());
                    t.message = Some(format!(
                        "not executed: the {} wallet ran out; top it up and run again",
                        work.request.currency
                    ));
                }
                ctx.writer.apply(vec![t]).await?;
                if next == State::Initiated {
                    return Ok(());
                }
                fault::hit("after_intent_commit");
            }
            Outcome::Unauthorized { http, message } => {
                let mut t = Transition::to(
                    id,
                    if end.maybe_landed || resumed {
                        State::Initiating
                    } else {
                        State::Pending
                    },
                );
                t.attempts = end.sent;
                ctx.writer.apply(vec![t]).await?;
                ctx.request_stop(Stop::Unauthorized(format!("HTTP {http}: {message}")));
                return Ok(());
            }
            Outcome::Mismatch { .. } => {
                // The answer belongs to another request: never execute.
                ctx.counters.unknown.fetch_add(1, Ordering::Relaxed);
                let mut t = Transition::to(id, State::Unknown);
                t.code = Some(outcome.code().to_string());
                t.message = Some(outcome.message());
                t.attempts = end.sent;
                ctx.writer.apply(vec![t]).await?;
                return Ok(());
            }
            other => {
                // Retries exhausted on a transport failure (never sent, 5xx,
                // 429): the provider is down or overloaded, not refusing this
                // payout. Failing row after row would be wrong; stop the run
                // with the payout resumable instead.
                if !matches!(other, Outcome::Refused { .. }) {
                    let back = if end.maybe_landed || resumed {
                        State::Initiating
                    } else {
                        State::Pending
                    };
                    let mut t = Transition::to(id, back);
                    t.attempts = end.sent;
                    ctx.writer.apply(vec![t]).await?;
                    ctx.request_stop(Stop::Unreachable(failure_message(&other, end.sent)));
                    return Ok(());
                }
                // Refused: initiation moves no money, so a failed
                // initiation is final and safe.
                ctx.counters.failed.fetch_add(1, Ordering::Relaxed);
                let mut t = Transition::to(id, State::InitiateFailed);
                t.code = Some(other.code().to_string());
                t.message = Some(failure_message(&other, end.sent));
                t.attempts = end.sent;
                ctx.writer.apply(vec![t]).await?;
                return Ok(());
            }
        }
    }

    // Execution. The intent (`executing`) is committed at this point.
    let resumed = matches!(phase, Phase::Execute { resumed: true });
    if matches!(phase, Phase::Execute { resumed: false }) && work.state == State::Initiated {
        if ctx.halted(&work.request.currency) {
            return Ok(());
        }
        ctx.writer
            .apply(vec![Transition::to(id, State::Executing)])
            .await?;
        fault::hit("after_intent_commit");
    }
    if resumed && ctx.opts.ambiguous == Ambiguous::Hold {
        ctx.counters.unknown.fetch_add(1, Ordering::Relaxed);
        let mut t = Transition::to(id, State::Unknown);
        t.code = Some("AMBIGUOUS_HELD".into());
        t.message = Some(
            "interrupted while executing; held for `payrun reconcile` (ambiguous = hold)".into(),
        );
        ctx.writer.apply(vec![t]).await?;
        return Ok(());
    }
    let end = call_with_retries(ctx, Call::Execute, &work).await;
    let uncertain = resumed || end.maybe_landed;
    let Some(outcome) = end.outcome else {
        if !uncertain {
            let mut t = Transition::to(id, State::Initiated);
            t.attempts = end.sent;
            ctx.writer.apply(vec![t]).await?;
        } else if end.sent > 0 {
            let mut t = Transition::to(id, State::Executing);
            t.attempts = end.sent;
            ctx.writer.apply(vec![t]).await?;
        }
        return Ok(());
    };
    fault::hit("after_answer");
    let mut t = Transition::to(id, State::Unknown);
    t.attempts = end.sent;
    t.code = Some(outcome.code().to_string());
    t.message = Some(outcome.message().to_string());
    match &outcome {
        Outcome::Accepted { .. } => {
            ctx.counters.executed.fetch_add(1, Ordering::Relaxed);
            t.to = State::Executed;
            t.stamp_executed = true;
        }
        Outcome::Refused {
            transaction_failed,
            code,
            ..
        } if *transaction_failed || !uncertain => {
            ctx.counters.failed.fetch_add(1, Ordering::Relaxed);
            t.to = State::ExecuteFailed;
            if code == crate::provider::wire::codes::INSUFFICIENT_BALANCE {
                ctx.halt(&work.request.currency);
            }
        }
        Outcome::Unauthorized { http, message } => {
            t.to = if uncertain {
                State::Executing
            } else {
                State::Initiated
            };
            t.code = None;
            t.message = None;
            ctx.writer.apply(vec![t]).await?;
            ctx.request_stop(Stop::Unauthorized(format!("HTTP {http}: {message}")));
            return Ok(());
        }
        Outcome::Stop { detail, .. } => {
            // Configuration stop (redirect, wrong route, long Retry-After):
            // the intent stays in place and the run stops, resumable.
            t.to = State::Executing;
            t.code = None;
            t.message = None;
            let why = detail.clone();
            ctx.writer.apply(vec![t]).await?;
            ctx.request_stop(Stop::Unreachable(why));
            return Ok(());
        }
        Outcome::NotSent { .. } | Outcome::RateLimited { .. } if !uncertain => {
            // Never carried out, known for sure: the payout is still only
            // initiated. Stop the run (the provider is down or throttling
            // hard); the next run executes it.
            t.to = State::Initiated;
            t.code = None;
            t.message = None;
            ctx.writer.apply(vec![t]).await?;
            ctx.request_stop(Stop::Unreachable(failure_message(&outcome, end.sent)));
            return Ok(());
        }
        _ => {
            // Ambiguous, or an error after an ambiguous attempt: the money
            // may have moved. Never `failed` (that invites a second payment).
            ctx.counters.unknown.fetch_add(1, Ordering::Relaxed);
            t.to = State::Unknown;
            t.message = Some(format!(
                "outcome unknown after {} request(s): {}; check with the provider, then `payrun reconcile`",
                end.sent,
                outcome.message()
            ));
        }
    }
    ctx.writer.apply(vec![t]).await?;
    Ok(())
}

fn failure_message(outcome: &Outcome, sent: u32) -> String {
    match outcome {
        Outcome::Refused { message, .. } => message.clone(),
        Outcome::NotSent { detail } => {
            format!("not sent after {sent} attempt(s): {detail}")
        }
        Outcome::Ambiguous { detail } => format!("gave up after {sent} attempt(s): {detail}"),
        Outcome::RateLimited { .. } => format!("still rate limited after {sent} attempt(s)"),
        other => other.message().to_string(),
    }
}

/// One call with the retry policy of DESIGN.md section 4. Returns `outcome:
/// None` when the run is stopping and no final answer was obtained.
async fn call_with_retries(ctx: &Ctx, call: Call, work: &Work) -> CallEnd {
    let mut end = CallEnd {
        outcome: None,
        sent: 0,
        maybe_landed: false,
    };
    let mut failures = 0u32;
    let mut limited = 0u32;
    loop {
        ctx.limiter.acquire().await;
        if ctx.stopping() {
            return end;
        }
        if end.sent == 0 {
            fault::hit("before_send");
        }
        end.sent += 1;
        ctx.counters.calls.fetch_add(1, Ordering::Relaxed);
        let outcome = match call {
            Call::Initiate => ctx.client.initiate(&work.request).await,
            Call::Execute => ctx.client.execute(&work.request.transaction_id).await,
        };
        tracing::debug!(
            transaction_id = %work.request.transaction_id,
            call = ?call,
            code = outcome.code(),
            "provider answered"
        );
        match outcome {
            Outcome::RateLimited { retry_after } => {
                ctx.limiter.on_rate_limited(retry_after);
                limited += 1;
                if limited >= MAX_RATE_LIMITED {
                    end.outcome = Some(outcome);
                    return end;
                }
            }
            Outcome::NotSent { .. } => {
                failures += 1;
                if failures >= MAX_ATTEMPTS {
                    end.outcome = Some(outcome);
                    return end;
                }
                backoff(failures).await;
            }
            Outcome::Ambiguous { .. } => {
                end.maybe_landed = true;
                failures += 1;
                let resend = call == Call::Initiate || ctx.opts.ambiguous == Ambiguous::Resend;
                if !resend || failures >= MAX_ATTEMPTS {
                    end.outcome = Some(outcome);
                    return end;
                }
                backoff(failures).await;
            }
            _ => {
                ctx.limiter.on_success();
                end.outcome = Some(outcome);
                return end;
            }
        }
    }
}

/// Full-jitter exponential backoff.
async fn backoff(attempt: u32) {
    let ceiling = BACKOFF_BASE
        .saturating_mul(1u32 << attempt.min(16))
        .min(BACKOFF_CAP);
    let wait = rand::rng().random_range(0..=ceiling.as_millis() as u64);
    tokio::time::sleep(Duration::from_millis(wait)).await;
}

// ---------------------------------------------------------------------------
// Rate limiting: one GCRA limiter shared by every call, with AIMD on 429.

struct LimiterState {
    rate: u32,
    limiter: Arc<DefaultDirectRateLimiter>,
    paused_until: Option<tokio::time::Instant>,
    successes: u32,
}

pub struct Limiter {
    max_rate: u32,
    state: Mutex<LimiterState>,
}

/// The burst allowed by the limiter: a few calls' worth, so timer lateness
/// of the workers is absorbed instead of lost, while no one-second window
/// sees much more than the rate.
fn burst_for(rate: u32) -> NonZeroU32 {
    NonZeroU32::new((rate / 20).clamp(1, 50)).expect("non-zero")
}

fn make_limiter(rate: u32) -> Arc<DefaultDirectRateLimiter> {
    let rate = NonZeroU32::new(rate.max(1)).expect("non-zero");
    Arc::new(RateLimiter::direct(
        Quota::per_second(rate).allow_burst(burst_for(rate.get())),
    ))
}

impl Limiter {
    pub fn new(rate: u32) -> Limiter {
        Limiter {
            max_rate: rate.max(1),
            state: Mutex::new(LimiterState {
                rate: rate.max(1),
                limiter: make_limiter(rate),
                paused_until: None,
                successes: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LimiterState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a pause to end and for a slot under the current rate.
    pub async fn acquire(&self) {
        loop {
            let (limiter, pause) = {
                let s = self.lock();
                (s.limiter.clone(), s.paused_until)
            };
            if let Some(until) = pause
                && until > tokio::time::Instant::now()
            {
                tokio::time::sleep_until(until).await;
                continue;
            }
            limiter.until_ready().await;
            let pause = self.lock().paused_until;
            if matches!(pause, Some(until) if until > tokio::time::Instant::now()) {
                continue;
            }
            return;
        }
    }

    /// A 429: pause every worker until `Retry-After`, halve the rate.
    pub fn on_rate_limited(&self, retry_after: Duration) {
        let mut s = self.lock();
        let until = tokio::time::Instant::now() + retry_after;
        s.paused_until = Some(s.paused_until.map_or(until, |u| u.max(until)));
        let new_rate = (s.rate / 2).max(1);
        if new_rate != s.rate {
            s.rate = new_rate;
            s.limiter = make_limiter(new_rate);
        }
        s.successes = 0;
        tracing::info!(rate = s.rate, ?retry_after, "rate limited by the provider");
    }

    /// A success: after about a second's worth of them, raise the rate by a
    /// tenth of the configured maximum (additive increase).
    pub fn on_success(&self) {
        let mut s = self.lock();
        if s.rate >= self.max_rate {
            return;
        }
        s.successes += 1;
        if s.successes >= s.rate {
            s.rate = (s.rate + (self.max_rate / 10).max(1)).min(self.max_rate);
            s.limiter = make_limiter(s.rate);
            s.successes = 0;
        }
    }

    pub fn current_rate(&self) -> u32 {
        self.lock().rate
    }
}

// ---------------------------------------------------------------------------
// Progress

struct Progress {
    task: Option<tokio::task::JoinHandle<()>>,
    done: Arc<AtomicBool>,
}

impl Progress {
    fn start(ctx: Arc<Ctx>, total: u64, mode: ProgressMode) -> Progress {
        let done = Arc::new(AtomicBool::new(false));
        if mode == ProgressMode::Quiet || total == 0 {
            return Progress { task: None, done };
        }
        let done2 = done.clone();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let c = &ctx.counters;
            let snapshot = |c: &Counters| {
                (
                    c.initiated.load(Ordering::Relaxed),
                    c.executed.load(Ordering::Relaxed),
                    c.failed.load(Ordering::Relaxed),
                    c.unknown.load(Ordering::Relaxed),
                    c.calls.load(Ordering::Relaxed),
                )
            };
            match mode {
                ProgressMode::Bars => {
                    let multi = indicatif::MultiProgress::new();
                    let style = indicatif::ProgressStyle::with_template(
                        "{prefix:>9} [{bar:40}] {pos}/{len} {per_sec} eta {eta} {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> ");
                    let init = multi.add(indicatif::ProgressBar::new(total));
                    init.set_style(style.clone());
                    init.set_prefix("initiated");
                    let exec = multi.add(indicatif::ProgressBar::new(total));
                    exec.set_style(style);
                    exec.set_prefix("executed");
                    loop {
                        let (i, e, f, u, calls) = snapshot(c);
                        init.set_position(i);
                        exec.set_position(e);
                        let secs = started.elapsed().as_secs_f64().max(0.001);
                        exec.set_message(format!(
                            "failed {f} unknown {u} | {:.0} calls/s",
                            calls as f64 / secs
                        ));
                        if done2.load(Ordering::Relaxed) {
                            init.finish();
                            exec.finish();
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
                _ => {
                    let mut last = Instant::now();
                    loop {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        let finished = done2.load(Ordering::Relaxed);
                        if finished || last.elapsed() >= PLAIN_PROGRESS_EVERY {
                            last = Instant::now();
                            let (i, e, f, u, calls) = snapshot(c);
                            let secs = started.elapsed().as_secs_f64().max(0.001);
                            eprintln!(
                                "payrun: {i}/{total} initiated, {e}/{total} executed, {f} failed, {u} unknown, {:.0} calls/s",
                                calls as f64 / secs
                            );
                        }
                        if finished {
                            break;
                        }
                    }
                }
            }
        });
        Progress {
            task: Some(task),
            done,
        }
    }

    fn finish(self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.task {
            // Let it print its last line; it checks `done` every 200 ms.
            tokio::task::block_in_place(|| {
                let _ = tokio::runtime::Handle::current().block_on(t);
            });
        }
    }
}

pub mod fault {
    //! Test-only fault points: `PAYRUN_FAULT=name` (or `name:N` for the Nth
    //! hit) makes the process die on the spot at that point, as a power cut
    //! would, so crash tests hit each window on purpose. Points:
    //! `before_send` (intent committed, request not yet sent),
    //! `after_answer` (answer received, outcome not committed),
    //! `after_intent_commit` (execute intent committed), `before_commit`
    //! (a group commit about to be committed).
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    static SPEC: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static HITS: AtomicU64 = AtomicU64::new(0);

    pub fn hit(name: &str) {
        let spec = SPEC.get_or_init(|| {
            let v = std::env::var("PAYRUN_FAULT").ok()?;
            let (n, k) = match v.split_once(':') {
                Some((n, k)) => (n.to_string(), k.parse().unwrap_or(1)),
                None => (v, 1),
            };
            Some((n, k))
        });
        if let Some((n, k)) = spec
            && n == name
            && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *k
        {
            eprintln!("payrun: fault point {name} reached, dying");
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_derived_ids_are_deterministic() {
        let a = run_identity("abcdef0123456789abcdef", "");
        assert_eq!(a, "abcdef0123456789abcdef");
        let b = run_identity("abcdef0123456789abcdef", "june");
        assert_ne!(a, b);
        assert_eq!(b, run_identity("abcdef0123456789abcdef", "june"));
        assert_eq!(
            derived_transaction_id(&a, 7),
            "pr-abcdef0123456789-000000007"
        );
    }

    #[test]
    fn sibling_paths() {
        assert_eq!(
            sibling(Path::new("report.csv"), "rejected.csv"),
            PathBuf::from("rejected.csv")
        );
        assert_eq!(
            sibling(Path::new("/tmp/x/report.csv"), "rejected.csv"),
            PathBuf::from("/tmp/x/rejected.csv")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn limiter_halves_on_429_and_recovers() {
        let l = Limiter::new(40);
        assert_eq!(l.current_rate(), 40);
        l.on_rate_limited(Duration::from_secs(2));
        assert_eq!(l.current_rate(), 20);
        let before = tokio::time::Instant::now();
        l.acquire().await;
        assert!(tokio::time::Instant::now() - before >= Duration::from_secs(2));
        for _ in 0..20 {
            l.on_success();
        }
        assert_eq!(l.current_rate(), 24);
        for _ in 0..1000 {
            l.on_success();
        }
        assert_eq!(l.current_rate(), 40);
    }
}
