//! The provider's rate shared by every worker of a merchant account
//! (several `payrun run` processes on one PostgreSQL run): one GCRA
//! schedule kept in the database (`rate_limits`, the theoretical arrival
//! time of the next call on the server's clock). A worker reserves a small
//! batch of consecutive slots in one statement, then lets its calls leave
//! at those instants, translated to its own clock. Slots of all workers
//! are `interval` apart on one timeline, so the combined rate never
//! exceeds `rate`; a slot a worker let pass unused is dropped, never
//! bunched with the next. See `docs/rate.md`, "Several workers".
//!
//! The arithmetic is pure ([`reserve`], [`interval_us`], [`batch_size`]);
//! the database call is a function the engine hands in, so this module
//! knows no SQL. It gates calls on top of the worker's own [`super::Limiter`]
//! (pace, concurrency, `Retry-After`), which still adapts per worker.

use anyhow::Result;
use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::Duration;
use tokio::sync::{Mutex, oneshot, watch};
use tokio::time::Instant;

/// The longest stretch of slots one reservation takes: short, so a worker
/// that stops or runs out of work wastes little of the shared rate, and
/// the slots of several workers interleave finely.
const BATCH_SPAN: Duration = Duration::from_millis(50);
/// Most slots per reservation.
const MAX_BATCH: u32 = 8;
/// Wait before asking the database again after a failed reservation.
const RETRY_RESERVE: Duration = Duration::from_millis(200);

/// The emission interval of `rate` calls per second, in microseconds,
/// rounded up so the schedule never runs faster than `rate`.
pub fn interval_us(rate: u32) -> i64 {
    let rate = i64::from(rate.max(1));
    (1_000_000 + rate - 1) / rate
}

/// Slots per reservation: about [`BATCH_SPAN`] of them, at least one.
pub fn batch_size(rate: u32) -> u32 {
    let span = BATCH_SPAN.as_micros() as i64;
    ((span / interval_us(rate)) as u32).clamp(1, MAX_BATCH)
}

/// GCRA: reserving `n` slots `interval` apart when the next free instant
/// is `tat` (none yet: `now`) gives the first slot — never in the past,
/// so an idle limiter grants no burst — and the new `tat`.
pub fn reserve(tat: Option<i64>, now: i64, interval: i64, n: u32) -> (i64, i64) {
    let first = tat.map_or(now, |t| t.max(now));
    (first, first + interval * i64::from(n))
}

/// What the database answers to a reservation of a span of
/// `n × interval` µs: the first slot and its own clock's now, both in µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserved {
    pub first_us: i64,
    pub now_us: i64,
}

/// The database call: reserve a span (µs) of the shared schedule.
pub type ReserveFn = Box<dyn FnMut(i64) -> Result<Reserved> + Send>;

type Ask = (i64, oneshot::Sender<Result<Reserved>>);

/// A worker's side of the shared schedule.
pub struct SharedRate {
    rate: u32,
    interval: Duration,
    batch: u32,
    /// Slots reserved and not used yet, on this process's clock.
    slots: Mutex<VecDeque<Instant>>,
    asks: std::sync::Mutex<Option<mpsc::Sender<Ask>>>,
    stop: watch::Sender<bool>,
}

