//! Reads: runs, payouts to resume, counts and totals per state, the report
//! rows, the payouts an operator must settle, and the audit trail. Amounts
//! are summed as decimals (by `report_rows`, shared with PostgreSQL), never
//! by SQL; states are read through the state machine, so an unknown name is
//! an error.

use super::Sqlite;
use super::sql::{
    RUN_COLS, RUN_RANGE, UNRESOLVED_COLS, WORK_COLS, run_from_row, run_sender, state_list,
    unresolved_from_row,
};
use crate::machine::{NEEDS_OPERATOR, OPEN, State};
use crate::store::report_rows::{add_to_totals, merge_in_row_order};
use crate::store::rows;
use crate::store::types::{ReportRow, RunInfo, Totals, Unresolved, Work};
use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};
use std::collections::BTreeMap;

impl Sqlite {
    pub fn find_run(&self, identity: &str) -> Result<Option<RunInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs WHERE identity = ?1"),
                [identity],
                run_from_row,
            )
            .optional()
            .context("cannot read runs")
    }

    pub fn run(&self, id: i64) -> Result<Option<RunInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs WHERE id = ?1"),
                [id],
                run_from_row,
            )
            .optional()
            .context("cannot read runs")
    }

    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {RUN_COLS} FROM runs ORDER BY id"))?;
        let rows = stmt.query_map([], run_from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read runs")
    }

    pub fn latest_run(&self) -> Result<Option<RunInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs ORDER BY id DESC LIMIT 1"),
                [],
                run_from_row,
            )
            .optional()
            .context("cannot read runs")
    }

    /// Payouts of `run_id` in `state`, with their bodies (resume).
    pub fn works_in_state(&self, run_id: i64, state: State) -> Result<Vec<Work>> {
        let run_sender = run_sender(&self.conn, run_id)?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {WORK_COLS} FROM payouts WHERE {RUN_RANGE} AND state = ?2 ORDER BY id"
        ))?;
        let mut rows = stmt.query(params![run_id, state])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(rows::work(r, &run_sender)?);
        }
        Ok(out)
    }

    /// Payouts of a run not yet in a final state.
    pub fn open_count(&self, run_id: i64) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            &format!(
                "SELECT count(*) FROM payouts WHERE {RUN_RANGE}
                 AND state IN ({})",
                state_list(OPEN)
            ),
            [run_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Count of payouts of a run per state.
    pub fn state_counts(&self, run_id: i64) -> Result<BTreeMap<State, u64>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT state, count(*) FROM payouts WHERE {RUN_RANGE} GROUP BY state"
        ))?;
        let mut out = BTreeMap::new();
        let rows = stmt.query_map([run_id], |r| {
            Ok((r.get::<_, State>(0)?, r.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (state, n) = row.context("cannot count payouts")?;
            out.insert(state, n as u64);
        }
        Ok(out)
    }

    /// Count and total per currency and state. Amounts are summed as
    /// decimals by [`add_to_totals`], never by SQL (which would sum them as floats).
    pub fn totals(&self, run_id: i64) -> Result<Totals> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT currency, state, amount FROM payouts WHERE {RUN_RANGE}"
        ))?;
        let mut rows = stmt.query([run_id])?;
        let mut out = Totals::new();
        while let Some(r) = rows.next()? {
            add_to_totals(&mut out, r.get(0)?, r.get(1)?, &r.get::<_, String>(2)?, 1)?;
        }
        Ok(out)
    }

    /// Calls `f` for every report line of a run, payouts and skipped rows
    /// merged in row order. Payouts are read in id order, which is row order
    /// because import inserts rows as the file streams by; the two ordered
    /// streams are merged here rather than sorted by SQLite, so a report of a
    /// million rows needs no sort buffer.
    pub fn for_each_report_row(
        &self,
        run_id: i64,
        mut f: impl FnMut(&ReportRow) -> Result<()>,
    ) -> Result<()> {
        // Rows skipped as already paid by an earlier run (docs/rerun.md):
        // few, so SQLite may sort them. (A file with a rejected row is never
        // imported, so the legacy `rejected_rows` table stays empty.)
        let mut skipped_stmt = self.conn.prepare(
            "SELECT s.row, p.transaction_id, COALESCE(p.account_given, p.account_id), p.b_first,
                    p.b_last, p.amount,
                    p.currency, p.state, p.run_id, p.row, r.file_path, r.created_at
               FROM skipped_rows s JOIN payouts p ON p.id = s.payout_id
               JOIN runs r ON r.id = p.run_id
              WHERE s.run_id = ?1
             ORDER BY 1",
        )?;
        let mut skipped = skipped_stmt.query([run_id])?;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT row, transaction_id, COALESCE(account_given, account_id), b_first, b_last,
                    amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, ''), attempts,
                    COALESCE(initiated_at, ''), COALESCE(executed_at, '')
             FROM payouts WHERE {RUN_RANGE} ORDER BY id"
        ))?;
        let mut payouts = stmt.query([run_id])?;
        merge_in_row_order(
            || {
                let Some(r) = skipped.next()? else {
                    return Ok(None);
                };
                Ok(Some(rows::skipped_report_row(r)?))
            },
            || {
                let Some(r) = payouts.next()? else {
                    return Ok(None);
                };
                Ok(Some(rows::report_row(r)?))
            },
            |r| f(&r),
        )
    }

    /// Payouts left `unknown` (or in an intent state) for an operator.
    pub fn unresolved(&self, run_id: Option<i64>) -> Result<Vec<Unresolved>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {UNRESOLVED_COLS}
             FROM payouts
             WHERE state IN ({}) AND (?1 IS NULL OR run_id = ?1)
             ORDER BY run_id, row",
            state_list(NEEDS_OPERATOR)
        ))?;
        let rows = stmt.query_map([run_id], unresolved_from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read payouts")
    }

    pub fn payout_by_transaction_id(&self, transaction_id: &str) -> Result<Option<Unresolved>> {
        self.conn
            .query_row(
                &format!("SELECT {UNRESOLVED_COLS} FROM payouts WHERE transaction_id = ?1"),
                [transaction_id],
                unresolved_from_row,
            )
            .optional()
            .context("cannot read payouts")
    }

    /// The audit trail of a run: (transaction id, time, action, from, to, reason).
    pub fn audit(&self, run_id: i64) -> Result<Vec<[String; 6]>> {
        let mut stmt = self.conn.prepare(
            "SELECT p.transaction_id, a.at, a.action, a.from_state, a.to_state, a.reason
             FROM audit a JOIN payouts p ON p.id = a.payout_id
             WHERE p.run_id = ?1 ORDER BY a.id",
        )?;
        // The states are read as states: an unknown name is an error here
        // too, not a line of the trail.
        let rows = stmt.query_map([run_id], |r| {
            Ok([
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, State>(3)?.as_str().to_string(),
                r.get::<_, State>(4)?.as_str().to_string(),
                r.get(5)?,
            ])
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read the audit trail")
    }
}
