//! The store's reads, reports, operator decisions and cancels, run against
//! every backend of [`stores`] (SQLite always, PostgreSQL when
//! `PAYRUN_TEST_POSTGRES` is set): each test does the same operations on
//! each store, checks what it expects on each, and checks that every
//! backend observed exactly the same (timestamps masked, their format
//! checked). Tests of one backend's specifics stay beside that backend.

use super::test_support::{new_run, payout, stores};
use super::{CancelOutcome, RELEASED_ID_MARK, ReportRow, ReportTarget, Store, Transition};
use crate::machine::State;
use crate::provider::wire::Sender;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::PathBuf;
use std::str::FromStr;

/// Runs `f` on a fresh store of every backend; asserts every backend
/// observed the same, and returns that.
fn on_every_backend<T: PartialEq + Debug>(f: impl Fn(&mut Store) -> T) -> T {
    let dir = tempfile::tempdir().unwrap();
    let mut seen: Vec<(String, T)> = Vec::new();
    for mut store in stores(dir.path()) {
        let name = format!("{store:?}");
        seen.push((name, f(&mut store)));
    }
    let (first_name, first) = seen.remove(0);
    for (name, other) in seen {
        assert_eq!(first, other, "{first_name} and {name} differ");
    }
    first
}

/// A timestamp as both backends write it (RFC 3339, UTC, milliseconds),
/// masked so backends can be compared.
fn mask(at: &str) -> String {
    let re = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z").unwrap();
    re.replace_all(at, "<time>").into_owned()
}

/// Imports a run of `(row, amount, currency, transaction id)`.
fn import(store: &mut Store, identity: &str, rows: &[(u64, &str, &str, &str)]) -> i64 {
    let sender = Sender::default();
    let mut imp = store.begin_import(&new_run(identity, &sender)).unwrap();
    for &(row, amount, currency, tx) in rows {
        let mut p = payout(row, amount);
        p.currency = currency.into();
        imp.add(&p, tx).unwrap();
    }
    imp.commit().unwrap()
}

fn id_of(store: &Store, tx: &str) -> i64 {
    store.payout_by_transaction_id(tx).unwrap().unwrap().id
}

/// Moves payout `tx` from pending along `path`, one transition each.
fn advance(store: &mut Store, tx: &str, path: &[State]) {
    let id = id_of(store, tx);
    let mut from = State::Pending;
    let ts: Vec<_> = path
        .iter()
        .map(|&to| {
            let t = Transition::new(id, from, to);
            from = to;
            t
        })
        .collect();
    store.apply(&ts).unwrap();
}

const TO_UNKNOWN: &[State] = &[
    State::Initiating,
    State::Initiated,
    State::Executing,
    State::Unknown,
];

/// Every report line of a run, timestamps masked.
fn report(store: &Store, run_id: i64) -> Vec<ReportRow> {
    let mut out = Vec::new();
    store
        .for_each_report_row(run_id, |r| {
            let mut r = r.clone();
            r.provider_message = mask(&r.provider_message);
            r.initiated_at = mask(&r.initiated_at);
            r.executed_at = mask(&r.executed_at);
            out.push(r);
            Ok(())
        })
        .unwrap();
    out
}

/// Runs a statement the store's interface never would (a corrupt row).
fn raw_sql(store: &mut Store, sql: &str) {
    match store {
        Store::Sqlite(s) => s.conn.execute_batch(sql).unwrap(),
        Store::Postgres(p) => p.call(|c| Ok(c.batch_execute(sql)?)).unwrap(),
    }
}

