//! Output helpers shared by every writer of user-facing files and
//! messages: the rule that keeps untrusted text from becoming a spreadsheet
//! formula, its exact inverse for reading back the files payrun wrote
//! (`failed.csv`, `rejected.csv`), a value quoted the way a person reads
//! it, and the one way files are written ([`atomic`]: whole or not at all,
//! an existing file's permissions kept). A leaf.

pub mod atomic;

pub use atomic::{AtomicFile, temp_beside, write_atomically};

use std::borrow::Cow;

/// The column `failed.csv` adds after the input's own: why the row failed.
pub const FAILED_REASON_COLUMN: &str = "failure_reason";
/// The column `rejected.csv` adds after the input's own: why the row was
/// rejected.
pub const REJECTED_REASONS_COLUMN: &str = "reasons";

/// Whether a cell starts a formula in a spreadsheet program.
fn starts_formula(text: &str) -> bool {
    matches!(
        text.as_bytes().first(),
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r')
    )
}

/// Whether `text` is some `'` (none or more) before a formula start: the
/// cells [`safe_cell`] prefixes.
fn guarded_shape(text: &str) -> bool {
    starts_formula(text.trim_start_matches('\''))
}

/// Makes a cell taken from untrusted text safe to open in a spreadsheet
/// program: a leading `=`, `+`, `-`, `@`, tab or CR would start a formula
/// (CSV injection), so such a cell is prefixed with `'`, which spreadsheet
/// programs read as text. A cell that already is `'` before such a start
/// (`'=1`) gets one more (`''=1`), so that [`unguard`] gives back exactly
/// what was guarded, whatever it was.
pub fn safe_cell(value: &str) -> Cow<'_, str> {
    if guarded_shape(value) {
        Cow::Owned(format!("'{value}"))
    } else {
        Cow::Borrowed(value)
    }
}

/// The exact inverse of [`safe_cell`]: a cell that is one or more `'`
/// before a formula start loses one `'`; any other cell is as it is. Used
/// only on the files payrun wrote ([`written_by_payrun`]).
pub fn unguard(cell: &str) -> Option<&str> {
    let rest = cell.strip_prefix('\'')?;
    guarded_shape(rest).then_some(rest)
}

/// Whether a header row is one payrun wrote: its last column is the
/// reason column `failed.csv` or `rejected.csv` adds (docs/reports.md,
/// "Formula injection"). Their cells went through [`safe_cell`], and are
/// read back through [`unguard`].
pub fn written_by_payrun<'a>(header: impl DoubleEndedIterator<Item = &'a str>) -> bool {
    let mut header = header;
    header
        .next_back()
        .is_some_and(|last| last == FAILED_REASON_COLUMN || last == REJECTED_REASONS_COLUMN)
}

/// Characters of a value quoted in a message: enough to recognise it, short
/// enough that a pasted paragraph does not drown the explanation.
pub const SHOWN_CHARS: usize = 60;

/// A value quoted in a message as a person reads it on screen: between
/// double quotes, a no-break or narrow space shown as the space it looks
/// like (never a Rust escape such as `\u{a0}`), a line break or tab as one
/// space, other invisible characters (byte-order marks, zero-width spaces)
/// dropped, and at most [`SHOWN_CHARS`] characters.
pub fn shown(value: &str) -> String {
    shown_at_most(value, SHOWN_CHARS)
}

/// [`shown`] with at most `max` characters.
pub fn shown_at_most(value: &str, max: usize) -> String {
    let mut out = String::from("\"");
    let mut kept = 0;
    for c in value.chars() {
        if kept == max {
            out.push('…');
            break;
        }
        match c {
            '\u{feff}' | '\u{200b}'..='\u{200f}' | '\u{2060}' | '\u{ad}' => continue,
            c if c.is_whitespace() => out.push(' '),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
        kept += 1;
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_shown_as_a_person_reads_them() {
        assert_eq!(shown("496\u{a0}611"), "\"496 611\"");
        assert_eq!(shown("1\u{202f}250,50"), "\"1 250,50\"");
        assert_eq!(shown("\u{feff}Réf\tx\n"), "\"Réf x \"");
        assert_eq!(shown("Zoë \"Z\""), "\"Zoë \"Z\"\"");
        let long = "x".repeat(100);
        assert_eq!(shown(&long), format!("\"{}…\"", "x".repeat(SHOWN_CHARS)));
    }

    #[test]
    fn formula_cells_are_neutralised() {
        for bad in ["=1+1", "+33", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert!(safe_cell(bad).starts_with('\''), "{bad:?}");
        }
        assert_eq!(safe_cell("Zoë O'Neil"), "Zoë O'Neil");
        assert_eq!(safe_cell(""), "");
        assert_eq!(safe_cell("'"), "'");
        assert_eq!(safe_cell("'abc"), "'abc");
        assert_eq!(safe_cell("'=1"), "''=1");
        assert_eq!(safe_cell("''+1"), "'''+1");
    }

    /// `unguard` undoes `safe_cell` exactly, for every cell, and touches no
    /// cell `safe_cell` did not make.
    #[test]
    fn unguard_is_the_exact_inverse() {
        let cells = [
            "=1+1",
            "=cmd|' /C calc'!A0",
            "+Awa",
            "-5",
            "@x",
            "\tx",
            "\rx",
            "'=1",
            "''-2",
            "'",
            "''",
            "'abc",
            "",
            "1500",
            "+2250700000001",
            "Zoë",
            "'+",
        ];
        for c in cells {
            let guarded = safe_cell(c);
            assert_eq!(unguard(&guarded).unwrap_or(&guarded), c, "{c:?}");
        }
        for untouched in ["'abc", "'", "''", "abc", "", "'1500", "x'=1"] {
            assert_eq!(unguard(untouched), None, "{untouched:?}");
        }
        assert_eq!(unguard("'=1+1"), Some("=1+1"));
        assert_eq!(unguard("''=1"), Some("'=1"));
        assert_eq!(unguard("'+2250700000001"), Some("+2250700000001"));
    }

    #[test]
    fn payruns_own_files_are_told_by_their_last_column() {
        assert!(written_by_payrun(
            ["account_id", "amount", "failure_reason"].into_iter()
        ));
        assert!(written_by_payrun(["account_id", "reasons"].into_iter()));
        assert!(!written_by_payrun(["reasons", "account_id"].into_iter()));
        assert!(!written_by_payrun(["account_id", "Reasons"].into_iter()));
        assert!(!written_by_payrun(std::iter::empty()));
    }
}
