use super::*;
use crate::validate::phone::Phones;

fn booked(id: i64, tx: &str, amount: i64, state: State) -> Booked {
    Booked {
        id,
        run_id: 1,
        row: id as u64 + 1,
        transaction_id: tx.into(),
        account_id: "225".into(),
        wire_amount: Decimal::from(amount),
        amount: Decimal::from(amount),
        currency: "XOF".into(),
        state,
        sent_at: "2026-11-23T10:00:00.000Z".into(),
    }
}

fn line(n: u64, tx: &str, amount: i64, status: StatementStatus) -> StatementLine {
    StatementLine {
        sheet: None,
        line: n,
        transaction_id: tx.into(),
        account: "225".into(),
        amount: Decimal::from(amount),
        amount_text: amount.to_string(),
        currency: "XOF".into(),
        status,
        status_word: status.as_str().into(),
        date: None,
    }
}

fn everything(_: &Booked) -> Reach {
    Reach::InScope
}

fn verdicts<'a>(c: &'a Comparison<'_>) -> Vec<(Option<&'a str>, &'static str, Option<State>)> {
    c.lines
        .iter()
        .map(|l| {
            (
                l.payout.map(|p| p.transaction_id.as_str()),
                l.verdict.as_str(),
                l.settles,
            )
        })
        .collect()
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
        line(8, "z", 40, Paid),
    ];
    let c = compare(&payouts, everything, &st, &mut Phones::new(None));
    assert_eq!(
        verdicts(&c),
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
    assert_eq!(s.differing, (3, Decimal::from(240)));
    assert_eq!(s.missing, (2, Decimal::from(140)));
    assert_eq!(s.out_of_scope, (0, Decimal::ZERO));
}

/// Issue 28, item 5: "Failed" then "Successful" for one unknown payout
/// settled it by the first line. Two lines never settle, whatever their
/// order or agreement, and each line is listed with its status.
#[test]
fn an_id_listed_twice_never_settles() {
    use StatementStatus::*;
    for (first, second) in [
        (Failed, Paid),
        (Paid, Failed),
        (Paid, Paid),
        (Failed, Failed),
    ] {
        for state in [State::Unknown, State::Processing] {
            let payouts = vec![booked(1, "a", 100, state)];
            let mut one = line(5, "a", 100, first);
            one.status_word = "Échoué".into();
            let st = vec![one, line(9, "a", 100, second)];
            let c = compare(&payouts, everything, &st, &mut Phones::new(None));
            assert_eq!(c.lines.len(), 2, "{first:?} {second:?}");
            for l in &c.lines {
                assert_eq!(l.verdict, Verdict::DuplicateInStatement);
                assert_eq!(l.settles, None, "{first:?} then {second:?} settled {state}");
                assert_eq!(l.payout.map(|p| p.id), Some(1));
                let note = l.note_in(crate::lang::Language::En);
                assert!(note.contains("line 5 \"Échoué\""), "{note}");
                assert!(note.contains("line 9"), "{note}");
                assert_eq!(note.contains("conflicting"), first != second, "{note}");
                let fr = l.note_in(crate::lang::Language::Fr);
                assert!(fr.contains("ligne 5 \"Échoué\""), "{fr}");
                assert_eq!(fr.contains("contradictoires"), first != second, "{fr}");
            }
        }
    }
}

#[test]
fn a_line_that_disagrees_never_settles() {
    use StatementStatus::*;
    let payouts = vec![
        booked(1, "a", 100, State::Unknown),
        booked(2, "b", 100, State::Unknown),
        booked(3, "c", 100, State::Unknown),
    ];
    let mut other_account = line(2, "a", 100, Paid);
    other_account.account = "999".into();
    let mut other_currency = line(3, "b", 100, Paid);
    other_currency.currency = "XAF".into();
    let st = vec![other_account, other_currency, line(4, "c", 101, Failed)];
    let c = compare(&payouts, everything, &st, &mut Phones::new(None));
    assert_eq!(
        verdicts(&c),
        vec![
            (Some("a"), "account_differs", None),
            (Some("b"), "currency_differs", None),
            (Some("c"), "amount_differs", None),
        ]
    );
}

