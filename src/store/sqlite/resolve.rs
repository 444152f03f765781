//! An operator's decision on a payout (`payrun reconcile`): the new state,
//! checked against the state machine and the state the payout is in, and
//! an audit line, committed together.

use super::Sqlite;
use super::sql::NOW;
use crate::machine::State;
use crate::store::errors::{CHANGED_MEANWHILE, check_decision};
use anyhow::{Result, bail};
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
            bail!(CHANGED_MEANWHILE);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::wire::Sender;
    use crate::store::Transition;
    use crate::store::test_support::{new_run, payout};

    #[test]
    fn resolve_writes_audit() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Sqlite::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        let run_id = imp.commit().unwrap();
        let p = store.payout_by_transaction_id("tx-2").unwrap().unwrap();
        store
            .apply(&[
                Transition::new(p.id, State::Pending, State::Initiating),
                Transition::new(p.id, State::Initiating, State::Initiated),
                Transition::new(p.id, State::Initiated, State::Executing),
                Transition::new(p.id, State::Executing, State::Unknown),
            ])
            .unwrap();
        assert_eq!(store.unresolved(Some(run_id)).unwrap().len(), 1);
        store
            .resolve(
                p.id,
                State::Unknown,
                State::Executed,
                "mark",
                "statement 2026-05",
                "OPERATOR_MARKED",
            )
            .unwrap();
        assert!(store.unresolved(Some(run_id)).unwrap().is_empty());
        let audit = store.audit(run_id).unwrap();
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0][0], "tx-2");
        assert_eq!(audit[0][5], "statement 2026-05");
        // A second decision on the same payout is refused.
        assert!(
            store
                .resolve(p.id, State::Unknown, State::ExecuteFailed, "mark", "x", "X")
                .is_err()
        );
    }

    #[test]
    fn a_decision_the_state_machine_lacks_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Sqlite::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        let run_id = imp.commit().unwrap();
        let p = store.payout_by_transaction_id("tx-2").unwrap().unwrap();
        let err = store
            .resolve(p.id, State::Pending, State::Executed, "mark", "x", "X")
            .unwrap_err();
        assert!(format!("{err}").contains("not a decision"), "{err}");
        assert_eq!(store.state_counts(run_id).unwrap()[&State::Pending], 1);
        assert!(store.audit(run_id).unwrap().is_empty());
    }
}
