//! The verdict of a run: which rows failed for good, which wait for a
//! wallet top-up, which have an unknown outcome, which were not sent yet,
//! and what the operator does next about each. Built from the run's rows
//! by a pure function ([`Verdict::of`]) so the advice is tested without a
//! provider; serialisable, as the `result` of `--log-format json` and the
//! body given to `on_finish`. It carries no secret: row numbers, ids,
//! currencies and counts only.

use crate::machine::State;
use crate::store::ReportRow;
use serde::Serialize;
use std::collections::BTreeMap;

/// Row numbers kept per list: enough to act on, small enough for a chat
/// message or a cron mail; the counts are always whole.
const ROWS_KEPT: usize = 100;
/// Row numbers shown in a line of the text verdict.
const ROWS_SHOWN: usize = 10;
/// The code the engine records on payouts left `initiated` because their
/// currency's wallet ran out.
const WALLET_RAN_OUT: &str = "NOT_EXECUTED";

/// Rows of one kind: how many, and the first [`ROWS_KEPT`] row numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Rows {
    pub count: u64,
    pub rows: Vec<u64>,
}

impl Rows {
    fn add(&mut self, row: u64) {
        self.count += 1;
        if self.rows.len() < ROWS_KEPT {
            self.rows.push(row);
        }
    }

    /// `rows 3, 7 and 2 more`.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = self
            .rows
            .iter()
            .take(ROWS_SHOWN)
            .map(u64::to_string)
            .collect();
        let word = if self.count == 1 { "row" } else { "rows" };
        let more = self.count.saturating_sub(shown.len() as u64);
        if more > 0 {
            format!("{word} {} and {more} more", shown.join(", "))
        } else {
            format!("{word} {}", shown.join(", "))
        }
    }
}

/// What became of a run's rows, grouped by what to do about them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub executed: u64,
    /// `initiated` and meant to stay so (`--initiate-only`).
    pub initiated: u64,
    /// `initiate_failed` or `execute_failed`: the provider refused them.
    pub failed: Rows,
    /// Left `initiated` because the wallet of their currency ran out.
    pub waiting_top_up: BTreeMap<String, Rows>,
    /// `unknown`: may or may not have been paid.
    pub unknown: Rows,
    /// Not sent, or not finished, yet (`pending`, `initiated`, in flight).
    pub open: Rows,
    /// `cancelled`: ended by `payrun cancel`, never sent.
    pub cancelled: u64,
}

