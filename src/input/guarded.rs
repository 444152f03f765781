//! Reading back a file payrun wrote (`failed.csv`, `rejected.csv`, told by
//! their last column, `output::written_by_payrun`): every cell of it went
//! through the formula guard (`output::safe_cell`), so every cell is read
//! through its exact inverse (`output::unguard`) — `'=1+1` is `=1+1`
//! again, `'+2250700000001` the account it was. Only such files: in any
//! other file a `'` is part of the cell, as written (docs/reports.md,
//! "Formula injection").

use super::{RawRow, RowSource};
use crate::output::unguard;
use anyhow::Result;
use csv::StringRecord;

/// A source of payrun's own whose cells are read without the guard.
pub(super) struct Unguarded {
    inner: Box<dyn RowSource>,
    header: RawRow,
    /// Cells whose guard was removed, for the notice.
    undone: u64,
}

impl Unguarded {
    /// Wraps `inner` when its header says payrun wrote it.
    pub(crate) fn wrap(inner: Box<dyn RowSource>) -> Box<dyn RowSource> {
        if !crate::output::written_by_payrun(inner.header().fields.iter()) {
            return inner;
        }
        let mut header = inner.header().clone();
        let undone = undo(&mut header.fields);
        Box::new(Unguarded {
            inner,
            header,
            undone,
        })
    }
}

/// Removes the guard from every cell of `fields`; how many had one.
fn undo(fields: &mut StringRecord) -> u64 {
    let guarded = fields.iter().filter(|c| unguard(c).is_some()).count() as u64;
    if guarded > 0 {
        *fields = fields.iter().map(|c| unguard(c).unwrap_or(c)).collect();
    }
    guarded
}

impl RowSource for Unguarded {
    fn header(&self) -> &RawRow {
        &self.header
    }

    fn next_row(&mut self, out: &mut RawRow) -> Result<bool> {
        let more = self.inner.next_row(out)?;
        if more {
            self.undone += undo(&mut out.fields);
        }
        Ok(more)
    }

    fn set_header(&mut self, mut header: RawRow) {
        self.undone += undo(&mut header.fields);
        self.inner.set_header(header.clone());
        self.header = header;
    }

    fn delimiter(&self) -> u8 {
        self.inner.delimiter()
    }

    fn notices(&self) -> Vec<super::InputNotice> {
        let mut notices = self.inner.notices();
        if self.undone > 0 {
            notices.push(super::InputNotice::GuardUndone {
                last_column: self
                    .header
                    .fields
                    .iter()
                    .next_back()
                    .unwrap_or_default()
                    .to_owned(),
                cells: self.undone,
            });
        }
        notices
    }

    fn sheets(&self) -> Vec<String> {
        self.inner.sheets()
    }

    fn hidden_rows(&self) -> Vec<u64> {
        self.inner.hidden_rows()
    }

    fn hidden_rows_unknown(&self) -> Option<String> {
        self.inner.hidden_rows_unknown()
    }
}

#[cfg(test)]
mod tests {
    use super::super::open;

    fn cells(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>, Vec<String>) {
        let mut s = open(path, None, None).unwrap();
        let header = s.header().fields.iter().map(String::from).collect();
        let mut rows = Vec::new();
        let mut row = super::RawRow::default();
        while s.next_row(&mut row).unwrap() {
            rows.push(row.fields.iter().map(String::from).collect());
        }
        (
            header,
            rows,
            s.notices().iter().map(ToString::to_string).collect(),
        )
    }

    /// Only a file payrun wrote (its last column says so) is read without
    /// the guard, every cell of it, header included; any other keeps its
    /// `'` as written.
    #[test]
    fn only_payruns_own_files_lose_the_guard() {
        let dir = tempfile::tempdir().unwrap();
        let body = "account_id;'=name;{last}\n'+2250700000001;''=1;'=1+1\n'abc;'-5;x\n";
        let own = dir.path().join("failed.csv");
        std::fs::write(&own, body.replace("{last}", "failure_reason")).unwrap();
        let (header, rows, notices) = cells(&own);
        assert_eq!(header, ["account_id", "=name", "failure_reason"]);
        assert_eq!(rows[0], ["+2250700000001", "'=1", "=1+1"]);
        assert_eq!(rows[1], ["'abc", "-5", "x"]);
        assert!(
            notices.iter().any(|n| n.to_string().contains("5 cell(s)")),
            "{notices:?}"
        );
        let theirs = dir.path().join("payroll.csv");
        std::fs::write(&theirs, body.replace("{last}", "note")).unwrap();
        let (header, rows, notices) = cells(&theirs);
        assert_eq!(header, ["account_id", "'=name", "note"]);
        assert_eq!(rows[0], ["'+2250700000001", "''=1", "'=1+1"]);
        assert!(notices.is_empty(), "{notices:?}");
    }
}
