//! The rate decisions pinned one by one on a simulated clock: the pacer's
//! slack, the end of a pause, each growth rule (slow start, the fast and
//! the slow probe) with its epoch, each cut, and the moving averages. The
//! behaviour tests (convergence, few 429s) are in `aimd.rs` and `sim.rs`.
//! Expected values are written with the constants, so a retuned constant
//! does not break them; a changed rule does.

use super::*;

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

fn near(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

fn auto(now: Instant) -> Controller {
    Controller::new(Settings::new(RateMode::Auto { ceiling: None }, 64), now)
}

/// Takes every slot the pacer grants in `[from, to)`, as a run with rows
/// always waiting does; returns how many. Bounded, so that a pacer that
/// grants without end fails the test instead of spinning.
fn send_until(c: &mut Controller, from: Instant, to: Instant) -> u64 {
    let mut t = from;
    let mut sent = 0;
    for _ in 0..1_000_000 {
        if t >= to {
            return sent;
        }
        match c.try_send(t) {
            Ok(()) => sent += 1,
            Err(at) => t = at.max(t + Duration::from_micros(1)),
        }
    }
    panic!(
        "the pacer granted or refused a million times in {:?}",
        to - from
    );
}

#[test]
fn a_slot_may_be_taken_up_to_the_pacing_slack_early_not_sooner() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(10), 8), t0);
    assert_eq!(c.try_send(t0), Ok(()));
    // The next slot is at t0 + 100 ms; it may be taken PACING_SLACK early.
    let early = t0 + 100 * MS - PACING_SLACK;
    assert_eq!(c.try_send(early - MS), Err(early));
    assert_eq!(c.try_send(early), Ok(()));
    // The pace goes on from the slot, not from when it was taken.
    assert_eq!(c.try_send(early), Err(early + 100 * MS));
}

#[test]
fn a_pause_ends_at_its_instant() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(1000), 8), t0);
    c.on_rate_limited(t0, 5 * SEC, t0);
    let end = t0 + 5 * SEC;
    assert_eq!(c.paused_until(end - MS), Some(end));
    assert_eq!(c.try_send(end - MS), Err(end));
    assert_eq!(c.paused_until(end), None);
    assert_eq!(c.try_send(end), Ok(()));
}

#[test]
fn a_retry_after_of_exactly_the_cap_is_honoured_in_full() {
    let t0 = Instant::now();
    let mut s = Settings::new(RateMode::Fixed(100), 8);
    s.max_retry_after = 30 * SEC;
    let mut c = Controller::new(s, t0);
    assert_eq!(
        c.on_rate_limited(t0, 30 * SEC, t0),
        RateLimited::Paused { pause: 30 * SEC }
    );
}

/// A 429 for a call that left at the very instant of the decrease belongs
/// to the event already handled (it left at the old pace); one for a call
/// that left after it is a new event.
#[test]
fn a_call_sent_at_the_instant_of_the_decrease_belongs_to_its_event() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(100), 8), t0);
    let decrease = t0 + 100 * MS;
    c.on_rate_limited(t0, SEC, decrease);
    c.on_rate_limited(decrease, SEC, decrease + 50 * MS);
    assert_eq!(c.congestion_events(), 1);
    c.on_rate_limited(decrease + MS, SEC, decrease + 60 * MS);
    assert_eq!(c.congestion_events(), 2);
}

/// A new event within REPEAT_WINDOW of the end of the last pause means
/// the rate is far above the limit: the cut is REPEAT_BETA (a half); from
/// the window's end on it is BETA (a tenth).
#[test]
fn an_event_soon_after_the_last_pause_halves_a_later_one_cuts_a_tenth() {
    let t0 = Instant::now();
    let second_event = |after_the_pause: Duration| {
        let mut c = Controller::new(Settings::new(RateMode::Fixed(100), 8), t0);
        c.on_rate_limited(t0, SEC, t0);
        assert!(near(c.rate(), 100.0 * BETA), "{}", c.rate());
        let now = t0 + SEC + after_the_pause;
        c.on_rate_limited(now - 10 * MS, SEC, now);
        assert_eq!(c.congestion_events(), 2);
        c.rate()
    };
    let soon = second_event(REPEAT_WINDOW - MS);
    assert!(near(soon, 100.0 * BETA * REPEAT_BETA), "{soon}");
    let later = second_event(REPEAT_WINDOW);
    assert!(near(later, 100.0 * BETA * BETA), "{later}");
}

