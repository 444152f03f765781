//! `failed.csv` (docs/rerun.md, "Retry only what failed"): after a run with
//! failed payouts, their rows in the input's own columns and delimiter, plus
//! the reason, beside the report. Corrected and run as it is, it pays those
//! rows and nothing else; with no failed payout, a stale one is removed so
//! the file beside a report always describes that report.

use crate::input;
use crate::output::safe_cell;
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The column added after the input's own: why the row failed. Not a
/// column payrun reads, so the file runs as it is.
pub const REASON_COLUMN: &str = "failure_reason";

/// Writes `failed.csv` at `path` from `input` (the snapshot of the run's
/// file) for the rows in `failed` (row number, reason); removes it when
/// `failed` is empty. Returns the path when written.
pub fn write(
    path: &Path,
    input: &Path,
    sheet: Option<&str>,
    cfg: &crate::config::Config,
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
    // The header row as validation found it (below a preamble, if any).
    let (mut source, _) = crate::validate::header::open_payroll(input, sheet, cfg)?;
    let tmp = crate::report::temp_beside(path);
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut out = csv::WriterBuilder::new()
        .delimiter(source.delimiter())
        .flexible(true)
        .from_writer(file);
    let mut header: Vec<String> = source.header().fields.iter().map(str::to_string).collect();
    header.push(REASON_COLUMN.to_string());
    out.write_record(&header)?;
    let mut row = input::RawRow::default();
    while source.next_row(&mut row)? {
        if let Some(reason) = reasons.get(&row.row) {
            let mut cells: Vec<String> = row.fields.iter().map(str::to_string).collect();
            cells.resize(header.len() - 1, String::new());
            cells.push(safe_cell(reason).into_owned());
            out.write_record(&cells)?;
        }
    }
    let file = out
        .into_inner()
        .map_err(|e| anyhow::anyhow!("cannot write {}: {}", tmp.display(), e.error()))?;
    file.sync_all()
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    drop(file);
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
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
        let cfg = crate::config::Config::default();
        assert!(write(&out, &input, None, &cfg, &failed).unwrap().is_some());
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text,
            "Compte;Montant;failure_reason\nA;1;execute_failed: X\nC;3;'=bad\n"
        );
        // No failed rows: the stale file goes.
        assert!(write(&out, &input, None, &cfg, &[]).unwrap().is_none());
        assert!(!out.exists());
    }

    /// Below a title row, failed.csv starts at the header validation found,
    /// so it runs as it is.
    #[test]
    fn starts_at_the_header_row_below_a_title() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        let header = "account_id;amount;currency;payout_method_id;beneficiary_firstname;beneficiary_lastname";
        std::fs::write(
            &input,
            format!("Paie de novembre;;\n\n{header}\nA;1;XOF;m;Awa;K\nB;2;XOF;m;Bo;L\n"),
        )
        .unwrap();
        let out = dir.path().join("failed.csv");
        let cfg = crate::config::Config::default();
        write(&out, &input, None, &cfg, &[(5, "execute_failed: X".into())]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!("{header};failure_reason\nB;2;XOF;m;Bo;L;execute_failed: X\n")
        );
    }
}
