//! The shared provider rate's statements (PostgreSQL), on the server's
//! clock: reserving a span of the fixed rate's GCRA schedule in
//! `rate_limits`, atomically (the arithmetic is `limiter::shared::reserve`'s);
//! and the adaptive pace of `rate = "auto"` in `rate_paces`: slots
//! reserved at its pace in one atomic statement (`Pace::reserve`'s
//! arithmetic), answers applied to it by the pure `Pace::seen` under the
//! row's lock, so two workers never decide on the same state. See
//! `ARCHITECTURE.md`, "Several workers on one run".

use super::Pg;
use crate::limiter::pooled::{Pace, Reservation, Seen, Unused};
use anyhow::{Context, Result};
use postgres::Row;

/// The columns of a [`Pace`], in [`pace_of`]'s order.
const PACE: &str = "rate, loss_rate, hold_limit, hold_until_us, last_decrease_us, paused_until_us,
    epoch_start_us, epoch_sent, events, rate_limited, drain_from_us, onset, before_rate,
    before_loss_rate, repeated, drain_accepted, drain_refused, updated_us";

/// A [`Pace`] from `row`'s columns `at..` (in [`PACE`]'s order).
fn pace_of(row: &Row, at: usize) -> Result<Pace> {
    let hold_limit: Option<f64> = row.try_get(at + 2)?;
    let hold_until: Option<i64> = row.try_get(at + 3)?;
    Ok(Pace {
        rate: row.try_get(at)?,
        loss_rate: row.try_get(at + 1)?,
        hold: hold_limit.zip(hold_until),
        last_decrease_us: row.try_get(at + 4)?,
        paused_until_us: row.try_get(at + 5)?,
        epoch_start_us: row.try_get(at + 6)?,
        epoch_sent: row.try_get(at + 7)?,
        events: row.try_get(at + 8)?,
        rate_limited: row.try_get(at + 9)?,
        drain_from_us: row.try_get(at + 10)?,
        onset: row.try_get(at + 11)?,
        before_rate: row.try_get(at + 12)?,
        before_loss_rate: row.try_get(at + 13)?,
        repeat: row.try_get(at + 14)?,
        drain_accepted: row.try_get(at + 15)?,
        drain_refused: row.try_get(at + 16)?,
        updated_us: row.try_get(at + 17)?,
    })
}

/// Writes `p` as the pace of `key` (the row is locked by the caller's
/// transaction).
fn store_pace(tx: &mut postgres::Transaction<'_>, key: &str, p: &Pace) -> Result<()> {
    let (hold_limit, hold_until) = (p.hold.map(|h| h.0), p.hold.map(|h| h.1));
    tx.execute(
        "UPDATE rate_paces SET rate = $2, loss_rate = $3, hold_limit = $4, hold_until_us = $5,
             last_decrease_us = $6, paused_until_us = $7, epoch_start_us = $8, epoch_sent = $9,
             events = $10, rate_limited = $11, drain_from_us = $12, onset = $13,
             before_rate = $14, before_loss_rate = $15, repeated = $16, drain_accepted = $17,
             drain_refused = $18, updated_us = $19
         WHERE key = $1",
        &[
            &key,
            &p.rate,
            &p.loss_rate,
            &hold_limit,
            &hold_until,
            &p.last_decrease_us,
            &p.paused_until_us,
            &p.epoch_start_us,
            &p.epoch_sent,
            &p.events,
            &p.rate_limited,
            &p.drain_from_us,
            &p.onset,
            &p.before_rate,
            &p.before_loss_rate,
            &p.repeat,
            &p.drain_accepted,
            &p.drain_refused,
            &p.updated_us,
        ],
    )?;
    Ok(())
}

/// The server's clock in microseconds (the transaction's start: one
/// instant for the whole statement).
const NOW_US: &str = "(EXTRACT(EPOCH FROM now()) * 1000000)::BIGINT";

impl Pg {
    /// Reserves `span_us` of the schedule `key`: returns the start of the
    /// span (never before now: an idle schedule grants no burst) and the
    /// server's now, both in µs.
    pub fn reserve_rate(&mut self, key: &str, span_us: i64) -> Result<(i64, i64)> {
        let key = key.to_string();
        let sql = format!(
            "INSERT INTO rate_limits AS r (key, tat_us) VALUES ($1, {NOW_US} + $2)
             ON CONFLICT (key) DO UPDATE SET tat_us = GREATEST(r.tat_us, {NOW_US}) + $2
             RETURNING tat_us - $2, {NOW_US}"
        );
        self.call(move |c| {
            let r = c.query_one(&sql, &[&key, &span_us])?;
            Ok((r.try_get(0)?, r.try_get(1)?))
        })
    }
}