#[test]
fn runs_are_listed_in_order_and_the_latest_is_the_last() {
    on_every_backend(|store| {
        assert!(store.runs().unwrap().is_empty());
        assert_eq!(store.latest_run().unwrap(), None);
        let one = import(store, "one", &[(2, "1000", "XOF", "tx-2")]);
        let two = import(
            store,
            "two",
            &[(2, "5", "XOF", "tx-b2"), (3, "6", "XOF", "tx-b3")],
        );
        let runs = store.runs().unwrap();
        let ids: Vec<_> = runs.iter().map(|r| (r.id, r.identity.as_str())).collect();
        assert_eq!(ids, vec![(one, "one"), (two, "two")]);
        assert_eq!(store.latest_run().unwrap().unwrap().id, two);
        let run = store.find_run("two").unwrap().unwrap();
        assert_eq!(store.run(two).unwrap().as_ref(), Some(&run));
        assert_eq!(store.find_run("three").unwrap(), None);
        assert_eq!(store.run(two + 1).unwrap(), None);
        assert_eq!(mask(&run.created_at), "<time>");
        let mut runs = runs;
        for r in &mut runs {
            r.created_at = mask(&r.created_at);
        }
        runs
    });
}

#[test]
fn counts_and_open_use_the_named_sets() {
    on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[(2, "1000", "XOF", "tx-2"), (3, "0.5", "XOF", "tx-3")],
        );
        advance(store, "tx-2", TO_UNKNOWN);
        assert_eq!(store.open_count(run_id).unwrap(), 1);
        let counts = store.state_counts(run_id).unwrap();
        assert_eq!(
            counts,
            BTreeMap::from([(State::Pending, 1), (State::Unknown, 1)])
        );
        let unresolved = store.unresolved(None).unwrap();
        assert_eq!(unresolved.len(), 1);
        assert_eq!(unresolved[0].state, State::Unknown);
        let works = store.works_in_state(run_id, State::Pending).unwrap();
        assert_eq!(works.len(), 1);
        assert_eq!(works[0].request.transaction_id, "tx-3");
        assert_eq!(works[0].request.beneficiary.firstname, "Aïcha");
        (counts, works)
    });
}

#[test]
fn totals_are_exact_decimals_per_currency_and_state() {
    let totals = on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[
                (2, "0.1", "EUR", "e2"),
                (3, "0.2", "EUR", "e3"),
                (4, "0.1", "EUR", "e4"),
                (5, "1000", "XOF", "x5"),
                (6, "2500", "XOF", "x6"),
                (7, "1000", "XOF", "x7"),
            ],
        );
        advance(store, "x6", TO_UNKNOWN);
        store.totals(run_id).unwrap()
    });
    let eur = &totals["EUR"][&State::Pending];
    assert_eq!(
        (eur.count, eur.total),
        (3, Decimal::from_str("0.4").unwrap())
    );
    let xof = &totals["XOF"];
    assert_eq!(
        (xof[&State::Pending].count, xof[&State::Pending].total),
        (2, Decimal::from(2000))
    );
    assert_eq!(xof[&State::Unknown].total, Decimal::from(2500));
}

