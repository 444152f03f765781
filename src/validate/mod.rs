//! Validation of a payroll file (the `payrun validate` command is
//! `cmd::validate`). [`scan`] streams the input (`crate::input`), turns each raw
//! row into a typed `Payout` or a list of field errors (`row`, using the
//! rules in `amount` and `number`, `fields` and the header matching in
//! `columns`), applies the file-level rules of `sheet` (totals row, skip
//! rule), writes the rejected rows to `rejected.csv` when asked, and
//! returns a summary with the notes on how the file was read. The engine
//! (`payrun run`) calls the same [`scan`], so what `validate` accepts is
//! exactly what `run` would pay.

pub mod account;
pub mod amount;
pub mod columns;
pub mod fields;
pub mod header;
mod ids;
pub mod number;
mod numeric;
pub mod phone;
mod row;
mod sheet;

pub use row::Validator;
use sheet::{Totals, skip_rule, totals_row};

use crate::config::Config;
use crate::input::RawRow;
use crate::output::safe_cell;
use crate::payout::Payout;
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::config::SkipRule;

#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Worksheet of a workbook (default: the first).
    pub sheet: Option<String>,
    /// Where to write the rejected rows with their reasons.
    pub rejected_path: Option<PathBuf>,
    /// Leave out (as skipped) the rows of a workbook hidden or filtered out
    /// in the spreadsheet program, instead of refusing the file.
    pub skip_hidden_rows: bool,
    /// Read a workbook whose hidden rows cannot be detected (.xls, .xlsb),
    /// the user having checked that none is hidden; refused otherwise.
    pub assume_no_hidden_rows: bool,
    /// The language of the reasons written to the rejected file.
    pub language: crate::lang::Language,
}

/// Hidden rows named in the refusal; the rest are counted.
const MAX_HIDDEN_NAMED: usize = 20;

/// One field error. Display gives the whole sentence: row, column, value,
/// what is wrong and how to fix it. A row-level error (a misaligned row) has
/// an empty `column`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub row: u64,
    pub column: String,
    pub value: String,
    pub message: String,
}

/// Characters of a value shown in a message: enough to recognise it, short
/// enough that a pasted paragraph does not drown the explanation.
const SHOWN_VALUE_CHARS: usize = 60;

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column.is_empty() {
            return write!(f, "row {}: {}", self.row, self.message);
        }
        // As a person reads it: `"496 611"`, never `"496\u{a0}611"`.
        write!(
            f,
            "row {}, column {}, value {}: {}",
            self.row,
            self.column,
            crate::output::shown_at_most(&self.value, SHOWN_VALUE_CHARS),
            self.message
        )
    }
}

impl FieldError {
    /// The sentence in `language`: the row, column and value framed in
    /// it; the message itself is the rule's own (English still for most
    /// rules).
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        let t = language.text();
        if self.column.is_empty() {
            return (t.row_error)(self.row, &self.message);
        }
        (t.field_error)(
            self.row,
            &self.column,
            &crate::output::shown_at_most(&self.value, SHOWN_VALUE_CHARS),
            &self.message,
        )
    }
}

/// A rejected row: its cells as they came in and why it was refused.
#[derive(Debug, Clone)]
pub struct Rejected {
    pub row: u64,
    pub raw: Vec<String>,
    pub errors: Vec<FieldError>,
}

/// What `scan` hands its caller for each row. The valid payout is moved to
/// the caller once per row and never stored in this enum, so its size
/// difference with the rejected variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum RowOutcome<'a> {
    Valid(Payout),
    Rejected(&'a Rejected),
}