impl Pg {
    /// The adaptive pace `key` as a worker joining finds it: made if new,
    /// started afresh if a past run's (`Pace::resume`), never above
    /// `ceiling`.
    pub fn join_pace(&mut self, key: &str, ceiling: f64) -> Result<Pace> {
        let key = key.to_string();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let now: i64 = tx.query_one(&format!("SELECT {CLOCK_US}"), &[])?.get(0);
            let fresh = Pace::new(ceiling, now);
            tx.execute(
                "INSERT INTO rate_paces (key, tat_us, rate, paused_until_us, epoch_start_us,
                     epoch_sent, events, rate_limited, onset, before_rate, repeated,
                     drain_accepted, drain_refused, updated_us)
                 VALUES ($1, $2, $3, $2, $2, 0, 0, 0, $3, $3, false, 0, 0, $2)
                 ON CONFLICT (key) DO NOTHING",
                &[&key, &now, &fresh.rate],
            )?;
            let row = tx.query_one(
                &format!("SELECT {PACE} FROM rate_paces WHERE key = $1 FOR UPDATE"),
                &[&key],
            )?;
            let stored = pace_of(&row, 0)?;
            let pace = stored.resume(ceiling, now);
            if pace != stored {
                store_pace(&mut tx, &key, &pace)?;
            }
            tx.commit()?;
            Ok(pace)
        })
    }

    /// Reserves `n` consecutive slots of the adaptive pace `key` at its
    /// rate (never above `ceiling`), after its pause, and takes back the
    /// `unused` slots of its increase epoch, in one statement.
    pub fn reserve_pace(
        &mut self,
        key: &str,
        n: u32,
        ceiling: f64,
        unused: Unused,
    ) -> Result<Reservation> {
        let (key, n) = (key.to_string(), i64::from(n));
        let interval = "CEIL(1000000.0 / GREATEST(LEAST(rate, $3), 1.0))::BIGINT";
        let sql = format!(
            "UPDATE rate_paces SET
                 tat_us = GREATEST(tat_us, paused_until_us, {NOW_US}) + $2 * {interval},
                 epoch_sent = GREATEST(epoch_sent + $2
                     - CASE WHEN epoch_start_us = $4::BIGINT THEN $5::BIGINT ELSE 0 END, 0)
             WHERE key = $1
             RETURNING tat_us - $2 * {interval}, {NOW_US}, {interval}, {PACE}"
        );
        self.call(move |c| {
            let row = c
                .query_opt(
                    &sql,
                    &[&key, &n, &ceiling, &unused.epoch_start_us, &unused.slots],
                )?
                .context("the shared pace's row is gone")?;
            Ok(Reservation {
                first_us: row.try_get(0)?,
                now_us: row.try_get(1)?,
                interval_us: row.try_get(2)?,
                pace: pace_of(&row, 3)?,
            })
        })
    }

    /// Applies the answers `seen` to the adaptive pace `key` (`Pace::seen`)
    /// under the row's lock; returns the pace after them.
    pub fn report_pace(
        &mut self,
        key: &str,
        seen: Vec<Seen>,
        ceiling: f64,
        epoch_us: i64,
    ) -> Result<Pace> {
        let key = key.to_string();
        self.call(move |c| {
            let mut tx = c.transaction()?;
            let row = tx
                .query_opt(
                    &format!("SELECT {PACE} FROM rate_paces WHERE key = $1 FOR UPDATE"),
                    &[&key],
                )?
                .context("the shared pace's row is gone")?;
            let mut pace = pace_of(&row, 0)?;
            // The clock once the lock is held.
            let now: i64 = tx.query_one(&format!("SELECT {CLOCK_US}"), &[])?.get(0);
            for s in seen {
                pace.seen(s, now, ceiling, epoch_us);
            }
            store_pace(&mut tx, &key, &pace)?;
            tx.commit()?;
            Ok(pace)
        })
    }
}

/// The server's clock in microseconds, now (not the transaction's start).
const CLOCK_US: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT";

#[cfg(test)]
mod tests {
    use crate::limiter::shared::reserve;
    use crate::store::Store;
    use crate::store::test_support::pg_target;