impl Verdict {
    /// Groups report rows (in any order) by what to do next.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a ReportRow>, initiate_only: bool) -> Verdict {
        let mut v = Verdict::default();
        for r in rows {
            v.add(r, initiate_only);
        }
        v
    }

    /// Counts one report row (every row of the run once).
    pub fn add(&mut self, r: &ReportRow, initiate_only: bool) {
        let Ok(state) = State::parse(&r.state) else {
            return;
        };
        match state {
            State::Executed => self.executed += 1,
            State::InitiateFailed | State::ExecuteFailed => self.failed.add(r.row),
            State::Unknown => self.unknown.add(r.row),
            State::Initiated if r.provider_code == WALLET_RAN_OUT => self
                .waiting_top_up
                .entry(r.currency.clone())
                .or_default()
                .add(r.row),
            State::Initiated if initiate_only => self.initiated += 1,
            State::Rejected => {}
            State::Cancelled => self.cancelled += 1,
            _ => self.open.add(r.row),
        }
    }

    /// Nothing is left for the operator to do.
    pub fn all_done(&self) -> bool {
        self.failed.count == 0
            && self.unknown.count == 0
            && self.open.count == 0
            && self.waiting_top_up.is_empty()
    }

    /// The advice, one line per kind of row, in the order to act on it.
    /// `report` names the report file; `run_id` the run.
    pub fn advice(&self, run_id: i64, report: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (currency, rows) in &self.waiting_top_up {
            out.push(format!(
                "{} wait for a top-up of the {currency} wallet: top it up, then run the same command again",
                rows.describe()
            ));
        }
        if self.unknown.count > 0 {
            out.push(format!(
                "{} may or may not have been paid: check them with the provider, then settle them with `payrun reconcile --run {run_id}`",
                self.unknown.describe()
            ));
        }
        if self.open.count > 0 {
            out.push(format!(
                "{} not finished: run the same command again to resume (or `payrun cancel {run_id}` to end the run)",
                self.open.describe()
            ));
        }
        if self.failed.count > 0 {
            out.push(format!(
                "{} failed for good (the provider refused them; see {report}): correct them and pay them in a new file",
                self.failed.describe()
            ));
        }
        if self.initiated > 0 && out.is_empty() {
            out.push(format!(
                "{} payout(s) initiated, no money moved: once approved, run again without --initiate-only",
                self.initiated
            ));
        }
        if out.is_empty() {
            out.push(format!(
                "all {} payout(s) executed; nothing left to do",
                self.executed
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: u64, state: &str, code: &str, currency: &str) -> ReportRow {
        ReportRow {
            row: n,
            transaction_id: format!("t{n}"),
            account_id: String::new(),
            beneficiary: String::new(),
            amount: "1".into(),
            currency: currency.into(),
            state: state.into(),
            provider_code: code.into(),
            provider_message: String::new(),
            attempts: 1,
            initiated_at: String::new(),
            executed_at: String::new(),
        }
    }

    #[test]
    fn rows_are_grouped_by_what_to_do_next() {
        let rows = [
            row(2, "executed", "SUCCESS", "XOF"),
            row(3, "execute_failed", "INSUFFICIENT_BALANCE", "XOF"),
            row(4, "initiated", "NOT_EXECUTED", "XOF"),
            row(5, "initiated", "NOT_EXECUTED", "XOF"),
            row(6, "unknown", "", "GHS"),
            row(7, "pending", "", "GHS"),
            row(8, "initiate_failed", "RECIPIENT_NOT_FOUND", "GHS"),
        ];
        let v = Verdict::of(&rows, false);
        assert_eq!(v.executed, 1);
        assert_eq!(v.failed.rows, [3, 8]);
        assert_eq!(v.waiting_top_up["XOF"].rows, [4, 5]);
        assert_eq!(v.unknown.rows, [6]);
        assert_eq!(v.open.rows, [7]);
        let advice = v.advice(9, "report.csv");
        assert_eq!(advice.len(), 4, "{advice:?}");
        assert!(advice[0].starts_with("rows 4, 5 wait for a top-up of the XOF wallet"));
        assert!(advice[1].contains("payrun reconcile --run 9"));
        assert!(advice[2].contains("run the same command again"));
        assert!(advice[3].starts_with("rows 3, 8 failed for good"));
        assert!(!v.all_done());
    }

    #[test]
    fn a_clean_run_and_an_approval_say_so() {
        let done = Verdict::of(&[row(2, "executed", "SUCCESS", "XOF")], false);
        assert!(done.all_done());
        assert_eq!(
            done.advice(1, "r"),
            ["all 1 payout(s) executed; nothing left to do"]
        );
        let approval = Verdict::of(&[row(2, "initiated", "INITIATED", "XOF")], true);
        assert!(approval.all_done());
        assert!(approval.advice(1, "r")[0].contains("without --initiate-only"));
        let stopped = Verdict::of(&[row(2, "initiated", "INITIATED", "XOF")], false);
        assert_eq!(stopped.open.count, 1);
    }

    #[test]
    fn long_lists_are_counted_whole_and_shown_short() {
        let rows: Vec<ReportRow> = (1..=250).map(|n| row(n, "unknown", "", "XOF")).collect();
        let v = Verdict::of(&rows, false);
        assert_eq!(v.unknown.count, 250);
        assert_eq!(v.unknown.rows.len(), ROWS_KEPT);
        assert!(v.unknown.describe().ends_with("10 and 240 more"));
    }
}
