//! Ending a run by an operator; re-pointing an unsent run (PostgreSQL).

use super::{Pg, todo};
use crate::store::types::CancelOutcome;
use anyhow::Result;

impl Pg {
    pub fn repoint_unsent_run(&mut self, _run_id: i64, _provider: &str) -> Result<bool> {
        todo()
    }

    pub fn cancel_run(&mut self, _run_id: i64) -> Result<CancelOutcome> {
        todo()
    }
}
