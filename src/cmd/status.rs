//! `payrun status`: the runs in a database, with counts per state and
//! totals per currency, on standard output.

use crate::config::Config;
use crate::exit::Exit;
use crate::store::{Db, RunInfo, Store, WorkerInfo};
use anyhow::{Result, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::STATUS)]
pub struct StatusArgs {
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else
    /// payrun.db in the per-user data folder, e.g. ~/.local/share/payrun/].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Use the built-in sandbox's database (payrun-sandbox.db) by default.
    #[arg(long)]
    pub sandbox: bool,
}

pub fn command(args: StatusArgs) -> Result<Exit> {
    let cfg = Config::load(None)?;
    let db = super::db::resolve(args.db.as_deref(), &cfg, args.sandbox)?;
    let lease = super::run::lease_from_env()?;
    // Where the database is, said plainly: the first question after a
    // Quick start is "which file is it reading?".
    let shown = match &db {
        Db::File(path) => {
            let shown = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            if !path.exists() {
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
            shown.display().to_string()
        }
        Db::Postgres(target) => target.to_string(),
    };
    let store = Store::connect(&db)?;
    let runs = store.runs()?;
    let language = cfg.language();
    let t = language.text();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", (t.status_database)(&shown))?;
    if runs.is_empty() {
        writeln!(out, "{}", (t.status_no_runs)(&db.to_string()))?;
    }
    for run in runs {
        let counts = store.state_counts(run.id)?;
        writeln!(
            out,
            "{}",
            (t.status_run)(
                run.id,
                &run.file_path,
                &run.created_at,
                run.rows_total,
                run.finished_at.is_some(),
                &run.period
            )
        )?;
        let skipped = store.skipped_count(run.id)?;
        if skipped > 0 {
            writeln!(out, "{}", (t.status_skipped)(skipped))?;
        }
        let counts: Vec<String> = counts
            .iter()
            .map(|(s, n)| format!("{} {n}", t.state(s.as_str())))
            .collect();
        writeln!(out, "{}", (t.status_states)(&counts.join(", ")))?;
        for (currency, states) in store.totals(run.id)? {
            let cells: Vec<String> = states
                .iter()
                .map(|(s, x)| {
                    format!(
                        "{} {} ({})",
                        t.state(s.as_str()),
                        x.count,
                        language.amount(&x.total.to_string())
                    )
                })
                .collect();
            writeln!(out, "  {currency}: {}", cells.join(", "))?;
        }
        if let Some(line) = approval_line(&store, &run, cfg.require_approval(), language)? {
            writeln!(out, "{line}")?;
        }
        for w in store.workers(run.id)? {
            if let Some(line) = worker_line(&w, lease) {
                writeln!(out, "{line}")?;
            }
        }
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// Who prepared the run and where its approval stands: for a run with an
/// approval event, or an unfinished one when approvals are required.
fn approval_line(
    store: &Store,
    run: &RunInfo,
    required: bool,
    language: crate::lang::Language,
) -> Result<Option<String>> {
    let events = store.approval_events(run.id)?;
    if events.is_empty() && (!required || run.finished_at.is_some()) {
        return Ok(None);
    }
    let Some(f) = crate::signoff::facts(store, run.id)? else {
        return Ok(None);
    };
    let t = language.text();
    let preparer = (t.status_prepared)(
        &f.preparer
            .as_ref()
            .map(|p| p.person.shown())
            .unwrap_or_default(),
    );
    Ok(Some((t.status_approval)(
        &preparer,
        &f.standing.describe_in(language),
    )))
}

/// A worker of a shared run that is live or still holds payouts (one
/// that stopped or died holding none has nothing to say).
fn worker_line(w: &WorkerInfo, lease: std::time::Duration) -> Option<String> {
    let live = w.live(lease);
    if !live && w.held == 0 {
        return None;
    }
    let state = match (live, w.stopped) {
        (true, _) => "live",
        (false, true) => "stopped",
        (false, false) => "expired",
    };
    Some(format!(
        "  worker {}  {} pid {}  last heartbeat {} ({:.1} s ago)  {state}  holds {} payout(s)",
        w.id,
        w.host,
        w.pid,
        w.heartbeat_at,
        w.heartbeat_age.as_secs_f64(),
        w.held
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn workers_are_shown_while_live_or_holding_payouts() {
        let lease = Duration::from_secs(15);
        let w = WorkerInfo {
            id: 4,
            host: "box-a".into(),
            pid: 812,
            heartbeat_at: "2026-05-31T10:00:00.000Z".into(),
            heartbeat_age: Duration::from_millis(1_200),
            stopped: false,
            held: 12,
        };
        assert_eq!(
            worker_line(&w, lease).unwrap(),
            "  worker 4  box-a pid 812  last heartbeat 2026-05-31T10:00:00.000Z (1.2 s ago)  live  holds 12 payout(s)"
        );
        let dead = WorkerInfo {
            heartbeat_age: Duration::from_secs(40),
            ..w.clone()
        };
        assert!(
            worker_line(&dead, lease)
                .unwrap()
                .contains("  expired  holds 12")
        );
        let done = WorkerInfo {
            stopped: true,
            held: 0,
            ..w
        };
        assert_eq!(worker_line(&done, lease), None);
    }
}