#[test]
fn report_rows_come_in_file_order_with_the_same_strings() {
    let rows = on_every_backend(|store| {
        let first = import(
            store,
            "one",
            &[(2, "1000", "XOF", "tx-a"), (3, "25.5", "XOF", "tx-b")],
        );
        let a = id_of(store, "tx-a");
        let mut paid = Transition::new(a, State::Executing, State::Executed);
        paid.code = Some("SUCCESS".into());
        paid.message = Some("paid".into());
        paid.attempts = 2;
        paid.stamp_executed = true;
        let mut initiated = Transition::new(a, State::Initiating, State::Initiated);
        initiated.stamp_initiated = true;
        store
            .apply(&[
                Transition::new(a, State::Pending, State::Initiating),
                initiated,
                Transition::new(a, State::Initiated, State::Executing),
                paid,
            ])
            .unwrap();
        advance(store, "tx-b", TO_UNKNOWN);
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("two", &sender)).unwrap();
        let earlier_a = imp.earlier("tx-a").unwrap().unwrap().payout_id;
        let earlier_b = imp.earlier("tx-b").unwrap().unwrap().payout_id;
        imp.add_skipped(2, earlier_a).unwrap();
        imp.add(&payout(3, "7"), "tx-c").unwrap();
        imp.add_skipped(4, earlier_b).unwrap();
        imp.add(&payout(5, "8"), "tx-d").unwrap();
        let second = imp.commit().unwrap();
        (report(store, first), report(store, second))
    });
    let (first, second) = rows;
    let a = &first[0];
    assert_eq!(
        (a.row, a.transaction_id.as_str(), a.beneficiary.as_str()),
        (2, "tx-a", "Aïcha Koné")
    );
    assert_eq!(
        (
            a.state.as_str(),
            a.provider_code.as_str(),
            a.provider_message.as_str()
        ),
        ("executed", "SUCCESS", "paid")
    );
    assert_eq!((a.attempts, a.initiated_at.as_str()), (2, "<time>"));
    assert_eq!(a.executed_at, "<time>");
    assert_eq!(
        (first[1].state.as_str(), first[1].amount.as_str()),
        ("unknown", "25.5")
    );
    assert_eq!(first[1].executed_at, "");
    let order: Vec<_> = second
        .iter()
        .map(|r| (r.row, r.transaction_id.as_str(), r.state.as_str()))
        .collect();
    assert_eq!(
        order,
        vec![
            (2, "tx-a", "skipped"),
            (3, "tx-c", "pending"),
            (4, "tx-b", "skipped"),
            (5, "tx-d", "pending"),
        ]
    );
    assert_eq!(second[0].provider_code, "ALREADY_EXECUTED");
    assert_eq!(
        second[0].provider_message,
        "not sent again: this payout was paid by run 1 (payroll.csv, started <time>), row 2, now executed"
    );
    assert_eq!(
        second[2].provider_message,
        "not sent again: this payout may have been paid by run 1 (payroll.csv, started <time>), row 3, now unknown"
    );
}

