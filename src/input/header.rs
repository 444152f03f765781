//! Finding the header row below a preamble (docs/input.md, "Columns"):
//! exports from a portal, a bank or a payroll program often open with a
//! title, an account name, a period and a blank line before the row that
//! names the columns. The caller says what a header row is (its required
//! column names, found by `validate::columns` or the statement's
//! vocabulary); the first of the first [`HEADER_SEARCH_ROWS`] non-blank rows
//! that is one becomes the header, and the rows before it are returned so
//! the caller names them in its output. A CSV file whose detected delimiter
//! finds no header is tried with the other one (a title line can hold a
//! comma in a `;` file). One search for payrolls and statements alike.

use super::{CsvSource, RawRow, RowSource, is_workbook};
use anyhow::Result;
use csv::StringRecord;
use std::path::Path;

/// Non-blank rows looked at for the header row: a preamble is a few lines;
/// a header further down is not the file's.
pub const HEADER_SEARCH_ROWS: usize = 30;

/// A row skipped before the header: its number and its non-empty cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub row: u64,
    pub cells: Vec<String>,
}

impl Skipped {
    fn of(raw: &RawRow) -> Skipped {
        Skipped {
            row: raw.row,
            cells: raw
                .fields
                .iter()
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// A source positioned after its header row, and the rows skipped before
/// it (empty when the header is the first row).
pub struct Opened {
    pub source: Box<dyn RowSource>,
    pub preamble: Vec<Skipped>,
}

/// Opens `path` as [`super::open`] does and finds its header row: the first
/// row `is_header` accepts within [`HEADER_SEARCH_ROWS`] non-blank rows.
/// `None` when no row is one: the caller opens the file again with
/// [`super::open`] to explain what its first row lacks.
pub fn open_at_header(
    path: &Path,
    sheet: Option<&str>,
    encoding: Option<&str>,
    is_header: &dyn Fn(&StringRecord) -> bool,
) -> Result<Option<Opened>> {
    let mut source = super::open(path, sheet, encoding)?;
    if let Some(preamble) = seek(source.as_mut(), is_header)? {
        return Ok(Some(Opened { source, preamble }));
    }
    if is_workbook(path) {
        return Ok(None);
    }
    let other = if source.delimiter() == b';' {
        b','
    } else {
        b';'
    };
    let mut source: Box<dyn RowSource> = super::guarded::Unguarded::wrap(Box::new(
        CsvSource::open_with(path, encoding, Some(other))?,
    ));
    Ok(seek(source.as_mut(), is_header)?.map(|preamble| Opened { source, preamble }))
}

/// Reads rows until one is a header; makes it the source's header and
/// returns the rows before it. `None` when none is within reach (the
/// source has then been read past them).
fn seek(
    source: &mut dyn RowSource,
    is_header: &dyn Fn(&StringRecord) -> bool,
) -> Result<Option<Vec<Skipped>>> {
    if is_header(&source.header().fields) {
        return Ok(Some(Vec::new()));
    }
    let mut preamble = vec![Skipped::of(source.header())];
    let mut raw = RawRow::default();
    while preamble.len() < HEADER_SEARCH_ROWS && source.next_row(&mut raw)? {
        if is_header(&raw.fields) {
            source.set_header(std::mem::take(&mut raw));
            return Ok(Some(preamble));
        }
        preamble.push(Skipped::of(&raw));
    }
    Ok(None)
}

/// The preamble as a sentence for the output: which rows were skipped and
/// what they said (`rows 1 to 3 before the header row (row 5) were skipped:
/// "Relevé des opérations", "Compte : Wave CI", "Période : novembre"`).
pub fn preamble_notice(preamble: &[Skipped], header_row: u64) -> Option<String> {
    preamble_skipped(preamble, header_row).map(|n| n.to_string())
}

/// The preamble as data ([`super::InputNotice::Preamble`]), explained in
/// the user's language by the caller.
pub fn preamble_skipped(preamble: &[Skipped], header_row: u64) -> Option<super::InputNotice> {
    let (first, last) = (preamble.first()?, preamble.last()?);
    let said: Vec<String> = preamble
        .iter()
        .filter(|s| !s.cells.is_empty())
        .take(5)
        .map(|s| crate::output::shown(&s.cells.join(" ")))
        .collect();
    Some(super::InputNotice::Preamble {
        first: first.row,
        last: last.row,
        header_row,
        said,
        more: preamble.len() > 5,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(
        content: &str,
        wanted: &'static [&'static str],
    ) -> (tempfile::TempDir, Option<Opened>) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.csv");
        std::fs::write(&p, content).unwrap();
        let is_header = |r: &StringRecord| wanted.iter().all(|w| r.iter().any(|c| c == *w));
        let o = open_at_header(&p, None, None, &is_header).unwrap();
        (dir, o)
    }

    fn rest(o: &mut Opened) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        let mut raw = RawRow::default();
        while o.source.next_row(&mut raw).unwrap() {
            out.push((raw.row, raw.fields.get(0).unwrap_or("").to_string()));
        }
        out
    }

    #[test]
    fn a_header_on_the_first_row_skips_nothing() {
        let (_d, o) = opened("Ref;Montant\nA;1\n", &["Ref", "Montant"]);
        let mut o = o.unwrap();
        assert!(o.preamble.is_empty());
        assert_eq!(o.source.header().row, 1);
        assert_eq!(rest(&mut o), vec![(2, "A".into())]);
    }

    #[test]
    fn the_header_is_found_below_a_preamble_and_the_preamble_is_named() {
        let (_d, o) = opened(
            "\u{feff}Relevé des opérations;;\nCompte : Wave CI;;\n\nRef;Montant;Statut\nA;25 000;OK\n",
            &["Ref", "Montant"],
        );
        let mut o = o.unwrap();
        assert_eq!(o.source.delimiter(), b';');
        assert_eq!(o.source.header().row, 4);
        assert_eq!(
            o.preamble.iter().map(|s| s.row).collect::<Vec<_>>(),
            vec![1, 2]
        );
        let notice = preamble_notice(&o.preamble, 4).unwrap();
        assert_eq!(
            notice,
            "rows 1 to 2 before the header row (row 4) were skipped, not read as data: \
             \"Relevé des opérations\", \"Compte : Wave CI\""
        );
        assert_eq!(rest(&mut o), vec![(5, "A".into())]);
    }

    /// A title with a comma in a `;` file: the delimiter detected from it
    /// finds no header, the other one does.
    #[test]
    fn a_comma_in_the_title_of_a_semicolon_file() {
        let (_d, o) = opened(
            "Export Wave, novembre 2026\nRef;Montant\nA;1,5\n",
            &["Ref", "Montant"],
        );
        let mut o = o.unwrap();
        assert_eq!(o.source.delimiter(), b';');
        assert_eq!(rest(&mut o), vec![(3, "A".into())]);
    }

    #[test]
    fn no_header_within_reach_is_none() {
        let mut text = String::new();
        for i in 0..HEADER_SEARCH_ROWS {
            text.push_str(&format!("line {i};x\n"));
        }
        text.push_str("Ref;Montant\nA;1\n");
        let (_d, o) = opened(&text, &["Ref", "Montant"]);
        assert!(o.is_none());
        let (_d, o) = opened("a;b\n1;2\n", &["Ref"]);
        assert!(o.is_none());
    }
}
