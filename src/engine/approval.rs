//! Control totals for the approver: the count and total per currency of
//! the payouts whose initiation the provider accepted, written beside the
//! report after `--initiate-only` (`approval-run-N.csv`, named by
//! `engine::outputs`), and the check that
//! `--expect-total CUR=AMOUNT` makes before anything is executed. Pure
//! functions over the store's totals, plus the one file write.

use crate::machine::{ACCEPTED, NOT_INITIATED};
use crate::output::safe_cell;
use crate::store::{Tally, Totals};
use anyhow::Result;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::Path;

/// Count and total per currency of the accepted initiations.
pub fn control_totals(totals: &Totals) -> BTreeMap<String, Tally> {
    let mut out = BTreeMap::new();
    for (cur, by_state) in totals {
        let mut t = Tally::default();
        for s in ACCEPTED {
            if let Some(x) = by_state.get(s) {
                t.count += x.count;
                t.total += x.total;
            }
        }
        if t.count > 0 {
            out.insert(cur.clone(), t);
        }
    }
    out
}

/// Why an execute run with `--expect-total` refuses to send anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotalsRefused {
    #[error(
        "{0} payout(s) are not initiated yet; run with --initiate-only first, have the totals approved, then execute with --expect-total"
    )]
    NotInitiated(u64),
    #[error("the initiated payouts do not add up to the expected totals: {}", .0.join("; "))]
    Mismatch(Vec<String>),
}

/// Checks the run's totals against the approver's `expected` totals.
pub fn check_expected(
    totals: &Totals,
    expected: &[(String, Decimal)],
) -> Result<(), TotalsRefused> {
    let waiting: u64 = totals
        .values()
        .flat_map(|by| NOT_INITIATED.iter().filter_map(|s| by.get(s)))
        .map(|t| t.count)
        .sum();
    if waiting > 0 {
        return Err(TotalsRefused::NotInitiated(waiting));
    }
    let actual = control_totals(totals);
    let mut want: BTreeMap<String, Decimal> = BTreeMap::new();
    for (cur, amount) in expected {
        *want.entry(cur.to_uppercase()).or_default() += *amount;
    }
    let mut wrong = Vec::new();
    for (cur, amount) in &want {
        let got = actual.get(cur).map(|t| t.total).unwrap_or_default();
        if got != *amount {
            wrong.push(format!("{cur}: expected {amount}, initiated {got}"));
        }
    }
    for (cur, t) in &actual {
        if !want.contains_key(cur) {
            wrong.push(format!(
                "{cur}: {} initiated in {} payout(s), no --expect-total {cur}=... given",
                t.total, t.count
            ));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(TotalsRefused::Mismatch(wrong))
    }
}

/// Writes `currency,count,total,note` to `path` for sign-off, in the
/// report's `style`: its delimiter, byte-order mark, decimal separator and
/// the language of its header. Amounts stay numbers a spreadsheet sums
/// (never grouped).
pub fn write_approval(
    path: &Path,
    totals: &BTreeMap<String, Tally>,
    notes: &[String],
    style: &crate::report::ReportStyle,
) -> Result<()> {
    crate::report::write_atomically(path, |f| {
        if style.bom {
            std::io::Write::write_all(f, crate::report::style::BOM)?;
        }
        let mut w = csv::WriterBuilder::new()
            .delimiter(style.delimiter)
            .from_writer(f);
        w.write_record(style.language.text().approval_csv_header)?;
        for (cur, t) in totals {
            w.write_record([
                safe_cell(cur).as_ref(),
                &t.count.to_string(),
                &style.amount(&t.total.to_string()),
                "",
            ])?;
        }
        // What the approver must know beyond the totals: second payments
        // allowed, a totals row used, rows skipped as already paid.
        for note in notes {
            w.write_record(["", "", "", safe_cell(note).as_ref()])?;
        }
        w.flush()?;
        Ok(())
    })
}

/// Parses `CUR=AMOUNT` (the `--expect-total` flag).
pub fn parse_expected(s: &str) -> Result<(String, Decimal), String> {
    let (cur, amount) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not CUR=AMOUNT (e.g. XOF=1112500)"))?;
    let cur = cur.trim().to_uppercase();
    if cur.len() != 3 || !cur.chars().all(|c| c.is_ascii_alphabetic()) {
        return Err(format!("`{cur}` is not a currency code (e.g. XOF)"));
    }
    let amount: Decimal = amount
        .trim()
        .parse()
        .map_err(|_| format!("`{amount}` is not an amount (e.g. 1112500 or 10.50)"))?;
    Ok((cur, amount))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::State;

    fn totals(rows: &[(&str, State, u64, i64)]) -> Totals {
        let mut t = Totals::new();
        for (cur, s, n, total) in rows {
            t.entry(cur.to_string()).or_default().insert(
                *s,
                Tally {
                    count: *n,
                    total: Decimal::from(*total),
                },
            );
        }
        t
    }

    #[test]
    fn control_totals_count_accepted_initiations_only() {
        let t = totals(&[
            ("XOF", State::Initiated, 2, 3000),
            ("XOF", State::Executed, 1, 500),
            ("XOF", State::InitiateFailed, 1, 999),
        ]);
        let c = control_totals(&t);
        assert_eq!((c["XOF"].count, c["XOF"].total), (3, Decimal::from(3500)));
    }

    #[test]
    fn expected_totals_must_match_every_currency() {
        let t = totals(&[
            ("XOF", State::Initiated, 2, 3000),
            ("GHS", State::Initiated, 1, 10),
        ]);
        let ok = [
            parse_expected("XOF=3000").unwrap(),
            parse_expected("ghs=10").unwrap(),
        ];
        assert_eq!(check_expected(&t, &ok), Ok(()));
        let Err(TotalsRefused::Mismatch(m)) = check_expected(&t, &ok[..1]) else {
            panic!("an unapproved currency passed")
        };
        assert!(m[0].starts_with("GHS"), "{m:?}");
        let wrong = [parse_expected("XOF=2999").unwrap(), ok[1].clone()];
        assert!(matches!(
            check_expected(&t, &wrong),
            Err(TotalsRefused::Mismatch(_))
        ));
        let pending = totals(&[("XOF", State::Pending, 1, 1)]);
        assert_eq!(
            check_expected(&pending, &ok),
            Err(TotalsRefused::NotInitiated(1))
        );
    }

    #[test]
    fn bad_expect_total_flags_are_explained() {
        assert!(parse_expected("XOF").unwrap_err().contains("CUR=AMOUNT"));
        assert!(
            parse_expected("XOF=abc")
                .unwrap_err()
                .contains("not an amount")
        );
        assert!(parse_expected("1=2").unwrap_err().contains("currency"));
    }
}
