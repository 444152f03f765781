//! Rate limiting: one GCRA limiter shared by every call, with AIMD on 429
//! (halve the rate and pause everyone on `Retry-After`; add back a tenth of
//! the maximum after about a second of successes).

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct LimiterState {
    rate: u32,
    limiter: Arc<DefaultDirectRateLimiter>,
    paused_until: Option<tokio::time::Instant>,
    successes: u32,
}

pub struct Limiter {
    max_rate: u32,
    state: Mutex<LimiterState>,
}

/// The burst allowed by the limiter: a few calls' worth, so timer lateness
/// of the workers is absorbed instead of lost, while no one-second window
/// sees much more than the rate.
fn burst_for(rate: u32) -> NonZeroU32 {
    NonZeroU32::new((rate / 20).clamp(1, 50)).expect("non-zero")
}

fn make_limiter(rate: u32) -> Arc<DefaultDirectRateLimiter> {
    let rate = NonZeroU32::new(rate.max(1)).expect("non-zero");
    Arc::new(RateLimiter::direct(
        Quota::per_second(rate).allow_burst(burst_for(rate.get())),
    ))
}

impl Limiter {
    pub fn new(rate: u32) -> Limiter {
        Limiter {
            max_rate: rate.max(1),
            state: Mutex::new(LimiterState {
                rate: rate.max(1),
                limiter: make_limiter(rate),
                paused_until: None,
                successes: 0,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LimiterState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a pause to end and for a slot under the current rate.
    pub async fn acquire(&self) {
        loop {
            let (limiter, pause) = {
                let s = self.lock();
                (s.limiter.clone(), s.paused_until)
            };
            if let Some(until) = pause
                && until > tokio::time::Instant::now()
            {
                tokio::time::sleep_until(until).await;
                continue;
            }
            limiter.until_ready().await;
            let pause = self.lock().paused_until;
            if matches!(pause, Some(until) if until > tokio::time::Instant::now()) {
                continue;
            }
            return;
        }
    }

    /// A 429: pause every worker until `Retry-After`, halve the rate.
    pub fn on_rate_limited(&self, retry_after: Duration) {
        let mut s = self.lock();
        let until = tokio::time::Instant::now() + retry_after;
        s.paused_until = Some(s.paused_until.map_or(until, |u| u.max(until)));
        let new_rate = (s.rate / 2).max(1);
        if new_rate != s.rate {
            s.rate = new_rate;
            s.limiter = make_limiter(new_rate);
        }
        s.successes = 0;
        tracing::info!(rate = s.rate, ?retry_after, "rate limited by the provider");
    }

    /// A success: after about a second's worth of them, raise the rate by a
    /// tenth of the configured maximum (additive increase).
    pub fn on_success(&self) {
        let mut s = self.lock();
        if s.rate >= self.max_rate {
            return;
        }
        s.successes += 1;
        if s.successes >= s.rate {
            s.rate = (s.rate + (self.max_rate / 10).max(1)).min(self.max_rate);
            s.limiter = make_limiter(s.rate);
            s.successes = 0;
        }
    }

    pub fn current_rate(&self) -> u32 {
        self.lock().rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn limiter_halves_on_429_and_recovers() {
        let l = Limiter::new(40);
        assert_eq!(l.current_rate(), 40);
        l.on_rate_limited(Duration::from_secs(2));
        assert_eq!(l.current_rate(), 20);
        let before = tokio::time::Instant::now();
        l.acquire().await;
        assert!(tokio::time::Instant::now() - before >= Duration::from_secs(2));
        for _ in 0..20 {
            l.on_success();
        }
        assert_eq!(l.current_rate(), 24);
        for _ in 0..1000 {
            l.on_success();
        }
        assert_eq!(l.current_rate(), 40);
    }
}