impl SharedRate {
    /// A schedule of `rate` calls per second shared through `reserve`,
    /// which runs on a thread of its own (a blocking database call).
    pub fn start(rate: u32, mut reserve: ReserveFn) -> SharedRate {
        let (tx, rx) = mpsc::channel::<Ask>();
        std::thread::Builder::new()
            .name("payrun-rate".into())
            .spawn(move || {
                for (span, reply) in rx {
                    let _ = reply.send(reserve(span));
                }
            })
            .expect("cannot start the shared rate thread");
        SharedRate {
            rate,
            interval: Duration::from_micros(interval_us(rate) as u64),
            batch: batch_size(rate),
            slots: Mutex::new(VecDeque::new()),
            asks: std::sync::Mutex::new(Some(tx)),
            stop: watch::Sender::new(false),
        }
    }

    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Waits for this worker's next slot of the shared schedule. `None`
    /// once [`SharedRate::stop`] was called, at once.
    pub async fn acquire(&self) -> Option<()> {
        let mut stop = self.stop.subscribe();
        loop {
            if *stop.borrow_and_update() {
                return None;
            }
            let mut slots = self.slots.lock().await;
            drop_missed(&mut slots, Instant::now(), self.interval);
            if slots.is_empty() {
                let got = tokio::select! {
                    _ = stop.wait_for(|s| *s) => return None,
                    got = self.reserve_batch() => got,
                };
                match got {
                    Ok(batch) => slots.extend(batch),
                    Err(e) => {
                        drop(slots);
                        // The database is away (restarting?): the run's
                        // writes will say so; until then, ask again.
                        tracing::warn!("cannot reserve calls of the shared rate: {e:#}");
                        tokio::select! {
                            _ = stop.wait_for(|s| *s) => return None,
                            _ = tokio::time::sleep(RETRY_RESERVE) => {}
                        }
                        continue;
                    }
                }
            }
            let Some(at) = slots.pop_front() else {
                continue;
            };
            drop(slots);
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return None,
                _ = tokio::time::sleep_until(at) => {}
            }
            if !missed(at, Instant::now(), self.interval) {
                return Some(());
            }
            // Woken too late (a stalled process): this slot is gone.
        }
    }

    /// Ends every wait now and grants no more slots.
    pub fn stop(&self) {
        self.stop.send_replace(true);
        // Ends the reservation thread once its last answer is sent.
        self.asks.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// One reservation: the batch's slots on this process's clock.
    async fn reserve_batch(&self) -> Result<Vec<Instant>> {
        let interval = interval_us(self.rate);
        let (reply, rx) = oneshot::channel();
        let sent = self
            .asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|tx| tx.send((interval * i64::from(self.batch), reply)).is_ok());
        anyhow::ensure!(sent, "the shared rate is stopped");
        let got = rx.await??;
        Ok(local_slots(got, Instant::now(), interval, self.batch))
    }
}

/// The slots of a reservation on the local clock: the server's `now` is
/// taken as the instant the answer arrived, which only delays the slots
/// (by the answer's way back), never advances them.
fn local_slots(r: Reserved, arrived: Instant, interval: i64, n: u32) -> Vec<Instant> {
    (0..i64::from(n))
        .map(|k| {
            let ahead = (r.first_us + k * interval - r.now_us).max(0);
            arrived + Duration::from_micros(ahead as u64)
        })
        .collect()
}

/// Drops the slots this worker let pass (more than half an interval ago):
/// using them late would send two calls where the schedule has one.
fn drop_missed(slots: &mut VecDeque<Instant>, now: Instant, interval: Duration) {
    while slots.front().is_some_and(|&at| missed(at, now, interval)) {
        slots.pop_front();
    }
}

/// Least lateness forgiven: the timer's own resolution, so a fast rate
/// (an interval under a millisecond) is not starved by it.
const MIN_GRACE: Duration = Duration::from_millis(5);

