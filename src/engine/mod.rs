//! The payout engine: `payrun run` without its command line. It imports a
//! validated file into the checkpoint, then moves every payout through the
//! state machine ([`crate::machine`]) with bounded concurrency under one
//! shared rate limiter, committing each intent before its request leaves
//! and each outcome after its answer arrives. It never talks SQL: it sends
//! commands to the store's writer thread and awaits their commit. It never
//! prints and never exits: it returns a [`RunOutcome`] for `cmd` to show.
//!
//! Initiation and execution overlap: a payout is executed as soon as it is
//! initiated, so the pipeline never idles between phases. The commit that
//! records "initiated" carries the intent to execute (`executing`) too,
//! before the execute is sent: one write instead of two. A crash leaves the
//! payout `initiating` or `executing`, never executed without its intent,
//! and an `--initiate-only` run resumes neither as an execute, so the
//! approval gate holds (ARCHITECTURE.md, "Money invariants").
//!
//! Files: `identity` (period, run identity, stable row ids, the input
//! snapshot), `repeat` (the re-run decisions and the repeat guard), `import`
//! (validated import), `failed` (`failed.csv`), `outputs` (the files a
//! run writes, and the guard over them), `schedule` (the worker
//! pool), `pay` (one payout's calls), `retry`, `progress`, `lease` (a
//! worker of a run shared through PostgreSQL), and `reconcile` (settling
//! unknown payouts). The rate limiter is [`crate::limiter`].

pub mod approval;
pub mod failed;
mod find;
pub mod gate;
pub mod guard;
pub mod identity;
pub mod import;
pub mod lease;
pub mod outputs;
pub mod pay;
pub mod progress;
pub mod reconcile;
pub mod repeat;
mod resend;
pub mod retry;
mod schedule;
pub mod settle;
pub mod stops;
pub mod verdict;

pub use import::{EditedCopy, Imported, NotFailed, OpenElsewhere, Rejected, Repeats};
pub use progress::ProgressTarget;
use schedule::{Counters, Ctx};
pub use schedule::{DEFAULT_RESEND_DELAY, EngineOptions, RunStats, execute_run};

use crate::config::Config;
use crate::machine::State;
use crate::machine::decide;
use crate::provider::Client;
use crate::shutdown::Shutdown;
use crate::store::{Db, RunLock, Store, Totals, Writer};
use anyhow::{Context, Result, bail};
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which provider a run talks to.
#[derive(Debug, Clone)]
pub enum ProviderChoice {
    /// The built-in simulator, started in-process for the run.
    Sandbox,
    /// A real provider, and how to get its key when a call is to be made.
    Remote { base_url: String, api_key: ApiKey },
}

/// The provider's API key, read only when the run has a call to make: a
/// finished run run again (to rewrite its report, or by a cron job that
/// does not know it is done) needs none. The command layer says where it
/// comes from (`PAYRUN_API_KEY`, `api_key_file`); the library never reads
/// the environment.
#[derive(Clone)]
pub struct ApiKey(std::sync::Arc<dyn Fn() -> Result<SecretString> + Send + Sync>);

impl ApiKey {
    /// A key read by `read` when it is first needed (once per run).
    pub fn later(read: impl Fn() -> Result<SecretString> + Send + Sync + 'static) -> ApiKey {
        ApiKey(std::sync::Arc::new(read))
    }

    fn read(&self) -> Result<SecretString> {
        (self.0)()
    }
}

impl From<SecretString> for ApiKey {
    fn from(key: SecretString) -> ApiKey {
        ApiKey::later(move || Ok(key.clone()))
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(..)")
    }
}

