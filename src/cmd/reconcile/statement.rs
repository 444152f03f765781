//! `payrun reconcile --statement FILE`: reads the provider's statement,
//! matches and settles (`crate::reconcile::reconcile_statement`), and prints
//! what was skipped in the file, what it speaks about (provider, dates,
//! runs), every settlement, every duplicated id, and the summary in scope
//! and out of scope. Exit 0 when every line matches, 3 otherwise.

use super::{ReconcileArgs, rewrite_reports};
use crate::config::{Config, DateOrder};
use crate::exit::Exit;
use crate::output::safe_cell;
use crate::reconcile::statement::{Day, date};
use crate::reconcile::{Asked, Closed, Reach, money};
use crate::store::{Db, Store};
use anyhow::Result;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

/// `--from` / `--to`: a day, ISO or day first.
pub fn day(text: &str) -> Result<Day, String> {
    date::parse(text, DateOrder::Dmy)
        .ok_or_else(|| format!("`{text}` is not a day: write it as 2026-11-30 or 30/11/2026"))
}

/// Matches, settles and writes the reconciliation and its summary, which
/// are never the statement, the database, the config or a payroll of the
/// runs it may speak about (checked before anything is settled).
pub fn command(
    args: &ReconcileArgs,
    db: &Db,
    store: &mut Store,
    path: &Path,
    out: &mut impl Write,
) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let mut files = super::inputs(args, db)?;
    files.input("statement", path);
    for run in store.runs()? {
        if args.run.is_none_or(|r| r == run.id) {
            files.payroll_of(&run);
        }
    }
    files.output("reconciliation", &args.output).output(
        "reconciliation summary",
        &crate::report::summary_path(&args.output),
    );
    super::with_reports(store, args.run, &files)?.check()?;
    let inputs = files;
    let spec = cfg.statement.clone().unwrap_or_default();
    let asked = Asked {
        provider: spec.provider.clone().or(args.base_url.clone()),
        fallback: cfg.base_url.clone(),
        run: args.run,
        from: args.from,
        to: args.to,
    };
    let closed = crate::reconcile::reconcile_statement(
        store,
        path,
        args.sheet.as_deref(),
        &cfg,
        &asked,
        &args.output,
    )?;
    // What was not read, and what looked wrong, goes to stderr with the
    // scope: stdout keeps the settlements and the summary table.
    for s in &closed.skipped {
        eprintln!("skipped: {s}");
    }
    for n in &closed.notices {
        eprintln!("note: {n}");
    }
    eprintln!("{}", scope_line(&closed));
    for s in &closed.settled {
        writeln!(
            out,
            "{}: {} -> {} (statement {}, run {})",
            s.transaction_id, s.from, s.to, s.place, s.run_id
        )?;
    }
    for (tx, why) in &closed.not_settled {
        writeln!(out, "{}: {why}", safe_cell(tx))?;
    }
    for (id, note) in &closed.duplicates {
        writeln!(out, "{}: not settled: {note}", safe_cell(id))?;
    }
    writeln!(out, "{}", crate::reconcile::SUMMARY_HEADER.join(","))?;
    for (cur, s) in &closed.summary {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            safe_cell(cur),
            s.matched.0,
            money(s.matched.1, cur),
            s.differing.0,
            money(s.differing.1, cur),
            s.missing.0,
            money(s.missing.1, cur),
            s.out_of_scope.0,
            money(s.out_of_scope.1, cur)
        )?;
    }
    writeln!(
        out,
        "{} discrepancy(ies); reconciliation: {} (summary {}); statement sha256 {}",
        closed.discrepancies,
        closed.report.display(),
        closed.summary_path.display(),
        closed.statement_sha256
    )?;
    let runs: BTreeSet<i64> = closed.settled.iter().map(|s| s.run_id).collect();
    rewrite_reports(store, runs, &inputs);
    Ok(Exit::complete_if(closed.discrepancies == 0))
}

/// What the statement was taken to speak about, in one line.
fn scope_line(c: &Closed) -> String {
    let n = |r: Reach| c.reach.get(&r).copied().unwrap_or(0);
    let provider = match &c.scope.provider {
        Some(p) => format!("provider {p} (from {})", c.scope.provider_from),
        None => "no provider: the statement lists none of payrun's payouts and none was named \
                 ([statement] provider or --base-url), so nothing can be missing from it"
            .to_owned(),
    };
    let dates = match c.scope.dates {
        Some((lo, hi)) if lo == Day::MIN => format!(", until {hi} (from {})", c.scope.dates_from),
        Some((lo, hi)) if hi == Day::MAX => format!(", from {lo} (from {})", c.scope.dates_from),
        Some((lo, hi)) => format!(", {lo} to {hi} (from {})", c.scope.dates_from),
        None => ", all dates".to_owned(),
    };
    let run = c
        .scope
        .run
        .map_or_else(String::new, |r| format!(", run {r}"));
    format!(
        "scope: {provider}{dates}{run}; in scope {} payout(s); out of scope {} (other runs {}, \
         outside the dates {}); other providers' payouts not compared {}",
        n(Reach::InScope),
        n(Reach::OtherRun) + n(Reach::OutsideDates),
        n(Reach::OtherRun),
        n(Reach::OutsideDates),
        n(Reach::OtherProvider)
    )
}