/// Count and total of the valid rows of one currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CurrencyTotal {
    pub count: u64,
    /// In the currency's major unit, with its ISO 4217 decimals.
    pub total: Decimal,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Data rows read (blank rows are not counted).
    pub rows: u64,
    pub valid: u64,
    pub rejected: u64,
    /// Rows left out by the config's `[skip]` rule: neither paid nor
    /// rejected. `rows = valid + rejected + skipped`.
    pub skipped: u64,
    /// The first [`MAX_LISTED`] skipped rows.
    pub skipped_rows: Vec<u64>,
    /// Of `skipped`, the rows hidden or filtered out in the workbook, left
    /// out by `--skip-hidden-rows`.
    pub skipped_hidden: u64,
    /// Per currency, over the valid rows only.
    pub currencies: BTreeMap<String, CurrencyTotal>,
    /// Headers of the file payrun does not read, in file order.
    pub unused_columns: Vec<String>,
    /// Valid rows paying the same account the same amount in the same
    /// currency as an earlier row: often a row pasted twice.
    pub repeated: u64,
    /// The first [`MAX_LISTED`] of them: `[row, first row]`.
    pub repeated_rows: Vec<[u64; 2]>,
    /// How the file was read, as sentences ("read as Windows-1252").
    pub notices: Vec<String>,
    /// A totals row at the bottom of the sheet, used as a control total
    /// (never paid): its row and amount.
    pub control_total: Option<ControlTotal>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ControlTotal {
    pub row: u64,
    pub currency: String,
    pub total: Decimal,
}

/// Rows listed by number in the summary; the rest are counted.
pub const MAX_LISTED: usize = 100;

