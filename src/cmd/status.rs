//! `payrun status`: the runs in a database, with counts per state and
//! totals per currency, on standard output.

use crate::config::{DEFAULT_DB, DEFAULT_SANDBOX_DB};
use crate::exit::Exit;
use crate::store::Store;
use anyhow::{Result, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::STATUS)]
pub struct StatusArgs {
    /// The checkpoint database.
    #[arg(long, default_value = DEFAULT_DB)]
    pub db: PathBuf,
}

pub fn command(args: StatusArgs) -> Result<Exit> {
    // Where the database is, said plainly: the first question after a
    // Quick start is "which file is it reading?".
    let shown = std::path::absolute(&args.db).unwrap_or_else(|_| args.db.clone());
    if !args.db.exists() {
        let sandbox = std::path::Path::new(DEFAULT_SANDBOX_DB);
        if sandbox.exists() && !crate::report::guard::same_file(sandbox, &args.db) {
            bail!(
                "no database at {}; the sandbox rehearsals are in {DEFAULT_SANDBOX_DB}: \
                 `payrun status --db {DEFAULT_SANDBOX_DB}`",
                shown.display()
            );
        }
        bail!("no database at {}; pass --db", shown.display());
    }
    let store = Store::open(&args.db)?;
    let runs = store.runs()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "database: {}", shown.display())?;
    if runs.is_empty() {
        writeln!(out, "no runs in {}", args.db.display())?;
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
            "run {}  {}  {}  {} rows  {}",
            run.id, run.file_path, run.created_at, run.rows_total, status
        )?;
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
