//! Why an approval is void, as data ([`Why`]), said in a language by
//! [`Why::describe_in`] from the texts of `crate::lang`. The English
//! sentences are also what the JSON result carries (a machine format:
//! stable).

use crate::lang::Language;
use crate::store::{Change, OverrideLine, Tally};

/// One reason an approval no longer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The approver is the preparer (as typed, and as recorded).
    SelfApproved { approver: String, preparer: String },
    /// A currency's count or total differs from the approved one.
    Figures {
        currency: String,
        was: Tally,
        now: Tally,
    },
    /// A payout changed since the approval.
    Changed(Change),
    /// Changes beyond those listed.
    MoreChanges(u64),
    /// The set's digest differs (short digests: now, approved).
    Digest { now: String, approved: String },
    /// An override recorded after the approval.
    OverrideAdded(OverrideLine),
    /// Approved overrides no longer recorded.
    OverridesDropped(u64),
}

impl Why {
    /// The reason for people reading `language`.
    pub fn describe_in(&self, language: Language) -> String {
        let t = language.text();
        match self {
            Why::SelfApproved { approver, preparer } => (t.void_self_approved)(approver, preparer),
            Why::Figures { currency, was, now } => (t.void_figures)(
                currency,
                was.count,
                &was.total.to_string(),
                now.count,
                &now.total.to_string(),
            ),
            Why::Changed(c) => change_in(c, language),
            Why::MoreChanges(n) => (t.void_more)(*n),
            Why::Digest { now, approved } => (t.void_digest)(now, approved),
            Why::OverrideAdded(o) => (t.void_override)(&o.describe_in(language)),
            Why::OverridesDropped(n) => (t.void_dropped)(*n),
        }
    }
}

/// One change of a payout since the approval, in `language`.
pub fn change_in(c: &Change, language: Language) -> String {
    let t = language.text();
    match c {
        Change::Left {
            row,
            transaction_id,
            state: Some(s),
        } => (t.void_left)(*row, transaction_id, t.state(s.as_str())),
        Change::Left {
            row,
            transaction_id,
            state: None,
        } => (t.void_gone)(*row, transaction_id),
        Change::Joined {
            row,
            transaction_id,
            amount,
            currency,
        } => (t.void_joined)(*row, transaction_id, amount, currency),
        Change::Altered {
            row,
            transaction_id,
            differs,
        } => {
            let side = |approved: bool| {
                differs
                    .iter()
                    .map(|(name, was, now)| (t.void_field)(name, if approved { was } else { now }))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            (t.void_altered)(*row, transaction_id, &side(true), &side(false))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rust_decimal::Decimal;

    fn tally(count: u64, total: i64) -> Tally {
        Tally {
            count,
            total: Decimal::from(total),
        }
    }

    #[test]
    fn every_reason_in_english_and_in_french() {
        let cases = [
            (
                Why::SelfApproved {
                    approver: "Kofi".into(),
                    preparer: "Ama".into(),
                },
                "Kofi approved a run Ama prepared: the approver must be someone else",
                "Kofi a approuvé un lot préparé par Ama\u{a0}: l'approbateur doit être quelqu'un d'autre",
            ),
            (
                Why::Figures {
                    currency: "XOF".into(),
                    was: tally(2, 6_091_999),
                    now: tally(1, 150_000),
                },
                "XOF: 2 payout(s) totalling 6091999 approved, 1 totalling 150000 now",
                "XOF\u{a0}: 2 paiement(s) pour 6\u{202f}091\u{202f}999 approuvés, 1 pour 150\u{202f}000 maintenant",
            ),
            (
                Why::Changed(Change::Left {
                    row: 3,
                    transaction_id: "tx-2".into(),
                    state: Some(crate::machine::State::Cancelled),
                }),
                "row 3 (tx-2) is cancelled since the approval",
                "ligne 3 (tx-2)\u{a0}: annulé depuis l'approbation",
            ),
            (
                Why::Changed(Change::Left {
                    row: 3,
                    transaction_id: "tx-2".into(),
                    state: None,
                }),
                "row 3 (tx-2) is gone since the approval",
                "ligne 3 (tx-2)\u{a0}: disparue depuis l'approbation",
            ),
            (
                Why::Changed(Change::Joined {
                    row: 4,
                    transaction_id: "tx-3".into(),
                    amount: "150000".into(),
                    currency: "XOF".into(),
                }),
                "row 4 (tx-3, 150000 XOF) was not approved",
                "ligne 4 (tx-3, 150\u{202f}000 XOF)\u{a0}: n'a pas été approuvée",
            ),
            (
                Why::Changed(Change::Altered {
                    row: 2,
                    transaction_id: "tx-1".into(),
                    differs: vec![
                        ("account", "225".into(), "226".into()),
                        ("amount", "100000".into(), "120000".into()),
                    ],
                }),
                "row 2 (tx-1): account 225, amount 100000 approved, account 226, amount 120000 now",
                "ligne 2 (tx-1)\u{a0}: compte 225, montant 100\u{202f}000 approuvés\u{a0}; compte 226, montant 120\u{202f}000 maintenant",
            ),
            (
                Why::MoreChanges(3),
                "... and 3 more change(s)",
                "... et 3 autre(s) changement(s)",
            ),
            (
                Why::Digest {
                    now: "d3".into(),
                    approved: "d1".into(),
                },
                "the payout set's digest is d3 now, d1 approved",
                "l'empreinte de l'ensemble des paiements est d3 maintenant, d1 à l'approbation",
            ),
            (
                Why::OverrideAdded(OverrideLine::Skipped(2)),
                "an override since the approval: 2 row(s) left out as already paid (or held) by earlier runs: listed in the report as skipped, not paid again",
                "une dérogation depuis l'approbation\u{a0}: ",
            ),
            (
                Why::OverridesDropped(1),
                "1 approved override(s) no longer recorded",
                "1 dérogation(s) approuvée(s) plus enregistrée(s)",
            ),
        ];
        for (why, en, fr) in cases {
            assert_eq!(why.describe_in(Language::En), en);
            let said = why.describe_in(Language::Fr);
            assert!(said.starts_with(fr), "{said}\nnot\n{fr}");
        }
    }
}
