//! The run's one re-send (`ambiguous = resend`): an execute whose outcome
//! ended unknown in this run is sent once more under the same
//! transactionId — never inside the retry loop right after the timeout,
//! but after the main pass, once [`EngineOptions::resend_delay`] has passed
//! since its outcome was recorded, so a provider still working on the
//! first request has time to finish it. Like every send, it is claimed
//! first (`unknown → executing`, committed only if still unknown) and
//! looks at the stop signal before it leaves. What the answer settles is
//! [`decide::settle_by_resend`]; a payout that learns nothing goes back to
//! `unknown` for `payrun reconcile`. See `docs/provider.md` for when this
//! is safe.
//!
//! [`EngineOptions::resend_delay`]: super::EngineOptions

use super::pay::answer_of;
use super::{Ctx, Stop};
use crate::fault;
use crate::machine::State;
use crate::machine::decide::{self, Resent};
use crate::provider::{Outcome, Sent};
use crate::shutdown::Shutdown;
use crate::store::{Transition, Work, WriteError};
use anyhow::Result;
use std::time::Instant;

/// One payout to re-send, and when its unknown outcome was recorded.
pub(super) struct Due {
    pub work: Work,
    pub since: Instant,
}

/// Re-sends each payout once, in the order they became unknown, each no
/// sooner than `resend_delay` after that. Stops waiting at once when the
/// run is asked to stop, and sends nothing after a stop. Each send is
/// preceded by its claim (`unknown → executing`, [`decide::resend_claim`])
/// committed only if the payout is still unknown: one another process
/// settled meanwhile (`reconcile --mark`, a statement, a status call — a
/// terminal or a worker on a shared database) is left as it is.
pub(super) async fn resend_once(ctx: &Ctx, due: Vec<Due>, mut shutdown: Shutdown) -> Result<()> {
    for d in due {
        if ctx.stopping() || shutdown.fired() {
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
        if ctx.shared_slot().await.is_none() || !ctx.may_send() {
            return Ok(());
        }
        if !claim(ctx, &d.work, &shutdown).await? {
            continue;
        }
        fault::hit("before_send");
        if ctx.stopping() || shutdown.fired() {
            // Claimed, not sent: back to unknown.
            let (from, to) = decide::resend_end(State::Unknown, None);
            ctx.writer
                .apply(vec![Transition::new(d.work.id, from, to)])
                .await?;
            ctx.request_stop(Stop::Interrupted);
            return Ok(());
        }
        ctx.counters
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let outcome = ctx.client.execute(&Sent::of(&d.work.request)).await;
        fault::hit("after_answer");
        tracing::debug!(
            transaction_id = %d.work.request.transaction_id,
            code = outcome.code(),
            "re-sent execute answered"
        );
        let answer = answer_of(Some(&outcome));
        let resent = decide::settle_by_resend(State::Unknown, answer);
        let (from, to) = decide::resend_end(State::Unknown, Some(resent));
        let mut t = Transition::new(d.work.id, from, to);
        t.attempts = 1;
        t.message = Some(format!("re-sent once: {}", outcome.message()));
        if decide::resend_records_code(resent, answer) {
            t.code = Some(outcome.code().to_string());
        }
        if let Resent::Settled(to) = resent {
            t.stamp_executed = to == State::Executed;
        }
        ctx.writer.apply(vec![t]).await?;
        match resent {
            Resent::Settled(_) | Resent::StillUnknown => {}
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

/// Commits the re-send's claim of an unknown payout. `false`: it is not
/// unknown any more (settled by another process meanwhile, or refused by
/// [`decide::may_resend`]), and nothing is sent.
async fn claim(ctx: &Ctx, work: &Work, shutdown: &Shutdown) -> Result<bool> {
    if shutdown.fired() {
        ctx.request_stop(Stop::Interrupted);
        return Ok(false);
    }
    // The code `resend_later` saw was an ambiguous answer's, never an echo
    // mismatch's: the claim is decided on the state alone.
    let Ok((from, to)) = decide::resend_claim(State::Unknown, "") else {
        return Ok(false);
    };
    match ctx
        .writer
        .apply(vec![Transition::new(work.id, from, to)])
        .await
    {
        Ok(()) => Ok(true),
        Err(WriteError::Conflict { id, .. }) => {
            tracing::warn!(
                payout = id,
                "not re-sent: another process settled it meanwhile"
            );
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}