/// Slow start grows the rate by SLOW_START_GROWTH_PER_SEC per second of a
/// clean epoch. An epoch lasts at least the latency (INITIAL_LATENCY before
/// any answer): an earlier answer changes nothing, nor does the answer to
/// a call that left before the epoch began.
#[test]
fn slow_start_grows_per_second_of_a_clean_epoch() {
    let t0 = Instant::now();
    let at = |ms: u32| t0 + ms * MS;
    let g = SLOW_START_GROWTH_PER_SEC;
    assert_eq!(INITIAL_LATENCY, 500 * MS, "the instants below assume it");
    let mut c = auto(t0);
    send_until(&mut c, at(0), at(1000));
    c.on_success(at(900), at(1000));
    let r1 = AUTO_START_RATE * g;
    assert!(near(c.rate(), r1), "{}", c.rate());
    // The epoch began again at 1 s: an answer at 1.4 s is too early...
    send_until(&mut c, at(1000), at(1500));
    c.on_success(at(1200), at(1400));
    assert!(near(c.rate(), r1), "{}", c.rate());
    // ...at 1.5 s the answer to a call sent as it began counts.
    c.on_success(at(1000), at(1500));
    let r2 = r1 * g.powf(0.5);
    assert!(near(c.rate(), r2), "{}", c.rate());
    // The epoch began again at 1.5 s: a late answer to a call sent before
    // counts for nothing; the next one counts from 1.5 s.
    send_until(&mut c, at(1500), at(2100));
    c.on_success(at(1200), at(2100));
    assert!(near(c.rate(), r2), "{}", c.rate());
    send_until(&mut c, at(2100), at(2500));
    c.on_success(at(2400), at(2500));
    assert!(near(c.rate(), r2 * g), "{}", c.rate());
}

/// An epoch in which fewer calls left than APP_LIMITED_SHARE of what the
/// rate allowed says nothing about the provider: no increase. Exactly that
/// share is enough.
#[test]
fn an_increase_needs_half_the_allowed_calls_sent() {
    let t0 = Instant::now();
    let half = (APP_LIMITED_SHARE * AUTO_START_RATE) as u32;
    let spaced = |secs: u32| {
        let mut c = auto(t0);
        let gap = secs * SEC / half;
        for i in 0..half {
            c.try_send(t0 + i * gap).unwrap();
        }
        c.on_success(t0 + (half - 1) * gap, t0 + secs * SEC);
        c.rate()
    };
    // Over one second, `half` calls: the rate grows.
    assert!(near(spaced(1), AUTO_START_RATE * SLOW_START_GROWTH_PER_SEC));
    // Over two seconds, the same calls are too few: it does not.
    assert_eq!(spaced(2), AUTO_START_RATE);
}

/// After a deep cut (slow start's halving) the probe climbs
/// FAST_PROBE_PER_SEC of the rate per second, and stops at KNEE of the
/// rate the 429 met.
#[test]
fn below_the_knee_the_probe_climbs_fast_and_stops_at_it() {
    let t0 = Instant::now();
    let at = |ms: u32| t0 + ms * MS;
    let mut c = auto(t0);
    c.on_rate_limited(t0, SEC, t0);
    let r0 = AUTO_START_RATE * SLOW_START_BETA;
    assert!(near(c.rate(), r0), "{}", c.rate());
    // The pause ends at 1 s, and a clean epoch of two seconds follows.
    send_until(&mut c, at(1000), at(3000));
    c.on_success(at(2900), at(3000));
    let r1 = r0 + FAST_PROBE_PER_SEC * r0 * 2.0;
    assert!(near(c.rate(), r1), "{}", c.rate());
    // Seventeen more seconds would climb past the knee: it stops there.
    send_until(&mut c, at(3000), at(20_000));
    c.on_success(at(19_900), at(20_000));
    assert!(r1 + FAST_PROBE_PER_SEC * r1 * 17.0 > KNEE * AUTO_START_RATE);
    assert!(near(c.rate(), KNEE * AUTO_START_RATE), "{}", c.rate());
}

