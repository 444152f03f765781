//! The per-person guard (docs/rerun.md, "One person, one period"), pure.
//! Before anything is sent, a row about to be paid (new, or re-paying a
//! failed payout) is compared with the earlier payouts of the same person —
//! canonical account key and currency — that the store found for it
//! (`Import::same_person_many`: one indexed look-up per row, a batch of
//! rows per query):
//!
//! - any payout of the **same period**, whatever its amount, that was paid,
//!   is in flight, processing or unknown: a corrected amount is not a
//!   second salary;
//! - a payout of **another period** with the same amount within
//!   `repeat_window_days` of its own last change, or still open: the same
//!   payroll run twice under two periods;
//! - an identical row of the same file.
//!
//! Any of them stops the run (exit 2) naming the earlier payment — run,
//! row, amount, date, state — unless `--allow-repeats` (then each is
//! recorded as an override: the approval page and the audit trail show
//! it). This file only judges and words; the look-up is the store's, the
//! flow `engine::import`'s.

use crate::machine::State;
use crate::store::Earlier;
use rust_decimal::Decimal;
use std::str::FromStr;

/// Repeats listed in full; beyond, a count (the operator looks at the
/// pattern, and the list can be long when a whole payroll is repeated).
pub const MAX_REPEATS_LISTED: usize = 50;

/// A row about to be paid, as the guard sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'a> {
    pub row: u64,
    /// The account as the row gives it (what the operator recognises).
    pub account: &'a str,
    /// Normalised decimal.
    pub amount: &'a str,
    pub currency: &'a str,
    /// The period the row is paid under (for a re-payment, the period of
    /// the payout it re-pays).
    pub period: &'a str,
}

/// What a row repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepeatOf {
    /// A payout to the same person in the same period, any amount.
    SamePeriod(Earlier),
    /// A payout of the same amount to the same person in another period,
    /// within the window.
    Recent(Earlier),
    /// An identical earlier row of the same file.
    Row(u64),
}

impl RepeatOf {
    /// The earlier payout, when it is one.
    pub fn earlier(&self) -> Option<&Earlier> {
        match self {
            RepeatOf::SamePeriod(e) | RepeatOf::Recent(e) => Some(e),
            RepeatOf::Row(_) => None,
        }
    }
}

/// One row that repeats an earlier payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    pub row: u64,
    pub account: String,
    pub amount: String,
    pub currency: String,
    pub of: RepeatOf,
}

/// Which of `found` (earlier payouts of the candidate's person, as the
/// store returned them) stop the candidate, and why; then the identical row
/// of the file, if any. A payout of the candidate's period counts whatever
/// its amount; one of another period only with the same amount (the store
/// returned only those within the window or still open).
pub fn judge(c: &Candidate<'_>, found: Vec<Earlier>, same_file: Option<u64>) -> Vec<Repeat> {
    let repeat = |of| Repeat {
        row: c.row,
        account: c.account.to_string(),
        amount: c.amount.to_string(),
        currency: c.currency.to_string(),
        of,
    };
    let mut out: Vec<Repeat> = found
        .into_iter()
        .filter(|e| e.currency == c.currency && crate::machine::GUARDED.contains(&e.state))
        .filter_map(|e| {
            if e.period == c.period {
                Some(RepeatOf::SamePeriod(e))
            } else if e.amount == c.amount {
                Some(RepeatOf::Recent(e))
            } else {
                None
            }
        })
        .map(repeat)
        .collect();
    if let Some(first) = same_file {
        out.push(repeat(RepeatOf::Row(first)));
    }
    out
}

/// How an earlier payout stands, as a verb phrase: paid, maybe paid, or
/// still being paid.
fn stands(state: State) -> &'static str {
    match state {
        State::Executed => "was already paid",
        State::Unknown => "may already have been paid (its outcome is unknown)",
        _ => "is already being paid",
    }
}

/// The difference a correction would pay, when the row asks for more than
/// the earlier payment.
fn difference(amount: &str, earlier: &str) -> Option<Decimal> {
    let d = Decimal::from_str(amount).ok()? - Decimal::from_str(earlier).ok()?;
    (d > Decimal::ZERO).then_some(d.normalize())
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "row {}: account {}, {} {}",
            self.row, self.account, self.amount, self.currency
        )?;
        let (e, what) = match &self.of {
            RepeatOf::Row(r) => return write!(f, " repeats row {r} of this file"),
            RepeatOf::SamePeriod(e) => (e, format!("in period {}", e.period)),
            RepeatOf::Recent(e) => (e, format!("in period {}, recently", e.period)),
        };
        write!(
            f,
            ": this person {} {} {} {what} by run {} ({}), row {}, on {}, now {}",
            stands(e.state),
            e.amount,
            e.currency,
            e.run_id,
            e.run_file,
            e.row,
            e.at,
            e.state
        )?;
        if let (RepeatOf::SamePeriod(_), Some(d)) = (&self.of, difference(&self.amount, &e.amount))
        {
            write!(
                f,
                " (if this corrects that payment, pay only the difference, {d} {})",
                self.currency
            )?;
        }
        Ok(())
    }
}