/// Formatting is not a difference: accounts compare by their key, so a
/// phone number matches however the portal writes it (its `+` lost, in
/// groups, national under the configured region).
#[test]
fn accounts_compare_by_their_key() {
    let ci = crate::validate::fields::phone_region("CI").unwrap();
    let mut phones = Phones::new(Some(ci));
    let mut p = booked(1, "a", 100, State::Unknown);
    p.account_id = "+2250701100001".into();
    let mut l = line(2, "a", 100, StatementStatus::Paid);
    for shown in [
        "2250701100001",
        "+225 07 01 10 00 01",
        "225-0701-100001",
        "225\u{a0}0701100001",
        "07 01 10 00 01",
    ] {
        l.account = shown.into();
        assert_eq!(
            one_line(&p, &l, &mut phones).1,
            Some(State::Executed),
            "{shown}"
        );
    }
    l.account = "2250701100002".into();
    assert_eq!(one_line(&p, &l, &mut phones).0, Verdict::AccountDiffers);
}

/// Amounts compare in the major unit: a minor-unit wire amount (125050)
/// matches a statement line of 1250.50.
#[test]
fn amounts_compare_in_the_major_unit() {
    let mut p = booked(1, "a", 0, State::Unknown);
    p.currency = "EUR".into();
    p.wire_amount = Decimal::from(125050);
    p.amount = Decimal::new(125050, 2);
    let mut l = line(2, "a", 0, StatementStatus::Paid);
    l.currency = "EUR".into();
    l.amount = Decimal::new(12505, 1);
    assert_eq!(
        one_line(&p, &l, &mut Phones::new(None)),
        (Verdict::Matched, Some(State::Executed))
    );
}

/// Only a payout in scope can be missing; one of another run or other
/// dates of the same provider is matched (and settled) when listed and
/// counted out of scope otherwise; another provider's is never settled.
#[test]
fn scope_decides_what_can_be_missing() {
    use StatementStatus::*;
    let mut payouts = vec![
        booked(1, "in", 100, State::Executed),
        booked(2, "run5-listed", 100, State::Unknown),
        booked(3, "run5-absent", 200, State::Executed),
        booked(4, "december", 300, State::Executed),
        booked(5, "elsewhere", 400, State::Unknown),
        booked(6, "elsewhere-absent", 500, State::Executed),
    ];
    payouts[1].run_id = 5;
    payouts[2].run_id = 5;
    let reach = |p: &Booked| match p.transaction_id.as_str() {
        "in" => Reach::InScope,
        "run5-listed" | "run5-absent" => Reach::OtherRun,
        "december" => Reach::OutsideDates,
        _ => Reach::OtherProvider,
    };
    let st = vec![
        line(2, "in", 100, Paid),
        line(3, "run5-listed", 100, Paid),
        line(4, "elsewhere", 400, Paid),
    ];
    let c = compare(&payouts, reach, &st, &mut Phones::new(None));
    assert_eq!(
        verdicts(&c),
        vec![
            (Some("in"), "matched", None),
            (Some("run5-listed"), "matched", Some(State::Executed)),
            (Some("elsewhere"), "other_provider", None),
        ]
    );
    let s = &c.summary["XOF"];
    assert_eq!(s.missing, (0, Decimal::ZERO));
    assert_eq!(s.out_of_scope, (2, Decimal::from(500)));
    assert_eq!(c.reach[&Reach::InScope], 1);
    assert_eq!(c.reach[&Reach::OtherRun], 2);
    assert_eq!(c.reach[&Reach::OutsideDates], 1);
    assert_eq!(c.reach[&Reach::OtherProvider], 2);
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
    assert_eq!(
        status_verdict(State::Processing, Paid),
        (Verdict::Matched, Some(State::Executed))
    );
}
