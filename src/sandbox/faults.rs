//! Fault injection for the sandbox: latency and jitter, the global rate
//! limit, 5xx answers given before anything is done, and "ambiguous"
//! answers given after the call was carried out. Every random choice comes
//! from one seeded RNG, drawn in a fixed order when a request arrives, so a
//! sequence of sequential calls meets exactly the same faults on every run
//! with the same `--seed`.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The 5xx statuses a failed call is answered with, drawn uniformly: the
/// three a provider's load balancer or application typically gives.
const FAIL_STATUSES: [StatusCode; 3] = [
    StatusCode::INTERNAL_SERVER_ERROR,
    StatusCode::BAD_GATEWAY,
    StatusCode::SERVICE_UNAVAILABLE,
];

/// How a call that was carried out is answered when it is made ambiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ambiguity {
    /// A 503 answer, indistinguishable from a 503 given before doing anything.
    Unavailable,
    /// The connection is closed without a single byte of answer.
    Cut,
}

/// The faults one request meets, decided when it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Waited before the request is looked at.
    pub delay: Duration,
    /// Answer with this 5xx status and do nothing.
    pub fail: Option<StatusCode>,
    /// Carry the call out, then answer it this way.
    pub ambiguous: Option<Ambiguity>,
}

/// The fault knobs of one sandbox, shared by all its requests.
pub(crate) struct Faults {
    rng: Mutex<StdRng>,
    /// Milliseconds; changeable at run time (`/_sandbox/control`).
    latency_ms: AtomicU64,
    jitter_ms: u64,
    fail_rate: f64,
    ambiguous_rate: f64,
    /// Replaced at run time by `/_sandbox/control`.
    limiter: RwLock<Option<Arc<Gcra>>>,
}

/// The limiter for `n` calls per second.
fn limiter(rate_limit: Option<u32>) -> anyhow::Result<Option<Arc<Gcra>>> {
    match rate_limit {
        None => Ok(None),
        Some(n) => {
            let n = NonZeroU32::new(n)
                .ok_or_else(|| anyhow::anyhow!("rate_limit must be at least 1 request/s"))?;
            Ok(Some(Arc::new(Gcra::per_second(n))))
        }
    }
}

/// `n` calls per second with a burst of one second's worth, `n` (the
/// generic cell rate algorithm): a client pacing itself at the limit is
/// never refused, one exceeding it soon is.
struct Gcra {
    /// One call's share of a second.
    t: Duration,
    /// How far ahead of the clock the schedule may run: `n - 1` calls.
    tau: Duration,
    start: Instant,
    /// The theoretical arrival time of the next call, since `start`.
    tat: Mutex<Option<Duration>>,
}

impl Gcra {
    fn per_second(n: NonZeroU32) -> Gcra {
        let t = (Duration::from_secs(1) / n.get()).max(Duration::from_nanos(1));
        Gcra {
            t,
            tau: t * (n.get() - 1),
            start: Instant::now(),
            tat: Mutex::new(None),
        }
    }

    /// Takes one call; `Err` is how long until one would be let through.
    fn check(&self) -> Result<(), Duration> {
        let now = self.start.elapsed();
        let mut tat = self.tat.lock().unwrap_or_else(|e| e.into_inner());
        let due = tat.unwrap_or(now);
        let earliest = due.saturating_sub(self.tau);
        if now < earliest {
            return Err(earliest - now);
        }
        *tat = Some(due.max(now) + self.t);
        Ok(())
    }
}

/// Checks a probability knob; `rand` panics on values outside [0, 1].
pub(crate) fn check_rate(name: &str, p: f64) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&p) {
        anyhow::bail!("{name} must be a probability between 0 and 1, got {p}");
    }
    Ok(())
}

impl Faults {
    pub(crate) fn new(
        seed: u64,
        latency_ms: u64,
        jitter_ms: u64,
        rate_limit: Option<u32>,
        fail_rate: f64,
        ambiguous_rate: f64,
    ) -> anyhow::Result<Faults> {
        check_rate("fail_rate", fail_rate)?;
        check_rate("ambiguous_rate", ambiguous_rate)?;
        Ok(Faults {
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
            latency_ms: AtomicU64::new(latency_ms),
            jitter_ms,
            fail_rate,
            ambiguous_rate,
            limiter: RwLock::new(limiter(rate_limit)?),
        })
    }

    /// Replaces the rate limit (`None`: unlimited), starting afresh.
    pub(crate) fn set_rate_limit(&self, rate_limit: Option<u32>) -> anyhow::Result<()> {
        let new = limiter(rate_limit)?;
        *self.limiter.write().unwrap_or_else(|e| e.into_inner()) = new;
        Ok(())
    }

    /// Replaces the latency added to every call.
    pub(crate) fn set_latency_ms(&self, ms: u64) {
        self.latency_ms.store(ms, Ordering::Relaxed);
    }

