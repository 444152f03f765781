//! Reading a provider's statement (its back-office export of transactions)
//! into [`StatementLine`]s, with the readers payroll files use
//! (docs/closing.md, "Match the provider's statement"): CSV or workbook
//! through [`crate::input`], the header row found below a preamble
//! ([`crate::input::header`]), amounts through the one number reader
//! ([`crate::validate::amount`]) with `number_format` and the statement's
//! unit, footers and subtotals skipped and named. The column mapping and
//! status words come from the `[statement]` config section
//! ([`vocabulary`]). A workbook is read sheet by sheet: every visible sheet
//! whose header is found (a cover sheet and a hidden sheet are skipped and
//! named), or the one `--sheet` names. Bad input is an error naming the line, the column, the
//! value (as a person reads it) and the fix.

pub mod date;
mod lines;
pub mod vocabulary;

pub use date::Day;
pub use vocabulary::Vocabulary;

use crate::config::Config;
use crate::input::header::{self, Opened};
use crate::output::shown;
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::path::Path;
use vocabulary::Column;

pub use crate::config::StatementSpec;

/// What a statement says about a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StatementStatus {
    Paid,
    Failed,
    NotFinal,
}

impl StatementStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StatementStatus::Paid => "paid",
            StatementStatus::Failed => "failed",
            StatementStatus::NotFinal => "not_final",
        }
    }
}

/// One transaction line of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementLine {
    /// The worksheet, when a workbook's lines come from several.
    pub sheet: Option<String>,
    /// The line (row) number as a spreadsheet program shows it.
    pub line: u64,
    pub transaction_id: String,
    pub account: String,
    /// The amount in the currency's major unit (`1250.50`), whatever unit
    /// the statement writes it in.
    pub amount: Decimal,
    /// The amount as the statement wrote it.
    pub amount_text: String,
    pub currency: String,
    pub status: StatementStatus,
    /// The status as the provider wrote it.
    pub status_word: String,
    /// The line's day, when the statement has a date column.
    pub date: Option<Day>,
}

impl StatementLine {
    /// Where the line is, as the clerk finds it: `line 14`, or `sheet
    /// "Novembre" line 14`.
    pub fn place(&self) -> String {
        self.place_in(crate::lang::Language::En)
    }

    /// [`StatementLine::place`] in `language`.
    pub fn place_in(&self, language: crate::lang::Language) -> String {
        place_in(self.sheet.as_deref(), self.line, language)
    }
}

/// Where a statement line is (its sheet, if any, and line), in `language`.
pub fn place_in(sheet: Option<&str>, line: u64, language: crate::lang::Language) -> String {
    let c = language.closing();
    (c.place)(&sheet.map(shown).unwrap_or_default(), line)
}

/// A statement read whole: its lines, the file's SHA-256 (which every
/// settlement made from it records), what was skipped and why, and the
/// days its lines cover.
#[derive(Debug, Clone, Default)]
pub struct Statement {
    pub sha256: String,
    pub lines: Vec<StatementLine>,
    /// Rows and sheets not read as transactions (a preamble, a footer, a
    /// cover sheet), each as a sentence naming them.
    pub skipped: Vec<String>,
    /// Other things the clerk should know (a total that differs from its
    /// lines, dates that could not be read).
    pub notices: Vec<String>,
    /// The first and last day of its lines, when every line has a date.
    pub dates: Option<(Day, Day)>,
}

