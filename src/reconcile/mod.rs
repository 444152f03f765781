//! Closing the books (docs/closing.md): matching the database against the
//! provider's own statement, settling the `unknown` payouts the statement
//! settles (each with an audit line naming the statement's SHA-256 and
//! line), and writing `reconciliation.csv` with its per-currency summary.
//! Reading is [`statement`], comparing is the pure [`matching`]; this file
//! does the I/O around them. Running it twice with the same statement
//! changes nothing the second time: a settled payout matches.

pub mod guard;
pub mod matching;
pub mod poll;
pub mod statement;

pub use matching::{Booked, Comparison, Summary, Verdict};
pub use statement::{Statement, StatementLine, StatementSpec, StatementStatus};

use crate::output::safe_cell;
use crate::store::Store;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Header of `reconciliation.csv`.
pub const RECONCILIATION_HEADER: [&str; 14] = [
    "result",
    "run",
    "row",
    "transaction_id",
    "state",
    "account_id",
    "amount",
    "currency",
    "statement_line",
    "statement_account",
    "statement_amount",
    "statement_currency",
    "statement_status",
    "statement_word",
];

/// Header of `reconciliation.csv.summary.csv`.
pub const SUMMARY_HEADER: [&str; 7] = [
    "currency",
    "matched_count",
    "matched_total",
    "differing_count",
    "differing_total",
    "missing_count",
    "missing_total",
];

/// What `reconcile_statement` did.
#[derive(Debug, Clone)]
pub struct Closed {
    pub statement_sha256: String,
    /// (transaction id, from, to) of every payout settled now.
    pub settled: Vec<(String, crate::machine::State, crate::machine::State)>,
    /// (transaction id, why) of every payout the statement would settle
    /// but did not: its execute is on its way (`executing`), or another
    /// process changed it meanwhile ([`guard::IN_FLIGHT`], [`guard::CHANGED`]).
    pub skipped: Vec<(String, &'static str)>,
    /// How many lines did not match.
    pub discrepancies: u64,
    pub summary: BTreeMap<String, Summary>,
    pub report: PathBuf,
    pub summary_path: PathBuf,
}

/// Reads the statement at `path`, settles what it settles, writes the
/// reconciliation to `out` (and its summary beside it).
pub fn reconcile_statement(
    store: &mut Store,
    path: &Path,
    sheet: Option<&str>,
    spec: &StatementSpec,
    run: Option<i64>,
    out: &Path,
) -> Result<Closed> {
    let st = statement::read(path, sheet, spec)?;
    let mut booked = store.booked(run)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut settled = Vec::new();
    let mut skipped = Vec::new();
    // Settle first, then compare again so the file shows the states as
    // they now are (the same file a re-run would write).
    for line in matching::compare(&booked, &st.lines).lines {
        if let (Some(p), Some(l)) = (line.payout, line.statement)
            && p.state == crate::machine::State::Executing
            && l.status != StatementStatus::NotFinal
        {
            skipped.push((p.transaction_id.clone(), guard::IN_FLIGHT));
        }
        if let (Some(p), Some(l), Some(to)) = (line.payout, line.statement, line.settles) {
            let reason = format!(
                "statement {name} (sha256 {}) line {}: {}",
                st.sha256, l.line, l.status_word
            );
            let code = match to {
                crate::machine::State::Executed => "STATEMENT_PAID",
                _ => "STATEMENT_FAILED",
            };
            match store.resolve(p.id, p.state, to, "statement", &reason, code) {
                Ok(()) => settled.push((p.transaction_id.clone(), p.state, to)),
                // A re-send claimed it (or another terminal settled it)
                // since it was read: left to that, and said.
                Err(e) if crate::store::changed_meanwhile(&e) => {
                    skipped.push((p.transaction_id.clone(), guard::CHANGED));
                }
                Err(e) => return Err(e),
            }
        }
    }
    if !settled.is_empty() || !skipped.is_empty() {
        booked = store.booked(run)?;
    }
    let c = matching::compare(&booked, &st.lines);
    let summary_path = crate::report::summary_path(out);
    write(out, &summary_path, &c)?;
    Ok(Closed {
        statement_sha256: st.sha256.clone(),
        settled,
        skipped,
        discrepancies: c
            .lines
            .iter()
            .filter(|l| l.verdict != Verdict::Matched)
            .count() as u64,
        summary: c.summary,
        report: out.to_path_buf(),
        summary_path,
    })
}

fn write(out: &Path, summary: &Path, c: &Comparison<'_>) -> Result<()> {
    crate::report::write_atomically(out, |f| {
        let mut w = csv::Writer::from_writer(f);
        w.write_record(RECONCILIATION_HEADER)?;
        for l in &c.lines {
            let (run, row, tx, state, account, amount, currency) = match l.payout {
                Some(p) => (
                    p.run_id.to_string(),
                    p.row.to_string(),
                    p.transaction_id.as_str(),
                    p.state.as_str(),
                    p.account_id.as_str(),
                    p.wire_amount.to_string(),
                    p.currency.as_str(),
                ),
                None => (
                    String::new(),
                    String::new(),
                    l.statement.map_or("", |s| s.transaction_id.as_str()),
                    "",
                    "",
                    String::new(),
                    "",
                ),
            };
            let (sl, sacc, samt, scur, sst, sword) = match l.statement {
                Some(s) => (
                    s.line.to_string(),
                    s.account.as_str(),
                    s.amount.to_string(),
                    s.currency.as_str(),
                    s.status.as_str(),
                    s.status_word.as_str(),
                ),
                None => (String::new(), "", String::new(), "", "", ""),
            };
            w.write_record([
                l.verdict.as_str(),
                &run,
                &row,
                &safe_cell(tx),
                state,
                &safe_cell(account),
                &amount,
                &safe_cell(currency),
                &sl,
                &safe_cell(sacc),
                &samt,
                &safe_cell(scur),
                sst,
                &safe_cell(sword),
            ])?;
        }
        w.flush()?;
        Ok(())
    })?;
    crate::report::write_atomically(summary, |f| {
        let mut w = csv::Writer::from_writer(f);
        w.write_record(SUMMARY_HEADER)?;
        for (cur, s) in &c.summary {
            w.write_record([
                safe_cell(cur).as_ref(),
                &s.matched.0.to_string(),
                &s.matched.1.to_string(),
                &s.differing.0.to_string(),
                &s.differing.1.to_string(),
                &s.missing.0.to_string(),
                &s.missing.1.to_string(),
            ])?;
        }
        w.flush()?;
        Ok(())
    })
}
