//! Overrides (SQLite; see `store/overrides.rs`): recorded by an import in
//! its transaction — a second payment also as a line of the audit trail —
//! and read back per run.

use super::Sqlite;
use super::import::Import;
use super::sql::NOW;
use crate::machine::State;
use crate::store::overrides::{self, ALLOW_REPEAT_ACTION, NewOverride, OverrideKind, Overrides};
use anyhow::{Context, Result};
use rusqlite::params;

impl Import<'_> {
    /// Records an override of this run (and, for a second payment, its
    /// audit line).
    pub fn add_override(&mut self, o: NewOverride) -> Result<()> {
        self.tx
            .prepare_cached(&format!(
                "INSERT INTO run_overrides (run_id, kind, row, payout_id, earlier_id, currency,
                    amount, detail, at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {NOW})"
            ))?
            .execute(params![
                self.run_id,
                o.kind.as_str(),
                o.row as i64,
                o.payout_id,
                o.earlier_id,
                o.currency,
                o.amount,
                o.detail
            ])
            .context("cannot record an override")?;
        if let (OverrideKind::SecondPayment, Some(payout)) = (o.kind, o.payout_id) {
            self.tx
                .prepare_cached(&format!(
                    "INSERT INTO audit (payout_id, at, action, from_state, to_state, reason)
                     VALUES (?1, {NOW}, ?2, ?3, ?3, ?4)"
                ))?
                .execute(params![
                    payout,
                    ALLOW_REPEAT_ACTION,
                    State::Pending,
                    o.detail
                ])
                .context("cannot record an audit line")?;
        }
        Ok(())
    }
}

impl Sqlite {
    /// What run `run_id` did beyond the rules.
    pub fn overrides(&self, run_id: i64) -> Result<Overrides> {
        let mut stmt = self.conn.prepare(&overrides::listed_sql("?1"))?;
        let rows = stmt
            .query_map([run_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)? as u64,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read the run's overrides")?;
        let total: i64 = self
            .conn
            .query_row(&overrides::count_sql("?1"), [run_id], |r| r.get(0))?;
        Ok(overrides::assemble(
            rows,
            total as u64,
            self.skipped_count(run_id)?,
        ))
    }
}
