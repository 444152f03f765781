//! The two writes of a run (PostgreSQL), as in `sqlite/apply.rs`: claiming
//! pending payouts (the intent `initiating`) and applying transitions, each
//! checked against the state machine and against the state the payout is
//! in now, and a writer group committed as one transaction.
//!
//! Several workers may share a run (PG.md): a claim locks the payouts it
//! takes with `FOR UPDATE SKIP LOCKED`, so two workers never claim the same
//! payout, and records this worker as `lease_owner`; a transition by a
//! registered worker applies only to a payout it still holds (the fence),
//! so a worker whose lease expired cannot record anything for a payout
//! another worker took over.

use super::sql::{WORK_COLS, run_sender};
use super::{Pg, schema};
use crate::machine::{self, State};
use crate::store::chain;
use crate::store::errors::WriteError;
use crate::store::rows;
use crate::store::types::{Transition, Work};
use crate::store::writer::GroupOp;
use postgres::{Statement, Transaction};
use std::collections::HashMap;

impl From<postgres::Error> for WriteError {
    fn from(e: postgres::Error) -> Self {
        WriteError::Disk(e.to_string())
    }
}

/// The claim: a pending payout becomes the intent to initiate, committed
/// before its request leaves.
const CLAIM: (State, State) = (State::Pending, State::Initiating);

/// "Now" for every row of a group: the transaction's start, as RFC 3339
/// text like SQLite's (one timestamp per group commit, as there).
const TX_NOW: &str =
    r#"to_char(transaction_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#;

