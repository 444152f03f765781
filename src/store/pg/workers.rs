//! The workers of a shared run (PostgreSQL): registering, heartbeats on
//! the server's clock, stopping, listing, adopting the payouts of workers
//! that are gone, and counting what other workers still hold. The rule for
//! "gone" is [`crate::store::shared::expired`]; see `ARCHITECTURE.md`,
//! "Several workers on one run".

use super::Pg;
use super::sql::{WORK_COLS, run_sender, state, state_list};
use crate::machine::RESUMED;
use crate::store::rows;
use crate::store::shared::{Outstanding, WorkerInfo, adoptable, expired, waits_for};
use crate::store::types::Work;
use anyhow::{Context, Result};
use std::collections::HashSet;
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

    pub fn register_worker(&mut self, run_id: i64, host: &str, pid: u32) -> Result<i64> {
        let host = host.to_string();
        self.call(move |c| {
            let row = c.query_one(
                "INSERT INTO workers (run_id, host, pid) VALUES ($1, $2, $3) RETURNING id",
                &[&run_id, &host, &i64::from(pid)],
            )?;
            Ok(row.try_get(0)?)
        })
        .context("cannot register this worker in the database")
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

    pub fn adopt(&mut self, run_id: i64, me: i64, lease: Duration) -> Result<Vec<Work>> {
        let resumed = state_list(RESUMED);
        self.call(move |c| {
            let mut tx = c.transaction()?;
            // Who is gone, by the one rule. Gone is for good, so the list
            // cannot go stale before the update below.
            let mut gone = gone_workers(&mut tx, run_id, lease)?;
            let me_live = !gone.remove(&me);
            if !me_live {
                return Ok(Vec::new());
            }
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
                if adoptable(state(&r, 1)?, owner, me, |w| gone.contains(&w)) {
                    ids.push(r.try_get::<_, i64>(0)?);
                }
            }
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let gone: Vec<i64> = gone.into_iter().collect();
            // Re-checked under the row locks: another adopter got there
            // first, or the payout moved on, and it is left alone.
            let rows = tx.query(
                &format!(
                    "UPDATE payouts SET lease_owner = $2
                     WHERE id IN (SELECT id FROM payouts
                                  WHERE id = ANY($1) AND state IN ({resumed})
                                    AND (lease_owner IS NULL OR lease_owner = ANY($3))
                                  FOR UPDATE SKIP LOCKED)
                     RETURNING {WORK_COLS}"
                ),
                &[&ids, &me, &gone],
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

    pub fn outstanding(&self, run_id: i64, me: i64, lease: Duration) -> Result<Outstanding> {
        let resumed = state_list(RESUMED);
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let gone = gone_workers(&mut tx, run_id, lease)?;
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
                if waits_for(state(&r, 0)?, r.try_get(1)?, me, |w| gone.contains(&w)) {
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

/// The workers of `run_id` that are gone, by the one rule.
fn gone_workers(
    tx: &mut postgres::Transaction<'_>,
    run_id: i64,
    lease: Duration,
) -> Result<HashSet<i64>> {
    let mut gone = HashSet::new();
    for r in tx.query(
        &format!("SELECT id, stopped_at IS NOT NULL, {AGE_MS} FROM workers WHERE run_id = $1"),
        &[&run_id],
    )? {
        let (id, stopped, age): (i64, bool, i64) = (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
        if expired(stopped, Duration::from_millis(age.max(0) as u64), lease) {
            gone.insert(id);
        }
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use crate::machine::State;
    use crate::store::Store;
    use crate::store::test_support::pg_target;
    use std::time::Duration;

    const LEASE: Duration = Duration::from_secs(15);

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
        // A live worker's payouts are not adoptable, and count as held.
        assert!(b.adopt(run, wb, LEASE).unwrap().is_empty());
        let out = b.outstanding(run, wb, LEASE).unwrap();
        assert_eq!((out.pending, out.held_by_others), (1, 2));
        // A's heartbeat goes stale: it is gone, and cannot beat again.
        age(&mut a, wa, LEASE + Duration::from_secs(1));
        assert!(!a.heartbeat(wa, LEASE).unwrap());
        assert!(b.heartbeat(wb, LEASE).unwrap());
        // Still to be done by someone: held by a gone worker until adopted.
        assert_eq!(b.outstanding(run, wb, LEASE).unwrap().held_by_others, 2);
        let adopted = b.adopt(run, wb, LEASE).unwrap();
        // Money possibly in flight first.
        assert_eq!(
            adopted.iter().map(|w| (w.id, w.state)).collect::<Vec<_>>(),
            [(ids[0], State::Executing), (ids[1], State::Initiating)]
        );
        // Adopted once: nothing left for a second adopter, nor for B again.
        assert!(b.adopt(run, wb, LEASE).unwrap().is_empty());
        assert_eq!(b.outstanding(run, wb, LEASE).unwrap().held_by_others, 0);
        assert_eq!(a.outstanding(run, wa, LEASE).unwrap().held_by_others, 2);
        let ws = b.workers(run).unwrap();
        assert_eq!(ws.len(), 2);
        assert_eq!(
            (ws[0].host.as_str(), ws[0].pid, ws[0].held),
            ("host-a", 11, 0)
        );
        assert!(!ws[0].live(LEASE) && ws[1].live(LEASE));
        assert_eq!(ws[1].held, 2);
        // A stopped worker's payouts go at once; a dead adopter adopts nothing.
        let wc = a.register_worker(run, "host-c", 33).unwrap().unwrap();
        b.stop_worker(wb).unwrap();
        assert!(b.adopt(run, wb, LEASE).unwrap().is_empty());
        assert_eq!(a.adopt(run, wc, LEASE).unwrap().len(), 2);
    }
}
