//! An operator's decision on a payout (`payrun reconcile`): the new state,
//! checked against the state machine and the state the payout is in, and
//! an audit line, committed together.

use super::Sqlite;
use super::sql::NOW;
use crate::machine::State;
use crate::store::errors::{ChangedMeanwhile, check_decision};
use anyhow::Result;
use rusqlite::params;

impl Sqlite {
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
        let tx = self.conn.transaction()?;
        let changed = tx.execute(
            &format!(
                "UPDATE payouts SET state = ?2, provider_code = ?3, provider_msg = ?4,
                        executed_at = CASE WHEN ?6 THEN COALESCE(executed_at, {NOW}) ELSE executed_at END,
                        updated_at = {NOW}
                 WHERE id = ?1 AND state = ?5"
            ),
            params![id, to, code, reason, from, to == State::Executed],
        )?;
        if changed != 1 {
            return Err(ChangedMeanwhile.into());
        }
        tx.execute(
            &format!(
                "INSERT INTO audit (payout_id, at, action, from_state, to_state, reason)
                 VALUES (?1, {NOW}, ?2, ?3, ?4, ?5)"
            ),
            params![id, action, from, to, reason],
        )?;
        tx.commit()?;
        Ok(())
    }
}