/// What to do about the repeats, said once after the list.
pub fn what_to_do(period: &str) -> String {
    (crate::lang::Language::En.text().repeats_what_to_do)(period)
}

/// The sentence recorded when `--allow-repeats` lets a repeat through.
pub fn allowed(r: &Repeat) -> String {
    format!("paid with --allow-repeats: {r}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn earlier(id: i64, state: State, period: &str, amount: &str) -> Earlier {
        Earlier {
            payout_id: id,
            run_id: 1,
            row: 2,
            transaction_id: format!("tx-{id}"),
            state,
            account_id: "2250701100001".into(),
            account_key: "+2250701100001".into(),
            amount: amount.into(),
            currency: "XOF".into(),
            method: "momo".into(),
            run_file: "payroll.csv".into(),
            run_created_at: "2026-11-02T10:00:00.000Z".into(),
            run_finished: true,
            period: period.into(),
            at: "2026-11-02T10:00:05.000Z".into(),
            origin_run: 1,
        }
    }

    fn awa(amount: &str) -> Candidate<'_> {
        Candidate {
            row: 7,
            account: "+225 07 01 10 00 01",
            amount,
            currency: "XOF",
            period: "2026-11",
        }
    }

    #[test]
    fn the_same_period_counts_any_amount_another_only_the_same() {
        let found = vec![
            earlier(1, State::Executed, "2026-11", "95000"),
            earlier(2, State::Executed, "2026-10", "95000"),
            earlier(3, State::Executed, "2026-10", "105000"),
        ];
        let got = judge(&awa("105000"), found, None);
        let ids: Vec<(i64, bool)> = got
            .iter()
            .map(|r| {
                let e = r.of.earlier().unwrap();
                (e.payout_id, matches!(r.of, RepeatOf::SamePeriod(_)))
            })
            .collect();
        assert_eq!(ids, [(1, true), (3, false)]);
        let text = got[0].to_string();
        for part in [
            "row 7",
            "account +225 07 01 10 00 01, 105000 XOF",
            "was already paid 95000 XOF in period 2026-11",
            "by run 1 (payroll.csv), row 2, on 2026-11-02T10:00:05.000Z, now executed",
            "pay only the difference, 10000 XOF",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
        assert!(got[1].to_string().contains("in period 2026-10, recently"));
        assert!(!got[1].to_string().contains("difference"));
    }

    #[test]
    fn failed_payouts_and_other_currencies_never_count() {
        let mut other = earlier(5, State::Executed, "2026-11", "95000");
        other.currency = "GHS".into();
        let found = vec![
            earlier(1, State::ExecuteFailed, "2026-11", "95000"),
            earlier(2, State::InitiateFailed, "2026-11", "95000"),
            earlier(3, State::Cancelled, "2026-11", "95000"),
            other,
        ];
        assert!(judge(&awa("95000"), found, None).is_empty());
        for state in crate::machine::GUARDED {
            let found = vec![earlier(1, *state, "2026-11", "1")];
            assert_eq!(judge(&awa("95000"), found, None).len(), 1, "{state}");
        }
    }

    #[test]
    fn each_state_is_worded_and_a_smaller_amount_has_no_difference() {
        let paid = |state| {
            judge(
                &awa("90000"),
                vec![earlier(1, state, "2026-11", "95000")],
                None,
            )[0]
            .to_string()
        };
        assert!(paid(State::Unknown).contains("may already have been paid"));
        assert!(paid(State::Executing).contains("is already being paid"));
        assert!(paid(State::Pending).contains("is already being paid"));
        assert!(!paid(State::Executed).contains("difference"));
        assert_eq!(difference("100", "100"), None);
        assert_eq!(
            difference("100.50", "100"),
            Some(Decimal::from_str("0.5").unwrap())
        );
    }

    #[test]
    fn what_to_do_names_the_correction_the_period_and_the_flag() {
        let text = what_to_do("2026-11");
        for part in [
            "a new payment of the difference",
            "payrun cancel RUN",
            "--period 2026-11-bonus",
            "--allow-repeats",
        ] {
            assert!(text.contains(part), "{part}: {text}");
        }
    }

    #[test]
    fn an_identical_row_of_the_file_is_a_repeat() {
        let got = judge(&awa("1000"), Vec::new(), Some(4));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].of, RepeatOf::Row(4));
        assert!(got[0].of.earlier().is_none());
        assert!(got[0].to_string().ends_with("repeats row 4 of this file"));
        assert!(allowed(&got[0]).starts_with("paid with --allow-repeats: row 7"));
    }
}
