//! `failed.csv` (docs/rerun.md, "Retry only what failed"): after a run with
//! failed payouts, their rows in the input's own columns and delimiter, plus
//! the reason, beside the report. Corrected and run as it is, it pays those
//! rows and nothing else; with no failed payout, a stale one is removed so
//! the file beside a report always describes that report.

use crate::input;
use crate::output::{AtomicFile, safe_cell};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The column added after the input's own: why the row failed. payrun
/// ignores it when reading, so the file runs as it is; as the last column
/// it also tells payrun the file is its own (`output::written_by_payrun`):
/// its cells went through the formula guard, undone when it is read.
pub const REASON_COLUMN: &str = crate::output::FAILED_REASON_COLUMN;

/// Writes `failed.csv` at `path` from `input` (the snapshot of the run's
/// file) for the rows in `failed` (row number, reason); removes it when
/// `failed` is empty. Returns the path when written. Every cell goes
/// through the formula guard (`output::safe_cell`).
pub fn write(
    path: &Path,
    input: &Path,
    sheet: Option<&str>,
    encoding: Option<&str>,
    failed: &[(u64, String)],
) -> Result<Option<PathBuf>> {
    if failed.is_empty() {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
        return Ok(None);
    }
    let reasons: HashMap<u64, &str> = failed.iter().map(|(r, m)| (*r, m.as_str())).collect();
    let mut source = input::open(input, sheet, encoding)?;
    let mut pending = AtomicFile::create(path)?;
    let tmp = pending.temp_path().to_path_buf();
    let mut out = csv::WriterBuilder::new()
        .delimiter(source.delimiter())
        .flexible(true)
        .from_writer(pending.file_mut());
    let guarded = |cells: &mut dyn Iterator<Item = &str>| -> Vec<String> {
        cells.map(|c| safe_cell(c).into_owned()).collect()
    };
    let mut header = guarded(&mut source.header().fields.iter());
    header.push(REASON_COLUMN.to_string());
    out.write_record(&header)?;
    let mut row = input::RawRow::default();
    while source.next_row(&mut row)? {
        if let Some(reason) = reasons.get(&row.row) {
            let mut cells = guarded(&mut row.fields.iter());
            cells.resize(header.len() - 1, String::new());
            cells.push(safe_cell(reason).into_owned());
            out.write_record(&cells)?;
        }
    }
    out.flush()
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    drop(out);
    pending.commit()?;
    Ok(Some(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_input_columns_and_delimiter_of_failed_rows_only() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "Compte;Montant\nA;1\nB;2\n\nC;3\n").unwrap();
        let out = dir.path().join("failed.csv");
        let failed = vec![
            (2, "execute_failed: X".to_string()),
            (5, "=bad".to_string()),
        ];
        assert!(write(&out, &input, None, None, &failed).unwrap().is_some());
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text,
            "Compte;Montant;failure_reason\nA;1;execute_failed: X\nC;3;'=bad\n"
        );
        // No failed rows: the stale file goes.
        assert!(write(&out, &input, None, None, &[]).unwrap().is_none());
        assert!(!out.exists());
    }
}
