//! A deterministic simulation of a rate-limited provider, driving the pure
//! controller with a simulated clock: the decision tests of auto mode
//! (convergence to the limit, few 429s, following a limit that drops). The
//! provider behaves like the sandbox: it waits the latency, then admits the
//! call under a GCRA limit with a burst of one second's worth, refusing with
//! `Retry-After` in whole seconds, at least 1.

use super::aimd::{Controller, RateMode, Settings};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

/// The provider's limit as a function of the simulated second.
pub(crate) struct Provider {
    pub limit: Box<dyn Fn(f64) -> f64>,
    /// Seconds `[from, to)` during which every call is refused with a
    /// `Retry-After` up to the end (a provider pause).
    pub outage: Option<(f64, f64)>,
    tat: f64,
}

impl Provider {
    pub fn new(limit: impl Fn(f64) -> f64 + 'static) -> Provider {
        Provider {
            limit: Box::new(limit),
            outage: None,
            tat: 0.0,
        }
    }

    /// GCRA with a burst of one second's worth of calls: `Err` carries the
    /// `Retry-After` in whole seconds.
    fn admit(&mut self, t: f64) -> Result<(), u64> {
        if let Some((from, to)) = self.outage
            && (from..to).contains(&t)
        {
            return Err(((to - t).ceil() as u64).max(1));
        }
        let limit = (self.limit)(t);
        let cell = 1.0 / limit;
        let tau = (limit - 1.0).max(0.0) * cell;
        if self.tat <= t + tau {
            self.tat = self.tat.max(t) + cell;
            Ok(())
        } else {
            let wait = self.tat - tau - t;
            Err((wait.ceil() as u64).max(1))
        }
    }
}

/// Latency model: `base_ms` plus a uniform jitter of `0..=jitter_ms`, drawn
/// from a fixed-seed generator so every run is the same.
pub(crate) struct Latency {
    pub base_ms: u64,
    pub jitter_ms: u64,
    seed: u64,
}

impl Latency {
    pub fn new(base_ms: u64, jitter_ms: u64) -> Latency {
        Latency {
            base_ms,
            jitter_ms,
            seed: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// As [`Latency::new`], drawing another fixed sequence.
    pub fn seeded(base_ms: u64, jitter_ms: u64, seed: u64) -> Latency {
        Latency {
            seed: seed.max(1),
            ..Latency::new(base_ms, jitter_ms)
        }
    }
    fn draw(&mut self) -> Duration {
        // xorshift64: deterministic and dependency-free.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let jitter = if self.jitter_ms == 0 {
            0
        } else {
            self.seed % (self.jitter_ms + 1)
        };
        Duration::from_millis(self.base_ms + jitter)
    }
}

/// Per simulated second: clean answers and 429 answers, and the pace at its end.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Second {
    pub ok: u64,
    pub limited: u64,
    /// Calls sent in this second (by send time).
    pub sent: u64,
    pub rate: f64,
}

/// An answer not handled yet: (handling time, send time, the provider's
/// verdict with its `Retry-After` in seconds).
type Late = (Duration, Duration, Result<(), u64>);

/// Runs `secs` simulated seconds of a run with unlimited rows against
/// `provider`, returning what happened in each second.
pub(crate) fn run(
    mode: RateMode,
    max_concurrency: usize,
    provider: &mut Provider,
    latency: &mut Latency,
    secs: u64,
) -> Vec<Second> {
    run_loaded(
        mode,
        max_concurrency,
        provider,
        latency,
        secs,
        Duration::ZERO,
    )
}

