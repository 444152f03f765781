//! A memory budget for .xlsx/.xlsm workbooks, checked before `calamine`
//! reads them: a file of a few kilobytes can claim a shared-string table of
//! quadrillions of entries, or hold two cells at A1 and XFD1048576 so that
//! the dense sheet `calamine` builds would need hundreds of gigabytes. Both
//! abort the process. Here the claims are bounded by the real content and
//! the sheet's span by a cell budget, and a workbook beyond them is
//! refused with a message. An .ods file does the same with repeat counts
//! (`table:number-rows-repeated="1000000"`): `calamine` expands them into
//! dense cells of every sheet when it opens the file, and its own limit
//! (100 million cells) still lets a 1 KB file take gigabytes, so the cells
//! it would build are counted first ([`check_ods`]).

use anyhow::{Context, Result, bail};
use quick_xml::events::{BytesStart, Event};
use std::io::{BufRead, Read};
use std::path::Path;

/// Cells of the dense rectangle spanned by a worksheet's cells: a million
/// rows of 20 columns, the largest payroll payrun is built for (about
/// 640 MB as `calamine` holds cells, 32 bytes each).
pub const MAX_CELLS: u64 = 20_000_000;
/// Smallest XML a shared string can take (`<si><t/></si>`, 13 bytes):
/// a table claiming more entries than its size allows is corrupt.
const MIN_SHARED_STRING_BYTES: u64 = 13;
/// Bytes of a part read to find the `<sst ...>` element's attributes.
const SST_HEAD: u64 = 4096;

/// Checks `path` (an .xlsx or .xlsm) against the budget.
pub fn check_xlsx(path: &Path) -> Result<()> {
    let name = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let Ok(mut zip) = zip::ZipArchive::new(std::io::BufReader::new(file)) else {
        // Not a zip: calamine says so in its own words.
        return Ok(());
    };
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i)?;
        let part = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        let size = entry.size();
        if part.eq_ignore_ascii_case("xl/sharedStrings.xml") {
            let mut head = Vec::new();
            (&mut entry).take(SST_HEAD).read_to_end(&mut head)?;
            // calamine reserves room for `uniqueCount` strings up front.
            if let Some(n) = attribute(&head, "uniqueCount=\"")
                && n > size / MIN_SHARED_STRING_BYTES + 1
            {
                bail!(
                    "{name} is damaged: its shared-string table claims {n} strings in {size} bytes; open it in a spreadsheet program and save it again, or export the sheet as CSV"
                );
            }
        } else if part.starts_with("xl/worksheets/") && part.ends_with(".xml") {
            let (rows, cols) = span(&mut entry)?;
            let cells = rows.saturating_mul(cols);
            if cells > MAX_CELLS {
                bail!(
                    "{name}: a worksheet ({part}) has cells spread over {rows} rows and {cols} columns, {cells} cells, more than payrun reads ({MAX_CELLS}); delete the stray cells far from the data (Ctrl+End shows the last one) or export the sheet as CSV"
                );
            }
        }
    }
    Ok(())
}

/// Cells `calamine` may build for all the sheets of an .ods file: it keeps
/// a value (32 bytes) and a formula text (24 bytes) per cell for every
/// sheet, so this is half of [`MAX_CELLS`] for about the same memory
/// (10 million cells, 500,000 rows of 20 columns: about 560 MB).
pub const MAX_ODS_CELLS: u64 = MAX_CELLS / 2;
/// Columns of a sheet (`calamine` caps a row there).
const ODS_MAX_COLUMNS: u64 = 16_384;

/// Checks `path` (an .ods) against the budget: the cells `calamine`
/// expands from the repeat counts of `content.xml`, before it does.
pub fn check_ods(path: &Path) -> Result<()> {
    let name = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {name}"))?;
    let Ok(mut zip) = zip::ZipArchive::new(std::io::BufReader::new(file)) else {
        return Ok(());
    };
    let Ok(content) = zip.by_name("content.xml") else {
        return Ok(());
    };
    // A damaged XML is calamine's to name; only the count matters here.
    let Ok(cells) = ods_cells(std::io::BufReader::new(content)) else {
        return Ok(());
    };
    if let Some(too_many) = cells.over(MAX_ODS_CELLS) {
        bail!(
            "{name}: its sheets' repeated rows and columns make {too_many} cells, more than payrun reads in an .ods file ({MAX_ODS_CELLS}); delete the empty formatted rows and columns between and below the data, or save the sheet as .xlsx or CSV"
        );
    }
    Ok(())
}

