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
