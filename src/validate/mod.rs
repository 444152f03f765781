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
pub mod notice;
pub mod number;
pub(crate) mod numeric;
pub mod phone;
pub mod reason;
mod row;
mod sheet;

pub use notice::{Line, Notice, Refusal};
pub use reason::Reason;
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
    /// The reason in English (JSON output and logs keep it stable).
    pub message: String,
    /// The rule broken, shown in the user's language by [`FieldError::shown_in`].
    #[serde(skip)]
    pub reason: Reason,
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
    /// The error of `column` (empty for the whole row) holding `value`.
    pub fn new(row: u64, column: &str, value: &str, reason: Reason) -> FieldError {
        FieldError {
            row,
            column: column.to_owned(),
            value: value.to_owned(),
            message: reason.to_string(),
            reason,
        }
    }

    /// The sentence in `language`: the row, column and value framed in
    /// it, the rule explained in it.
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        let t = language.text();
        let message = self.reason.shown_in(language);
        if self.column.is_empty() {
            return (t.row_error)(self.row, &message);
        }
        (t.field_error)(
            self.row,
            &self.column,
            &crate::output::shown_at_most(&self.value, SHOWN_VALUE_CHARS),
            &message,
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
    /// How the file was read ("read as Windows-1252"); in the JSON
    /// output, the English sentences.
    pub notices: Vec<Notice>,
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
    let language = opts.language;
    let shown_path = path.display().to_string();
    let (mut source, preamble) = header::open_payroll(path, opts.sheet.as_deref(), cfg)
        .map_err(|e| in_language(e, language))?;
    let unknown = source.hidden_rows_unknown();
    if let Some(ext) = &unknown
        && !opts.assume_no_hidden_rows
    {
        return Err(Refusal::HiddenUnknown {
            path: shown_path,
            ext: ext.clone(),
        }
        .error(language));
    }
    let hidden = source.hidden_rows();
    if !hidden.is_empty() && !opts.skip_hidden_rows {
        return Err(Refusal::HiddenRows {
            path: shown_path,
            count: hidden.len(),
            named: hidden.iter().take(MAX_HIDDEN_NAMED).copied().collect(),
        }
        .error(language));
    }
    let header = source.header();
    let optional = header::optional_columns(cfg);
    let columns = columns::Columns::resolve(header.fields.iter(), &cfg.columns, &optional)
        .map_err(|error| {
            let sheets = source.sheets();
            Refusal::Columns {
                path: shown_path.clone(),
                error: Box::new(error),
                sheets: if sheets.len() > 1 {
                    sheets.iter().map(|s| columns::excerpt(s)).collect()
                } else {
                    Vec::new()
                },
            }
            .error(language)
        })?;
    let skip = match &cfg.skip {
        Some(rule) => Some(skip_rule(rule, header).map_err(|r| r.error(language))?),
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
        notices: source.notices().into_iter().map(Notice::from).collect(),
        ..Summary::default()
    };
    summary.notices.extend(preamble.map(Notice::from));
    if let Some(ext) = &unknown {
        summary
            .notices
            .push(Notice::HiddenNotLookedFor { ext: ext.clone() });
    }
    if !hidden.is_empty() {
        summary.notices.push(Notice::HiddenLeftOut {
            count: hidden.len(),
        });
    }
    let mut payees_capped = false;
    // A totals row found, kept until the data ends (used) or another row
    // follows it (refused: a totals row is the last row of the data).
    let mut pending_total: Option<(ControlTotal, Vec<String>)> = None;
    let mut raw = RawRow::default();
    while source
        .next_row(&mut raw)
        .map_err(|e| in_language(e, language))
        .with_context(|| crate::lang::cannot_validate(&path.display().to_string(), language))?
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
                errors: vec![FieldError::new(
                    total.row,
                    "",
                    "",
                    Reason::TotalsNotLast {
                        total: total.total,
                        currency: total.currency.clone(),
                        next: raw.row,
                    },
                )],
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
            Totals::Differs(reason) => {
                summary.rejected += 1;
                let rejected = Rejected {
                    row: raw.row,
                    raw: raw.fields.iter().map(str::to_owned).collect(),
                    errors: vec![FieldError::new(raw.row, "", "", reason)],
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
                        summary.notices.push(Notice::PayeesCapped {
                            max: row::MAX_PAYEES,
                        });
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
        summary.notices.push(Notice::TotalsRowUsed {
            row: total.row,
            total: total.total,
            currency: total.currency.clone(),
        });
        summary.control_total = Some(total);
    }
    summary.notices.extend(validator.number_column_notices());
    if summary.rows == 0 {
        return Err(Refusal::NoDataRows {
            path: path.display().to_string(),
        }
        .error(language));
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

/// An error of the reader said in `language`: one of its own
/// ([`crate::input::InputError`]) in that language; any other (the
/// system's, a workbook library's) as it is. English errors are left
/// whole, context included.
fn in_language(e: anyhow::Error, language: crate::lang::Language) -> anyhow::Error {
    match e.downcast_ref::<crate::input::InputError>() {
        Some(said) if language != crate::lang::Language::En => {
            anyhow::Error::msg(said.shown_in(language))
        }
        _ => e,
    }
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
            message: "…".into(),
            ..FieldError::new(4, "Montant", "496\u{a0}611", super::Reason::Unexplained)
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