/// What `calamine` builds from an .ods `content.xml`.
#[derive(Debug, Default, PartialEq, Eq)]
struct OdsCells {
    /// Cells it stores while reading rows (each row element once,
    /// repeated columns expanded up to the last non-empty cell).
    read: u64,
    /// Cells of the dense rectangles it then builds, one per sheet, from
    /// the first to the last non-empty row and column, repeats expanded.
    dense: u64,
}

impl OdsCells {
    /// The larger count when it is above `max`.
    fn over(&self, max: u64) -> Option<u64> {
        let most = self.read.max(self.dense);
        (most > max).then_some(most)
    }
}

/// The value of numeric attribute `name` of `e` (a repeat count), at least 1.
fn repeat(e: &BytesStart<'_>, name: &str) -> u64 {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == name)
        .and_then(|a| a.value.trim().parse().ok())
        .unwrap_or(1u64)
        .max(1)
}

/// Counts the cells of every `table:table` of an .ods `content.xml`,
/// streaming. A cell holds something when it has a value type, a formula
/// or content; empty cells count only before a non-empty one in their row.
fn ods_cells(xml: impl BufRead) -> Result<OdsCells> {
    let mut out = OdsCells::default();
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    // Per sheet: rows so far, and the span of the non-empty cells.
    let mut rows = 0u64;
    let (mut top, mut bottom, mut left, mut right) = (u64::MAX, 0u64, u64::MAX, 0u64);
    // Per row: its repeat count, columns so far, cells stored, span.
    let (mut row_repeat, mut col, mut stored) = (1u64, 0u64, 0u64);
    let (mut first, mut last) = (u64::MAX, 0u64);
    loop {
        let event = reader.read_event_into(&mut buf)?;
        let empty = matches!(event, Event::Empty(_));
        match event {
            Event::Start(e) if e.name().as_ref() == "table:table" => {
                rows = 0;
                (top, bottom, left, right) = (u64::MAX, 0, u64::MAX, 0);
            }
            Event::End(e) if e.name().as_ref() == "table:table" && top < bottom => {
                let cells = (bottom - top).saturating_mul(right - left);
                out.dense = out.dense.saturating_add(cells);
            }
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == "table:table-row" => {
                row_repeat = repeat(&e, "table:number-rows-repeated");
                (col, stored, first, last) = (0, 0, u64::MAX, 0);
                if empty {
                    rows = rows.saturating_add(row_repeat);
                }
            }
            Event::End(e) if e.name().as_ref() == "table:table-row" => {
                out.read = out.read.saturating_add(stored.min(ODS_MAX_COLUMNS));
                if first < last {
                    top = top.min(rows);
                    bottom = rows.saturating_add(row_repeat);
                    left = left.min(first);
                    right = right.max(last.min(ODS_MAX_COLUMNS));
                }
                rows = rows.saturating_add(row_repeat);
            }
            Event::Start(e) | Event::Empty(e)
                if matches!(
                    e.name().as_ref(),
                    "table:table-cell" | "table:covered-table-cell"
                ) =>
            {
                let n = repeat(&e, "table:number-columns-repeated");
                let holds = !empty
                    || e.attributes()
                        .flatten()
                        .any(|a| matches!(a.key.as_ref(), "office:value-type" | "table:formula"));
                if holds {
                    first = first.min(col);
                    last = col.saturating_add(n);
                    stored = last;
                }
                col = col.saturating_add(n);
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(out)
}

/// The number in `attr"N"` within `head`.
fn attribute(head: &[u8], attr: &str) -> Option<u64> {
    let at = head
        .windows(attr.len())
        .position(|w| w == attr.as_bytes())?;
    let digits: Vec<u8> = head[at + attr.len()..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// Rows and columns of the rectangle spanned by the cells `<c r="B7"`
/// of a worksheet's XML, read as a stream.
fn span(xml: &mut impl Read) -> Result<(u64, u64)> {
    const TAG: &[u8] = b"<c r=\"";
    let (mut min_r, mut max_r, mut min_c, mut max_c) = (u64::MAX, 0u64, u64::MAX, 0u64);
    let mut buf = vec![0u8; 64 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = xml.read(&mut buf)?;
        if n == 0 {
            break;
        }
        carry.extend_from_slice(&buf[..n]);
        let mut i = 0;
        let mut consumed = 0;
        while let Some(p) = carry[i..].windows(TAG.len()).position(|w| w == TAG) {
            let start = i + p + TAG.len();
            let Some(len) = carry[start..].iter().position(|&b| b == b'"') else {
                break;
            };
            let r = &carry[start..start + len];
            let letters = r.iter().take_while(|b| b.is_ascii_alphabetic()).count();
            let col = r[..letters].iter().fold(0u64, |a, b| {
                a.saturating_mul(26) + u64::from(b.to_ascii_uppercase() - b'A' + 1)
            });
            let row = std::str::from_utf8(&r[letters..])
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0);
            min_r = min_r.min(row);
            max_r = max_r.max(row);
            min_c = min_c.min(col);
            max_c = max_c.max(col);
            i = start + len;
            consumed = i;
        }
        // Keep a tail that may hold a tag cut by the buffer's end.
        let keep_from = consumed.max(carry.len().saturating_sub(TAG.len() + 16));
        carry.drain(..keep_from);
    }
    if max_r == 0 {
        return Ok((0, 0));
    }
    Ok((max_r - min_r + 1, max_c.saturating_sub(min_c) + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_of_cells() {
        let xml = b"<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"C1\"/></row><row r=\"9\"><c r=\"B9\"/></row>";
        assert_eq!(span(&mut &xml[..]).unwrap(), (9, 3));
        let far = b"<c r=\"A1\"/><c r=\"XFD1048576\"/>";
        assert_eq!(span(&mut &far[..]).unwrap(), (1_048_576, 16_384));
        assert_eq!(span(&mut &b"<sheetData/>"[..]).unwrap(), (0, 0));
    }

    /// Tags cut by the read buffer's end are still found.
    #[test]
    fn span_across_buffers() {
        let mut xml = Vec::new();
        for r in 1..=20_000u32 {
            xml.extend_from_slice(format!("<row><c r=\"A{r}\"/><c r=\"D{r}\"/></row>").as_bytes());
        }
        assert_eq!(span(&mut &xml[..]).unwrap(), (20_000, 4));
    }

    /// Repeats count as `calamine` expands them: rows and columns up to
    /// the last non-empty cell, not the formatted emptiness around them.
    #[test]
    fn ods_cells_count_repeats() {
        let xml = br#"<office:spreadsheet><table:table table:name="A">
            <table:table-row table:number-rows-repeated="3"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>
            <table:table-row><table:table-cell office:value-type="string"><text:p>x</text:p></table:table-cell><table:table-cell table:number-columns-repeated="2"/><table:table-cell office:value-type="float" office:value="1"/><table:table-cell table:number-columns-repeated="1020"/></table:table-row>
            <table:table-row table:number-rows-repeated="5"><table:table-cell/></table:table-row>
            <table:table-row><table:table-cell table:number-columns-repeated="2"/><table:table-cell table:formula="of:=1"/></table:table-row>
            <table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>
            </table:table><table:table table:name="B"><table:table-row/></table:table></office:spreadsheet>"#;
        // Sheet A: rows 4 to 10 (7 rows), columns 1 to 4; the 1,048,000
        // formatted rows below and 1,020 columns right are not built.
        assert_eq!(
            ods_cells(&xml[..]).unwrap(),
            OdsCells {
                read: 4 + 3,
                dense: 7 * 4
            }
        );
        let bomb = br#"<table:table><table:table-row table:number-rows-repeated="1000000"><table:table-cell office:value-type="float" office:value="1" table:number-columns-repeated="1000"/></table:table-row></table:table>"#;
        let cells = ods_cells(&bomb[..]).unwrap();
        assert_eq!(
            cells,
            OdsCells {
                read: 1000,
                dense: 1_000_000_000
            }
        );
        assert_eq!(cells.over(MAX_ODS_CELLS), Some(1_000_000_000));
        assert_eq!(
            OdsCells {
                read: 10,
                dense: 10
            }
            .over(MAX_ODS_CELLS),
            None
        );
    }

    #[test]
    fn attributes() {
        let head = b"<sst xmlns=\"x\" count=\"12\" uniqueCount=\"4000000000000000\">";
        assert_eq!(
            attribute(head, "uniqueCount=\""),
            Some(4_000_000_000_000_000)
        );
        assert_eq!(attribute(head, " count=\""), Some(12));
    }
}
