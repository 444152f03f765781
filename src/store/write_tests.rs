//! The store's writes (import, history, claims, transitions, group
//! commit), tested against every backend: SQLite always, PostgreSQL when
//! `PAYRUN_TEST_POSTGRES` is set (see [`test_support::stores`]). Both must
//! give the same results and the same errors. The PostgreSQL-only tests at
//! the end cover what only a shared database has: two workers claiming at
//! once, the lease fence, a second connection seeing a commit.

use super::test_support::{new_run, payout, pg_target, stores};
use super::writer::GroupOp;
use super::{DuplicateIds, ImportError, Store, Transition, WriteError};
use crate::machine::State;
use crate::provider::wire::Sender;
use crate::store::errors::MAX_DUPLICATES_LISTED;
use rust_decimal::Decimal;

/// Runs `f` on a fresh store of every backend under test.
fn each(f: impl Fn(&mut Store, &str)) {
    let dir = tempfile::tempdir().unwrap();
    for mut store in stores(dir.path()) {
        let name = format!("{store:?}");
        f(&mut store, &name);
    }
}

/// A run of `n` payouts (rows 2.., ids `tx-2`..), committed.
fn run_of(store: &mut Store, identity: &str, n: u64) -> i64 {
    let sender = Sender::default();
    let mut imp = store.begin_import(&new_run(identity, &sender)).unwrap();
    for row in 2..n + 2 {
        imp.add(&payout(row, "1000"), &format!("{identity}-{row}"))
            .unwrap();
    }
    imp.commit().unwrap()
}

fn id_of(store: &Store, transaction_id: &str) -> i64 {
    store
        .payout_by_transaction_id(transaction_id)
        .unwrap()
        .unwrap()
        .id
}

fn claim(store: &mut Store, run_id: i64, limit: usize) -> Vec<u64> {
    let claimed = store
        .commit_group(&[GroupOp::Claim { run_id, limit }])
        .unwrap();
    claimed[0].iter().map(|w| w.row).collect()
}

fn count(store: &Store, run_id: i64, state: State) -> usize {
    store.works_in_state(run_id, state).unwrap().len()
}

