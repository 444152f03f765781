//! The workers of a shared run (PostgreSQL): registering, heartbeats on
//! the server's clock, stopping, listing, adopting the payouts of workers
//! that are gone, and counting what other workers still hold. The rule for
//! "gone" is [`crate::store::shared::expired`]; see `ARCHITECTURE.md`,
//! "Several workers on one run".

use super::Pg;
use super::sql::{WORK_COLS, run_sender, state, state_list};
use crate::machine::{IN_FLIGHT, RESUMED, State};
use crate::store::rows;
use crate::store::shared::{
    LeaseTerms, Outstanding, WorkerInfo, WorkersBusy, adoptable, busy, expired, released, waits_for,
};
use crate::store::types::Work;
use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::time::Duration;

/// The lease in whole milliseconds, as SQL takes it.
fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

/// Age of a timestamp on the server's clock, in milliseconds.
const AGE_MS: &str = "GREATEST(0, (EXTRACT(EPOCH FROM (now() - heartbeat_at)) * 1000))::BIGINT";

/// Key of the advisory lock held while a `payrun run` finds or imports its
/// run (beside the schema's and the import's).
const START_LOCK: i64 = 0x5041_5952_0010;

/// Key of the operators' lock: held (exclusive, for the session) by a
/// `payrun reconcile` or `payrun cancel` changing payouts; a worker
/// registers only under it shared (for its transaction), so none joins
/// while an operator changes the run. Keyed by the schema too
/// ([`OPERATOR_KEY`]): installations in other schemas of the database do
/// not hold each other up.
const OPERATOR_LOCK: i32 = 0x5041_5911;

/// The second half of the operators' lock key: the schema's.
const OPERATOR_KEY: &str = "hashtext(COALESCE(current_schema(), ''))";

impl Pg {
    /// Waits for, then takes, the lock that lets one starting worker at a
    /// time find or import its run (held by this connection's session).
    pub fn lock_starts(&mut self) -> Result<()> {
        self.call(|c| {
            c.execute("SELECT pg_advisory_lock($1)", &[&START_LOCK])?;
            Ok(())
        })
        .context("cannot take the start lock of the database")
    }

    pub fn unlock_starts(&mut self) -> Result<()> {
        self.call(|c| {
            c.execute("SELECT pg_advisory_unlock($1)", &[&START_LOCK])?;
            Ok(())
        })
    }

    /// Registers a worker, unless an operator holds the operators' lock
    /// (`payrun reconcile` or `payrun cancel` changing payouts): then it
    /// is refused, before anything was sent.
    pub fn register_worker(&mut self, run_id: i64, host: &str, pid: u32) -> Result<i64> {
        let host = host.to_string();
        let registered = self.call(move |c| {
            let mut tx = c.transaction()?;
            let free: bool = tx
                .query_one(
                    &format!("SELECT pg_try_advisory_xact_lock_shared($1, {OPERATOR_KEY})"),
                    &[&OPERATOR_LOCK],
                )?
                .try_get(0)?;
            if !free {
                return Ok(None);
            }
            let row = tx.query_one(
                "INSERT INTO workers (run_id, host, pid) VALUES ($1, $2, $3) RETURNING id",
                &[&run_id, &host, &i64::from(pid)],
            )?;
            let id: i64 = row.try_get(0)?;
            tx.commit()?;
            Ok(Some(id))
        });
        match registered.context("cannot register this worker in the database")? {
            Some(id) => Ok(id),
            None => bail!(
                "payrun reconcile or payrun cancel is changing payouts in this database, so this \
                 worker did not join the run and sent nothing; run the same command again when \
                 it is done"
            ),
        }
    }

