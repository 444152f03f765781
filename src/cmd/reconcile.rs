//! `payrun reconcile`: lists unknown payouts, records an operator's
//! verdict (`--mark`), re-sends their execute (`--resend`), or prints the
//! audit trail (`--audit`). The library part is `engine::reconcile`.

use super::runtime;
use crate::config::Config;
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
    /// The checkpoint database [default: `database` in payrun.toml, else
    /// payrun.db in the per-user data folder, e.g. ~/.local/share/payrun/].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Use the built-in sandbox's database (payrun-sandbox.db) by default.
    #[arg(long)]
    pub sandbox: bool,
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
    let db = crate::config::resolve_db(
        args.db.as_deref(),
        &Config::load(args.config.as_deref())?,
        args.sandbox,
    )?;
    if !db.exists() {
        bail!("no database at {}; pass --db", db.display());
    }
    let _lock = RunLock::acquire(&db)?;
    let mut store = Store::open(&db)?;
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
        writeln!(out, "no unknown payouts")?;
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
        "run,row,transaction_id,account_id,amount,currency,provider_code,provider_message"
    )?;
    for u in unresolved {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            u.run_id,
            u.row,
            u.transaction_id,
            u.account_id,
            u.amount,
            u.currency,
            u.provider_code,
            u.provider_message.replace(',', ";")
        )?;
    }
    writeln!(
        out,
        "{} unknown payout(s): check them with the provider, then `payrun reconcile --resend` \
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
        let note = match line.settled {
            Some(crate::machine::State::Executed) => "executed",
            Some(_) => "failed",
            None => "still unknown",
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