#[test]
fn import_claim_apply_round_trip() {
    each(|store, b| {
        let sender = Sender {
            firstname: "Acme".into(),
            ..Default::default()
        };
        let mut imp = store.begin_import(&new_run("abc", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.add(&payout(3, "2500"), "tx-3").unwrap();
        let run_id = imp.commit().unwrap();
        assert_eq!(run_id, 1, "{b}");
        let run = store.find_run("abc").unwrap().unwrap();
        assert_eq!((run.id, run.rows_total, run.rows_rejected), (run_id, 2, 0));
        assert_eq!((run.id_scheme, run.period.as_str()), (3, "2026-05"));
        assert_eq!(store.payout_count(run_id).unwrap(), 2);

        let claimed = store
            .commit_group(&[GroupOp::Claim { run_id, limit: 10 }])
            .unwrap()
            .remove(0);
        assert_eq!(claimed.len(), 2, "{b}");
        assert_eq!(claimed[0].request.transaction_id, "tx-2");
        assert_eq!(claimed[0].request.sender.firstname, "Acme");
        assert_eq!(claimed[0].request.beneficiary.firstname, "Aïcha");
        assert_eq!(claimed[1].request.amount, "2500");
        assert!(claimed.iter().all(|w| w.state == State::Initiating));
        assert_eq!(count(store, run_id, State::Initiating), 2);
        let id = claimed[0].id;
        let mut t = Transition::new(id, State::Executing, State::Executed);
        t.attempts = 2;
        t.stamp_executed = true;
        t.code = Some("OK".into());
        store
            .apply(&[
                Transition::new(id, State::Initiating, State::Initiated),
                Transition::new(id, State::Initiated, State::Executing),
                t,
            ])
            .unwrap();
        let totals = store.totals(run_id).unwrap();
        assert_eq!(totals["XOF"][&State::Executed].total, Decimal::from(1000));
        assert_eq!(totals["XOF"][&State::Initiating].count, 1);
        let mut lines = Vec::new();
        store
            .for_each_report_row(run_id, |r| {
                lines.push(r.clone());
                Ok(())
            })
            .unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            (lines[0].state.as_str(), lines[0].attempts),
            ("executed", 2)
        );
        assert_eq!(lines[0].provider_code, "OK");
        assert!(lines[0].executed_at.ends_with('Z'), "{b}: {lines:?}");
        assert!(lines[0].initiated_at.is_empty());
        assert_eq!(lines[1].state, "initiating");
    });
}

#[test]
fn cross_run_duplicate_ids_are_refused_and_rolled_back() {
    each(|store, b| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("one", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.commit().unwrap();
        let mut imp = store.begin_import(&new_run("two", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-new").unwrap();
        imp.add(&payout(3, "1000"), "tx-2").unwrap();
        let msg = format!("{:#}", imp.commit().unwrap_err());
        assert_eq!(
            msg,
            "row 3: transaction_id \"tx-2\" is already used by run 1 (payroll.csv, row 2); \
             a transaction id pays once, ever: give this row a new transaction_id",
            "{b}"
        );
        assert!(store.find_run("two").unwrap().is_none());
        assert!(store.payout_by_transaction_id("tx-new").unwrap().is_none());
        // Nothing of the refused import is left, not even its ids.
        let mut imp = store.begin_import(&new_run("three", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-new").unwrap();
        assert_eq!(imp.commit().unwrap(), 2, "{b}");
        assert_eq!(id_of(store, "tx-new"), 2, "{b}");
    });
}

#[test]
fn large_import_keeps_row_order_and_finds_duplicates() {
    each(|store, b| {
        let sender = Sender::default();
        let n = 2345;
        let mut imp = store.begin_import(&new_run("big", &sender)).unwrap();
        for i in 0..n {
            imp.add(&payout(i as u64 + 2, "100"), &format!("tx-{i:04}"))
                .unwrap();
        }
        let run_id = imp.commit().unwrap();
        let mut rows = Vec::new();
        store
            .for_each_report_row(run_id, |r| {
                rows.push(r.row);
                Ok(())
            })
            .unwrap();
        assert_eq!(rows, (2..n as u64 + 2).collect::<Vec<_>>(), "{b}");
        assert_eq!(store.open_count(run_id).unwrap(), n as u64);
        assert_eq!(id_of(store, "tx-0000"), 1);
        assert_eq!(id_of(store, &format!("tx-{:04}", n - 1)), n as i64);

        // A second run reusing ids of the first is refused whole; the
        // lines come in row order whichever batch found them.
        let mut imp = store.begin_import(&new_run("again", &sender)).unwrap();
        for i in 0..1500 {
            let id = match i {
                17 => "tx-0003".to_string(),
                1200 => "tx-2000".to_string(),
                _ => format!("new-{i}"),
            };
            imp.add(&payout(i as u64 + 2, "100"), &id).unwrap();
        }
        let Err(ImportError::DuplicateIds(DuplicateIds(lines))) = imp.commit() else {
            panic!("{b}: expected duplicate ids");
        };
        assert_eq!(lines.len(), 2, "{b}: {lines:?}");
        assert!(lines[0].starts_with("row 19: transaction_id \"tx-0003\""));
        assert!(lines[1].starts_with("row 1202: transaction_id \"tx-2000\""));
        assert!(store.find_run("again").unwrap().is_none());
        assert!(store.payout_by_transaction_id("new-1").unwrap().is_none());
    });
}

#[test]
fn duplicate_ids_are_a_typed_error_the_caller_can_match() {
    each(|store, b| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("one", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.add(&payout(3, "1000"), "tx-2").unwrap();
        match imp.commit() {
            Err(ImportError::DuplicateIds(DuplicateIds(lines))) => assert_eq!(
                lines,
                [
                    "row 3: transaction_id \"tx-2\" repeats row 2 of this file; \
                  give each row its own transaction_id"
                ],
                "{b}"
            ),
            other => panic!("{b}: expected duplicate ids, got {other:?}"),
        }
        assert!(store.find_run("one").unwrap().is_none());
    });
}

#[test]
fn more_duplicates_than_listed_are_counted() {
    each(|store, b| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("one", &sender)).unwrap();
        let n = MAX_DUPLICATES_LISTED + 5;
        for i in 0..=n {
            imp.add(&payout(i as u64 + 2, "1"), "same").unwrap();
        }
        let Err(ImportError::DuplicateIds(DuplicateIds(lines))) = imp.commit() else {
            panic!("{b}: expected duplicate ids");
        };
        assert_eq!(lines.len(), MAX_DUPLICATES_LISTED + 1, "{b}");
        assert!(lines[0].starts_with("row 3:"), "{b}: {lines:?}");
        assert_eq!(lines.last().unwrap(), "... and 5 more");
    });
}

/// Lines the caller reports and duplicates the store finds come in the
/// order of the rows, however the store batches its inserts.
#[test]
fn conflict_lines_and_duplicates_keep_row_order() {
    each(|store, b| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("one", &sender)).unwrap();
        imp.add(&payout(2, "1"), "a").unwrap();
        imp.add(&payout(3, "1"), "a").unwrap();
        imp.conflict("row 4: taken".into());
        imp.add(&payout(5, "1"), "b").unwrap();
        imp.add(&payout(6, "1"), "b").unwrap();
        let Err(ImportError::DuplicateIds(DuplicateIds(lines))) = imp.commit() else {
            panic!("{b}: expected duplicate ids");
        };
        let heads: Vec<&str> = lines.iter().map(|l| &l[..6]).collect();
        assert_eq!(heads, ["row 3:", "row 4:", "row 6:"], "{b}: {lines:?}");
    });
}

#[test]
fn earlier_retry_and_skipped_rows() {
    each(|store, b| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("one", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.add(&payout(3, "5"), "tx-3").unwrap();
        let first = imp.commit().unwrap();
        let id = id_of(store, "tx-3");
        let mut failed = Transition::new(id, State::Initiating, State::InitiateFailed);
        failed.code = Some("E42".into());
        store
            .apply(&[
                Transition::new(id, State::Pending, State::Initiating),
                failed,
            ])
            .unwrap();

        let mut imp = store.begin_import(&new_run("two", &sender)).unwrap();
        let e = imp.earlier("tx-2").unwrap().unwrap();
        assert_eq!(
            (e.run_id, e.row, e.state),
            (first, 2, State::Pending),
            "{b}"
        );
        assert_eq!((e.amount.as_str(), e.method.as_str()), ("1000", "momo"));
        assert_eq!(e.run_file, "payroll.csv");
        assert!(!e.run_finished);
        assert!(imp.earlier("tx-9").unwrap().is_none());
        assert_eq!((e.period.as_str(), e.origin_run), ("2026-05", first));
        assert_eq!(e.account_key, "ACC2");
        assert_eq!(imp.payouts_of(first).unwrap(), 2);
        imp.add_skipped(2, e.payout_id).unwrap();
        imp.add_skipped(2, e.payout_id).unwrap();
        let link = crate::store::RetryLink {
            of: id,
            origin_run: first,
        };
        imp.add_retry(&payout(3, "5"), "tx-3-r2", link).unwrap();
        let second = imp.commit().unwrap();
        assert_eq!(store.skipped_count(second).unwrap(), 1, "{b}");
        assert_eq!(store.payout_count(second).unwrap(), 1);
        assert_eq!(store.run(second).unwrap().unwrap().rows_total, 3);
        let failed = store.failed_rows(first).unwrap();
        let got: Vec<(u64, &str, &str)> = failed
            .iter()
            .map(|f| (f.row, f.reason.as_str(), f.transaction_id.as_str()))
            .collect();
        assert_eq!(got, [(3, "initiate_failed: E42", "tx-3")], "{b}");
        assert!(store.failed_rows(second).unwrap().is_empty());
        // A failed re-payment is named by the id its row was first paid
        // under, followed back through `retry_of`.
        let retry = id_of(store, "tx-3-r2");
        store
            .apply(&[
                Transition::new(retry, State::Pending, State::Initiating),
                Transition::new(retry, State::Initiating, State::InitiateFailed),
            ])
            .unwrap();
        let failed = store.failed_rows(second).unwrap();
        assert_eq!(failed.len(), 1, "{b}");
        assert_eq!(
            (failed[0].row, failed[0].transaction_id.as_str()),
            (3, "tx-3")
        );

        // A finished run is seen as such; an unfinished one is found again.
        assert_eq!(
            store
                .unfinished_run_of("two", "", "")
                .unwrap()
                .map(|r| r.id),
            Some(second)
        );
        store.mark_finished(second).unwrap();
        store.mark_finished(second).unwrap();
        assert!(store.unfinished_run_of("two", "", "").unwrap().is_none());
        let finished_at = store.run(second).unwrap().unwrap().finished_at.unwrap();
        assert!(
            finished_at.ends_with('Z') && finished_at.len() == 24,
            "{finished_at}"
        );
        let imp = store.begin_import(&new_run("three", &sender)).unwrap();
        let retry = imp.earlier("tx-3-r2").unwrap().unwrap();
        assert!(retry.run_finished);
        assert_eq!(
            retry.origin_run, first,
            "{b}: a re-payment belongs to the first request"
        );
    });
}

#[test]
fn claims_go_in_file_order_up_to_the_limit() {
    each(|store, b| {
        let run_id = run_of(store, "r", 10);
        assert_eq!(claim(store, run_id, 3), [2, 3, 4], "{b}");
        // Two claims of one group: each its own answer, in command order.
        let got = store
            .commit_group(&[
                GroupOp::Claim { run_id, limit: 2 },
                GroupOp::Claim { run_id, limit: 4 },
            ])
            .unwrap();
        let rows: Vec<Vec<u64>> = got
            .iter()
            .map(|ws| ws.iter().map(|w| w.row).collect())
            .collect();
        assert_eq!(rows, [vec![5, 6], vec![7, 8, 9, 10]], "{b}");
        assert_eq!(claim(store, run_id, 5), [11], "{b}");
        assert!(claim(store, run_id, 5).is_empty());
        assert_eq!(count(store, run_id, State::Initiating), 10);
    });
}

/// A claim takes the pending payouts only, and leaves those between them
/// that are elsewhere as they are.
#[test]
fn a_claim_passes_over_payouts_that_are_not_pending() {
    each(|store, b| {
        let run_id = run_of(store, "r", 6);
        let (three, five) = (id_of(store, "r-3"), id_of(store, "r-5"));
        store
            .apply(&[
                Transition::new(three, State::Pending, State::Initiating),
                Transition::new(five, State::Pending, State::Initiating),
                Transition::new(five, State::Initiating, State::Initiated),
            ])
            .unwrap();
        let claimed = store
            .commit_group(&[GroupOp::Claim { run_id, limit: 3 }])
            .unwrap();
        let rows: Vec<u64> = claimed[0].iter().map(|w| w.row).collect();
        assert_eq!(rows, [2, 4, 6], "{b}");
        assert!(
            claimed[0].iter().all(|w| w.state == State::Initiating),
            "{b}"
        );
        assert_eq!(count(store, run_id, State::Initiating), 4, "{b}");
        assert_eq!(count(store, run_id, State::Initiated), 1, "{b}");
        assert_eq!(claim(store, run_id, 10), [7], "{b}");
        assert_eq!(count(store, run_id, State::Pending), 0, "{b}");
    });
}

#[test]
fn a_write_from_the_wrong_state_is_a_conflict_and_commits_nothing() {
    each(|store, b| {
        let run_id = run_of(store, "r", 1);
        let id = id_of(store, "r-2");
        let err = store
            .apply(&[
                Transition::new(id, State::Pending, State::Initiating),
                Transition::new(id, State::Pending, State::Initiating),
            ])
            .unwrap_err();
        assert_eq!(
            err,
            WriteError::Conflict {
                id,
                from: State::Pending,
                to: State::Initiating
            },
            "{b}"
        );
        // The first transition of the failed transaction is not kept.
        assert_eq!(count(store, run_id, State::Pending), 1, "{b}");
    });
}

#[test]
fn a_transition_the_state_machine_lacks_is_refused() {
    each(|store, b| {
        let run_id = run_of(store, "r", 1);
        let id = id_of(store, "r-2");
        let err = store
            .apply(&[Transition::new(id, State::Pending, State::Executed)])
            .unwrap_err();
        assert_eq!(
            err,
            WriteError::NotAllowed {
                id: Some(id),
                from: State::Pending,
                to: State::Executed
            },
            "{b}"
        );
        assert_eq!(count(store, run_id, State::Pending), 1);
    });
}

/// A group is one transaction: claims and transitions commit together,
/// and one failing command leaves nothing of the group behind.
#[test]
fn a_group_commits_claims_and_transitions_together_or_not_at_all() {
    each(|store, b| {
        let run_id = run_of(store, "r", 4);
        let first = claim(store, run_id, 1);
        assert_eq!(first, [2]);
        let id = id_of(store, "r-2");
        let accepted = [Transition::new(id, State::Initiating, State::Initiated)];
        let got = store
            .commit_group(&[
                GroupOp::Apply(&accepted),
                GroupOp::Claim { run_id, limit: 1 },
            ])
            .unwrap();
        assert_eq!(got.len(), 1, "{b}");
        assert_eq!(got[0][0].row, 3);
        assert_eq!(count(store, run_id, State::Initiated), 1);

        let stale = [Transition::new(id, State::Initiating, State::Initiated)];
        let err = store
            .commit_group(&[GroupOp::Claim { run_id, limit: 2 }, GroupOp::Apply(&stale)])
            .unwrap_err();
        assert!(
            matches!(err, WriteError::Conflict { id: i, .. } if i == id),
            "{b}"
        );
        // The claim of the failed group was rolled back and is made again.
        assert_eq!(count(store, run_id, State::Pending), 2, "{b}");
        assert_eq!(claim(store, run_id, 5), [4, 5], "{b}");
    });
}

/// The writer thread over every backend; the store comes back to, and is
/// dropped on, a thread that drives async tasks.
#[tokio::test]
async fn the_writer_commits_on_every_backend() {
    let dir = tempfile::tempdir().unwrap();
    // Connecting blocks: off this thread, as a command does.
    let all = std::thread::scope(|s| s.spawn(|| stores(dir.path())).join().unwrap());
    for mut store in all {
        let run_id = run_of(&mut store, "w", 3);
        let (writer, thread) = super::Writer::spawn(store);
        let claimed = writer.claim(run_id, 2).await.unwrap();
        assert_eq!(claimed.iter().map(|w| w.row).collect::<Vec<_>>(), [2, 3]);
        let id = claimed[0].id;
        writer
            .apply(vec![Transition::new(
                id,
                State::Initiating,
                State::Initiated,
            )])
            .await
            .unwrap();
        let err = writer
            .apply(vec![Transition::new(id, State::Pending, State::Initiating)])
            .await
            .unwrap_err();
        assert!(matches!(err, WriteError::Conflict { .. }), "{err}");
        let mut store = thread.join().unwrap();
        assert_eq!(count(&store, run_id, State::Initiated), 1);
        // An import on this thread, dropped unfinished, rolls back and
        // gives the connection back.
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("gone", &sender)).unwrap();
        imp.add(&payout(2, "1"), "gone-2").unwrap();
        assert!(imp.earlier("w-2").unwrap().is_some());
        drop(imp);
        assert!(store.find_run("gone").unwrap().is_none());
        assert_eq!(run_of(&mut store, "next", 1), 2);
    }
}

