//! Where a run's report was written (PostgreSQL).

use super::{Pg, todo};
use crate::store::types::ReportTarget;
use anyhow::Result;

impl Pg {
    pub fn set_report_target(&mut self, _run_id: i64, _t: &ReportTarget) -> Result<()> {
        todo()
    }

    pub fn report_target(&self, _run_id: i64) -> Result<Option<ReportTarget>> {
        todo()
    }
}