    /// Takes the operators' lock for this session and checks that no
    /// worker of `runs` (all: `None`) may still send; see
    /// [`crate::store::Store::exclude_workers`].
    pub fn exclude_workers(&mut self, runs: Option<Vec<i64>>, terms: LeaseTerms) -> Result<()> {
        let got = self
            .call(|c| {
                let sql = format!("SELECT pg_try_advisory_lock($1, {OPERATOR_KEY})");
                Ok(c.query_one(&sql, &[&OPERATOR_LOCK])?
                    .try_get::<_, bool>(0)?)
            })
            .context("cannot take the operators' lock of the database")?;
        if !got {
            bail!(
                "another payrun reconcile or payrun cancel is changing payouts in this database \
                 (or a worker is joining a run this instant); nothing was changed: run this \
                 again when it is done"
            );
        }
        let busy = self.busy_workers(runs, terms);
        match busy {
            Ok(workers) if workers.is_empty() => Ok(()),
            other => {
                self.call(|c| {
                    let sql = format!("SELECT pg_advisory_unlock($1, {OPERATOR_KEY})");
                    c.execute(&sql, &[&OPERATOR_LOCK])?;
                    Ok(())
                })?;
                Err(match other {
                    Ok(workers) => WorkersBusy { workers, terms }.into(),
                    Err(e) => e,
                })
            }
        }
    }

    /// The workers of `runs` (all: `None`) that may still send ([`busy`]).
    fn busy_workers(
        &self,
        runs: Option<Vec<i64>>,
        terms: LeaseTerms,
    ) -> Result<Vec<(i64, WorkerInfo)>> {
        let horizon = lease_ms(terms.lease.saturating_add(terms.deadline));
        let sql = format!(
            "SELECT w.id, w.run_id, w.host, w.pid, {AGE_MS}, w.stopped_at IS NOT NULL
             FROM workers w
             WHERE w.stopped_at IS NULL
               AND ($1::BIGINT[] IS NULL OR w.run_id = ANY($1))
               AND w.heartbeat_at > now() - $2::BIGINT * interval '1 millisecond'
             ORDER BY w.id"
        );
        let rows = self.call(move |c| Ok(c.query(&sql, &[&runs, &horizon])?))?;
        let mut out = Vec::new();
        for r in rows {
            let info = WorkerInfo {
                id: r.try_get(0)?,
                host: r.try_get(2)?,
                pid: u32::try_from(r.try_get::<_, i64>(3)?).unwrap_or(0),
                heartbeat_at: String::new(),
                heartbeat_age: Duration::from_millis(r.try_get::<_, i64>(4)?.max(0) as u64),
                stopped: r.try_get(5)?,
                held: 0,
            };
            if busy(info.stopped, info.heartbeat_age, terms) {
                out.push((r.try_get(1)?, info));
            }
        }
        Ok(out)
    }

    /// Refreshes the heartbeat unless the lease already expired (server
    /// clock) or the worker stopped: an expired worker never revives.
    pub fn heartbeat(&mut self, worker: i64, lease: Duration) -> Result<bool> {
        let ms = lease_ms(lease);
        self.call(move |c| {
            let n = c.execute(
                "UPDATE workers SET heartbeat_at = now()
                 WHERE id = $1 AND stopped_at IS NULL
                   AND heartbeat_at > now() - $2::BIGINT * interval '1 millisecond'",
                &[&worker, &ms],
            )?;
            Ok(n == 1)
        })
    }

    pub fn stop_worker(&mut self, worker: i64) -> Result<()> {
        self.call(move |c| {
            c.execute(
                "UPDATE workers SET stopped_at = COALESCE(stopped_at, now()) WHERE id = $1",
                &[&worker],
            )?;
            Ok(())
        })
    }

