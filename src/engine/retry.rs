//! The retry policy of one provider call: which answers are retried, how
//! often, with what backoff, and what is known at the end (requests sent,
//! whether one may have been carried out). It chooses no state: it hands
//! its [`CallEnd`] to the decisions of [`crate::machine::decide`].

use super::{Ctx, Stop};
use crate::fault;
use crate::limiter::RateLimited;
use crate::provider::{Outcome, Sent};
use crate::store::Work;
use rand::Rng;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Attempts per call for answers that are safe to retry (request not sent;
/// 5xx on an initiation). Eight attempts with capped backoff span up to ~20 s:
/// enough to ride out a blip, not enough to hammer a provider that is down.
pub const MAX_ATTEMPTS: u32 = 8;
/// 429s tolerated in a row for one call before the payout is given up for
/// this run (it stays resumable). A provider that keeps answering 429 after
/// this many pauses is not going to recover within the run.
pub const MAX_RATE_LIMITED: u32 = 50;
/// Backoff base and cap (full jitter: a random wait in `[0, min(cap, base * 2^n))`).
/// The cap keeps one payout from waiting longer than a provider blip lasts.
pub const BACKOFF_BASE: Duration = Duration::from_millis(100);
pub const BACKOFF_CAP: Duration = Duration::from_secs(5);

/// The backoff timings of one run. Production uses the defaults above;
/// the end-to-end tests shorten them (`PAYRUN_BACKOFF_MS`, read once by
/// `cmd::run`) so that no test waits on real backoff. The number of
/// attempts is not changed: the tests exercise the real retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub cap: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            base: BACKOFF_BASE,
            cap: BACKOFF_CAP,
        }
    }
}

impl Backoff {
    /// A base of `base_ms`, with the cap in the same ratio to it as the
    /// defaults (50 × base).
    pub fn from_base_ms(base_ms: u64) -> Backoff {
        let base = Duration::from_millis(base_ms);
        let ratio = (BACKOFF_CAP.as_millis() / BACKOFF_BASE.as_millis()) as u32;
        Backoff {
            base,
            cap: base.saturating_mul(ratio),
        }
    }

    /// The longest wait before attempt `attempt + 1`: `base * 2^attempt`,
    /// capped.
    pub fn ceiling(self, attempt: u32) -> Duration {
        self.base
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.cap)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Initiate,
    Execute,
}

/// The end of one call, after retries.
pub struct CallEnd {
    /// `None` when the run is stopping and no final answer was obtained.
    pub outcome: Option<Outcome>,
    /// Requests that left (or may have left) the process.
    pub sent: u32,
    /// Some attempt may have been carried out by the provider.
    pub maybe_landed: bool,
}

/// One call with the retry policy (README, "Retries"): not-sent answers and
/// 5xx on an initiation are retried with backoff; 429 waits for the shared
/// limiter; an ambiguous execute is never re-sent here (see `resend`).
/// The limiter's slot is held until the answer, so it knows when the call
/// left (one back-off per congestion event) and how long the answer took.
pub(super) async fn call_with_retries(ctx: &Ctx, call: Call, work: &Work) -> CallEnd {
    let mut end = CallEnd {
        outcome: None,
        sent: 0,
        maybe_landed: false,
    };
    let mut failures = 0u32;
    let mut limited = 0u32;
    loop {
        // `None`: the run is stopping; a wait (even a `Retry-After` pause)
        // ends at once.
        let Some(slot) = ctx.limiter.acquire().await else {
            return end;
        };
        if ctx.stopping() {
            return end;
        }
        // On a shared run: in a slot of the provider's rate shared with the
        // other workers, and only while this worker's lease outlasts the
        // request's deadline (`lease`); the transport asks the lease once
        // more at the last moment, so a worker frozen from here on that
        // wakes with its lease lapsed sends nothing.
        let Some(ticket) = ctx.shared_slot().await else {
            return end;
        };
        if !ctx.may_send() {
            return end;
        }
        if end.sent == 0 {
            fault::hit("before_send");
        }
        if call == Call::Execute {
            fault::hit("checked_execute");
        }
        end.sent += 1;
        ctx.counters.calls.fetch_add(1, Ordering::Relaxed);
        let outcome = match call {
            Call::Initiate => ctx.client.initiate(&work.request).await,
            Call::Execute => ctx.client.execute(&Sent::of(&work.request)).await,
        };
        tracing::debug!(
            transaction_id = %work.request.transaction_id,
            call = ?call,
            code = outcome.code(),
            "provider answered"
        );
        // (give up now, wait before the next attempt)
        let (give_up, wait) = match outcome {
            // The shared limiter pauses everyone for the `Retry-After`.
            Outcome::RateLimited { retry_after } => {
                limited += 1;
                ctx.shared_answer(ticket, Some(retry_after));
                match slot.rate_limited(retry_after) {
                    RateLimited::Paused { .. } => (limited >= MAX_RATE_LIMITED, false),
                    RateLimited::TooLong { asked, pause } => {
                        ctx.request_stop(Stop::Unreachable(format!(
                            "it asks to wait {}s before the next call (Retry-After), \
                             more than the {}s payrun pauses for within a run",
                            asked.as_secs(),
                            pause.as_secs()
                        )));
                        (true, false)
                    }
                }
            }
            Outcome::NotSent { .. } => {
                slot.other();
                failures += 1;
                (failures >= MAX_ATTEMPTS, true)
            }
            Outcome::Ambiguous { .. } => {
                slot.other();
                end.maybe_landed = true;
                failures += 1;
                // An initiate moves no money: re-sent at once. An execute
                // never is, here, right after the timeout: with
                // `ambiguous = resend` it is re-sent once, later (`resend`).
                let resend = call == Call::Initiate;
                (!resend || failures >= MAX_ATTEMPTS, resend)
            }
            // The provider coped: a success or a business answer.
            Outcome::Accepted { .. } | Outcome::Refused { .. } | Outcome::NotFinal { .. } => {
                ctx.shared_answer(ticket, None);
                slot.success();
                (true, false)
            }
            // Says nothing about the rate; only its latency counts.
            Outcome::Unauthorized { .. }
            | Outcome::Mismatch { .. }
            | Outcome::Contradictory { .. }
            | Outcome::Stop { .. } => {
                slot.other();
                (true, false)
            }
        };
        if give_up {
            end.outcome = Some(outcome);
            return end;
        }
        if wait {
            backoff(ctx.opts.backoff, failures).await;
        }
    }
}

/// Full-jitter exponential backoff.
async fn backoff(timings: Backoff, attempt: u32) {
    let ceiling = timings.ceiling(attempt);
    let wait = rand::rng().random_range(0..=ceiling.as_millis() as u64);
    tokio::time::sleep(Duration::from_millis(wait)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_base_up_to_the_cap() {
        let b = Backoff::default();
        assert_eq!(b.ceiling(0), Duration::from_millis(100));
        assert_eq!(b.ceiling(1), Duration::from_millis(200));
        assert_eq!(b.ceiling(3), Duration::from_millis(800));
        assert_eq!(b.ceiling(6), BACKOFF_CAP);
        assert_eq!(b.ceiling(40), BACKOFF_CAP);
        let fast = Backoff::from_base_ms(2);
        assert_eq!(fast.base, Duration::from_millis(2));
        assert_eq!(fast.cap, Duration::from_millis(100));
        assert_eq!(fast.ceiling(2), Duration::from_millis(8));
        assert_eq!(fast.ceiling(9), Duration::from_millis(100));
    }
}
