//! `failed.csv` (docs/rerun.md, "Retry only what failed"): after a run with
//! failed payouts, their rows in the input's own columns and delimiter, plus
//! the reason, beside the report. Each row names its failed payout by the
//! transaction id it was first paid under (its `transaction_id` cell, or a
//! `transaction_id` column added when the input has none), so running the
//! file re-pays exactly those payouts under their linked ids — never a
//! paid sibling with the same account and amount. With no failed payout, a
//! stale one is removed so the file beside a report always describes that
//! report.

use crate::config::Config;
use crate::input;
use crate::output::{AtomicFile, safe_cell};
use crate::store::FailedRow;
use crate::validate::columns::{Col, Columns};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The column added after the input's own: why the row failed. Not a
/// column payrun reads, so the file runs as it is; its presence tells
/// payrun the file is a `failed.csv`, whose rows must name failed payouts;
/// as the last column it also tells that payrun wrote it
/// (`output::written_by_payrun`): its cells went through the formula guard,
/// undone when it is read.
pub const REASON_COLUMN: &str = crate::output::FAILED_REASON_COLUMN;

/// Writes `failed.csv` at `path` from `input` (the snapshot of the run's
/// file) for the rows in `failed`; removes it when `failed` is empty.
/// `cfg` gives the config's `[columns]` table (to find a transaction id
/// column under another header) and what validation reads the header row
/// with (below a preamble, `validate::header`). Returns the path when
/// written. Every cell goes through the formula guard
/// (`output::safe_cell`); the file is written whole or not at all.
pub fn write(
    path: &Path,
    input: &Path,
    sheet: Option<&str>,
    cfg: &Config,
    failed: &[FailedRow],
) -> Result<Option<PathBuf>> {
    let mapping = &cfg.columns;
    if failed.is_empty() {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
        return Ok(None);
    }
    let by_row: HashMap<u64, &FailedRow> = failed.iter().map(|f| (f.row, f)).collect();
    // The header row as validation found it (below a preamble, if any).
    let (mut source, _) = crate::validate::header::open_payroll(input, sheet, cfg)?;
    let mut pending = AtomicFile::create(path)?;
    let tmp = pending.temp_path().to_path_buf();
    let mut out = csv::WriterBuilder::new()
        .delimiter(source.delimiter())
        .flexible(true)
        .from_writer(pending.file_mut());
    let mut header: Vec<String> = source.header().fields.iter().map(str::to_string).collect();
    let width = header.len();
    // Every column optional: only where the transaction id sits matters.
    let id_column = Columns::resolve(header.iter().map(String::as_str), mapping, &Col::ALL)
        .ok()
        .and_then(|c| c.index(Col::TransactionId));
    if id_column.is_none() {
        header.push(Col::TransactionId.name().to_string());
    }
    header.push(REASON_COLUMN.to_string());
    out.write_record(header.iter().map(|c| safe_cell(c).into_owned()))?;
    let mut row = input::RawRow::default();
    while source.next_row(&mut row)? {
        if let Some(f) = by_row.get(&row.row) {
            let mut cells: Vec<String> = row.fields.iter().map(str::to_string).collect();
            cells.resize(width, String::new());
            match id_column {
                Some(i) if cells[i].trim().is_empty() => cells[i] = f.transaction_id.clone(),
                Some(_) => {}
                None => cells.push(f.transaction_id.clone()),
            }
            cells.push(f.reason.clone());
            out.write_record(cells.iter().map(|c| safe_cell(c).into_owned()))?;
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

    fn failed(row: u64, reason: &str, id: &str) -> FailedRow {
        FailedRow {
            row,
            reason: reason.into(),
            transaction_id: id.into(),
        }
    }

    #[test]
    fn keeps_the_input_columns_and_delimiter_of_failed_rows_only() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "Compte;Montant\nA;1\nB;2\n\nC;3\n").unwrap();
        let out = dir.path().join("failed.csv");
        let rows = vec![
            failed(2, "execute_failed: X", "pr-2026-11-aaa"),
            failed(5, "=bad", "pr-2026-11-ccc"),
        ];
        let cfg = Config::default();
        assert!(write(&out, &input, None, &cfg, &rows).unwrap().is_some());
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text,
            "Compte;Montant;transaction_id;failure_reason\n\
             A;1;pr-2026-11-aaa;execute_failed: X\nC;3;pr-2026-11-ccc;'=bad\n"
        );
        // No failed rows: the stale file goes.
        assert!(write(&out, &input, None, &cfg, &[]).unwrap().is_none());
        assert!(!out.exists());
    }

    /// A file with its own transaction id column (under a mapped header)
    /// keeps its ids and gets the failed payout's where the cell is empty.
    #[test]
    fn an_existing_id_column_is_filled_not_added() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        std::fs::write(&input, "Réf,Compte,Montant\nR-1,A,1\n,B,2\n").unwrap();
        let out = dir.path().join("failed.csv");
        let rows = vec![failed(2, "x", "R-1"), failed(3, "y", "pr-2026-11-bbb")];
        let cfg = Config {
            columns: std::collections::BTreeMap::from([(
                "Réf".to_string(),
                "transaction_id".to_string(),
            )]),
            ..Config::default()
        };
        write(&out, &input, None, &cfg, &rows).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text,
            "Réf,Compte,Montant,failure_reason\nR-1,A,1,x\npr-2026-11-bbb,B,2,y\n"
        );
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
        let rows = vec![failed(5, "execute_failed: X", "pr-2026-11-bbb")];
        write(&out, &input, None, &Config::default(), &rows).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            format!(
                "{header};transaction_id;failure_reason\nB;2;XOF;m;Bo;L;pr-2026-11-bbb;execute_failed: X\n"
            )
        );
    }

    /// Every cell goes through the formula guard, the input's own cells
    /// and header included; payrun reads the file back as the input was.
    #[test]
    fn every_cell_is_guarded_and_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.csv");
        let original = "@Compte,Montant,Nom\n+2250700000001,1,=1+1\n'=x,2,-Awa\n";
        std::fs::write(&input, original).unwrap();
        let out = dir.path().join("failed.csv");
        let rows = vec![failed(2, "+why", "t-1"), failed(3, "x", "t-2")];
        write(&out, &input, None, &Config::default(), &rows).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            text,
            "'@Compte,Montant,Nom,transaction_id,failure_reason\n\
             '+2250700000001,1,'=1+1,t-1,'+why\n''=x,2,'-Awa,t-2,x\n"
        );
        let mut back = input::open(&out, None, None).unwrap();
        let header: Vec<&str> = back.header().fields.iter().collect();
        assert_eq!(header[0], "@Compte");
        let mut row = input::RawRow::default();
        let mut got = Vec::new();
        while back.next_row(&mut row).unwrap() {
            got.push(
                row.fields
                    .iter()
                    .take(3)
                    .map(String::from)
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(got, [["+2250700000001", "1", "=1+1"], ["'=x", "2", "-Awa"]]);
    }
}