    pub fn workers(&self, run_id: i64) -> Result<Vec<WorkerInfo>> {
        let sql = format!(
            "SELECT w.id, w.host, w.pid,
                    to_char(w.heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
                    {AGE_MS}, w.stopped_at IS NOT NULL,
                    (SELECT count(*) FROM payouts p
                     WHERE p.lease_owner = w.id AND p.state IN ({}))
             FROM workers w WHERE w.run_id = $1 ORDER BY w.id",
            state_list(RESUMED)
        );
        self.call(move |c| {
            c.query(&sql, &[&run_id])?
                .iter()
                .map(|r| {
                    Ok(WorkerInfo {
                        id: r.try_get(0)?,
                        host: r.try_get(1)?,
                        pid: u32::try_from(r.try_get::<_, i64>(2)?).unwrap_or(0),
                        heartbeat_at: r.try_get(3)?,
                        heartbeat_age: Duration::from_millis(r.try_get::<_, i64>(4)? as u64),
                        stopped: r.try_get(5)?,
                        held: r.try_get::<_, i64>(6)? as u64,
                    })
                })
                .collect()
        })
    }

    pub fn adopt(&mut self, run_id: i64, me: i64, terms: LeaseTerms) -> Result<Vec<Work>> {
        let resumed = state_list(RESUMED);
        let in_flight = state_list(IN_FLIGHT);
        self.call(move |c| {
            let mut tx = c.transaction()?;
            // Who released what, by the one rule. Gone is for good, and a
            // release only comes later, so the lists cannot go stale
            // before the update below.
            let workers = worker_ages(&mut tx, run_id)?;
            let me_live = workers
                .get(&me)
                .is_some_and(|&(stopped, age)| !expired(stopped, age, terms.lease));
            if !me_live {
                return Ok(Vec::new());
            }
            let rel = |w: i64, s: State| {
                workers
                    .get(&w)
                    .is_some_and(|&(stopped, age)| released(s, stopped, age, terms))
            };
            let mut ids = Vec::new();
            for r in tx.query(
                &format!(
                    "SELECT id, state, lease_owner FROM payouts
                     WHERE run_id = $1 AND state IN ({resumed})
                       AND lease_owner IS DISTINCT FROM $2"
                ),
                &[&run_id, &me],
            )? {
                let owner: Option<i64> = r.try_get(2)?;
                if adoptable(state(&r, 1)?, owner, me, rel) {
                    ids.push(r.try_get::<_, i64>(0)?);
                }
            }
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            // Released for a payout at rest, and for one in flight.
            let (mut at_rest, mut in_flight_ok) = (Vec::new(), Vec::new());
            for &w in workers.keys() {
                if rel(w, State::Initiated) {
                    at_rest.push(w);
                }
                if rel(w, State::Executing) {
                    in_flight_ok.push(w);
                }
            }
            // Re-checked under the row locks: another adopter got there
            // first, or the payout moved on (into flight, say), and it is
            // left alone.
            let rows = tx.query(
                &format!(
                    "UPDATE payouts SET lease_owner = $2
                     WHERE id IN (SELECT id FROM payouts
                                  WHERE id = ANY($1) AND state IN ({resumed})
                                    AND (lease_owner IS NULL
                                         OR lease_owner = ANY($4)
                                         OR (lease_owner = ANY($3)
                                             AND state NOT IN ({in_flight})))
                                  FOR UPDATE SKIP LOCKED)
                     RETURNING {WORK_COLS}"
                ),
                &[&ids, &me, &at_rest, &in_flight_ok],
            )?;
            let sender = run_sender(&mut tx, run_id)?;
            let mut works = rows
                .iter()
                .map(|r| rows::work(r, &sender))
                .collect::<Result<Vec<Work>>>()?;
            tx.commit()?;
            works.sort_by_key(|w| {
                let rank = RESUMED.iter().position(|&s| s == w.state);
                (rank, w.id)
            });
            Ok(works)
        })
    }

    pub fn outstanding(&self, run_id: i64, me: i64, terms: LeaseTerms) -> Result<Outstanding> {
        let resumed = state_list(RESUMED);
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let workers = worker_ages(&mut tx, run_id)?;
            let rel = |w: i64, s: State| {
                workers
                    .get(&w)
                    .is_some_and(|&(stopped, age)| released(s, stopped, age, terms))
            };
            let pending: i64 = tx
                .query_one(
                    "SELECT count(*) FROM payouts WHERE run_id = $1 AND state = 'pending'",
                    &[&run_id],
                )?
                .try_get(0)?;
            let mut held_by_others = 0;
            for r in tx.query(
                &format!(
                    "SELECT state, lease_owner FROM payouts
                     WHERE run_id = $1 AND state IN ({resumed}) AND lease_owner IS DISTINCT FROM $2"
                ),
                &[&run_id, &me],
            )? {
                if waits_for(state(&r, 0)?, r.try_get(1)?, me, rel) {
                    held_by_others += 1;
                }
            }
            tx.commit()?;
            Ok(Outstanding {
                pending: pending as u64,
                held_by_others,
            })
        })
    }
}

