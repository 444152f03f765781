//! The rate decision, as a pure state machine: how many provider calls per
//! second to allow, how many in flight, and how long to pause, given the
//! answers seen so far. No I/O and no clock of its own: every method takes the
//! current `Instant`, so tests drive it with a simulated clock and the async
//! wrapper in `limiter` drives it with tokio's.
//!
//! Auto mode works like TCP finding a link's capacity: a slow start that
//! multiplies the rate by 1.5 every second while answers are clean, one
//! decision per congestion event (every 429 answering a request sent before
//! the event began belongs to it), then a probe that creeps up slowly from
//! just under the limit (and climbs fast only after a deep cut), so the rate
//! settles just under the provider's limit and 429s stay rare. The decision
//! is not a blind cut: the event's own answers measure the limit
//! ([`super::measure`]), and the pace is set just under it (a range too
//! wide to hold to is measured again by the events that follow at once,
//! the pace kept until it is narrow); only when they
//! are too few does a multiplicative cut from the pace at which the 429s
//! started stand in, and a provider pause keeps the rate. A fixed rate uses
//! the same back-off but never goes above the configured rate.

use super::measure::{Event, PaceHistory, Reading};
use std::time::{Duration, Instant};

/// Where auto mode starts: ten calls a second is below every published payout
/// API limit we know of (3 to 100 calls/s) but one, and slow start reaches a
/// limit of 400 from there in about nine seconds, so a cautious start costs
/// little.
pub const AUTO_START_RATE: f64 = 10.0;
/// Auto mode's own ceiling when the configuration sets none: far above any
/// payout provider's limit, and below what payrun itself can sustain, so a
/// provider with no limit at all does not make the rate grow without bound.
pub const AUTO_MAX_RATE: f64 = 5_000.0;
/// Never pace below one call per second: a provider that wants silence says
/// so with `Retry-After`, which pauses sending outright.
pub(super) const MIN_RATE: f64 = 1.0;
/// Slow start multiplies the rate by this every second of clean answers
/// (TCP doubles per round trip; per second is gentler and independent of
/// latency). Past a limit with a one-second burst allowance the pace runs
/// to about 1.9 times the limit before the allowance is gone (2.3 times when
/// doubling), and the calls then in flight are what the provider refuses at
/// the end of slow start: at 300 to 500 ms answers, most of a run's 429s.
const SLOW_START_GROWTH_PER_SEC: f64 = 1.5;
/// Slow start overshoots (a provider's burst allowance hides the limit for a
/// while), so leaving it without a measurement halves the pace at which the
/// 429s started, as TCP does.
const SLOW_START_BETA: f64 = 0.5;
/// The cut on a congestion event after slow start whose answers are too few
/// to measure the limit (one or two 429s: a low rate, short answers): from
/// the pace at which the 429s started, which the slow probe has taken only a
/// little past the limit.
const BETA: f64 = 0.9;
/// After a congestion event whose answers measured the provider's limit,
/// the pace is set this far under it: close enough to waste little, far
/// enough that the burst allowance refilled during the pause lasts.
pub(super) const MEASURED_MARGIN: f64 = 0.97;
/// The decrease when the provider refuses again within `REPEAT_WINDOW` of the
/// end of the previous pause: the rate is far above the limit (the limit
/// dropped), so halve instead of creeping down by tenths.
const REPEAT_BETA: f64 = 0.5;
/// See `REPEAT_BETA`: two seconds is twice the usual `Retry-After`, within
/// which a provider's refilled allowance is gone only if the rate is well
/// above the limit.
pub(super) const REPEAT_WINDOW: Duration = Duration::from_secs(2);
/// Below this share of the rate at the last 429 the probe climbs fast; above
/// it, slowly. Equal to `BETA`, so an ordinary decrease lands on the knee and
/// only creeps up again: a provider's burst allowance lets the rate run past
/// its limit for a while before the 429, so the rate at the 429 overstates the
/// limit, and climbing back to it quickly would only repeat the event. The
/// fast climb is for deep cuts (slow start, a dropped limit).
const KNEE: f64 = BETA;
/// Climb per second below the knee, as a share of the current rate: back
/// from halving within about fifteen seconds, slowly enough near a limit that
/// dropped not to overrun it by much.
const FAST_PROBE_PER_SEC: f64 = 0.05;
/// Climb per second above the knee: slow enough that overrunning a provider
/// with a one-second burst allowance ends a few percent above its limit, and
/// fast enough to find a limit that rose by a tenth within a minute.
const SLOW_PROBE_PER_SEC: f64 = 0.002;
/// The slow probe speeds up the longer answers stay clean since the last
/// decrease: by 1 + (t / this)², so a limit far above the last 429 (a
/// cautious decrease, a limit that rose) is found within a couple of minutes,
/// while the usual cycle of twenty to forty seconds probes gently.
const PROBE_SPEEDUP: Duration = Duration::from_secs(30);
/// After a congestion event that measured the provider's limit while the
/// rate had settled (a limit that dropped, or a probe that overran), the
/// probe stays under the measurement this long before going past it: a
/// limit just measured is the best estimate there is, and a pace above it
/// only spends the provider's burst allowance until the next 429, whose
/// `Retry-After` pause (a second at least) costs a fifth of a five-second
/// window. Long enough that a run following a dropped limit keeps to it for
/// a minute; short enough that a limit that rose is found a minute or two
/// later. Not after slow start, whose measurement is only a first estimate
/// taken in a burst: the probe verifies it.
pub(super) const MEASURED_HOLD: Duration = Duration::from_secs(60);
/// See `MEASURED_HOLD`: how close to a limit just measured the probe goes
/// while it holds. The count that measures it is exact to one call in a
/// window of a few dozen, so a measurement may be a few percent off; a pace
/// a percent and a half under it overruns such a limit by so little that
/// the provider's burst allowance lasts the hold. A window of a handful of
/// calls (a limit of 100 after a 50 ms round trip: five) is off by more,
/// and the hold then keeps a pace that much too low, or meets a 429.
const HOLD_SHARE: f64 = 0.985;
/// A congestion event's measurement of the limit is held to (see
/// `MEASURED_HOLD`) only if its range is this narrow: the highest limit
/// the answers allow at most 6 % over the lowest, so that the middle is
/// within 3 % of the limit and the hold, 98.5 % of it, between 95.5 % and
/// 101.5 % of the limit: never under 0.95 of it, and over it by so little
/// that the provider's one-second burst allowance outlasts the hold. A
/// drain of five accepted calls (a limit of 100 after a 50 ms round trip)
/// is often wider, and is measured again.
const PRECISE_RANGE: f64 = 1.06;
/// Events in a row that measure the limit before it is held to, however
/// wide the range still is. Each costs a `Retry-After` pause of a second
/// and the fraction of a second spending what it refilled: six end about
/// nine seconds after a limit dropped (the benchmark's drop settled 5–9 s
/// after it), just inside the ten the target allows; with five, the
/// simulation's sweep of drains held one run under 95 calls/s.
const MAX_MEASURES: u32 = 6;
/// A coarse measurement is taken again only when the pace that met the
/// 429s was this far above the highest limit it allows: resumed at that
/// pace, payrun spends what the pause refilled within a fraction of a
/// second and the drain of the next event is as long as this one's. A
/// pace just over the limit (a probe that overran) would take a minute to
/// be refused again.
const REMEASURE_PACE: f64 = 1.5;
/// The hold never goes further over the lowest limit a measurement allows
/// than this. A range too wide to hold to its middle (drains of five calls,
/// measured again several times: 96 to 103 calls/s for a limit of 100) is
/// held no higher than this over its lowest limit: the drains bound the
/// limit from below more closely than from above (a refusal comes right
/// before each token; the accepted call after it may come later), and a
/// pace 2.5 % over the lowest limit, were the limit that low, spends a
/// one-second burst allowance in 40 s, when a 429 measures it again.
const HOLD_OVER_LOWEST: f64 = 1.025;
/// An increase needs at least this much time of clean answers at the current
/// rate (and at least one round trip): shorter epochs would act on noise.
pub(super) const MIN_EPOCH: Duration = Duration::from_millis(250);
/// An epoch in which fewer calls than this share of the rate allowed were
/// sent says nothing about the provider (payrun was the bottleneck): no
/// increase, as in TCP's congestion window validation.
pub(super) const APP_LIMITED_SHARE: f64 = 0.5;
/// Latency assumed before the first answer: a typical payout API round trip,
/// only used to size concurrency for the first few calls.
const INITIAL_LATENCY: Duration = Duration::from_millis(500);
/// Weight of a new latency sample in the moving average (TCP's SRTT uses 1/8).
const LATENCY_GAIN: f64 = 0.125;
/// Weight of each one-second sample of the delivered rate: averages over
/// about five seconds, long enough to smooth a `Retry-After` pause.
const DELIVERED_GAIN: f64 = 0.2;
/// Concurrency is rate × latency (Little's law) times this: jitter makes some
/// answers take much longer than the average, and a worker waiting for one
/// must not hold up the pace.
const CONCURRENCY_HEADROOM: f64 = 1.5;
/// Never fewer calls in flight than this, so one slow answer cannot stall a
/// run at a low rate.
const MIN_CONCURRENCY: usize = 2;
/// The pacer lets a slot be taken this early: absorbs the lateness of timer
/// wake-ups (about a millisecond each) that would otherwise lose slots at high
/// rates, while adding at most a fiftieth of a second's worth of calls to any
/// window.
const PACING_SLACK: Duration = Duration::from_millis(20);
/// Default longest `Retry-After` honoured by pausing: a provider asking for
/// more than a minute is out of quota or down, which an operator should
/// decide about, not a sleeping process.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// How the rate is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateMode {
    /// Find the provider's limit; never above `ceiling` calls/s if set.
    Auto { ceiling: Option<u32> },
    /// At most this many calls per second, ever; lower after a 429.
    Fixed(u32),
}

