//! The rows of one statement sheet below its header: a transaction line
//! read into a [`StatementLine`] (its amount through the project's one
//! number reader, in the statement's unit), or a footer or subtotal skipped
//! and named — a row without a transaction id, or labelled `Total` (in its
//! id cell, or anywhere when its status is not a status word), or with
//! neither status nor account and an amount that is the sum of the lines
//! above (`Semaine 1;;75 000;XOF;`). A footer's amount is checked against
//! the lines above it: equal, it is named as such; different, a notice says
//! a line may be missing. A row with a transaction id and a status (even
//! an unknown word: an error) is never taken for a footer because of its
//! amount.

use super::vocabulary::{Column, Located, Vocabulary};
use super::{Day, Statement, StatementLine, date};
use crate::config::{AmountUnit, DateOrder, NumberFormat};
use crate::input::{RawRow, RowSource};
use crate::output::shown;
use crate::validate::amount::{AmountError, parse_amount_with};
use crate::validate::fields;
use anyhow::{Result, bail};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

/// How the lines are read: the vocabulary and the statement's conventions.
pub(super) struct Reading<'a> {
    pub voc: &'a Vocabulary,
    pub format: Option<NumberFormat>,
    pub unit: AmountUnit,
    pub order: DateOrder,
}

/// Sums per currency of the lines read, for checking a footer's amount.
#[derive(Default)]
struct Sums {
    since_start: BTreeMap<String, Decimal>,
    since_footer: BTreeMap<String, Decimal>,
}

/// Reads every row after the header of `source` into `st`.
pub(super) fn read_lines(
    source: &mut dyn RowSource,
    at: &Located,
    sheet: Option<&str>,
    how: &Reading<'_>,
    st: &mut Statement,
) -> Result<()> {
    let mut raw = RawRow::default();
    let mut sums = Sums::default();
    // The first line whose date cannot be read, and how many such lines.
    let mut undated: Option<(String, String)> = None;
    let mut undated_count = 0u64;
    while source.next_row(&mut raw)? {
        let place = match sheet {
            Some(s) => format!("sheet {} line {}", shown(s), raw.row),
            None => format!("line {}", raw.row),
        };
        let id = at.cell(&raw.fields, Column::TransactionId);
        let word = at.cell(&raw.fields, Column::Status);
        // Every cell is looked at only for a row that may be a footer.
        let labelled = || raw.fields.iter().any(|c| how.voc.is_total_label(c));
        // A subtotal without a label: no status, no account, and the sum
        // of the lines above (an unknown status word is an error, never a
        // subtotal).
        let sum_line = || {
            word.trim().is_empty()
                && at.cell(&raw.fields, Column::Account).is_empty()
                && footer_total(&raw, at, how, &sums).is_some_and(|t| t.2)
        };
        if id.is_empty()
            || how.voc.is_total_label(id)
            || (how.voc.status(word).is_none() && (labelled() || sum_line()))
        {
            footer(&raw, at, &place, labelled(), how, &mut sums, st);
            continue;
        }
        for c in Column::ALL {
            if let Some(i) = at.index(c)
                && let Some((_, e)) = raw.cell_errors.iter().find(|(j, _)| *j == i)
            {
                bail!(
                    "statement {place}: column {} holds the spreadsheet error {}; correct the cell in the workbook (or export the statement again)",
                    shown(at.label(c)),
                    shown(e)
                );
            }
        }
        let line = transaction(&raw, at, id, word, &place, how)?;
        if line.date.is_none() && at.index(Column::Date).is_some() {
            undated_count += 1;
            undated.get_or_insert_with(|| {
                (place.clone(), at.cell(&raw.fields, Column::Date).to_owned())
            });
        }
        for sum in [&mut sums.since_start, &mut sums.since_footer] {
            *sum.entry(line.currency.clone()).or_default() += line.amount;
        }
        let mut line = line;
        line.sheet = sheet.map(str::to_owned);
        st.lines.push(line);
    }
    if let Some((place, value)) = undated {
        let others = match undated_count {
            1 => String::new(),
            n => format!(" (and {} other line(s))", n - 1),
        };
        st.notices.push(format!(
            "statement {place}{others}: column {} holds {}, not a date payrun reads (2026-11-23, 23/11/2026, or with [statement] date_order = \"mdy\" 11/23/2026); the statement's dates are not used: give its period with --from and --to",
            shown(at.label(Column::Date)),
            shown(&value)
        ));
    }
    Ok(())
}

/// One transaction line, or an error naming the line, column, value, fix.
fn transaction(
    raw: &RawRow,
    at: &Located,
    id: &str,
    word: &str,
    place: &str,
    how: &Reading<'_>,
) -> Result<StatementLine> {
    let cell = |c: Column| at.cell(&raw.fields, c);
    let col = |c: Column| shown(at.label(c));
    let Some(status) = how.voc.status(word) else {
        bail!(
            "statement {place}: column {} holds the status {}, which is not in the vocabulary; add it to [statement] paid, failed or not_final in the config",
            col(Column::Status),
            shown(word)
        );
    };
    let (code, exponent) = fields::currency(cell(Column::Currency)).map_err(|e| {
        anyhow::anyhow!(
            "statement {place}: column {} holds {}: {e}",
            col(Column::Currency),
            shown(cell(Column::Currency))
        )
    })?;
    let text = cell(Column::Amount);
    let amount = amount(text, code, exponent, how, numeric(raw, at)).map_err(|e| {
        anyhow::anyhow!(
            "statement {place}: column {} holds {}, not an amount payrun reads: {e} \
             (the statement alone can have its own: [statement] number_format = \"fr\" or \"en\")",
            col(Column::Amount),
            shown(text)
        )
    })?;
    Ok(StatementLine {
        sheet: None,
        line: raw.row,
        transaction_id: id.to_owned(),
        account: cell(Column::Account).to_owned(),
        amount,
        amount_text: text.to_owned(),
        currency: code.to_owned(),
        status,
        status_word: word.to_owned(),
        date: at
            .index(Column::Date)
            .and_then(|_| date::parse(cell(Column::Date), how.order)),
    })
}

