//! The shared pace's decisions, and several workers sharing it against a
//! simulated token-bucket provider (as `sim.rs`: a limit with a one-second
//! burst allowance, `Retry-After` in whole seconds).

use super::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const S: i64 = 1_000_000;
const MS: i64 = 1_000;

fn refused(slot_us: i64, rate: f64) -> Seen {
    Seen {
        slot_us,
        rate,
        retry_after_us: Some(S),
        event: None,
    }
}

fn accepted(slot_us: i64, rate: f64, event: Option<i64>) -> Seen {
    Seen {
        slot_us,
        rate,
        retry_after_us: None,
        event,
    }
}

#[test]
fn a_429_pauses_everyone_and_only_the_first_of_an_event_decides() {
    let mut p = Pace::new(5_000.0, 0);
    p.rate = 200.0;
    p.loss_rate = Some(220.0);
    p.seen(refused(10 * S, 200.0), 10 * S + 50 * MS, 5_000.0, 250 * MS);
    assert_eq!(p.events, 1);
    assert_eq!(p.paused_until_us, 11 * S + 50 * MS);
    // Too few answers yet: the controller's cut from the onset's pace.
    assert!((p.rate - 180.0).abs() < 1e-9, "{}", p.rate);
    // A 429 for a call sent before the event: the same event.
    p.seen(
        refused(10 * S - MS, 200.0),
        10 * S + 60 * MS,
        5_000.0,
        250 * MS,
    );
    assert_eq!((p.events, p.rate_limited, p.drain_refused), (1, 2, 1));
    // A reservation waits for the pause's end (the later 429's).
    let (first, interval, _) = p.reserve(0, 4, 5_000.0, 10 * S + 70 * MS, Unused::default());
    assert_eq!(first, 11 * S + 60 * MS);
    assert_eq!(interval, interval_us(p.rate));
}

#[test]
fn the_drains_answers_of_every_worker_measure_the_limit() {
    let mut p = Pace::new(5_000.0, 0);
    p.rate = 400.0;
    p.loss_rate = Some(420.0);
    p.seen(refused(10 * S, 400.0), 10 * S + 50 * MS, 5_000.0, 250 * MS);
    let event = Some(p.events);
    // Eighteen more answers of calls that left after it, from any worker:
    // 15 accepted, 3 refused. 16 of 20 answered: 320 calls/s.
    for k in 1..=19 {
        let slot = 10 * S + k * 2_500;
        let now = 10 * S + 60 * MS + k * 1_000;
        if k % 5 == 0 && k < 20 {
            p.seen(refused(slot, 400.0), now, 5_000.0, 250 * MS);
        } else {
            p.seen(accepted(slot, 400.0, event), now, 5_000.0, 250 * MS);
        }
    }
    assert_eq!((p.drain_accepted, p.drain_refused), (16, 4));
    assert!(
        (p.rate - MEASURED_MARGIN * 320.0).abs() < 1e-9,
        "{}",
        p.rate
    );
    // After the probe: held to for a minute.
    assert_eq!(p.hold.map(|h| h.0), Some(320.0));
    // An answer counted for another event is not counted again.
    p.seen(
        accepted(10 * S + 30 * MS, 400.0, Some(0)),
        10 * S + 90 * MS,
        5_000.0,
        0,
    );
    assert_eq!(p.drain_accepted, 16);
}

#[test]
fn everything_refused_is_a_provider_pause_that_keeps_the_pace() {
    let mut p = Pace::new(5_000.0, 0);
    p.rate = 100.0;
    p.loss_rate = Some(105.0);
    for k in 0..4 {
        p.seen(
            refused(10 * S + k * 10 * MS, 100.0),
            10 * S + (50 + k * 10) * MS,
            5_000.0,
            0,
        );
    }
    assert_eq!(p.rate, 100.0);
}

#[test]
fn an_epoch_of_clean_answers_raises_the_pace_unless_the_workers_were_idle() {
    let mut p = Pace::new(5_000.0, 0);
    // Slow start: 10/s, reserved at the pace for a second.
    p.reserve(0, 10, 5_000.0, 0, Unused::default());
    p.seen(accepted(500 * MS, 10.0, None), S, 5_000.0, 250 * MS);
    assert!((p.rate - 15.0).abs() < 1e-9, "{}", p.rate);
    // Nothing reserved in the next second: no increase, a new epoch.
    p.seen(accepted(S + 500 * MS, 15.0, None), 2 * S, 5_000.0, 250 * MS);
    assert!((p.rate - 15.0).abs() < 1e-9, "{}", p.rate);
    assert_eq!(p.epoch_start_us, 2 * S);
    // Never above the ceiling of the worker that reports.
    p.reserve(0, 100, 5_000.0, 2 * S, Unused::default());
    p.seen(accepted(2 * S + 1, 15.0, None), 4 * S, 20.0, 250 * MS);
    assert_eq!(p.rate, 20.0);
}