/// What the controller is configured with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub mode: RateMode,
    /// Most calls in flight at once, whatever Little's law suggests.
    pub max_concurrency: usize,
    /// Longest `Retry-After` honoured; longer ones are reported as too long.
    pub max_retry_after: Duration,
}

impl Settings {
    pub fn new(mode: RateMode, max_concurrency: usize) -> Settings {
        Settings {
            mode,
            max_concurrency: max_concurrency.max(1),
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
        }
    }
}

/// What a 429 led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimited {
    /// Sending is paused for the `Retry-After` asked.
    Paused { pause: Duration },
    /// The provider asked for longer than `max_retry_after`: sending is paused
    /// for the cap only, and the caller should consider stopping the run.
    TooLong { asked: Duration, pause: Duration },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    SlowStart,
    /// Probing after a congestion event at `loss_rate` calls/s.
    Probe {
        loss_rate: f64,
    },
}

/// A congestion event being measured: its answers, and the pace and phase
/// before it, which a provider pause (not a limit) gives back.
#[derive(Debug, Clone)]
struct Open {
    event: Event,
    before_rate: f64,
    before_phase: Phase,
    /// The event came soon after the previous pause ended.
    repeat: bool,
    /// What the events just before it measured, when they were too coarse
    /// to hold to and this one is to measure again.
    prior: Option<Measured>,
}

