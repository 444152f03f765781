//! `rate = "auto"` shared by every worker of a run (several `payrun run`
//! processes on one PostgreSQL checkpoint): one pace for all of them, found
//! and kept as one worker's controller finds it ([`super::aimd`]), its state
//! kept in the database (`rate_paces`) so that N workers together settle just
//! under the provider's limit instead of each adapting on its own.
//!
//! Pure: the state ([`Pace`]) and what each answer a worker reports does to
//! it ([`Pace::seen`]), every time in microseconds of the database server's
//! clock, which every worker shares. The store applies it under the row's
//! lock (one worker at a time); the calls leave on the GCRA schedule of the
//! same row at the pace it holds (`limiter::shared`), so the provider sees
//! one pace, not N.
//!
//! The same steps as one worker's controller: a slow start, one decision per
//! congestion event (a 429 for a call sent after the last decrease begins
//! one, every later one belongs to it), the `Retry-After` pause held by every
//! worker, then the probe (`aimd::grown`). The event's measurement is the
//! share of the calls in flight that the provider accepted: they left on the
//! one schedule at the onset's pace, and an empty token bucket accepts the
//! limit's worth of them, so `limit = onset × accepted / answered`, counted
//! over the answers of every worker. Answers too few to measure: the
//! controller's cut from the onset's pace. A measurement after the pace had
//! settled is held to for a minute, as one worker does.

use super::aimd::{
    self, APP_LIMITED_SHARE, AUTO_START_RATE, MEASURED_HOLD, MEASURED_MARGIN, MIN_RATE,
    REPEAT_WINDOW,
};

/// A state untouched this long (µs) is a past run's: the next run starts
/// afresh with a slow start, as the provider's limit may have changed.
pub const STALE_US: i64 = 10 * 60 * 1_000_000;
/// Fewest answers of an event's drain that measure the limit: the share is
/// exact to one call in that many.
const MIN_ANSWERED: i64 = 5;
/// Refusals with nothing accepted that make a provider pause, not a limit:
/// the pace is kept (as one worker's controller does).
const PAUSE_REFUSALS: i64 = 3;

/// The shared pace of one provider account, as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    /// Calls per second for all workers together.
    pub rate: f64,
    /// `None` in slow start; else the probe after an event at this pace.
    pub loss_rate: Option<f64>,
    /// A measured limit the probe stays under until the instant.
    pub hold: Option<(f64, i64)>,
    /// When the last event began: a 429 for a call that left before it
    /// belongs to it.
    pub last_decrease_us: Option<i64>,
    /// No call leaves before this (the `Retry-After` of the last event).
    pub paused_until_us: i64,
    /// The increase epoch: since when, and calls sent since (slots
    /// reserved, less those the workers said they let pass).
    pub epoch_start_us: i64,
    pub epoch_sent: i64,
    /// Congestion events so far: the current one's number.
    pub events: i64,
    pub rate_limited: i64,
    /// The current event: the slot of its first refused call, the pace
    /// then, the pace and the probe's loss rate before it (`None`: it
    /// began in slow start), whether it came right after the last pause,
    /// and its answers counted so far.
    pub drain_from_us: Option<i64>,
    pub onset: f64,
    pub before_rate: f64,
    pub before_loss_rate: Option<f64>,
    pub repeat: bool,
    pub drain_accepted: i64,
    pub drain_refused: i64,
    pub updated_us: i64,
}
/// One answer a worker reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seen {
    /// The slot (server µs) its call left in, and the pace then.
    pub slot_us: i64,
    pub rate: f64,
    /// `None`: accepted; else a 429 asking to wait this long (µs, capped).
    pub retry_after_us: Option<i64>,
    /// The event the worker counted it for (see [`Pace::drains`]), if any.
    pub event: Option<i64>,
}

impl Pace {
    /// A new pace: slow start from `AUTO_START_RATE`, under `ceiling`.
    pub fn new(ceiling: f64, now: i64) -> Pace {
        let rate = AUTO_START_RATE.min(ceiling);
        Pace {
            rate,
            loss_rate: None,
            hold: None,
            last_decrease_us: None,
            paused_until_us: now,
            epoch_start_us: now,
            epoch_sent: 0,
            events: 0,
            rate_limited: 0,
            drain_from_us: None,
            onset: rate,
            before_rate: rate,
            before_loss_rate: None,
            repeat: false,
            drain_accepted: 0,
            drain_refused: 0,
            updated_us: now,
        }
    }

    /// The stored pace as a worker joining at `now` takes it: a past run's
    /// ([`STALE_US`]) starts afresh.
    pub fn resume(self, ceiling: f64, now: i64) -> Pace {
        if now - self.updated_us > STALE_US {
            Pace::new(ceiling, now)
        } else {
            self
        }
    }

    /// Whether an answer for the call in `slot_us`, handled at `now`, is
    /// part of the current event's drain, to be counted by [`Pace::seen`]:
    /// it left at or after the event's first refused call and came back
    /// before the pause ended.
    pub fn drains(&self, slot_us: i64, now: i64) -> bool {
        self.drain_from_us
            .is_some_and(|from| slot_us >= from && now < self.paused_until_us)
    }