    /// Draws the faults of one request. The draws happen in a fixed order
    /// and do not depend on what the request turns out to be, so sequential
    /// calls replay the same sequence for the same seed.
    pub(crate) fn plan(&self) -> Plan {
        let mut plan = Plan {
            delay: Duration::from_millis(self.latency_ms.load(Ordering::Relaxed)),
            fail: None,
            ambiguous: None,
        };
        if self.jitter_ms == 0 && self.fail_rate == 0.0 && self.ambiguous_rate == 0.0 {
            return plan;
        }
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        if self.jitter_ms > 0 {
            plan.delay += Duration::from_millis(rng.random_range(0..=self.jitter_ms));
        }
        if self.fail_rate > 0.0 && rng.random_bool(self.fail_rate) {
            plan.fail = Some(FAIL_STATUSES[rng.random_range(0..FAIL_STATUSES.len())]);
        }
        if self.ambiguous_rate > 0.0 && rng.random_bool(self.ambiguous_rate) {
            plan.ambiguous = Some(if rng.random_bool(0.5) {
                Ambiguity::Unavailable
            } else {
                Ambiguity::Cut
            });
        }
        plan
    }

    /// Takes one request from the rate limit. `Err` carries the
    /// `Retry-After` value: whole seconds, at least 1 (the header cannot say
    /// less, and 0 would invite an immediate retry storm).
    pub(crate) fn admit(&self) -> Result<(), u64> {
        let current = self
            .limiter
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(limiter) = current else {
            return Ok(());
        };
        limiter.check().map_err(retry_after_secs)
    }
}

/// Rounds a wait up to whole seconds, at least 1.
fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence(faults: &Faults, n: usize) -> Vec<Plan> {
        (0..n).map(|_| faults.plan()).collect()
    }

    #[test]
    fn same_seed_same_plans() {
        let a = Faults::new(7, 1, 20, None, 0.3, 0.3).unwrap();
        let b = Faults::new(7, 1, 20, None, 0.3, 0.3).unwrap();
        let c = Faults::new(8, 1, 20, None, 0.3, 0.3).unwrap();
        let (sa, sb, sc) = (sequence(&a, 200), sequence(&b, 200), sequence(&c, 200));
        assert_eq!(sa, sb);
        assert_ne!(sa, sc);
    }

    #[test]
    fn rates_are_honoured_at_the_extremes() {
        let never = Faults::new(1, 0, 0, None, 0.0, 0.0).unwrap();
        assert!(
            sequence(&never, 100)
                .iter()
                .all(|p| p.fail.is_none() && p.ambiguous.is_none() && p.delay.is_zero())
        );
        let always = Faults::new(1, 5, 0, None, 1.0, 1.0).unwrap();
        let plans = sequence(&always, 100);
        assert!(
            plans
                .iter()
                .all(|p| p.fail.is_some() && p.ambiguous.is_some())
        );
        assert!(plans.iter().all(|p| p.delay == Duration::from_millis(5)));
        // Both ambiguity variants and all three statuses occur.
        assert!(plans.iter().any(|p| p.ambiguous == Some(Ambiguity::Cut)));
        assert!(
            plans
                .iter()
                .any(|p| p.ambiguous == Some(Ambiguity::Unavailable))
        );
        for status in FAIL_STATUSES {
            assert!(plans.iter().any(|p| p.fail == Some(status)), "{status}");
        }
    }

    #[test]
    fn jitter_stays_in_bounds() {
        let f = Faults::new(3, 10, 5, None, 0.0, 0.0).unwrap();
        for p in sequence(&f, 200) {
            assert!(p.delay >= Duration::from_millis(10) && p.delay <= Duration::from_millis(15));
        }
    }

    #[test]
    fn bad_knobs_are_errors() {
        assert!(Faults::new(0, 0, 0, None, 1.5, 0.0).is_err());
        assert!(Faults::new(0, 0, 0, None, 0.0, -0.1).is_err());
        assert!(Faults::new(0, 0, 0, None, f64::NAN, 0.0).is_err());
        assert!(Faults::new(0, 0, 0, Some(0), 0.0, 0.0).is_err());
    }

    #[test]
    fn rate_limit_refuses_beyond_the_burst() {
        let f = Faults::new(0, 0, 0, Some(2), 0.0, 0.0).unwrap();
        let results: Vec<_> = (0..10).map(|_| f.admit()).collect();
        assert!(results[0].is_ok());
        let refused: Vec<u64> = results.iter().filter_map(|r| r.err()).collect();
        assert!(!refused.is_empty());
        assert!(refused.iter().all(|&s| s >= 1));
    }

    #[test]
    fn rate_limit_changes_at_run_time() {
        let f = Faults::new(0, 0, 0, Some(1000), 0.0, 0.0).unwrap();
        assert!((0..50).all(|_| f.admit().is_ok()));
        f.set_rate_limit(Some(1)).unwrap();
        assert!(f.admit().is_ok());
        assert!(f.admit().is_err());
        f.set_rate_limit(None).unwrap();
        assert!((0..50).all(|_| f.admit().is_ok()));
        assert!(f.set_rate_limit(Some(0)).is_err());
        f.set_latency_ms(7);
        assert_eq!(f.plan().delay, Duration::from_millis(7));
    }

    #[test]
    fn retry_after_rounds_up_to_at_least_one() {
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1000)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(1001)), 2);
    }
}
