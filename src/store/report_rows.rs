//! The rows of a run's report, as both backends build them: the
//! beneficiary's name, the line of a row skipped because an earlier run
//! already paid (or holds) it, and the merge of the two ordered streams
//! (payouts in file order, skipped rows in row order) into one report in
//! row order without sorting it; and the totals per currency and state,
//! summed as decimals (never by SQL, which would sum floats). The backends
//! only read columns; every string and sum the report shows is made here,
//! so SQLite and PostgreSQL reports are identical.

use super::types::{ReportRow, SKIPPED, Totals};
use crate::machine::State;
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use std::str::FromStr;

/// Counts `count` payouts of `amount` (a stored decimal) each in their
/// currency and state.
pub(crate) fn add_to_totals(
    out: &mut Totals,
    currency: String,
    state: State,
    amount: &str,
    count: u64,
) -> Result<()> {
    let each = Decimal::from_str(amount)
        .with_context(|| format!("corrupt amount {amount:?} in the database"))?;
    let tally = out.entry(currency).or_default().entry(state).or_default();
    tally.count += count;
    tally.total += each * Decimal::from(count);
    Ok(())
}

/// "First Last", or whichever of the two is there.
pub(crate) fn beneficiary(first: String, last: String) -> String {
    match (first.is_empty(), last.is_empty()) {
        (false, false) => format!("{first} {last}"),
        _ => format!("{first}{last}"),
    }
}

/// A row of this run skipped as already paid by an earlier payout, with
/// what the report says about that payout.
pub(crate) struct SkippedRow {
    /// The row of this run's file.
    pub row: u64,
    /// The earlier payout's columns.
    pub transaction_id: String,
    pub account_id: String,
    pub b_first: String,
    pub b_last: String,
    pub amount: String,
    pub currency: String,
    pub state: State,
    /// Where the earlier payout came from: its run, row, file, start.
    pub run_id: i64,
    pub run_row: u64,
    pub run_file: String,
    pub run_created_at: String,
}

impl SkippedRow {
    /// The report line (docs/rerun.md): not a payout of this run, so no
    /// attempts and no times; the code and message name the earlier one.
    pub(crate) fn into_report_row(self) -> ReportRow {
        let earlier = self.state;
        let what = match earlier {
            State::Executed => "was paid by",
            State::Unknown | State::Processing => "may have been paid by",
            State::Cancelled => "was cancelled in",
            State::SetAside => "was set aside in",
            s if s.is_open() => "is still open in",
            _ => "is held by",
        };
        ReportRow {
            row: self.row,
            transaction_id: self.transaction_id,
            account_id: self.account_id,
            beneficiary: beneficiary(self.b_first, self.b_last),
            amount: self.amount,
            currency: self.currency,
            state: SKIPPED.to_string(),
            provider_code: format!("ALREADY_{}", earlier.as_str().to_ascii_uppercase()),
            provider_message: format!(
                "not sent again: this payout {what} run {} ({}, started {}), row {}, now {earlier}",
                self.run_id, self.run_file, self.run_created_at, self.run_row
            ),
            attempts: 0,
            initiated_at: String::new(),
            executed_at: String::new(),
        }
    }
}

/// Calls `f` for every line of the report: the payouts (in file order)
/// and the skipped rows (in row order) merged by row, a skipped row before
/// a payout of a later row. Each `next_*` yields its stream's next line or
/// `None` at its end; neither stream is held in memory.
pub(crate) fn merge_in_row_order(
    mut next_skipped: impl FnMut() -> Result<Option<ReportRow>>,
    mut next_payout: impl FnMut() -> Result<Option<ReportRow>>,
    mut f: impl FnMut(ReportRow) -> Result<()>,
) -> Result<()> {
    let mut skipped = next_skipped()?;
    while let Some(row) = next_payout()? {
        while let Some(s) = skipped.take_if(|s| s.row < row.row) {
            f(s)?;
            skipped = next_skipped()?;
        }
        f(row)?;
    }
    while let Some(s) = skipped.take() {
        f(s)?;
        skipped = next_skipped()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(row: u64, state: &str) -> ReportRow {
        ReportRow {
            row,
            transaction_id: format!("tx-{row}"),
            account_id: String::new(),
            beneficiary: String::new(),
            amount: "1".into(),
            currency: "XOF".into(),
            state: state.into(),
            provider_code: String::new(),
            provider_message: String::new(),
            attempts: 0,
            initiated_at: String::new(),
            executed_at: String::new(),
        }
    }

    #[test]
    fn merges_two_ordered_streams_by_row() {
        let mut skipped = vec![line(2, SKIPPED), line(5, SKIPPED), line(9, SKIPPED)].into_iter();
        let mut payouts =
            vec![line(3, "pending"), line(4, "pending"), line(6, "executed")].into_iter();
        let mut rows = Vec::new();
        merge_in_row_order(
            || Ok(skipped.next()),
            || Ok(payouts.next()),
            |r| {
                rows.push(r.row);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(rows, vec![2, 3, 4, 5, 6, 9]);
    }

    #[test]
    fn an_error_of_the_callback_stops_the_merge() {
        let mut payouts = (2..100).map(|r| line(r, "pending"));
        let mut seen = 0;
        let err = merge_in_row_order(
            || Ok(None),
            || Ok(payouts.next()),
            |_| {
                seen += 1;
                anyhow::ensure!(seen < 3, "disk full");
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(format!("{err}"), "disk full");
        assert_eq!(seen, 3);
    }

    #[test]
    fn beneficiary_joins_what_is_there() {
        assert_eq!(beneficiary("Ama".into(), "Mensah".into()), "Ama Mensah");
        assert_eq!(beneficiary("".into(), "Mensah".into()), "Mensah");
        assert_eq!(beneficiary("Ama".into(), "".into()), "Ama");
    }
}
