//! History (PostgreSQL): what earlier runs recorded, as the re-run rules
//! need it (docs/rerun.md), with the same answers as `sqlite/history.rs`.
//! Inside an import: the earlier payouts holding a batch's transaction ids
//! (one statement for the batch), rows
//! recorded as already paid (skipped, inserted in batches). Outside: the unfinished run of the
//! same file, the counts and failed rows of a run.

use super::import::{BATCH, Import};
use super::sql::RUN_COLS;
use super::{LOST, Pg};
use crate::store::rows::{self, EARLIER_COLS};
use crate::store::types::{Earlier, FailedRow, RunInfo};
use anyhow::{Context, Result};
use std::collections::{HashMap, HashSet};

/// The payouts of another run than `$2` holding one of the transaction
/// ids `$1`.
pub(super) fn earlier_sql() -> String {
    format!(
        "SELECT {EARLIER_COLS} FROM payouts p JOIN runs r ON r.id = p.run_id
         WHERE p.transaction_id = ANY($1::TEXT[]) AND p.run_id <> $2"
    )
}

impl Import<'_> {
    /// The payout of an earlier run holding `transaction_id`, if any.
    pub fn earlier(&self, transaction_id: &str) -> Result<Option<Earlier>> {
        Ok(self
            .earlier_many(&[transaction_id.to_string()])?
            .remove(transaction_id))
    }

    /// [`Import::earlier`] of each id, in one statement (one round trip
    /// for the batch): the ids found, each with its payout.
    pub fn earlier_many(&self, transaction_ids: &[String]) -> Result<HashMap<String, Earlier>> {
        if transaction_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let (ids, run_id) = (transaction_ids.to_vec(), self.run_id);
        let stmt = self.earlier.clone().context(LOST)?;
        self.call(move |c| {
            c.query(&stmt, &[&ids, &run_id])?
                .iter()
                .map(|r| rows::earlier(r).map(|e| (e.transaction_id.clone(), e)))
                .collect()
        })
        .context("cannot read earlier payouts")
    }

    /// Payouts recorded in an earlier run.
    pub fn payouts_of(&self, run_id: i64) -> Result<u64> {
        let n: i64 = self.call(move |c| {
            Ok(
                c.query_one("SELECT count(*) FROM payouts WHERE run_id = $1", &[&run_id])?
                    .try_get(0)?,
            )
        })?;
        Ok(n as u64)
    }

    /// Records that row `row` of this file was already paid (or is held)
    /// by the earlier payout `payout_id`: listed in the report, not sent.
    pub fn add_skipped(&mut self, row: u64, payout_id: i64) -> Result<()> {
        self.rows += 1;
        self.skipped.push((row as i64, payout_id));
        if self.skipped.len() >= BATCH {
            self.flush_skipped()?;
        }
        Ok(())
    }

    /// Inserts the buffered skipped rows; a row given twice keeps the
    /// last payout, as `INSERT OR REPLACE` does in SQLite.
    pub(super) fn flush_skipped(&mut self) -> Result<()> {
        if self.skipped.is_empty() {
            return Ok(());
        }
        let mut seen = HashSet::new();
        let (mut rows, mut payouts) = (Vec::new(), Vec::new());
        for &(row, payout) in self.skipped.iter().rev() {
            if seen.insert(row) {
                rows.push(row);
                payouts.push(payout);
            }
        }
        self.skipped.clear();
        let run_id = self.run_id;
        self.call(move |c| {
            c.execute(
                "INSERT INTO skipped_rows (run_id, row, payout_id)
                 SELECT $1, u.r, u.p FROM unnest($2::BIGINT[], $3::BIGINT[]) AS u(r, p)
                 ON CONFLICT (run_id, row) DO UPDATE SET payout_id = EXCLUDED.payout_id",
                &[&run_id, &rows, &payouts],
            )?;
            Ok(())
        })
        .context("cannot record skipped rows")
    }
}

impl Pg {
    /// The latest unfinished run of the same bytes, label and worksheet
    /// (any period): resumed when the period was not given.
    pub fn unfinished_run_of(
        &self,
        file_sha256: &str,
        label: &str,
        sheet: &str,
    ) -> Result<Option<RunInfo>> {
        self.call(|c| {
            c.query_opt(
                &format!(
                    "SELECT {RUN_COLS} FROM runs WHERE file_sha256 = $1 AND label = $2
                     AND sheet = $3 AND id_scheme >= 2 AND finished_at IS NULL
                     ORDER BY id DESC LIMIT 1"
                ),
                &[&file_sha256, &label, &sheet],
            )?
            .as_ref()
            .map(rows::run_info)
            .transpose()
        })
    }

    /// Payouts recorded in a run.
    pub fn payout_count(&self, run_id: i64) -> Result<u64> {
        self.count("SELECT count(*) FROM payouts WHERE run_id = $1", run_id)
    }

    /// Rows of a run skipped as already paid.
    pub fn skipped_count(&self, run_id: i64) -> Result<u64> {
        self.count(
            "SELECT count(*) FROM skipped_rows WHERE run_id = $1",
            run_id,
        )
    }

    fn count(&self, sql: &str, run_id: i64) -> Result<u64> {
        let n: i64 = self.call(|c| Ok(c.query_one(sql, &[&run_id])?.try_get(0)?))?;
        Ok(n as u64)
    }

    /// The failed payouts of a run, as SQLite's `failed_rows`.
    pub fn failed_rows(&self, run_id: i64) -> Result<Vec<FailedRow>> {
        let sql = rows::failed_sql("run_id = $1");
        self.call(|c| {
            c.query(&sql, &[&run_id])?
                .iter()
                .map(rows::failed_row)
                .collect::<Result<Vec<_>>>()
                .context("cannot read failed payouts")
        })
    }
}