/// From the knee on, the probe creeps: SLOW_PROBE_PER_SEC of the rate at
/// the 429 per second, sped up by 1 + (t / PROBE_SPEEDUP)² where t is the
/// time since the decrease.
#[test]
fn from_the_knee_the_probe_creeps_faster_the_longer_since_the_decrease() {
    let t0 = Instant::now();
    let at = |ms: u32| t0 + ms * MS;
    let mut c = Controller::new(Settings::new(RateMode::Fixed(1000), 64), t0);
    c.on_rate_limited(t0, SEC, t0);
    let r0 = 1000.0 * BETA;
    assert!(
        near(c.rate(), KNEE * 1000.0),
        "an ordinary cut lands on the knee"
    );
    send_until(&mut c, at(1000), at(3000));
    c.on_success(at(2900), at(3000));
    // 3 s after the decrease, an epoch of 2 s: 900 + 0.002 × 1.01 × 1000 × 2.
    let t = 3.0 / PROBE_SPEEDUP.as_secs_f64();
    let want = r0 + SLOW_PROBE_PER_SEC * (1.0 + t * t) * 1000.0 * 2.0;
    assert!(near(c.rate(), want), "{} (want {want})", c.rate());
}

#[test]
fn latency_is_a_moving_average_giving_each_answer_an_eighth() {
    let mut c = auto(Instant::now());
    assert_eq!(c.latency(), None);
    c.on_answer(100 * MS);
    assert_eq!(c.latency(), Some(100 * MS));
    c.on_answer(900 * MS);
    // 100 ms × (1 - LATENCY_GAIN) + 900 ms × LATENCY_GAIN.
    let want = (100 * MS).mul_f64(1.0 - LATENCY_GAIN) + (900 * MS).mul_f64(LATENCY_GAIN);
    assert_eq!(want.as_millis(), 200);
    let got = c.latency().unwrap();
    assert!(got.abs_diff(want) < Duration::from_micros(1), "{got:?}");
}

/// The delivered rate: clean answers per second, folded in once a second
/// has passed, into a moving average weighting each sample DELIVERED_GAIN.
#[test]
fn delivered_rate_folds_each_second_of_clean_answers_into_an_average() {
    let t0 = Instant::now();
    let at = |ms: u32| t0 + ms * MS;
    let mut c = auto(t0);
    for _ in 0..9 {
        c.on_success(at(400), at(500));
    }
    assert_eq!(c.delivered_rate(), None, "less than a second seen");
    c.on_success(at(900), at(1000));
    assert!(near(c.delivered_rate().unwrap(), 10.0));
    for _ in 0..29 {
        c.on_success(at(1400), at(1500));
    }
    assert!(near(c.delivered_rate().unwrap(), 10.0), "a second not over");
    c.on_success(at(2900), at(3000));
    // 30 answers in 2 s: a sample of 15/s.
    let want = 10.0 * (1.0 - DELIVERED_GAIN) + 15.0 * DELIVERED_GAIN;
    assert!(
        near(c.delivered_rate().unwrap(), want),
        "{:?}",
        c.delivered_rate()
    );
}

/// A settled pace (here a fixed rate) meets a provider accepting 100/s:
/// 80 calls sent at 200/s, answered 400 ms later, every other one refused.
fn measure_a_limit_of_100(c: &mut Controller, t0: Instant) {
    for i in 0..80 {
        let s = t0 + i * 5 * MS;
        if i % 2 == 0 {
            c.on_rate_limited(s, SEC, s + 400 * MS);
        } else {
            c.on_success(s, s + 400 * MS);
        }
    }
}

