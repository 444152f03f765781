//! Matching payouts to a statement, as a pure function: for each payout and
//! each statement line, a [`Verdict`]; the settlements the statement makes
//! (an `unknown` payout it shows paid or failed); and the per-currency
//! summary. No I/O: `reconcile::run` reads and writes around it.

use super::statement::{StatementLine, StatementStatus};
use crate::machine::State;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};

pub use crate::store::Booked;

/// How one payout or statement line compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Matched,
    AmountDiffers,
    CurrencyDiffers,
    AccountDiffers,
    /// The statement shows it paid; payrun did not record it executed.
    PaidNotExecuted,
    /// payrun recorded it executed; the statement does not show it paid.
    ExecutedNotPaid,
    /// Both sides agree it is not paid yet, or the statement has not
    /// settled a payout payrun is unsure about.
    NotSettled,
    /// Any other disagreement of status (e.g. failed here, pending there).
    StatusDiffers,
    MissingFromStatement,
    UnknownToPayrun,
    DuplicateInStatement,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Matched => "matched",
            Verdict::AmountDiffers => "amount_differs",
            Verdict::CurrencyDiffers => "currency_differs",
            Verdict::AccountDiffers => "account_differs",
            Verdict::PaidNotExecuted => "paid_not_executed",
            Verdict::ExecutedNotPaid => "executed_not_paid",
            Verdict::NotSettled => "not_settled",
            Verdict::StatusDiffers => "status_differs",
            Verdict::MissingFromStatement => "missing_from_statement",
            Verdict::UnknownToPayrun => "unknown_to_payrun",
            Verdict::DuplicateInStatement => "duplicate_in_statement",
        }
    }
}

/// One line of `reconciliation.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    pub payout: Option<&'a Booked>,
    pub statement: Option<&'a StatementLine>,
    pub verdict: Verdict,
    /// The state the statement settles the payout in, if it does.
    pub settles: Option<State>,
}

/// Counts and totals of one currency (totals in the provider's amount).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub matched: (u64, Decimal),
    pub differing: (u64, Decimal),
    pub missing: (u64, Decimal),
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison<'a> {
    pub lines: Vec<Line<'a>>,
    pub summary: BTreeMap<String, Summary>,
}

impl Comparison<'_> {
    /// Nothing left to look at.
    pub fn all_matched(&self) -> bool {
        self.lines.iter().all(|l| l.verdict == Verdict::Matched)
    }
}

/// States whose payout reached the provider: the statement should list it.
fn sent(state: State) -> bool {
    !matches!(
        state,
        State::Pending | State::Initiating | State::InitiateFailed | State::Rejected
    )
}

/// Statuses compared, once amount, currency and account agree; `Some` in
/// the second place is a settlement of an unknown payout.
fn status_verdict(state: State, status: StatementStatus) -> (Verdict, Option<State>) {
    use StatementStatus::*;
    match (state, status) {
        (State::Executed, Paid) => (Verdict::Matched, None),
        (State::ExecuteFailed | State::InitiateFailed, Failed) => (Verdict::Matched, None),
        (State::Initiated, NotFinal) => (Verdict::Matched, None),
        (State::Unknown | State::Processing, Paid) => (Verdict::Matched, Some(State::Executed)),
        (State::Unknown | State::Processing, Failed) => {
            (Verdict::Matched, Some(State::ExecuteFailed))
        }
        (State::Unknown | State::Executing | State::Processing, NotFinal) => {
            (Verdict::NotSettled, None)
        }
        (State::Executed, _) => (Verdict::ExecutedNotPaid, None),
        (_, Paid) => (Verdict::PaidNotExecuted, None),
        _ => (Verdict::StatusDiffers, None),
    }
}

