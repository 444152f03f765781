//! One payout's calls: initiate, then execute, each followed by the commit
//! of what [`crate::machine::decide`] decided. This file carries decisions
//! out (writes the transition, counts, halts a currency, stops the run); it
//! chooses no state itself.

use super::retry::{Call, CallEnd, call_with_retries};
use super::{Ctx, Stop};
use crate::fault;
use crate::machine::State;
use crate::machine::decide::{
    self, Answer, ConfigKind, Count, Decision, ExecuteStart, Facts, Note, Phase, Policy, StopKind,
};
use crate::provider::wire::codes::INSUFFICIENT_BALANCE;
use crate::provider::{Outcome, StopKind as ProviderStop};
use crate::store::{Transition, Work};
use anyhow::Result;
use std::sync::atomic::Ordering;

/// A provider outcome reduced to what decides the next state.
pub fn answer_of(outcome: Option<&Outcome>) -> Answer {
    match outcome {
        None => Answer::Stopped,
        Some(Outcome::Accepted { .. }) => Answer::Accepted,
        Some(Outcome::Refused {
            transaction_failed,
            code,
            ..
        }) => Answer::Refused {
            transaction_failed: *transaction_failed,
            insufficient_balance: code == INSUFFICIENT_BALANCE,
        },
        Some(Outcome::Unauthorized { .. }) => Answer::Unauthorized,
        Some(Outcome::RateLimited { .. }) => Answer::RateLimited,
        Some(Outcome::NotSent { .. }) => Answer::NotSent,
        Some(Outcome::Ambiguous { .. }) => Answer::Ambiguous,
        Some(Outcome::NotFinal { .. }) => Answer::NotFinal,
        // Held like a mismatch: an answer that contradicts itself may be
        // about another request (an amount given twice) as much as ours.
        Some(Outcome::Mismatch { .. } | Outcome::Contradictory { .. }) => Answer::Mismatch,
        Some(Outcome::Stop { kind, .. }) => Answer::ConfigStop(config_kind(*kind)),
    }
}

/// The provider's configuration stop, as the state machine names it.
fn config_kind(kind: ProviderStop) -> ConfigKind {
    match kind {
        ProviderStop::Redirect => ConfigKind::Redirect,
        ProviderStop::NoSuchRoute => ConfigKind::NoSuchRoute,
        ProviderStop::Misconfigured => ConfigKind::Misconfigured,
        ProviderStop::RetryAfterTooLong => ConfigKind::RetryAfterTooLong,
    }
}

/// Drives one payout from its current phase to its next resting state.
pub(super) async fn pay_one(ctx: &Ctx, work: Work, phase: Phase) -> Result<()> {
    let resumed = match phase {
        Phase::Initiate { resumed } => {
            if !initiate(ctx, &work, resumed).await? {
                return Ok(());
            }
            // Initiated, and the intent to execute committed with it.
            fault::hit("after_intent_commit");
            return send_execute(ctx, &work, false).await;
        }
        Phase::Execute { resumed } => resumed,
    };
    match decide::execute_start(work.state, policy(ctx, &work)) {
        ExecuteStart::Skip => Ok(()),
        ExecuteStart::Hold(d) => carry_out(ctx, &work, d, None, 0, None).await,
        ExecuteStart::Intent => {
            let t = Transition::new(work.id, work.state, State::Executing);
            ctx.writer.apply(vec![t]).await?;
            fault::hit("after_intent_commit");
            send_execute(ctx, &work, false).await
        }
        ExecuteStart::Send => send_execute(ctx, &work, resumed).await,
    }
}

fn policy(ctx: &Ctx, work: &Work) -> Policy {
    Policy {
        initiate_only: ctx.opts.initiate_only,
        currency_halted: ctx.halted(&work.request.currency),
        hold_ambiguous: ctx.opts.ambiguous == crate::config::Ambiguous::Hold,
        attempts_spent: false,
    }
}

