//! What the user should know about how a file was read (its encoding was
//! guessed, a hidden sheet was passed over, rows above the header were
//! skipped), as data. The sentences are written per language in one place
//! (`crate::lang`, `notices_en` and `notices_fr`); `Display` gives the
//! English one, which the JSON output and the logs carry.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputNotice {
    /// Not valid UTF-8, so read as Windows-1252.
    Windows1252,
    /// A file payrun wrote: `cells` cells read without their formula guard.
    GuardUndone { last_column: String, cells: u64 },
    /// The first visible worksheet was read; `hidden` ones come before it.
    FirstVisibleSheet { sheet: String, hidden: Vec<String> },
    /// Rows `first` to `last` above the header row were skipped; `said`
    /// quotes the first non-empty ones, `more` when some are not quoted.
    Preamble {
        first: u64,
        last: u64,
        header_row: u64,
        said: Vec<String>,
        more: bool,
    },
}

impl fmt::Display for InputNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::lang::input_notice(self, crate::lang::Language::En))
    }
}

/// Why the reader cannot read a file at all, as data (the sentence per
/// language in `crate::lang`; `Display`: English). Errors of the system
/// or of the workbook libraries stay as they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// A CSV file without even a header row.
    EmptyFile { path: String },
    /// A worksheet without even a header row.
    EmptySheet { path: String, sheet: String },
    /// `--sheet` names no worksheet of the workbook.
    NoSuchSheet {
        path: String,
        wanted: String,
        sheets: Vec<String>,
    },
    /// `--sheet` given for a CSV file.
    SheetOfCsv { path: String, sheet: String },
    /// A workbook under a CSV name.
    WorkbookAsCsv { path: String },
    /// NUL bytes: UTF-16 without a byte-order mark, or a binary file.
    NulBytes { path: String },
    /// A quote opened on `line` and never closed.
    UnclosedQuote { line: u64 },
    /// Bytes that are not UTF-8 (with `encoding = "utf-8"`): the line,
    /// row and field (1-based), the byte and the text before it.
    NotUtf8 {
        line: u64,
        row: u64,
        field: usize,
        byte: u8,
        before: String,
    },
}

impl InputError {
    /// The sentence in `language`.
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        crate::lang::input_error(self, language)
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown_in(crate::lang::Language::En))
    }
}

impl std::error::Error for InputError {}
