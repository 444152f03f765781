//! The run's one re-send (`ambiguous = resend`): an execute whose outcome
//! ended unknown in this run is sent once more under the same
//! transactionId — never inside the retry loop right after the timeout,
//! but after the main pass, once [`EngineOptions::resend_delay`] has passed
//! since its outcome was recorded, so a provider still working on the
//! first request has time to finish it. What the answer settles is
//! [`decide::settle_by_resend`]; a payout that learns nothing stays
//! `unknown` for `payrun reconcile`. See `docs/provider.md` for when this
//! is safe.
//!
//! [`EngineOptions::resend_delay`]: super::EngineOptions

use super::pay::answer_of;
use super::{Ctx, Stop};
use crate::machine::State;
use crate::machine::decide::{self, Resent};
use crate::provider::{Outcome, Sent};
use crate::shutdown::Shutdown;
use crate::store::{Transition, Work};
use anyhow::Result;
use std::time::Instant;

/// One payout to re-send, and when its unknown outcome was recorded.
pub(super) struct Due {
    pub work: Work,
    pub since: Instant,
}

/// Re-sends each payout once, in the order they became unknown, each no
/// sooner than `resend_delay` after that. Stops waiting at once when the
/// run is asked to stop.
pub(super) async fn resend_once(ctx: &Ctx, due: Vec<Due>, mut shutdown: Shutdown) -> Result<()> {
    for d in due {
        if ctx.stopping() {
            return Ok(());
        }
        let at = d.since + ctx.opts.resend_delay;
        tokio::select! {
            _ = tokio::time::sleep_until(at.into()) => {}
            _ = shutdown.recv() => {
                ctx.request_stop(Stop::Interrupted);
                return Ok(());
            }
        }
        ctx.limiter.acquire().await;
        if !ctx.shared_slot().await || !ctx.may_send() {
            return Ok(());
        }
        ctx.counters
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let outcome = ctx.client.execute(&Sent::of(&d.work.request)).await;
        tracing::debug!(
            transaction_id = %d.work.request.transaction_id,
            code = outcome.code(),
            "re-sent execute answered"
        );
        match decide::settle_by_resend(State::Unknown, answer_of(Some(&outcome))) {
            Resent::Settled(to) => {
                let mut t = Transition::new(d.work.id, State::Unknown, to);
                t.attempts = 1;
                t.code = Some(outcome.code().to_string());
                t.message = Some(format!("re-sent once: {}", outcome.message()));
                t.stamp_executed = to == State::Executed;
                ctx.writer.apply(vec![t]).await?;
            }
            Resent::StillUnknown => {}
            Resent::Unauthorized => {
                ctx.request_stop(Stop::Unauthorized(outcome.message()));
                return Ok(());
            }
            Resent::ConfigStop(kind) => {
                let detail = match &outcome {
                    Outcome::Stop { detail, .. } => detail.clone(),
                    o => o.message(),
                };
                ctx.request_stop(Stop::Config(super::stops::config_stop(kind, &detail)));
                return Ok(());
            }
        }
    }
    Ok(())
}
