//! `payrun reconcile`: lists unknown payouts, records an operator's
//! verdict (`--mark`), re-sends their execute (`--resend`), or prints the
//! audit trail (`--audit`). The library part is `engine::reconcile`.

use super::runtime;
use crate::config::{Config, DEFAULT_DB};
use crate::engine::reconcile as lib;
use crate::exit::Exit;
use crate::machine::decide::Verdict;
use crate::output::safe_cell;
use crate::provider::Client;
use crate::store::{RunLock, Store, Unresolved};
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::PathBuf;

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

pub fn command(args: ReconcileArgs) -> Result<Exit> {
    if !args.db.exists() {
        bail!("no database at {}; pass --db", args.db.display());
    }
    let _lock = RunLock::acquire(&args.db)?;
    let mut store = Store::open(&args.db)?;
    let mut out = std::io::stdout().lock();
    if args.audit {
        writeln!(
            out,
            "run,transaction_id,at,action,from_state,to_state,reason"
        )?;
        for (run, [tx, at, action, from, to, reason]) in lib::audit(&store, args.run)? {
            writeln!(
                out,
                "{run},{tx},{at},{action},{from},{to},{}",
                safe_cell(&reason).replace(',', ";")
            )?;
        }
        return Ok(Exit::Ok);
    }
    if let Some(mark) = args.mark {
        let verdict = match mark {
            Mark::Executed => Verdict::Executed,
            Mark::Failed => Verdict::Failed,
        };
        let reason = args.reason.clone().unwrap_or_default();
        let mut write_error = None;
        lib::mark(&mut store, &args.ids, verdict, &reason, |id, to| {
            if let Err(e) = writeln!(out, "{id}: unknown -> {to} ({})", reason.trim()) {
                write_error.get_or_insert(e);
            }
        })?;
        if let Some(e) = write_error {
            return Err(e.into());
        }
        return Ok(Exit::Ok);
    }
    let unresolved = store.unresolved(args.run)?;
    if unresolved.is_empty() {
        writeln!(out, "no unknown or processing payouts")?;
        return Ok(Exit::Ok);
    }
    if !args.resend {
        list(&mut out, &unresolved)?;
        return Ok(Exit::Incomplete);
    }
    drop(out);
    resend(&args, &mut store, unresolved)
}

fn list(out: &mut impl Write, unresolved: &[Unresolved]) -> Result<()> {
    writeln!(
        out,
        "run,row,transaction_id,account_id,amount,currency,provider_code,provider_message,state"
    )?;
    for u in unresolved {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            u.run_id,
            u.row,
            u.transaction_id,
            u.account_id,
            u.amount,
            u.currency,
            u.provider_code,
            u.provider_message.replace(',', ";"),
            u.state
        )?;
    }
    writeln!(
        out,
        "{} unknown or processing payout(s): check them with the provider, then `payrun reconcile --resend` \
         or `payrun reconcile --mark executed|failed ID... --reason TEXT`",
        unresolved.len()
    )?;
    Ok(())
}

fn resend(args: &ReconcileArgs, store: &mut Store, unresolved: Vec<Unresolved>) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let base_url = args
        .base_url
        .clone()
        .or(cfg.base_url.clone())
        .context("no provider URL: pass --base-url or set base_url in the config")?;
    let profile = crate::provider::Profile::from_config(&cfg)?;
    let client = Client::with_profile(&base_url, &cfg.api_key()?, profile)?;
    let rt = runtime(Some(1))?;
    let mut out = std::io::stdout().lock();
    let mut write_error = None;
    let left = rt.block_on(lib::resend(store, &client, unresolved, |line| {
        let note = match (line.settled, &line.refused) {
            (_, Some(why)) => format!("not re-sent: {why}"),
            (Some(crate::machine::State::Executed), _) => "executed".into(),
            (Some(crate::machine::State::Processing), _) => "processing (not final)".into(),
            (Some(_), _) => "failed".into(),
            (None, _) => "still unknown".into(),
        };
        if let Err(e) = writeln!(
            out,
            "{}: {note} ({}: {})",
            line.transaction_id, line.code, line.message
        ) {
            write_error.get_or_insert(e);
        }
    }))?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    Ok(Exit::complete_if(left == 0))
}