#[test]
fn a_stale_pace_starts_afresh() {
    let mut p = Pace::new(5_000.0, 0);
    p.rate = 300.0;
    assert_eq!(p.resume(5_000.0, STALE_US - 1).rate, 300.0);
    assert_eq!(
        p.resume(5_000.0, STALE_US + 1),
        Pace::new(5_000.0, STALE_US + 1)
    );
}

#[test]
fn a_worker_reports_its_429s_its_drain_and_one_answer_per_due_epoch() {
    let mut view = Pace::new(5_000.0, 0);
    view.rate = 100.0;
    let mut r = Reporter::default();
    // Not due yet: nothing.
    assert_eq!(
        r.answer(&view, accepted(0, 100.0, None), 100 * MS, 250 * MS),
        None
    );
    // Due: one report for this epoch, not two.
    assert!(
        r.answer(&view, accepted(10 * MS, 100.0, None), 300 * MS, 250 * MS)
            .is_some()
    );
    assert_eq!(
        r.answer(&view, accepted(20 * MS, 100.0, None), 310 * MS, 250 * MS),
        None
    );
    // Another worker's 429 began an event this one learns of later: its
    // clean answers since the first refused call are counted once.
    let early = accepted(400 * MS, 100.0, None);
    assert_eq!(r.answer(&view, early, 420 * MS, 250 * MS), None);
    view.seen(refused(390 * MS, 100.0), 440 * MS, 5_000.0, 250 * MS);
    let caught = r.catch_up(&view, 450 * MS);
    assert_eq!(caught, vec![accepted(400 * MS, 100.0, Some(view.events))]);
    assert!(r.catch_up(&view, 460 * MS).is_empty());
    // During the drain every answer is reported, for its event.
    let during = r.answer(&view, accepted(410 * MS, 100.0, None), 470 * MS, 250 * MS);
    assert_eq!(during.and_then(|s| s.event), Some(view.events));
    assert!(
        r.answer(&view, refused(415 * MS, 100.0), 480 * MS, 250 * MS)
            .is_some()
    );
}

/// What happened in a simulated run: accepted and refused calls per second.
struct Ran {
    ok: Vec<u64>,
    limited: Vec<u64>,
    /// The shared pace at the start of each second.
    pace: Vec<f64>,
}

impl Ran {
    /// Accepted calls/s from `from` s to the end, ÷ `limit`; the share of
    /// 429s among all calls.
    fn figures(&self, from: usize, limit: f64) -> (f64, f64) {
        let ok: u64 = self.ok[from..].iter().sum();
        let secs = (self.ok.len() - from) as f64;
        let all: u64 = self.ok.iter().sum::<u64>() + self.limited.iter().sum::<u64>();
        (
            ok as f64 / secs / limit,
            self.limited.iter().sum::<u64>() as f64 / all as f64,
        )
    }
}

/// A simulated run: `workers` workers sharing one pace against a provider
/// with `limit` calls/s (burst one second) and `latency_ms` +
/// 0..=`jitter_ms`, for `secs` seconds. Reports reach the shared state
/// `db_ms` after the answer (a database round trip); views refresh at each
/// reservation.
#[derive(Clone, Copy)]
struct Case {
    workers: usize,
    limit: f64,
    latency_ms: i64,
    jitter_ms: i64,
    db_ms: i64,
    secs: i64,
    /// How late a worker short of CPU (a debug build on a loaded machine)
    /// wakes for its slots: exponentially distributed, this mean in ms in
    /// even 10-second periods and a quarter of it in odd ones (the load
    /// comes and goes). A slot woken for too late is let pass, as
    /// `shared.rs` drops it, and said so at the worker's next reservation.
    late_ms: f64,
}

impl Case {
    fn new(workers: usize, limit: f64, latency_ms: i64, jitter_ms: i64) -> Case {
        Case {
            workers,
            limit,
            latency_ms,
            jitter_ms,
            db_ms: 2,
            secs: 60,
            late_ms: 0.0,
        }
    }
}

enum Ev {
    /// A worker's next slot comes (or it has none: it reserves).
    Slot(usize),
    /// An answer: worker, slot, pace then, accepted or `Retry-After` µs.
    Answer(usize, i64, f64, Option<i64>),
}

