//! `payrun reconcile`: lists every payout that is not final with what can
//! be done for it, matches a provider's statement (`--statement`, in
//! `reconcile/statement.rs`), asks the provider's status call (`--poll`, in
//! `reconcile/poll.rs`), records an operator's verdict (`--mark`),
//! re-sends the execute of unknown payouts (`--resend`), or prints the
//! audit trail (`--audit`). The library parts are `engine::reconcile` and
//! `crate::reconcile`.

mod poll;
mod statement;

pub use poll::{settling_line, settling_line_in};

use super::{Threads, runtime};
use crate::config::Config;
use crate::engine::reconcile as lib;
use crate::exit::Exit;
use crate::machine::decide::Verdict;
use crate::output::safe_cell;
use crate::provider::Client;
use crate::reconcile::guard;
use crate::report::guard::Files;
use crate::store::{Store, Unresolved};
use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::RECONCILE)]
pub struct ReconcileArgs {
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else
    /// payrun.db in the per-user data folder, e.g. ~/.local/share/payrun/].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Use the built-in sandbox's database (payrun-sandbox.db) by default.
    #[arg(long)]
    pub sandbox: bool,
    /// Only this run (default: every run).
    #[arg(long)]
    pub run: Option<i64>,
    /// Re-send execute for every unknown or processing payout, under its transactionId
    /// (only for providers that deduplicate executes).
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
    /// The provider's base URL (for --resend and --poll; for --statement,
    /// the provider account the statement belongs to).
    #[arg(long)]
    pub base_url: Option<String>,
    /// The provider's statement (CSV or workbook): match it, settle the
    /// unknown payouts it settles, write the reconciliation.
    #[arg(long, conflicts_with_all = ["mark", "resend", "audit"])]
    pub statement: Option<PathBuf>,
    /// Worksheet of a workbook statement (default: every visible sheet
    /// with the statement's headers).
    #[arg(long, requires = "statement")]
    pub sheet: Option<String>,
    /// The statement's first day (YYYY-MM-DD or DD/MM/YYYY): payouts sent
    /// before it are not missing from it [default: its first date].
    #[arg(long, requires = "statement", value_parser = statement::day)]
    pub from: Option<crate::reconcile::statement::Day>,
    /// The statement's last day [default: its last date].
    #[arg(long, requires = "statement", value_parser = statement::day)]
    pub to: Option<crate::reconcile::statement::Day>,
    /// Ask the provider's status call (`[provider.status_call]`) about
    /// every unknown or processing payout and settle what it answers
    /// clearly; asks again for `settle_wait` (default 3s).
    #[arg(long, conflicts_with_all = ["mark", "resend", "audit", "statement"])]
    pub poll: bool,
    /// With --poll: keep asking, with a growing pause, until every payout
    /// asked about is final or --max-wait has passed.
    #[arg(long, requires = "poll")]
    pub until_settled: bool,
    /// With --until-settled: the longest wait (e.g. 30m, 2h) [default: 1h].
    #[arg(long, requires = "until_settled", value_parser = crate::config::parse_duration)]
    pub max_wait: Option<std::time::Duration>,
    /// Where `--statement` writes the reconciliation (its summary goes to
    /// PATH.summary.csv).
    #[arg(long, default_value = "reconciliation.csv")]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mark {
    Executed,
    Failed,
}