/// More rows than one fetch from a portal, skipped rows among them and
/// after the last payout: every line once, in row order.
#[test]
fn a_large_report_streams_in_file_order() {
    on_every_backend(|store| {
        let earlier = import(store, "one", &[(2, "1", "XOF", "old")]);
        let old = id_of(store, "old");
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("big", &sender)).unwrap();
        let n = 2600u64;
        for row in 2..n + 2 {
            if row % 1000 == 0 || row == n + 1 {
                imp.add_skipped(row, old).unwrap();
            } else {
                imp.add(&payout(row, "100"), &format!("tx-{row:05}"))
                    .unwrap();
            }
        }
        let run_id = imp.commit().unwrap();
        assert_ne!(run_id, earlier);
        let mut rows = Vec::new();
        let mut skipped = Vec::new();
        store
            .for_each_report_row(run_id, |r| {
                rows.push(r.row);
                if r.state == "skipped" {
                    skipped.push(r.row);
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(rows, (2..n + 2).collect::<Vec<_>>());
        assert_eq!(skipped, vec![1000, 2000, n + 1]);
        // An error of the callback stops the report and is returned.
        let mut seen = 0;
        let err = store
            .for_each_report_row(run_id, |_| {
                seen += 1;
                anyhow::ensure!(seen < 1500, "disk full");
                Ok(())
            })
            .unwrap_err();
        assert_eq!((format!("{err}"), seen), ("disk full".to_string(), 1500));
        // And the store is usable afterwards.
        assert_eq!(store.open_count(run_id).unwrap(), n - 3);
        skipped
    });
}

#[test]
fn unresolved_lists_and_lookup_by_transaction_id() {
    on_every_backend(|store| {
        let one = import(
            store,
            "one",
            &[(3, "1", "XOF", "a3"), (2, "2", "XOF", "a2")],
        );
        let two = import(store, "two", &[(2, "3", "XOF", "b2")]);
        for tx in ["a3", "a2", "b2"] {
            advance(store, tx, TO_UNKNOWN);
        }
        let mut processing = Transition::new(id_of(store, "b2"), State::Unknown, State::Processing);
        processing.code = Some("PENDING".into());
        store.apply(&[processing]).unwrap();
        let all = store.unresolved(None).unwrap();
        let order: Vec<_> = all
            .iter()
            .map(|u| (u.run_id, u.row, u.transaction_id.as_str(), u.state))
            .collect();
        assert_eq!(
            order,
            vec![
                (one, 2, "a2", State::Unknown),
                (one, 3, "a3", State::Unknown),
                (two, 2, "b2", State::Processing),
            ]
        );
        assert_eq!(all[2].provider_code, "PENDING");
        assert_eq!(all[2].provider_message, "");
        assert_eq!(store.unresolved(Some(two)).unwrap(), all[2..].to_vec());
        assert_eq!(
            store.payout_by_transaction_id("a3").unwrap().as_ref(),
            Some(&all[1])
        );
        assert_eq!(store.payout_by_transaction_id("zz").unwrap(), None);
        all
    });
}

#[test]
fn resolve_writes_audit() {
    on_every_backend(|store| {
        let run_id = import(store, "r", &[(2, "1000", "XOF", "tx-2")]);
        advance(store, "tx-2", TO_UNKNOWN);
        let id = id_of(store, "tx-2");
        assert_eq!(store.unresolved(Some(run_id)).unwrap().len(), 1);
        store
            .resolve(
                id,
                State::Unknown,
                State::Executed,
                "mark",
                "statement 2026-05",
                "OPERATOR_MARKED",
            )
            .unwrap();
        assert!(store.unresolved(Some(run_id)).unwrap().is_empty());
        let audit = store.audit(run_id).unwrap();
        assert_eq!(audit.len(), 1);
        let [tx, at, action, from, to, reason] = audit[0].clone();
        assert_eq!(
            [tx.as_str(), &mask(&at), &action, &from, &to, &reason],
            [
                "tx-2",
                "<time>",
                "mark",
                "unknown",
                "executed",
                "statement 2026-05"
            ]
        );
        let line = report(store, run_id).remove(0);
        assert_eq!(
            (line.state.as_str(), line.provider_code.as_str()),
            ("executed", "OPERATOR_MARKED")
        );
        assert_eq!(line.provider_message, "statement 2026-05");
        assert_eq!(line.executed_at, "<time>");
        // A second decision on the same payout is refused.
        let err = store
            .resolve(id, State::Unknown, State::ExecuteFailed, "mark", "x", "X")
            .unwrap_err();
        assert!(super::changed_meanwhile(&err), "{err}");
        assert_eq!(store.audit(run_id).unwrap().len(), 1);
        line
    });
}

#[test]
fn a_decision_the_state_machine_lacks_is_refused() {
    on_every_backend(|store| {
        let run_id = import(store, "r", &[(2, "1000", "XOF", "tx-2")]);
        let id = id_of(store, "tx-2");
        let err = store
            .resolve(id, State::Pending, State::Executed, "mark", "x", "X")
            .unwrap_err();
        assert_eq!(
            format!("{err}"),
            format!(
                "refused to move payout {id} from pending to executed: not a decision payrun records"
            )
        );
        assert_eq!(store.state_counts(run_id).unwrap()[&State::Pending], 1);
        assert!(store.audit(run_id).unwrap().is_empty());
    });
}

#[test]
fn a_decision_on_a_payout_in_another_state_is_a_conflict() {
    on_every_backend(|store| {
        let run_id = import(store, "r", &[(2, "1000", "XOF", "tx-2")]);
        advance(store, "tx-2", &[State::Initiating]);
        let id = id_of(store, "tx-2");
        // The operator saw it unknown; it is initiating now.
        let err = store
            .resolve(id, State::Unknown, State::Executed, "mark", "x", "X")
            .unwrap_err();
        assert!(super::changed_meanwhile(&err), "{err}");
        assert!(
            format!("{err}").contains("changed state meanwhile"),
            "{err}"
        );
        assert_eq!(store.state_counts(run_id).unwrap()[&State::Initiating], 1);
        assert!(store.audit(run_id).unwrap().is_empty());
    });
}

/// A re-send's claim (`unknown → executing`) is written only from the
/// state the re-sender read: a payout settled meanwhile refuses it, and a
/// claimed one refuses a verdict written beside it. Each refusal writes
/// nothing (issue 28, item 8).
#[test]
fn a_re_send_claim_is_conditional_and_excludes_a_settlement() {
    let states = on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[(2, "1000", "XOF", "tx-2"), (3, "1000", "XOF", "tx-3")],
        );
        let path = [
            State::Initiating,
            State::Initiated,
            State::Executing,
            State::Unknown,
        ];
        advance(store, "tx-2", &path);
        advance(store, "tx-3", &path);
        let (two, three) = (id_of(store, "tx-2"), id_of(store, "tx-3"));
        // tx-2: an operator marks it first; the re-send read it unknown.
        store
            .resolve(two, State::Unknown, State::ExecuteFailed, "mark", "x", "X")
            .unwrap();
        let err = store
            .resolve(two, State::Unknown, State::Executing, "resend", "c", "C")
            .unwrap_err();
        assert!(super::changed_meanwhile(&err), "{err}");
        // tx-3: the re-send claims it first; the operator read it unknown.
        store
            .resolve(three, State::Unknown, State::Executing, "resend", "c", "C")
            .unwrap();
        let err = store
            .resolve(three, State::Unknown, State::Executed, "mark", "x", "X")
            .unwrap_err();
        assert!(super::changed_meanwhile(&err), "{err}");
        // Its answer settles it.
        store
            .resolve(
                three,
                State::Executing,
                State::Executed,
                "resend",
                "ok",
                "SUCCESS",
            )
            .unwrap();
        let audit: Vec<_> = store
            .audit(run_id)
            .unwrap()
            .into_iter()
            .map(|[tx, _, action, from, to, _]| format!("{tx} {action} {from}->{to}"))
            .collect();
        let states: Vec<_> = report(store, run_id).into_iter().map(|l| l.state).collect();
        (audit, states)
    });
    assert_eq!(
        states,
        (
            vec![
                "tx-2 mark unknown->execute_failed".to_string(),
                "tx-3 resend unknown->executing".to_string(),
                "tx-3 resend executing->executed".to_string(),
            ],
            vec!["execute_failed".to_string(), "executed".to_string()]
        )
    );
}

