//! Rules over a file's rows as a whole rather than one row: a totals row
//! at the bottom of a sheet (a control total, never a payout) and the
//! config's `[skip]` rule for rows marked not to be paid.
//!
//! A totals row is a row with no payee in it: no account, and no name,
//! phone, e-mail or transaction id (a cell reading `Total` aside). A row
//! naming anyone is a payment, whatever its amount — with its account
//! empty it is refused, never taken for a total. A totals row must also be
//! the last row of the data (`validate::scan` refuses one that is not).

use super::{ControlTotal, SkipRule, Summary, amount, columns, fields};
use crate::config::Config;
use crate::input::RawRow;
use anyhow::Result;
use rust_decimal::Decimal;

pub(super) enum Totals {
    Row,
    Matches(ControlTotal),
    Differs(super::Reason),
}

/// Cells that name a payee: a row with any of them filled is a payment.
const PAYEE: [columns::Col; 5] = [
    columns::Col::TransactionId,
    columns::Col::BeneficiaryFirstname,
    columns::Col::BeneficiaryLastname,
    columns::Col::BeneficiaryPhone,
    columns::Col::BeneficiaryEmail,
];

/// A cell that labels a totals row (`TOTAL`, `Total général`, `Somme`).
fn total_label(cell: &str) -> bool {
    let k = columns::normalize(cell);
    k.starts_with("total") || k == "somme" || k == "grandtotal"
}

/// Whether `raw` is a totals row: no payee (no account, and no name,
/// phone, e-mail or transaction id other than a total label), and a cell
/// labelled total (`TOTAL`, `Total général`) or an amount equal to the sum
/// of the valid rows above (one currency). Such a row is a control total,
/// not a payout.
pub(super) fn totals_row(
    raw: &RawRow,
    cols: &columns::Columns,
    summary: &Summary,
    cfg: &Config,
) -> Totals {
    use columns::Col;
    let cell = |c: Col| {
        cols.index(c)
            .and_then(|i| raw.fields.get(i))
            .map_or("", fields::clean)
    };
    if !cell(Col::AccountId).is_empty() || summary.valid == 0 {
        return Totals::Row;
    }
    if PAYEE.iter().any(|&c| {
        let v = cell(c);
        !v.is_empty() && !total_label(v)
    }) {
        // Someone is named: a payment whose account is missing.
        return Totals::Row;
    }
    let labelled = raw.fields.iter().any(total_label);
    let single = (summary.currencies.len() == 1)
        .then(|| summary.currencies.iter().next())
        .flatten();
    let parsed = single.and_then(|(code, sum)| {
        let (code, exp) = fields::currency(code).ok()?;
        let a = amount::parse_amount_with(
            cell(Col::Amount),
            code,
            exp,
            crate::config::AmountUnit::Minor,
            cfg.number_format,
            Some(Decimal::MAX),
        )
        .ok()?;
        Some((code, a.value, sum.total))
    });
    match (parsed, labelled) {
        (Some((code, value, sum)), _) if value == sum => Totals::Matches(ControlTotal {
            row: raw.row,
            currency: code.to_owned(),
            total: value,
        }),
        (Some((code, value, sum)), true) => Totals::Differs(super::Reason::TotalsDiffer {
            total: value,
            sum,
            currency: code.to_owned(),
        }),
        (None, true) => Totals::Differs(super::Reason::TotalsUncomparable),
        _ => Totals::Row,
    }
}

/// The `[skip]` rule's column index in `header` and its values, folded.
pub(super) fn skip_rule(
    rule: &SkipRule,
    header: &RawRow,
) -> Result<(usize, Vec<String>), super::Refusal> {
    let wanted = columns::normalize(&rule.column);
    let Some(i) = header
        .fields
        .iter()
        .position(|h| columns::normalize(h) == wanted)
    else {
        return Err(super::Refusal::SkipColumn {
            column: columns::excerpt(&rule.column),
        });
    };
    if rule.values.is_empty() {
        return Err(super::Refusal::SkipNoValues);
    }
    Ok((
        i,
        rule.values.iter().map(|v| columns::normalize(v)).collect(),
    ))
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::validate::{RowOutcome, ScanOptions, Summary, scan};

    const HEADER: &str = "transaction_id,account_id,amount,currency,payout_method_id,beneficiary_firstname,beneficiary_lastname,beneficiary_phone,beneficiary_email";

    /// Scans `rows` (after the header) and returns the summary and every
    /// rejected row's (row, column, message).
    fn run(rows: &[&str]) -> (Summary, Vec<(u64, String, String)>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("paie.csv");
        std::fs::write(&path, format!("{HEADER}\n{}\n", rows.join("\n"))).unwrap();
        let mut rejected = Vec::new();
        let summary = scan(&path, &Config::default(), &ScanOptions::default(), |o| {
            if let RowOutcome::Rejected(r) = o {
                for e in &r.errors {
                    rejected.push((e.row, e.column.clone(), e.message.clone()));
                }
            }
            Ok(())
        })
        .unwrap();
        (summary, rejected)
    }

    const AWA: &str = "PAY-1,2250701100001,95000,XOF,momo,Awa,Koné,,";

    /// Issue 28, item 7: the second of two employees on the same salary,
    /// whose account was left empty, is a payee refused for its account,
    /// never a totals row — whichever payee cell names them.
    #[test]
    fn a_row_naming_a_payee_is_never_a_totals_row() {
        for payee in [
            "PAY-2,,95000,XOF,momo,,,,",
            ",,95000,XOF,momo,Ali,,,",
            ",,95000,XOF,momo,,Traoré,,",
            ",,95000,XOF,momo,,,+2250701100002,",
            ",,95000,XOF,momo,,,,ali@example.ci",
        ] {
            let (summary, rejected) = run(&[AWA, payee]);
            assert_eq!(summary.control_total, None, "{payee}");
            assert_eq!((summary.valid, summary.rejected), (1, 1), "{payee}");
            assert_eq!(rejected[0].0, 3, "{payee}");
            assert_eq!(rejected[0].1, "account_id", "{payee}");
            assert!(
                rejected[0].2.contains("fill it in"),
                "{payee}: {rejected:?}"
            );
        }
    }

    /// A row with no payee (a `Total` label aside) whose amount is the sum
    /// above is a control total when it is the last row of the data.
    #[test]
    fn a_totals_row_at_the_end_is_a_control_total() {
        let (summary, rejected) = run(&[AWA, ",,95000,XOF,,TOTAL,,,"]);
        assert!(rejected.is_empty(), "{rejected:?}");
        let t = summary.control_total.unwrap();
        assert_eq!((t.row, t.total.to_string().as_str()), (3, "95000"));
        assert!(
            summary.notices[0]
                .to_string()
                .contains("row 3 is a totals row")
        );
        let (summary, _) = run(&[AWA, ",,95000,XOF,,,,,"]);
        assert!(summary.control_total.is_some());
    }

    /// A totals row followed by more data is refused: a subtotal in the
    /// middle of the data, or a payee row that lost everything but its
    /// amount, is never left out silently.
    #[test]
    fn a_totals_row_followed_by_data_is_refused() {
        let (summary, rejected) = run(&[
            AWA,
            ",,95000,XOF,,,,,",
            "PAY-3,2250701100003,5000,XOF,momo,Ali,Traoré,,",
        ]);
        assert_eq!(summary.control_total, None);
        assert_eq!((summary.valid, summary.rejected, summary.rows), (2, 1, 3));
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].0, 3);
        assert!(
            rejected[0].2.contains("must be the last row")
                && rejected[0].2.contains("row 4 follows"),
            "{rejected:?}"
        );
    }
}
