//! Rate limiting of provider calls, shared by every worker of a run: when a
//! call may leave (the pace and `Retry-After` pauses), how many may be in
//! flight, and the figures the progress display and run summary show. The
//! decisions live in the pure [`aimd::Controller`]; this module only wraps it
//! in a lock, tokio's clock and a stop signal, so that any wait (including a
//! long `Retry-After` pause) ends at once when the run stops.
//!
//! `governor` is not used: its quota is fixed when a limiter is built, so
//! changing the rate means a new limiter whose fresh burst allowance lets a
//! burst through at every change, and it cannot be driven by a simulated clock
//! in the decision tests. The pacer in `aimd` is a dozen lines of GCRA.

pub mod aimd;
mod measure;
pub mod pooled;
pub mod shared;
#[cfg(test)]
mod sim;
#[cfg(test)]
pub(crate) mod test_log;

pub use aimd::{RateLimited, RateMode, Settings};

use aimd::Controller;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

/// See [`Limiter::follow`]: a tenth above the shared pace.
const FOLLOW_HEADROOM: f64 = 1.1;

/// The shared limiter. Workers call [`Limiter::acquire`] before each
/// provider call and report the answer on the [`Slot`] it returns.
pub struct Limiter {
    state: Mutex<State>,
    /// Signalled when an in-flight slot ends, for workers waiting on the
    /// concurrency target.
    freed: Notify,
    stop: watch::Sender<bool>,
}

struct State {
    ctrl: Controller,
    in_flight: usize,
    /// The highest delivered rate [`Limiter::stats`] has seen.
    peak: Option<f64>,
}

/// Figures for the progress display and the run summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimiterStats {
    /// The pace, calls per second.
    pub rate: f64,
    /// Clean answers per second over about the last five seconds (`None`
    /// before the first full second): what the provider accepts.
    pub delivered: Option<f64>,
    /// 429 answers so far.
    pub rate_limited: u64,
    /// Decreases so far (one per congestion event, however many 429s).
    pub congestion_events: u64,
    /// Moving average of answer latency, once an answer was seen.
    pub latency: Option<Duration>,
    /// Calls allowed in flight now (Little's law within the maximum).
    pub target_concurrency: usize,
    pub in_flight: usize,
    /// Time left in a `Retry-After` pause, if one is running.
    pub paused_for: Option<Duration>,
    /// The highest delivered rate seen by the stats taken so far (the
    /// progress display takes them every tick): what the run reached when
    /// it never met a limit.
    pub peak: Option<f64>,
}

impl LimiterStats {
    /// The figures in one short line for the progress display, in whole
    /// numbers: `rate 98/s, 429s 12, latency 312 ms`.
    pub fn brief(&self) -> String {
        let latency = self
            .latency
            .map_or_else(|| "-".to_string(), |l| format!("{} ms", l.as_millis()));
        let paused = self.paused_for.map_or_else(String::new, |p| {
            format!(", paused {}s", p.as_secs_f64().ceil())
        });
        format!(
            "rate {:.0}/s, 429s {}, latency {latency}{paused}",
            self.rate, self.rate_limited
        )
    }
}

impl Limiter {
    pub fn new(settings: Settings) -> Limiter {
        Limiter {
            state: Mutex::new(State {
                ctrl: Controller::new(settings, Instant::now().into_std()),
                in_flight: 0,
                peak: None,
            }),
            freed: Notify::new(),
            stop: watch::Sender::new(false),
        }
    }