/// After an event that measured the limit while the rate had settled, the
/// probe climbs no further than HOLD_SHARE of the measurement until
/// MEASURED_HOLD after the event's first 429; then it goes on.
#[test]
fn after_a_measured_limit_the_probe_holds_under_it_then_goes_on() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(200), 64), t0);
    measure_a_limit_of_100(&mut c, t0);
    let (limit, until) = c.hold.expect("a settled pace met a measured limit");
    assert!((limit - 100.0).abs() < 5.0, "measured {limit}");
    assert_eq!(until, t0 + 400 * MS + MEASURED_HOLD);
    assert!(near(c.rate(), MEASURED_MARGIN * limit), "{}", c.rate());
    // Clean for most of the hold: the probe stops at the cap.
    let mut t = t0 + 2 * SEC;
    while t + SEC < until {
        send_until(&mut c, t, t + SEC);
        t += SEC;
        c.on_success(t - MS, t);
    }
    assert!(near(c.rate(), HOLD_SHARE * limit), "{}", c.rate());
    // Past the hold the probe climbs again.
    send_until(&mut c, t, until + SEC);
    c.on_success(until + SEC - MS, until + SEC);
    assert!(c.rate() > HOLD_SHARE * limit, "{}", c.rate());
}

/// Slow start's own event measures only a first estimate: no hold.
#[test]
fn the_measurement_ending_slow_start_does_not_hold() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Auto { ceiling: None }, 64), t0);
    measure_a_limit_of_100(&mut c, t0);
    assert_eq!(c.congestion_events(), 1);
    assert!(c.hold.is_none());
}

/// The hold ends at its instant: an increase due then goes past it.
#[test]
fn the_hold_ends_at_its_instant() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(200), 64), t0);
    measure_a_limit_of_100(&mut c, t0);
    let (limit, until) = c.hold.expect("a settled pace met a measured limit");
    let mut t = t0 + 2 * SEC;
    while t + 2 * SEC < until {
        send_until(&mut c, t, t + SEC);
        t += SEC;
        c.on_success(t - MS, t);
    }
    assert!(near(c.rate(), HOLD_SHARE * limit), "{}", c.rate());
    send_until(&mut c, t, until);
    c.on_success(until - MS, until);
    assert!(c.rate() > HOLD_SHARE * limit, "{}", c.rate());
}

/// Answers that come back once an event's pause is over (from its last
/// instant on) measure nothing more: the limit it measured stands, and a
/// late refusal of a call sent before the event does not decide again.
#[test]
fn answers_after_the_pause_leave_the_measurement_as_it_is() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(200), 64), t0);
    measure_a_limit_of_100(&mut c, t0);
    let rate = c.rate();
    let end = c.paused_until(t0).expect("the event's pause");
    // Stragglers sent before the event: one accepted, one refused, both
    // answered as the pause ends.
    c.on_success(t0 + 395 * MS, end);
    c.on_rate_limited(t0 + 390 * MS, SEC, end);
    assert_eq!(c.congestion_events(), 1);
    assert!(near(c.rate(), rate), "{} after {rate}", c.rate());
}

/// The drain of one round trip at 370 calls/s into a bucket making a token
/// every 10 ms (a limit of 100): calls leave every 2.7 ms from `start`,
/// the provider decides each 50 ms later and answers at once, the first
/// token `phase` after the first call arrives (which is refused). Eighteen
/// calls: the ones that left before the first 429 came back.
fn drain_into_100(c: &mut Controller, start: Instant, phase: Duration) {
    let arrive = |i: u32| start + i * 27 * MS / 10 + 50 * MS;
    let mut token = arrive(0) + phase;
    for i in 0..18 {
        let at = arrive(i);
        if at >= token {
            token += 10 * MS;
            c.on_success(at - 50 * MS, at);
        } else {
            c.on_rate_limited(at - 50 * MS, SEC, at);
        }
    }
}