impl Open {
    /// What this event measured, with the events just before it that
    /// measured too coarsely to hold to: the limit lies in every one's
    /// range. An event of such a chain too short to measure (too few
    /// answers) leaves the range as it was. `onset` is the pace at which
    /// its 429s started.
    fn range(&self, reading: Reading, onset: f64) -> Option<Measured> {
        let before_phase = self.before_phase;
        match reading {
            Reading::Limit {
                lowest, highest, ..
            } => {
                let this = Measured {
                    lowest,
                    highest,
                    events: 1,
                    since: self.event.first(),
                };
                // Ranges that do not meet (a limit that changed again, an
                // answer handled very late): the latest stands, and still
                // counts towards the events in a row.
                Some(match self.prior {
                    Some(p) => p.and(this).unwrap_or(Measured {
                        events: p.events + 1,
                        since: p.since,
                        ..this
                    }),
                    None => this,
                })
            }
            Reading::Onset(_) => {
                // Too few calls accepted for a reading of its own, but maybe
                // enough to narrow a chain's range, or to begin one.
                let this = self.event.range().map(|(lowest, highest)| Measured {
                    lowest,
                    highest,
                    events: 1,
                    since: self.event.first(),
                });
                match (self.prior, this) {
                    (Some(p), this) => Some(this.and_then(|t| p.and(t)).unwrap_or(Measured {
                        events: p.events + 1,
                        ..p
                    })),
                    (None, Some(t))
                        if matches!(before_phase, Phase::Probe { .. })
                            && t.lowest > 0.0
                            && onset >= REMEASURE_PACE * t.highest =>
                    {
                        Some(t)
                    }
                    (None, _) => None,
                }
            }
            Reading::Pause => None,
        }
    }

    /// The pace and phase after this event, and the range and hold from
    /// now on, from what it measured so far (`reading`; `onset`, the pace
    /// at which its 429s started). Pure: the controller applies it.
    fn decision(&self, reading: Reading, onset: f64) -> Decision {
        let before_phase = self.before_phase;
        match (reading, self.range(reading, onset)) {
            // A provider pause, not a limit: everything as before it.
            (Reading::Pause, _) => Decision {
                rate: self.before_rate,
                phase: before_phase,
                limit: None,
            },
            (_, Some(range)) => {
                // The middle of the range, but never so high that the hold
                // overruns the lowest limit the range allows by more than
                // `HOLD_OVER_LOWEST`, nor above the pace that met the
                // 429s (a measurement above it is noise: answers bunched
                // by latency jitter).
                let measured = range
                    .middle()
                    .min(HOLD_OVER_LOWEST / HOLD_SHARE * range.lowest)
                    .min(onset);
                match before_phase {
                    // Too coarse to hold to: keep the pace that met the
                    // 429s, which spends what the pause refilled within a
                    // fraction of a second and measures again.
                    Phase::Probe { .. }
                        if range.coarse() && onset >= REMEASURE_PACE * range.highest =>
                    {
                        Decision {
                            rate: onset,
                            phase: Phase::Probe { loss_rate: onset },
                            limit: Some((Some(range), None)),
                        }
                    }
                    // Just under the middle of the measured range (at the
                    // hold already when that is under it: a wide range held
                    // near its lowest limit); the probe climbs fast up to
                    // the knee of the highest limit the measurement allows,
                    // slowly beyond.
                    _ => Decision {
                        rate: (MEASURED_MARGIN * range.middle().min(onset))
                            .min(HOLD_SHARE * measured),
                        phase: Phase::Probe {
                            loss_rate: range.highest.min(onset),
                        },
                        limit: Some((
                            Some(range),
                            match before_phase {
                                Phase::SlowStart => None,
                                Phase::Probe { .. } => {
                                    Some((measured, range.since + MEASURED_HOLD))
                                }
                            },
                        )),
                    },
                }
            }
            // Nothing to measure: a cut from the onset's pace.
            (_, None) => {
                let beta = cut_share(before_phase == Phase::SlowStart, self.repeat);
                Decision {
                    rate: onset * beta,
                    phase: Phase::Probe { loss_rate: onset },
                    limit: Some((None, None)),
                }
            }
        }
    }
}

