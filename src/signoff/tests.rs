//! The judgement of an approval, as a table of cases.

use super::*;
use crate::store::{Figures, Tally};
use crate::who::Person;
use rust_decimal::Decimal;

fn person(name: &str, user: &str) -> Person {
    Person {
        name: name.into(),
        os_user: user.into(),
        host: "box".into(),
    }
}

fn figures(count: u64, total: i64) -> Figures {
    Figures::from([(
        "XOF".to_string(),
        Tally {
            count,
            total: Decimal::from(total),
        },
    )])
}

fn set(count: u64, total: i64, digest: &str) -> PayoutSet {
    PayoutSet {
        figures: figures(count, total),
        payouts: count,
        digest: digest.into(),
        not_initiated: 0,
    }
}

fn event(id: i64, action: Action, by: Person, set: &PayoutSet) -> ApprovalEvent {
    ApprovalEvent {
        id,
        run_id: 1,
        action,
        by,
        at: format!("2026-05-3{id}T10:00:00.000Z"),
        file_sha256: "f".into(),
        period: "2026-05".into(),
        figures: set.figures.clone(),
        payouts: set.payouts,
        digest: set.digest.clone(),
        overrides: vec!["row 9 is a totals row".into()],
        revokes: (action == Action::Revoked).then_some(1),
        reason: String::new(),
    }
}

/// A void standing's reasons in English (`None`: not void).
fn void(s: Standing) -> Option<Vec<String>> {
    matches!(s, Standing::Void { .. }).then(|| s.reasons_in(Language::En))
}

fn preparer() -> Preparer {
    Preparer {
        person: person("Ama", "ama"),
        at: "t".into(),
    }
}

#[test]
fn an_approval_holds_while_nothing_changes() {
    let now = set(2, 300, "d1");
    let overrides = vec![OverrideLine::Recorded("row 9 is a totals row".into())];
    let ok = event(1, Action::Approved, person("Kofi", "kofi"), &now);
    let s = judge(
        std::slice::from_ref(&ok),
        &now,
        &overrides,
        Some(&preparer()),
        None,
    );
    assert_eq!(s, Standing::Approved(Box::new(ok)));
    assert!(s.describe().starts_with("approved by Kofi (kofi@box)"));
    assert_eq!(
        judge(&[], &now, &overrides, None, None),
        Standing::NotApproved
    );
}

#[test]
fn a_revocation_withdraws_the_approval_it_names() {
    let now = set(2, 300, "d1");
    let a = event(1, Action::Approved, person("Kofi", "kofi"), &now);
    let mut r = event(2, Action::Revoked, person("Ama", "ama"), &now);
    r.reason = "wrong month".into();
    let s = judge(&[a.clone(), r], &now, &[], None, None);
    assert_eq!(s.word(), "revoked");
    assert_eq!(s.approval(), Some(&a));
    assert!(s.describe().ends_with("(wrong month)"), "{}", s.describe());
}

#[test]
fn any_change_after_the_approval_voids_it_and_is_named() {
    let approved = set(2, 300, "d1");
    let overrides = vec![OverrideLine::Recorded("row 9 is a totals row".into())];
    let a = event(1, Action::Approved, person("Kofi", "kofi"), &approved);
    let now = set(1, 100, "d2");
    let changes = Changes {
        listed: vec![Change::Left {
            row: 3,
            transaction_id: "tx-2".into(),
            state: Some(crate::machine::State::Cancelled),
        }],
        total: 1,
    };
    let Some(why) = void(judge(
        std::slice::from_ref(&a),
        &now,
        &overrides,
        Some(&preparer()),
        Some(&changes),
    )) else {
        panic!("a changed run kept its approval")
    };
    assert_eq!(
        why,
        [
            "XOF: 2 payout(s) totalling 300 approved, 1 totalling 100 now",
            "row 3 (tx-2) is cancelled since the approval"
        ]
    );
    // The same figures, another set (an account changed): the digest says so.
    let same_figures = set(2, 300, "d3");
    let Some(why) = void(judge(
        std::slice::from_ref(&a),
        &same_figures,
        &overrides,
        None,
        None,
    )) else {
        panic!("a changed set kept its approval")
    };
    assert_eq!(why, ["the payout set's digest is d3 now, d1 approved"]);
    // An override recorded after the approval.
    let more = vec![
        overrides[0].clone(),
        OverrideLine::Recorded("row 4: second payment".into()),
    ];
    let Some(why) = void(judge(&[a], &approved, &more, None, None)) else {
        panic!("a new override kept the approval")
    };
    assert_eq!(
        why,
        ["an override since the approval: row 4: second payment"]
    );
}

#[test]
fn the_preparer_approving_is_void() {
    let now = set(2, 300, "d1");
    // Another name typed from the preparer's own account.
    let a = event(1, Action::Approved, person("Kofi", "ama"), &now);
    let s = judge(&[a], &now, &[], Some(&preparer()), None);
    let Some(why) = void(s.clone()) else {
        panic!("{s:?}")
    };
    assert!(
        why[0].contains("the approver must be someone else"),
        "{why:?}"
    );
}