/// Compares `payouts` with `statement`. Payouts come first in the given
/// order, then the statement lines no payout claimed.
pub fn compare<'a>(payouts: &'a [Booked], statement: &'a [StatementLine]) -> Comparison<'a> {
    let mut by_id: HashMap<&str, &StatementLine> = HashMap::new();
    let mut duplicates = Vec::new();
    for l in statement {
        if by_id.insert(l.transaction_id.as_str(), l).is_some() {
            duplicates.push(l);
        }
    }
    // The first line of an id is the one compared.
    let mut first: HashMap<&str, &StatementLine> = HashMap::new();
    for l in statement.iter().rev() {
        first.insert(l.transaction_id.as_str(), l);
    }
    let mut lines = Vec::new();
    let mut claimed = std::collections::HashSet::new();
    for p in payouts {
        let line = first.get(p.transaction_id.as_str()).copied();
        let (verdict, settles) = match line {
            None if sent(p.state) => (Verdict::MissingFromStatement, None),
            None => continue,
            Some(l) => {
                claimed.insert(l.transaction_id.as_str());
                if l.currency != p.currency.to_uppercase() {
                    (Verdict::CurrencyDiffers, None)
                } else if l.amount != p.wire_amount {
                    (Verdict::AmountDiffers, None)
                } else if !l.account.is_empty() && l.account != p.account_id {
                    (Verdict::AccountDiffers, None)
                } else {
                    status_verdict(p.state, l.status)
                }
            }
        };
        lines.push(Line {
            payout: Some(p),
            statement: line,
            verdict,
            settles,
        });
    }
    for l in statement {
        if !claimed.contains(l.transaction_id.as_str()) && first[l.transaction_id.as_str()] == l {
            lines.push(Line {
                payout: None,
                statement: Some(l),
                verdict: Verdict::UnknownToPayrun,
                settles: None,
            });
        }
    }
    for l in duplicates {
        lines.push(Line {
            payout: None,
            statement: Some(l),
            verdict: Verdict::DuplicateInStatement,
            settles: None,
        });
    }
    let mut summary: BTreeMap<String, Summary> = BTreeMap::new();
    for l in &lines {
        let (currency, amount) = match (l.payout, l.statement) {
            (Some(p), _) => (p.currency.to_uppercase(), p.wire_amount),
            (None, Some(s)) => (s.currency.clone(), s.amount),
            (None, None) => continue,
        };
        let s = summary.entry(currency).or_default();
        let cell = match l.verdict {
            Verdict::Matched => &mut s.matched,
            Verdict::MissingFromStatement | Verdict::UnknownToPayrun => &mut s.missing,
            _ => &mut s.differing,
        };
        cell.0 += 1;
        cell.1 += amount;
    }
    Comparison { lines, summary }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn booked(id: i64, tx: &str, amount: i64, state: State) -> Booked {
        Booked {
            id,
            run_id: 1,
            row: id as u64 + 1,
            transaction_id: tx.into(),
            account_id: "225".into(),
            wire_amount: Decimal::from(amount),
            currency: "XOF".into(),
            state,
        }
    }

    fn line(n: u64, tx: &str, amount: i64, status: StatementStatus) -> StatementLine {
        StatementLine {
            line: n,
            transaction_id: tx.into(),
            account: "225".into(),
            amount: Decimal::from(amount),
            currency: "XOF".into(),
            status,
            status_word: status.as_str().into(),
        }
    }

    #[test]
    fn every_kind_of_difference_is_named_and_summed() {
        use StatementStatus::*;
        let payouts = vec![
            booked(1, "a", 100, State::Executed),
            booked(2, "b", 100, State::Executed),
            booked(3, "c", 100, State::Unknown),
            booked(4, "d", 100, State::Unknown),
            booked(5, "e", 100, State::Executed),
            booked(6, "f", 100, State::ExecuteFailed),
            booked(7, "g", 100, State::Pending),
        ];
        let st = vec![
            line(2, "a", 100, Paid),
            line(3, "b", 90, Paid),
            line(4, "c", 100, Paid),
            line(5, "d", 100, Failed),
            line(6, "f", 100, Paid),
            line(7, "z", 40, Paid),
            line(8, "a", 100, Paid),
        ];
        let c = compare(&payouts, &st);
        let got: Vec<(Option<&str>, &str, Option<State>)> = c
            .lines
            .iter()
            .map(|l| {
                (
                    l.payout.map(|p| p.transaction_id.as_str()),
                    l.verdict.as_str(),
                    l.settles,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("a"), "matched", None),
                (Some("b"), "amount_differs", None),
                (Some("c"), "matched", Some(State::Executed)),
                (Some("d"), "matched", Some(State::ExecuteFailed)),
                (Some("e"), "missing_from_statement", None),
                (Some("f"), "paid_not_executed", None),
                (None, "unknown_to_payrun", None),
                (None, "duplicate_in_statement", None),
            ]
        );
        assert!(!c.all_matched());
        let s = &c.summary["XOF"];
        assert_eq!(s.matched, (3, Decimal::from(300)));
        assert_eq!(s.differing, (3, Decimal::from(300)));
        assert_eq!(s.missing, (2, Decimal::from(140)));
    }

    #[test]
    fn status_table() {
        use StatementStatus::*;
        assert_eq!(
            status_verdict(State::Executed, Failed).0,
            Verdict::ExecutedNotPaid
        );
        assert_eq!(
            status_verdict(State::Initiated, Paid).0,
            Verdict::PaidNotExecuted
        );
        assert_eq!(
            status_verdict(State::Unknown, NotFinal),
            (Verdict::NotSettled, None)
        );
        assert_eq!(
            status_verdict(State::ExecuteFailed, NotFinal).0,
            Verdict::StatusDiffers
        );
    }
}
