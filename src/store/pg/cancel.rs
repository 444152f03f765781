//! Ending a run by an operator (`payrun cancel`, PostgreSQL), as
//! `sqlite/cancel.rs` and with the same [`cancel_plan`] decisions: every
//! payout whose execute was never sent becomes `cancelled` in one
//! transaction; one never sent at all gives its transaction id back. Other
//! workers may share the run, so the run's open payouts are locked
//! (`FOR UPDATE`, in id order) before anything is decided: a payout a
//! worker is moving is waited for and then seen in its new state, and no
//! worker can claim or move one while the cancel holds it. The cancel is
//! set-based (one `UPDATE` for the run, not a statement per payout), so a
//! run of a million pending payouts cancels in a few round trips. It
//! waits for a lock at most [`LOCK_TIMEOUT`] (well under PostgreSQL's
//! deadlock check), so if it ever closes a cycle with a worker it is the
//! cancel, not the worker's commit, that gives way and is retried.
//!
//! [`cancel_plan`]: crate::store::cancel_plan

use super::Pg;
use super::reads::RUN_PAYOUTS;
use super::schema::NOW;
use super::sql::{state, state_list};
use crate::machine::{self, CANCELLABLE, OPEN, State};
use crate::store::cancel_plan::{CANCEL_CODE, cancel_message, ever_sent, tally};
use crate::store::errors::WriteError;
use crate::store::types::{CancelOutcome, RELEASED_ID_MARK};
use anyhow::{Context, Result, bail};
use postgres::Client;
use postgres::error::SqlState;

/// How long the cancel waits for one payout a worker holds.
const LOCK_TIMEOUT: &str = "500ms";

/// Attempts of a cancel that found payouts locked for longer.
const LOCK_ATTEMPTS: u32 = 5;

impl Pg {
    /// Points a run at another provider URL, only if no payout of it was
    /// ever sent (all `pending` or `cancelled` from pending). Returns
    /// whether it was moved.
    pub fn repoint_unsent_run(&mut self, run_id: i64, provider: &str) -> Result<bool> {
        let counts = self.state_counts(run_id)?;
        let provider = provider.to_string();
        self.call(move |c| {
            let cancelled_after_sending: i64 = c
                .query_one(
                    "SELECT count(*) FROM payouts WHERE run_id = $1 AND state = $2
                     AND strpos(transaction_id, $3) = 0",
                    &[&run_id, &State::Cancelled.as_str(), &RELEASED_ID_MARK],
                )?
                .try_get(0)?;
            if ever_sent(&counts, cancelled_after_sending as u64) {
                return Ok(false);
            }
            c.execute(
                "UPDATE runs SET provider = $2 WHERE id = $1",
                &[&run_id, &provider],
            )?;
            Ok(true)
        })
    }

    /// Cancels every cancellable payout of `run_id`, and marks the run
    /// finished when nothing is left open.
    pub fn cancel_run(&mut self, run_id: i64) -> Result<CancelOutcome> {
        self.call(move |c| {
            let mut attempt = 1;
            loop {
                match cancel_once(c, run_id) {
                    Err(e) if attempt < LOCK_ATTEMPTS && held_by_another(&e) => attempt += 1,
                    Err(e) if held_by_another(&e) => {
                        return Err(e).with_context(|| {
                            format!(
                                "payouts of run {run_id} stayed locked by a worker still \
                                 running it; stop its workers, then cancel again"
                            )
                        });
                    }
                    other => return other,
                }
            }
        })
    }
}

/// One attempt, in one transaction.
fn cancel_once(c: &mut Client, run_id: i64) -> Result<CancelOutcome> {
    let mut tx = c.transaction()?;
    tx.batch_execute(&format!("SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))?;
    let now: String = tx.query_one(&format!("SELECT {NOW}"), &[])?.try_get(0)?;
    let mut out = CancelOutcome::default();
    let locked = tx.query(
        &format!(
            "SELECT state, count(*) FROM (
                 SELECT state FROM payouts WHERE {RUN_PAYOUTS} AND state IN ({})
                 ORDER BY id FOR UPDATE) locked
             GROUP BY state",
            state_list(OPEN)
        ),
        &[&run_id],
    )?;
    for r in &locked {
        tally(&mut out, state(r, 0)?, r.try_get::<_, i64>(1)? as u64);
    }
    for &from in CANCELLABLE {
        if !machine::allowed(from, State::Cancelled) {
            return Err(WriteError::NotAllowed {
                id: None,
                from,
                to: State::Cancelled,
            }
            .into());
        }
    }
    let expected = out.never_sent + out.initiated;
    if expected > 0 {
        let pending = State::Pending.as_str();
        let (never_sent, initiated) = (
            cancel_message(State::Pending),
            cancel_message(State::Initiated),
        );
        let changed = tx.execute(
            &format!(
                "UPDATE payouts SET state = $2, provider_code = $3,
                        provider_msg = CASE WHEN state = $4 THEN $5 ELSE $6 END,
                        transaction_id = CASE WHEN state = $4 THEN transaction_id || $7 || id
                                              ELSE transaction_id END,
                        updated_at = $8
                 WHERE {RUN_PAYOUTS} AND state IN ({})",
                state_list(CANCELLABLE)
            ),
            &[
                &run_id,
                &State::Cancelled.as_str(),
                &CANCEL_CODE,
                &pending,
                &never_sent,
                &initiated,
                &RELEASED_ID_MARK,
                &now,
            ],
        )?;
        if changed != expected {
            bail!("payouts of run {run_id} changed while being cancelled; cancel again");
        }
    }
    if out.left_open.is_empty() {
        tx.execute(
            "UPDATE runs SET finished_at = COALESCE(finished_at, $2) WHERE id = $1",
            &[&run_id, &now],
        )?;
    }
    tx.commit()?;
    Ok(out)
}

/// A payout was locked by another transaction for longer than the cancel
/// waits, or the two waited on each other.
fn held_by_another(e: &anyhow::Error) -> bool {
    e.downcast_ref::<postgres::Error>()
        .and_then(|e| e.code())
        .is_some_and(|c| {
            *c == SqlState::LOCK_NOT_AVAILABLE || *c == SqlState::T_R_DEADLOCK_DETECTED
        })
}
