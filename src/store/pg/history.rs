//! Earlier runs and payouts: unfinished runs, skipped and failed rows (PostgreSQL).

use super::{Pg, todo};
use crate::store::types::RunInfo;
use anyhow::Result;

impl Pg {
    pub fn unfinished_run_of(
        &self,
        _file_sha256: &str,
        _label: &str,
        _sheet: &str,
    ) -> Result<Option<RunInfo>> {
        todo()
    }

    pub fn payout_count(&self, _run_id: i64) -> Result<u64> {
        todo()
    }

    pub fn skipped_count(&self, _run_id: i64) -> Result<u64> {
        todo()
    }

    pub fn failed_rows(&self, _run_id: i64) -> Result<Vec<(u64, String)>> {
        todo()
    }
}