#[test]
fn cancel_counts_and_frees_never_sent_ids() {
    on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[
                (2, "1", "XOF", "tx-2"),
                (3, "1", "XOF", "tx-3"),
                (4, "1", "XOF", "tx-4"),
                (5, "1", "XOF", "tx-5"),
                (6, "1", "XOF", "tx-6"),
            ],
        );
        let pending = id_of(store, "tx-2");
        advance(store, "tx-3", &[State::Initiating, State::Initiated]);
        advance(
            store,
            "tx-4",
            &[State::Initiating, State::Initiated, State::Executing],
        );
        advance(
            store,
            "tx-5",
            &[
                State::Initiating,
                State::Initiated,
                State::Executing,
                State::Executed,
            ],
        );
        let done = store.cancel_run(run_id).unwrap();
        assert_eq!(
            done,
            CancelOutcome {
                never_sent: 2,
                initiated: 1,
                left_open: BTreeMap::from([(State::Executing, 1)]),
            }
        );
        // An in-flight payout stays open, so the run is not finished.
        assert_eq!(store.run(run_id).unwrap().unwrap().finished_at, None);
        let counts = store.state_counts(run_id).unwrap();
        assert_eq!(counts[&State::Cancelled], 3);
        let lines = report(store, run_id);
        let cancelled: Vec<_> = lines
            .iter()
            .filter(|r| r.state == "cancelled")
            .map(|r| {
                (
                    r.transaction_id.as_str(),
                    r.provider_code.as_str(),
                    r.provider_message.as_str(),
                )
            })
            .collect();
        let freed = format!("tx-2{RELEASED_ID_MARK}{pending}");
        assert_eq!(
            cancelled,
            vec![
                (
                    freed.as_str(),
                    "CANCELLED",
                    "cancelled by the operator; never sent, its transaction id is free again"
                ),
                (
                    "tx-3",
                    "CANCELLED",
                    "cancelled by the operator after initiation; never executed, no money moved"
                ),
                (
                    &*format!("tx-6{RELEASED_ID_MARK}{}", pending + 4),
                    "CANCELLED",
                    "cancelled by the operator; never sent, its transaction id is free again"
                ),
            ]
        );
        // The freed id pays again in a new run; the initiated one does not.
        assert_eq!(store.payout_by_transaction_id("tx-2").unwrap(), None);
        import(store, "again", &[(2, "1", "XOF", "tx-2")]);
        // Cancelling again changes nothing more.
        let again = store.cancel_run(run_id).unwrap();
        assert_eq!((again.never_sent, again.initiated), (0, 0));
        (done, lines)
    });
}

