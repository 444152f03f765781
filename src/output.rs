//! Output helpers shared by every writer of user-facing files: the rule
//! that keeps untrusted text from becoming a spreadsheet formula. A leaf.

use std::borrow::Cow;

/// Makes a cell taken from untrusted text safe to open in a spreadsheet
/// program: a leading `=`, `+`, `-`, `@`, tab or CR would start a formula
/// (CSV injection), so such a cell is prefixed with `'`, which spreadsheet
/// programs show as text and do not display.
pub fn safe_cell(value: &str) -> Cow<'_, str> {
    match value.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => Cow::Owned(format!("'{value}")),
        _ => Cow::Borrowed(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_neutralised() {
        for bad in ["=1+1", "+33", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert!(safe_cell(bad).starts_with('\''), "{bad:?}");
        }
        assert_eq!(safe_cell("Zoë O'Neil"), "Zoë O'Neil");
        assert_eq!(safe_cell(""), "");
    }
}