/// Pending payouts of run `$1` with ids above `$3`, at most `$2`, skipping
/// those another worker's claim holds; `$4` is this worker.
fn claim_sql() -> String {
    format!(
        "UPDATE payouts SET state = '{to}', lease_owner = $4, updated_at = {TX_NOW}
         WHERE id IN (SELECT id FROM payouts
                      WHERE run_id = $1 AND state = '{from}' AND id > $3
                      ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING {WORK_COLS}",
        from = CLAIM.0.as_str(),
        to = CLAIM.1.as_str(),
    )
}

/// One transition, applied only from the state the payout is in and, for
/// a registered worker (`$8`), only to a payout it holds.
fn transition_sql() -> String {
    format!(
        "UPDATE payouts SET state = $2,
                provider_code = COALESCE($3, provider_code),
                provider_msg = COALESCE($4, provider_msg),
                attempts = attempts + $5,
                initiated_at = COALESCE(initiated_at, CASE WHEN $6 THEN {TX_NOW} END),
                executed_at = COALESCE(executed_at, CASE WHEN $7 THEN {TX_NOW} END),
                updated_at = {TX_NOW}
         WHERE id = $1 AND state = $9 AND ($8::BIGINT IS NULL OR lease_owner = $8)"
    )
}

/// The statements of the write path, prepared once per connection.
fn prepared(
    cache: &mut HashMap<&'static str, Statement>,
    tx: &mut Transaction<'_>,
    name: &'static str,
    sql: impl FnOnce() -> String,
) -> Result<Statement, WriteError> {
    if let Some(s) = cache.get(name) {
        return Ok(s.clone());
    }
    let s = tx.prepare(&sql())?;
    cache.insert(name, s.clone());
    Ok(s)
}

impl Pg {
    /// Runs a writer group in one transaction; returns the claim results in
    /// command order.
    pub(crate) fn commit_group(
        &mut self,
        group: &[GroupOp<'_>],
    ) -> Result<Vec<Vec<Work>>, WriteError> {
        let Pg {
            client,
            prepared,
            cursors,
            worker,
            ..
        } = self;
        let worker = *worker;
        let client = client
            .get_mut()
            .as_mut()
            .ok_or_else(|| WriteError::Disk(super::LOST.into()))?;
        let seen = &*cursors;
        let claimed = super::off_runtime(|| -> Result<_, WriteError> {
            let mut tx = client.transaction()?;
            let mut claimed = Vec::new();
            for op in group {
                match op {
                    GroupOp::Claim { run_id, limit } => {
                        let after = seen.get(run_id).copied().unwrap_or(0);
                        claimed.push(claim(&mut tx, prepared, *run_id, *limit, after, worker)?);
                    }
                    GroupOp::Apply(ts) => apply_in(&mut tx, prepared, ts, worker)?,
                }
            }
            crate::fault::hit("before_commit");
            tx.commit()?;
            Ok(claimed)
        })?;
        // Advance the cursors only once the claims are durable.
        for (op, works) in group
            .iter()
            .filter(|op| matches!(op, GroupOp::Claim { .. }))
            .zip(&claimed)
        {
            if let (GroupOp::Claim { run_id, .. }, Some(last)) = (op, works.last()) {
                cursors.insert(*run_id, last.id);
            }
        }
        Ok(claimed)
    }

    /// Applies transitions in one transaction (outside the writer thread).
    pub fn apply(&mut self, ts: &[Transition]) -> Result<(), WriteError> {
        self.commit_group(&[GroupOp::Apply(ts)]).map(|_| ())
    }

    pub fn mark_finished(&mut self, run_id: i64) -> anyhow::Result<()> {
        self.call(|c| {
            c.execute(
                &format!(
                    "UPDATE runs SET finished_at = COALESCE(finished_at, {}) WHERE id = $1",
                    schema::NOW
                ),
                &[&run_id],
            )?;
            Ok(())
        })
    }
}

/// Moves up to `limit` pending payouts of `run_id` to `initiating` (the
/// intent) under this worker's lease and returns them in file order. The
/// scan starts after `after` (the last id this connection claimed, so a
/// long run never walks what it already sent); when that leaves the claim
/// short it looks again from the start, so a payout another worker's
/// failed claim held back is not left behind. The caller commits.
fn claim(
    tx: &mut Transaction<'_>,
    cache: &mut HashMap<&'static str, Statement>,
    run_id: i64,
    limit: usize,
    after: i64,
    worker: Option<i64>,
) -> Result<Vec<Work>, WriteError> {
    let (from, to) = CLAIM;
    if !machine::allowed(from, to) {
        return Err(WriteError::NotAllowed { id: None, from, to });
    }
    let stmt = prepared(cache, tx, "claim", claim_sql)?;
    let mut rows = tx.query(&stmt, &[&run_id, &(limit as i64), &after, &worker])?;
    if rows.len() < limit && after > 0 {
        let more = (limit - rows.len()) as i64;
        rows.extend(tx.query(&stmt, &[&run_id, &more, &0i64, &worker])?);
    }
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let sender = run_sender(tx, run_id)?;
    let mut out = rows
        .iter()
        .map(|r| rows::work(r, &sender))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // RETURNING gives no order; payouts go out in file order.
    out.sort_unstable_by_key(|w| w.id);
    Ok(out)
}

/// Writes transitions inside `tx`, each checked against the state machine,
/// against the state the payout is in, and against the lease of `worker`;
/// transitions of one payout that follow on from each other go in one
/// `UPDATE` ([`chain`]).
fn apply_in(
    tx: &mut Transaction<'_>,
    cache: &mut HashMap<&'static str, Statement>,
    ts: &[Transition],
    worker: Option<i64>,
) -> Result<(), WriteError> {
    if ts.is_empty() {
        return Ok(());
    }
    let stmt = prepared(cache, tx, "transition", transition_sql)?;
    for step in chain::steps(ts) {
        let s = step?;
        let changed = tx.execute(
            &stmt,
            &[
                &s.id,
                &s.to.as_str(),
                &s.code,
                &s.message,
                &s.attempts,
                &s.stamp_initiated,
                &s.stamp_executed,
                &worker,
                &s.from.as_str(),
            ],
        )?;
        if changed != 1 {
            return Err(s.conflict());
        }
    }
    Ok(())
}