/// Whether the amount cell was a number cell of a workbook: its text is
/// then plain digits and a `.` whatever `number_format` says (the format
/// is how people type numbers, not how a spreadsheet stores them).
fn numeric(raw: &RawRow, at: &Located) -> bool {
    at.index(Column::Amount)
        .is_some_and(|i| raw.numeric.contains(&i))
}

/// A statement amount in the currency's major unit: read by the number
/// reader in the statement's format (plain for a number cell); a sign is
/// dropped (exports write debits as `-25 000`); in minor units it is
/// divided by the currency's decimals. Zero is an amount here (a statement
/// is not a payment).
fn amount(
    text: &str,
    code: &str,
    exponent: u16,
    how: &Reading<'_>,
    number_cell: bool,
) -> Result<Decimal, AmountError> {
    let unsigned = text
        .trim()
        .trim_start_matches(['-', '\u{2212}', '+'])
        .trim_end_matches('-')
        .trim();
    let digits = match how.unit {
        AmountUnit::Major => exponent,
        AmountUnit::Minor => 0,
    };
    let read = parse_amount_with(
        unsigned,
        code,
        digits,
        AmountUnit::Minor,
        if number_cell { None } else { how.format },
        Some(Decimal::MAX),
    );
    let mut value = match read {
        Ok(a) => a.value,
        Err(AmountError::Zero) => Decimal::ZERO,
        Err(e) => return Err(e),
    };
    if how.unit == AmountUnit::Minor {
        value
            .set_scale(u32::from(exponent))
            .map_err(|_| AmountError::TooLarge)?;
    }
    Ok(value)
}

/// A footer or subtotal row: named in `st.skipped`, its amount checked
/// against the lines above when it can be read.
fn footer(
    raw: &RawRow,
    at: &Located,
    place: &str,
    labelled: bool,
    how: &Reading<'_>,
    sums: &mut Sums,
    st: &mut Statement,
) {
    let text: Vec<&str> = raw
        .fields
        .iter()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    let said = shown(&text.join(" "));
    let written = at.cell(&raw.fields, Column::Amount);
    let why = if labelled {
        "a total line"
    } else if at.cell(&raw.fields, Column::TransactionId).is_empty() {
        "no transaction id"
    } else {
        "no status, no account"
    };
    match footer_total(raw, at, how, sums) {
        Some((code, _, equal)) => {
            if equal {
                st.skipped.push(format!(
                    "statement {place} ({said}) is {}: not read as a transaction",
                    if labelled {
                        "a total line, equal to the sum of the lines above".to_owned()
                    } else {
                        format!("a subtotal ({why}; its amount is the sum of the lines above)")
                    }
                ));
            } else {
                st.skipped.push(format!(
                    "statement {place} ({said}) is a footer ({why}): not read as a transaction"
                ));
                st.notices.push(format!(
                    "statement {place}: the footer's amount {} {code} differs from the sum of the lines above ({} {code}): a line may be missing from the statement, or changed",
                    shown(written),
                    sums.since_start.get(&code).copied().unwrap_or_default()
                ));
            }
        }
        _ => st.skipped.push(format!(
            "statement {place} ({said}) is a footer ({why}): not read as a transaction"
        )),
    }
    sums.since_footer.clear();
}

/// A footer row's amount, when it reads: its currency (the row's, or the
/// one currency of the lines above), the amount, and whether it equals the
/// sum of the lines above (since the start, or since the last footer).
fn footer_total(
    raw: &RawRow,
    at: &Located,
    how: &Reading<'_>,
    sums: &Sums,
) -> Option<(String, Decimal, bool)> {
    let written = at.cell(&raw.fields, Column::Amount);
    if written.trim().is_empty() {
        return None;
    }
    let currency = match at.cell(&raw.fields, Column::Currency) {
        "" if sums.since_start.len() == 1 => sums.since_start.keys().next().cloned()?,
        c => fields::currency(c).ok()?.0.to_owned(),
    };
    let (code, exp) = fields::currency(&currency).ok()?;
    let value = amount(written, code, exp, how, numeric(raw, at)).ok()?;
    let sum_of = |m: &BTreeMap<String, Decimal>| m.get(code).copied();
    let equal = [sum_of(&sums.since_footer), sum_of(&sums.since_start)].contains(&Some(value));
    Some((code.to_owned(), value, equal))
}

/// The first and last day of the lines, when every line has one.
pub(super) fn date_range(lines: &[StatementLine]) -> Option<(Day, Day)> {
    let days: Option<Vec<Day>> = lines.iter().map(|l| l.date).collect();
    let days = days?;
    Some((*days.iter().min()?, *days.iter().max()?))
}