/// What only a database shared by several workers has.
mod postgres_only {
    use super::*;
    use crate::store::Db;
    use crate::store::pg::Pg;
    use std::collections::BTreeSet;

    fn connect(db: &Db) -> Store {
        Store::connect(db).unwrap()
    }

    fn pg(store: &mut Store) -> &mut Pg {
        match store {
            Store::Postgres(pg) => pg,
            Store::Sqlite(_) => unreachable!(),
        }
    }

    fn sql(store: &Store, q: &str) -> Vec<postgres::Row> {
        let Store::Postgres(pg) = store else {
            unreachable!()
        };
        let q = q.to_string();
        pg.call(move |c| Ok(c.query(&q, &[])?)).unwrap()
    }

    fn register(store: &Store, run_id: i64) -> i64 {
        sql(
            store,
            &format!(
                "INSERT INTO workers (run_id, host, pid) VALUES ({run_id}, 'test', 1) RETURNING id"
            ),
        )[0]
        .get(0)
    }

    macro_rules! target {
        () => {
            match pg_target() {
                Some(db) => db,
                None => {
                    return;
                }
            }
        };
    }

    #[test]
    fn two_workers_claiming_at_once_never_get_the_same_payout() {
        let db = target!();
        let n = 600;
        let run_id = run_of(&mut connect(&db), "shared", n);
        let claimed: Vec<Vec<i64>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let mut store = connect(&db);
                        let mut mine = Vec::new();
                        loop {
                            let got = store
                                .commit_group(&[GroupOp::Claim { run_id, limit: 7 }])
                                .unwrap()
                                .remove(0);
                            if got.is_empty() {
                                return mine;
                            }
                            mine.extend(got.iter().map(|w| w.id));
                        }
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        let all: BTreeSet<i64> = claimed.iter().flatten().copied().collect();
        assert_eq!(
            all.len(),
            claimed.iter().map(Vec::len).sum::<usize>(),
            "a payout was claimed twice"
        );
        assert_eq!(all, (1..=n as i64).collect());
    }

