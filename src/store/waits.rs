//! How long commands waited for their commit lately: the longest wait of
//! the last five to ten seconds, which the engine sizes its worker pool by
//! (each worker waits for one commit per provider call, and an fsync that
//! stalls behind other writes to the disk holds every worker waiting on
//! it). Pure: every method takes the time of the wait it records.

use std::time::{Duration, Instant};

/// A wait is remembered for at least this long and at most twice this.
pub const WINDOW: Duration = Duration::from_secs(5);

/// The longest wait of the current window and of the one before it.
#[derive(Debug, Clone, Copy)]
pub struct Waits {
    since: Instant,
    current: Duration,
    previous: Duration,
}

impl Waits {
    pub fn new(now: Instant) -> Waits {
        Waits {
            since: now,
            current: Duration::ZERO,
            previous: Duration::ZERO,
        }
    }

    /// A command answered at `now` after waiting `wait`.
    pub fn record(&mut self, wait: Duration, now: Instant) {
        self.roll(now);
        self.current = self.current.max(wait);
    }

    /// The longest wait recorded in the last [`WINDOW`] at least.
    pub fn longest(&mut self, now: Instant) -> Duration {
        self.roll(now);
        self.current.max(self.previous)
    }

    fn roll(&mut self, now: Instant) {
        let age = now.saturating_duration_since(self.since);
        if age < WINDOW {
            return;
        }
        // One window on: the current one becomes the previous; more than
        // one: nothing was recorded in the one before now's.
        self.previous = if age < 2 * WINDOW {
            self.current
        } else {
            Duration::ZERO
        };
        self.current = Duration::ZERO;
        self.since = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_longest_wait_is_kept_for_one_to_two_windows() {
        let t0 = Instant::now();
        let mut w = Waits::new(t0);
        assert_eq!(w.longest(t0), Duration::ZERO);
        w.record(800 * MS, t0 + 100 * MS);
        w.record(3 * MS, t0 + 200 * MS);
        assert_eq!(w.longest(t0 + 300 * MS), 800 * MS);
        // Into the next window: still remembered.
        w.record(5 * MS, t0 + WINDOW + 10 * MS);
        assert_eq!(w.longest(t0 + WINDOW + 20 * MS), 800 * MS);
        // A window later: only what the last window saw.
        assert_eq!(w.longest(t0 + 2 * WINDOW + 20 * MS), 5 * MS);
        // Nothing recorded for two windows: nothing remembered.
        assert_eq!(w.longest(t0 + 5 * WINDOW), Duration::ZERO);
    }

    #[test]
    fn a_quiet_gap_forgets_an_old_stall_at_once() {
        let t0 = Instant::now();
        let mut w = Waits::new(t0);
        w.record(2000 * MS, t0 + MS);
        // The first look after two windows: the stall is too old to count.
        w.record(4 * MS, t0 + 2 * WINDOW + MS);
        assert_eq!(w.longest(t0 + 2 * WINDOW + 2 * MS), 4 * MS);
    }
}
