//! The per-person guard's look-ups (PostgreSQL), with the same answers as
//! `sqlite/person.rs`: one indexed query per row, prepared once per
//! import, and the keys of payouts recorded before keys existed.

use super::import::Import;
use super::sql::state_list;
use super::{LOST, Pg};
use crate::machine::GUARDED;
use crate::store::person::{KEY_FILL_BATCH, PER_ROW, PersonQuery, always_compared};
use crate::store::rows::{self, EARLIER_COLS};
use crate::store::types::Earlier;
use anyhow::{Context, Result};

/// Payouts of another run than `$3` to the person `$1`/`$2` (see
/// [`Import::same_person`]).
pub(super) fn same_person_sql() -> String {
    format!(
        r#"SELECT {EARLIER_COLS} FROM payouts p JOIN runs r ON r.id = p.run_id
         WHERE p.account_key = $1 AND p.currency = $2 AND p.run_id <> $3
         AND p.state IN ({states}) AND COALESCE(p.origin_run, p.run_id) <> $4
         AND ((CASE WHEN r.period = '' THEN substr(r.created_at, 1, 7) ELSE r.period END) = $5
              OR (p.amount = $6 AND (p.state IN ({open})
                  OR COALESCE(p.updated_at, r.created_at) >= to_char(
                      (clock_timestamp() - make_interval(days => $7)) AT TIME ZONE 'UTC',
                      'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))))
         ORDER BY p.id LIMIT {PER_ROW}"#,
        states = state_list(GUARDED),
        open = state_list(always_compared()),
    )
}

impl Import<'_> {
    /// As SQLite's `Import::same_person`.
    pub fn same_person(&self, q: &PersonQuery<'_>) -> Result<Vec<Earlier>> {
        let stmt = self.person.clone().context(LOST)?;
        let (key, currency, period, amount) = (
            q.account_key.to_string(),
            q.currency.to_string(),
            q.period.to_string(),
            q.amount.to_string(),
        );
        let run_id = self.run_id;
        let origin = q.origin_run.unwrap_or(run_id);
        let days = i32::try_from(q.window_days).unwrap_or(i32::MAX);
        self.call(move |c| {
            c.query(
                &stmt,
                &[&key, &currency, &run_id, &origin, &period, &amount, &days],
            )?
            .iter()
            .map(rows::earlier)
            .collect()
        })
        .context("cannot read earlier payouts")
    }
}

impl Pg {
    /// As SQLite's `Sqlite::fill_account_keys`: one transaction per batch.
    pub fn fill_account_keys(&mut self, key: &mut dyn FnMut(&str) -> String) -> Result<u64> {
        let mut filled = 0;
        loop {
            let batch: Vec<(i64, String)> = self
                .call(|c| {
                    Ok(c.query(
                        &format!(
                            "SELECT id, account_id FROM payouts WHERE account_key IS NULL
                             LIMIT {KEY_FILL_BATCH}"
                        ),
                        &[],
                    )?
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect())
                })
                .context("cannot read earlier accounts")?;
            if batch.is_empty() {
                return Ok(filled);
            }
            let ids: Vec<i64> = batch.iter().map(|(id, _)| *id).collect();
            let keys: Vec<String> = batch.iter().map(|(_, a)| key(a)).collect();
            self.call(|c| {
                c.execute(
                    "UPDATE payouts p SET account_key = u.k
                     FROM unnest($1::BIGINT[], $2::TEXT[]) AS u(id, k)
                     WHERE p.id = u.id AND p.account_key IS NULL",
                    &[&ids, &keys],
                )?;
                Ok(())
            })
            .context("cannot record account keys")?;
            filled += batch.len() as u64;
        }
    }
}
