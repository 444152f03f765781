//! An operator's decision on a payout (`payrun reconcile`, PostgreSQL): the
//! new state, checked against the state machine and the state the payout
//! is in, and an audit line, committed together; as `sqlite/resolve.rs`.
//! The update's `AND state = $from` is re-checked by PostgreSQL after any
//! concurrent writer of the row commits, so a worker's change in between
//! makes the decision fail instead of overwriting it.

use super::Pg;
use super::schema::NOW;
use crate::machine::State;
use crate::store::errors::{ChangedMeanwhile, check_decision};
use anyhow::Result;

impl Pg {
    /// Records an operator's decision on a payout, with an audit line.
    pub fn resolve(
        &mut self,
        id: i64,
        from: State,
        to: State,
        action: &str,
        reason: &str,
        code: &str,
    ) -> Result<()> {
        check_decision(id, from, to)?;
        let (action, reason, code) = (action.to_string(), reason.to_string(), code.to_string());
        let (from, to, executed) = (from.as_str(), to.as_str(), to == State::Executed);
        self.call(move |c| {
            let mut tx = c.transaction()?;
            // One timestamp for the payout and its audit line.
            let now: String = tx.query_one(&format!("SELECT {NOW}"), &[])?.try_get(0)?;
            let changed = tx.execute(
                "UPDATE payouts SET state = $2, provider_code = $3, provider_msg = $4,
                        executed_at = CASE WHEN $6 THEN COALESCE(executed_at, $7) ELSE executed_at END,
                        updated_at = $7
                 WHERE id = $1 AND state = $5",
                &[&id, &to, &code, &reason, &from, &executed, &now],
            )?;
            if changed != 1 {
                return Err(ChangedMeanwhile.into());
            }
            tx.execute(
                "INSERT INTO audit (payout_id, at, action, from_state, to_state, reason)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[&id, &now, &action, &from, &to, &reason],
            )?;
            tx.commit()?;
            Ok(())
        })
    }
}