/// Whether the slot at `at` is gone by `now`: more than half an interval
/// (at least [`MIN_GRACE`]) ago. A call woken that late by a stalled
/// machine takes a fresh slot instead of leaving with the calls of the
/// next instants, which would bunch in the provider's one-second window.
fn missed(at: Instant, now: Instant, interval: Duration) -> bool {
    at + (interval / 2).max(MIN_GRACE) < now
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn intervals_never_run_faster_than_the_rate() {
        assert_eq!(interval_us(1), 1_000_000);
        assert_eq!(interval_us(3), 333_334);
        assert_eq!(interval_us(100), 10_000);
        assert_eq!(batch_size(1), 1);
        assert_eq!(batch_size(40), 2);
        assert_eq!(batch_size(100), 5);
        assert_eq!(batch_size(5_000), MAX_BATCH);
    }

    #[test]
    fn gcra_reserves_after_the_last_slot_and_grants_no_burst_after_idle() {
        // First reservation: from now.
        assert_eq!(reserve(None, 1_000, 10, 4), (1_000, 1_040));
        // Busy: after the previous batch, however early one asks.
        assert_eq!(reserve(Some(1_040), 1_010, 10, 2), (1_040, 1_060));
        // Idle: from now, not from the stale tat (no saved-up burst).
        assert_eq!(reserve(Some(1_060), 5_000, 10, 1), (5_000, 5_010));
    }

    /// Workers reserving batches at random moments from one schedule: in
    /// any window, the slots handed out number at most rate × window + 1.
    #[test]
    fn workers_sharing_the_schedule_stay_within_the_rate() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(16);
        let rate = 50u32;
        let interval = interval_us(rate);
        let n = batch_size(rate);
        let mut tat = None;
        let mut slots = Vec::new();
        let mut now = 0i64;
        for _ in 0..3_000 {
            now += rng.random_range(0..3 * interval);
            let (first, next) = reserve(tat, now, interval, n);
            tat = Some(next);
            slots.extend((0..i64::from(n)).map(|k| first + k * interval));
        }
        slots.sort_unstable();
        let window = 1_000_000;
        let mut lo = 0;
        for hi in 0..slots.len() {
            while slots[hi] - slots[lo] >= window {
                lo += 1;
            }
            assert!(
                (hi - lo + 1) as u32 <= rate + 1,
                "{} in a second",
                hi - lo + 1
            );
        }
        let span = (slots[slots.len() - 1] - slots[0]) as f64 / 1e6;
        let achieved = (slots.len() - 1) as f64 / span;
        assert!(achieved <= f64::from(rate) * 1.0001, "{achieved}");
    }

    #[test]
    fn slots_translate_to_the_local_clock_and_missed_ones_are_dropped() {
        let arrived = Instant::now();
        let r = Reserved {
            first_us: 10_500,
            now_us: 10_000,
        };
        let got = local_slots(r, arrived, 10_000, 3);
        assert_eq!(
            got,
            [500, 10_500, 20_500].map(|us| arrived + Duration::from_micros(us))
        );
        let mut slots: VecDeque<Instant> = got.into();
        drop_missed(
            &mut slots,
            arrived + Duration::from_micros(16_000),
            Duration::from_micros(10_000),
        );
        assert_eq!(slots.len(), 1, "the slots at 0.5 and 10.5 ms were let pass");
    }

    #[test]
    fn a_slot_is_missed_past_half_an_interval_and_never_within_the_timer_grace() {
        let at = Instant::now();
        let ms = Duration::from_millis;
        // 100 calls/s: half an interval is 5 ms.
        assert!(!missed(at, at + ms(5), ms(10)));
        assert!(missed(at, at + ms(6), ms(10)));
        // 2 calls/s: half an interval is 250 ms.
        assert!(!missed(at, at + ms(240), ms(500)));
        assert!(missed(at, at + ms(260), ms(500)));
        // 2,000 calls/s: the 5 ms grace of the timer, not 0.25 ms.
        assert!(!missed(at, at + ms(4), Duration::from_micros(500)));
        assert!(missed(at, at + ms(6), Duration::from_micros(500)));
    }

    #[tokio::test]
    async fn acquire_follows_the_reserved_slots_and_stops_at_once() {
        // A fake database at 50 calls/s: one schedule on the real clock.
        let origin = std::time::Instant::now();
        let mut tat = None;
        let db: ReserveFn = Box::new(move |span| {
            let now = origin.elapsed().as_micros() as i64;
            let (first, next) = reserve(tat, now, span, 1);
            tat = Some(next);
            Ok(Reserved {
                first_us: first,
                now_us: now,
            })
        });
        let shared = std::sync::Arc::new(SharedRate::start(50, db));
        let t0 = Instant::now();
        for _ in 0..6 {
            shared.acquire().await.unwrap();
        }
        // Six slots 20 ms apart: the first at once.
        let took = t0.elapsed();
        assert!(took >= Duration::from_millis(95), "{took:?}");
        assert!(took < Duration::from_millis(400), "{took:?}");
        let waiter = {
            let s = shared.clone();
            tokio::spawn(async move { s.acquire().await })
        };
        shared.stop();
        assert_eq!(waiter.await.unwrap(), None);
        assert_eq!(shared.acquire().await, None);
    }
}
