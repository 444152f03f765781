//! Settling payouts by asking the provider (its status call, when the
//! profile names one): at the end of a run and with `payrun reconcile
//! --poll`. Each question waits for a slot of the rate limiter; a payout
//! still not final is asked again a few rounds later; only a clear paid or
//! failed settles, with an audit line. Payouts of runs made against another
//! provider (or the built-in sandbox) are never asked about.

use super::guard;
use crate::limiter::Limiter;
use crate::machine::State;
use crate::provider::Client;
use crate::provider::status::TxStatus;
use crate::store::Store;
use anyhow::Result;
use std::time::Duration;

/// States a status answer may settle. (`processing`, once the state
/// machine has it, belongs here too.)
pub const POLLED: &[State] = &[State::Unknown, State::Processing];

/// Rounds of questions before giving up for now: with [`POLL_INTERVAL`],
/// a few seconds, enough for a provider that settles within moments of the
/// execute; slower ones are settled by a later `reconcile --poll`.
pub const POLL_ROUNDS: u32 = 6;
/// Pause between rounds: long enough not to hammer the provider with
/// questions it cannot answer yet, short enough to keep a run's end brisk.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// What polling did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Polled {
    /// (transaction id, from, to, provider's word).
    pub settled: Vec<(String, State, State, String)>,
    /// (transaction id, why) of payouts not asked about or not settled:
    /// an execute on its way (`executing`), or changed meanwhile.
    pub skipped: Vec<(String, &'static str)>,
    /// Payouts still not settled after the last round.
    pub still_open: u64,
    /// Status calls made.
    pub asked: u64,
}

/// Asks the status of every payout of `run` (or of every run) in
/// [`POLLED`], made against `client`'s provider, and settles what is clear.
pub async fn poll(
    store: &mut Store,
    client: &Client,
    limiter: &Limiter,
    run: Option<i64>,
) -> Result<Polled> {
    let mut out = Polled::default();
    if !client.has_status_call() {
        return Ok(out);
    }
    let mut open = Vec::new();
    for p in store.booked(run)? {
        if !POLLED.contains(&p.state) && p.state != State::Executing {
            continue;
        }
        let provider = store.run(p.run_id)?.map(|r| r.provider).unwrap_or_default();
        if guard::resend_refusal(&provider, client.base_url()).is_some() {
            continue;
        }
        if p.state == State::Executing {
            // Its request's answer settles it, not a status read beside it.
            out.skipped
                .push((p.transaction_id.clone(), guard::IN_FLIGHT));
        } else {
            open.push(p);
        }
    }
    for round in 0..POLL_ROUNDS {
        if open.is_empty() {
            break;
        }
        if round > 0 {
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        let mut next = Vec::new();
        for p in open {
            // None: the run is stopping; what is not asked stays open.
            let Some(slot) = limiter.acquire().await else {
                next.push(p);
                continue;
            };
            out.asked += 1;
            let answer = client.status(&p.transaction_id).await;
            slot.other();
            let (to, word, code) = match answer {
                Some(TxStatus::Paid(w)) => (State::Executed, w, "STATUS_PAID"),
                Some(TxStatus::Failed(w)) => (State::ExecuteFailed, w, "STATUS_FAILED"),
                _ => {
                    next.push(p);
                    continue;
                }
            };
            let reason = format!("status call: the provider answered {word}");
            match store.resolve(p.id, p.state, to, "poll", &reason, code) {
                Ok(()) => out
                    .settled
                    .push((p.transaction_id.clone(), p.state, to, word)),
                // A re-send claimed it (or a terminal settled it) since it
                // was read: left to that, and said.
                Err(e) if crate::store::changed_meanwhile(&e) => {
                    out.skipped.push((p.transaction_id.clone(), guard::CHANGED));
                }
                Err(e) => return Err(e),
            }
        }
        open = next;
    }
    out.still_open = open.len() as u64;
    Ok(out)
}
