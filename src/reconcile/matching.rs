//! Matching payouts to a statement, as a pure function (docs/closing.md,
//! "Match the provider's statement"): for each payout and each statement
//! line, a [`Verdict`]; the settlements the statement makes (an `unknown`
//! or `processing` payout it shows paid or failed); and the per-currency
//! summary, in scope and out of scope. What the statement can speak about
//! is given per payout ([`Reach`]): only a payout in scope can be missing
//! from it; one of the same provider out of scope (another run, other
//! dates) is matched when listed and otherwise only counted; one made
//! against another provider is never settled by it.
//!
//! A statement settles only what it proves: one line for the id, and the
//! line's amount, currency and account agree. An id with two or more lines
//! never settles (`duplicate_in_statement`, each line's status named).
//! No I/O: `reconcile::reconcile_statement` reads and writes around it.

use super::statement::{StatementLine, StatementStatus};
use crate::machine::State;
use crate::validate::account::account_key;
use crate::validate::phone::Phones;
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
    /// Two or more lines for one id: none of them settles anything.
    DuplicateInStatement,
    /// A line naming a payout made against another provider: this
    /// statement cannot prove anything about it.
    OtherProvider,
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
            Verdict::OtherProvider => "other_provider",
        }
    }
}

/// What the statement can say about a payout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// Its provider, its run(s), its dates: absent from it, it is missing.
    InScope,
    /// Its provider, but a run not asked for (`--run`): matched when
    /// listed, never missing.
    OtherRun,
    /// Its provider, but sent outside the statement's dates.
    OutsideDates,
    /// Made against another provider: never settled by this statement.
    OtherProvider,
}

/// One line of `reconciliation.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    pub payout: Option<&'a Booked>,
    pub statement: Option<&'a StatementLine>,
    pub verdict: Verdict,
    /// The state the statement settles the payout in, if it does.
    pub settles: Option<State>,
    /// Why, when the verdict alone does not say (the lines of a duplicate
    /// and their statuses); written in a language by [`Line::note_in`].
    pub note: Note<'a>,
}

/// What a line's note says, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note<'a> {
    None,
    /// The payout was made against another provider.
    OtherProvider,
    /// The id's lines (two or more), none of which settles it.
    Duplicate(Vec<&'a StatementLine>),
}

impl Line<'_> {
    /// The note for people reading `language`: a duplicate's lines, a
    /// payout of another provider, or — when amount or currency differ —
    /// both sides' amounts, grouped as the language writes them.
    pub fn note_in(&self, language: crate::lang::Language) -> String {
        let c = language.closing();
        match &self.note {
            Note::OtherProvider => c.note_other_provider.to_string(),
            Note::Duplicate(lines) => duplicate_note(lines, language),
            Note::None => match (self.verdict, self.payout, self.statement) {
                (Verdict::AmountDiffers | Verdict::CurrencyDiffers, Some(p), Some(l)) => {
                    let amount = |a: Decimal, cur: &str| {
                        format!("{} {cur}", language.amount(&super::money(a, cur)))
                    };
                    (c.note_amount)(
                        &amount(l.amount, &l.currency),
                        &amount(p.amount, &p.currency.to_uppercase()),
                    )
                }
                _ => String::new(),
            },
        }
    }
}

/// Counts and totals of one currency, in the currency's major unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub matched: (u64, Decimal),
    pub differing: (u64, Decimal),
    pub missing: (u64, Decimal),
    /// Payouts of the statement's provider it does not speak about (other
    /// runs, other dates) and does not list: neither matched nor missing.
    pub out_of_scope: (u64, Decimal),
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison<'a> {
    pub lines: Vec<Line<'a>>,
    pub summary: BTreeMap<String, Summary>,
    /// Payouts by reach (whether listed or not).
    pub reach: BTreeMap<Reach, u64>,
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
/// the second place is a settlement of an unknown or processing payout.
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

/// One payout against its one line. Accounts compare by their key
/// (`validate::account::account_key`: formatting removed, a phone number in
/// one E.164 form), the one comparison of accounts.
fn one_line(p: &Booked, l: &StatementLine, phones: &mut Phones) -> (Verdict, Option<State>) {
    if l.currency != p.currency.to_uppercase() {
        (Verdict::CurrencyDiffers, None)
    } else if l.amount != p.amount {
        (Verdict::AmountDiffers, None)
    } else if !l.account.is_empty()
        && account_key(&l.account, phones) != account_key(&p.account_id, phones)
    {
        (Verdict::AccountDiffers, None)
    } else {
        status_verdict(p.state, l.status)
    }
}