/// Sends the initiation and commits its outcome. Returns whether the
/// payout is to be executed now; if so, its execute intent is committed.
async fn initiate(ctx: &Ctx, work: &Work, resumed: bool) -> Result<bool> {
    let end = call_with_retries(ctx, Call::Initiate, work).await;
    if end.outcome.is_some() {
        fault::hit("after_answer");
    }
    let spent = work.attempts.saturating_add(end.sent) >= ctx.opts.max_attempts_total;
    let d = decide::after_initiate(
        answer_of(end.outcome.as_ref()),
        facts(&end, resumed),
        Policy {
            attempts_spent: spent,
            ..policy(ctx, work)
        },
    );
    // To be executed now: the intent to execute (`initiated → executing`)
    // goes in the same commit as `initiated`, one write instead of two,
    // still before the execute leaves. A crash leaves the payout
    // `initiating` (its initiation re-sent under the same id) or
    // `executing` (its execute maybe sent), states the two separate
    // commits could leave too, so `--initiate-only` after a crash still
    // sends no execute (ARCHITECTURE.md, "Money invariants").
    let intent = (d.then_execute && d.to == Some(State::Initiated))
        .then(|| Transition::new(work.id, State::Initiated, State::Executing));
    let then_execute = intent.is_some();
    carry_out(ctx, work, d, end.outcome.as_ref(), end.sent, intent).await?;
    Ok(then_execute)
}

/// Sends the execute of a payout whose intent is committed, and commits
/// its outcome.
async fn send_execute(ctx: &Ctx, work: &Work, resumed: bool) -> Result<()> {
    let end = call_with_retries(ctx, Call::Execute, work).await;
    if end.outcome.is_some() {
        fault::hit("after_answer");
    }
    let facts = facts(&end, resumed);
    let d = decide::after_execute(answer_of(end.outcome.as_ref()), facts);
    carry_out(ctx, work, d, end.outcome.as_ref(), end.sent, None).await?;
    if decide::resend_later(&d, facts, policy(ctx, work)) {
        ctx.resend_later(work);
    }
    Ok(())
}

fn facts(end: &CallEnd, resumed: bool) -> Facts {
    Facts {
        resumed,
        maybe_landed: end.maybe_landed,
        sent: end.sent,
    }
}

