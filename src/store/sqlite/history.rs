//! History: what earlier runs recorded, as the re-run rules need it
//! (docs/rerun.md). Inside an import: the earlier payout holding a
//! transaction id, rows recorded as already paid (skipped), and ids that
//! conflict (the guard's look-ups by person are `person.rs`). Outside: the
//! unfinished run of the same file, the failed rows of a run (`failed.csv`).
//! The decisions themselves are `engine::repeat`'s; this file only reads
//! and writes.

use super::Sqlite;
use super::import::Import;
use super::sql::RUN_RANGE;
use crate::store::rows::{self, EARLIER_COLS};
use crate::store::types::{Earlier, FailedRow, RunInfo};
use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

fn earlier_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Earlier> {
    rows::earlier(r)
}

impl Import<'_> {
    /// The payout of an earlier run holding `transaction_id`, if any.
    pub fn earlier(&self, transaction_id: &str) -> Result<Option<Earlier>> {
        self.tx
            .prepare_cached(&format!(
                "SELECT {EARLIER_COLS} FROM payouts p JOIN runs r ON r.id = p.run_id
                 WHERE p.transaction_id = ?1 AND p.run_id <> ?2"
            ))?
            .query_row(params![transaction_id, self.run_id], earlier_from_row)
            .optional()
            .context("cannot read earlier payouts")
    }

    /// [`Import::earlier`] of each id: the ids found, each with its
    /// payout. In process, a look-up is a call, not a round trip: the
    /// cached statement is run once per id (as PostgreSQL's one statement
    /// per batch runs one index look-up per id).
    pub fn earlier_many(&self, transaction_ids: &[String]) -> Result<HashMap<String, Earlier>> {
        let mut found = HashMap::new();
        for t in transaction_ids {
            if let Some(e) = self.earlier(t)? {
                found.insert(t.clone(), e);
            }
        }
        Ok(found)
    }

    /// Payouts recorded in an earlier run.
    pub fn payouts_of(&self, run_id: i64) -> Result<u64> {
        let n: i64 = self.tx.query_row(
            &format!("SELECT count(*) FROM payouts WHERE {RUN_RANGE}"),
            [run_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Records that row `row` of this file was already paid (or is held)
    /// by the earlier payout `payout_id`: listed in the report, not sent.
    pub fn add_skipped(&mut self, row: u64, payout_id: i64) -> Result<()> {
        self.rows += 1;
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO skipped_rows (run_id, row, payout_id) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![self.run_id, row as i64, payout_id])?;
        Ok(())
    }
}

impl Sqlite {
    /// The latest unfinished run of the same bytes, label and worksheet
    /// (any period): resumed when the period was not given, so a run
    /// interrupted at the turn of a month is finished, not paid again.
    pub fn unfinished_run_of(
        &self,
        file_sha256: &str,
        label: &str,
        sheet: &str,
    ) -> Result<Option<RunInfo>> {
        let id: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE file_sha256 = ?1 AND label = ?2 AND sheet = ?3
                 AND id_scheme >= 2 AND finished_at IS NULL ORDER BY id DESC LIMIT 1",
                params![file_sha256, label, sheet],
                |r| r.get(0),
            )
            .optional()?;
        match id {
            Some(id) => self.run(id),
            None => Ok(None),
        }
    }

    /// Payouts recorded in a run.
    pub fn payout_count(&self, run_id: i64) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            &format!("SELECT count(*) FROM payouts WHERE {RUN_RANGE}"),
            [run_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Rows of a run skipped as already paid.
    pub fn skipped_count(&self, run_id: i64) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT count(*) FROM skipped_rows WHERE run_id = ?1",
            [run_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// The failed payouts of a run, in payout order, each with the
    /// transaction id its row was first paid under.
    pub fn failed_rows(&self, run_id: i64) -> Result<Vec<FailedRow>> {
        let mut stmt = self.conn.prepare(&rows::failed_sql(RUN_RANGE))?;
        let rows = stmt.query_map([run_id], |r| rows::failed_row(r))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read failed payouts")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database written by the previous schema (before periods and
    /// skipped rows) opens, migrates, and its runs stay readable,
    /// resumable (old scheme, found by their old identity) and reported.
    #[test]
    fn a_database_of_the_previous_schema_migrates_and_keeps_its_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let mut conn = rusqlite::Connection::open(&path).unwrap();
            let tx = conn.transaction().unwrap();
            tx.execute_batch(crate::store::sqlite::schema::MIGRATIONS[0])
                .unwrap();
            tx.execute_batch(&format!(
                "PRAGMA user_version = 1; PRAGMA application_id = {};",
                crate::store::APPLICATION_ID
            ))
            .unwrap();
            tx.execute_batch(
                "INSERT INTO runs (id, identity, file_sha256, label, file_path, provider, sender_json,
                    rows_total, rows_rejected, created_at, first_payout, last_payout)
                 VALUES (1, 'oldsha', 'oldsha', '', 'payroll.csv', 'sandbox', '{}', 1, 0,
                    '2026-10-01T00:00:00.000Z', 1, 1);
                 INSERT INTO payouts (id, run_id, row, transaction_id, account_id, amount, wire_amount,
                    currency, method, description, b_first, b_last, b_phone, b_email, state)
                 VALUES (1, 1, 2, 'pr-oldsha-000000002', 'A1', '1000', '1000', 'XOF', 'momo', 'd',
                    'Ama', 'Mensah', '', '', 'pending');",
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let store = Sqlite::open(&path).unwrap();
        let run = store.find_run("oldsha").unwrap().unwrap();
        assert_eq!((run.id_scheme, run.period.as_str()), (1, ""));
        assert_eq!(store.open_count(1).unwrap(), 1);
        let mut rows = Vec::new();
        store
            .for_each_report_row(1, |r| {
                rows.push((r.row, r.transaction_id.clone(), r.state.clone()));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            rows,
            vec![(2, "pr-oldsha-000000002".to_string(), "pending".to_string())]
        );
        assert_eq!(store.skipped_count(1).unwrap(), 0);
        // Four eyes: an old run has no preparer recorded and no approval.
        assert_eq!(store.preparer(1).unwrap(), None);
        assert!(store.approval_events(1).unwrap().is_empty());
        assert_eq!(store.payout_set(1).unwrap().not_initiated, 1);
    }
}
