//! Payouts as sent, for matching a provider's statement (PostgreSQL).

use super::{Pg, todo};
use crate::store::types::Booked;
use anyhow::Result;

impl Pg {
    pub fn booked(&self, _run_id: Option<i64>) -> Result<Vec<Booked>> {
        todo()
    }
}