    /// A payout another transaction holds is skipped, not waited for, and
    /// claimed once it is free again.
    #[test]
    fn a_claim_skips_payouts_another_worker_holds() {
        let db = target!();
        let mut store = connect(&db);
        let run_id = run_of(&mut store, "r", 6);
        let mut holder = postgres::Client::connect(
            match &db {
                Db::Postgres(t) => t.url(),
                Db::File(_) => unreachable!(),
            },
            postgres::NoTls,
        )
        .unwrap();
        let mut tx = holder.transaction().unwrap();
        tx.execute("SELECT id FROM payouts WHERE id IN (1, 2) FOR UPDATE", &[])
            .unwrap();
        assert_eq!(claim(&mut store, run_id, 2), [4, 5]);
        tx.rollback().unwrap();
        // The cursor is past them, yet a short claim looks back (SQLite
        // has one writer and needs not): a payout a stopped worker put
        // back, or whose claim failed, is not left behind.
        assert_eq!(claim(&mut store, run_id, 5), [2, 3, 6, 7]);
    }

    /// A registered worker claims under its lease; once another worker
    /// took a payout over, the first one's transition is refused.
    #[test]
    fn the_lease_fence_refuses_a_transition_by_a_worker_that_lost_the_payout() {
        let db = target!();
        let mut store = connect(&db);
        let run_id = run_of(&mut store, "r", 2);
        let (me, other) = (register(&store, run_id), register(&store, run_id));
        pg(&mut store).set_worker(Some(me));
        let ids: Vec<i64> = store
            .commit_group(&[GroupOp::Claim { run_id, limit: 2 }])
            .unwrap()[0]
            .iter()
            .map(|w| w.id)
            .collect();
        let owners: Vec<i64> = sql(&store, "SELECT lease_owner FROM payouts ORDER BY id")
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(owners, [me, me]);
        // Mine still: applied.
        store
            .apply(&[Transition::new(ids[0], State::Initiating, State::Initiated)])
            .unwrap();
        // Taken over by another worker: refused, nothing recorded.
        sql(
            &store,
            &format!(
                "UPDATE payouts SET lease_owner = {other} WHERE id = {}",
                ids[1]
            ),
        );
        let t = Transition::new(ids[1], State::Initiating, State::Initiated);
        assert_eq!(
            store.apply(std::slice::from_ref(&t)).unwrap_err(),
            WriteError::Conflict {
                id: ids[1],
                from: State::Initiating,
                to: State::Initiated
            }
        );
        assert_eq!(count(&store, run_id, State::Initiating), 1);
        // Without a worker (a single process, an operator's command) the
        // lease is not asked.
        pg(&mut store).set_worker(None);
        store.apply(&[t]).unwrap();
    }