/// The pace after `dt` seconds of clean answers at `rate` (one increase
/// epoch): slow start while `loss_rate` is `None`, else the probe after a
/// congestion event at `loss_rate` calls/s, `since_decrease` seconds ago.
/// Shared by the controller and the pace of several workers (`pooled`).
pub(super) fn grown(rate: f64, loss_rate: Option<f64>, since_decrease: f64, dt: f64) -> f64 {
    match loss_rate {
        None => rate * SLOW_START_GROWTH_PER_SEC.powf(dt),
        Some(loss_rate) => {
            let knee = KNEE * loss_rate;
            if rate < knee {
                (rate + FAST_PROBE_PER_SEC * rate * dt).min(knee)
            } else {
                let since = since_decrease / PROBE_SPEEDUP.as_secs_f64();
                rate + SLOW_PROBE_PER_SEC * (1.0 + since * since) * loss_rate * dt
            }
        }
    }
}

/// A grown pace while a measured `limit` is held to: not above
/// `HOLD_SHARE` of it, and never below the pace `before` the increase.
pub(super) fn held(rate: f64, limit: f64, before: f64) -> f64 {
    rate.min(HOLD_SHARE * limit).max(before)
}

/// The share of the onset's pace kept by a congestion event that measured
/// nothing: half after slow start or a repeat, else `BETA`.
pub(super) fn cut_share(slow_start: bool, repeat: bool) -> f64 {
    match (slow_start, repeat) {
        (true, _) => SLOW_START_BETA,
        (false, true) => REPEAT_BETA,
        (false, false) => BETA,
    }
}

/// A limit just measured, kept to until the instant (step 6 of
/// docs/rate.md).
type Hold = (f64, Instant);

/// What a congestion event decides ([`Open::decision`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Decision {
    rate: f64,
    phase: Phase,
    /// The measured range and the hold (limit, until) from now on; `None`
    /// (a provider pause) keeps both as they were.
    limit: Option<(Option<Measured>, Option<Hold>)>,
}

/// The range of limits one or more congestion events in a row measured.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Measured {
    lowest: f64,
    highest: f64,
    /// Events that measured it, and when the first began.
    events: u32,
    since: Instant,
}

impl Measured {
    /// Both ranges at once (the events in a row, the first one's start),
    /// `None` when they do not meet: the limit changed, or one event
    /// mismeasured.
    fn and(self, next: Measured) -> Option<Measured> {
        let (lowest, highest) = (self.lowest.max(next.lowest), self.highest.min(next.highest));
        (lowest <= highest).then_some(Measured {
            lowest,
            highest,
            events: self.events + 1,
            since: self.since,
        })
    }

    fn middle(&self) -> f64 {
        (self.lowest + self.highest) / 2.0
    }

    /// Too wide to hold to, while there is time to measure again.
    fn coarse(&self) -> bool {
        self.highest > PRECISE_RANGE * self.lowest && self.events < MAX_MEASURES
    }
}

/// The controller. Times passed in must not go backwards.
#[derive(Debug, Clone)]
pub struct Controller {
    settings: Settings,
    ceiling: f64,
    rate: f64,
    phase: Phase,
    /// Pacer: the earliest time of the next slot (GCRA's theoretical arrival).
    next_slot: Instant,
    paused_until: Option<Instant>,
    /// The last decrease: a 429 for a request sent before it is part of the
    /// event that caused it.
    last_decrease: Option<Instant>,
    /// The end of the pause of the last congestion event: a new event soon
    /// after it means the rate is far above the limit.
    event_pause_end: Option<Instant>,
    /// The congestion event last begun, measured while its pause lasts.
    open: Option<Open>,
    /// A limit measured after the rate had settled: the probe stays under
    /// `HOLD_SHARE` of it until the instant (`MEASURED_HOLD`).
    hold: Option<Hold>,
    /// What the last congestion event measured, with the events in a row
    /// before it that measured too coarsely to hold to.
    measured: Option<Measured>,
    /// The pace over the last seconds: the rate at which a refused call left.
    pace: PaceHistory,
    epoch_start: Instant,
    sent_in_epoch: u64,
    latency: Option<Duration>,
    rate_limited: u64,
    events: u64,
    /// Clean answers counted since `delivered_since`, folded each second
    /// into `delivered` (calls/s, moving average).
    delivered_since: Instant,
    delivered_count: u64,
    delivered: Option<f64>,
}

