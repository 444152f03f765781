//! CSV input: UTF-8 with or without BOM, `,` or `;` (detected from the
//! header line), CRLF or LF, quoted fields holding delimiters, quotes and
//! line breaks. Streams through one reused record; the only thing held whole
//! is the first few kilobytes, to detect the delimiter and recognise files
//! that are not CSV at all.

use super::{RawRow, RowSource, is_blank};
use anyhow::{Context, Result, bail};
use csv::{ByteRecord, StringRecord};
use std::fs::File;
use std::io::{Chain, Cursor, Read};
use std::path::Path;

/// Bytes read ahead to detect the delimiter: a header line is far shorter,
/// and a read of this size is one system call.
const SNIFF_BYTES: u64 = 64 * 1024;
/// The CSV reader's buffer. Larger than the crate's 8 KiB default so a
/// million-row file is read in fewer, larger system calls.
const READ_BUFFER: usize = 256 * 1024;

type Input = Chain<Cursor<Vec<u8>>, File>;

pub struct CsvSource {
    reader: csv::Reader<Input>,
    delimiter: u8,
    header: RawRow,
    rows: RowCounter,
}

/// Turns the csv crate's line counts into spreadsheet row numbers. A
/// spreadsheet shows one row per record (a quoted field's line breaks stay
/// inside its cell) and one empty row per blank line, but the csv crate
/// skips blank lines silently. What it does tell is how many `\n` each read
/// consumed: the record's inner line breaks, the blank lines before it, and
/// its own terminator (with LF endings) or the `\n` finishing the previous
/// record's CRLF (with CRLF endings, where the `\r` ends a record). So the
/// blank lines before a record are that count minus the others.
struct RowCounter {
    /// Line endings are CRLF (judged from the header line).
    crlf: bool,
    /// The file's length, and whether its last byte is `\n`: a last record
    /// without a terminator consumes no `\n` of its own.
    len: u64,
    ends_with_newline: bool,
    records: u64,
    /// The spreadsheet row of the last record read.
    last_row: u64,
}

impl RowCounter {
    fn next(&mut self, start_line: u64, end_line: u64, end_byte: u64, inner: u64) -> u64 {
        let consumed = end_line.saturating_sub(start_line);
        let not_blank = inner
            + if self.crlf {
                u64::from(self.records > 0)
            } else {
                u64::from(end_byte < self.len || self.ends_with_newline)
            };
        self.records += 1;
        self.last_row += 1 + consumed.saturating_sub(not_blank);
        self.last_row
    }
}

impl CsvSource {
    pub fn open(path: &Path) -> Result<CsvSource> {
        let mut file =
            File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut head = Vec::new();
        file.by_ref()
            .take(SNIFF_BYTES)
            .read_to_end(&mut head)
            .with_context(|| format!("cannot read {}", path.display()))?;
        check_is_text(&head, path)?;
        let delimiter = detect_delimiter(&head);
        let crlf = header_line_is_crlf(&head);
        let len = file
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        let ends_with_newline = last_byte(path, &head, len)? == Some(b'\n');
        let reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(READ_BUFFER)
            .from_reader(Cursor::new(head).chain(file));
        let mut src = CsvSource {
            reader,
            delimiter,
            header: RawRow::default(),
            rows: RowCounter {
                crlf,
                len,
                ends_with_newline,
                records: 0,
                last_row: 0,
            },
        };
        let mut header = RawRow::default();
        if !src
            .next_row(&mut header)
            .with_context(|| format!("cannot read {}", path.display()))?
        {
            bail!(
                "{} is empty: expected a header row naming the columns, then one row per payout",
                path.display()
            );
        }
        src.header = header;
        Ok(src)
    }
}

impl RowSource for CsvSource {
    fn header(&self) -> &RawRow {
        &self.header
    }

    fn delimiter(&self) -> u8 {
        self.delimiter
    }

    fn next_row(&mut self, out: &mut RawRow) -> Result<bool> {
        out.cell_errors.clear();
        loop {
            let mut record = std::mem::take(&mut out.fields).into_byte_record();
            let more = self
                .reader
                .read_byte_record(&mut record)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if !more {
                out.fields = StringRecord::new();
                return Ok(false);
            }
            let start = record.position().map_or(1, |p| p.line());
            let end = self.reader.position();
            let inner: u64 = record
                .iter()
                .map(|f| f.iter().filter(|&&b| b == b'\n').count() as u64)
                .sum();
            let row = self.rows.next(start, end.line(), end.byte(), inner);
            out.row = row;
            out.fields = match StringRecord::from_byte_record(record) {
                Ok(fields) => fields,
                Err(e) => {
                    let field = e.utf8_error().field();
                    let valid = e.utf8_error().valid_up_to();
                    return Err(not_utf8(&e.into_byte_record(), field, valid, start, row));
                }
            };
            if !is_blank(&out.fields) {
                return Ok(true);
            }
        }
    }
}