/// Runs `case`: each worker always has work.
fn simulate(case: Case) -> Ran {
    let Case {
        workers,
        limit,
        latency_ms,
        jitter_ms,
        db_ms,
        secs,
        late_ms,
    } = case;
    let ceiling = aimd::AUTO_MAX_RATE;
    let mut shared = Pace::new(ceiling, 0);
    let mut tat = 0i64;
    let mut views = vec![shared; workers];
    let mut reporters: Vec<Reporter> = (0..workers).map(|_| Reporter::default()).collect();
    // Each slot: when, the pace then, the epoch it was reserved in.
    let mut slots: Vec<VecDeque<(i64, f64, i64)>> = vec![VecDeque::new(); workers];
    let mut unused = vec![Unused::default(); workers];
    let mut queue: BinaryHeap<Reverse<(i64, u64, usize)>> = BinaryHeap::new();
    let mut evs: Vec<Option<Ev>> = Vec::new();
    let push = |q: &mut BinaryHeap<_>, evs: &mut Vec<Option<Ev>>, at: i64, ev: Ev| {
        evs.push(Some(ev));
        q.push(Reverse((at, evs.len() as u64 - 1, 0)));
    };
    for w in 0..workers {
        push(&mut queue, &mut evs, w as i64 * 7 * MS, Ev::Slot(w));
    }
    let (mut ptat, mut seed) = (0.0f64, 0x9E37_79B9_7F4A_7C15u64);
    let mut ran = Ran {
        ok: vec![0; secs as usize],
        limited: vec![0; secs as usize],
        pace: Vec::new(),
    };
    let end = secs * S;
    let mut pending: Vec<(i64, usize, Seen)> = Vec::new();
    while let Some(Reverse((now, id, _))) = queue.pop() {
        if now >= end {
            break;
        }
        // Reports whose database call is done by now.
        pending.sort_by_key(|p| p.0);
        while pending.first().is_some_and(|p| p.0 <= now) {
            let (at, w, s) = pending.remove(0);
            shared.seen(s, at, ceiling, latency_ms * MS);
            views[w] = shared;
            for s in reporters[w].catch_up(&views[w], at) {
                shared.seen(s, at, ceiling, latency_ms * MS);
            }
        }
        if ran.pace.len() as i64 <= now / S {
            ran.pace.push(shared.rate);
        }
        match evs[id as usize].take().expect("an event") {
            Ev::Slot(w) => {
                let Some((slot, rate, epoch)) = slots[w].pop_front() else {
                    let n = super::super::shared::batch_size(shared.rate.round() as u32);
                    let given_back = std::mem::take(&mut unused[w]);
                    let (first, interval, next) = shared.reserve(tat, n, ceiling, now, given_back);
                    tat = next;
                    let rate = shared.rate;
                    let epoch = shared.epoch_start_us;
                    slots[w] = (0..i64::from(n))
                        .map(|k| (first + k * interval, rate, epoch))
                        .collect();
                    views[w] = shared;
                    for s in reporters[w].catch_up(&views[w], now) {
                        pending.push((now + db_ms * MS, w, s));
                    }
                    // The answer comes back a round trip later: the slots
                    // are taken that much later on the worker's clock.
                    push(&mut queue, &mut evs, first + db_ms * MS, Ev::Slot(w));
                    continue;
                };
                let mut draw = || {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed
                };
                let mean = if (now / S / 10) % 2 == 0 {
                    late_ms
                } else {
                    late_ms / 4.0
                };
                let late = if mean > 0.0 {
                    let u = (draw() % 1_000_000) as f64 / 1e6;
                    (-mean * (1.0 - u).ln() * MS as f64) as i64
                } else {
                    0
                };
                let interval = super::interval_us(rate);
                let grace = super::super::shared::grace(
                    std::time::Duration::from_micros(interval as u64),
                    super::super::shared::AUTO_GRACE,
                )
                .as_micros() as i64;
                if late > grace {
                    // Woken too late for this slot: it passes unused.
                    unused[w].add(epoch);
                    let next = slots[w].front().map_or(now, |s| s.0 + db_ms * MS);
                    push(&mut queue, &mut evs, next.max(now), Ev::Slot(w));
                    continue;
                }
                let seed = draw();
                let sent = slot + db_ms * MS + late;
                let lat = (latency_ms + (seed % (jitter_ms as u64 + 1)) as i64) * MS;
                let t = (sent + lat) as f64 / 1e6;
                let cell = 1.0 / limit;
                let tau = (limit - 1.0) * cell;
                let verdict = if ptat <= t + tau {
                    ptat = ptat.max(t) + cell;
                    None
                } else {
                    Some(((ptat - tau - t).ceil().max(1.0) * 1e6) as i64)
                };
                let sec = ((sent + lat) / S) as usize;
                if sec < ran.ok.len() {
                    match verdict {
                        None => ran.ok[sec] += 1,
                        Some(_) => ran.limited[sec] += 1,
                    }
                }
                push(
                    &mut queue,
                    &mut evs,
                    sent + lat,
                    Ev::Answer(w, slot, rate, verdict),
                );
                let next = slots[w].front().map_or(sent, |s| s.0 + db_ms * MS);
                push(&mut queue, &mut evs, next.max(sent), Ev::Slot(w));
            }
            Ev::Answer(w, slot, rate, verdict) => {
                let seen = Seen {
                    slot_us: slot,
                    rate,
                    retry_after_us: verdict,
                    event: None,
                };
                if verdict.is_some() {
                    // The worker pauses: its reserved slots are given up.
                    slots[w].clear();
                }
                if let Some(s) = reporters[w].answer(&views[w], seen, now, latency_ms * MS) {
                    pending.push((now + db_ms * MS, w, s));
                }
            }
        }
    }
    ran
}

