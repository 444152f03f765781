//! The provider's limit, measured from the answers of one congestion event
//! instead of guessed by a blind multiplicative cut. Pure: no clock of its
//! own, every method takes the time of the answer it records.
//!
//! A token-bucket provider (the usual kind, and the sandbox) refuses a call
//! only when its bucket is empty. Between two refusals the bucket was empty
//! at both ends, so the calls it accepted in between are the tokens it made
//! in between: `L × window`, give or take one. During a `Retry-After` pause
//! payrun sends nothing, and the answers that still arrive are the calls
//! that were in flight when the first 429 came back; while they arrive
//! faster than the limit, some are refused and the rest are accepted at
//! exactly the limit. That drain is the measurement ([`Event::reading`]).
//!
//! Counting alone is exact only to one call, a fifth of a drain of five
//! (a limit of 100 after a 50 ms round trip). The order of the answers says
//! more: an empty bucket makes a token every `1/L` exactly, each accepted
//! call is the first to arrive after one, and a refused call arrived before
//! the next. So the token instants lie each between an accepted answer and
//! the refusal before it, and lie `1/L` apart: every pair of a refusal and
//! an accepted answer bounds `1/L` ([`bracket`]), and the tightest bounds
//! bracket the limit, often to a few percent where the count says a fifth.
//! The answers are taken in the order payrun handled them, which is the
//! order the provider decided them in (it answers as it decides, whatever
//! the latency), each allowed [`ANSWER_SLACK`] of lateness.
//!
//! When too few answers arrive to measure (a low rate, a short latency),
//! what is left is the pace at which the refused call left: the rate at
//! which 429s started ([`PaceHistory`]), which the caller backs off from.
//! Refusals with nothing accepted are a provider pause or outage, which says
//! nothing about the limit (the learned rate is kept), when they span a
//! window in which any plausible limit would have let several calls
//! through, or when the provider asks to wait longer than a token bucket
//! ever does at that pace (one call's worth of time, in whole seconds).

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Fewest accepted answers between the first and the last refusal of an
/// event for the window to measure the limit: the count is exact to one
/// call, so five calls measure it to within a fifth, and the probe corrects
/// the rest.
const MIN_ACCEPTED: u64 = 5;
/// Refusals of one event, none accepted between them, that may mean a
/// provider pause (with [`PAUSE_EXPECTED`]).
const PAUSE_REFUSALS: u64 = 3;
/// A limit of half the pace at which 429s started would have accepted this
/// many calls in the window: seeing none means the provider refused
/// everything (a pause), not just the excess over a limit.
const PAUSE_EXPECTED: f64 = 3.0;
/// The answers of an event are timed when payrun handles them. On a loaded
/// machine a process idle in its `Retry-After` pause waits for the CPU when
/// an answer wakes it, so the answers draining during the pause are handled
/// a few milliseconds late while the first 429 (which came while payrun
/// was busy sending) was not: the window stretches, and over a drain of one
/// 50 ms round trip, 3 ms more read a limit 6 % low (what a run that
/// settled 55 s after a drop had measured and held to). When the event's
/// answers all took about as long (their latencies spread by at most this
/// share of the window), the window is taken between the instants the two
/// refused calls left instead: they took as long to reach the provider, and
/// a call's send instant is taken while payrun is busy sending. A wider
/// spread is latency jitter, over which the answers' own instants are the
/// provider's order; a late handling is then small beside the window.
const STEADY_LATENCY_SHARE: f64 = 0.25;
/// How much later than the provider decided it payrun may handle one
/// answer beside another, for [`bracket`]: its wake-up after an idle wait,
/// a few answers read in one go. An answer later than that (payrun stalled
/// for longer) may bracket the limit wrongly: the bracket is then checked
/// against the count, and dropped if the two disagree.
const ANSWER_SLACK: Duration = Duration::from_micros(500);
/// Answers of one event kept for [`bracket`]: a drain of a round trip at a
/// few hundred calls a second, with room to spare; later ones are counted
/// but not ordered.
const MAX_ORDERED: usize = 256;
/// Rate changes remembered to find the pace of a past send: the rate
/// changes at most every quarter second (the increase epoch) or at a 429, so
/// this covers at least the last eight seconds.
const HISTORY: usize = 32;

