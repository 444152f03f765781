//! The two writes of a run, as statements inside a caller's transaction:
//! claiming pending payouts (the intent `initiating`: the first pending
//! ones read, then moved by one rowid-range `UPDATE` whose count is
//! checked) and applying transitions (as [`chain`] steps). Each is checked
//! twice: against the state machine ([`machine::allowed`]) and against the
//! state the payout is in now (`… AND state = ?`), so a write from a stale
//! view fails instead of overwriting. The [`writer`](super::writer) thread
//! groups these into one commit; [`Store::apply`] runs them alone.

use super::Sqlite;
use super::sql::{NOW, WORK_COLS, run_sender, sql_now};
use crate::machine::{self, State};
use crate::store::chain;
use crate::store::errors::WriteError;
use crate::store::rows;
use crate::store::types::{Transition, Work};
use rusqlite::params;

impl From<rusqlite::Error> for WriteError {
    fn from(e: rusqlite::Error) -> Self {
        WriteError::Disk(e.to_string())
    }
}

/// The claim: a pending payout becomes the intent to initiate, committed
/// before its request leaves.
const CLAIM: (State, State) = (State::Pending, State::Initiating);

impl Sqlite {
    /// Moves up to `limit` pending payouts of `run_id` with ids above
    /// `after` to `initiating` (the intent) and returns them in file order.
    /// The caller commits.
    pub(super) fn claim_pending(
        tx: &rusqlite::Transaction<'_>,
        run_id: i64,
        limit: usize,
        now: &str,
        after: i64,
    ) -> Result<Vec<Work>, WriteError> {
        let (from, to) = CLAIM;
        if !machine::allowed(from, to) {
            return Err(WriteError::NotAllowed { id: None, from, to });
        }
        let (first, last): (Option<i64>, Option<i64>) = tx
            .prepare_cached("SELECT first_payout, last_payout FROM runs WHERE id = ?1")?
            .query_row([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(Vec::new());
        };
        let run_sender = run_sender(tx, run_id)?;
        // One rowid range with both bounds bound directly: given two lower
        // bounds SQLite may pick the looser one and rescan the run from its
        // start on every claim.
        let after = after.max(first - 1);
        let mut pick = tx.prepare_cached(&format!(
            "SELECT {WORK_COLS} FROM payouts
             WHERE id > ?2 AND id <= ?3 AND run_id = ?1 AND state = ?4
             ORDER BY id LIMIT ?5"
        ))?;
        let mut rows = pick.query(params![run_id, after, last, from, limit as i64])?;
        let mut out = Vec::with_capacity(limit);
        while let Some(r) = rows.next()? {
            out.push(rows::work(r, &run_sender)?);
        }
        let (Some(lo), Some(hi)) = (out.first().map(|w| w.id), out.last().map(|w| w.id)) else {
            return Ok(out);
        };
        // The payouts picked are every pending one of the run from `lo` to
        // `hi` (the first ones in id order), so the same range moves
        // exactly them: one statement, each row visited once. The count
        // checks it.
        let moved = tx
            .prepare_cached(
                "UPDATE payouts SET state = ?4, updated_at = ?5
                 WHERE id >= ?2 AND id <= ?3 AND run_id = ?1 AND state = ?6",
            )?
            .execute(params![run_id, lo, hi, to, now, from])?;
        if moved != out.len() {
            return Err(WriteError::Disk(format!(
                "claim of payouts {lo}..={hi}: {} picked, {moved} moved",
                out.len()
            )));
        }
        for w in &mut out {
            w.state = to;
        }
        Ok(out)
    }

    /// Applies transitions in one transaction (outside the writer thread).
    pub fn apply(&mut self, ts: &[Transition]) -> Result<(), WriteError> {
        let tx = self.conn.transaction()?;
        let now = sql_now(&tx)?;
        apply_in(&tx, ts, &now)?;
        tx.commit()?;
        Ok(())
    }

    pub fn mark_finished(&mut self, run_id: i64) -> anyhow::Result<()> {
        self.conn.execute(
            &format!("UPDATE runs SET finished_at = COALESCE(finished_at, {NOW}) WHERE id = ?1"),
            [run_id],
        )?;
        Ok(())
    }
}

/// Writes transitions inside `tx`, each checked against the state machine
/// and against the state the payout is in; transitions of one payout that
/// follow on from each other go in one `UPDATE` ([`chain`]).
pub(super) fn apply_in(
    tx: &rusqlite::Transaction<'_>,
    ts: &[Transition],
    now: &str,
) -> Result<(), WriteError> {
    let mut stmt = tx.prepare_cached(
        "UPDATE payouts SET state = ?2,
                provider_code = COALESCE(?3, provider_code),
                provider_msg = COALESCE(?4, provider_msg),
                attempts = attempts + ?5,
                initiated_at = COALESCE(initiated_at, ?6),
                executed_at = COALESCE(executed_at, ?7),
                updated_at = ?8
         WHERE id = ?1 AND state = ?9",
    )?;
    for step in chain::steps(ts) {
        let s = step?;
        let changed = stmt.execute(params![
            s.id,
            s.to,
            s.code,
            s.message,
            s.attempts,
            s.stamp_initiated.then_some(now),
            s.stamp_executed.then_some(now),
            now,
            s.from,
        ])?;
        if changed != 1 {
            return Err(s.conflict());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // The writes themselves are tested on every backend in
    // `store/write_tests.rs`.
    #[test]
    fn the_claim_is_a_transition_the_state_machine_allows() {
        assert!(machine::allowed(CLAIM.0, CLAIM.1));
    }
}
