//! Output helpers shared by every writer of user-facing files and
//! messages: the rule that keeps untrusted text from becoming a spreadsheet
//! formula, and a value quoted the way a person reads it. A leaf.

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
    }
}
