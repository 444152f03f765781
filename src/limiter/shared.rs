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

use super::pooled::{Pace, PaceStore, Reporter, Seen, Unused};
use anyhow::Result;
use std::collections::VecDeque;
use std::sync::{Arc, mpsc};
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

/// A slot a worker's call leaves in: its instant on the server's clock
/// and the pace then (what the shared pace needs to know of its answer),
/// and the adaptive pace's increase epoch it was reserved in (0 on a fixed
/// rate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticket {
    pub slot_us: i64,
    pub rate: f64,
    pub epoch_us: i64,
}

/// A slot reserved and not used yet: when, on this process's clock, and
/// how late it may still be used ([`grace`]).
type Local = (Instant, Duration, Ticket);

enum Ask {
    Reserve(u32, oneshot::Sender<Result<Vec<Local>>>),
    Report(Seen),
}

/// The database behind the schedule.
enum Db {
    /// A fixed rate: reserve a span of µs.
    Fixed(ReserveFn, u32),
    /// The adaptive pace (`pooled`).
    Auto(Box<dyn PaceStore>, Arc<std::sync::Mutex<Auto>>),
}

/// A worker's view of the adaptive pace.
struct Auto {
    view: Pace,
    /// The server's clock minus this process's (`origin`), µs.
    offset_us: i64,
    origin: Instant,
    reporter: Reporter,
    /// The worker's average answer time, µs: the increase epoch.
    latency_us: i64,
    /// Slots reserved and let pass since the last reservation, given back
    /// at the next (`Pace::reserve`).
    unused: Unused,
}

impl Auto {
    /// The server's clock now, as this process reckons it.
    fn server_now(&self, at: Instant) -> i64 {
        at.saturating_duration_since(self.origin).as_micros() as i64 + self.offset_us
    }

    /// A newer pace from the database, its now taken as `arrived`.
    fn seen_pace(&mut self, pace: Pace, now_us: Option<i64>, arrived: Instant) {
        self.view = pace;
        if let Some(now) = now_us {
            self.offset_us =
                now - arrived.saturating_duration_since(self.origin).as_micros() as i64;
        }
    }
}

/// A worker's side of the shared schedule.
pub struct SharedRate {
    /// The fixed rate; `None` for the adaptive pace.
    fixed: Option<u32>,
    /// Slots reserved and not used yet, on this process's clock.
    slots: Arc<Mutex<VecDeque<Local>>>,
    auto: Option<Arc<std::sync::Mutex<Auto>>>,
    asks: std::sync::Mutex<Option<mpsc::Sender<Ask>>>,
    stop: watch::Sender<bool>,
}

impl SharedRate {
    /// A schedule of `rate` calls per second shared through `reserve`,
    /// which runs on a thread of its own (a blocking database call).
    pub fn start(rate: u32, reserve: ReserveFn) -> SharedRate {
        SharedRate::run(Some(rate), Db::Fixed(reserve, rate), None)
    }

    /// The adaptive pace shared through `db`, as `joined` (the pace the
    /// worker found when it joined).
    pub fn adaptive(db: Box<dyn PaceStore>, joined: Pace) -> SharedRate {
        let auto = Arc::new(std::sync::Mutex::new(Auto {
            view: joined,
            offset_us: 0,
            origin: Instant::now(),
            reporter: Reporter::default(),
            latency_us: 0,
            unused: Unused::default(),
        }));
        SharedRate::run(None, Db::Auto(db, auto.clone()), Some(auto))
    }

    fn run(
        fixed: Option<u32>,
        mut db: Db,
        auto: Option<Arc<std::sync::Mutex<Auto>>>,
    ) -> SharedRate {
        let (tx, rx) = mpsc::channel::<Ask>();
        let slots = Arc::new(Mutex::new(VecDeque::new()));
        let theirs = slots.clone();
        std::thread::Builder::new()
            .name("payrun-rate".into())
            .spawn(move || serve(&mut db, &rx, &theirs))
            .expect("cannot start the shared rate thread");
        SharedRate {
            fixed,
            slots,
            auto,
            asks: std::sync::Mutex::new(Some(tx)),
            stop: watch::Sender::new(false),
        }
    }