impl Controller {
    pub fn new(settings: Settings, now: Instant) -> Controller {
        let (ceiling, rate, phase) = match settings.mode {
            RateMode::Fixed(n) => {
                let n = f64::from(n.max(1));
                (n, n, Phase::Probe { loss_rate: n })
            }
            RateMode::Auto { ceiling } => {
                let c = ceiling.map_or(AUTO_MAX_RATE, |c| f64::from(c.max(1)));
                (c, AUTO_START_RATE.min(c), Phase::SlowStart)
            }
        };
        Controller {
            settings,
            ceiling,
            rate,
            phase,
            next_slot: now,
            paused_until: None,
            last_decrease: None,
            event_pause_end: None,
            open: None,
            hold: None,
            measured: None,
            pace: PaceHistory::new(rate, now),
            epoch_start: now,
            sent_in_epoch: 0,
            latency: None,
            rate_limited: 0,
            events: 0,
            delivered_since: now,
            delivered_count: 0,
            delivered: None,
        }
    }

    /// Takes a send slot if one is free at `now`; otherwise says when to ask
    /// again. Never grants more than the rate (plus `PACING_SLACK`), and
    /// never during a `Retry-After` pause.
    pub fn try_send(&mut self, now: Instant) -> Result<(), Instant> {
        if let Some(until) = self.paused_until {
            if now < until {
                return Err(until);
            }
            self.paused_until = None;
            // No burst after a pause: the pace restarts from its end, and so
            // does the evidence for an increase.
            self.next_slot = self.next_slot.max(until);
            self.start_epoch(until);
        }
        if now + PACING_SLACK < self.next_slot {
            return Err(self.next_slot - PACING_SLACK);
        }
        self.next_slot = self.next_slot.max(now) + self.interval();
        self.sent_in_epoch += 1;
        Ok(())
    }

    /// A clean answer to a request sent at `sent_at`: may raise the rate.
    pub fn on_success(&mut self, sent_at: Instant, now: Instant) {
        self.count_delivered(now);
        if self.draining(now)
            && let Some(open) = &mut self.open
        {
            open.event.accepted(sent_at, now);
        }
        let epoch = self.latency.unwrap_or(INITIAL_LATENCY).max(MIN_EPOCH);
        if sent_at < self.epoch_start || now < self.epoch_start + epoch {
            return;
        }
        let dt = (now - self.epoch_start).as_secs_f64();
        if (self.sent_in_epoch as f64) < APP_LIMITED_SHARE * self.rate * dt {
            self.start_epoch(now);
            return;
        }
        let loss_rate = match self.phase {
            Phase::SlowStart => None,
            Phase::Probe { loss_rate } => Some(loss_rate),
        };
        let since = self.last_decrease.map_or(0.0, |d| (now - d).as_secs_f64());
        let rate = grown(self.rate, loss_rate, since, dt);
        let rate = match self.hold {
            Some((limit, until)) if now < until => held(rate, limit, self.rate),
            _ => rate,
        };
        self.set_rate(rate, now);
        self.start_epoch(now);
    }

    /// A 429 answering a request sent at `sent_at`, asking to wait
    /// `retry_after`. Pauses all sending until then (capped), and sets the
    /// rate once per congestion event, from what its answers measure
    /// ([`super::measure`]): just under the limit they show, or, when they
    /// are too few, a cut from the pace at which the 429s started; a
    /// provider pause keeps the rate.
    pub fn on_rate_limited(
        &mut self,
        sent_at: Instant,
        retry_after: Duration,
        now: Instant,
    ) -> RateLimited {
        self.rate_limited += 1;
        let draining = self.draining(now);
        let pause = retry_after.min(self.settings.max_retry_after);
        let until = now + pause;
        self.paused_until = Some(self.paused_until.map_or(until, |u| u.max(until)));
        let new_event = self.last_decrease.is_none_or(|d| sent_at > d);
        if new_event {
            self.events += 1;
            let repeat = self
                .event_pause_end
                .is_some_and(|end| now < end + REPEAT_WINDOW);
            self.open = Some(Open {
                event: Event::new(self.pace.at(sent_at), retry_after, sent_at, now),
                before_rate: self.rate,
                before_phase: self.phase,
                repeat,
                prior: self.measured.filter(|m| repeat && m.coarse()),
            });
            self.last_decrease = Some(now);
            self.decide(now);
        } else if draining && let Some(open) = &mut self.open {
            open.event.refused(retry_after, sent_at, now);
            self.decide(now);
        }
        self.event_pause_end = self.paused_until;
        self.start_epoch(now);
        if retry_after > self.settings.max_retry_after {
            RateLimited::TooLong {
                asked: retry_after,
                pause,
            }
        } else {
            RateLimited::Paused { pause }
        }
    }