/// As [`run`], on a loaded machine: an answer that comes back while a
/// `Retry-After` pause runs (payrun idle, waiting for the CPU when woken)
/// is handled `idle_lag` after the provider answered it.
pub(crate) fn run_loaded(
    mode: RateMode,
    max_concurrency: usize,
    provider: &mut Provider,
    latency: &mut Latency,
    secs: u64,
    idle_lag: Duration,
) -> Vec<Second> {
    let base = Instant::now();
    let at = |t: Duration| base + t;
    let end = Duration::from_secs(secs);
    let mut ctrl = Controller::new(Settings::new(mode, max_concurrency), base);
    let mut seconds = vec![Second::default(); secs as usize];
    // (answer time, send time), earliest first.
    let mut flight: BinaryHeap<Reverse<(Duration, Duration)>> = BinaryHeap::new();
    // Answered but not handled yet, earliest first.
    let mut late: BinaryHeap<Reverse<Late>> = BinaryHeap::new();
    let mut now = Duration::ZERO;
    // Bounded (a healthy run takes far fewer steps): a controller broken so
    // that simulated time stops advancing fails the test instead of
    // spinning.
    let mut steps: u64 = 0;
    loop {
        steps += 1;
        assert!(steps < secs * 100_000, "the simulation stopped advancing");
        loop {
            let answer = flight.peek().map(|Reverse((ans, _))| *ans);
            let handling = late.peek().map(|Reverse((h, ..))| *h);
            let (t, sent, verdict) = match (answer, handling) {
                (Some(ans), h) if ans <= now && h.is_none_or(|h| ans < h) => {
                    let Some(Reverse((ans, sent))) = flight.pop() else {
                        unreachable!()
                    };
                    let s = &mut seconds[(ans.as_secs() as usize).min(secs as usize - 1)];
                    let verdict = provider.admit(ans.as_secs_f64());
                    match verdict {
                        Ok(()) => s.ok += 1,
                        Err(_) => s.limited += 1,
                    }
                    if !idle_lag.is_zero() && ctrl.paused_until(at(ans)).is_some() {
                        late.push(Reverse((ans + idle_lag, sent, verdict)));
                        continue;
                    }
                    (ans, sent, verdict)
                }
                (_, Some(h)) if h <= now => {
                    let Some(Reverse(answered)) = late.pop() else {
                        unreachable!()
                    };
                    answered
                }
                _ => break,
            };
            ctrl.on_answer(t - sent);
            match verdict {
                Ok(()) => ctrl.on_success(at(sent), at(t)),
                Err(retry) => {
                    ctrl.on_rate_limited(at(sent), Duration::from_secs(retry), at(t));
                }
            }
        }
        if now >= end {
            break;
        }
        let sec = &mut seconds[now.as_secs() as usize];
        sec.rate = ctrl.rate();
        let mut next = end;
        if flight.len() + late.len() < ctrl.target_concurrency() {
            match ctrl.try_send(at(now)) {
                Ok(()) => {
                    flight.push(Reverse((now + latency.draw(), now)));
                    sec.sent += 1;
                    continue;
                }
                // The pacer's timer fires on a whole millisecond, as
                // tokio's does: the sends of a high rate come 2 or 3 ms
                // apart, not evenly.
                Err(when) => next = next.min(whole_ms(when - base)),
            }
        }
        if let Some(Reverse((ans, _))) = flight.peek() {
            next = next.min(*ans);
        }
        if let Some(Reverse((h, ..))) = late.peek() {
            next = next.min(*h);
        }
        now = next.max(now);
    }
    seconds
}

/// `t` rounded up to a whole millisecond.
fn whole_ms(t: Duration) -> Duration {
    let ms = t.as_nanos().div_ceil(1_000_000);
    Duration::from_millis(ms as u64)
}