/// Everything a run needs, resolved once from the flags and `payrun.toml`
/// by the command layer.
#[derive(Debug, Clone)]
pub struct Settings {
    pub file: PathBuf,
    /// For validation and the sender; the flags already merged into the
    /// fields below.
    pub config: Config,
    pub provider: ProviderChoice,
    /// The checkpoint: a SQLite file (one process at a time) or a
    /// PostgreSQL database (several workers may share a run).
    pub db: Db,
    pub report: PathBuf,
    pub label: String,
    pub new_run: bool,
    pub sheet: Option<String>,
    /// `--skip-hidden-rows`: leave out a workbook's hidden rows.
    pub skip_hidden_rows: bool,
    /// `--assume-no-hidden-rows`: read an .xls/.xlsb workbook although its
    /// hidden rows cannot be detected.
    pub assume_no_hidden_rows: bool,
    /// The batch/period reference (`--period`, `period`, default: the
    /// current month); part of every derived transaction id.
    pub period: String,
    /// Whether the period was given (flag or key) rather than defaulted:
    /// a defaulted one lets an unfinished run of the same file resume
    /// after the month turned.
    pub period_given: bool,
    /// `--allow-repeats`: rows matching recent payouts are paid anyway.
    pub allow_repeats: bool,
    /// `repeat_window_days`: how far back the repeat guard looks.
    pub repeat_window_days: u32,
    pub import_only: bool,
    pub engine: EngineOptions,
    /// `--expect-total CUR=AMOUNT`: the approver's control totals; the run
    /// executes nothing unless the initiated payouts add up to them.
    pub expect_total: Vec<(String, rust_decimal::Decimal)>,
    /// Who runs this command (`--as`): recorded as the preparer of a run
    /// it imports, who may not approve it.
    pub preparer: crate::who::Person,
    /// Four eyes: whether an approval is required, and waiting for it.
    pub gate: gate::Gate,
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Unauthorized(String),
    Interrupted,
    Unreachable(String),
    /// The provider is set up wrongly for payrun (redirect, no such route,
    /// 405, a long `Retry-After`): the message names the cause and the fix.
    Config(String),
    /// This worker's lease on a shared run lapsed: it sent nothing more
    /// (the message says why and what to do); live workers adopt its
    /// payouts.
    LeaseLost(String),
}

/// Something worth telling the operator while the run goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The built-in sandbox is up at this URL.
    SandboxStarted(String),
    /// Rows of the file already paid (or held) by earlier runs: listed in
    /// the report, not sent again.
    Skipped { rows: u64 },
    /// The file is being checked and recorded as a new run (every row
    /// validated, numbered, looked up among earlier payouts): a million
    /// rows take seconds, said before they start.
    Importing { file: String },
    /// The import ended: this many payouts recorded, in this long.
    Imported {
        payouts: u64,
        elapsed: std::time::Duration,
    },
    /// The report and the files beside it are being written.
    WritingReport { path: PathBuf },
    /// This process works on the run as one of its workers (PostgreSQL).
    Joined {
        run_id: i64,
        worker: i64,
        lease: std::time::Duration,
    },
    /// An existing run of this file is resumed.
    Resuming {
        run_id: i64,
        file_path: String,
        created_at: String,
    },
    /// The run's approval holds: executing.
    Approved(Box<crate::store::ApprovalEvent>),
    /// No valid approval yet: waiting for one (the reason inside).
    AwaitingApproval(Box<gate::Unapproved>),
    /// Asking the provider's status call before the verdict
    /// (`settle_wait`): where it stands after a round.
    Settling(crate::reconcile::poll::Progress),
}

/// How a run ended, for the command layer to show and map to an exit code.
#[derive(Debug)]
pub enum RunOutcome {
    /// Rows were rejected: nothing was recorded or sent.
    Rejected(Rejected),
    /// Transaction ids already used: nothing was recorded or sent.
    DuplicateIds(Vec<String>),
    /// Rows repeating earlier payments of the same person: nothing was
    /// recorded or sent.
    Repeats(Repeats),
    /// Rows of a `failed.csv` naming payouts that did not fail: nothing
    /// was recorded or sent.
    NotFailed(NotFailed),
    /// `--import-only`: the run is recorded, nothing was sent.
    Imported {
        run_id: i64,
        payouts: u64,
        file_path: String,
    },
    /// `--expect-total` did not hold: nothing was sent.
    TotalsRefused(approval::TotalsRefused),
    /// An approval is required and none holds: nothing was sent.
    Unapproved(Box<gate::Unapproved>),
    /// The run went (or stopped) and its report is written.
    Ran(Box<Ran>),
}

