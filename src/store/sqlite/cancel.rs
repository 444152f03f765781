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
use crate::machine::{CANCELLABLE, OPEN, State};
use crate::store::types::Transition;
use crate::store::types::{CancelOutcome, RELEASED_ID_MARK};
use rusqlite::params;

impl Sqlite {
    /// Points a run at another provider URL, only if no payout of it was
    /// ever sent (all `pending` or `cancelled` from pending): a run made
    /// with a wrong base URL or key is resumed against the right one.
    /// Returns whether it was moved.
    pub fn repoint_unsent_run(&mut self, run_id: i64, provider: &str) -> anyhow::Result<bool> {
        let counts = self.state_counts(run_id)?;
        let sent = counts
            .iter()
            .any(|(s, n)| *n > 0 && *s != State::Pending && *s != State::Cancelled);
        let cancelled_after_sending: i64 = self.conn.query_row(
            &format!(
                "SELECT count(*) FROM payouts WHERE {RUN_RANGE} AND state = 'cancelled'
                 AND instr(transaction_id, '{RELEASED_ID_MARK}') = 0"
            ),
            [run_id],
            |r| r.get(0),
        )?;
        if sent || cancelled_after_sending > 0 {
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
        let mut out = CancelOutcome::default();
        let mut ts = Vec::new();
        let mut released = Vec::new();
        {
            let mut stmt = tx.prepare(&format!(
                "SELECT id, state FROM payouts WHERE {RUN_RANGE} ORDER BY id"
            ))?;
            let mut rows = stmt.query([run_id])?;
            while let Some(r) = rows.next()? {
                let id: i64 = r.get(0)?;
                let state = State::parse(&r.get::<_, String>(1)?)?;
                if CANCELLABLE.contains(&state) {
                    let mut t = Transition::new(id, state, State::Cancelled);
                    t.code = Some("CANCELLED".into());
                    t.message = Some(if state == State::Pending {
                        released.push(id);
                        out.never_sent += 1;
                        "cancelled by the operator; never sent, its transaction id is free again"
                            .into()
                    } else {
                        out.initiated += 1;
                        "cancelled by the operator after initiation; never executed, no money moved"
                            .into()
                    });
                    ts.push(t);
                } else if OPEN.contains(&state) {
                    *out.left_open.entry(state).or_default() += 1;
                }
            }
        }
        apply_in(&tx, &ts, &now)?;
        for id in released {
            tx.execute(
                "UPDATE payouts SET transaction_id = transaction_id || ?2 || id WHERE id = ?1",
                params![id, RELEASED_ID_MARK],
            )?;
        }
        if out.left_open.is_empty() {
            tx.execute(
                &format!(
                    "UPDATE runs SET finished_at = COALESCE(finished_at, {}) WHERE id = ?1",
                    super::sql::NOW
                ),
                [run_id],
            )?;
        }
        tx.commit()?;
        Ok(out)
    }
}