/// Streams the file (CSV, or a workbook), validates each row, calls `on_row`
/// for each, writes the rejected file when asked, and returns the summary.
/// `Err` means the file could not be validated at all (unreadable, not
/// UTF-8, missing required column, no data rows, ...); the rejected file is
/// then not written.
pub fn scan(
    path: &Path,
    cfg: &Config,
    opts: &ScanOptions,
    mut on_row: impl FnMut(RowOutcome<'_>) -> Result<()>,
) -> Result<Summary> {
    let (mut source, preamble) = header::open_payroll(path, opts.sheet.as_deref(), cfg)?;
    let unknown = source.hidden_rows_unknown();
    if let Some(ext) = &unknown
        && !opts.assume_no_hidden_rows
    {
        anyhow::bail!(
            "{}: payrun cannot tell which rows of a .{ext} workbook are hidden or filtered out, so it would pay rows nobody sees: save the workbook as .xlsx (or .ods) and give that file, or, after checking in the spreadsheet program that no row is hidden or filtered, pass --assume-no-hidden-rows",
            path.display()
        );
    }
    let hidden = source.hidden_rows();
    if !hidden.is_empty() && !opts.skip_hidden_rows {
        let named: Vec<String> = hidden
            .iter()
            .take(MAX_HIDDEN_NAMED)
            .map(u64::to_string)
            .collect();
        let more = if hidden.len() > MAX_HIDDEN_NAMED {
            format!(" and {} more", hidden.len() - MAX_HIDDEN_NAMED)
        } else {
            String::new()
        };
        anyhow::bail!(
            "{}: {} row{} hidden or filtered out in the spreadsheet, so nobody sees {}: row{} {}{more}; unhide them, delete them, or pass --skip-hidden-rows to leave them out",
            path.display(),
            hidden.len(),
            if hidden.len() == 1 { " is" } else { "s are" },
            if hidden.len() == 1 { "it" } else { "them" },
            if hidden.len() == 1 { "" } else { "s" },
            named.join(", "),
        );
    }
    let header = source.header();
    let optional = header::optional_columns(cfg);
    let sheets = source.sheets();
    let columns = columns::Columns::resolve(header.fields.iter(), &cfg.columns, &optional)
        .map_err(|e| {
            if sheets.len() > 1 {
                let list: Vec<String> = sheets.iter().map(|s| columns::excerpt(s)).collect();
                anyhow::anyhow!(
                    "{e}. This workbook's worksheets are {}: if the payroll is on another one, choose it with --sheet NAME",
                    list.join(", ")
                )
            } else {
                e
            }
        })
        .with_context(|| format!("cannot validate {}", path.display()))?;
    let skip = match &cfg.skip {
        Some(rule) => Some(skip_rule(rule, header)?),
        None => None,
    };
    let unused_columns: Vec<String> = columns.unused().iter().map(|(_, h)| h.clone()).collect();
    let skip_index = skip.as_ref().map(|(i, _)| *i);
    let mut validator = Validator::new(columns, header.fields.len(), cfg, skip_index)?;
    let mut rejected_out = match &opts.rejected_path {
        Some(p) => Some(RejectedWriter::create(
            p,
            header,
            source.delimiter(),
            starts_with_bom(path),
        )?)
        .map(|mut w| {
            w.language = opts.language;
            w
        }),
        None => None,
    };

    let mut summary = Summary {
        unused_columns,
        notices: source.notices(),
        ..Summary::default()
    };
    summary.notices.extend(preamble);
    if let Some(ext) = &unknown {
        summary.notices.push(format!(
            "hidden or filtered rows were not looked for: a .{ext} workbook does not show them to payrun (--assume-no-hidden-rows); save it as .xlsx to have them checked"
        ));
    }
    if !hidden.is_empty() {
        summary.notices.push(format!(
            "{} row{} hidden or filtered out in the spreadsheet left out (--skip-hidden-rows), listed with the skipped rows",
            hidden.len(),
            if hidden.len() == 1 { "" } else { "s" }
        ));
    }
    let mut payees_capped = false;
    // A totals row found, kept until the data ends (used) or another row
    // follows it (refused: a totals row is the last row of the data).
    let mut pending_total: Option<(ControlTotal, Vec<String>)> = None;
    let mut raw = RawRow::default();
    while source
        .next_row(&mut raw)
        .with_context(|| format!("cannot validate {}", path.display()))?
    {
        summary.rows += 1;
        let hidden_row = hidden.binary_search(&raw.row).is_ok();
        if hidden_row
            || skip.as_ref().is_some_and(|(i, values)| {
                raw.fields
                    .get(*i)
                    .is_some_and(|v| values.contains(&columns::normalize(v)))
            })
        {
            summary.skipped += 1;
            summary.skipped_hidden += u64::from(hidden_row);
            if summary.skipped_rows.len() < MAX_LISTED {
                summary.skipped_rows.push(raw.row);
            }
            continue;
        }
        if let Some((total, cells)) = pending_total.take() {
            summary.rejected += 1;
            let rejected = Rejected {
                row: total.row,
                raw: cells,
                errors: vec![FieldError {
                    row: total.row,
                    column: String::new(),
                    value: String::new(),
                    message: format!(
                        "this row has no payee and its amount ({} {}) is the sum of the rows above, like a totals row, but row {} follows it: a totals row must be the last row of the data; move it to the end or remove it, or fill in the account and the payee if it is a payment",
                        total.total, total.currency, raw.row
                    ),
                }],
            };
            if let Some(w) = rejected_out.as_mut() {
                w.write(&rejected)?;
            }
            on_row(RowOutcome::Rejected(&rejected))?;
        }
        match totals_row(&raw, validator.columns(), &summary, cfg) {
            Totals::Row => {}
            Totals::Matches(total) => {
                pending_total = Some((total, raw.fields.iter().map(str::to_owned).collect()));
                continue;
            }
            Totals::Differs(message) => {
                summary.rejected += 1;
                let rejected = Rejected {
                    row: raw.row,
                    raw: raw.fields.iter().map(str::to_owned).collect(),
                    errors: vec![FieldError {
                        row: raw.row,
                        column: String::new(),
                        value: String::new(),
                        message,
                    }],
                };
                if let Some(w) = rejected_out.as_mut() {
                    w.write(&rejected)?;
                }
                on_row(RowOutcome::Rejected(&rejected))?;
                continue;
            }
        }
        match validator.check(&raw) {
            Ok(payout) => {
                summary.valid += 1;
                match validator.repeat_of(&payout) {
                    row::Repeat::Of(first) => {
                        summary.repeated += 1;
                        if summary.repeated_rows.len() < MAX_LISTED {
                            summary.repeated_rows.push([payout.row, first]);
                        }
                    }
                    row::Repeat::New => {}
                    row::Repeat::NotChecked if !payees_capped => {
                        payees_capped = true;
                        summary.notices.push(format!(
                            "repeated payees were looked for in the first {} valid rows only",
                            row::MAX_PAYEES
                        ));
                    }
                    row::Repeat::NotChecked => {}
                }
                let entry = summary
                    .currencies
                    .entry(payout.currency.clone())
                    .or_default();
                entry.count += 1;
                entry.total = entry.total.checked_add(payout.amount).with_context(|| {
                    format!("the {} total overflows: split the file", payout.currency)
                })?;
                on_row(RowOutcome::Valid(payout))?;
            }
            Err(errors) => {
                summary.rejected += 1;
                let rejected = Rejected {
                    row: raw.row,
                    raw: raw.fields.iter().map(str::to_owned).collect(),
                    errors,
                };
                if let Some(w) = rejected_out.as_mut() {
                    w.write(&rejected)?;
                }
                on_row(RowOutcome::Rejected(&rejected))?;
            }
        }
    }
    if let Some((total, _)) = pending_total {
        summary.notices.push(format!(
            "row {} is a totals row ({} {}), equal to the sum of the rows above: used as a control total, not paid",
            total.row, total.total, total.currency
        ));
        summary.control_total = Some(total);
    }
    summary.notices.extend(validator.number_column_notices());
    if summary.rows == 0 {
        anyhow::bail!(
            "{} has a header row but no data rows: add one row per payout below the header",
            path.display()
        );
    }
    // Every row valid: no file (a header-only file would look like a
    // list to fix); the command says so.
    if let Some(w) = rejected_out
        && summary.rejected > 0
    {
        w.finish()?;
    }
    Ok(summary)
}

/// Whether the file at `path` starts with a UTF-8 byte-order mark: the
/// rejected rows go back to the same Excel with the same conventions.
fn starts_with_bom(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 3];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == *b"\xEF\xBB\xBF")
}