/// The end of a run that sent requests.
#[derive(Debug)]
pub struct Ran {
    pub run_id: i64,
    pub counts: BTreeMap<State, u64>,
    pub totals: Totals,
    pub report: PathBuf,
    pub stop: Option<Stop>,
    pub initiate_only: bool,
    /// `--initiate-only`: the control totals and the file they were
    /// written to, for the approver.
    pub approval: Option<(PathBuf, BTreeMap<String, crate::store::Tally>)>,
    /// Rows already paid by earlier runs, not sent again.
    pub skipped: u64,
    /// `failed.csv`, when payouts failed and the file could be written.
    pub failed: Option<PathBuf>,
    /// The rate limiter's figures at the end of the run (the rate payrun
    /// settled on, 429s, latency), for the operator to choose a fixed rate.
    pub limiter: Option<crate::limiter::LimiterStats>,
    /// What became of the rows, grouped by what to do next.
    pub verdict: verdict::Verdict,
    /// What the run was allowed beyond the rules (second payments, a
    /// totals row used, rows skipped as already paid).
    pub overrides: crate::store::Overrides,
    /// Where the run's approval stands (`None`: never approved, and none
    /// required).
    pub signoff: Option<crate::signoff::Standing>,
}

impl Ran {
    pub fn count(&self, s: State) -> u64 {
        self.counts.get(&s).copied().unwrap_or(0)
    }

    /// Every payout reached the end the run was asked for.
    pub fn complete(&self) -> bool {
        decide::run_complete(|s| self.count(s), self.initiate_only)
    }
}

/// A run's provider: the client, the name recorded with the run, and the
/// sandbox serving it (if any), to shut down at the end.
struct Provider {
    client: Client,
    name: String,
    sandbox: Option<crate::sandbox::Running>,
}

/// The file in which the in-process sandbox keeps its books between
/// commands: beside the run's database, so `run --sandbox --initiate-only`
/// then `run --sandbox` executes what the first command initiated, and a
/// top-up (`payrun sandbox --state FILE --top-up CUR=AMOUNT`) lasts.
pub fn sandbox_state_file(db: &std::path::Path) -> PathBuf {
    let mut name = db.as_os_str().to_os_string();
    name.push(".sandbox.json");
    PathBuf::from(name)
}

/// Why `--sandbox` needs a database file.
pub const SANDBOX_NEEDS_A_FILE: &str = "--sandbox keeps the simulator's books in a file beside the \
     database, so it needs a database file, not PostgreSQL: rehearse with --sandbox on a file \
     (--db payrun-sandbox.db), or start `payrun sandbox` and point every worker at it with --base-url";

/// The key of a remote provider, or `None` when none is needed: without
/// one (not set, unreadable), a run of this file already in the database
/// with nothing left to send or settle (nothing open, nothing unknown)
/// goes on without it; anything else is refused with the key's error,
/// before anything is recorded or sent.
fn key_if_needed(
    settings: &Settings,
    store: &Store,
    snapshot: &identity::Snapshot,
    batch: &identity::Batch,
) -> Result<Option<SecretString>> {
    let ProviderChoice::Remote { api_key, .. } = &settings.provider else {
        return Ok(None);
    };
    if settings.import_only {
        return Ok(None);
    }
    let missing = match api_key.read() {
        Ok(key) => return Ok(Some(key)),
        Err(e) => e,
    };
    let run = store.find_run(&identity::run_identity(&snapshot.sha256, batch))?;
    let nothing_to_call = match run {
        Some(run) => {
            let counts = store.state_counts(run.id)?;
            let count = |s: State| counts.get(&s).copied().unwrap_or(0);
            decide::run_settled(count) && count(State::Unknown) == 0
        }
        None => false,
    };
    if nothing_to_call {
        Ok(None)
    } else {
        Err(missing)
    }
}

