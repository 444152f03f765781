//! Spreadsheet workbooks (.xlsx, .xlsm, .xlsb, .xls, .ods) through
//! `calamine`. Cells become the text a person means: a number holding an
//! account or phone number becomes its digits (never `2.2507E+12` or
//! `2250701000000.0`), a fractional number the decimal the spreadsheet
//! shows (15 significant digits, as Excel does, so a formula result of
//! 0.1 + 0.2 is `0.3`, never a float printout), dates as ISO 8601, formula
//! cells their cached value, and error cells (`#REF!`) are reported so the
//! row is rejected. Row numbers are the spreadsheet's own.
//!
//! `calamine` loads one worksheet into memory (every sheet of an .ods);
//! `budget` bounds what it may build before it opens the file.

use super::{RawRow, RowSource, is_blank};
use anyhow::{Context, Result, anyhow, bail};
use calamine::{Data, Range, Reader, SheetType, SheetVisible, Sheets, StyleRange, open_workbook};
use csv::StringRecord;
use std::path::Path;

/// Cells of a sheet up to which its formulas are read too, to name a
/// formula cell saved without its value: a million cells of formula text
/// is about 24 MB more, and a payroll sheet is far smaller.
const FORMULA_CELLS: usize = 1_000_000;

/// File extensions read as workbooks (lower case).
pub const EXTENSIONS: [&str; 5] = ["xlsx", "xlsm", "xlsb", "xls", "ods"];

