//! The library side of `payrun reconcile`: the operators' audit trail,
//! settling unknown payouts by an operator's verdict, and re-sending their
//! execute under the same transactionId — each re-send claimed first
//! (intent before send, docs/closing.md). The states written come from
//! [`crate::machine::decide`]; this file reads, calls and records.

use super::pay::answer_of;
use crate::fault;
use crate::machine::State;
use crate::machine::decide::{self, Resent, Verdict};
use crate::provider::Client;
use crate::reconcile::guard;
use crate::shutdown::Shutdown;
use crate::store::{Store, Unresolved, changed_meanwhile};
use anyhow::{Context, Result, bail};

/// One line of the audit trail: the run, then transaction id, time,
/// action, from-state, to-state and reason.
pub type AuditLine = (i64, [String; 6]);

/// The audit trail of one run, or of every run.
pub fn audit(store: &Store, run: Option<i64>) -> Result<Vec<AuditLine>> {
    let runs = match run {
        Some(id) => vec![id],
        None => store.runs()?.into_iter().map(|r| r.id).collect(),
    };
    let mut out = Vec::new();
    for run in runs {
        let lines = crate::signoff::audit_trail(store, run)?;
        out.extend(lines.into_iter().map(|line| (run, line)));
    }
    Ok(out)
}

/// Records an operator's verdict on each of `ids`, in order; `marked` is
/// told of each as it is committed. Stops at the first id that is missing,
/// neither unknown nor processing (an `executing` one may have a request on
/// its way: refused, [`guard::mark_refusal`]), or changed meanwhile.
pub fn mark(
    store: &mut Store,
    ids: &[String],
    verdict: Verdict,
    reason: &str,
    mut marked: impl FnMut(&str, State),
) -> Result<()> {
    let reason = reason.trim();
    if reason.is_empty() {
        bail!("--reason must say why (e.g. the provider statement that shows it)");
    }
    for id in ids {
        let p = store
            .payout_by_transaction_id(id)?
            .with_context(|| format!("no payout with transaction id {id:?}"))?;
        let (to, code) = decide::settle_by_operator(p.state, verdict)
            .map_err(|e| anyhow::anyhow!(guard::mark_refusal(id, e.0)))?;
        store
            .resolve(p.id, p.state, to, "mark", reason, code)
            .with_context(|| format!("payout {id} was not marked"))?;
        marked(id, to);
    }
    Ok(())
}

/// What a re-sent execute of one unknown payout gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResendLine {
    pub transaction_id: String,
    /// The state it settled in, or `None`: still unknown (or processing).
    pub settled: Option<State>,
    /// Not sent, and why (an echo mismatch is never executed; a payout
    /// another process settled or claimed meanwhile is left to it).
    pub refused: Option<String>,
    pub code: String,
    pub message: String,
}

/// How `reconcile --resend` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Resends {
    /// Payouts still not settled (not sent, still unknown, processing).
    pub left: u64,
    /// A stop was asked for: the payouts after it were not sent.
    pub interrupted: bool,
}

/// The code a re-send's claim records; a payout left `executing` with it
/// was being re-sent when its process stopped.
pub const RESEND_IN_FLIGHT: &str = "RESEND_IN_FLIGHT";
const CLAIM_REASON: &str = "re-send claimed: its execute is about to be sent again under the same \
     transactionId; if it stays executing, the re-send stopped before its answer was recorded \
     and it may have been paid";

/// Re-sends the execute of every payout in `unresolved` (same
/// transactionId: the provider deduplicates) and records what settles;
/// `each` is told of every answer. Each send is preceded by its claim
/// ([`decide::resend_claim`]), committed only if the payout is still in the
/// state `unresolved` saw, and by a look at `stop`: what another process
/// settled meanwhile is not sent, and a stop sends nothing more.
pub async fn resend(
    store: &mut Store,
    client: &Client,
    unresolved: Vec<Unresolved>,
    stop: &Shutdown,
    mut each: impl FnMut(&ResendLine),
) -> Result<Resends> {
    let mut out = Resends::default();
    for u in unresolved {
        let refuse = |why: String, u: Unresolved| ResendLine {
            transaction_id: u.transaction_id,
            settled: None,
            refused: Some(why),
            code: u.provider_code,
            message: u.provider_message,
        };
        if stop.fired() {
            out.interrupted = true;
            out.left += 1;
            continue;
        }
        let (from, to) = match decide::resend_claim(u.state, &u.provider_code) {
            Ok(claim) => claim,
            Err(why) => {
                out.left += 1;
                each(&refuse(why.to_string(), u));
                continue;
            }
        };
        match store.resolve(u.id, from, to, "resend", CLAIM_REASON, RESEND_IN_FLIGHT) {
            Ok(()) => {}
            Err(e) if changed_meanwhile(&e) => {
                let now = store
                    .payout_by_transaction_id(&u.transaction_id)?
                    .map(|p| p.state);
                if !matches!(now, Some(State::Executed | State::ExecuteFailed)) {
                    out.left += 1;
                }
                let now = now.map_or_else(|| "gone".to_string(), |s| s.to_string());
                let why = format!(
                    "it changed meanwhile (now {now}): another process or terminal settled or \
                     claimed it; nothing was sent"
                );
                each(&refuse(why, u));
                continue;
            }
            Err(e) => return Err(e),
        }
        fault::hit("before_send");
        if stop.fired() {
            // Claimed, not sent: back where it was.
            let (f, t) = decide::resend_end(from, None);
            let why = "stopped before the re-send left; nothing was sent";
            store.resolve(u.id, f, t, "resend", why, &u.provider_code)?;
            out.interrupted = true;
            out.left += 1;
            continue;
        }
        let outcome = client
            .execute(&crate::provider::Sent {
                transaction_id: &u.transaction_id,
                amount: Some(&u.wire_amount),
                currency: Some(&u.currency),
                account: Some(&u.account_id),
            })
            .await;
        fault::hit("after_answer");
        let answer = answer_of(Some(&outcome));
        let resent = decide::settle_by_resend(from, answer);
        let (f, t) = decide::resend_end(from, Some(resent));
        let reason = format!("resend: {} {}", outcome.code(), outcome.message());
        // Back where it was: its recorded code stays (an echo mismatch
        // keeps refusing re-sends), unless this answer is one; settled:
        // the answer's.
        let code = if decide::resend_records_code(resent, answer) {
            outcome.code()
        } else {
            u.provider_code.as_str()
        };
        store.resolve(u.id, f, t, "resend", &reason, code)?;
        let settled = match resent {
            Resent::Settled(to) => Some(to),
            Resent::StillUnknown => None,
            Resent::Unauthorized => {
                if let crate::provider::Outcome::Unauthorized { http, .. } = &outcome {
                    bail!("the provider refused the API key (HTTP {http})")
                }
                bail!("the provider refused the API key")
            }
            Resent::ConfigStop(kind) => {
                bail!(
                    "configuration error: {}",
                    super::stops::config_stop(kind, &outcome.message())
                )
            }
        };
        if !matches!(settled, Some(State::Executed | State::ExecuteFailed)) {
            out.left += 1;
        }
        each(&ResendLine {
            transaction_id: u.transaction_id,
            settled,
            refused: None,
            code: outcome.code().to_string(),
            message: outcome.message().to_string(),
        });
    }
    Ok(out)
}
