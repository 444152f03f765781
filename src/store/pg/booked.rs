//! Reads for closing the books (PostgreSQL): every payout as the provider
//! was sent it (transaction id, account, wire and major amounts, currency, state, when it was sent), for
//! matching against a provider's statement; as `sqlite/booked.rs`.

use super::Pg;
use super::sql::state;
use crate::store::types::Booked;
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use std::str::FromStr;

impl Pg {
    /// Every payout of `run_id` (or of every run), in run and row order.
    pub fn booked(&self, run_id: Option<i64>) -> Result<Vec<Booked>> {
        self.call(move |c| {
            c.query(
                "SELECT id, run_id, row, transaction_id, account_id, wire_amount, currency, amount, state,
                        COALESCE(executed_at, updated_at, initiated_at, '')
                 FROM payouts WHERE ($1::BIGINT IS NULL OR run_id = $1) ORDER BY run_id, row",
                &[&run_id],
            )?
            .iter()
            .map(|r| {
                let wire: String = r.try_get(5)?;
                Ok(Booked {
                    id: r.try_get(0)?,
                    run_id: r.try_get(1)?,
                    row: r.try_get::<_, i64>(2)? as u64,
                    transaction_id: r.try_get(3)?,
                    account_id: r.try_get(4)?,
                    // Written by payrun as digits; a bad one compares unequal.
                    wire_amount: Decimal::from_str(&wire).unwrap_or(Decimal::MIN),
                    currency: r.try_get(6)?,
                    amount: Decimal::from_str(&r.try_get::<_, String>(7)?)
                        .unwrap_or(Decimal::MIN),
                    state: state(r, 8)?,
                    sent_at: r.try_get(9)?,
                })
            })
            .collect()
        })
        .context("cannot read payouts")
    }
}