/// Writes `rejected.csv`: the header and the rejected rows as they came in,
/// with the input's delimiter and byte-order mark, plus a `reasons` column, each cell through the formula guard (undone
/// when payrun reads the file back, `output::written_by_payrun`). Written
/// whole or not at all (`output::AtomicFile`): a failed scan never leaves
/// a half-written file that looks complete, nor a temporary one.
struct RejectedWriter {
    writer: csv::Writer<std::io::BufWriter<std::fs::File>>,
    pending: crate::output::AtomicFile,
    language: crate::lang::Language,
}

impl RejectedWriter {
    fn create(dest: &Path, header: &RawRow, delimiter: u8, bom: bool) -> Result<RejectedWriter> {
        let pending = crate::output::AtomicFile::create(dest)?;
        let mut file = pending
            .file()
            .try_clone()
            .with_context(|| format!("cannot create {}", pending.temp_path().display()))?;
        if bom {
            std::io::Write::write_all(&mut file, b"\xEF\xBB\xBF")
                .with_context(|| format!("cannot write {}", pending.temp_path().display()))?;
        }
        let mut w = RejectedWriter {
            writer: csv::WriterBuilder::new()
                .delimiter(delimiter)
                .flexible(true)
                .from_writer(std::io::BufWriter::new(file)),
            pending,
            language: crate::lang::Language::En,
        };
        let cells: Vec<String> = header
            .fields
            .iter()
            .map(|c| safe_cell(c).into_owned())
            .chain(std::iter::once(
                crate::output::REJECTED_REASONS_COLUMN.to_owned(),
            ))
            .collect();
        w.write_cells(&cells)?;
        Ok(w)
    }

    fn write(&mut self, rejected: &Rejected) -> Result<()> {
        let reasons = rejected
            .errors
            .iter()
            .map(|e| e.shown_in(self.language))
            .collect::<Vec<_>>()
            .join("; ");
        let cells: Vec<String> = rejected
            .raw
            .iter()
            .map(|c| safe_cell(c).into_owned())
            .chain(std::iter::once(safe_cell(&reasons).into_owned()))
            .collect();
        self.write_cells(&cells)
    }

    fn write_cells(&mut self, cells: &[String]) -> Result<()> {
        self.writer
            .write_record(cells)
            .with_context(|| format!("cannot write {}", self.pending.temp_path().display()))
    }

    fn finish(mut self) -> Result<()> {
        self.writer
            .flush()
            .with_context(|| format!("cannot write {}", self.pending.temp_path().display()))?;
        drop(self.writer);
        self.pending.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::FieldError;

    /// A refused value is quoted as the person sees it in the sheet: a
    /// no-break space is a space, never `\u{a0}`.
    #[test]
    fn a_value_is_shown_as_a_person_reads_it() {
        let e = FieldError {
            row: 4,
            column: "Montant".into(),
            value: "496\u{a0}611".into(),
            message: "…".into(),
        };
        assert_eq!(e.to_string(), "row 4, column Montant, value \"496 611\": …");
        let long = FieldError {
            value: "x".repeat(100),
            ..e
        };
        assert!(
            long.to_string()
                .contains(&format!("\"{}…\"", "x".repeat(60)))
        );
    }
}