    /// A limiter at a fixed rate with no concurrency gating beyond
    /// `max_concurrency`: the old engine's `Limiter::new(rate)`.
    pub fn fixed(rate: u32, max_concurrency: usize) -> Limiter {
        Limiter::new(Settings::new(RateMode::Fixed(rate), max_concurrency))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a send slot: the pace allows a call, no `Retry-After` pause
    /// is running, and fewer calls than the concurrency target are in
    /// flight. `None` once [`Limiter::stop`] was called, at once, even in the
    /// middle of a wait.
    pub async fn acquire(&self) -> Option<Slot<'_>> {
        let mut stop = self.stop.subscribe();
        loop {
            if *stop.borrow_and_update() {
                return None;
            }
            let pace_until = {
                // Registered before the check, so a place freed between the
                // check and the wait is not missed. Dropped (at the end of
                // this block) before a wait for the pace: a notification it
                // received then passes to the next waiter (tokio's `Notify`).
                let freed = std::pin::pin!(self.freed.notified());
                let mut freed = freed;
                freed.as_mut().enable();
                let wake = {
                    let mut s = self.lock();
                    let now = Instant::now();
                    if s.in_flight >= s.ctrl.target_concurrency() {
                        None
                    } else {
                        match s.ctrl.try_send(now.into_std()) {
                            Ok(()) => {
                                s.in_flight += 1;
                                return Some(Slot {
                                    limiter: self,
                                    sent_at: now,
                                });
                            }
                            Err(at) => Some(Instant::from_std(at)),
                        }
                    }
                };
                match wake {
                    Some(at) => at,
                    // Waiting for a place: only a freed place matters.
                    None => {
                        tokio::select! {
                            _ = stop.wait_for(|s| *s) => return None,
                            _ = freed => {}
                        }
                        continue;
                    }
                }
            };
            // Waiting for the pace: only the clock matters.
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return None,
                _ = tokio::time::sleep_until(pace_until) => {}
            }
        }
    }

    /// Ends every wait in [`Limiter::acquire`] now and refuses new slots.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    pub fn is_stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// A clean answer whose slot is not at hand (the old engine's call).
    /// Prefer [`Slot::success`], which knows when the call left.
    pub fn on_success(&self) {
        let now = Instant::now().into_std();
        let mut s = self.lock();
        let sent_at = now
            .checked_sub(s.ctrl.latency().unwrap_or_default())
            .unwrap_or(now);
        s.ctrl.on_success(sent_at, now);
    }

    /// A 429 whose slot is not at hand (the old engine's call): the send
    /// time is estimated from the average latency, so a 429 of a slow call
    /// may count as a new event. Prefer [`Slot::rate_limited`].
    pub fn on_rate_limited(&self, retry_after: Duration) -> RateLimited {
        let now = Instant::now().into_std();
        let latency = self.lock().ctrl.latency().unwrap_or_default();
        let sent_at = now.checked_sub(latency).unwrap_or(now);
        self.rate_limited_at(sent_at, retry_after, now)
    }

    /// The latency of any answer (clean, refused or failed).
    pub fn on_answer(&self, latency: Duration) {
        self.lock().ctrl.on_answer(latency);
    }

    fn rate_limited_at(
        &self,
        sent_at: std::time::Instant,
        retry_after: Duration,
        now: std::time::Instant,
    ) -> RateLimited {
        let mut s = self.lock();
        let events = s.ctrl.congestion_events();
        let verdict = s.ctrl.on_rate_limited(sent_at, retry_after, now);
        if s.ctrl.congestion_events() != events {
            tracing::info!(
                rate = s.ctrl.rate(),
                ?retry_after,
                "rate limited by the provider"
            );
        }
        verdict
    }

    /// Follows the pace shared by several workers (`pooled`): this
    /// worker's own pace and concurrency target are set a little above it,
    /// so that the shared schedule, not this limiter, paces its calls.
    pub fn follow(&self, rate: f64) {
        let now = Instant::now().into_std();
        self.lock().ctrl.follow(rate * FOLLOW_HEADROOM, now);
    }

    /// The moving average of answer latency, once an answer was seen.
    pub fn latency(&self) -> Option<Duration> {
        self.lock().ctrl.latency()
    }

    /// The pace, rounded to whole calls per second.
    pub fn current_rate(&self) -> u32 {
        self.lock().ctrl.rate().round() as u32
    }

    /// Calls allowed in flight now.
    pub fn target_concurrency(&self) -> usize {
        self.lock().ctrl.target_concurrency()
    }

    pub fn stats(&self) -> LimiterStats {
        let mut s = self.lock();
        let now = Instant::now().into_std();
        let delivered = s.ctrl.delivered_rate();
        if let Some(d) = delivered {
            s.peak = Some(s.peak.map_or(d, |p| p.max(d)));
        }
        LimiterStats {
            peak: s.peak,
            rate: s.ctrl.rate(),
            delivered,
            rate_limited: s.ctrl.rate_limited_count(),
            congestion_events: s.ctrl.congestion_events(),
            latency: s.ctrl.latency(),
            target_concurrency: s.ctrl.target_concurrency(),
            in_flight: s.in_flight,
            paused_for: s.ctrl.paused_until(now).map(|u| u - now),
        }
    }
}

