//! Where a run's report was last written, and in which style (delimiter,
//! byte-order mark, header language), so that `payrun reconcile` can write
//! the same report again after it settles a payout: a report must never
//! keep saying `unknown` for a payout an operator settled.

use super::Sqlite;
use crate::store::types::ReportTarget;
use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};
use std::path::PathBuf;

impl Sqlite {
    /// Records (or replaces) where the report of `run_id` was written.
    pub fn set_report_target(&mut self, run_id: i64, t: &ReportTarget) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO run_reports (run_id, path, delimiter, bom, language)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(run_id) DO UPDATE SET path = ?2, delimiter = ?3,
                     bom = ?4, language = ?5",
                params![
                    run_id,
                    t.path.to_string_lossy(),
                    (t.delimiter as char).to_string(),
                    t.bom,
                    t.language
                ],
            )
            .context("cannot record the report's path")?;
        Ok(())
    }

    /// Where the report of `run_id` was last written, if payrun recorded it
    /// (runs made before this was recorded have none).
    pub fn report_target(&self, run_id: i64) -> Result<Option<ReportTarget>> {
        self.conn
            .query_row(
                "SELECT path, delimiter, bom, language FROM run_reports WHERE run_id = ?1",
                [run_id],
                |r| {
                    let delimiter: String = r.get(1)?;
                    Ok(ReportTarget {
                        path: PathBuf::from(r.get::<_, String>(0)?),
                        delimiter: delimiter.bytes().next().unwrap_or(b','),
                        bom: r.get(2)?,
                        language: r.get(3)?,
                    })
                },
            )
            .optional()
            .context("cannot read the report's path")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database made before `run_reports` existed opens, migrates, and
    /// simply has no recorded report.
    #[test]
    fn database_of_the_previous_schema_migrates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let conn = rusqlite::Connection::open(&path).unwrap();
            conn.execute_batch(super::super::schema::MIGRATIONS[0])
                .unwrap();
            conn.execute_batch(&format!(
                "PRAGMA user_version = 1; PRAGMA application_id = {};",
                super::super::APPLICATION_ID
            ))
            .unwrap();
        }
        let store = Sqlite::open(&path).unwrap();
        assert_eq!(store.report_target(1).unwrap(), None);
    }
}