    /// The rate and phase after the open event, from what it measured so
    /// far. Called at each of its 429s: the pace matters only once its
    /// pause ends, by when every call in flight at its start has answered.
    fn decide(&mut self, now: Instant) {
        let Some(open) = &self.open else {
            return;
        };
        let reading = open.event.reading();
        let d = open.decision(reading, open.event.send_rate());
        if let Some((measured, hold)) = d.limit {
            self.measured = measured;
            self.hold = hold;
        }
        self.phase = d.phase;
        self.set_rate(d.rate.max(MIN_RATE), now);
        self.log_decision(reading, now);
    }

    /// Each 429 of an event refines its decision: the log shows what its
    /// answers measured and what the pace and the hold became, so an
    /// operator can tell a mismeasured limit from the provider's.
    fn log_decision(&self, reading: Reading, now: Instant) {
        let Some(open) = &self.open else {
            return;
        };
        let (refused, accepted, window, answered) = open.event.counts();
        tracing::debug!(
            ?reading,
            onset = open.event.send_rate(),
            refused,
            accepted,
            window_ms = window.as_secs_f64() * 1e3,
            answered_ms = answered.as_secs_f64() * 1e3,
            measured = ?self.measured.map(|m| (m.lowest, m.highest, m.events)),
            before = open.before_rate,
            rate = self.rate,
            hold = ?self.hold.map(|(limit, until)| (HOLD_SHARE * limit, until.saturating_duration_since(now))),
            "congestion event decision"
        );
    }

    /// Whether a `Retry-After` pause runs at `now`: every answer then is
    /// to a call that left before the congestion event that began it.
    fn draining(&self, now: Instant) -> bool {
        self.paused_until.is_some_and(|u| now < u)
    }

    fn set_rate(&mut self, rate: f64, now: Instant) {
        self.rate = rate.min(self.ceiling);
        self.pace.set(self.rate, now);
    }

    /// Any answer (clean, refused or failed) that took `latency`: feeds the
    /// moving average that sizes concurrency and the increase epoch.
    pub fn on_answer(&mut self, latency: Duration) {
        self.latency = Some(match self.latency {
            None => latency,
            Some(avg) => avg.mul_f64(1.0 - LATENCY_GAIN) + latency.mul_f64(LATENCY_GAIN),
        });
    }

    /// Calls in flight that keep the pace without flooding: rate × latency
    /// with headroom (Little's law), within `[2, max_concurrency]`.
    pub fn target_concurrency(&self) -> usize {
        let latency = self.latency.unwrap_or(INITIAL_LATENCY).as_secs_f64();
        let n = (self.rate * latency * CONCURRENCY_HEADROOM).ceil() as usize;
        n.max(MIN_CONCURRENCY).min(self.settings.max_concurrency)
    }

    /// Follows a pace decided elsewhere (the pace shared by several
    /// workers, `pooled`): a fixed limiter's rate and ceiling become `rate`.
    pub fn follow(&mut self, rate: f64, now: Instant) {
        self.ceiling = rate.max(MIN_RATE);
        self.set_rate(self.ceiling, now);
    }

    /// The pace in calls per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }
    /// The moving average of answer latency, once an answer was seen.
    pub fn latency(&self) -> Option<Duration> {
        self.latency
    }
    /// 429 answers seen.
    pub fn rate_limited_count(&self) -> u64 {
        self.rate_limited
    }
    /// Congestion events (decreases) so far.
    pub fn congestion_events(&self) -> u64 {
        self.events
    }
    /// The end of the current `Retry-After` pause, if one is running.
    pub fn paused_until(&self, now: Instant) -> Option<Instant> {
        self.paused_until.filter(|u| *u > now)
    }
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Clean answers per second, averaged over about the last five seconds:
    /// what the provider actually accepts, the figure to use for a fixed
    /// `rate` next time. The pace itself may sit a little above it while a
    /// provider's burst allowance lasts.
    pub fn delivered_rate(&self) -> Option<f64> {
        self.delivered
    }

    fn count_delivered(&mut self, now: Instant) {
        self.delivered_count += 1;
        let elapsed = now.saturating_duration_since(self.delivered_since);
        if elapsed >= Duration::from_secs(1) {
            let sample = self.delivered_count as f64 / elapsed.as_secs_f64();
            self.delivered = Some(match self.delivered {
                None => sample,
                Some(avg) => avg * (1.0 - DELIVERED_GAIN) + sample * DELIVERED_GAIN,
            });
            self.delivered_since = now;
            self.delivered_count = 0;
        }
    }

    fn interval(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate.max(MIN_RATE))
    }

    fn start_epoch(&mut self, now: Instant) {
        self.epoch_start = self.epoch_start.max(now);
        self.sent_in_epoch = 0;
    }
}