/// A drain of five calls measures a limit of 100 only to within several
/// percent: too coarse to hold to. The pace that met the 429s is kept, so
/// the next event comes as soon as the pause ends and measures again; each
/// narrows the range, until it is narrow enough to hold to (or after
/// `MAX_MEASURES` events), and the probe holds no further than
/// `HOLD_OVER_LOWEST` over the lowest limit left.
#[test]
fn a_coarse_measurement_is_taken_again_then_held_near_its_lowest() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(370), 256), t0);
    let mut start = t0;
    let mut last: Option<Measured> = None;
    for k in 0..MAX_MEASURES {
        let phase = Duration::from_micros(300 + 1100 * u64::from(k) % 2700);
        drain_into_100(&mut c, start, phase);
        let m = c.measured.expect("a range");
        assert_eq!(m.events, k + 1);
        assert!(m.lowest <= 100.0 && 100.0 <= m.highest, "{m:?}");
        if let Some(l) = last {
            assert!(
                m.lowest >= l.lowest && m.highest <= l.highest,
                "{m:?} after {l:?}"
            );
        }
        last = Some(m);
        if !m.coarse() {
            break;
        }
        assert_eq!(c.rate(), 370.0, "measuring again");
        assert!(c.hold.is_none());
        start = c.paused_until(start).expect("a pause") + 100 * MS;
    }
    // Three drains narrow it to [97.6, 102.7] calls/s here.
    assert!(last.is_some_and(|m| m.events == 3), "{last:?}");
    let m = last.expect("a range");
    let (limit, _) = c.hold.expect("held after the last measurement");
    assert!(
        HOLD_SHARE * limit <= HOLD_OVER_LOWEST * m.lowest + 1e-9,
        "held at {} for {m:?}",
        HOLD_SHARE * limit
    );
    assert!(
        HOLD_SHARE * limit >= 0.95 * 100.0,
        "held at {}",
        HOLD_SHARE * limit
    );
    assert!(c.rate() <= HOLD_SHARE * limit + 1e-9, "{}", c.rate());
}

/// A coarse measurement after a probe that only just overran (the pace
/// that met the 429s not far above the range) is not taken again: the
/// pace would take a minute to be refused again.
#[test]
fn a_coarse_measurement_near_the_pace_is_held_to_at_once() {
    let t0 = Instant::now();
    let mut c = Controller::new(Settings::new(RateMode::Fixed(120), 256), t0);
    // 40 calls at 120/s answered 400 ms later by a limit of 100: about
    // one in six refused; a drain too short to measure closely.
    let mut token = t0 + 400 * MS + 4 * MS;
    for i in 0..40u32 {
        let s = t0 + i * 1000 * MS / 120;
        let at = s + 400 * MS;
        if at >= token {
            token += 10 * MS;
            c.on_success(s, at);
        } else {
            c.on_rate_limited(s, SEC, at);
        }
    }
    assert_eq!(c.congestion_events(), 1);
    assert!(c.rate() < 100.0, "{}", c.rate());
    if let Some(m) = c.measured {
        assert!(120.0 < REMEASURE_PACE * m.highest, "{m:?}");
    }
}

/// An event after the rate had settled, its 429s begun at `onset`.
fn settled_event(t0: Instant) -> Open {
    Open {
        event: Event::new(400.0, SEC, t0 - 50 * MS, t0),
        before_rate: 97.0,
        before_phase: Phase::Probe { loss_rate: 100.0 },
        repeat: false,
        prior: None,
    }
}

fn limit(lowest: f64, highest: f64) -> Reading {
    Reading::Limit {
        measured: (lowest + highest) / 2.0,
        lowest,
        highest,
    }
}

#[test]
fn the_decision_of_a_provider_pause_keeps_the_pace_the_range_and_the_hold() {
    let t0 = Instant::now();
    let open = settled_event(t0);
    assert_eq!(
        open.decision(Reading::Pause, 400.0),
        Decision {
            rate: 97.0,
            phase: Phase::Probe { loss_rate: 100.0 },
            limit: None,
        }
    );
}

#[test]
fn a_coarse_range_after_a_drop_keeps_the_pace_to_measure_again_without_a_hold() {
    let t0 = Instant::now();
    let open = settled_event(t0);
    // 90–110: wider than PRECISE_RANGE, and the 429s began at 400/s, over
    // REMEASURE_PACE times its highest limit.
    const { assert!(110.0 > PRECISE_RANGE * 90.0 && 400.0 >= REMEASURE_PACE * 110.0) };
    let d = open.decision(limit(90.0, 110.0), 400.0);
    assert!(near(d.rate, 400.0), "{d:?}");
    assert_eq!(d.phase, Phase::Probe { loss_rate: 400.0 });
    let (range, hold) = d.limit.expect("a limit, not a pause");
    let range = range.expect("the range kept for the next event");
    assert_eq!(
        (range.lowest, range.highest, range.events),
        (90.0, 110.0, 1)
    );
    assert_eq!(hold, None);
    // The same range met by a probe that only just overran it is held to,
    // and so wide a range no further than HOLD_OVER_LOWEST over its lowest
    // limit (under MEASURED_MARGIN of its middle).
    let d = open.decision(limit(90.0, 110.0), 120.0);
    const { assert!(HOLD_OVER_LOWEST * 90.0 < MEASURED_MARGIN * 100.0) };
    assert!(near(d.rate, HOLD_OVER_LOWEST * 90.0), "{d:?}");
    assert!(d.limit.unwrap().1.is_some(), "{d:?}");
}

