//! CSV input: UTF-8 with or without BOM, `,` or `;` (detected from the
//! header line), CRLF or LF, quoted fields holding delimiters, quotes and
//! line breaks. Streams through one reused record; the only thing held whole
//! is the first few kilobytes, to detect the delimiter and recognise files
//! that are not CSV at all.

use super::text::{self, QuoteWatch};
use super::{RawRow, RowSource, is_blank};
use anyhow::{Context, Result};
use csv::{ByteRecord, StringRecord};
use std::fs::File;
use std::io::{Cursor, Read};
use std::path::Path;

/// Bytes read ahead to detect the delimiter: a header line is far shorter,
/// and a read of this size is one system call.
const SNIFF_BYTES: u64 = 64 * 1024;
/// The CSV reader's buffer. Larger than the crate's 8 KiB default so a
/// million-row file is read in fewer, larger system calls.
const READ_BUFFER: usize = 256 * 1024;

type Input = QuoteWatch<Box<dyn Read>>;

pub struct CsvSource {
    reader: csv::Reader<Input>,
    delimiter: u8,
    header: RawRow,
    rows: RowCounter,
    /// "read as Windows-1252" when the encoding was guessed.
    notice: Option<super::InputNotice>,
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
    /// Opens `path`, in `encoding` (the config's key; `None`: UTF-8, or
    /// Windows-1252 when the file is not valid UTF-8).
    pub fn open(path: &Path, encoding: Option<&str>) -> Result<CsvSource> {
        CsvSource::open_with(path, encoding, None)
    }

    /// [`CsvSource::open`] with the delimiter given (`None`: detected), for
    /// the header search (`super::header`) when the detected one finds no
    /// header row.
    pub fn open_with(
        path: &Path,
        encoding: Option<&str>,
        delimiter: Option<u8>,
    ) -> Result<CsvSource> {
        let mut file =
            File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut head = Vec::new();
        file.by_ref()
            .take(SNIFF_BYTES)
            .read_to_end(&mut head)
            .with_context(|| format!("cannot read {}", path.display()))?;
        check_is_workbook(&head, path)?;
        let (enc, notice) = text::choose(encoding, &head)?;
        let (head, len, ends_with_newline, input): (Vec<u8>, u64, bool, Box<dyn Read>) =
            if enc == encoding_rs::UTF_8 {
                let len = file
                    .metadata()
                    .with_context(|| format!("cannot read {}", path.display()))?
                    .len();
                let ends = last_byte(path, &head, len)? == Some(b'\n');
                (
                    head.clone(),
                    len,
                    ends,
                    Box::new(Cursor::new(head).chain(file)),
                )
            } else {
                // Other encodings: decoded whole (see text::decode_all).
                let mut bytes = head;
                file.read_to_end(&mut bytes)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let decoded = text::decode_all(&bytes, enc);
                let head = decoded[..decoded.len().min(SNIFF_BYTES as usize)].to_vec();
                let ends = decoded.last() == Some(&b'\n');
                (
                    head,
                    decoded.len() as u64,
                    ends,
                    Box::new(Cursor::new(decoded)),
                )
            };
        check_is_text(&head, path)?;
        let delimiter = delimiter.unwrap_or_else(|| detect_delimiter(&head));
        let crlf = header_line_is_crlf(&head);
        let reader = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(READ_BUFFER)
            .from_reader(QuoteWatch::new(input, delimiter));
        let mut src = CsvSource {
            reader,
            delimiter,
            notice,
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
            return Err(super::InputError::EmptyFile {
                path: path.display().to_string(),
            }
            .into());
        }
        src.header = header;
        Ok(src)
    }
}

impl RowSource for CsvSource {
    fn header(&self) -> &RawRow {
        &self.header
    }

    fn set_header(&mut self, header: RawRow) {
        self.header = header;
    }

    fn delimiter(&self) -> u8 {
        self.delimiter
    }

    fn notices(&self) -> Vec<super::InputNotice> {
        self.notice.iter().cloned().collect()
    }

