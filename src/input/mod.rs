//! Streams rows out of an input file without loading it whole (README,
//! "Input files"): CSV files here and in `delimited`, spreadsheet workbooks in
//! `workbook`. Every source yields the same thing, a [`RawRow`]: the cells as
//! text, the row number the user sees in a spreadsheet program, and the
//! cells that held a spreadsheet error. Blank rows are skipped but counted,
//! so row numbers stay those of the spreadsheet.

mod budget;
mod delimited;
mod formats;
mod guarded;
pub mod header;
mod hidden;
mod notice;
mod text;
mod workbook;

pub use delimited::{CsvSource, detect_delimiter};
pub use notice::{InputError, InputNotice};
pub use workbook::{WorkbookSource, is_workbook};

use anyhow::Result;
use csv::StringRecord;
use std::path::Path;

/// One row as it came in.
#[derive(Debug, Clone, Default)]
pub struct RawRow {
    /// Row number as a spreadsheet program shows it (the first line is 1).
    pub row: u64,
    /// The cells, as text, in file order.
    pub fields: StringRecord,
    /// Cells that held a spreadsheet error (`#REF!`, `#DIV/0!`): field index
    /// and the error as the spreadsheet shows it. Always empty for CSV.
    pub cell_errors: Vec<(usize, String)>,
    /// Field indices of cells that were numbers in a workbook (their text
    /// is the number's digits): an identifier there may have lost leading
    /// zeros, digits past the 15th, or a phone number's `+`. Always empty
    /// for CSV.
    pub numeric: Vec<usize>,
    /// Of `numeric`, the cells whose number format pads them with zeros
    /// (`0000000000`): their text is the padded digits the sheet shows, so
    /// no leading zero was lost.
    pub padded: Vec<usize>,
}

/// A stream of rows: the header row first (read when the source is opened),
/// then the data rows one at a time into a reused [`RawRow`].
pub trait RowSource {
    /// The header row.
    fn header(&self) -> &RawRow;
    /// Makes `header`, a row read with [`RowSource::next_row`], the header
    /// row: the rows before it were a preamble (`header::open_at_header`).
    fn set_header(&mut self, header: RawRow);
    /// Reads the next non-blank row into `out`; `false` at the end.
    fn next_row(&mut self, out: &mut RawRow) -> Result<bool>;
    /// The field delimiter, to write `rejected.csv` the way the input was
    /// written (`;` files open correctly in the same spreadsheet program).
    fn delimiter(&self) -> u8 {
        b','
    }
    /// Things the user should know about how the file was read (its
    /// encoding was guessed, a hidden sheet was skipped).
    fn notices(&self) -> Vec<InputNotice> {
        Vec::new()
    }
    /// The worksheets of a workbook (empty for CSV), to list when the
    /// chosen sheet has no payroll headers.
    fn sheets(&self) -> Vec<String> {
        Vec::new()
    }
    /// The visible worksheets of a workbook, in order (empty for CSV).
    fn visible_sheets(&self) -> Vec<String> {
        Vec::new()
    }
    /// The worksheet read (`None` for CSV).
    fn sheet(&self) -> Option<String> {
        None
    }
    /// Data rows of a workbook hidden or filtered out in the spreadsheet
    /// program (spreadsheet numbers, ascending), which the author does not
    /// see; they are still yielded by [`RowSource::next_row`], for the
    /// caller to refuse or skip. Always empty for CSV.
    fn hidden_rows(&self) -> Vec<u64> {
        Vec::new()
    }
    /// The format (`xls`, `xlsb`) of a workbook whose hidden rows cannot be
    /// told from the file: [`RowSource::hidden_rows`] is then empty whether
    /// or not rows are hidden. `None` for CSV and the other formats.
    fn hidden_rows_unknown(&self) -> Option<String> {
        None
    }
}

/// True when every cell is empty or spaces: such a row is skipped.
pub fn is_blank(fields: &StringRecord) -> bool {
    fields.iter().all(|f| f.trim().is_empty())
}

/// Opens `path` as the right kind of source, by its extension: a workbook
/// for .xlsx, .xlsm, .xlsb, .xls and .ods, else CSV. `sheet` picks a
/// worksheet of a workbook (default: the first) and is refused for CSV;
/// `encoding` is the config's key for CSV files. A file payrun wrote
/// (`failed.csv`, `rejected.csv`) is read without its formula guard
/// (`guarded`).
pub fn open(
    path: &Path,
    sheet: Option<&str>,
    encoding: Option<&str>,
) -> Result<Box<dyn RowSource>> {
    Ok(guarded::Unguarded::wrap(open_as_written(
        path, sheet, encoding,
    )?))
}

fn open_as_written(
    path: &Path,
    sheet: Option<&str>,
    encoding: Option<&str>,
) -> Result<Box<dyn RowSource>> {
    if is_workbook(path) {
        return Ok(Box::new(WorkbookSource::open(path, sheet)?));
    }
    if let Some(sheet) = sheet {
        return Err(InputError::SheetOfCsv {
            path: path.display().to_string(),
            sheet: sheet.to_owned(),
        }
        .into());
    }
    Ok(Box::new(CsvSource::open(path, encoding)?))
}