#[test]
fn cancel_of_a_run_with_nothing_in_flight_finishes_it() {
    on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[(2, "1", "XOF", "tx-2"), (3, "1", "XOF", "tx-3")],
        );
        advance(store, "tx-3", TO_UNKNOWN);
        let done = store.cancel_run(run_id).unwrap();
        assert_eq!((done.never_sent, done.initiated), (1, 0));
        assert!(done.left_open.is_empty());
        let finished = store.run(run_id).unwrap().unwrap().finished_at.unwrap();
        assert_eq!(mask(&finished), "<time>");
        assert_eq!(store.open_count(run_id).unwrap(), 0);
        // An empty run cancels to nothing and is finished too.
        let sender = Sender::default();
        let empty = store
            .begin_import(&new_run("empty", &sender))
            .unwrap()
            .commit();
        let empty = empty.unwrap();
        assert_eq!(store.cancel_run(empty).unwrap(), CancelOutcome::default());
        assert!(store.run(empty).unwrap().unwrap().finished_at.is_some());
        done
    });
}

#[test]
fn booked_lists_payouts_as_sent() {
    on_every_backend(|store| {
        let one = import(
            store,
            "one",
            &[(3, "12.5", "EUR", "a3"), (2, "1000", "XOF", "a2")],
        );
        let two = import(store, "two", &[(2, "7", "XOF", "b2")]);
        advance(store, "b2", TO_UNKNOWN);
        let all = store.booked(None).unwrap();
        let seen: Vec<_> = all
            .iter()
            .map(|b| {
                (
                    b.run_id,
                    b.row,
                    b.transaction_id.clone(),
                    b.wire_amount,
                    b.currency.clone(),
                    b.state,
                )
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    one,
                    2,
                    "a2".into(),
                    Decimal::from(1000),
                    "XOF".into(),
                    State::Pending
                ),
                (
                    one,
                    3,
                    "a3".into(),
                    Decimal::from(125),
                    "EUR".into(),
                    State::Pending
                ),
                (
                    two,
                    2,
                    "b2".into(),
                    Decimal::from(7),
                    "XOF".into(),
                    State::Unknown
                ),
            ]
        );
        assert_eq!(store.booked(Some(two)).unwrap(), all[2..].to_vec());
        assert!(store.booked(Some(two + 1)).unwrap().is_empty());
        // The major amount as the row gave it; the send's time once sent.
        assert_eq!(all[1].amount, Decimal::new(125, 1));
        let sent: Vec<String> = all.iter().map(|b| mask(&b.sent_at)).collect();
        assert_eq!(sent, ["", "", "<time>"]);
        all.into_iter()
            .map(|b| (b.transaction_id, b.amount, mask(&b.sent_at)))
            .collect::<Vec<_>>()
    });
}