pub fn command(args: ReconcileArgs) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let language = cfg.language();
    let c = language.closing();
    let db = super::db::resolve(args.db.as_deref(), &cfg, args.sandbox)?;
    let _lock = super::db::lock(&db)?;
    let mut store = super::db::open_existing(&db, "pass --db")?;
    let mut out = std::io::stdout().lock();
    if args.audit {
        let mut csv = csv::Writer::from_writer(&mut out);
        csv.write_record([
            "run",
            "transaction_id",
            "at",
            "action",
            "from_state",
            "to_state",
            "reason",
        ])?;
        for (run, line) in lib::audit(&store, args.run)? {
            let mut record = vec![run.to_string()];
            record.extend(line.iter().map(|cell| safe_cell(cell).into_owned()));
            csv.write_record(&record)?;
        }
        csv.flush()?;
        return Ok(Exit::Ok);
    }
    if let Some(mark) = args.mark {
        let verdict = match mark {
            Mark::Executed => Verdict::Executed,
            Mark::Failed => Verdict::Failed,
        };
        let reason = args.reason.clone().unwrap_or_default();
        let runs = runs_of(&store, &args.ids)?;
        super::db::exclude_workers(&mut store, Some(runs.iter().copied().collect()))?;
        let mut write_error = None;
        lib::mark(&mut store, &args.ids, verdict, &reason, |id, to| {
            let to = language.text().state(to.as_str());
            if let Err(e) = writeln!(out, "{}", (c.marked)(id, to, reason.trim())) {
                write_error.get_or_insert(e);
            }
        })?;
        if let Some(e) = write_error {
            return Err(e.into());
        }
        rewrite_reports(&store, runs, &inputs(&args, &db)?, language);
        return Ok(Exit::Ok);
    }
    // Settling payouts: not while a worker may still send.
    if args.statement.is_some() || args.poll || args.resend {
        super::db::exclude_workers(&mut store, args.run.map(|r| vec![r]))?;
    }
    if let Some(path) = &args.statement {
        return statement::command(&args, &db, &mut store, path, &mut out);
    }
    if args.poll {
        return poll::command(&args, &db, &mut store, &mut out);
    }
    if !args.resend {
        return list_open(&store, args.run, &mut out, language);
    }
    let unresolved = store.unresolved(args.run)?;
    if unresolved.is_empty() {
        writeln!(out, "{}", c.nothing_to_resend)?;
        return Ok(Exit::Ok);
    }
    drop(out);
    resend(&args, &db, &mut store, unresolved)
}

/// What `reconcile` reads or keeps, which no file it writes may be: the
/// config and the files it names, the database.
fn inputs(args: &ReconcileArgs, db: &crate::store::Db) -> Result<Files> {
    let mut files = Files::new();
    files
        .config(&Config::load(args.config.as_deref())?)
        .checkpoint(db);
    Ok(files)
}

/// `files` with the recorded reports (and summaries) of the runs in scope
/// as files the command keeps: it writes them again after settling, so a
/// reconciliation written over one would be lost, or replace it.
fn with_reports(store: &Store, run: Option<i64>, files: &Files) -> Result<Files> {
    let mut files = files.clone();
    for r in store.runs()? {
        if run.is_none_or(|id| id == r.id)
            && let Some(t) = store.report_target(r.id)?
        {
            let role = format!("report of run {}", r.id);
            files
                .input(&role, &t.path)
                .input(&role, &crate::report::summary_path(&t.path));
        }
    }
    Ok(files)
}

/// Lists every payout that is not final (and every unknown one), with what
/// can be done for it (in `language`; the keys and states stay the
/// machine's). Exit 3 when there is any.
fn list_open(
    store: &Store,
    run: Option<i64>,
    out: &mut impl Write,
    language: crate::lang::Language,
) -> Result<Exit> {
    let c = language.closing();
    let open: Vec<_> = store
        .booked(run)?
        .into_iter()
        .filter(|p| !guard::advice(p.state).is_empty())
        .collect();
    if open.is_empty() {
        writeln!(out, "{}", c.nothing_open)?;
        return Ok(Exit::Ok);
    }
    let mut csv = csv::Writer::from_writer(&mut *out);
    csv.write_record([
        "run",
        "row",
        "transaction_id",
        "state",
        "account_id",
        "amount",
        "currency",
        "what_to_do",
    ])?;
    for p in &open {
        csv.write_record([
            p.run_id.to_string(),
            p.row.to_string(),
            safe_cell(&p.transaction_id).into_owned(),
            p.state.to_string(),
            safe_cell(&p.account_id).into_owned(),
            p.wire_amount.to_string(),
            safe_cell(&p.currency).into_owned(),
            (c.advice)(p.state.as_str()).to_string(),
        ])?;
    }
    csv.flush()?;
    drop(csv);
    let mut by_state = std::collections::BTreeMap::new();
    for p in &open {
        *by_state.entry(p.state).or_insert(0u64) += 1;
    }
    let t = language.text();
    let counts: Vec<String> = by_state
        .iter()
        .map(|(s, n)| (c.count_state)(*n, t.state(s.as_str())))
        .collect();
    // The summary goes to stderr: stdout stays one CSV table for scripts.
    eprintln!("{}", (c.not_final)(open.len() as u64, &counts.join(", ")));
    Ok(Exit::Incomplete)
}

