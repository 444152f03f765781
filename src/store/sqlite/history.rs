//! History: what earlier runs recorded, as the re-run rules need it
//! (docs/rerun.md). Inside an import: the earlier payout holding a
//! transaction id, the recent payouts the repeat guard compares with, rows
//! recorded as already paid (skipped), and ids that conflict. Outside: the
//! unfinished run of the same file, the failed rows of a run (`failed.csv`).
//! The decisions themselves are `engine::repeat`'s; this file only reads
//! and writes.

use super::Sqlite;
use super::import::Import;
use super::sql::{RUN_RANGE, state_list};
use crate::machine::State;
use crate::store::rows::{self, EARLIER_COLS};
use crate::store::types::{Earlier, RunInfo};
use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};

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

    /// Every payout of the runs created in the last `window_days` days
    /// (before this one) whose state is in `states`: what the repeat guard
    /// compares new rows with. Bounded by the recent history, not by the
    /// whole database.
    pub fn recent_payouts(&self, window_days: u32, states: &[State]) -> Result<Vec<Earlier>> {
        let mut runs = self.tx.prepare(&format!(
            "SELECT id FROM runs WHERE id <> ?1
             AND created_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-{window_days} days')"
        ))?;
        let ids = runs
            .query_map([self.run_id], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        let mut stmt = self.tx.prepare(&format!(
            "SELECT {EARLIER_COLS} FROM payouts p JOIN runs r ON r.id = p.run_id
             WHERE p.{RUN_RANGE} AND p.state IN ({}) ORDER BY p.id",
            state_list(states)
        ))?;
        let mut out = Vec::new();
        for id in ids {
            for e in stmt.query_map([id], earlier_from_row)? {
                out.push(e.context("cannot read earlier payouts")?);
            }
        }
        Ok(out)
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
                 AND id_scheme = 2 AND finished_at IS NULL ORDER BY id DESC LIMIT 1",
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

    /// The failed payouts of a run: (row, reason), in row order.
    pub fn failed_rows(&self, run_id: i64) -> Result<Vec<(u64, String)>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT row, state, COALESCE(provider_code, ''), COALESCE(provider_msg, '')
             FROM payouts WHERE {RUN_RANGE} AND state IN ('{}', '{}') ORDER BY id",
            State::InitiateFailed.as_str(),
            State::ExecuteFailed.as_str()
        ))?;
        let rows = stmt.query_map([run_id], |r| {
            let state: State = r.get(1)?;
            let code: String = r.get(2)?;
            let msg: String = r.get(3)?;
            let reason = match (code.is_empty(), msg.is_empty()) {
                (true, true) => state.as_str().to_string(),
                (false, true) => format!("{state}: {code}"),
                (true, false) => format!("{state}: {msg}"),
                (false, false) => format!("{state}: {code}: {msg}"),
            };
            Ok((r.get::<_, i64>(0)? as u64, reason))
        })?;
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
    }
}