/// Clean answers per second over `[from, to)` and the share of 429s among
/// all answers in it.
pub(crate) fn summary(seconds: &[Second], from: usize, to: usize) -> (f64, f64) {
    let w = &seconds[from..to];
    let ok: u64 = w.iter().map(|s| s.ok).sum();
    let limited: u64 = w.iter().map(|s| s.limited).sum();
    (
        ok as f64 / (to - from) as f64,
        limited as f64 / (ok + limited).max(1) as f64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn converges(limit: fn(f64) -> f64, l: f64, base_ms: u64, jitter_ms: u64) {
        let mut p = Provider::new(limit);
        let mut lat = Latency::new(base_ms, jitter_ms);
        let s = run(RateMode::Auto { ceiling: None }, 512, &mut p, &mut lat, 180);
        let (rate, share) = summary(&s, 10, 180);
        eprintln!(
            "L={l} latency {base_ms}+{jitter_ms} ms: {rate:.1} calls/s ({:.3} L), 429 share {share:.4}",
            rate / l
        );
        assert!(rate >= 0.95 * l, "achieved {rate:.1} calls/s < 0.95 x {l}");
        assert!(share <= 0.02, "429 share {share:.4} > 2 %");
    }

    #[test]
    fn converges_to_limit_20() {
        converges(|_| 20.0, 20.0, 50, 0);
        converges(|_| 20.0, 20.0, 100, 400);
    }

    #[test]
    fn converges_to_limit_100() {
        converges(|_| 100.0, 100.0, 50, 0);
        converges(|_| 100.0, 100.0, 100, 400);
    }

    #[test]
    fn converges_to_limit_400() {
        converges(|_| 400.0, 400.0, 50, 0);
        converges(|_| 400.0, 400.0, 100, 400);
    }

    #[test]
    fn follows_a_limit_that_drops_within_ten_seconds() {
        for (base, jitter) in [(50, 0), (100, 400)] {
            let mut p = Provider::new(|t| if t < 60.0 { 400.0 } else { 100.0 });
            let mut lat = Latency::new(base, jitter);
            let s = run(RateMode::Auto { ceiling: None }, 512, &mut p, &mut lat, 120);
            let (rate, share) = summary(&s, 70, 120);
            assert!(rate >= 0.95 * 100.0, "achieved {rate:.1} after the drop");
            assert!(
                share <= 0.02,
                "429 share {share:.4} from 10 s after the drop"
            );
            let (first_rate, first) = summary(&s, 70, 80);
            // A single ten-second window may hold one `Retry-After` pause.
            assert!(
                first_rate >= 0.9 * 100.0,
                "achieved {first_rate:.1} 10 to 20 s after the drop"
            );
            assert!(
                first <= 0.02,
                "429 share {first:.4} 10 to 20 s after the drop"
            );
            // The pace may sit above the limit while the provider's
            // one-second burst allowance absorbs it (what counts is accepted
            // calls and 429s), but no longer anywhere near 400.
            assert!(
                s[70].rate <= 150.0,
                "pace {} 10 s after the drop",
                s[70].rate
            );
        }
    }

    /// Every 5-second window of `[from, to)` accepted at least 0.95 of a
    /// limit of 100 calls/s, and at most 2 % of its calls were answered 429.
    fn assert_kept_to_100(s: &[Second], from: usize, to: usize, case: &str) {
        for w in from..=to - 5 {
            let (rate, _) = summary(s, w, w + 5);
            assert!(
                rate >= 0.95 * 100.0,
                "{case}: {rate:.1} calls/s in [{w}, {}) s",
                w + 5
            );
        }
        let (_, share) = summary(s, from, to);
        assert!(share <= 0.02, "{case}: 429 share {share:.4}");
    }

    /// The drop the benchmark makes (400 → 100 calls/s, 20 s into the run)
    /// and one after a minute at 400: from 10 s after the drop, every
    /// 5-second window accepts at least 0.95 of the new limit to 50 s after
    /// it (the benchmark's run lasts 40 s after it), with ≤ 2 %
    /// 429s. A second congestion event in that span would fail it: its
    /// `Retry-After` pause of a second costs a fifth of a window.
    #[test]
    fn keeps_to_a_dropped_limit_in_every_five_second_window() {
        type Limit = fn(f64) -> f64;
        let drops: [(usize, Limit); 2] = [
            (20, |t| if t < 20.0 { 400.0 } else { 100.0 }),
            (60, |t| if t < 60.0 { 400.0 } else { 100.0 }),
        ];
        for (drop, limit) in drops {
            for (base, jitter) in [(50, 0), (300, 200), (100, 400)] {
                let mut p = Provider::new(limit);
                let mut lat = Latency::new(base, jitter);
                let end = drop + 50;
                let s = run(
                    RateMode::Auto { ceiling: None },
                    512,
                    &mut p,
                    &mut lat,
                    end as u64,
                );
                let worst = (drop + 10..=end - 5)
                    .map(|from| summary(&s, from, from + 5).0)
                    .fold(f64::INFINITY, f64::min);
                let (_, share) = summary(&s, drop + 10, end);
                eprintln!(
                    "drop at {drop} s, {base}+{jitter} ms: worst 5 s window {worst:.1} calls/s, 429 share {share:.4}"
                );
                let case = format!("drop at {drop} s, {base}+{jitter} ms");
                assert_kept_to_100(&s, drop + 10, end, &case);
            }
        }
    }

    /// The benchmark's drop on a loaded machine: answers that come back
    /// during a `Retry-After` pause handled 2 to 4 ms late (what a drop
    /// case run beside a build showed: the event's window 51–53 ms for a
    /// 50 ms round trip, 49 ms unloaded). Timed as handled, the drain at
    /// the drop read the new limit 4–8 % low, and the hold kept the pace
    /// under 95 calls/s for a minute with no 429.
    #[test]
    fn keeps_to_a_dropped_limit_when_answers_are_handled_late() {
        for lag_ms in [2, 3, 4] {
            let mut p = Provider::new(|t| if t < 20.0 { 400.0 } else { 100.0 });
            let mut lat = Latency::new(50, 0);
            let lag = Duration::from_millis(lag_ms);
            let auto = RateMode::Auto { ceiling: None };
            let s = run_loaded(auto, 512, &mut p, &mut lat, 70, lag);
            assert_kept_to_100(&s, 30, 70, &format!("handled {lag_ms} ms late"));
        }
    }

    /// The benchmark's drop, forty times, each with its own draw of
    /// latencies of 50 or 51 ms (the sandbox's timer rounds its 50 ms up to
    /// the next millisecond) and its own instant of the drop: each drain
    /// at the drop holds about five accepted calls, and their count reads
    /// the new limit a few percent low or high. Held to as counted, a low
    /// one kept the pace under 95 calls/s for a minute and a high one
    /// overran the limit again (the first draw: 82.4 calls/s in [55, 60)
    /// s); every run must keep to it.
    #[test]
    fn keeps_to_a_dropped_limit_whatever_the_drain_reads() {
        for k in 0..40u32 {
            let at = 20.0 + f64::from(k) * 0.000_37;
            let mut p = Provider::new(move |t| if t < at { 400.0 } else { 100.0 });
            let mut lat = Latency::seeded(50, 1, u64::from(k) * 7919 + 1);
            let s = run(RateMode::Auto { ceiling: None }, 512, &mut p, &mut lat, 70);
            assert_kept_to_100(&s, 30, 70, &format!("draw {k}"));
        }
    }

    #[test]
    fn no_429_storm_after_a_provider_pause() {
        for (base, jitter) in [(50, 0), (100, 400)] {
            let mut p = Provider::new(|_| 100.0);
            p.outage = Some((60.0, 65.0));
            let mut lat = Latency::new(base, jitter);
            let s = run(RateMode::Auto { ceiling: None }, 512, &mut p, &mut lat, 120);
            // The pause itself: a handful of refusals, not one per waiting call.
            let (_, during) = summary(&s, 60, 66);
            let refused: u64 = s[60..66].iter().map(|x| x.limited).sum();
            assert!(
                refused <= 60,
                "{refused} refusals ({during:.3}) around the pause"
            );
            let (rate, share) = summary(&s, 66, 120);
            assert!(share <= 0.02, "429 share {share:.4} after the pause");
            assert!(rate >= 0.9 * 100.0, "achieved {rate:.1} after the pause");
        }
    }

    /// The benchmark's cases (`.ci/bench` section 5): a run of about 40 s
    /// at the limit, calls/s counted from the tenth second and 429s over
    /// the whole run (the end of slow start included), latency as the
    /// sandbox draws it (`--latency-ms 300 --jitter-ms 200`: 300 to 500 ms).
    #[test]
    fn meets_the_benchmark_targets_in_a_short_run() {
        type Limit = fn(f64) -> f64;
        let limits: [(f64, Limit); 3] = [(20.0, |_| 20.0), (100.0, |_| 100.0), (400.0, |_| 400.0)];
        for (l, limit) in limits {
            for (base, jitter) in [(50, 0), (300, 200)] {
                let mut p = Provider::new(limit);
                let mut lat = Latency::new(base, jitter);
                let s = run(RateMode::Auto { ceiling: None }, 256, &mut p, &mut lat, 42);
                let (rate, _) = summary(&s, 10, 42);
                let (_, share) = summary(&s, 0, 42);
                let events = s.iter().filter(|x| x.limited > 0).count();
                eprintln!(
                    "L={l} latency {base}+{jitter} ms: {:.3} L, 429s {:.2} % (in {events} s)",
                    rate / l,
                    share * 100.0
                );
                assert!(rate >= 0.95 * l, "L={l} {base}+{jitter}: {rate:.1} calls/s");
                assert!(share <= 0.02, "L={l} {base}+{jitter}: 429 share {share:.4}");
            }
        }
    }

    #[test]
    fn fixed_rate_is_never_exceeded() {
        // A provider far above the fixed rate: only the cap limits.
        let mut p = Provider::new(|_| 10_000.0);
        let mut lat = Latency::new(50, 100);
        let s = run(RateMode::Fixed(40), 512, &mut p, &mut lat, 60);
        for (i, sec) in s.iter().enumerate() {
            assert!(
                sec.sent <= 41,
                "second {i}: {} calls at a fixed rate of 40",
                sec.sent
            );
            assert!(sec.rate <= 40.0);
        }
        let total: u64 = s.iter().map(|x| x.sent).sum();
        assert!(total <= 40 * 60 + 1, "{total} calls in 60 s at 40/s");
        assert!(
            total >= 40 * 58,
            "{total} calls in 60 s at 40/s: the cap starves"
        );
    }
}