/// Reads the statement at `path` (CSV, or a workbook by its extension)
/// with `cfg`'s `[statement]` section, `number_format`, `amount_unit` and
/// `encoding`.
pub fn read(path: &Path, sheet: Option<&str>, cfg: &Config) -> Result<Statement> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read statement {}", path.display()))?;
    let spec = cfg.statement.clone().unwrap_or_default();
    let voc = Vocabulary::of(&spec)?;
    let how = lines::Reading {
        voc: &voc,
        format: spec.number_format.or(cfg.number_format),
        unit: spec.amount_unit.unwrap_or(cfg.amount_unit()),
        order: spec.date_order.unwrap_or_default(),
    };
    let mut st = Statement {
        sha256: hex::encode(Sha256::digest(&bytes)),
        ..Statement::default()
    };
    let is_header = |r: &csv::StringRecord| voc.locate(r).is_some();
    let encoding = cfg.encoding.as_deref();
    let first = header::open_at_header(path, sheet, encoding, &is_header)?;
    let (all, visible) = match &first {
        Some(o) => (o.source.sheets(), o.source.visible_sheets()),
        None => {
            let source = crate::input::open(path, sheet, encoding)?;
            (source.sheets(), source.visible_sheets())
        }
    };
    if sheet.is_some() || visible.len() <= 1 {
        let Some(opened) = first else {
            return Err(no_header(path, sheet, encoding, &voc));
        };
        read_sheet(opened, None, &how, &mut st)?;
    } else {
        // Every visible sheet whose header is found; the others are named,
        // a hidden one too (a draft or an old copy is not the statement).
        for name in all.iter().filter(|s| !visible.contains(s)) {
            st.skipped.push(format!(
                "sheet {} is hidden (or a chart): not read; read it alone with --sheet {}",
                shown(name),
                shown(name)
            ));
        }
        let mut found = 0;
        for name in &visible {
            match header::open_at_header(path, Some(name), encoding, &is_header)? {
                Some(opened) => {
                    found += 1;
                    read_sheet(opened, Some(name), &how, &mut st)?;
                }
                None => st.skipped.push(format!(
                    "sheet {} has no statement header row (looked for {}): not read",
                    shown(name),
                    voc.names(Column::TransactionId).join(", ")
                )),
            }
        }
        if found == 0 {
            return Err(no_header(path, None, encoding, &voc));
        }
        // Lines are named by their sheet only when several were read.
        if found == 1 {
            for l in &mut st.lines {
                l.sheet = None;
            }
        }
    }
    st.dates = lines::date_range(&st.lines);
    Ok(st)
}

/// Reads the lines of one opened sheet (or CSV file) into `st`.
fn read_sheet(
    mut opened: Opened,
    sheet: Option<&str>,
    how: &lines::Reading<'_>,
    st: &mut Statement,
) -> Result<()> {
    let header_row = opened.source.header().row;
    if let Some(n) = header::preamble_notice(&opened.preamble, header_row) {
        st.skipped.push(match sheet {
            Some(s) => format!("sheet {}: {n}", shown(s)),
            None => n,
        });
    }
    let located = how
        .voc
        .locate(&opened.source.header().fields)
        .context("the header row lost its columns")?;
    lines::read_lines(opened.source.as_mut(), &located, sheet, how, st)
}

/// The error when no row of the first ones is a statement header: the
/// first row's missing columns, what it holds, and the fix.
fn no_header(
    path: &Path,
    sheet: Option<&str>,
    encoding: Option<&str>,
    voc: &Vocabulary,
) -> anyhow::Error {
    let source = match crate::input::open(path, sheet, encoding) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let first = &source.header().fields;
    let missing = voc.missing(first);
    let wanted: Vec<String> = missing
        .iter()
        .map(|c| {
            format!(
                "no {} column (looked for {})",
                c.key(),
                voc.names(*c).join(", ")
            )
        })
        .collect();
    let found: Vec<String> = first
        .iter()
        .filter(|h| !h.trim().is_empty())
        .take(12)
        .map(shown)
        .collect();
    let sheets = source.sheets();
    let on_sheets = if sheets.len() > 1 {
        format!(
            "; its worksheets are {}: choose one with --sheet NAME",
            sheets
                .iter()
                .map(|s| shown(s))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        String::new()
    };
    anyhow::anyhow!(
        "statement {}: no header row in its first {} rows: {}; the first row holds {}{on_sheets}. \
         Name the statement's headers in the config's [statement] section, e.g. {} = [\"...\"]",
        path.display(),
        header::HEADER_SEARCH_ROWS,
        wanted.join("; "),
        if found.is_empty() {
            "nothing".to_owned()
        } else {
            found.join(", ")
        },
        missing.first().map_or("transaction_id", |c| c.key()),
    )
}

#[cfg(test)]
mod tests;
