//! Where a run's report was last written, and in which style (PostgreSQL;
//! as `sqlite/outputs.rs`), so that `payrun reconcile` can write the same
//! report again after it settles a payout.

use super::Pg;
use crate::store::types::ReportTarget;
use anyhow::{Context, Result};
use std::path::PathBuf;

impl Pg {
    /// Records (or replaces) where the report of `run_id` was written.
    pub fn set_report_target(&mut self, run_id: i64, t: &ReportTarget) -> Result<()> {
        let path = t.path.to_string_lossy().into_owned();
        let delimiter = (t.delimiter as char).to_string();
        let bom = i64::from(t.bom);
        let language = t.language.clone();
        self.call(move |c| {
            c.execute(
                "INSERT INTO run_reports (run_id, path, delimiter, bom, language)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (run_id) DO UPDATE SET path = EXCLUDED.path,
                     delimiter = EXCLUDED.delimiter, bom = EXCLUDED.bom,
                     language = EXCLUDED.language",
                &[&run_id, &path, &delimiter, &bom, &language],
            )?;
            Ok(())
        })
        .context("cannot record the report's path")
    }

    /// Where the report of `run_id` was last written, if payrun recorded it.
    pub fn report_target(&self, run_id: i64) -> Result<Option<ReportTarget>> {
        self.call(move |c| {
            let Some(r) = c.query_opt(
                "SELECT path, delimiter, bom, language FROM run_reports WHERE run_id = $1",
                &[&run_id],
            )?
            else {
                return Ok(None);
            };
            let delimiter: String = r.try_get(1)?;
            Ok(Some(ReportTarget {
                path: PathBuf::from(r.try_get::<_, String>(0)?),
                delimiter: delimiter.bytes().next().unwrap_or(b','),
                bom: r.try_get::<_, i64>(2)? != 0,
                language: r.try_get(3)?,
            }))
        })
        .context("cannot read the report's path")
    }
}