/// One call's permission to leave, held while it is in flight. Report the
/// answer on it; dropping it (answered or not) frees its place in flight.
pub struct Slot<'a> {
    limiter: &'a Limiter,
    sent_at: Instant,
}

impl Slot<'_> {
    /// When the call was allowed to leave.
    pub fn sent_at(&self) -> Instant {
        self.sent_at
    }

    /// A clean answer (any answer that is not a 429 and shows the provider
    /// coped: success or a business refusal).
    pub fn success(self) {
        let now = Instant::now();
        let mut s = self.limiter.lock();
        s.ctrl.on_answer(now - self.sent_at);
        s.ctrl.on_success(self.sent_at.into_std(), now.into_std());
    }

    /// A 429 with its `Retry-After` (or the caller's default). `TooLong`
    /// means the provider asked for more than the configured cap.
    pub fn rate_limited(self, retry_after: Duration) -> RateLimited {
        let now = Instant::now();
        self.limiter.on_answer(now - self.sent_at);
        self.limiter
            .rate_limited_at(self.sent_at.into_std(), retry_after, now.into_std())
    }

    /// An answer that says nothing about the rate (transport failure, 5xx):
    /// only its latency counts.
    pub fn other(self) {
        self.limiter.on_answer(self.sent_at.elapsed());
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.limiter.lock().in_flight -= 1;
        // One place freed wakes one waiter, not every worker of the run: at
        // full speed, waking all of them on every answer cost more CPU than
        // the call itself.
        self.limiter.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;

    /// Runs an async test on a paused clock (as `#[tokio::test(start_paused
    /// = true)]`) in a thread of its own, and fails it after 20 s of real
    /// time: a limiter broken so that a wait never ends (or ends at once,
    /// over and over) fails its test instead of hanging the whole suite.
    fn paused<F: Future<Output = ()>>(test: impl FnOnce() -> F + Send + 'static) {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .expect("a test runtime");
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(test())));
            let _ = done.send(outcome);
        });
        match finished.recv_timeout(Duration::from_secs(20)) {
            Ok(Ok(())) => {}
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            Err(_) => panic!("not done after 20 s of real time: a wait never ends"),
        }
    }

    #[test]
    fn acquire_keeps_a_fixed_pace() {
        paused(|| async {
            let l = Limiter::fixed(10, 64);
            let t0 = Instant::now();
            for _ in 0..21 {
                l.acquire().await.expect("not stopped").success();
            }
            let took = t0.elapsed();
            // 21 slots at 10/s: the first at once, then 20 intervals of 100 ms.
            assert!(took >= Duration::from_millis(1970), "{took:?}");
            assert!(took <= Duration::from_millis(2010), "{took:?}");
        });
    }

    #[test]
    fn stop_ends_a_retry_after_pause_at_once() {
        paused(|| async {
            let l = std::sync::Arc::new(Limiter::fixed(10, 64));
            let slot = l.acquire().await.unwrap();
            assert!(matches!(
                slot.rate_limited(Duration::from_secs(30)),
                RateLimited::Paused { .. }
            ));
            let waiter = {
                let l = l.clone();
                tokio::spawn(async move { l.acquire().await.is_some() })
            };
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(!waiter.is_finished(), "the pause must hold the worker");
            assert!(!l.is_stopped());
            let t0 = Instant::now();
            l.stop();
            assert!(l.is_stopped());
            assert!(!waiter.await.unwrap(), "a stopped limiter grants no slot");
            assert!(
                t0.elapsed() < Duration::from_millis(1),
                "{:?}",
                t0.elapsed()
            );
            assert!(l.acquire().await.is_none());
        });
    }

    #[test]
    fn retry_after_holds_every_worker_until_it_ends() {
        paused(|| async {
            let l = Limiter::fixed(100, 64);
            let t0 = Instant::now();
            let slot = l.acquire().await.unwrap();
            slot.rate_limited(Duration::from_secs(5));
            l.acquire().await.unwrap().success();
            assert!(t0.elapsed() >= Duration::from_secs(5), "{:?}", t0.elapsed());
            let stats = l.stats();
            assert_eq!(stats.rate_limited, 1);
            assert_eq!(stats.congestion_events, 1);
            assert_eq!(stats.paused_for, None);
        });
    }

    #[test]
    fn in_flight_calls_are_held_to_the_concurrency_target() {
        paused(|| async {
            let l = Limiter::fixed(1000, 2);
            let a = l.acquire().await.unwrap();
            let _b = l.acquire().await.unwrap();
            assert_eq!(l.stats().in_flight, 2);
            let third = tokio::time::timeout(Duration::from_secs(1), l.acquire()).await;
            assert!(third.is_err(), "a third call must wait for a free place");
            drop(third);
            let t0 = Instant::now();
            let (_c, ()) = tokio::join!(l.acquire(), async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                a.success();
            });
            assert!(t0.elapsed() >= Duration::from_millis(50));
            assert_eq!(l.stats().in_flight, 2);
        });
    }

    #[test]
    fn brief_figures_are_whole_numbers() {
        let s = LimiterStats {
            rate: 97.6,
            delivered: Some(95.2),
            rate_limited: 12,
            congestion_events: 3,
            latency: Some(Duration::from_micros(312_400)),
            target_concurrency: 46,
            in_flight: 40,
            paused_for: Some(Duration::from_millis(4200)),
            peak: Some(99.0),
        };
        assert_eq!(s.brief(), "rate 98/s, 429s 12, latency 312 ms, paused 5s");
        let s = LimiterStats {
            latency: None,
            paused_for: None,
            ..s
        };
        assert_eq!(s.brief(), "rate 98/s, 429s 12, latency -");
    }

    #[test]
    fn stats_report_latency_and_429s() {
        paused(|| async {
            let l = Limiter::new(Settings::new(RateMode::Auto { ceiling: None }, 64));
            let slot = l.acquire().await.unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
            slot.success();
            let s = l.stats();
            assert_eq!(s.latency, Some(Duration::from_millis(300)));
            assert_eq!(s.rate, aimd::AUTO_START_RATE);
            assert_eq!(s.in_flight, 0);
            l.on_rate_limited(Duration::from_secs(1));
            assert_eq!(l.stats().rate_limited, 1);
            assert!(l.current_rate() < 10);
        });
    }

    /// The calls made without a slot at hand: a clean answer counts for the
    /// delivered rate, an answer's latency for the average, and the rate
    /// and concurrency target read back.
    #[test]
    fn answers_reported_without_a_slot_count() {
        paused(|| async {
            let l = Limiter::new(Settings::new(RateMode::Auto { ceiling: None }, 64));
            assert_eq!(l.current_rate(), aimd::AUTO_START_RATE as u32);
            assert_eq!(l.stats().delivered, None);
            tokio::time::sleep(Duration::from_secs(1)).await;
            l.on_success();
            // One clean answer in the first second.
            assert_eq!(l.stats().delivered, Some(1.0));
            l.on_answer(Duration::from_millis(200));
            assert_eq!(l.stats().latency, Some(Duration::from_millis(200)));
            // 10/s × 0.2 s × 1.5 headroom: 3 calls in flight.
            assert_eq!(l.target_concurrency(), 3);
        });
    }

    /// An answer that says nothing about the rate (a transport failure, a
    /// 5xx) counts for the latency only, and frees its place.
    #[test]
    fn other_answers_count_for_latency_only() {
        paused(|| async {
            let l = Limiter::fixed(10, 8);
            let slot = l.acquire().await.unwrap();
            tokio::time::sleep(Duration::from_millis(250)).await;
            slot.other();
            let s = l.stats();
            assert_eq!(s.latency, Some(Duration::from_millis(250)));
            assert_eq!((s.in_flight, s.rate_limited, s.delivered), (0, 0, None));
            assert_eq!(l.current_rate(), 10);
        });
    }

    /// "rate limited by the provider" is logged once per congestion event,
    /// however many 429s answer the calls that were in flight.
    #[test]
    fn one_log_line_per_congestion_event() {
        let text = super::test_log::capture(tracing::Level::INFO, || {
            let l = Limiter::fixed(100, 8);
            // Calls take 500 ms: the 429s arriving now answer calls sent
            // before the first of them, one event.
            l.on_answer(Duration::from_millis(500));
            for _ in 0..3 {
                l.on_rate_limited(Duration::from_secs(1));
            }
            assert_eq!(l.stats().congestion_events, 1);
        });
        assert_eq!(
            text.matches("rate limited by the provider").count(),
            1,
            "{text}"
        );
    }
}