/// The lines of a duplicated id, named with their statuses.
fn duplicate_note(lines: &[&StatementLine], language: crate::lang::Language) -> String {
    let each: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{} {}",
                l.place_in(language),
                crate::output::shown(&l.status_word)
            )
        })
        .collect();
    let statuses: std::collections::BTreeSet<StatementStatus> =
        lines.iter().map(|l| l.status).collect();
    (language.closing().note_duplicate)(lines.len() as u64, statuses.len() > 1, &each.join(", "))
}

/// Compares `payouts` with `statement`, each payout's reach given by
/// `reach`, accounts keyed under `phones`' region. Payouts come first in
/// the given order, then the statement lines no payout claimed.
pub fn compare<'a>(
    payouts: &'a [Booked],
    reach: impl Fn(&Booked) -> Reach,
    statement: &'a [StatementLine],
    phones: &mut Phones,
) -> Comparison<'a> {
    let mut by_id: HashMap<&str, Vec<&StatementLine>> = HashMap::new();
    for l in statement {
        by_id.entry(l.transaction_id.as_str()).or_default().push(l);
    }
    let mut lines = Vec::new();
    let mut claimed = std::collections::HashSet::new();
    let mut counts: BTreeMap<Reach, u64> = BTreeMap::new();
    let mut out_of_scope: Vec<&Booked> = Vec::new();
    for p in payouts {
        let r = reach(p);
        *counts.entry(r).or_default() += 1;
        let Some(listed) = by_id.get(p.transaction_id.as_str()) else {
            match r {
                Reach::InScope if sent(p.state) => lines.push(Line {
                    payout: Some(p),
                    statement: None,
                    verdict: Verdict::MissingFromStatement,
                    settles: None,
                    note: Note::None,
                }),
                Reach::OtherRun | Reach::OutsideDates if sent(p.state) => out_of_scope.push(p),
                _ => {}
            }
            continue;
        };
        claimed.insert(p.transaction_id.as_str());
        if r == Reach::OtherProvider {
            for l in listed {
                lines.push(Line {
                    payout: Some(p),
                    statement: Some(l),
                    verdict: Verdict::OtherProvider,
                    settles: None,
                    note: Note::OtherProvider,
                });
            }
            continue;
        }
        if listed.len() > 1 {
            let note = Note::Duplicate(listed.clone());
            for l in listed {
                lines.push(Line {
                    payout: Some(p),
                    statement: Some(l),
                    verdict: Verdict::DuplicateInStatement,
                    settles: None,
                    note: note.clone(),
                });
            }
            continue;
        }
        let (verdict, settles) = one_line(p, listed[0], phones);
        lines.push(Line {
            payout: Some(p),
            statement: Some(listed[0]),
            verdict,
            settles,
            note: Note::None,
        });
    }
    for l in statement {
        let id = l.transaction_id.as_str();
        if claimed.contains(id) {
            continue;
        }
        let listed = &by_id[id];
        let first = std::ptr::eq(listed[0], l);
        lines.push(Line {
            payout: None,
            statement: Some(l),
            verdict: if first {
                Verdict::UnknownToPayrun
            } else {
                Verdict::DuplicateInStatement
            },
            settles: None,
            note: if listed.len() > 1 {
                Note::Duplicate(listed.clone())
            } else {
                Note::None
            },
        });
    }
    let summary = summarize(&lines, &out_of_scope);
    Comparison {
        lines,
        summary,
        reach: counts,
    }
}

/// Per currency: matched, differing, missing (both ways) and out of scope.
fn summarize(lines: &[Line<'_>], out_of_scope: &[&Booked]) -> BTreeMap<String, Summary> {
    let mut summary: BTreeMap<String, Summary> = BTreeMap::new();
    for l in lines {
        let (currency, amount) = match (l.payout, l.statement) {
            (Some(p), _) => (p.currency.to_uppercase(), p.amount),
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
    for p in out_of_scope {
        let s = summary.entry(p.currency.to_uppercase()).or_default();
        s.out_of_scope.0 += 1;
        s.out_of_scope.1 += p.amount;
    }
    summary
}

#[cfg(test)]
mod tests;