    /// Whether a clean answer for `slot_us` at `now` may end the increase
    /// epoch of `epoch_us` (worth a report).
    pub fn epoch_due(&self, slot_us: i64, now: i64, epoch_us: i64) -> bool {
        slot_us >= self.epoch_start_us && now >= self.epoch_start_us + epoch_us
    }

    /// What one answer, reported at `now`, does to the pace (never above
    /// `ceiling`); `epoch_us` is the increase epoch (the reporter's answer
    /// latency, at least `aimd::MIN_EPOCH`).
    pub fn seen(&mut self, s: Seen, now: i64, ceiling: f64, epoch_us: i64) {
        // Times never go backwards: a report computed before another
        // worker's, and applied after it, counts as of the later one.
        let now = now.max(self.updated_us);
        self.updated_us = now;
        match s.retry_after_us {
            Some(wait) => self.refused(s, wait, now),
            None if self.drains(s.slot_us, now) && s.event == Some(self.events) => {
                self.drain_accepted += 1;
                self.decide();
            }
            None => self.clean(s.slot_us, now, epoch_us),
        }
        self.rate = self.rate.min(ceiling).max(MIN_RATE);
    }

    fn refused(&mut self, s: Seen, wait: i64, now: i64) {
        self.rate_limited += 1;
        // A call that left after the event began, but in its pause (on a
        // slot another worker had reserved before it), belongs to it.
        let new_event = self.last_decrease_us.is_none_or(|d| s.slot_us > d)
            && s.slot_us >= self.paused_until_us;
        if new_event {
            self.repeat = self.loss_rate.is_some()
                && self.last_decrease_us.is_some()
                && now < self.paused_until_us + REPEAT_WINDOW.as_micros() as i64;
            self.events += 1;
            self.last_decrease_us = Some(now);
            self.drain_from_us = Some(s.slot_us);
            self.onset = s.rate;
            self.before_rate = self.rate;
            self.before_loss_rate = self.loss_rate;
            self.drain_accepted = 0;
            self.drain_refused = 1;
            self.paused_until_us = self.paused_until_us.max(now + wait);
            self.decide();
        } else {
            self.paused_until_us = self.paused_until_us.max(now + wait);
            // Each 429 is reported once, when it comes: no event to check.
            if self.drains(s.slot_us, now) {
                self.drain_refused += 1;
                self.decide();
            }
        }
        // No increase for what was sent before the pause ends.
        self.epoch_start_us = self.epoch_start_us.max(self.paused_until_us);
        self.epoch_sent = 0;
    }

    /// The current event's decision from its answers so far, made again at
    /// each (the pace matters only once the pause ends, by when the calls
    /// in flight at its start have answered): as one worker's controller,
    /// just under the limit the answers measure, held to for a minute after
    /// the probe; too few answers, a cut from the onset's pace; everything
    /// refused, a provider pause that keeps the pace.
    fn decide(&mut self) {
        let slow_start = self.before_loss_rate.is_none();
        let (accepted, answered) = (
            self.drain_accepted,
            self.drain_accepted + self.drain_refused,
        );
        if accepted == 0 && self.drain_refused >= PAUSE_REFUSALS && !self.repeat {
            self.rate = self.before_rate;
            self.loss_rate = self.before_loss_rate;
            return;
        }
        if answered >= MIN_ANSWERED && accepted > 0 && !self.repeat {
            let measured = self.onset * accepted as f64 / answered as f64;
            self.rate = MEASURED_MARGIN * measured;
            self.loss_rate = Some(measured);
            let since = self.last_decrease_us.unwrap_or(self.updated_us);
            self.hold =
                (!slow_start).then_some((measured, since + MEASURED_HOLD.as_micros() as i64));
            return;
        }
        self.rate = self.onset * aimd::cut_share(slow_start, self.repeat);
        self.loss_rate = Some(self.onset);
        self.hold = None;
    }

    /// A clean answer outside an event's drain: ends the increase epoch
    /// when it is due, and raises the pace unless the workers together
    /// sent less than the pace allowed (then they were the bottleneck).
    fn clean(&mut self, slot_us: i64, now: i64, epoch_us: i64) {
        if !self.epoch_due(
            slot_us,
            now,
            epoch_us.max(aimd::MIN_EPOCH.as_micros() as i64),
        ) {
            return;
        }
        let dt = (now - self.epoch_start_us) as f64 / 1e6;
        if (self.epoch_sent as f64) >= APP_LIMITED_SHARE * self.rate * dt {
            let since = self
                .last_decrease_us
                .map_or(0.0, |d| (now - d) as f64 / 1e6);
            let grown = aimd::grown(self.rate, self.loss_rate, since, dt);
            self.rate = match self.hold {
                Some((limit, until)) if now < until => aimd::held(grown, limit, self.rate),
                _ => grown,
            };
        }
        self.epoch_start_us = now;
        self.epoch_sent = 0;
    }

