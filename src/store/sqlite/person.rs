//! The per-person guard's look-ups (SQLite; see `store/person.rs`): the
//! earlier payouts of one person by canonical account key and currency,
//! one indexed query per row, and the keys of payouts recorded before keys
//! existed, filled before the first import that needs them.

use super::Sqlite;
use super::import::Import;
use super::sql::state_list;
use crate::machine::GUARDED;
use crate::store::person::{KEY_FILL_BATCH, PER_ROW, PersonQuery, always_compared};
use crate::store::rows::{self, EARLIER_COLS};
use crate::store::types::Earlier;
use anyhow::{Context, Result};
use rusqlite::params;

impl Import<'_> {
    /// Payouts of other runs to the person of `q` that the guard compares
    /// with: of the same period whatever the amount, or of the same amount
    /// and changed within the window (or still open). At most
    /// [`PER_ROW`], oldest first.
    pub fn same_person(&self, q: &PersonQuery<'_>) -> Result<Vec<Earlier>> {
        let sql = format!(
            "SELECT {EARLIER_COLS} FROM payouts p JOIN runs r ON r.id = p.run_id
             WHERE p.account_key = ?1 AND p.currency = ?2 AND p.run_id <> ?3
             AND p.state IN ({states}) AND COALESCE(p.origin_run, p.run_id) <> ?4
             AND ((CASE WHEN r.period = '' THEN substr(r.created_at, 1, 7) ELSE r.period END) = ?5
                  OR (p.amount = ?6 AND (p.state IN ({open})
                      OR COALESCE(p.updated_at, r.created_at)
                         >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || ?7 || ' days'))))
             ORDER BY p.id LIMIT {PER_ROW}",
            states = state_list(GUARDED),
            open = state_list(always_compared()),
        );
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let found = stmt.query_map(
            params![
                q.account_key,
                q.currency,
                self.run_id,
                q.origin_run.unwrap_or(self.run_id),
                q.period,
                q.amount,
                i64::from(q.window_days),
            ],
            |r| rows::earlier(r),
        )?;
        found
            .collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read earlier payouts")
    }
}

impl Import<'_> {
    /// [`Import::same_person`] of each query, in order (in process, the
    /// cached statement run once per query: no round trip to save).
    pub fn same_person_many(&self, qs: &[PersonQuery<'_>]) -> Result<Vec<Vec<Earlier>>> {
        qs.iter().map(|q| self.same_person(q)).collect()
    }
}

impl Sqlite {
    /// Gives every payout recorded without an account key (before keys
    /// existed) the key `key` computes from its account, [`KEY_FILL_BATCH`]
    /// payouts per transaction; returns how many. Deterministic, so two
    /// processes filling at once write the same keys.
    pub fn fill_account_keys(&mut self, key: &mut dyn FnMut(&str) -> String) -> Result<u64> {
        let mut filled = 0;
        loop {
            let tx = self.conn.transaction()?;
            let batch: Vec<(i64, String)> = tx
                .prepare_cached(&format!(
                    "SELECT id, account_id FROM payouts WHERE account_key IS NULL
                     LIMIT {KEY_FILL_BATCH}"
                ))?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()
                .context("cannot read earlier accounts")?;
            if batch.is_empty() {
                return Ok(filled);
            }
            {
                let mut update =
                    tx.prepare_cached("UPDATE payouts SET account_key = ?2 WHERE id = ?1")?;
                for (id, account) in &batch {
                    update
                        .execute(params![id, key(account)])
                        .context("cannot record an account key")?;
                }
            }
            tx.commit().context("cannot record account keys")?;
            filled += batch.len() as u64;
        }
    }
}