/// The error for a record holding bytes that are not UTF-8: names the line,
/// shows the text before the bad byte, and says how to fix the file.
fn not_utf8(
    record: &ByteRecord,
    field: usize,
    valid: usize,
    start_line: u64,
    row: u64,
) -> anyhow::Error {
    let bytes = record.get(field).unwrap_or_default();
    let before = &bytes[..valid.min(bytes.len())];
    let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count() as u64;
    let line = start_line
        + (0..field)
            .map(|i| newlines(record.get(i).unwrap_or_default()))
            .sum::<u64>()
        + newlines(before);
    let bad = bytes.get(valid).copied().unwrap_or(0);
    let shown = String::from_utf8_lossy(&before[before.len().saturating_sub(30)..]);
    anyhow::anyhow!(
        "line {line} (row {row}, field {}) is not valid UTF-8: byte 0x{bad:02X} after {shown:?}. \
         The file was probably saved in a Windows or Latin-1 encoding (Excel's plain \"CSV\" format). \
         Save it again as \"CSV UTF-8\", or convert it, e.g. \
         `iconv -f WINDOWS-1252 -t UTF-8 payroll.csv > payroll-utf8.csv`",
        field + 1
    )
}

/// Refuses files that are clearly not UTF-8 CSV, before the CSV reader
/// turns them into confusing column errors.
fn check_is_text(head: &[u8], path: &Path) -> Result<()> {
    let name = path.display();
    if head.starts_with(b"PK\x03\x04") || head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        bail!(
            "{name} is a spreadsheet workbook, not CSV: give it its real extension (.xlsx, .xls or .ods) so it is read as a workbook"
        );
    }
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        bail!(
            "{name} is encoded as UTF-16 (Excel's \"Unicode text\"): save it as \"CSV UTF-8\", or convert it, e.g. `iconv -f UTF-16 -t UTF-8`"
        );
    }
    if head.contains(&0) {
        bail!(
            "{name} contains NUL bytes, so it is not a text CSV file (UTF-16 or a binary file?): save it as \"CSV UTF-8\""
        );
    }
    Ok(())
}

/// Whether the first line (outside quotes) ends with CRLF.
fn header_line_is_crlf(head: &[u8]) -> bool {
    let mut quoted = false;
    for (i, &b) in head.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => return i > 0 && head[i - 1] == b'\r',
            _ => {}
        }
    }
    false
}

/// The file's last byte, from `head` when the whole file fits in it.
fn last_byte(path: &Path, head: &[u8], len: u64) -> Result<Option<u8>> {
    use std::io::{Seek, SeekFrom};
    if len <= head.len() as u64 {
        return Ok(head.last().copied());
    }
    let mut f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut b = [0u8; 1];
    f.seek(SeekFrom::Start(len - 1))
        .and_then(|_| f.read_exact(&mut b))
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Some(b[0]))
}