/// The pace of the last few seconds, to find the rate at which a refused
/// call left.
#[derive(Debug, Clone)]
pub struct PaceHistory {
    /// (since, calls/s), oldest first.
    changes: VecDeque<(Instant, f64)>,
}

impl PaceHistory {
    pub fn new(rate: f64, now: Instant) -> PaceHistory {
        let mut changes = VecDeque::with_capacity(HISTORY);
        changes.push_back((now, rate));
        PaceHistory { changes }
    }

    /// The pace is `rate` from `now` on.
    pub fn set(&mut self, rate: f64, now: Instant) {
        if self.changes.back().is_some_and(|&(_, r)| r == rate) {
            return;
        }
        if self.changes.len() == HISTORY {
            self.changes.pop_front();
        }
        self.changes.push_back((now, rate));
    }

    /// The pace at `t` (the oldest one remembered for a time before it).
    pub fn at(&self, t: Instant) -> f64 {
        self.changes
            .iter()
            .rev()
            .find(|(since, _)| *since <= t)
            .or(self.changes.front())
            .map_or(0.0, |&(_, r)| r)
    }
}

/// What the answers of one congestion event say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reading {
    /// The provider accepted calls at its limit while refusing the rest:
    /// between `lowest` and `highest` calls/s, `measured` the middle of it
    /// (a short window leaves a range: the count is exact to one call, the
    /// order of the answers narrows it).
    Limit {
        measured: f64,
        lowest: f64,
        highest: f64,
    },
    /// It refused everything for a while: a pause or outage, not a limit.
    Pause,
    /// Too few answers to tell: 429s started when calls left at this pace.
    Onset(f64),
}

/// The answers of one congestion event, from its first 429 to the end of
/// the pause it caused.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The pace when the first refused call left.
    send_rate: f64,
    /// The longest `Retry-After` of its refusals.
    asked: Duration,
    /// When the first and the last refusal came back, and when their calls
    /// left.
    first: Instant,
    last: Instant,
    first_sent: Instant,
    last_sent: Instant,
    /// The shortest and the longest time any of its answers took.
    fastest: Duration,
    slowest: Duration,
    refused: u64,
    /// Clean answers since the first refusal, and up to the last one.
    accepted: u64,
    accepted_by_last: u64,
    /// Every answer from the first refusal on, in the order handled: when
    /// it was handled, and whether it was accepted (up to [`MAX_ORDERED`]).
    order: Vec<(Instant, bool)>,
}

impl Event {
    /// An event whose first 429, asking to wait `asked`, came back at `now`
    /// for a call that left at `sent` at the pace `send_rate`.
    pub fn new(send_rate: f64, asked: Duration, sent: Instant, now: Instant) -> Event {
        let took = now.saturating_duration_since(sent);
        Event {
            send_rate,
            asked,
            first: now,
            last: now,
            first_sent: sent,
            last_sent: sent,
            fastest: took,
            slowest: took,
            refused: 1,
            accepted: 0,
            accepted_by_last: 0,
            order: vec![(now, false)],
        }
    }

    /// Another 429 of this event, asking to wait `asked`, answered at `now`
    /// for a call that left at `sent`.
    pub fn refused(&mut self, asked: Duration, sent: Instant, now: Instant) {
        self.refused += 1;
        self.asked = self.asked.max(asked);
        if now >= self.last {
            self.last = now;
            self.last_sent = sent;
        }
        self.accepted_by_last = self.accepted;
        self.took(sent, now);
        self.ordered(now, false);
    }

    /// A clean answer during the event, at `now` for a call that left at
    /// `sent`.
    pub fn accepted(&mut self, sent: Instant, now: Instant) {
        self.accepted += 1;
        self.took(sent, now);
        self.ordered(now, true);
    }

    fn ordered(&mut self, now: Instant, accepted: bool) {
        if self.order.len() < MAX_ORDERED {
            self.order.push((now, accepted));
        }
    }

    fn took(&mut self, sent: Instant, now: Instant) {
        let took = now.saturating_duration_since(sent);
        self.fastest = self.fastest.min(took);
        self.slowest = self.slowest.max(took);
    }

