//! What `validate` and `run` tell the user about a file as a whole, as
//! data: the notices on how it was read ([`Notice`]), the reasons it could
//! not be validated at all ([`Refusal`]), and the lines of the summary
//! ([`Line`]). Their sentences are written per language in one place
//! (`crate::lang`, `notices_en` and `notices_fr`, each an exhaustive
//! `match`); `Display` and the JSON output give the English one.

use super::columns::ColumnsError;
use crate::input::InputNotice;
use rust_decimal::Decimal;
use std::fmt;

/// A notice of the summary: how the file was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// From the reader (`crate::input`).
    Input(InputNotice),
    /// An .xls/.xlsb workbook read with `--assume-no-hidden-rows`.
    HiddenNotLookedFor { ext: String },
    /// Rows hidden in the workbook left out by `--skip-hidden-rows`.
    HiddenLeftOut { count: usize },
    /// Repeated payees looked for in the first `max` valid rows only.
    PayeesCapped { max: u64 },
    /// A totals row used as a control total.
    TotalsRowUsed {
        row: u64,
        total: Decimal,
        currency: String,
    },
    /// An identifier column held number cells (`count` rows, the first
    /// `first`); `phone` for the phone columns.
    NumberColumn {
        header: String,
        count: u64,
        first: u64,
        phone: bool,
    },
}

impl Notice {
    /// The sentence in `language`.
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        crate::lang::notice(self, language)
    }
}

impl From<InputNotice> for Notice {
    fn from(n: InputNotice) -> Notice {
        Notice::Input(n)
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown_in(crate::lang::Language::En))
    }
}

/// In the JSON output, the English sentence (as before notices were data).
impl serde::Serialize for Notice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a file could not be validated at all (no row was looked at, or the
/// file ended wrongly).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// An .xls/.xlsb workbook, whose hidden rows payrun cannot see.
    HiddenUnknown { path: String, ext: String },
    /// `count` rows hidden or filtered out; `named` lists the first ones.
    HiddenRows {
        path: String,
        count: usize,
        named: Vec<u64>,
    },
    /// The header row does not give payrun's columns; `sheets` lists the
    /// workbook's worksheets when it has several.
    Columns {
        path: String,
        error: Box<ColumnsError>,
        sheets: Vec<String>,
    },
    /// A header row and nothing below it.
    NoDataRows { path: String },
    /// The config's `[skip]` rule names no header of the file.
    SkipColumn { column: String },
    /// The config's `[skip]` rule lists no values.
    SkipNoValues,
}

impl Refusal {
    /// The sentence in `language`.
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        crate::lang::refusal(self, language)
    }

    /// The error carrying the sentence in `language`.
    pub fn error(&self, language: crate::lang::Language) -> anyhow::Error {
        anyhow::Error::msg(self.shown_in(language))
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown_in(crate::lang::Language::En))
    }
}

/// Who left rows out of the payment (the summary's "Skipped by" line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkippedBy {
    Rule,
    Hidden,
    Both,
}

/// A line of `validate`'s text summary about the file as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line<'a> {
    Note(&'a Notice),
    /// Headers payrun does not read.
    NotRead(&'a [String]),
    /// Rows skipped: by whom, how many, the first ones, and whether more.
    Skipped {
        by: SkippedBy,
        count: u64,
        rows: &'a [u64],
        more: bool,
    },
    /// Valid rows repeating an earlier one: `[row, first]` pairs.
    Repeated {
        pairs: &'a [[u64; 2]],
        more: bool,
    },
}

impl Line<'_> {
    /// The line in `language`.
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        crate::lang::line(self, language)
    }
}
