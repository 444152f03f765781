//! Reads for closing the books: every payout as the provider was sent it
//! (transaction id, account, wire and major amounts, currency, state, when it was sent), for matching
//! against a provider's statement.

use super::Sqlite;
use crate::store::types::Booked;
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use std::str::FromStr;

impl Sqlite {
    /// Every payout of `run_id` (or of every run), in run and row order.
    pub fn booked(&self, run_id: Option<i64>) -> Result<Vec<Booked>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, run_id, row, transaction_id, account_id, wire_amount, currency, amount, state,
                        COALESCE(executed_at, updated_at, initiated_at, '')
             FROM payouts WHERE (?1 IS NULL OR run_id = ?1) ORDER BY run_id, row",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            let wire: String = r.get(5)?;
            Ok(Booked {
                id: r.get(0)?,
                run_id: r.get(1)?,
                row: r.get::<_, i64>(2)? as u64,
                transaction_id: r.get(3)?,
                account_id: r.get(4)?,
                // Written by payrun as digits; a bad one compares unequal.
                wire_amount: Decimal::from_str(&wire).unwrap_or(Decimal::MIN),
                currency: r.get(6)?,
                amount: Decimal::from_str(&r.get::<_, String>(7)?).unwrap_or(Decimal::MIN),
                state: r.get(8)?,
                sent_at: r.get(9)?,
            })
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read payouts")
    }
}
