//! Overrides (PostgreSQL), as `sqlite/overrides.rs`: buffered by the
//! import and inserted after the payouts they name, read back per run.

use super::Pg;
use super::import::{BATCH, Import};
use super::schema::NOW;
use crate::machine::State;
use crate::store::overrides::{self, ALLOW_REPEAT_ACTION, NewOverride, OverrideKind, Overrides};
use anyhow::{Context, Result};

impl Import<'_> {
    /// Records an override of this run (and, for a second payment, its
    /// audit line), at the next flush.
    pub fn add_override(&mut self, o: NewOverride) -> Result<()> {
        self.overrides.push(o);
        if self.overrides.len() >= BATCH {
            self.flush_payouts()?;
            self.flush_overrides()?;
        }
        Ok(())
    }

    /// Inserts the buffered overrides and their audit lines (the payouts
    /// they name must be inserted first).
    pub(super) fn flush_overrides(&mut self) -> Result<()> {
        if self.overrides.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.overrides);
        let run_id = self.run_id;
        // Inside the import's own transaction (begun by `begin_import`).
        self.call(move |c| {
            let insert = c.prepare(&format!(
                "INSERT INTO run_overrides (run_id, kind, row, payout_id, earlier_id, currency,
                    amount, detail, at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, {NOW})"
            ))?;
            let audit = c.prepare(&format!(
                "INSERT INTO audit (payout_id, at, action, from_state, to_state, reason)
                 VALUES ($1, {NOW}, $2, $3, $3, $4)"
            ))?;
            for o in &batch {
                let row = o.row as i64;
                c.execute(
                    &insert,
                    &[
                        &run_id,
                        &o.kind.as_str(),
                        &row,
                        &o.payout_id,
                        &o.earlier_id,
                        &o.currency,
                        &o.amount,
                        &o.detail,
                    ],
                )?;
                if let (OverrideKind::SecondPayment, Some(payout)) = (o.kind, o.payout_id) {
                    c.execute(
                        &audit,
                        &[
                            &payout,
                            &ALLOW_REPEAT_ACTION,
                            &State::Pending.as_str(),
                            &o.detail,
                        ],
                    )?;
                }
            }
            Ok(())
        })
        .context("cannot record the run's overrides")
    }
}

impl Pg {
    /// What run `run_id` did beyond the rules.
    pub fn overrides(&self, run_id: i64) -> Result<Overrides> {
        let (rows, total) = self.call(|c| {
            let rows: Vec<overrides::Read> = c
                .query(&overrides::listed_sql("$1"), &[&run_id])?
                .iter()
                .map(|r| {
                    (
                        r.get(0),
                        r.get::<_, i64>(1) as u64,
                        r.get(2),
                        r.get(3),
                        r.get(4),
                        r.get(5),
                        r.get(6),
                    )
                })
                .collect();
            let total: i64 = c.query_one(&overrides::count_sql("$1"), &[&run_id])?.get(0);
            Ok((rows, total))
        })?;
        Ok(overrides::assemble(
            rows,
            total as u64,
            self.skipped_count(run_id)?,
        ))
    }
}
