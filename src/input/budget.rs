//! A memory budget for .xlsx/.xlsm workbooks, checked before `calamine`
//! reads them: a file of a few kilobytes can claim a shared-string table of
//! quadrillions of entries, or hold two cells at A1 and XFD1048576 so that
//! the dense sheet `calamine` builds would need hundreds of gigabytes. Both
//! abort the process. Here the claims are bounded by the real content and
//! the sheet's span by a cell budget, and a workbook beyond them is
//! refused with a message. (.ods repeats are capped by `calamine` itself.)

use anyhow::{Context, Result, bail};
use std::io::Read;
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
