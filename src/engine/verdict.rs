//! The verdict of a run: which rows failed for good, which wait for a
//! wallet top-up, which have an unknown outcome, which were not sent yet,
//! and what the operator does next about each. Built from the run's rows
//! by a pure function ([`Verdict::of`]) so the advice is tested without a
//! provider; serialisable, as the `result` of `--log-format json` and the
//! body given to `on_finish`. It carries no secret: row numbers, ids,
//! currencies and counts only.

use crate::lang::Language;
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
        self.describe_in(Language::En)
    }

    /// [`Rows::describe`] in `language`.
    pub fn describe_in(&self, language: Language) -> String {
        let shown: Vec<String> = self
            .rows
            .iter()
            .take(ROWS_SHOWN)
            .map(u64::to_string)
            .collect();
        let more = self.count.saturating_sub(shown.len() as u64);
        (language.text().rows_list)(self.count, &shown.join(", "), more)
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
    /// Payouts whose unknown outcome was settled by a re-send under the
    /// same transaction id on the way (the audit trail's `resend` lines).
    pub resent: u64,
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

    /// The advice, one line per kind of row, in the order to act on it,
    /// in English (the `advice` of the JSON result). `report` names the
    /// report file; `run_id` the run.
    pub fn advice(&self, run_id: i64, report: &str) -> Vec<String> {
        self.advice_in(run_id, report, Language::En)
    }

    /// [`Verdict::advice`] in `language`, for people.
    pub fn advice_in(&self, run_id: i64, report: &str, language: Language) -> Vec<String> {
        let t = language.text();
        let mut out = Vec::new();
        for (currency, rows) in &self.waiting_top_up {
            out.push((t.waiting_top_up)(&rows.describe_in(language), currency));
        }
        if self.unknown.count > 0 {
            out.push((t.may_have_paid)(
                &self.unknown.describe_in(language),
                run_id,
            ));
        }
        if self.open.count > 0 {
            out.push((t.not_finished)(&self.open.describe_in(language), run_id));
        }
        if self.failed.count > 0 {
            out.push((t.failed_for_good)(
                &self.failed.describe_in(language),
                report,
            ));
        }
        if self.initiated > 0 && out.is_empty() {
            out.push((t.initiated_only)(self.initiated));
        }
        if out.is_empty() {
            out.push((t.all_executed)(self.executed));
            if self.resent > 0 {
                out.push((t.settled_by_resend)(self.resent));
            }
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
        // Settled by a re-send on the way: the verdict says so, in French too.
        let resent = Verdict {
            executed: 30,
            resent: 7,
            ..Verdict::default()
        };
        let lines = resent.advice(1, "r");
        assert_eq!(lines[0], "all 30 payout(s) executed; nothing left to do");
        assert!(
            lines[1].starts_with("7 of them had an unknown outcome"),
            "{lines:?}"
        );
        let lines = resent.advice_in(1, "r", Language::Fr);
        assert!(
            lines[0].starts_with("les 30 paiement(s) sont exécutés"),
            "{lines:?}"
        );
        assert!(lines[1].contains("renvoi"), "{lines:?}");
        let v = Verdict::of(&[row(3, "unknown", "", "XOF")], false);
        assert!(v.advice_in(2, "r", Language::Fr)[0].starts_with("ligne 3\u{a0}:"));
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