#[cfg(test)]
mod decision_tests;

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn auto(now: Instant) -> Controller {
        Controller::new(Settings::new(RateMode::Auto { ceiling: None }, 256), now)
    }

    /// Sends at the pace for `secs`, each call answered clean after `lat`.
    fn clean_for(c: &mut Controller, t: &mut Instant, secs: u64, lat: Duration) {
        let end = *t + Duration::from_secs(secs);
        let mut flight = std::collections::VecDeque::new();
        // Bounded: a pacer that grants (or refuses) without end fails the
        // test instead of spinning.
        let mut steps = 0;
        while *t < end {
            steps += 1;
            assert!(steps < 1_000_000, "the pacer never lets time pass");
            while flight.front().is_some_and(|s: &Instant| *s + lat <= *t) {
                let sent = flight.pop_front().unwrap();
                c.on_answer(lat);
                c.on_success(sent, sent + lat);
            }
            match c.try_send(*t) {
                Ok(()) => flight.push_back(*t),
                Err(at) => *t = at.min(flight.front().map_or(at, |s| *s + lat)).max(*t + MS),
            }
        }
    }

    #[test]
    fn rate_increases_while_answers_are_clean() {
        let mut t = Instant::now();
        let mut c = auto(t);
        assert_eq!(c.rate(), AUTO_START_RATE);
        clean_for(&mut c, &mut t, 3, 50 * MS);
        // Slow start: the growth of two and a half of the three seconds
        // (an epoch's worth of answers is still on its way).
        assert!(
            c.rate() > AUTO_START_RATE * SLOW_START_GROWTH_PER_SEC.powf(2.5),
            "rate {} after 3 clean seconds",
            c.rate()
        );
        assert_eq!(c.congestion_events(), 0);
    }

    #[test]
    fn rate_stops_at_the_ceiling() {
        let mut t = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Auto { ceiling: Some(30) }, 64), t);
        clean_for(&mut c, &mut t, 10, 50 * MS);
        assert_eq!(c.rate(), 30.0);
    }

    #[test]
    fn no_increase_when_payrun_sends_less_than_allowed() {
        let t0 = Instant::now();
        let mut c = auto(t0);
        c.try_send(t0).unwrap();
        // One call a second for ten seconds, all clean: the rate is unused.
        for i in 1..=10 {
            let t = t0 + Duration::from_secs(i);
            c.on_success(t - 50 * MS, t);
            c.try_send(t).unwrap();
        }
        assert_eq!(c.rate(), AUTO_START_RATE);
    }

    #[test]
    fn many_429s_of_one_event_decrease_once() {
        let mut t = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Fixed(100), 256), t);
        // 50 requests in flight, answered 429 together.
        let mut sent = Vec::new();
        for _ in 0..50 {
            let mut waited = 0;
            while c.try_send(t).is_err() {
                t += MS;
                waited += 1;
                assert!(waited < 1000, "no slot within a second at 100/s");
            }
            sent.push(t);
        }
        t += 100 * MS;
        for s in sent {
            c.on_rate_limited(s, Duration::from_secs(1), t);
        }
        assert_eq!(c.congestion_events(), 1);
        assert_eq!(c.rate_limited_count(), 50);
        assert!((c.rate() - 100.0 * BETA).abs() < 1e-9, "rate {}", c.rate());
    }

    /// Sends at the pace until `n` calls are in flight; returns their send
    /// times.
    fn send_n(c: &mut Controller, t: &mut Instant, n: usize) -> Vec<Instant> {
        let mut sent = Vec::new();
        // Bounded: a pacer that never grants fails the test, not hangs it.
        let mut steps = 0;
        while sent.len() < n {
            steps += 1;
            assert!(steps < 1_000_000, "the pacer never grants a slot");
            match c.try_send(*t) {
                Ok(()) => sent.push(*t),
                Err(at) => *t = at.max(*t + MS),
            }
        }
        sent
    }

    #[test]
    fn a_limit_measured_by_the_answers_sets_the_rate_just_under_it() {
        let t0 = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Fixed(200), 256), t0);
        // 80 calls at 200/s, answered 400 ms later by a provider that
        // accepts 100/s once its allowance is gone: every other one refused.
        for i in 0..80 {
            let s = t0 + i * 5 * MS;
            let at = s + 400 * MS;
            if i % 2 == 0 {
                c.on_rate_limited(s, Duration::from_secs(1), at);
            } else {
                c.on_answer(400 * MS);
                c.on_success(s, at);
            }
        }
        assert_eq!(c.congestion_events(), 1);
        let want = MEASURED_MARGIN * 100.0;
        assert!((c.rate() - want).abs() < 0.05 * want, "rate {}", c.rate());
    }

    #[test]
    fn a_provider_pause_keeps_the_learned_rate() {
        let mut t = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Fixed(100), 256), t);
        // 40 calls in flight, all refused as they arrive over 400 ms: the
        // provider refuses everything, whatever its limit.
        let sent = send_n(&mut c, &mut t, 40);
        for s in sent {
            c.on_rate_limited(s, Duration::from_secs(5), s + 400 * MS);
        }
        assert_eq!(c.congestion_events(), 1);
        assert_eq!(c.rate(), 100.0);
        assert!(c.paused_until(t).is_some());
        // One call in flight, refused with a wait no rate limit asks for.
        let t1 = t + Duration::from_secs(10);
        c.try_send(t1).unwrap();
        c.on_rate_limited(t1, Duration::from_secs(5), t1 + 50 * MS);
        assert_eq!(c.congestion_events(), 2);
        assert_eq!(c.rate(), 100.0);
    }

    #[test]
    fn backs_off_from_the_pace_at_which_429s_started() {
        let mut t = Instant::now();
        let mut c = auto(t);
        clean_for(&mut c, &mut t, 2, 50 * MS);
        let refused = send_n(&mut c, &mut t, 1)[0];
        let pace = c.rate();
        // Slow start goes on for the 400 ms the refused call takes.
        clean_for(&mut c, &mut t, 1, 400 * MS);
        assert!(c.rate() > 1.2 * pace, "rate {} pace {pace}", c.rate());
        c.on_rate_limited(refused, Duration::from_secs(1), t);
        assert!(
            (c.rate() - SLOW_START_BETA * pace).abs() < 1e-9,
            "rate {} pace {pace}",
            c.rate()
        );
    }

    #[test]
    fn a_429_for_a_request_sent_after_the_decrease_is_a_new_event() {
        let t0 = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Fixed(100), 256), t0);
        c.on_rate_limited(t0, Duration::from_secs(1), t0 + 100 * MS);
        let t1 = t0 + Duration::from_secs(10);
        c.try_send(t1).unwrap();
        c.on_rate_limited(t1, Duration::from_secs(1), t1 + 100 * MS);
        assert_eq!(c.congestion_events(), 2);
        assert!(c.rate() < 100.0 * BETA);
    }

    #[test]
    fn retry_after_pauses_all_sending_until_it_ends() {
        let t0 = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Fixed(1000), 256), t0);
        let verdict = c.on_rate_limited(t0, Duration::from_secs(5), t0);
        assert_eq!(
            verdict,
            RateLimited::Paused {
                pause: Duration::from_secs(5)
            }
        );
        let resume = t0 + Duration::from_secs(5);
        assert_eq!(c.try_send(t0 + Duration::from_secs(4)), Err(resume));
        assert_eq!(c.paused_until(t0), Some(resume));
        // After the pause: one slot, then the pace (no burst of saved-up slots).
        c.try_send(resume).unwrap();
        let mut granted = 1;
        while c.try_send(resume).is_ok() {
            granted += 1;
            assert!(granted < 1000, "the pacer grants without end");
        }
        assert!(
            granted <= 1 + (PACING_SLACK.as_secs_f64() * 1000.0) as usize + 1,
            "{granted}"
        );
    }

    #[test]
    fn retry_after_beyond_the_cap_is_capped_and_reported() {
        let t0 = Instant::now();
        let mut s = Settings::new(RateMode::Auto { ceiling: None }, 256);
        s.max_retry_after = Duration::from_secs(30);
        let mut c = Controller::new(s, t0);
        let verdict = c.on_rate_limited(t0, Duration::from_secs(3600), t0);
        assert_eq!(
            verdict,
            RateLimited::TooLong {
                asked: Duration::from_secs(3600),
                pause: Duration::from_secs(30)
            }
        );
        assert_eq!(c.paused_until(t0), Some(t0 + Duration::from_secs(30)));
    }

    #[test]
    fn a_later_shorter_retry_after_does_not_shorten_the_pause() {
        let t0 = Instant::now();
        let mut c = auto(t0);
        c.on_rate_limited(t0, Duration::from_secs(5), t0);
        c.on_rate_limited(t0, Duration::from_secs(1), t0 + MS);
        assert_eq!(c.paused_until(t0), Some(t0 + Duration::from_secs(5)));
    }

    #[test]
    fn concurrency_follows_rate_times_latency_within_the_maximum() {
        let t0 = Instant::now();
        let mut c = Controller::new(Settings::new(RateMode::Fixed(100), 64), t0);
        c.on_answer(Duration::from_millis(200));
        // 100/s × 0.2 s × 1.5 headroom = 30.
        assert_eq!(c.target_concurrency(), 30);
        for _ in 0..100 {
            c.on_answer(Duration::from_secs(2));
        }
        assert_eq!(c.target_concurrency(), 64);
        let mut slow = Controller::new(Settings::new(RateMode::Fixed(1), 64), t0);
        slow.on_answer(Duration::from_millis(10));
        assert_eq!(slow.target_concurrency(), MIN_CONCURRENCY);
    }
}