/// Whether `path` names a workbook, by its extension.
pub fn is_workbook(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

pub struct WorkbookSource {
    /// Every sheet's name, for the message when the headers are not found.
    sheets: Vec<String>,
    /// The worksheet read.
    name: String,
    /// The visible worksheets' names, in order.
    visible: Vec<String>,
    notices: Vec<super::InputNotice>,
    range: Range<Data>,
    /// The sheet's formulas, for cells that hold one but no saved value
    /// (read for sheets up to [`FORMULA_CELLS`] cells).
    formulas: Option<Range<String>>,
    /// Absolute index (0-based) of the range's first row and column.
    first_row: u32,
    /// Index within the range of the next row to read.
    next: usize,
    header: RawRow,
    /// Data rows (spreadsheet numbers) hidden or filtered out, not blank.
    hidden: Vec<u64>,
    /// The extension, when the format does not say which rows are hidden.
    hidden_unknown: Option<String>,
    /// Cell styles (.xlsx/.xlsm), for zero-padded number formats.
    styles: Option<StyleRange>,
}

impl WorkbookSource {
    pub fn open(path: &Path, sheet: Option<&str>) -> Result<WorkbookSource> {
        let name = path.display();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let fail =
            |e: &dyn std::fmt::Display| anyhow!("cannot read {name} as a .{ext} workbook: {e}");
        if !path.exists() {
            bail!("cannot open {name}: no such file");
        }
        match ext.as_str() {
            "xlsx" | "xlsm" => super::budget::check_xlsx(path)?,
            "ods" => super::budget::check_ods(path)?,
            _ => {}
        }
        let mut book: Sheets<_> = match ext.as_str() {
            "xls" => Sheets::Xls(open_workbook(path).map_err(|e| fail(&e))?),
            "xlsb" => Sheets::Xlsb(open_workbook(path).map_err(|e| fail(&e))?),
            "ods" => Sheets::Ods(open_workbook(path).map_err(|e| fail(&e))?),
            _ => Sheets::Xlsx(open_workbook(path).map_err(|e| fail(&e))?),
        };
        let names = book.sheet_names();
        let sheet_name = match sheet {
            Some(wanted) => names
                .iter()
                .find(|n| n.as_str() == wanted)
                .or_else(|| {
                    names
                        .iter()
                        .find(|n| n.trim().eq_ignore_ascii_case(wanted.trim()))
                })
                .ok_or_else(|| super::InputError::NoSuchSheet {
                    path: name.to_string(),
                    wanted: wanted.to_owned(),
                    sheets: names.clone(),
                })?
                .clone(),
            // The first visible worksheet: a hidden first sheet holds
            // lookups or an old version, not what the author sees.
            None => book
                .sheets_metadata()
                .iter()
                .find(|s| s.visible == SheetVisible::Visible && s.typ == SheetType::WorkSheet)
                .map(|s| s.name.clone())
                .or_else(|| names.first().cloned())
                .ok_or_else(|| anyhow!("{name} has no worksheet"))?,
        };
        let mut notices = Vec::new();
        let hidden: Vec<String> = book
            .sheets_metadata()
            .iter()
            .take_while(|s| s.name != sheet_name)
            .filter(|s| s.visible != SheetVisible::Visible)
            .map(|s| s.name.clone())
            .collect();
        if sheet.is_none() && !hidden.is_empty() {
            notices.push(super::InputNotice::FirstVisibleSheet {
                sheet: sheet_name.clone(),
                hidden,
            });
        }
        // Read before the cells, so its working memory (16 bytes a styled
        // cell) is freed before the sheet's is taken. Unreadable styles
        // leave numbers unpadded, and the validator notes such columns.
        let styles = matches!(ext.as_str(), "xlsx" | "xlsm")
            .then(|| book.worksheet_style(&sheet_name).ok())
            .flatten();
        let range = book
            .worksheet_range(&sheet_name)
            .map_err(|e| fail(&e))
            .with_context(|| format!("worksheet {sheet_name:?}"))?;
        let cells = range.get_size().0.saturating_mul(range.get_size().1);
        let formulas = if cells <= FORMULA_CELLS {
            book.worksheet_formula(&sheet_name)
                .ok()
                .filter(|f| !f.is_empty())
        } else {
            None
        };
        let visible = book
            .sheets_metadata()
            .iter()
            .filter(|s| s.visible == SheetVisible::Visible && s.typ == SheetType::WorkSheet)
            .map(|s| s.name.clone())
            .collect();
        let mut src = WorkbookSource {
            formulas,
            sheets: names.clone(),
            name: sheet_name.clone(),
            visible,
            notices,
            first_row: range.start().map_or(0, |(r, _)| r),
            range,
            next: 0,
            header: RawRow::default(),
            hidden: Vec::new(),
            hidden_unknown: (!super::hidden::visibility_known(&ext)).then(|| ext.clone()),
            styles,
        };
        let mut header = RawRow::default();
        if !src.next_row(&mut header)? {
            return Err(super::InputError::EmptySheet {
                path: name.to_string(),
                sheet: sheet_name,
            }
            .into());
        }
        let first = u64::from(src.first_row) + 1;
        src.hidden = super::hidden::hidden_rows(path, &ext, &sheet_name)
            .with_context(|| format!("cannot read which rows of {name} are hidden"))?
            .into_iter()
            .filter(|&r| r > header.row && !src.blank(r - first))
            .collect();
        src.header = header;
        Ok(src)
    }
}

impl WorkbookSource {
    /// The width a zero-padded number format gives the cell at the
    /// absolute position `pos`, if it has one.
    fn pad_width(&self, pos: (u32, u32)) -> Option<usize> {
        let format = self.styles.as_ref()?.get(pos)?.number_format.as_ref()?;
        super::formats::zero_pad_width(&format.format_code)
    }

    /// Whether row `i` of the range has no text (past the range: yes).
    fn blank(&self, i: u64) -> bool {
        let Ok(i) = usize::try_from(i) else {
            return true;
        };
        (0..self.range.width()).all(|col| {
            self.range
                .get((i, col))
                .is_none_or(|c| cell_text(c).trim().is_empty())
        })
    }
}

impl RowSource for WorkbookSource {
    fn header(&self) -> &RawRow {
        &self.header
    }

    fn set_header(&mut self, header: RawRow) {
        // Hidden rows of the preamble are above the data: not rows to pay.
        self.hidden.retain(|&r| r > header.row);
        self.header = header;
    }

    fn notices(&self) -> Vec<super::InputNotice> {
        self.notices.clone()
    }

    fn sheets(&self) -> Vec<String> {
        self.sheets.clone()
    }

    fn visible_sheets(&self) -> Vec<String> {
        self.visible.clone()
    }

    fn sheet(&self) -> Option<String> {
        Some(self.name.clone())
    }

    fn hidden_rows(&self) -> Vec<u64> {
        self.hidden.clone()
    }

    fn hidden_rows_unknown(&self) -> Option<String> {
        self.hidden_unknown.clone()
    }

    fn next_row(&mut self, out: &mut RawRow) -> Result<bool> {
        let width = self.range.width();
        while self.next < self.range.height() {
            let i = self.next;
            self.next += 1;
            out.fields.clear();
            out.cell_errors.clear();
            out.numeric.clear();
            out.padded.clear();
            let start = self.range.start().unwrap_or((0, 0));
            for col in 0..width {
                let cell = self.range.get((i, col)).unwrap_or(&Data::Empty);
                if *cell == Data::Empty
                    && let Some(f) = self
                        .formulas
                        .as_ref()
                        .and_then(|f| f.get_value((start.0 + i as u32, start.1 + col as u32)))
                    && !f.is_empty()
                {
                    // A formula saved without its result (files written by
                    // programs that do not compute formulas).
                    out.cell_errors.push((col, format!("={f}")));
                    out.fields.push_field("");
                    continue;
                }
                match cell {
                    Data::Error(e) => {
                        out.cell_errors.push((col, e.to_string()));
                        out.fields.push_field(&e.to_string());
                    }
                    Data::Float(_) | Data::Int(_) => {
                        out.numeric.push(col);
                        let text = cell_text(cell);
                        let pos = (start.0 + i as u32, start.1 + col as u32);
                        match self
                            .pad_width(pos)
                            .and_then(|w| super::formats::pad(&text, w))
                        {
                            Some(padded) => {
                                out.padded.push(col);
                                out.fields.push_field(&padded);
                            }
                            None => out.fields.push_field(&text),
                        }
                    }
                    other => out.fields.push_field(&cell_text(other)),
                }
            }
            out.row = u64::from(self.first_row) + i as u64 + 1;
            if !is_blank(&out.fields) || !out.cell_errors.is_empty() {
                return Ok(true);
            }
        }
        out.fields = StringRecord::new();
        Ok(false)
    }
}

/// A cell as the text a person means by it.
pub fn cell_text(cell: &Data) -> String {
    match cell {
        Data::Empty => String::new(),
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Int(i) => i.to_string(),
        Data::Float(f) => number_text(*f),
        Data::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_owned(),
        Data::DateTime(dt) => {
            if dt.is_duration() {
                let secs = (dt.as_f64() * 86_400.0).round() as i64;
                format!(
                    "{}:{:02}:{:02}",
                    secs / 3600,
                    (secs % 3600).abs() / 60,
                    secs.abs() % 60
                )
            } else {
                let (y, mo, d, h, mi, s, _) = dt.to_ymd_hms_milli();
                if (h, mi, s) == (0, 0, 0) {
                    format!("{y:04}-{mo:02}-{d:02}")
                } else {
                    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
                }
            }
        }
        Data::Error(e) => e.to_string(),
    }
}

/// Significant digits a spreadsheet program shows and keeps for a number.
const SIGNIFICANT_DIGITS: usize = 15;

/// A number cell as plain decimal text with at most 15 significant digits:
/// integers as their digits, fractions without float noise, never an
/// exponent. The text is then validated like any CSV cell, so an amount is
/// still checked exactly against the currency's decimals.
pub fn number_text(f: f64) -> String {
    if !f.is_finite() {
        return f.to_string();
    }
    if f == 0.0 {
        return "0".to_owned();
    }
    // `{:.14e}` rounds to 15 significant digits: "3.00000000000000e-1".
    let sci = format!("{:.*e}", SIGNIFICANT_DIGITS - 1, f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let point = exp + 1; // digits before the decimal point
    let mut text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    if text.contains('.') {
        let trimmed = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(trimmed);
    }
    if f < 0.0 {
        text.insert(0, '-');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use calamine::{CellErrorType, ExcelDateTime, ExcelDateTimeType};
    use proptest::prelude::*;

    #[test]
    fn numbers_as_a_person_means_them() {
        assert_eq!(number_text(25000.0), "25000");
        assert_eq!(number_text(2250701000000.0), "2250701000000");
        assert_eq!(number_text(2250701020304.0), "2250701020304");
        assert_eq!(number_text(12.5), "12.5");
        assert_eq!(number_text(0.1 + 0.2), "0.3");
        assert_eq!(number_text(12.499999), "12.499999");
        assert_eq!(number_text(1234.56), "1234.56");
        assert_eq!(number_text(0.000123), "0.000123");
        assert_eq!(number_text(-5.0), "-5");
        assert_eq!(number_text(1e20), "100000000000000000000");
        assert_eq!(number_text(0.0), "0");
        assert_eq!(number_text(100.10), "100.1");
    }

    #[test]
    fn other_cells() {
        assert_eq!(cell_text(&Data::Int(42)), "42");
        assert_eq!(cell_text(&Data::Bool(true)), "TRUE");
        assert_eq!(cell_text(&Data::Empty), "");
        assert_eq!(cell_text(&Data::String("Zoë".into())), "Zoë");
        let date = ExcelDateTime::new(45747.0, ExcelDateTimeType::DateTime, false);
        assert_eq!(cell_text(&Data::DateTime(date)), "2025-03-31");
        let dt = ExcelDateTime::new(45747.5, ExcelDateTimeType::DateTime, false);
        assert_eq!(cell_text(&Data::DateTime(dt)), "2025-03-31 12:00:00");
        assert_eq!(cell_text(&Data::Error(CellErrorType::Ref)), "#REF!");
    }

    #[test]
    fn workbook_extensions() {
        assert!(is_workbook(Path::new("paie.XLSX")));
        assert!(is_workbook(Path::new("a/b.ods")));
        assert!(is_workbook(Path::new("b.xls")));
        assert!(!is_workbook(Path::new("b.csv")));
        assert!(!is_workbook(Path::new("xlsx")));
    }

    proptest! {
        /// Any amount typed with up to 15 significant digits comes back as
        /// the same decimal (the float closest to it prints as it).
        #[test]
        fn typed_decimals_round_trip(int in 0u64..100_000_000_000, frac in 0u32..1000, places in 0usize..=3) {
            let text = match places {
                0 => int.to_string(),
                p => format!("{int}.{:0p$}", frac % 10u32.pow(p as u32)),
            };
            let f: f64 = text.parse().unwrap();
            let expected = if text.contains('.') {
                text.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                text.clone()
            };
            let expected = if expected.is_empty() { "0".to_owned() } else { expected };
            prop_assert_eq!(number_text(f), expected);
        }
    }
}
