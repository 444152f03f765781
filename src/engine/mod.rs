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
//! records "initiated" is also the intent to execute (`executing`), which
//! saves one fsync per payout without weakening the rule.
//!
//! Files: `import` (identity, validated import), `schedule` (the worker
//! pool), `pay` (one payout's calls), `retry`, `limiter`, `progress`, and
//! `reconcile` (settling unknown payouts).

pub mod import;
pub mod limiter;
pub mod pay;
pub mod progress;
pub mod reconcile;
pub mod retry;
mod schedule;
pub mod verdict;

pub use import::{EditedCopy, Imported, Rejected};
pub use limiter::Limiter;
pub use progress::ProgressTarget;
use schedule::{Counters, Ctx};
pub use schedule::{EngineOptions, RunStats, execute_run};

use crate::config::Config;
use crate::machine::State;
use crate::machine::decide;
use crate::provider::Client;
use crate::report;
use crate::shutdown::Shutdown;
use crate::store::{RunInfo, RunLock, Store, Totals, Writer};
use anyhow::{Context, Result, bail};
use rand::Rng;
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which provider a run talks to.
#[derive(Debug, Clone)]
pub enum ProviderChoice {
    /// The built-in simulator, started in-process for the run.
    Sandbox,
    /// A real provider. The key is empty for `--import-only`, which sends
    /// nothing.
    Remote {
        base_url: String,
        api_key: SecretString,
    },
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
    pub db: PathBuf,
    pub report: PathBuf,
    pub label: String,
    pub new_run: bool,
    pub sheet: Option<String>,
    pub import_only: bool,
    pub engine: EngineOptions,
}

/// Why a run stopped before its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Unauthorized(String),
    Interrupted,
    Unreachable(String),
}

/// Something worth telling the operator while the run goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The built-in sandbox is up at this URL.
    SandboxStarted(String),
    /// An existing run of this file is resumed.
    Resuming {
        run_id: i64,
        file_path: String,
        created_at: String,
    },
}

/// How a run ended, for the command layer to show and map to an exit code.
#[derive(Debug)]
pub enum RunOutcome {
    /// Rows were rejected: nothing was recorded or sent.
    Rejected(Rejected),
    /// Transaction ids already used: nothing was recorded or sent.
    DuplicateIds(Vec<String>),
    /// `--import-only`: the run is recorded, nothing was sent.
    Imported {
        run_id: i64,
        payouts: u64,
        file_path: String,
    },
    /// The run went (or stopped) and its report is written.
    Ran(Ran),
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
    /// What became of the rows, grouped by what to do next.
    pub verdict: verdict::Verdict,
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

async fn open_provider(
    choice: &ProviderChoice,
    config: &Config,
    db: &std::path::Path,
    notify: &dyn Fn(Event),
) -> Result<Provider> {
    match choice {
        ProviderChoice::Sandbox => {
            let key = format!("sk_sandbox_{:016x}", rand::rng().random::<u64>());
            let config = crate::sandbox::SandboxConfig {
                api_key: key.clone(),
                state_file: Some(sandbox_state_file(db)),
                ..Default::default()
            };
            let running = crate::sandbox::start(config)
                .await
                .context("cannot start the built-in sandbox")?;
            let client = Client::new(&running.base_url(), &SecretString::from(key))?;
            notify(Event::SandboxStarted(running.base_url()));
            Ok(Provider {
                client,
                name: "sandbox".to_string(),
                sandbox: Some(running),
            })
        }
        ProviderChoice::Remote { base_url, api_key } => {
            let profile = crate::provider::Profile::from_config(config)?;
            let client = Client::with_profile(base_url, api_key, profile)?;
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
    let file_sha = import::file_sha256(&settings.file)?;
    let identity = import::run_identity(&file_sha, &settings.label);
    // The lock first: the in-process sandbox's state file belongs to the
    // database, so two processes must not load it at once.
    let _lock = RunLock::acquire(&settings.db)?;
    let mut provider =
        open_provider(&settings.provider, &settings.config, &settings.db, notify).await?;
    let mut store = Store::open(&settings.db)?;

    let run = match find_or_import(
        &mut store,
        settings,
        &file_sha,
        &identity,
        &provider.name,
        notify,
    )? {
        Ok(run) => run,
        Err(outcome) => return Ok(outcome),
    };

    if settings.import_only {
        let payouts: u64 = store.state_counts(run.id)?.values().sum();
        return Ok(RunOutcome::Imported {
            run_id: run.id,
            payouts,
            file_path: run.file_path,
        });
    }
    let (mut store, stats) = pay_open(
        store,
        &provider.client,
        run.id,
        settings,
        progress,
        shutdown,
    )
    .await?;
    let counts = store.state_counts(run.id)?;
    if decide::run_settled(|s| counts.get(&s).copied().unwrap_or(0)) && stats.stop.is_none() {
        store.mark_finished(run.id)?;
    }
    let totals = report::write_report(&store, run.id, &settings.report)?;
    let verdict = verdict::Verdict::load(&store, run.id, settings.engine.initiate_only)?;
    if let Some(s) = provider.sandbox.take() {
        s.shutdown().await.ok();
    }
    Ok(RunOutcome::Ran(Ran {
        run_id: run.id,
        counts,
        totals,
        report: settings.report.clone(),
        stop: stats.stop,
        initiate_only: settings.engine.initiate_only,
        verdict,
    }))
}

/// The run of this file: the one in the database (resumed), or a new one
/// imported now. `Err` carries an outcome that ends the command: rows
/// rejected, ids already used.
fn find_or_import(
    store: &mut Store,
    settings: &Settings,
    file_sha: &str,
    identity: &str,
    provider: &str,
    notify: &dyn Fn(Event),
) -> Result<std::result::Result<RunInfo, RunOutcome>> {
    Ok(Ok(match store.find_run(identity)? {
        Some(run) => {
            // A run that never sent anything may move to a corrected URL.
            if run.provider != provider && !store.repoint_unsent_run(run.id, provider)? {
                bail!(
                    "run {} of this file was made against {}, not {}; \
                     resume it against the same provider, end it with `payrun cancel {}`, \
                     or use --label to start a separate run",
                    run.id,
                    run.provider,
                    provider,
                    run.id
                );
            }
            notify(Event::Resuming {
                run_id: run.id,
                file_path: run.file_path.clone(),
                created_at: run.created_at.clone(),
            });
            run
        }
        None => {
            if !settings.new_run {
                import::refuse_if_edited_copy(store, &settings.file)?;
            }
            let imported = import::import(
                store,
                settings,
                file_sha,
                identity,
                provider,
                &import::sibling(&settings.report, "rejected.csv"),
            )?;
            match imported {
                Imported::Run(id) => store.run(id)?.context("run vanished after import")?,
                Imported::Rejected(r) => return Ok(Err(RunOutcome::Rejected(r))),
                Imported::DuplicateIds(d) => return Ok(Err(RunOutcome::DuplicateIds(d))),
            }
        }
    }))
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
) -> Result<(Store, RunStats)> {
    let mut resume = Vec::new();
    for &state in crate::machine::RESUMED {
        resume.extend(store.works_in_state(run_id, state)?);
    }
    let total_open = store.open_count(run_id)?;
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
    )
    .await;
    drop(writer);
    let store = thread.join()?;
    Ok((store, result?))
}