/// `;` when the header line has more semicolons than commas outside quotes
/// (spreadsheet programs in locales with a decimal comma write `;`), else
/// `,`.
fn detect_delimiter(head: &[u8]) -> u8 {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let (mut commas, mut semicolons, mut quoted) = (0usize, 0usize, false);
    for &b in head {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => commas += 1,
            b';' if !quoted => semicolons += 1,
            b'\n' if !quoted => break,
            _ => {}
        }
    }
    if semicolons > commas { b';' } else { b',' }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn source(content: &[u8]) -> (tempfile::NamedTempFile, Result<CsvSource>) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f.flush().unwrap();
        let src = CsvSource::open(f.path());
        (f, src)
    }

    fn rows(src: &mut CsvSource) -> Vec<(u64, Vec<String>)> {
        let mut out = Vec::new();
        let mut row = RawRow::default();
        while src.next_row(&mut row).unwrap() {
            out.push((row.row, row.fields.iter().map(String::from).collect()));
        }
        out
    }

    #[test]
    fn delimiter_detection() {
        assert_eq!(detect_delimiter(b"a,b,c\n1;2,3"), b',');
        assert_eq!(detect_delimiter(b"a;b;c\n1,5;2;3"), b';');
        assert_eq!(detect_delimiter(b"\"a,x\";b;c\n"), b';');
        assert_eq!(detect_delimiter(b"single\n"), b',');
    }

    #[test]
    fn bom_crlf_semicolons() {
        let (_f, src) = source(b"\xEF\xBB\xBFaccount_id;amount\r\n123;10\r\n456;20\r\n");
        let mut src = src.unwrap();
        assert_eq!(src.delimiter(), b';');
        assert_eq!(&src.header().fields[0], "account_id");
        assert_eq!(src.header().row, 1);
        assert_eq!(
            rows(&mut src),
            vec![
                (2, vec!["123".into(), "10".into()]),
                (3, vec!["456".into(), "20".into()])
            ]
        );
    }

    /// A quoted field spanning lines is one spreadsheet row; blank lines and
    /// all-empty rows are skipped but still counted.
    #[test]
    fn row_numbers_are_spreadsheet_rows() {
        let lf = "a,b\n1,\"two\nlines, \"\"quoted\"\"\"\n\n3,x\n,\n5,\"x\r\ny\r\nz\"\n\n\n6,y";
        let crlf = lf.replace('\n', "\r\n");
        for (content, what) in [
            (lf.to_owned(), "LF"),
            (format!("{lf}\n"), "LF, final newline"),
            (crlf.clone(), "CRLF"),
            (format!("{crlf}\r\n"), "CRLF, final newline"),
            (format!("{crlf}\r\n\r\n"), "CRLF, final blank line"),
        ] {
            let (_f, src) = source(content.as_bytes());
            let mut src = src.unwrap();
            let got = rows(&mut src);
            let numbers: Vec<u64> = got.iter().map(|r| r.0).collect();
            assert_eq!(numbers, vec![2, 4, 6, 9], "{what}");
            assert!(got[0].1[1].starts_with("two"), "{what}");
        }
        assert_eq!(
            rows(
                &mut source(b"a,b\n1,\"two\nlines, \"\"quoted\"\"\"\n")
                    .1
                    .unwrap()
            )[0]
            .1[1],
            "two\nlines, \"quoted\""
        );
        // Last record preceded by blank lines and without a final newline.
        let (_f, src) = source(b"a\n1\n\n\n4");
        assert_eq!(
            rows(&mut src.unwrap()),
            vec![(2, vec!["1".into()]), (5, vec!["4".into()])]
        );
    }

    /// A file larger than the sniffed head still gets exact row numbers.
    #[test]
    fn row_numbers_in_a_large_file() {
        let mut content = String::from("a,b\n");
        for i in 0..20_000 {
            content.push_str(&format!("{i},\"x\ny\"\n"));
            if i % 1000 == 0 {
                content.push('\n');
            }
        }
        content.push_str("\n\nlast,row");
        let (_f, src) = source(content.as_bytes());
        let got = rows(&mut src.unwrap());
        assert_eq!(got.len(), 20_001);
        assert_eq!(got[1].0, 4);
        assert_eq!(got.last().unwrap().0, 2 + 20_000 + 20 + 2);
    }

    #[test]
    fn blank_lines_before_header() {
        let (_f, src) = source(b"\n\na,b\n1,2\n");
        let mut src = src.unwrap();
        assert_eq!(src.header().row, 3);
        assert_eq!(rows(&mut src)[0].0, 4);
    }

    #[test]
    fn windows_1252_names_the_line() {
        let (_f, src) = source(b"a,b\n1,ok\n2,\"multi\nline\"\n3,Andr\xE9\n");
        let mut src = src.unwrap();
        let mut row = RawRow::default();
        assert!(src.next_row(&mut row).unwrap());
        assert!(src.next_row(&mut row).unwrap());
        let err = src.next_row(&mut row).unwrap_err().to_string();
        assert!(err.contains("line 5 (row 4, field 2)"), "{err}");
        assert!(err.contains("0xE9") && err.contains("\"Andr\""), "{err}");
        assert!(err.contains("CSV UTF-8") && err.contains("iconv"), "{err}");
    }

    #[test]
    fn not_csv_files_refused() {
        let (_f, src) = source(b"");
        assert!(src.err().unwrap().to_string().contains("is empty"));
        let (_f, src) = source(b"\n\n  \n");
        assert!(src.err().unwrap().to_string().contains("is empty"));
        let (_f, src) = source(b"PK\x03\x04rest");
        assert!(
            src.err()
                .unwrap()
                .to_string()
                .contains("spreadsheet workbook")
        );
        let (_f, src) = source(b"\xFF\xFEa\0,\0");
        assert!(src.err().unwrap().to_string().contains("UTF-16"));
    }

    #[test]
    fn missing_file_is_an_error() {
        let err = CsvSource::open(Path::new("/nonexistent/payroll.csv"))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("cannot open /nonexistent/payroll.csv"));
    }
}
