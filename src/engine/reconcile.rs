//! The library side of `payrun reconcile`: the operators' audit trail,
//! settling unknown payouts by an operator's verdict, and re-sending their
//! execute under the same transactionId. The states written come from
//! [`crate::machine::decide`]; this file reads, calls and records.

use super::pay::answer_of;
use crate::machine::State;
use crate::machine::decide::{self, Resent, Verdict};
use crate::provider::Client;
use crate::store::{Store, Unresolved};
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
        out.extend(store.audit(run)?.into_iter().map(|line| (run, line)));
    }
    Ok(out)
}

/// Records an operator's verdict on each of `ids`, in order; `marked` is
/// told of each as it is committed. Stops at the first id that is missing
/// or neither unknown nor processing.
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
        let (to, code) = decide::settle_by_operator(p.state, verdict).map_err(|e| {
            anyhow::anyhow!(
                "payout {id} is {}; only unknown or processing payouts can be marked",
                e.0
            )
        })?;
        store.resolve(p.id, p.state, to, "mark", reason, code)?;
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
    /// Not sent, and why (an echo mismatch is never executed).
    pub refused: Option<String>,
    pub code: String,
    pub message: String,
}

/// Re-sends the execute of every payout in `unresolved` (same
/// transactionId: the provider deduplicates) and records what settles;
/// `each` is told of every answer. Returns how many are still unknown.
pub async fn resend(
    store: &mut Store,
    client: &Client,
    unresolved: Vec<Unresolved>,
    mut each: impl FnMut(&ResendLine),
) -> Result<u64> {
    let mut left = 0;
    for u in unresolved {
        if let Err(why) = decide::may_resend(u.state, &u.provider_code) {
            left += 1;
            each(&ResendLine {
                transaction_id: u.transaction_id,
                settled: None,
                refused: Some(why.to_string()),
                code: u.provider_code,
                message: u.provider_message,
            });
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
        let settled = match decide::settle_by_resend(u.state, answer_of(Some(&outcome))) {
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
        match settled {
            Some(to) => {
                let reason = format!("resend: {} {}", outcome.code(), outcome.message());
                store.resolve(u.id, u.state, to, "resend", &reason, outcome.code())?;
                if to != State::Executed && to != State::ExecuteFailed {
                    left += 1;
                }
            }
            None => left += 1,
        }
        each(&ResendLine {
            transaction_id: u.transaction_id,
            settled,
            refused: None,
            code: outcome.code().to_string(),
            message: outcome.message().to_string(),
        });
    }
    Ok(left)
}