    /// When its first 429 came back.
    pub fn first(&self) -> Instant {
        self.first
    }

    /// The pace at which 429s started.
    pub fn send_rate(&self) -> f64 {
        self.send_rate
    }

    /// Refusals so far, calls accepted between the first and the last of
    /// them, the window [`Event::reading`] divides by and the one between
    /// their answers: for the log.
    pub fn counts(&self) -> (u64, u64, Duration, Duration) {
        (
            self.refused,
            self.accepted_by_last,
            self.window(),
            self.last - self.first,
        )
    }

    /// The time between the first and the last refusal at the provider:
    /// between their calls' send instants when every answer took about as
    /// long (see [`STEADY_LATENCY_SHARE`]), else between their answers.
    fn window(&self) -> Duration {
        let answered = self.last - self.first;
        let sent = self.last_sent.saturating_duration_since(self.first_sent);
        let spread = (self.slowest - self.fastest).as_secs_f64();
        let steady = spread <= STEADY_LATENCY_SHARE * answered.as_secs_f64();
        if steady && !answered.is_zero() && !sent.is_zero() {
            sent
        } else {
            answered
        }
    }

    /// The limits under which the provider would have answered as it did:
    /// the count (calls accepted between the first and the last refusal,
    /// exact to one) narrowed by the order of the answers ([`bracket`])
    /// when the two agree. `None` before two refusals with a call accepted
    /// between them. Fewer calls than a [`Reading::Limit`] needs still
    /// narrow what earlier events measured.
    pub fn range(&self) -> Option<(f64, f64)> {
        let window = self.window().as_secs_f64();
        if self.accepted_by_last == 0 || window <= 0.0 {
            return None;
        }
        let n = self.accepted_by_last as f64;
        let count = ((n - 1.0) / window, (n + 1.0) / window);
        Some(match bracket(&self.order, ANSWER_SLACK) {
            Some((lo, hi)) if lo.max(count.0) <= hi.min(count.1) => {
                (lo.max(count.0), hi.min(count.1))
            }
            _ => count,
        })
    }

    pub fn reading(&self) -> Reading {
        let window = self.window().as_secs_f64();
        if self.accepted_by_last >= MIN_ACCEPTED
            && let Some((lowest, highest)) = self.range()
        {
            return Reading::Limit {
                measured: (lowest + highest) / 2.0,
                lowest,
                highest,
            };
        }
        if self.accepted_by_last == 0 {
            let spans_a_pause =
                self.refused >= PAUSE_REFUSALS && 0.5 * self.send_rate * window >= PAUSE_EXPECTED;
            let token_wait = (1.0 / self.send_rate.max(f64::MIN_POSITIVE)).max(1.0);
            if spans_a_pause || self.asked.as_secs_f64() > token_wait {
                return Reading::Pause;
            }
        }
        Reading::Onset(self.send_rate)
    }
}