    /// The fixed rate, or the adaptive pace as last seen (calls/s).
    pub fn rate(&self) -> f64 {
        match (self.fixed, &self.auto) {
            (Some(r), _) => f64::from(r),
            (None, Some(a)) => lock(a).view.rate,
            (None, None) => 0.0,
        }
    }

    /// Whether the pace adapts (`rate = "auto"`).
    pub fn is_adaptive(&self) -> bool {
        self.auto.is_some()
    }

    /// Waits for this worker's next slot of the shared schedule. `None`
    /// once [`SharedRate::stop`] was called, at once.
    pub async fn acquire(&self) -> Option<Ticket> {
        let mut stop = self.stop.subscribe();
        loop {
            if *stop.borrow_and_update() {
                return None;
            }
            let mut slots = self.slots.lock().await;
            let passed = drop_missed(&mut slots, Instant::now());
            self.let_pass(passed);
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
            let Some((at, grace, ticket)) = slots.pop_front() else {
                continue;
            };
            drop(slots);
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return None,
                _ = tokio::time::sleep_until(at) => {}
            }
            if !missed(at, Instant::now(), grace) {
                return Some(ticket);
            }
            // Woken too late (a stalled process): this slot is gone.
            self.let_pass([ticket]);
        }
    }

    /// Slots this worker let pass: the adaptive pace counts calls sent,
    /// so they are given back at the next reservation.
    fn let_pass(&self, tickets: impl IntoIterator<Item = Ticket>) {
        let Some(auto) = &self.auto else {
            return;
        };
        let mut tickets = tickets.into_iter().peekable();
        if tickets.peek().is_none() {
            return;
        }
        let mut a = lock(auto);
        for t in tickets {
            a.unused.add(t.epoch_us);
        }
    }

    /// The provider's answer to the call that left in `ticket`: `None`
    /// accepted (or refused for business reasons), `Some(wait)` a 429 with
    /// its `Retry-After`. `latency` is the worker's average answer time
    /// (the increase epoch). Only the adaptive pace listens: it reports
    /// what the shared state needs (`pooled::Reporter`), and a 429 gives up
    /// the slots this worker holds, which would leave in the pause.
    pub fn answer(&self, ticket: Ticket, retry_after: Option<Duration>, latency: Duration) {
        let Some(auto) = &self.auto else {
            return;
        };
        let report = {
            let mut a = lock(auto);
            let now = a.server_now(Instant::now());
            let seen = Seen {
                slot_us: ticket.slot_us,
                rate: ticket.rate,
                retry_after_us: retry_after
                    .map(|w| w.min(super::aimd::DEFAULT_MAX_RETRY_AFTER).as_micros() as i64),
                event: None,
            };
            let view = a.view;
            let latency_us = latency.as_micros() as i64;
            a.latency_us = latency_us;
            a.reporter.answer(&view, seen, now, latency_us)
        };
        if retry_after.is_some()
            && let Ok(mut slots) = self.slots.try_lock()
        {
            slots.clear();
        }
        if let Some(s) = report {
            self.ask(Ask::Report(s));
        }
    }

    /// Ends every wait now and grants no more slots.
    pub fn stop(&self) {
        self.stop.send_replace(true);
        // Ends the reservation thread once its last answer is sent.
        self.asks.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    fn ask(&self, ask: Ask) -> bool {
        self.asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .is_some_and(|tx| tx.send(ask).is_ok())
    }

    /// One reservation: the batch's slots on this process's clock.
    async fn reserve_batch(&self) -> Result<Vec<Local>> {
        let (reply, rx) = oneshot::channel();
        let n = batch_size(self.rate().round().max(1.0) as u32);
        anyhow::ensure!(
            self.ask(Ask::Reserve(n, reply)),
            "the shared rate is stopped"
        );
        rx.await?
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The reservation thread: answers each ask in turn; the reports that
/// queued up meanwhile go to the database in one call.
fn serve(db: &mut Db, rx: &mpsc::Receiver<Ask>, slots: &Mutex<VecDeque<Local>>) {
    while let Ok(first) = rx.recv() {
        let mut asks = vec![first];
        asks.extend(rx.try_iter());
        let (reports, reserves): (Vec<Ask>, Vec<Ask>) =
            asks.into_iter().partition(|a| matches!(a, Ask::Report(_)));
        let seen: Vec<Seen> = reports
            .into_iter()
            .filter_map(|a| match a {
                Ask::Report(s) => Some(s),
                Ask::Reserve(..) => None,
            })
            .collect();
        if !seen.is_empty() {
            report(db, seen, slots);
        }
        for ask in reserves {
            if let Ask::Reserve(n, reply) = ask {
                let _ = reply.send(reserve_slots(db, n, slots));
            }
        }
    }
}

/// Sends answers to the adaptive pace, and what the new view says this
/// worker must count too (`Reporter::catch_up`).
fn report(db: &mut Db, mut seen: Vec<Seen>, slots: &Mutex<VecDeque<Local>>) {
    let Db::Auto(store, auto) = db else {
        return;
    };
    // Twice at most: the answers, then those a new event makes count.
    for _ in 0..2 {
        if seen.is_empty() {
            return;
        }
        let latency_us = lock(auto).latency_us;
        match store.report(std::mem::take(&mut seen), latency_us) {
            Ok(pace) => {
                let mut a = lock(auto);
                a.seen_pace(pace, None, Instant::now());
                let now = a.server_now(Instant::now());
                seen = a.reporter.catch_up(&pace, now);
                drop(a);
                drop_paused(slots, &pace);
            }
            Err(e) => {
                tracing::warn!("cannot report to the shared pace: {e:#}");
                return;
            }
        }
    }
}

/// Reserves `n` slots: on the local clock, with their tickets.
fn reserve_slots(db: &mut Db, n: u32, slots: &Mutex<VecDeque<Local>>) -> Result<Vec<Local>> {
    match db {
        Db::Fixed(f, rate) => {
            let interval = interval_us(*rate);
            let n = batch_size(*rate);
            let got = f(interval * i64::from(n))?;
            let arrived = Instant::now();
            let late = grace(Duration::from_micros(interval as u64), MIN_GRACE);
            Ok(local_slots(got, arrived, interval, n)
                .into_iter()
                .enumerate()
                .map(|(k, at)| {
                    let ticket = Ticket {
                        slot_us: got.first_us + k as i64 * interval,
                        rate: f64::from(*rate),
                        epoch_us: 0,
                    };
                    (at, late, ticket)
                })
                .collect())
        }
        Db::Auto(store, auto) => {
            let unused = std::mem::take(&mut lock(auto).unused);
            let r = match store.reserve(n, unused) {
                Ok(r) => r,
                Err(e) => {
                    // Given back at the next reservation that succeeds.
                    let mut a = lock(auto);
                    if a.unused.epoch_start_us <= unused.epoch_start_us {
                        a.unused.slots += unused.slots;
                        a.unused.epoch_start_us = unused.epoch_start_us;
                    }
                    return Err(e);
                }
            };
            let arrived = Instant::now();
            let catch_up = {
                let mut a = lock(auto);
                a.seen_pace(r.pace, Some(r.now_us), arrived);
                let now = a.server_now(arrived);
                a.reporter.catch_up(&r.pace, now)
            };
            if !catch_up.is_empty() {
                report(db, catch_up, slots);
            }
            let got = Reserved {
                first_us: r.first_us,
                now_us: r.now_us,
            };
            let late = grace(
                Duration::from_micros(r.interval_us.max(1) as u64),
                AUTO_GRACE,
            );
            Ok(local_slots(got, arrived, r.interval_us, n)
                .into_iter()
                .enumerate()
                .map(|(k, at)| {
                    let ticket = Ticket {
                        slot_us: r.first_us + k as i64 * r.interval_us,
                        rate: r.pace.rate,
                        epoch_us: r.pace.epoch_start_us,
                    };
                    (at, late, ticket)
                })
                .collect())
        }
    }
}

/// Gives up the slots held that fall in the pace's pause.
fn drop_paused(slots: &Mutex<VecDeque<Local>>, pace: &Pace) {
    if let Ok(mut slots) = slots.try_lock() {
        slots.retain(|(_, _, t)| t.slot_us >= pace.paused_until_us);
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

/// Drops the slots this worker let pass (later than their grace): using
/// them late would send two calls where the schedule has one. Returns
/// their tickets.
fn drop_missed(slots: &mut VecDeque<Local>, now: Instant) -> Vec<Ticket> {
    let mut passed = Vec::new();
    while slots
        .front()
        .is_some_and(|&(at, grace, _)| missed(at, now, grace))
    {
        passed.extend(slots.pop_front().map(|(_, _, t)| t));
    }
    passed
}

/// Least lateness forgiven on a fixed rate: the timer's own resolution,
/// so a fast rate (an interval under a millisecond) is not starved by it.
const MIN_GRACE: Duration = Duration::from_millis(5);
/// Least lateness forgiven on the adaptive pace: a worker short of CPU
/// wakes late for many slots, and each one dropped is a call the pace
/// allowed and nobody sent, so the pace would climb far above what the
/// workers send and then measure the provider from a pace nobody sent
/// at. A late call bunches at most one batch ([`BATCH_SPAN`]) with the
/// next ones, which a provider's one-second allowance absorbs and the
/// pace's margin under the measured limit covers.
pub(crate) const AUTO_GRACE: Duration = BATCH_SPAN;

/// How late a slot `interval` from the next may still be used: half an
/// interval, at least `floor`.
pub(crate) fn grace(interval: Duration, floor: Duration) -> Duration {
    (interval / 2).max(floor)
}

/// Whether the slot at `at` is gone by `now`: more than its `grace` ago.
/// A call woken that late by a stalled machine takes a fresh slot instead
/// of leaving with the calls of the next instants, which would bunch in
/// the provider's one-second window.
fn missed(at: Instant, now: Instant, grace: Duration) -> bool {
    at + grace < now
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
        let ticket = Ticket {
            slot_us: 0,
            rate: 100.0,
            epoch_us: 0,
        };
        let mut slots: VecDeque<Local> = got
            .into_iter()
            .map(|at| (at, grace(Duration::from_micros(10_000), MIN_GRACE), ticket))
            .collect();
        let passed = drop_missed(&mut slots, arrived + Duration::from_micros(16_000));
        assert_eq!(slots.len(), 1, "the slots at 0.5 and 10.5 ms were let pass");
        assert_eq!(passed.len(), 2);
    }

    #[test]
    fn a_slot_is_missed_past_half_an_interval_and_never_within_the_timer_grace() {
        let at = Instant::now();
        let ms = Duration::from_millis;
        let missed = |at, now, interval| missed(at, now, grace(interval, MIN_GRACE));
        // 100 calls/s: half an interval is 5 ms.
        assert!(!missed(at, at + ms(5), ms(10)));
        assert!(missed(at, at + ms(6), ms(10)));
        // 2 calls/s: half an interval is 250 ms.
        assert!(!missed(at, at + ms(240), ms(500)));
        assert!(missed(at, at + ms(260), ms(500)));
        // 2,000 calls/s: the 5 ms grace of the timer, not 0.25 ms.
        assert!(!missed(at, at + ms(4), Duration::from_micros(500)));
        assert!(missed(at, at + ms(6), Duration::from_micros(500)));
        // The adaptive pace forgives a worker short of CPU one batch.
        let auto = |interval| grace(interval, AUTO_GRACE);
        assert_eq!(auto(ms(10)), ms(50));
        assert_eq!(auto(Duration::from_micros(2_500)), ms(50));
        assert_eq!(auto(ms(500)), ms(250));
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
            assert_eq!(shared.acquire().await.unwrap().rate, 50.0);
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