async fn open_provider(
    choice: &ProviderChoice,
    key: Option<&SecretString>,
    config: &Config,
    db: &Db,
    notify: &dyn Fn(Event),
) -> Result<Provider> {
    match choice {
        ProviderChoice::Sandbox => {
            let db = db.file().context(SANDBOX_NEEDS_A_FILE)?;
            let (running, client) = settle::builtin_sandbox(db).await?;
            notify(Event::SandboxStarted(running.base_url()));
            Ok(Provider {
                client,
                name: "sandbox".to_string(),
                sandbox: Some(running),
            })
        }
        ProviderChoice::Remote { base_url, .. } => {
            let profile = config.profile()?;
            // Without a key (none needed: nothing to send), a client that
            // names the provider and is never called.
            let none = SecretString::from(String::new());
            let client = Client::with_profile(base_url, key.unwrap_or(&none), profile)?;
            Ok(Provider {
                name: client.base_url().to_string(),
                client,
                sandbox: None,
            })
        }
    }
}

/// `payrun run`: imports the file (or finds its run), pays every open
/// payout, writes the report. `shutdown` stops it after the calls in
/// flight; `notify` hears about the run as it goes.
pub async fn run(
    settings: &Settings,
    progress: ProgressTarget,
    shutdown: Shutdown,
    notify: &dyn Fn(Event),
) -> Result<RunOutcome> {
    // No output may be an input, nor unwritable: checked before anything
    // is written (the database included) or sent.
    outputs::check(settings, None)?;
    // Read once: what is parsed is what was hashed.
    let snapshot = identity::snapshot(&settings.file)?;
    let batch = identity::Batch {
        period: settings.period.clone(),
        label: settings.label.clone(),
        sheet: settings.sheet.clone().unwrap_or_default(),
    };
    // One process at a time on a SQLite file; several workers may share
    // a PostgreSQL run.
    let _lock = match &settings.db {
        Db::File(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create the folder {}", dir.display()))?;
            }
            // The lock first: the in-process sandbox's state file belongs
            // to the database, so two processes must not load it at once.
            Some(RunLock::acquire(path)?)
        }
        Db::Postgres(_) if matches!(settings.provider, ProviderChoice::Sandbox) => {
            bail!(SANDBOX_NEEDS_A_FILE)
        }
        Db::Postgres(_) => None,
    };
    // The database before the provider: a file that is not one (`--db
    // payroll.csv`) is refused before the sandbox keeps books beside it.
    let mut store = Store::connect(&settings.db)?;
    let key = key_if_needed(settings, &store, &snapshot, &batch)?;
    let mut provider = open_provider(
        &settings.provider,
        key.as_ref(),
        &settings.config,
        &settings.db,
        notify,
    )
    .await?;
    provider.client = provider
        .client
        .with_request_deadline(settings.engine.request_deadline);

    // Workers starting together: the first imports, the others find its run.
    let found = store.one_start_at_a_time(|store| {
        find::find_or_import(store, settings, &snapshot, &batch, &provider.name, notify)
    })?;
    let run = match found {
        Ok(run) => run,
        Err(outcome) => return Ok(outcome),
    };
    // The run's own files (its approval files) too, before any request.
    outputs::check(settings, Some(run.id))?;

    if settings.import_only {
        let payouts: u64 = store.state_counts(run.id)?.values().sum();
        return Ok(RunOutcome::Imported {
            run_id: run.id,
            payouts,
            file_path: run.file_path,
        });
    }
    if let Err(outcome) =
        gate::before_execute(&store, &run, settings, shutdown.clone(), notify).await?
    {
        return Ok(outcome);
    }
    // A worker of a shared run: its lease, and the provider's rate shared
    // with the other workers.
    let lease = if store.is_shared() {
        let lease = lease::Lease::join(
            &mut store,
            &settings.db,
            run.id,
            settings.engine.lease_terms(),
        )?;
        notify(Event::Joined {
            run_id: run.id,
            worker: lease.worker,
            lease: settings.engine.lease,
        });
        Some(lease)
    } else {
        None
    };
    let shared = match &lease {
        Some(lease) => Some(lease::Shared {
            lease,
            rate: lease::shared_rate(
                &settings.db,
                &format!(
                    "{} {}",
                    provider.name,
                    crate::provider::wire::Sender::from(&settings.config.sender).email
                ),
                settings.engine.rate,
            ),
        }),
        None => None,
    };
    let stop = shutdown.clone();
    let paid = pay_open(
        store,
        &provider.client,
        run.id,
        settings,
        progress,
        shutdown,
        shared,
    )
    .await;
    // Marks this worker stopped: whatever it leaves is adopted at once.
    drop(lease);
    let (mut store, stats) = paid?;
    store.set_worker(None);
    // Settle what the provider can tell (its status call, if it has one).
    if !settings.engine.initiate_only && stats.stop.is_none() {
        settle::before_verdict(
            &mut store,
            &provider.client,
            &provider.name,
            settings,
            run.id,
            stop,
            notify,
        )
        .await?;
    }
    let counts = store.state_counts(run.id)?;
    if decide::run_settled(|s| counts.get(&s).copied().unwrap_or(0)) && stats.stop.is_none() {
        store.mark_finished(run.id)?;
    }
    notify(Event::WritingReport {
        path: settings.report.clone(),
    });
    let written = outputs::write(&mut store, &run, settings, &snapshot)?;
    let skipped = store.skipped_count(run.id)?;
    let signoff = match settings.gate.required {
        true => crate::signoff::facts(&store, run.id)?.map(|f| f.standing),
        false => crate::signoff::standing_if_any(&store, run.id)?,
    };
    if let Some(s) = provider.sandbox.take() {
        s.shutdown().await.ok();
    }
    Ok(RunOutcome::Ran(Box::new(Ran {
        run_id: run.id,
        counts,
        totals: written.totals,
        report: settings.report.clone(),
        stop: stats.stop,
        initiate_only: settings.engine.initiate_only,
        approval: written.approval,
        skipped,
        failed: written.failed,
        limiter: stats.limiter,
        verdict: written.verdict,
        overrides: written.overrides,
        signoff,
    })))
}

