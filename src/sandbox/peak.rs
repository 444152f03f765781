//! The sandbox's busiest second: the highest number of provider calls that
//! arrived within any one-second window (`requests.peakPerSecond` in the
//! ledger). Several payrun workers sharing one rate limit are checked with
//! it from outside: their combined rate is what the provider saw, whatever
//! each worker believes it sent.
//!
//! Exact, not sampled: every arrival closes the window that ends at it
//! (the half-open second `(t - 1 s, t]`), and a window holding the most
//! arrivals can always be slid until it ends at one of them, so the
//! highest count over those windows is the highest over all windows.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The length of the window.
const WINDOW: Duration = Duration::from_secs(1);

/// Arrivals of the last second and the highest count seen so far. Memory is
/// the calls of one second, whatever the run's length.
#[derive(Debug, Default)]
pub(crate) struct PeakRate {
    inner: Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    arrivals: VecDeque<Instant>,
    peak: u64,
}

impl PeakRate {
    /// Counts one call arriving now.
    pub(crate) fn record(&self) {
        let mut w = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        // Taken under the lock, so arrivals are in order.
        w.record(Instant::now());
    }

    /// The most calls seen within any one second so far.
    pub(crate) fn peak(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).peak
    }
}

impl Window {
    /// Counts an arrival at `at` (never earlier than the previous one).
    fn record(&mut self, at: Instant) {
        while let Some(&first) = self.arrivals.front() {
            if at.duration_since(first) < WINDOW {
                break;
            }
            self.arrivals.pop_front();
        }
        self.arrivals.push_back(at);
        self.peak = self.peak.max(self.arrivals.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Records arrivals at the given offsets (ms) and returns the peak.
    fn peak_of(offsets: &[u64]) -> u64 {
        let t0 = Instant::now();
        let mut w = Window::default();
        for &o in offsets {
            w.record(t0 + ms(o));
        }
        w.peak
    }

    #[test]
    fn no_calls_is_zero_and_one_call_is_one() {
        assert_eq!(PeakRate::default().peak(), 0);
        assert_eq!(peak_of(&[0]), 1);
    }

    #[test]
    fn a_steady_rate_peaks_at_that_rate() {
        // 100 calls/s for 5 s: every window holds 100.
        let offsets: Vec<u64> = (0..500).map(|i| i * 10).collect();
        assert_eq!(peak_of(&offsets), 100);
    }

    #[test]
    fn a_burst_straddling_two_calendar_seconds_is_seen_whole() {
        // 60 calls in 0.9-1.1 s: calendar seconds would count 30 and 30.
        let offsets: Vec<u64> = (0..60).map(|i| 900 + i * 200 / 60).collect();
        assert_eq!(peak_of(&offsets), 60);
    }

    #[test]
    fn calls_exactly_one_second_apart_are_in_different_windows() {
        assert_eq!(peak_of(&[0, 1000, 2000]), 1);
        assert_eq!(peak_of(&[0, 999, 1998]), 2);
    }

    #[test]
    fn the_peak_is_kept_after_the_rate_falls() {
        let mut offsets: Vec<u64> = (0..50).map(|i| i * 2).collect();
        offsets.extend((0..10).map(|i| 5000 + i * 500));
        assert_eq!(peak_of(&offsets), 50);
    }

    #[test]
    fn memory_is_one_second_of_calls() {
        let t0 = Instant::now();
        let mut w = Window::default();
        for i in 0..10_000 {
            w.record(t0 + ms(i));
        }
        assert_eq!(w.arrivals.len(), 1000);
        assert_eq!(w.peak, 1000);
    }

    #[test]
    fn counts_from_several_threads() {
        let p = std::sync::Arc::new(PeakRate::default());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || (0..250).for_each(|_| p.record()))
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        // 1000 calls in far less than a second.
        assert_eq!(p.peak(), 1000);
    }
}
