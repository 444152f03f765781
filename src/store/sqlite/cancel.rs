//! Ending a run by an operator (`payrun cancel`): every payout of the run
//! whose execute was never sent becomes `cancelled`, in one transaction,
//! through the same checked transitions as the engine's. A payout that was
//! never sent at all (`pending`) also gives its transaction id back, so a
//! corrected file may use it; one the provider has seen (`initiated`)
//! keeps its id for good. Payouts in flight or settled are left as they
//! are and counted, for the caller to say what remains.

use super::Sqlite;
use super::apply::apply_in;
use super::sql::{RUN_RANGE, sql_now};
use crate::machine::State;
use crate::store::cancel_plan::{CancelPlan, ever_sent};
use crate::store::types::{CancelOutcome, RELEASED_ID_MARK};
use rusqlite::params;

impl Sqlite {
    /// Points a run at another provider URL, only if no payout of it was
    /// ever sent (all `pending` or `cancelled` from pending): a run made
    /// with a wrong base URL or key is resumed against the right one.
    /// Returns whether it was moved.
    pub fn repoint_unsent_run(&mut self, run_id: i64, provider: &str) -> anyhow::Result<bool> {
        let counts = self.state_counts(run_id)?;
        let cancelled_after_sending: i64 = self.conn.query_row(
            &format!(
                "SELECT count(*) FROM payouts WHERE {RUN_RANGE} AND state = 'cancelled'
                 AND instr(transaction_id, '{RELEASED_ID_MARK}') = 0"
            ),
            [run_id],
            |r| r.get(0),
        )?;
        if ever_sent(&counts, cancelled_after_sending as u64) {
            return Ok(false);
        }
        self.conn.execute(
            "UPDATE runs SET provider = ?2 WHERE id = ?1",
            params![run_id, provider],
        )?;
        Ok(true)
    }

    /// Cancels every cancellable payout of `run_id` (the caller holds the
    /// run lock), and marks the run finished when nothing is left open.
    pub fn cancel_run(&mut self, run_id: i64) -> anyhow::Result<CancelOutcome> {
        let tx = self.conn.transaction()?;
        let now = sql_now(&tx)?;
        let mut plan = CancelPlan::default();
        {
            let mut stmt = tx.prepare(&format!(
                "SELECT id, state FROM payouts WHERE {RUN_RANGE} ORDER BY id"
            ))?;
            let mut rows = stmt.query([run_id])?;
            while let Some(r) = rows.next()? {
                plan.add(r.get(0)?, State::parse(&r.get::<_, String>(1)?)?);
            }
        }
        apply_in(&tx, &plan.transitions, &now)?;
        for id in &plan.released {
            tx.execute(
                "UPDATE payouts SET transaction_id = transaction_id || ?2 || id WHERE id = ?1",
                params![id, RELEASED_ID_MARK],
            )?;
        }
        if plan.finishes_the_run() {
            tx.execute(
                &format!(
                    "UPDATE runs SET finished_at = COALESCE(finished_at, {}) WHERE id = ?1",
                    super::sql::NOW
                ),
                [run_id],
            )?;
        }
        tx.commit()?;
        Ok(plan.outcome)
    }
}