/// Resumes what an earlier process left open, then claims and pays the
/// rest. Hands the store to the writer thread for the duration and takes
/// it back.
async fn pay_open(
    store: Store,
    client: &Client,
    run_id: i64,
    settings: &Settings,
    progress: ProgressTarget,
    shutdown: Shutdown,
    shared: Option<lease::Shared<'_>>,
) -> Result<(Store, RunStats)> {
    let mut store = store;
    let mut resume = Vec::new();
    match &shared {
        // What other workers hold is theirs; what gone ones left, ours.
        Some(s) => resume = store.adopt(run_id, s.lease.worker, settings.engine.lease_terms())?,
        None => {
            for &state in crate::machine::RESUMED {
                resume.extend(store.works_in_state(run_id, state)?);
            }
        }
    }
    // Processing payouts wait for the provider, not for this run's calls.
    let processing = store.state_counts(run_id)?.get(&State::Processing).copied();
    let total_open = store
        .open_count(run_id)?
        .saturating_sub(processing.unwrap_or(0));
    let (writer, thread) = Writer::spawn(store);
    let result = execute_run(
        client,
        &writer,
        run_id,
        resume,
        total_open,
        &settings.engine,
        progress,
        shutdown,
        shared,
    )
    .await;
    drop(writer);
    let store = thread.join()?;
    Ok((store, result?))
}
