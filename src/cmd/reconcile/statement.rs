//! `payrun reconcile --statement FILE`: reads the provider's statement,
//! matches and settles (`crate::reconcile::reconcile_statement`), and prints
//! what was skipped in the file, what it speaks about (provider, dates,
//! runs), every settlement, every duplicated id, and the summary in scope
//! and out of scope. Exit 0 when every line matches, 3 otherwise.

use super::{ReconcileArgs, rewrite_reports};
use crate::config::{Config, DateOrder};
use crate::exit::Exit;
use crate::lang::Language;
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
    let language = cfg.language();
    let (c, t) = (language.closing(), language.text());
    for s in &closed.skipped {
        eprintln!("{}", (c.skipped)(s));
    }
    for n in &closed.notices {
        eprintln!("{}", (t.note)(n));
    }
    eprintln!("{}", scope_line(&closed, language));
    for s in &closed.settled {
        writeln!(
            out,
            "{}",
            (c.settled_by_statement)(
                &s.transaction_id,
                t.state(s.from.as_str()),
                t.state(s.to.as_str()),
                &s.place_in(language),
                s.run_id
            )
        )?;
    }
    for (tx, why) in &closed.not_settled {
        writeln!(
            out,
            "{}",
            (c.not_settled)(&safe_cell(tx), why.describe_in(language))
        )?;
    }
    for (id, note) in &closed.duplicates {
        writeln!(out, "{}", (c.duplicate_not_settled)(&safe_cell(id), note))?;
    }
    let rows: Vec<_> = closed
        .summary
        .iter()
        .map(|(cur, s)| {
            let cell = |(n, total): (u64, rust_decimal::Decimal)| (n, money(total, cur));
            (
                cur.clone(),
                [
                    cell(s.matched),
                    cell(s.differing),
                    cell(s.missing),
                    cell(s.out_of_scope),
                ],
            )
        })
        .collect();
    for line in (c.summary_lines)(&rows) {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "{}",
        (c.discrepancies)(
            closed.discrepancies,
            &closed.report.display().to_string(),
            &closed.summary_path.display().to_string(),
            &closed.statement_sha256
        )
    )?;
    let runs: BTreeSet<i64> = closed.settled.iter().map(|s| s.run_id).collect();
    rewrite_reports(store, runs, &inputs, language);
    Ok(Exit::complete_if(closed.discrepancies == 0))
}

/// What the statement was taken to speak about, in one line, in
/// `language`.
fn scope_line(closed: &Closed, language: Language) -> String {
    let c = language.closing();
    let n = |r: Reach| closed.reach.get(&r).copied().unwrap_or(0);
    let scope = &closed.scope;
    let provider = match &scope.provider {
        Some(p) => (c.scope_provider)(p, (c.scope_source)(scope.provider_from)),
        None => c.scope_no_provider.to_owned(),
    };
    let from = (c.scope_source)(scope.dates_from);
    let dates = match scope.dates {
        Some((lo, hi)) if lo == Day::MIN => (c.scope_until)(&hi.to_string(), from),
        Some((lo, hi)) if hi == Day::MAX => (c.scope_from)(&lo.to_string(), from),
        Some((lo, hi)) => (c.scope_dates)(&lo.to_string(), &hi.to_string(), from),
        None => c.scope_all_dates.to_owned(),
    };
    let run = scope.run.map_or_else(String::new, c.scope_run);
    (c.scope_line)(
        &provider,
        &dates,
        &run,
        n(Reach::InScope),
        n(Reach::OtherRun) + n(Reach::OutsideDates),
        n(Reach::OtherRun),
        n(Reach::OutsideDates),
        n(Reach::OtherProvider),
    )
}
