//! `payrun cancel RUN`: ends a run whose payouts were never executed. Every
//! `pending` payout (never sent) and `initiated` payout (initiated, no money
//! moved) becomes `cancelled`; payouts whose request may be at the provider
//! (`initiating`, `executing`) are left for a resume, and settled ones are
//! untouched. The library part is `Store::cancel_run`.

use crate::config::Config;
use crate::exit::Exit;

use anyhow::{Result, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  payrun cancel 3 --db payrun.db\n\n\
Reads and writes the database only; needs no API key (PAYRUN_API_KEY is not used).\n\n\
Exit codes: 0 the run is ended; 1 error (no such run, lock held); \
3 some payouts may be at the provider and were left for a resume.")]
pub struct CancelArgs {
    /// The run to end (see `payrun status`).
    pub run: i64,
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else
    /// payrun.db (payrun-sandbox.db with --sandbox) in the per-user data folder].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The database of `payrun run --sandbox` (payrun-sandbox.db).
    #[arg(long, conflicts_with = "db")]
    pub sandbox: bool,
}

pub fn command(args: CancelArgs) -> Result<Exit> {
    let db = super::db::resolve(args.db.as_deref(), &Config::load(None)?, args.sandbox)?;
    let _lock = super::db::lock(&db)?;
    let mut store = super::db::open_existing(&db, "pass --db")?;
    if store.run(args.run)?.is_none() {
        bail!("no run {} in {}; `payrun status` lists them", args.run, db);
    }
    super::db::exclude_workers(&mut store, Some(vec![args.run]))?;
    let done = store.cancel_run(args.run)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "run {}: {} payout(s) cancelled before sending (their transaction ids are free again), \
         {} cancelled after initiation (no money moved; their ids stay used)",
        args.run, done.never_sent, done.initiated
    )?;
    if done.left_open.is_empty() {
        writeln!(
            out,
            "run {} is ended; `payrun report` rewrites its report",
            args.run
        )?;
        return Ok(Exit::Ok);
    }
    let left: Vec<String> = done
        .left_open
        .iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect();
    writeln!(
        out,
        "left as they are: {} (a request may be at the provider); run the same `payrun run` \
         command to settle them, then cancel again",
        left.join(", ")
    )?;
    Ok(Exit::Incomplete)
}