    /// A transition is committed when `apply` returns: another connection
    /// sees it at once, and the session asks the server to wait for disk.
    #[test]
    fn a_committed_transition_is_seen_from_another_connection() {
        let db = target!();
        let mut store = connect(&db);
        let run_id = run_of(&mut store, "r", 1);
        let other = connect(&db);
        assert_eq!(
            sql(&store, "SHOW synchronous_commit")[0].get::<_, String>(0),
            "on"
        );
        let claimed = claim(&mut store, run_id, 1);
        assert_eq!(claimed, [2]);
        assert_eq!(count(&other, run_id, State::Initiating), 1);
        store
            .apply(&[Transition::new(1, State::Initiating, State::Initiated)])
            .unwrap();
        assert_eq!(count(&other, run_id, State::Initiated), 1);
        drop(store);
        assert_eq!(count(&connect(&db), run_id, State::Initiated), 1);
    }
}

/// Import speed on PostgreSQL, 10,000 rows: the inserts alone, and as the
/// engine imports (one `earlier` look-up per row, then the row), on a
/// plain thread and on a thread that drives async tasks. Run with
/// `PAYRUN_TEST_POSTGRES=... cargo test --release --lib import_rate -- --ignored --nocapture`.
#[test]
#[ignore]
fn import_rate() {
    let Some(db) = pg_target() else {
        return;
    };
    let n = 10_000u64;
    let sender = Sender::default();
    let import = |store: &mut Store, name: &str, look_up: bool| {
        let t0 = std::time::Instant::now();
        let mut imp = store.begin_import(&new_run(name, &sender)).unwrap();
        for row in 2..n + 2 {
            let id = format!("{name}-{row}");
            if look_up {
                assert!(imp.earlier(&id).unwrap().is_none());
            }
            imp.add(&payout(row, "1000"), &id).unwrap();
        }
        imp.commit().unwrap();
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "{name}: {n} rows in {secs:.3} s = {:.0} rows/s",
            n as f64 / secs
        );
    };
    let mut store = Store::connect(&db).unwrap();
    import(&mut store, "inserts-only", false);
    import(&mut store, "engine-like", true);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async { import(&mut store, "engine-like-on-runtime", true) });
    drop(rt);
}