    fn next_row(&mut self, out: &mut RawRow) -> Result<bool> {
        out.cell_errors.clear();
        out.numeric.clear();
        loop {
            let mut record = std::mem::take(&mut out.fields).into_byte_record();
            let more = self
                .reader
                .read_byte_record(&mut record)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if !more {
                out.fields = StringRecord::new();
                if let Some(line) = self.reader.get_ref().open_quote() {
                    return Err(super::InputError::UnclosedQuote { line }.into());
                }
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
    super::InputError::NotUtf8 {
        line,
        row,
        field: field + 1,
        byte: bad,
        before: shown.into_owned(),
    }
    .into()
}

/// Refuses workbooks given a CSV name, before the CSV reader turns them
/// into confusing column errors.
fn check_is_workbook(head: &[u8], path: &Path) -> Result<()> {
    if head.starts_with(b"PK\x03\x04") || head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(super::InputError::WorkbookAsCsv {
            path: path.display().to_string(),
        }
        .into());
    }
    Ok(())
}

/// Refuses decoded text that is clearly not CSV.
fn check_is_text(head: &[u8], path: &Path) -> Result<()> {
    if head.contains(&0) {
        return Err(super::InputError::NulBytes {
            path: path.display().to_string(),
        }
        .into());
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

/// `;` when the first line has more semicolons than commas outside quotes
/// (spreadsheet programs in locales with a decimal comma write `;`), else
/// `,`. A first line with neither (a title above the header row, such as
/// `Relevé des opérations`) says nothing: the first line that has one
/// decides.
pub fn detect_delimiter(head: &[u8]) -> u8 {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let (mut commas, mut semicolons, mut quoted) = (0usize, 0usize, false);
    for &b in head {
        match b {
            b'"' => quoted = !quoted,
            b',' if !quoted => commas += 1,
            b';' if !quoted => semicolons += 1,
            b'\n' | b'\r' if !quoted && commas + semicolons > 0 => break,
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
        source_in(content, None)
    }

    fn source_in(
        content: &[u8],
        encoding: Option<&str>,
    ) -> (tempfile::NamedTempFile, Result<CsvSource>) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f.flush().unwrap();
        let src = CsvSource::open(f.path(), encoding);
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
        // A title line without delimiters: the next line decides.
        assert_eq!(detect_delimiter(b"Releve\n\nRef;Montant\n1;2,5\n"), b';');
        assert_eq!(detect_delimiter(b"\xEF\xBB\xBFTitle\na,b\n"), b',');
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

    /// A file declared UTF-8 with a Windows-1252 byte names the line.
    #[test]
    fn windows_1252_names_the_line() {
        let (_f, src) = source_in(b"a,b\n1,ok\n2,\"multi\nline\"\n3,Andr\xE9\n", Some("utf-8"));
        let mut src = src.unwrap();
        let mut row = RawRow::default();
        assert!(src.next_row(&mut row).unwrap());
        assert!(src.next_row(&mut row).unwrap());
        let err = src.next_row(&mut row).unwrap_err().to_string();
        assert!(err.contains("line 5 (row 4, field 2)"), "{err}");
        assert!(err.contains("0xE9") && err.contains("\"Andr\""), "{err}");
        assert!(
            err.contains("CSV UTF-8") && err.contains("encoding = \"windows-1252\""),
            "{err}"
        );
    }

    /// Without a setting, a file that is not UTF-8 is read as Windows-1252
    /// with a notice; UTF-16 with a byte-order mark is read too.
    #[test]
    fn other_encodings_are_read() {
        let (_f, src) = source(b"nom;montant\r\nAndr\xE9;10\r\nCh\x9Cur;20\r\n");
        let mut src = src.unwrap();
        assert!(src.notices()[0].to_string().contains("Windows-1252"));
        assert_eq!(src.delimiter(), b';');
        let got = rows(&mut src);
        assert_eq!(got[0], (2, vec!["André".into(), "10".into()]));
        assert_eq!(got[1].1[0], "Chœur");
        let (_f, src) = source_in(b"a\nAndr\xE9\n", Some("latin-1"));
        let mut src = src.unwrap();
        assert!(src.notices().is_empty());
        assert_eq!(rows(&mut src)[0].1[0], "André");
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("a;b\r\nZoë;1\r\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let (_f, src) = source(&utf16);
        let mut src = src.unwrap();
        assert_eq!(rows(&mut src), vec![(2, vec!["Zoë".into(), "1".into()])]);
    }

    /// A quote never closed swallows every later line into one cell: an
    /// error naming the line where it opened, whichever column it is in.
    #[test]
    fn unclosed_quote_is_an_error() {
        let (_f, src) = source(b"a,b,c\n1,2,ok\n3,4,\"see memo\n5,6,x\n7,8,y\n");
        let mut src = src.unwrap();
        let mut row = RawRow::default();
        assert!(src.next_row(&mut row).unwrap());
        assert!(src.next_row(&mut row).unwrap());
        let err = src.next_row(&mut row).unwrap_err().to_string();
        assert!(err.starts_with("line 3: a double quote"), "{err}");
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
        let (_f, src) = source(b"a,\0b\n");
        assert!(src.err().unwrap().to_string().contains("NUL"));
    }

    #[test]
    fn missing_file_is_an_error() {
        let err = CsvSource::open(Path::new("/nonexistent/payroll.csv"), None)
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("cannot open /nonexistent/payroll.csv"));
    }
}
