//! An operator's decision on a payout, with its audit line (PostgreSQL).

use super::{Pg, todo};
use crate::machine::State;
use anyhow::Result;

impl Pg {
    pub fn resolve(
        &mut self,
        _id: i64,
        _from: State,
        _to: State,
        _action: &str,
        _reason: &str,
        _code: &str,
    ) -> Result<()> {
        todo()
    }
}
