//! `reconciliation.csv` and `reconciliation.csv.summary.csv`: one line per
//! payout and per statement line with its verdict, and per currency the
//! counts and totals matched, differing, missing and out of scope. Written
//! atomically; every cell taken from the statement or the payroll is made
//! formula-safe.

use super::matching::Comparison;
use crate::output::safe_cell;
use anyhow::Result;
use std::path::Path;

/// Header of `reconciliation.csv` in English, fixed: scripts key on it
/// (`language = "fr"` gives people French names, as the report does).
pub const RECONCILIATION_HEADER: [&str; 16] =
    crate::lang::Language::En.closing().reconciliation_header;

/// Header of `reconciliation.csv.summary.csv` in English, fixed.
pub const SUMMARY_HEADER: [&str; 9] = crate::lang::Language::En
    .closing()
    .reconciliation_summary_header;

/// An amount with its currency's ISO 4217 decimals (`1250.50` EUR,
/// `25000` XOF), as a spreadsheet shows money.
pub fn money(amount: rust_decimal::Decimal, currency: &str) -> String {
    let mut a = amount;
    if let Ok((_, exponent)) = crate::validate::fields::currency(currency)
        && a.scale() < u32::from(exponent)
    {
        a.rescale(u32::from(exponent));
    }
    a.to_string()
}

/// Writes the reconciliation and its summary: headers and notes in
/// `language`; verdicts, states and amounts as scripts read them.
pub(super) fn write(
    out: &Path,
    summary: &Path,
    c: &Comparison<'_>,
    language: crate::lang::Language,
) -> Result<()> {
    crate::report::write_atomically(out, |f| {
        let mut w = csv::Writer::from_writer(f);
        w.write_record(language.closing().reconciliation_header)?;
        for l in &c.lines {
            let (run, row, tx, state, account, amount, currency) = match l.payout {
                Some(p) => (
                    p.run_id.to_string(),
                    p.row.to_string(),
                    p.transaction_id.as_str(),
                    p.state.as_str(),
                    p.account_id.as_str(),
                    money(p.amount, &p.currency),
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
            let (sl, sacc, samt, scur, sst, sword, ssheet) = match l.statement {
                Some(s) => (
                    s.line.to_string(),
                    s.account.as_str(),
                    money(s.amount, &s.currency),
                    s.currency.as_str(),
                    s.status.as_str(),
                    s.status_word.as_str(),
                    s.sheet.as_deref().unwrap_or(""),
                ),
                None => (String::new(), "", String::new(), "", "", "", ""),
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
                &safe_cell(ssheet),
                &safe_cell(&l.note_in(language)),
            ])?;
        }
        w.flush()?;
        Ok(())
    })?;
    crate::report::write_atomically(summary, |f| {
        let mut w = csv::Writer::from_writer(f);
        w.write_record(language.closing().reconciliation_summary_header)?;
        for (cur, s) in &c.summary {
            w.write_record([
                safe_cell(cur).as_ref(),
                &s.matched.0.to_string(),
                &money(s.matched.1, cur),
                &s.differing.0.to_string(),
                &money(s.differing.1, cur),
                &s.missing.0.to_string(),
                &money(s.missing.1, cur),
                &s.out_of_scope.0.to_string(),
                &money(s.out_of_scope.1, cur),
            ])?;
        }
        w.flush()?;
        Ok(())
    })
}