/// The runs the payouts `ids` belong to (ids not found are left to
/// `mark`, which names them).
fn runs_of(store: &Store, ids: &[String]) -> Result<BTreeSet<i64>> {
    let mut runs = BTreeSet::new();
    for id in ids {
        if let Some(p) = store.payout_by_transaction_id(id)? {
            runs.insert(p.run_id);
        }
    }
    Ok(runs)
}

/// Writes each run's recorded report again, so it never says `unknown` for
/// a payout just settled. The settlement is already committed: a report
/// that cannot be written (or whose path is now one of `inputs`) is a
/// warning naming the command that retries it. Said in `language`.
fn rewrite_reports(
    store: &Store,
    runs: BTreeSet<i64>,
    inputs: &Files,
    language: crate::lang::Language,
) {
    let c = language.closing();
    for run in runs {
        match crate::report::rewrite_recorded(store, run, inputs) {
            Ok(Some(path)) => eprintln!("{}", (c.report_updated)(run, &path.display().to_string())),
            Ok(None) => eprintln!("{}", (c.no_recorded_report)(run)),
            Err(e) => eprintln!("{}", (c.report_not_updated)(run, &format!("{e:#}"))),
        }
    }
}

/// The provider client of `--base-url` / the config.
fn client(args: &ReconcileArgs) -> Result<Client> {
    let cfg = Config::load(args.config.as_deref())?;
    let base_url = args
        .base_url
        .clone()
        .or(cfg.base_url.clone())
        .context("no provider URL: pass --base-url or set base_url in the config")?;
    let profile = cfg.profile()?;
    Client::with_profile(&base_url, &super::api_key(&cfg)?, profile)
}

fn resend(
    args: &ReconcileArgs,
    db: &crate::store::Db,
    store: &mut Store,
    unresolved: Vec<Unresolved>,
) -> Result<Exit> {
    let language = Config::load(args.config.as_deref())?.language();
    let c = language.closing();
    let client = client(args)?;
    // Never re-send a payout to a provider its run was not made against.
    let mut refused = Vec::new();
    for u in &unresolved {
        let provider = store.run(u.run_id)?.map(|r| r.provider).unwrap_or_default();
        if let Some(why) = guard::resend_refusal(&provider, client.base_url()) {
            refused.push(format!("{}: refused: {why}", u.transaction_id));
        }
    }
    let runs: BTreeSet<i64> = unresolved.iter().map(|u| u.run_id).collect();
    // A re-send is an execute: under four eyes, only of an approved run.
    let required = Config::load(args.config.as_deref())?.require_approval();
    for &run in runs.iter().filter(|_| required) {
        let facts = crate::signoff::facts(store, run)?.context("the run vanished")?;
        if !facts.standing.is_approved() {
            let why = facts.standing.describe();
            refused.push(format!("run {run}: {why} (`payrun approve {run}`)"));
        }
    }
    if !refused.is_empty() {
        bail!("nothing was re-sent:\n  {}", refused.join("\n  "));
    }
    let rt = runtime(Threads::Workers(1))?;
    // Ctrl-C (or SIGTERM) sends nothing more: each re-send looks at it
    // before its claim and again before its request leaves.
    let (trigger, stop) = crate::shutdown::channel();
    let mut signals = rt.block_on(async { super::Signals::install() })?;
    rt.spawn(async move {
        signals.stop_requested().await;
        eprintln!("{}", c.stopping_resend);
        trigger.fire();
        signals.interrupted().await;
        std::process::exit(Exit::Fatal.code());
    });
    let mut out = std::io::stdout().lock();
    let mut write_error = None;
    let ended = rt.block_on(lib::resend(store, &client, unresolved, &stop, |line| {
        let note = match (line.settled, &line.refused) {
            (_, Some(why)) => (c.resent_refused)(why),
            (Some(crate::machine::State::Executed), _) => c.resent_executed.into(),
            (Some(crate::machine::State::Processing), _) => c.resent_processing.into(),
            (Some(_), _) => c.resent_failed.into(),
            (None, _) => c.resent_unknown.into(),
        };
        if let Err(e) = writeln!(
            out,
            "{}",
            (c.resent)(&line.transaction_id, &note, &line.code, &line.message)
        ) {
            write_error.get_or_insert(e);
        }
    }))?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    rewrite_reports(store, runs, &inputs(args, db)?, language);
    if ended.interrupted {
        eprintln!("{}", (c.resend_stopped)(ended.left));
        return Ok(Exit::Fatal);
    }
    Ok(Exit::complete_if(ended.left == 0))
}
