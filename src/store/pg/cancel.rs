//! Ending a run by an operator (`payrun cancel`, PostgreSQL), as
//! `sqlite/cancel.rs` and with the same [`cancel_plan`] decisions: every
//! payout whose execute was never sent becomes `cancelled` in one
//! transaction; one never sent at all gives its transaction id back. Other
//! workers may share the run, so the run's open payouts are locked
//! (`FOR UPDATE`, in id order) before anything is decided: a payout a
//! worker is moving is waited for and then seen in its new state, and no
//! worker can claim or move one while the cancel holds it. The cancel is
//! set-based (one `UPDATE` for the run, not a statement per payout), so a
//! run of a million pending payouts cancels in a few round trips. It
//! waits for a lock at most [`LOCK_TIMEOUT`] (well under PostgreSQL's
//! deadlock check), so if it ever closes a cycle with a worker it is the
//! cancel, not the worker's commit, that gives way and is retried.
//!
//! [`cancel_plan`]: crate::store::cancel_plan

use super::Pg;
use super::reads::RUN_PAYOUTS;
use super::schema::NOW;
use super::sql::{state, state_list};
use crate::machine::{self, CANCELLABLE, OPEN, State};
use crate::store::cancel_plan::{CANCEL_CODE, cancel_message, ever_sent, tally};
use crate::store::errors::WriteError;
use crate::store::types::{CancelOutcome, RELEASED_ID_MARK};
use anyhow::{Context, Result, bail};
use postgres::Client;
use postgres::error::SqlState;

/// How long the cancel waits for one payout a worker holds.
const LOCK_TIMEOUT: &str = "500ms";

/// Attempts of a cancel that found payouts locked for longer.
const LOCK_ATTEMPTS: u32 = 5;

impl Pg {
    /// Points a run at another provider URL, only if no payout of it was
    /// ever sent (all `pending` or `cancelled` from pending). Returns
    /// whether it was moved.
    pub fn repoint_unsent_run(&mut self, run_id: i64, provider: &str) -> Result<bool> {
        let counts = self.state_counts(run_id)?;
        let provider = provider.to_string();
        self.call(move |c| {
            let cancelled_after_sending: i64 = c
                .query_one(
                    "SELECT count(*) FROM payouts WHERE run_id = $1 AND state = $2
                     AND strpos(transaction_id, $3) = 0",
                    &[&run_id, &State::Cancelled.as_str(), &RELEASED_ID_MARK],
                )?
                .try_get(0)?;
            if ever_sent(&counts, cancelled_after_sending as u64) {
                return Ok(false);
            }
            c.execute(
                "UPDATE runs SET provider = $2 WHERE id = $1",
                &[&run_id, &provider],
            )?;
            Ok(true)
        })
    }

    /// Cancels every cancellable payout of `run_id`, and marks the run
    /// finished when nothing is left open.
    pub fn cancel_run(&mut self, run_id: i64) -> Result<CancelOutcome> {
        self.call(move |c| {
            let mut attempt = 1;
            loop {
                match cancel_once(c, run_id) {
                    Err(e) if attempt < LOCK_ATTEMPTS && held_by_another(&e) => attempt += 1,
                    Err(e) if held_by_another(&e) => {
                        return Err(e).with_context(|| {
                            format!(
                                "payouts of run {run_id} stayed locked by a worker still \
                                 running it; stop its workers, then cancel again"
                            )
                        });
                    }
                    other => return other,
                }
            }
        })
    }
}