    #[test]
    fn the_statement_reserves_as_the_gcra_arithmetic_says() {
        let Some(db) = pg_target() else {
            return;
        };
        let mut a = Store::connect(&db).unwrap();
        let mut b = Store::connect(&db).unwrap();
        let key = "http://p/ pay@example.com";
        let (first, now) = a.reserve_rate(key, 40_000).unwrap();
        assert_eq!(first, now, "a new schedule starts now");
        let mut tat = first + 40_000;
        for (store, span) in [(&mut b, 40_000), (&mut a, 10_000)] {
            let (first, now) = store.reserve_rate(key, span).unwrap();
            assert_eq!((first, first + span), reserve(Some(tat), now, span, 1));
            tat = first + span;
        }
        // Another key is another schedule.
        let (first, now) = b.reserve_rate("http://q/ merchant", 1).unwrap();
        assert_eq!(first, now);
    }

    /// The adaptive pace: joined, reserved from at its rate after its
    /// pause (the SQL does `Pace::reserve`'s arithmetic), and reported to
    /// from two connections at once without an update lost.
    #[test]
    fn the_shared_pace_is_one_state_updated_under_its_lock() {
        use crate::limiter::pooled::{Pace, Seen, Unused, interval_us};
        let Some(db) = pg_target() else {
            return;
        };
        let key = format!("pgrate-pace-{}", std::process::id());
        let mut a = Store::connect(&db).unwrap();
        let joined = a.join_pace(&key, 5_000.0).unwrap();
        assert_eq!(joined.rate, 10.0);
        let r = a.reserve_pace(&key, 4, 5_000.0, Unused::default()).unwrap();
        assert_eq!(r.first_us, r.now_us, "a new pace starts now");
        assert_eq!(r.interval_us, interval_us(10.0));
        assert_eq!(r.pace.epoch_sent, 4);
        // Slots let pass are given back as `Pace::reserve` does, only for
        // the epoch they were reserved in.
        let mut pure = r.pace;
        let passed = Unused {
            epoch_start_us: r.pace.epoch_start_us,
            slots: 3,
        };
        let r = a.reserve_pace(&key, 1, 5_000.0, passed).unwrap();
        pure.reserve(0, 1, 5_000.0, r.now_us, passed);
        assert_eq!((r.pace.epoch_sent, pure.epoch_sent), (2, 2));
        let older = Unused {
            epoch_start_us: r.pace.epoch_start_us - 1,
            slots: 2,
        };
        let r = a.reserve_pace(&key, 1, 5_000.0, older).unwrap();
        assert_eq!(r.pace.epoch_sent, 3);
        // A 429: the pause holds every reservation after it.
        let refused = Seen {
            slot_us: r.first_us,
            rate: 10.0,
            retry_after_us: Some(2_000_000),
            event: None,
        };
        let p = a.report_pace(&key, vec![refused], 5_000.0, 0).unwrap();
        assert_eq!((p.events, p.rate_limited), (1, 1));
        let mut b = Store::connect(&db).unwrap();
        let r = b.reserve_pace(&key, 1, 5_000.0, Unused::default()).unwrap();
        assert_eq!(r.first_us, p.paused_until_us);
        assert_eq!(r.interval_us, interval_us(p.rate));
        // Two workers reporting 429s of the same event at once: each one
        // counted, none lost.
        let later = Seen {
            slot_us: r.first_us - 1,
            ..refused
        };
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (db, key) = (db.clone(), key.clone());
                std::thread::spawn(move || {
                    let mut s = Store::connect(&db).unwrap();
                    for _ in 0..25 {
                        s.report_pace(&key, vec![later], 5_000.0, 0).unwrap();
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let p = b.report_pace(&key, Vec::new(), 5_000.0, 0).unwrap();
        assert_eq!((p.events, p.rate_limited), (1, 51));
        // A past run's pace starts afresh when a worker joins.
        let mut stale = p;
        stale.updated_us -= crate::limiter::pooled::STALE_US + 1_000_000;
        let Store::Postgres(pg) = &mut b else {
            panic!("a PostgreSQL store");
        };
        pg.call(move |c| {
            let mut tx = c.transaction()?;
            super::store_pace(
                &mut tx,
                &format!("pgrate-pace-{}", std::process::id()),
                &stale,
            )?;
            tx.commit()?;
            Ok(())
        })
        .unwrap();
        let fresh = pg.join_pace(&key, 300.0).unwrap();
        assert_eq!((fresh.rate, fresh.events), (Pace::new(300.0, 0).rate, 0));
    }
}