#[test]
fn three_workers_settle_just_under_an_unknown_limit_together() {
    for (limit, lat, jitter) in [
        (100.0, 50, 0),
        (400.0, 50, 0),
        (100.0, 300, 200),
        (400.0, 300, 200),
    ] {
        for workers in [1, 3] {
            let ran = simulate(Case::new(workers, limit, lat, jitter));
            if std::env::var_os("POOLED_TRACE").is_some() {
                println!("ok/s {:?}\nlimited/s {:?}", ran.ok, ran.limited);
            }
            let (ratio, share) = ran.figures(10, limit);
            println!(
                "L={limit} lat={lat}±{jitter} workers={workers}: {ratio:.3} of L, {:.2} % 429s",
                share * 100.0
            );
            assert!(
                ratio >= 0.9,
                "L={limit} {lat} ms, {workers} workers: {ratio}"
            );
            assert!(
                share <= 0.02,
                "L={limit} {lat} ms, {workers} workers: {share}"
            );
        }
    }
}

/// Workers short of CPU, waking late for many of their slots (which they
/// let pass) and more or fewer as the load comes and goes, together still
/// reach the limit with few 429s, as one worker does: the pace follows
/// what they send, not the slots they reserve.
#[test]
fn workers_that_let_slots_pass_still_settle_just_under_the_limit() {
    let mut bad = Vec::new();
    for (limit, workers) in [(100.0, 1), (100.0, 3), (400.0, 1), (400.0, 3)] {
        let ran = simulate(Case {
            late_ms: 8.0,
            ..Case::new(workers, limit, 50, 0)
        });
        let (ratio, share) = ran.figures(10, limit);
        let top = ran.pace[10..].iter().cloned().fold(0.0, f64::max);
        println!(
            "late L={limit} workers={workers}: {ratio:.3} of L, {:.2} % 429s, pace up to {top:.0}",
            share * 100.0
        );
        if std::env::var_os("POOLED_TRACE").is_some() {
            println!(
                "ok/s {:?}\nlimited/s {:?}\npace {:?}",
                ran.ok, ran.limited, ran.pace
            );
        }
        bad.extend(
            (ratio < 0.9 || share > 0.02)
                .then(|| format!("L={limit}, {workers} workers: {ratio}, {share}")),
        );
    }
    assert!(bad.is_empty(), "{bad:?}");
}

#[test]
fn slots_let_pass_are_taken_back_from_the_epoch_they_were_reserved_in() {
    let mut p = Pace::new(5_000.0, 0);
    p.reserve(0, 8, 5_000.0, 0, Unused::default());
    let mut passed = Unused::default();
    passed.add(0);
    passed.add(0);
    // An older epoch's, seen after a newer one's: forgotten.
    passed.add(-5);
    assert_eq!(passed.slots, 2);
    p.reserve(0, 8, 5_000.0, 0, passed);
    assert_eq!(p.epoch_sent, 14);
    // A newer epoch began: the last one's count is decided, nothing to
    // take back from the new one.
    p.epoch_start_us = S;
    p.epoch_sent = 0;
    p.reserve(0, 4, 5_000.0, S, passed);
    assert_eq!(p.epoch_sent, 4);
    passed.add(S);
    assert_eq!(
        passed,
        Unused {
            epoch_start_us: S,
            slots: 1
        }
    );
}
