//! The per-person guard's look-ups (PostgreSQL), with the same answers as
//! `sqlite/person.rs`: the rows of a whole batch asked in one statement
//! (an index look-up per row on the server, not a round trip per row),
//! prepared once per import, and the keys of payouts recorded before keys
//! existed.

use super::import::Import;
use super::sql::state_list;
use super::{LOST, Pg};
use crate::machine::GUARDED;
use crate::store::person::{KEY_FILL_BATCH, PER_ROW, PersonQuery, always_compared};
use crate::store::rows::{self, EARLIER_COLS};
use crate::store::types::Earlier;
use anyhow::{Context, Result};

/// For each row `i` of the arrays `$1`..`$5` (account key, currency,
/// origin run, period, amount), the payouts of another run than `$6` to
/// that person (see [`Import::same_person`]), then `i` (1-based) in the
/// last column: [`PER_ROW`] at most per row, rows in order, each row's
/// payouts oldest first.
pub(super) fn same_person_sql() -> String {
    format!(
        r#"SELECT e.*, q.i FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[])
             WITH ORDINALITY AS q(k, cur, origin, per, amt, i)
         CROSS JOIN LATERAL (
           SELECT {EARLIER_COLS} FROM payouts p JOIN runs r ON r.id = p.run_id
           WHERE p.account_key = q.k AND p.currency = q.cur AND p.run_id <> $6
           AND p.state IN ({states}) AND COALESCE(p.origin_run, p.run_id) <> q.origin
           AND ((CASE WHEN r.period = '' THEN substr(r.created_at, 1, 7) ELSE r.period END) = q.per
                OR (p.amount = q.amt AND (p.state IN ({open})
                    OR COALESCE(p.updated_at, r.created_at) >= to_char(
                        (clock_timestamp() - make_interval(days => $7)) AT TIME ZONE 'UTC',
                        'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))))
           ORDER BY p.id LIMIT {PER_ROW}) e
         ORDER BY q.i, e.id"#,
        states = state_list(GUARDED),
        open = state_list(always_compared()),
    )
}

/// The column [`same_person_sql`] puts the row's index in.
const INDEX_COL: usize = 16;

impl Import<'_> {
    /// As SQLite's `Import::same_person`.
    pub fn same_person(&self, q: &PersonQuery<'_>) -> Result<Vec<Earlier>> {
        Ok(self
            .same_person_many(std::slice::from_ref(q))?
            .pop()
            .unwrap_or_default())
    }

    /// [`Import::same_person`] of each query, in order, in one statement
    /// (one round trip for the batch).
    pub fn same_person_many(&self, qs: &[PersonQuery<'_>]) -> Result<Vec<Vec<Earlier>>> {
        if qs.is_empty() {
            return Ok(Vec::new());
        }
        let stmt = self.person.clone().context(LOST)?;
        let run_id = self.run_id;
        let keys: Vec<String> = qs.iter().map(|q| q.account_key.to_string()).collect();
        let currencies: Vec<String> = qs.iter().map(|q| q.currency.to_string()).collect();
        let origins: Vec<i64> = qs.iter().map(|q| q.origin_run.unwrap_or(run_id)).collect();
        let periods: Vec<String> = qs.iter().map(|q| q.period.to_string()).collect();
        let amounts: Vec<String> = qs.iter().map(|q| q.amount.to_string()).collect();
        // One window per import: every query of a batch carries the same.
        let days = i32::try_from(qs[0].window_days).unwrap_or(i32::MAX);
        debug_assert!(qs.iter().all(|q| q.window_days == qs[0].window_days));
        let n = qs.len();
        self.call(move |c| {
            let rows = c.query(
                &stmt,
                &[
                    &keys,
                    &currencies,
                    &origins,
                    &periods,
                    &amounts,
                    &run_id,
                    &days,
                ],
            )?;
            let mut found: Vec<Vec<Earlier>> = vec![Vec::new(); n];
            for r in &rows {
                let i: i64 = r.try_get(INDEX_COL)?;
                let slot = usize::try_from(i - 1)
                    .ok()
                    .and_then(|i| found.get_mut(i))
                    .context("a row index out of the batch")?;
                slot.push(rows::earlier(r)?);
            }
            Ok(found)
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