/// Writes a decision: counts, halts, commits the transition (and `then`,
/// the next intent, in the same commit), then stops the run if asked.
async fn carry_out(
    ctx: &Ctx,
    work: &Work,
    d: Decision,
    outcome: Option<&Outcome>,
    sent: u32,
    then: Option<Transition>,
) -> Result<()> {
    let Some(to) = d.to else {
        return Ok(());
    };
    let mut t = Transition::new(work.id, d.from, to);
    if d.attempts {
        t.attempts = sent;
    }
    (t.code, t.message) = note(d.note, outcome, sent, &work.request.currency);
    t.stamp_initiated = d.stamp_initiated;
    t.stamp_executed = d.stamp_executed;
    if let Some(c) = d.count {
        let counter = match c {
            Count::Initiated => &ctx.counters.initiated,
            Count::Executed => &ctx.counters.executed,
            Count::Failed => &ctx.counters.failed,
            Count::Unknown => &ctx.counters.unknown,
            Count::Processing => &ctx.counters.processing,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
    if d.halt_currency {
        ctx.halt(&work.request.currency);
    }
    let mut ts = Vec::with_capacity(2);
    ts.push(t);
    ts.extend(then);
    ctx.writer.apply(ts).await?;
    if let (Some(kind), Some(outcome)) = (d.stop, outcome) {
        ctx.request_stop(match (kind, outcome) {
            (StopKind::Unauthorized, Outcome::Unauthorized { http, message }) => {
                Stop::Unauthorized(format!("HTTP {http}: {message}"))
            }
            (StopKind::Unauthorized, other) => Stop::Unauthorized(other.message().to_string()),
            (StopKind::Unreachable, other) => Stop::Unreachable(failure_message(other, sent)),
            (StopKind::Config(kind), other) => {
                Stop::Config(super::stops::config_stop(kind, &other.message()))
            }
        });
    }
    Ok(())
}

/// The provider code and message a decision records.
fn note(
    note: Note,
    outcome: Option<&Outcome>,
    sent: u32,
    currency: &str,
) -> (Option<String>, Option<String>) {
    let code = || outcome.map(|o| o.code().to_string());
    match note {
        Note::Keep => (None, None),
        Note::Answer => (code(), outcome.map(|o| o.message().to_string())),
        Note::Failure => (code(), outcome.map(|o| failure_message(o, sent))),
        Note::WalletRanOut => (
            Some("NOT_EXECUTED".into()),
            Some(format!(
                "not executed: the {currency} wallet ran out; top it up and run again"
            )),
        ),
        Note::Held => (
            Some("AMBIGUOUS_HELD".into()),
            Some(
                "interrupted while executing; held for `payrun reconcile` (ambiguous = hold)"
                    .into(),
            ),
        ),
        Note::SetAside => (
            Some("ATTEMPTS_SPENT".into()),
            outcome.map(|o| {
                format!(
                    "set aside: its attempt budget across runs is spent without a final answer \
                     (last: {}); check it with the provider (`payrun reconcile` lists it)",
                    failure_message(o, sent)
                )
            }),
        ),
        Note::OutcomeUnknown => (
            code(),
            outcome.map(|o| {
                format!(
                    "outcome unknown after {sent} request(s): {}; check with the provider, then `payrun reconcile`",
                    o.message()
                )
            }),
        ),
    }
}

fn failure_message(outcome: &Outcome, sent: u32) -> String {
    match outcome {
        Outcome::Refused { message, .. } => message.clone(),
        Outcome::NotSent { detail } => {
            format!("not sent after {sent} attempt(s): {detail}")
        }
        Outcome::Ambiguous { detail } => format!("gave up after {sent} attempt(s): {detail}"),
        Outcome::RateLimited { .. } => format!("still rate limited after {sent} attempt(s)"),
        other => other.message().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_outcomes_map_to_their_own_answers() {
        let not_final = Outcome::NotFinal {
            code: "PENDING".into(),
            message: String::new(),
            status: "PENDING".into(),
        };
        assert_eq!(answer_of(Some(&not_final)), Answer::NotFinal);
        let mismatch = Outcome::Mismatch {
            field: "amount",
            sent: "1".into(),
            got: "2".into(),
        };
        assert_eq!(answer_of(Some(&mismatch)), Answer::Mismatch);
        // The code recorded for a mismatch is the one resend refuses.
        assert_eq!(mismatch.code(), decide::ECHO_MISMATCH);
        // A contradictory answer is held the same way, under a code resend
        // refuses too.
        let twice = Outcome::Contradictory {
            http: 200,
            key: "/data/status".into(),
        };
        assert_eq!(answer_of(Some(&twice)), Answer::Mismatch);
        assert_eq!(
            decide::may_resend(crate::machine::State::Unknown, twice.code()),
            Err(decide::NoResend::Contradictory)
        );
        for (kind, want) in [
            (ProviderStop::Redirect, ConfigKind::Redirect),
            (ProviderStop::NoSuchRoute, ConfigKind::NoSuchRoute),
            (ProviderStop::Misconfigured, ConfigKind::Misconfigured),
            (
                ProviderStop::RetryAfterTooLong,
                ConfigKind::RetryAfterTooLong,
            ),
        ] {
            let o = Outcome::Stop {
                kind,
                http: 302,
                detail: String::new(),
            };
            assert_eq!(answer_of(Some(&o)), Answer::ConfigStop(want));
        }
    }
}