/// Whether each worker of `run_id` stopped, and the age of its last
/// heartbeat on the server's clock.
fn worker_ages(
    tx: &mut postgres::Transaction<'_>,
    run_id: i64,
) -> Result<HashMap<i64, (bool, Duration)>> {
    let mut ages = HashMap::new();
    for r in tx.query(
        &format!("SELECT id, stopped_at IS NOT NULL, {AGE_MS} FROM workers WHERE run_id = $1"),
        &[&run_id],
    )? {
        let (id, stopped, age): (i64, bool, i64) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        ages.insert(id, (stopped, Duration::from_millis(age.max(0) as u64)));
    }
    Ok(ages)
}

#[cfg(test)]
mod tests {
    use crate::machine::State;
    use crate::store::test_support::pg_target;
    use crate::store::{LeaseTerms, Store};
    use std::time::Duration;

    const LEASE: Duration = Duration::from_secs(15);
    const DEADLINE: Duration = Duration::from_secs(30);
    const TERMS: LeaseTerms = LeaseTerms {
        lease: LEASE,
        deadline: DEADLINE,
    };

    /// A run with three payouts inserted by hand, for the lease operations
    /// alone (the import is tested with the rest of the store).
    fn run_with_payouts(store: &mut Store) -> (i64, Vec<i64>) {
        let Store::Postgres(pg) = store else {
            unreachable!()
        };
        pg.call(|c| {
            let run: i64 = c
                .query_one(
                    "INSERT INTO runs (identity, file_sha256, file_path, provider, sender_json,
                                   rows_total, rows_rejected, created_at)
                 VALUES ('r', 'sha', 'p.csv', 'sandbox', '{}', 3, 0, 'now') RETURNING id",
                    &[],
                )
                .unwrap()
                .get(0);
            let ids = (0..3)
                .map(|i: i64| {
                    c.query_one(
                        "INSERT INTO payouts (run_id, row, transaction_id, account_id, amount,
                        wire_amount, currency, method, description, b_first, b_last, b_phone,
                        b_email, state)
                     VALUES ($1, $2, $3, 'acc', '10', '10', 'XOF', 'momo', 'd', 'A', 'B', '',
                             '', 'pending') RETURNING id",
                        &[&run, &(i + 2), &format!("tx-{i}")],
                    )
                    .unwrap()
                    .get(0)
                })
                .collect();
            Ok((run, ids))
        })
        .unwrap()
    }

    fn set(store: &mut Store, id: i64, state: State, owner: Option<i64>) {
        let Store::Postgres(pg) = store else {
            unreachable!()
        };
        pg.call(|c| {
            c.execute(
                "UPDATE payouts SET state = $2, lease_owner = $3 WHERE id = $1",
                &[&id, &state.as_str(), &owner],
            )?;
            Ok(())
        })
        .unwrap();
    }

    fn age(store: &mut Store, worker: i64, by: Duration) {
        let Store::Postgres(pg) = store else {
            unreachable!()
        };
        pg.call(|c| {
            c.execute(
                "UPDATE workers SET heartbeat_at = now() - $2::BIGINT * interval '1 millisecond'
                 WHERE id = $1",
                &[&worker, &(by.as_millis() as i64)],
            )?;
            Ok(())
        })
        .unwrap();
    }

    /// The operators' lock: refused, naming the worker, while it may still
    /// send (live, then lapsed with a request possibly in flight); taken
    /// once its requests are over, and then no worker joins until the
    /// operator's connection ends.
    #[test]
    fn an_operator_is_refused_while_a_worker_may_send_and_then_keeps_workers_out() {
        let Some(db) = pg_target() else {
            return;
        };
        let mut worker = Store::connect(&db).unwrap();
        let (run, _) = run_with_payouts(&mut worker);
        let w = worker.register_worker(run, "box-b", 812).unwrap().unwrap();
        let mut operator = Store::connect(&db).unwrap();
        let e = operator
            .exclude_workers(Some(vec![run]), TERMS)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("worker {w} of run {run} on box-b pid 812")) && e.contains("live"),
            "{e}"
        );
        age(&mut worker, w, LEASE + Duration::from_secs(1));
        let e = operator
            .exclude_workers(None, TERMS)
            .unwrap_err()
            .to_string();
        assert!(e.contains("lease lapsed") && e.contains("in flight"), "{e}");
        age(&mut worker, w, LEASE + DEADLINE);
        operator.exclude_workers(None, TERMS).unwrap();
        // Meanwhile no worker joins, and a second operator waits its turn.
        let e = worker
            .register_worker(run, "box-c", 77)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did not join the run and sent nothing"), "{e}");
        let mut second = Store::connect(&db).unwrap();
        let e = second.exclude_workers(None, TERMS).unwrap_err().to_string();
        assert!(
            e.contains("another payrun reconcile or payrun cancel"),
            "{e}"
        );
    }

    #[test]
    fn payouts_of_a_dead_worker_are_adopted_once_and_a_dead_worker_stays_dead() {
        let Some(db) = pg_target() else {
            return;
        };
        let mut a = Store::connect(&db).unwrap();
        let mut b = Store::connect(&db).unwrap();
        let (run, ids) = run_with_payouts(&mut a);
        let wa = a.register_worker(run, "host-a", 11).unwrap().unwrap();
        let wb = b.register_worker(run, "host-b", 22).unwrap().unwrap();
        set(&mut a, ids[0], State::Executing, Some(wa));
        set(&mut a, ids[1], State::Initiating, Some(wa));
        set(&mut a, ids[2], State::Initiated, Some(wa));
        // A live worker's payouts are not adoptable; those in flight count
        // as held (an initiated one may rest there).
        assert!(b.adopt(run, wb, TERMS).unwrap().is_empty());
        let out = b.outstanding(run, wb, TERMS).unwrap();
        assert_eq!((out.pending, out.held_by_others), (0, 2));
        // A's heartbeat goes stale: it is gone, and cannot beat again.
        age(&mut a, wa, LEASE + Duration::from_secs(1));
        assert!(!a.heartbeat(wa, LEASE).unwrap());
        assert!(b.heartbeat(wb, LEASE).unwrap());
        // Its initiated payout is released with its lease; what it had in
        // flight only a request deadline later, when any request it may
        // have sent is over.
        let adopted = b.adopt(run, wb, TERMS).unwrap();
        assert_eq!(
            adopted.iter().map(|w| (w.id, w.state)).collect::<Vec<_>>(),
            [(ids[2], State::Initiated)]
        );
        assert_eq!(b.outstanding(run, wb, TERMS).unwrap().held_by_others, 2);
        age(&mut a, wa, LEASE + DEADLINE);
        let adopted = b.adopt(run, wb, TERMS).unwrap();
        // Money possibly in flight first.
        assert_eq!(
            adopted.iter().map(|w| (w.id, w.state)).collect::<Vec<_>>(),
            [(ids[0], State::Executing), (ids[1], State::Initiating)]
        );
        // Adopted once: nothing left for a second adopter, nor for B again.
        assert!(b.adopt(run, wb, TERMS).unwrap().is_empty());
        assert_eq!(b.outstanding(run, wb, TERMS).unwrap().held_by_others, 0);
        assert_eq!(a.outstanding(run, wa, TERMS).unwrap().held_by_others, 2);
        let ws = b.workers(run).unwrap();
        assert_eq!(ws.len(), 2);
        assert_eq!(
            (ws[0].host.as_str(), ws[0].pid, ws[0].held),
            ("host-a", 11, 0)
        );
        assert!(!ws[0].live(LEASE) && ws[1].live(LEASE));
        assert_eq!(ws[1].held, 3);
        // A stopped worker's payouts go at once, in flight or not; a dead
        // adopter adopts nothing.
        let wc = a.register_worker(run, "host-c", 33).unwrap().unwrap();
        b.stop_worker(wb).unwrap();
        assert!(b.adopt(run, wb, TERMS).unwrap().is_empty());
        assert_eq!(a.adopt(run, wc, TERMS).unwrap().len(), 3);
    }
}