/// What the chain of events before this one measured: 2 events, the
/// first 3 s ago.
fn chain(t0: Instant, lowest: f64, highest: f64) -> Measured {
    Measured {
        lowest,
        highest,
        events: 2,
        since: t0 - 3 * SEC,
    }
}

/// A range that does not meet the chain's (the limit moved again, or an
/// answer was handled very late) stands alone, and still counts as one
/// more event of the chain, begun when the chain began.
#[test]
fn a_range_that_misses_the_chain_replaces_it_and_counts_as_one_more_event() {
    let t0 = Instant::now();
    let open = Open {
        prior: Some(chain(t0, 90.0, 95.0)),
        ..settled_event(t0)
    };
    assert_eq!(
        open.range(limit(100.0, 104.0), 400.0),
        Some(Measured {
            lowest: 100.0,
            highest: 104.0,
            events: 3,
            since: t0 - 3 * SEC,
        })
    );
}

/// An event of a chain too short to measure anything leaves the chain's
/// range as it was, one event longer.
#[test]
fn an_event_too_short_to_measure_leaves_the_chain_one_event_longer() {
    let t0 = Instant::now();
    let open = Open {
        prior: Some(chain(t0, 96.0, 104.0)),
        ..settled_event(t0)
    };
    assert_eq!(open.event.range(), None);
    assert_eq!(
        open.range(Reading::Onset(400.0), 400.0),
        Some(Measured {
            events: 3,
            ..chain(t0, 96.0, 104.0)
        })
    );
}

/// An event after the rate had settled whose drain accepted `accepted`
/// calls 5 ms apart between two refusals (every answer 50 ms): too few
/// for a reading of its own, but a range.
fn short_drain(t0: Instant, accepted: u32) -> Open {
    let mut open = settled_event(t0);
    for i in 1..=accepted {
        let at = t0 + i * 5 * MS;
        open.event.accepted(at - 50 * MS, at);
    }
    let last = t0 + (accepted + 1) * 5 * MS;
    open.event.refused(SEC, last - 50 * MS, last);
    open
}

/// Too few calls for a reading, but a range: it begins a chain when the
/// pace that met the 429s was far above it (a drop: measured again at
/// that pace), not after slow start, not when the pace was near it, and
/// not when its lowest limit is zero (one call accepted: no lower bound).
#[test]
fn a_range_too_coarse_for_a_reading_begins_a_chain_only_after_a_drop() {
    let t0 = Instant::now();
    let open = short_drain(t0, 3);
    let (lowest, highest) = open.event.range().expect("a range");
    assert!(
        lowest > 0.0 && 250.0 < REMEASURE_PACE * highest && 400.0 >= REMEASURE_PACE * highest,
        "[{lowest}, {highest}]"
    );
    let begun = Measured {
        lowest,
        highest,
        events: 1,
        since: t0,
    };
    assert_eq!(open.range(Reading::Onset(400.0), 400.0), Some(begun));
    // 250/s is under REMEASURE_PACE times the highest limit (over it plus
    // REMEASURE_PACE, and over it divided by it).
    assert_eq!(open.range(Reading::Onset(250.0), 250.0), None);
    let slow_start = Open {
        before_phase: Phase::SlowStart,
        ..short_drain(t0, 3)
    };
    assert_eq!(slow_start.range(Reading::Onset(400.0), 400.0), None);
    let one = short_drain(t0, 1);
    let (lowest, highest) = one.event.range().expect("a range");
    assert!(
        lowest == 0.0 && 400.0 >= REMEASURE_PACE * highest,
        "[{lowest}, {highest}]"
    );
    assert_eq!(one.range(Reading::Onset(400.0), 400.0), None);
}

