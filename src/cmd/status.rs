//! `payrun status`: the runs in a database, with counts per state and
//! totals per currency, on standard output.

use crate::config::Config;
use crate::exit::Exit;
use crate::store::Store;
use anyhow::{Result, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::STATUS)]
pub struct StatusArgs {
    /// The checkpoint database [default: `database` in payrun.toml, else
    /// payrun.db in the per-user data folder, e.g. ~/.local/share/payrun/].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Use the built-in sandbox's database (payrun-sandbox.db) by default.
    #[arg(long)]
    pub sandbox: bool,
}

pub fn command(args: StatusArgs) -> Result<Exit> {
    let db = crate::config::resolve_db(args.db.as_deref(), &Config::load(None)?, args.sandbox)?;
    // Where the database is, said plainly: the first question after a
    // Quick start is "which file is it reading?".
    let shown = std::path::absolute(&db).unwrap_or_else(|_| db.clone());
    if !db.exists() {
        if !args.sandbox {
            let sandbox = crate::config::resolve_db(None, &Config::default(), true)?;
            if sandbox.exists() {
                bail!(
                    "no database at {}; the sandbox rehearsals are in {}: `payrun status --sandbox`",
                    shown.display(),
                    sandbox.display()
                );
            }
        }
        bail!("no database at {}; pass --db", shown.display());
    }
    let store = Store::open(&db)?;
    let runs = store.runs()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "database: {}", shown.display())?;
    if runs.is_empty() {
        writeln!(out, "no runs in {}", db.display())?;
    }
    for run in runs {
        let counts = store.state_counts(run.id)?;
        let status = if run.finished_at.is_some() {
            "finished"
        } else {
            "in progress"
        };
        writeln!(
            out,
            "run {}  {}  {}  {} rows  {}{}",
            run.id,
            run.file_path,
            run.created_at,
            run.rows_total,
            status,
            if run.period.is_empty() {
                String::new()
            } else {
                format!("  period {}", run.period)
            }
        )?;
        let skipped = store.skipped_count(run.id)?;
        if skipped > 0 {
            writeln!(out, "  already paid by earlier runs, not sent: {skipped}")?;
        }
        let counts: Vec<String> = counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
        writeln!(out, "  states: {}", counts.join(", "))?;
        for (currency, states) in store.totals(run.id)? {
            let cells: Vec<String> = states
                .iter()
                .map(|(s, t)| format!("{s} {} ({})", t.count, t.total))
                .collect();
            writeln!(out, "  {currency}: {}", cells.join(", "))?;
        }
    }
    out.flush()?;
    Ok(Exit::Ok)
}