#[test]
fn report_target_round_trips_and_is_replaced() {
    on_every_backend(|store| {
        let run_id = import(store, "r", &[(2, "1", "XOF", "tx-2")]);
        assert_eq!(store.report_target(run_id).unwrap(), None);
        let mut t = ReportTarget {
            path: PathBuf::from("/tmp/r.csv"),
            delimiter: b';',
            bom: true,
            language: "fr".into(),
        };
        store.set_report_target(run_id, &t).unwrap();
        assert_eq!(store.report_target(run_id).unwrap(), Some(t.clone()));
        t.path = PathBuf::from("/tmp/other.xlsx");
        t.delimiter = b',';
        t.bom = false;
        t.language = "en".into();
        store.set_report_target(run_id, &t).unwrap();
        assert_eq!(store.report_target(run_id).unwrap(), Some(t.clone()));
        t
    });
}

#[test]
fn repoint_only_when_nothing_was_sent() {
    on_every_backend(|store| {
        let fresh = import(store, "fresh", &[(2, "1", "XOF", "f2")]);
        assert!(store.repoint_unsent_run(fresh, "https://right").unwrap());
        assert_eq!(store.run(fresh).unwrap().unwrap().provider, "https://right");
        // Cancelled before sending: still never sent.
        store.cancel_run(fresh).unwrap();
        assert!(store.repoint_unsent_run(fresh, "https://again").unwrap());

        let sent = import(store, "sent", &[(2, "1", "XOF", "s2")]);
        advance(store, "s2", &[State::Initiating]);
        assert!(!store.repoint_unsent_run(sent, "https://other").unwrap());
        assert_eq!(store.run(sent).unwrap().unwrap().provider, "sandbox");

        // Cancelled after initiation: the provider saw it.
        let seen = import(store, "seen", &[(2, "1", "XOF", "v2")]);
        advance(store, "v2", &[State::Initiating, State::Initiated]);
        store.cancel_run(seen).unwrap();
        assert_eq!(store.open_count(seen).unwrap(), 0);
        assert!(!store.repoint_unsent_run(seen, "https://other").unwrap());
        store
            .runs()
            .unwrap()
            .into_iter()
            .map(|r| r.provider)
            .collect::<Vec<_>>()
    });
}

#[test]
fn a_state_payrun_does_not_know_is_an_error_in_every_read() {
    on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[(2, "1000", "XOF", "tx-2"), (3, "0.5", "XOF", "tx-3")],
        );
        raw_sql(
            store,
            "UPDATE payouts SET state = 'settling' WHERE transaction_id = 'tx-3'",
        );
        let has_state = |e: anyhow::Error| format!("{e:#}").contains("settling");
        assert!(has_state(store.state_counts(run_id).unwrap_err()));
        assert!(has_state(store.totals(run_id).unwrap_err()));
        assert!(has_state(
            store.for_each_report_row(run_id, |_| Ok(())).unwrap_err()
        ));
        assert!(has_state(
            store.payout_by_transaction_id("tx-3").unwrap_err()
        ));
        assert!(has_state(store.booked(Some(run_id)).unwrap_err()));
    });
}

/// `payrun reconcile` polls and resolves inside the async runtime: every
/// read and decision works there too, on either backend.
#[test]
fn reads_and_decisions_work_on_a_runtime_thread() {
    on_every_backend(|store| {
        let run_id = import(
            store,
            "r",
            &[(2, "1", "XOF", "tx-2"), (3, "1", "XOF", "tx-3")],
        );
        advance(store, "tx-2", TO_UNKNOWN);
        let id = id_of(store, "tx-2");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            store
                .resolve(
                    id,
                    State::Unknown,
                    State::ExecuteFailed,
                    "poll",
                    "refused",
                    "REFUSED",
                )
                .unwrap();
            assert_eq!(store.runs().unwrap().len(), 1);
            assert_eq!(store.booked(Some(run_id)).unwrap().len(), 2);
            assert_eq!(store.audit(run_id).unwrap().len(), 1);
            assert!(store.unresolved(None).unwrap().is_empty());
            let rows = report(store, run_id);
            assert_eq!(rows.len(), 2);
            let done = store.cancel_run(run_id).unwrap();
            assert_eq!(done.never_sent, 1);
            rows
        })
    });
}