    /// Reserving `n` slots at `now` (what the store's statement does, in
    /// SQL, atomically): the first slot — never before now nor in the
    /// pause — the interval, and the schedule's next free instant after.
    /// The slots count as sent in the increase epoch until the worker says
    /// otherwise: `unused`, the slots of this epoch it reserved before and
    /// let pass (a worker short of work or of CPU), are taken back.
    pub fn reserve(
        &mut self,
        tat_us: i64,
        n: u32,
        ceiling: f64,
        now: i64,
        unused: Unused,
    ) -> (i64, i64, i64) {
        let interval = interval_us(self.rate.min(ceiling));
        let first = tat_us.max(self.paused_until_us).max(now);
        let unused = if unused.epoch_start_us == self.epoch_start_us {
            unused.slots
        } else {
            0
        };
        self.epoch_sent = (self.epoch_sent + i64::from(n) - unused).max(0);
        (first, interval, first + interval * i64::from(n))
    }
}

/// Slots a worker reserved in the increase epoch that began at
/// `epoch_start_us` and let pass unused: the pace counts calls sent, not
/// slots reserved, to decide whether the workers kept up with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Unused {
    pub epoch_start_us: i64,
    pub slots: i64,
}

impl Unused {
    /// One more slot, reserved in the epoch of `epoch_start_us`, let pass:
    /// an older epoch's are forgotten (that epoch is decided).
    pub fn add(&mut self, epoch_start_us: i64) {
        if epoch_start_us > self.epoch_start_us {
            *self = Unused {
                epoch_start_us,
                slots: 0,
            };
        }
        if epoch_start_us == self.epoch_start_us {
            self.slots += 1;
        }
    }
}

/// What reserving slots of the shared pace answers: the first slot, the
/// server's now and the interval (µs), and the pace after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    pub first_us: i64,
    pub now_us: i64,
    pub interval_us: i64,
    pub pace: Pace,
}

/// The database side of the shared pace (the store implements it on a
/// connection of its own; this module knows no SQL).
pub trait PaceStore: Send + 'static {
    /// Reserves `n` consecutive slots at the pace, after its pause, and
    /// takes back the `unused` ones ([`Pace::reserve`]).
    fn reserve(&mut self, n: u32, unused: Unused) -> anyhow::Result<Reservation>;
    /// Applies `seen` ([`Pace::seen`]) under the row's lock; the pace after.
    fn report(&mut self, seen: Vec<Seen>, epoch_us: i64) -> anyhow::Result<Pace>;
}

/// The emission interval of `rate` calls/s in µs, rounded up (never
/// faster than the rate): `CEIL(1000000 / rate)` in the store's statement.
pub fn interval_us(rate: f64) -> i64 {
    (1e6 / rate.max(MIN_RATE)).ceil() as i64
}

/// Answers a worker remembers, to count them for an event it learns of
/// after they came (another worker's 429 began it).
const RECENT: usize = 512;

/// A worker's side of the shared pace: which of its answers to report, so
/// that the shared state sees every 429, every answer of an event's drain
/// (once each), and a clean answer when an increase epoch is due, and
/// nothing else (a clean answer at full speed costs no database call).
#[derive(Debug, Default)]
pub struct Reporter {
    /// Recent answers, and whether each was counted for an event.
    recent: std::collections::VecDeque<(Seen, bool)>,
    /// The epoch this worker last reported a clean answer for.
    epoch_reported: Option<i64>,
}

impl Reporter {
    /// An answer handled at `now` (server µs), with the worker's latest
    /// view of the pace: what to report of it now.
    pub fn answer(&mut self, view: &Pace, s: Seen, now: i64, epoch_us: i64) -> Option<Seen> {
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        if s.retry_after_us.is_some() {
            self.recent.push_back((s, true));
            return Some(s);
        }
        if view.drains(s.slot_us, now) {
            let s = Seen {
                event: Some(view.events),
                ..s
            };
            self.recent.push_back((s, true));
            return Some(s);
        }
        self.recent.push_back((s, false));
        let epoch = epoch_us.max(aimd::MIN_EPOCH.as_micros() as i64);
        if view.epoch_due(s.slot_us, now, epoch) && self.epoch_reported != Some(view.epoch_start_us)
        {
            self.epoch_reported = Some(view.epoch_start_us);
            return Some(s);
        }
        None
    }

    /// The view changed (a reservation's answer, a report's): this
    /// worker's clean answers of the current event's drain that it has
    /// not counted yet (they came before it learnt of the event).
    pub fn catch_up(&mut self, view: &Pace, now: i64) -> Vec<Seen> {
        let mut out = Vec::new();
        if view.drain_from_us.is_none() || now >= view.paused_until_us {
            return out;
        }
        for (s, counted) in &mut self.recent {
            if !*counted && view.drains(s.slot_us, now) {
                *counted = true;
                out.push(Seen {
                    event: Some(view.events),
                    ..*s
                });
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "pooled_tests.rs"]
mod tests;