/// The range of limits under which a token bucket, empty from the first
/// answer on, would have decided `answers` (handled at the instants given,
/// each up to `slack` after the provider decided it) as it did: the
/// `k`-th accepted call took the `k`-th token, made at `θ + k/L`, and a
/// refusal after `k` accepted ones came before the token `k`. Each pair of
/// an accepted answer `i` and a refusal after `j` accepted ones bounds
/// `(i − j)/L` by the time between them; the tightest bounds are the
/// range. `None` when the answers bound the limit on one side only, or on
/// none (a bucket did not decide them: the range is empty).
pub fn bracket(answers: &[(Instant, bool)], slack: Duration) -> Option<(f64, f64)> {
    let &(t0, _) = answers.first()?;
    let slack = slack.as_secs_f64();
    let at = |t: Instant| t.saturating_duration_since(t0).as_secs_f64();
    // (tokens taken before it, seconds since the first answer)
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    for &(t, ok) in answers {
        if ok {
            accepted.push((accepted.len(), at(t)));
        } else {
            refused.push((accepted.len(), at(t)));
        }
    }
    // Bounds on the time between two tokens. The first call accepted after
    // a refusal (i = j) took the token that came after it: one instant
    // between the two, which bounds no interval.
    let (mut shortest, mut longest) = (0.0_f64, f64::INFINITY);
    for &(j, r) in &refused {
        for &(i, a) in &accepted {
            match i.cmp(&j) {
                Ordering::Greater => longest = longest.min((a - r + slack) / (i - j) as f64),
                Ordering::Less => shortest = shortest.max((r - a - slack) / (j - i) as f64),
                Ordering::Equal => {}
            }
        }
    }
    (shortest > 0.0 && longest.is_finite() && shortest <= longest)
        .then(|| (1.0 / longest, 1.0 / shortest))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const SEC: Duration = Duration::from_secs(1);
    /// How long every answer takes, unless a test says otherwise.
    const LAT: Duration = Duration::from_millis(50);

    /// The event's reading as (measured, lowest, highest); a test
    /// failure when it is not a limit.
    fn limit_of(e: &Event) -> (f64, f64, f64) {
        match e.reading() {
            Reading::Limit {
                measured,
                lowest,
                highest,
            } => (measured, lowest, highest),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_event_keeps_at_most_max_ordered_answers_in_order_and_counts_them_all() {
        let t0 = Instant::now();
        let mut e = Event::new(400.0, SEC, t0 - LAT, t0);
        let n = 2 * MAX_ORDERED as u32;
        for i in 1..=n {
            let at = t0 + i * MS;
            e.accepted(at - LAT, at);
        }
        assert_eq!(e.order.len(), MAX_ORDERED);
        assert_eq!(e.accepted, u64::from(n));
    }

    #[test]
    fn pace_history_finds_the_pace_of_a_past_send() {
        let t0 = Instant::now();
        let mut h = PaceHistory::new(10.0, t0);
        h.set(20.0, t0 + 1000 * MS);
        h.set(20.0, t0 + 1200 * MS);
        h.set(40.0, t0 + 2000 * MS);
        assert_eq!(h.at(t0), 10.0);
        assert_eq!(h.at(t0 + 999 * MS), 10.0);
        assert_eq!(h.at(t0 + 1000 * MS), 20.0);
        assert_eq!(h.at(t0 + 1999 * MS), 20.0);
        assert_eq!(h.at(t0 + 5000 * MS), 40.0);
    }

    #[test]
    fn pace_history_forgets_the_oldest_changes() {
        let t0 = Instant::now();
        let mut h = PaceHistory::new(1.0, t0);
        for i in 1..=(HISTORY as u64 + 10) {
            h.set(i as f64 + 1.0, t0 + (i as u32) * 100 * MS);
        }
        assert_eq!(h.changes.len(), HISTORY);
        // Older than the history: the oldest pace remembered.
        assert_eq!(h.at(t0), 12.0);
        assert_eq!(h.at(t0 + 100_000 * MS), HISTORY as f64 + 11.0);
    }

    /// Answers arriving at `arrivals` per second into a bucket making
    /// `limit` tokens per second, empty at the first refusal (at `t0`).
    fn drain(arrivals: f64, limit: f64, secs: f64, t0: Instant) -> Event {
        handled_late(arrivals, limit, secs, t0, Duration::ZERO)
    }

    /// As `drain`, every answer after the first handled `lag` late (an
    /// idle process waiting for the CPU on a loaded machine).
    fn handled_late(arrivals: f64, limit: f64, secs: f64, t0: Instant, lag: Duration) -> Event {
        let mut e = Event::new(arrivals, SEC, t0 - LAT, t0);
        let mut tokens = 0.0;
        let n = (arrivals * secs) as u64;
        for i in 1..=n {
            let dt = 1.0 / arrivals;
            tokens += limit * dt;
            let at = t0 + Duration::from_secs_f64(i as f64 * dt);
            if tokens >= 1.0 {
                tokens -= 1.0;
                e.accepted(at - LAT, at + lag);
            } else {
                e.refused(SEC, at - LAT, at + lag);
            }
        }
        e
    }

    #[test]
    fn the_drain_of_an_event_measures_the_limit() {
        let t0 = Instant::now();
        for (arrivals, limit) in [(190.0, 100.0), (800.0, 400.0), (37.0, 20.0), (103.0, 100.0)] {
            let e = drain(arrivals, limit, 0.4, t0);
            let Reading::Limit {
                measured, highest, ..
            } = e.reading()
            else {
                panic!("{arrivals} into {limit}: {:?}", e.reading());
            };
            assert!(
                (measured - limit).abs() <= 0.12 * limit,
                "{arrivals} into {limit}: {measured}"
            );
            assert!(highest > measured && highest - measured <= 0.2 * limit);
        }
    }

    /// The drain of a 50 ms round trip at a drop from 400 to 100 calls/s
    /// (ten calls accepted), every answer after the first handled 4 ms
    /// late: the window between the answers is 4 ms too long (a limit 4 %
    /// low), the one between the refused calls' send instants is the
    /// provider's.
    #[test]
    fn answers_handled_late_measure_the_same_limit() {
        let t0 = Instant::now();
        let on_time = drain(400.0, 100.0, 0.1, t0);
        let late = handled_late(400.0, 100.0, 0.1, t0, 4 * MS);
        let Reading::Limit { measured, .. } = on_time.reading() else {
            panic!("{:?}", on_time.reading());
        };
        assert!((measured - 100.0).abs() <= 12.0, "{measured}");
        assert_eq!(late.reading(), on_time.reading());
        let (_, _, window, answered) = late.counts();
        assert_eq!(window, on_time.counts().2);
        assert_eq!(answered, window + 4 * MS);
    }

    /// Answers whose latencies spread over more than a quarter of the
    /// window (jitter) are timed as they came back: the provider handled
    /// them in that order, not in the order their calls left.
    #[test]
    fn jittered_answers_are_timed_as_they_came_back() {
        let t0 = Instant::now();
        // Calls taking 100 to 500 ms: the last refusal left 150 ms before
        // the first, but came back 400 ms after it.
        let mut e = Event::new(400.0, SEC, t0 - 100 * MS, t0);
        for i in 1..=40u32 {
            let at = t0 + i * 10 * MS;
            e.accepted(at - 200 * MS, at);
        }
        e.refused(SEC, t0 - 250 * MS, t0 + 400 * MS);
        // 40 calls in 400 ms, give or take one.
        let (measured, lowest, highest) = limit_of(&e);
        assert!((measured - 100.0).abs() < 1e-9, "{measured}");
        assert!((lowest - 97.5).abs() < 1e-9, "{lowest}");
        assert!((highest - 102.5).abs() < 1e-9, "{highest}");
    }

    /// Answers at `ms` milliseconds after `t0`, `true` for accepted.
    fn answers(t0: Instant, seq: &[(u32, bool)]) -> Vec<(Instant, bool)> {
        seq.iter().map(|&(ms, ok)| (t0 + ms * MS, ok)).collect()
    }

    fn assert_bracket(got: Option<(f64, f64)>, lo: f64, hi: f64) {
        let Some((l, h)) = got else {
            panic!("no bracket, want [{lo}, {hi}]");
        };
        assert!(
            (l - lo).abs() < 1e-6 && (h - hi).abs() < 1e-6,
            "[{l}, {h}], want [{lo}, {hi}]"
        );
    }

    /// Calls every 4 ms from 0, the first after each token accepted and
    /// the others refused, as a bucket making a token every 11 ms from
    /// 0.5 ms decides them. Without slack the bracket is exactly the range
    /// of limits under which some bucket decides them so.
    #[test]
    fn the_order_of_the_answers_brackets_the_limit() {
        let t0 = Instant::now();
        let seq = [
            (0, false),
            (4, true),
            (8, false),
            (12, true),
            (16, false),
            (20, false),
            (24, true),
            (28, false),
            (32, false),
            (36, true),
            (40, false),
        ];
        let a = answers(t0, &seq);
        // Accepted (index, ms): (0,4) (1,12) (2,24) (3,36); refused after
        // j accepted (j, ms): (0,0) (1,8) (2,16) (2,20) (3,28) (3,32) (4,40).
        // 1/L < min over i > j of (a_i − r_j)/(i − j): (2,24)−(1,8) = 16,
        // (1,12)−(0,0) = 12, (3,36)−(2,20) = 16, (2,24)−(0,0) = 12: 12 ms.
        // 1/L > max over j > i of (r_j − a_i)/(j − i): (4,40)−(0,4) = 36/4,
        // (2,20)−(0,4) = 16/2, (3,32)−(1,12) = 20/2, (4,40)−(2,24) = 16/2,
        // (3,32)−(0,4) = 28/3: 10 ms.
        assert_bracket(bracket(&a, Duration::ZERO), 1000.0 / 12.0, 100.0);
        // Each answer possibly up to 1 ms late widens every pair by 1 ms:
        // (3,36)−(0,0) now binds, 37/3 ms.
        assert_bracket(bracket(&a, MS), 3000.0 / 37.0, 1000.0 / 9.5);
    }

    #[test]
    fn answers_that_bound_the_limit_on_one_side_bracket_nothing() {
        let t0 = Instant::now();
        // One accepted call: no two tokens to time.
        let a = answers(t0, &[(0, false), (5, true), (10, false)]);
        assert_eq!(bracket(&a, Duration::ZERO), None);
        // Refusals only after the first accepted call: an upper bound on
        // the time between tokens (a lowest limit), no highest.
        let a = answers(t0, &[(0, false), (5, true), (10, true)]);
        assert_eq!(bracket(&a, Duration::ZERO), None);
        assert_eq!(bracket(&[], Duration::ZERO), None);
    }

    /// Answers no token bucket would give (two accepted 1 ms apart, then a
    /// refusal 20 ms after the first one accepted) bracket nothing.
    #[test]
    fn answers_no_bucket_would_give_bracket_nothing() {
        let t0 = Instant::now();
        let a = answers(t0, &[(0, false), (10, true), (11, true), (30, false)]);
        // Two tokens within 1 ms: 1/L < 1 ms; then a refusal 20 ms after
        // the first: 1/L > 10 ms.
        assert_eq!(bracket(&a, Duration::ZERO), None);
    }

    /// The drain of a 55 ms round trip at 400 calls/s into a limit of 100
    /// (five calls accepted): the count alone allows 73 to 109 calls/s,
    /// the order of the answers 93 to 108.
    #[test]
    fn the_order_narrows_what_the_count_allows() {
        let t0 = Instant::now();
        let e = drain(400.0, 100.0, 0.055, t0);
        let (lo, hi) = e.range().expect("a range");
        assert!(lo <= 100.0 && 100.0 <= hi, "[{lo}, {hi}]");
        assert!(hi / lo < 1.2, "[{lo}, {hi}]");
        let (measured, lowest, highest) = limit_of(&e);
        assert_eq!((lowest, highest), (lo, hi));
        assert!((measured - 100.0).abs() < 5.0, "{measured}");
    }

    /// A bracket the count rules out (answers handled long after the
    /// provider decided them, say) is dropped: the range is the count's.
    /// Twenty calls accepted 10 ms apart bracket 94.7 to 100.3 calls/s; the
    /// refusals' calls left 160 ms apart (every answer took 50 to 100 ms,
    /// a steady latency), so the count says 19 to 21 in 160 ms.
    #[test]
    fn a_bracket_the_count_rules_out_is_dropped() {
        let t0 = Instant::now();
        let mut e = Event::new(400.0, SEC, t0 - LAT, t0);
        for i in 1..=20u32 {
            let at = t0 + i * 10 * MS;
            e.accepted(at - LAT, at);
        }
        let last = t0 + 210 * MS;
        e.refused(SEC, last - 2 * LAT, last);
        let (lo, hi) = bracket(&e.order, ANSWER_SLACK).expect("a bracket");
        assert!(94.7 < lo && hi < 100.3, "[{lo}, {hi}]");
        assert_eq!(e.counts().2, 160 * MS);
        let (lo, hi) = e.range().expect("a range");
        assert!((lo - 19.0 / 0.16).abs() < 1e-9, "{lo}");
        assert!((hi - 21.0 / 0.16).abs() < 1e-9, "{hi}");
    }

    #[test]
    fn too_few_answers_only_say_where_429s_started() {
        let t0 = Instant::now();
        // One refusal: no window.
        assert_eq!(
            Event::new(120.0, SEC, t0 - LAT, t0).reading(),
            Reading::Onset(120.0)
        );
        // A short drain at a low rate: two or three calls accepted.
        let e = drain(37.0, 20.0, 0.1, t0);
        assert_eq!(e.reading(), Reading::Onset(37.0));
    }

    #[test]
    fn refusing_everything_is_a_pause_not_a_limit() {
        let t0 = Instant::now();
        let mut e = Event::new(100.0, SEC, t0 - LAT, t0);
        for i in 1..=20 {
            e.refused(
                SEC,
                t0 + (i as u32) * 10 * MS - LAT,
                t0 + (i as u32) * 10 * MS,
            );
        }
        assert_eq!(e.reading(), Reading::Pause);
        // Accepted answers after the last refusal do not make it a limit.
        for _ in 0..10 {
            e.accepted(t0 + 250 * MS, t0 + 300 * MS);
        }
        assert_eq!(e.reading(), Reading::Pause);
    }

    #[test]
    fn a_pause_needs_at_least_three_calls_expected_at_half_the_pace() {
        // 46 calls/s over 100 ms: at half that pace 2.3 clean answers were
        // expected, fewer than three; refusals alone do not make a pause.
        let t0 = Instant::now();
        let mut e = Event::new(46.0, SEC, t0 - LAT, t0);
        e.refused(SEC, t0 + 50 * MS - LAT, t0 + 50 * MS);
        e.refused(SEC, t0 + 100 * MS - LAT, t0 + 100 * MS);
        assert_eq!(e.reading(), Reading::Onset(46.0));
        // Over 200 ms, 4.6 were expected: refusing them all is a pause.
        e.refused(SEC, t0 + 200 * MS - LAT, t0 + 200 * MS);
        assert_eq!(e.reading(), Reading::Pause);
    }

    #[test]
    fn answers_within_one_instant_measure_no_limit() {
        // Every answer of the event at the same instant: no time to divide
        // the count by, so only the onset is known (never an infinite limit).
        let t0 = Instant::now();
        let mut e = Event::new(80.0, SEC, t0 - LAT, t0);
        for _ in 0..2 * MIN_ACCEPTED {
            e.accepted(t0 - LAT, t0);
        }
        e.refused(SEC, t0 - LAT, t0);
        assert_eq!(e.reading(), Reading::Onset(80.0));
    }

    #[test]
    fn a_few_refusals_in_a_row_at_a_low_rate_are_not_a_pause() {
        // 46 calls/s into a limit of 20: three refusals 20 ms apart happen
        // between two tokens; a limit would not have let any through.
        let t0 = Instant::now();
        let mut e = Event::new(46.0, SEC, t0 - LAT, t0);
        e.refused(SEC, t0 + 20 * MS - LAT, t0 + 20 * MS);
        e.refused(SEC, t0 + 40 * MS - LAT, t0 + 40 * MS);
        assert_eq!(e.reading(), Reading::Onset(46.0));
    }

    #[test]
    fn a_wait_longer_than_a_token_bucket_asks_for_is_a_pause() {
        let t0 = Instant::now();
        // One refusal, nothing else to go by: 5 s is no token bucket's wait
        // at 100 calls/s.
        assert_eq!(
            Event::new(100.0, 5 * SEC, t0 - LAT, t0).reading(),
            Reading::Pause
        );
        let mut e = Event::new(100.0, SEC, t0 - LAT, t0);
        e.refused(5 * SEC, t0 + MS - LAT, t0 + MS);
        assert_eq!(e.reading(), Reading::Pause);
        // At half a call per second a token takes two seconds.
        assert_eq!(
            Event::new(0.5, 2 * SEC, t0 - LAT, t0).reading(),
            Reading::Onset(0.5)
        );
        // Calls accepted in between: a limit, whatever the wait.
        let mut e = drain(190.0, 100.0, 0.4, t0);
        e.refused(5 * SEC, t0 + 400 * MS - LAT, t0 + 400 * MS);
        assert!(
            matches!(e.reading(), Reading::Limit { .. }),
            "{:?}",
            e.reading()
        );
    }
}