#[test]
fn a_precise_range_is_held_just_under_its_middle_and_near_its_lowest_end() {
    let t0 = Instant::now();
    let open = settled_event(t0);
    let d = open.decision(limit(99.0, 104.0), 400.0);
    let measured = 101.5_f64.min(HOLD_OVER_LOWEST / HOLD_SHARE * 99.0);
    assert!(
        near(d.rate, (MEASURED_MARGIN * 101.5).min(HOLD_SHARE * measured)),
        "{d:?}"
    );
    assert_eq!(d.phase, Phase::Probe { loss_rate: 104.0 });
    let (_, hold) = d.limit.expect("a limit");
    let (held, until) = hold.expect("a hold after the rate had settled");
    assert!(near(held, measured), "{held} vs {measured}");
    assert_eq!(until, open.event.first() + MEASURED_HOLD);
    // The end of slow start is a first estimate: not held to.
    let first = Open {
        before_phase: Phase::SlowStart,
        ..settled_event(t0)
    };
    assert_eq!(
        first.decision(limit(99.0, 104.0), 400.0).limit.unwrap().1,
        None
    );
}

#[test]
fn nothing_to_measure_cuts_from_the_onset_and_forgets_the_range() {
    let t0 = Instant::now();
    let open = settled_event(t0);
    let d = open.decision(Reading::Onset(120.0), 120.0);
    assert!(near(d.rate, 120.0 * BETA), "{d:?}");
    assert_eq!(d.limit, Some((None, None)));
    let repeat = Open {
        repeat: true,
        ..settled_event(t0)
    };
    assert!(near(
        repeat.decision(Reading::Onset(120.0), 120.0).rate,
        120.0 * REPEAT_BETA
    ));
}

/// A range is measured again while it is wider than PRECISE_RANGE (at most
/// that much over its lowest limit is precise) and fewer than MAX_MEASURES
/// events measured it.
#[test]
fn a_range_is_coarse_while_wider_than_precise_and_measured_fewer_than_max_times() {
    let t0 = Instant::now();
    let range = |highest: f64, events: u32| Measured {
        lowest: 100.0,
        highest,
        events,
        since: t0,
    };
    assert!(range(PRECISE_RANGE * 100.0 + 0.01, 1).coarse());
    assert!(!range(PRECISE_RANGE * 100.0, 1).coarse());
    assert!(range(120.0, MAX_MEASURES - 1).coarse());
    assert!(!range(120.0, MAX_MEASURES).coarse());
}

/// A new event goes on measuring a coarse range only when it comes soon
/// after the last pause (the pace kept to measure again); a later one, or
/// one after a precise range, starts afresh.
#[test]
fn only_an_event_soon_after_the_pause_continues_a_coarse_chain() {
    let t0 = Instant::now();
    let coarse = chain(t0, 90.0, 110.0);
    let precise = chain(t0, 99.0, 101.0);
    assert!(coarse.coarse() && !precise.coarse());
    for (m, after, continued) in [
        (coarse, REPEAT_WINDOW - MS, true),
        (coarse, REPEAT_WINDOW, false),
        (precise, MS, false),
    ] {
        let mut c = Controller::new(Settings::new(RateMode::Fixed(400), 64), t0);
        c.on_rate_limited(t0, SEC, t0);
        c.measured = Some(m);
        let now = t0 + SEC + after;
        c.on_rate_limited(now - 10 * MS, SEC, now);
        assert_eq!(c.congestion_events(), 2);
        let open = c.open.as_ref().expect("an open event");
        assert_eq!(open.prior.is_some(), continued, "{m:?} {after:?}");
    }
}

/// Each 429 of an event logs, at debug level, what its answers measured
/// and what the pace and the hold became (docs/rate.md, "How `rate =
/// "auto"` works", step 3).
#[test]
fn each_429_logs_the_decision_at_debug_level() {
    let t0 = Instant::now();
    let text = crate::limiter::test_log::capture(tracing::Level::DEBUG, || {
        let mut c = auto(t0);
        c.on_rate_limited(t0 - 50 * MS, SEC, t0);
    });
    assert_eq!(
        text.matches("congestion event decision").count(),
        1,
        "{text}"
    );
    for field in ["reading=Onset", "refused=1", "rate=", "hold=None"] {
        assert!(text.contains(field), "{field} in {text}");
    }
}