/// One attempt, in one transaction.
fn cancel_once(c: &mut Client, run_id: i64) -> Result<CancelOutcome> {
    let mut tx = c.transaction()?;
    tx.batch_execute(&format!("SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))?;
    let now: String = tx.query_one(&format!("SELECT {NOW}"), &[])?.try_get(0)?;
    let mut out = CancelOutcome::default();
    let locked = tx.query(
        &format!(
            "SELECT state, count(*) FROM (
                 SELECT state FROM payouts WHERE {RUN_PAYOUTS} AND state IN ({})
                 ORDER BY id FOR UPDATE) locked
             GROUP BY state",
            state_list(OPEN)
        ),
        &[&run_id],
    )?;
    for r in &locked {
        tally(&mut out, state(r, 0)?, r.try_get::<_, i64>(1)? as u64);
    }
    for &from in CANCELLABLE {
        if !machine::allowed(from, State::Cancelled) {
            return Err(WriteError::NotAllowed {
                id: None,
                from,
                to: State::Cancelled,
            }
            .into());
        }
    }
    let expected = out.never_sent + out.initiated;
    if expected > 0 {
        let pending = State::Pending.as_str();
        let (never_sent, initiated) = (
            cancel_message(State::Pending),
            cancel_message(State::Initiated),
        );
        let changed = tx.execute(
            &format!(
                "UPDATE payouts SET state = $2, provider_code = $3,
                        provider_msg = CASE WHEN state = $4 THEN $5 ELSE $6 END,
                        transaction_id = CASE WHEN state = $4 THEN transaction_id || $7 || id
                                              ELSE transaction_id END,
                        updated_at = $8
                 WHERE {RUN_PAYOUTS} AND state IN ({})",
                state_list(CANCELLABLE)
            ),
            &[
                &run_id,
                &State::Cancelled.as_str(),
                &CANCEL_CODE,
                &pending,
                &never_sent,
                &initiated,
                &RELEASED_ID_MARK,
                &now,
            ],
        )?;
        if changed != expected {
            bail!("payouts of run {run_id} changed while being cancelled; cancel again");
        }
    }
    if out.left_open.is_empty() {
        tx.execute(
            "UPDATE runs SET finished_at = COALESCE(finished_at, $2) WHERE id = $1",
            &[&run_id, &now],
        )?;
    }
    tx.commit()?;
    Ok(out)
}

/// A payout was locked by another transaction for longer than the cancel
/// waits, or the two waited on each other.
fn held_by_another(e: &anyhow::Error) -> bool {
    e.downcast_ref::<postgres::Error>()
        .and_then(|e| e.code())
        .is_some_and(|c| {
            *c == SqlState::LOCK_NOT_AVAILABLE || *c == SqlState::T_R_DEADLOCK_DETECTED
        })
}

/// What only a shared database shows: a worker's transaction on the run's
/// payouts while the cancel runs (see also `store/both_tests.rs`).
#[cfg(test)]
mod tests {
    use crate::machine::State;
    use crate::provider::wire::Sender;
    use crate::store::test_support::{new_run, payout, pg_target};
    use crate::store::{Db, Store, Transition};
    use std::time::{Duration, Instant};

    /// A store with a run of `pending` (row 2) and `initiated` (row 3),
    /// and a second connection to the same database (the "worker").
    fn run_and_worker() -> Option<(Store, i64, postgres::Client)> {
        let db = pg_target()?;
        let mut store = Store::connect(&db).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        imp.add(&payout(2, "1"), "tx-2").unwrap();
        imp.add(&payout(3, "1"), "tx-3").unwrap();
        let run_id = imp.commit().unwrap();
        let id = store.payout_by_transaction_id("tx-3").unwrap().unwrap().id;
        store
            .apply(&[
                Transition::new(id, State::Pending, State::Initiating),
                Transition::new(id, State::Initiating, State::Initiated),
            ])
            .unwrap();
        let Db::Postgres(target) = &db else {
            unreachable!()
        };
        let worker = postgres::Client::connect(target.url(), postgres::NoTls).unwrap();
        Some((store, run_id, worker))
    }

    /// Waits until the backend `pid` waits for a row lock.
    fn until_waiting_for_a_lock(monitor: &mut postgres::Client, pid: i32) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let waiting: i64 = monitor
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity
                     WHERE pid = $1 AND wait_event_type = 'Lock'",
                    &[&pid],
                )
                .unwrap()
                .get(0);
            if waiting == 1 {
                return;
            }
            assert!(Instant::now() < deadline, "the cancel never waited");
            std::thread::yield_now();
        }
    }

    fn backend_pid(store: &Store) -> i32 {
        let Store::Postgres(pg) = store else {
            unreachable!()
        };
        pg.call(|c| Ok(c.query_one("SELECT pg_backend_pid()", &[])?.get(0)))
            .unwrap()
    }

    /// A worker moving the initiated payout to `executing` (its intent to
    /// execute) when the cancel starts: the cancel waits for that commit,
    /// then sees the payout in flight and leaves it open, never cancelling
    /// a payout whose execute may be at the provider.
    #[test]
    fn cancel_waits_for_a_worker_moving_a_payout_and_leaves_it_open() {
        let Some((mut store, run_id, mut worker)) = run_and_worker() else {
            eprintln!("skipped: PAYRUN_TEST_POSTGRES is not set");
            return;
        };
        let pid = backend_pid(&store);
        let Store::Postgres(pg) = &store else {
            unreachable!()
        };
        let mut monitor = postgres::Client::connect(pg.target().url(), postgres::NoTls).unwrap();
        let mut intent = worker.transaction().unwrap();
        intent
            .execute(
                "UPDATE payouts SET state = 'executing' WHERE transaction_id = 'tx-3'",
                &[],
            )
            .unwrap();
        let done = std::thread::scope(|s| {
            let cancel = s.spawn(|| store.cancel_run(run_id));
            until_waiting_for_a_lock(&mut monitor, pid);
            intent.commit().unwrap();
            cancel.join().unwrap()
        })
        .unwrap();
        assert_eq!((done.never_sent, done.initiated), (1, 0));
        assert_eq!(done.left_open.get(&State::Executing), Some(&1));
        let counts = store.state_counts(run_id).unwrap();
        assert_eq!(counts[&State::Executing], 1);
        assert_eq!(counts[&State::Cancelled], 1);
        assert_eq!(store.run(run_id).unwrap().unwrap().finished_at, None);
    }

    /// A payout locked for longer than the cancel waits: the cancel gives
    /// way (the worker's transaction is never the one aborted), says why,
    /// and changes nothing.
    #[test]
    fn a_payout_locked_past_the_timeout_fails_the_cancel_and_changes_nothing() {
        let Some((mut store, run_id, mut worker)) = run_and_worker() else {
            eprintln!("skipped: PAYRUN_TEST_POSTGRES is not set");
            return;
        };
        let mut held = worker.transaction().unwrap();
        held.execute(
            "SELECT 1 FROM payouts WHERE transaction_id = 'tx-2' FOR UPDATE",
            &[],
        )
        .unwrap();
        let err = store.cancel_run(run_id).unwrap_err();
        assert!(
            format!("{err:#}").contains(&format!(
                "payouts of run {run_id} stayed locked by a worker still running it"
            )),
            "{err:#}"
        );
        held.rollback().unwrap();
        let counts = store.state_counts(run_id).unwrap();
        assert_eq!(counts[&State::Pending], 1);
        assert_eq!(counts[&State::Initiated], 1);
        // Once the worker let go, the cancel goes through.
        let done = store.cancel_run(run_id).unwrap();
        assert_eq!((done.never_sent, done.initiated), (1, 1));
    }
}
