//! The report as an Excel workbook (`--report report.xlsx`): identifiers
//! (transaction ids, accounts, phone-like values) are text cells, so Excel
//! never shows an account as `2.25E+12` or drops its leading zero; amounts
//! are number cells in the currency's decimals (XOF `#,##0`, EUR
//! `#,##0.00`); each currency ends with a totals row; a second sheet holds
//! the per-currency summary. Text cells are never formulas in a workbook,
//! so no cell needs the CSV report's formula guard.

use super::style::{report_header, summary_header};
use crate::config::ReportLanguage;
use crate::store::{Store, Totals};
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use rust_xlsxwriter::{Format, Workbook, Worksheet};
use std::collections::BTreeMap;
use std::str::FromStr;

/// Column widths, in characters, so the sheet is readable when opened.
const WIDTHS: [f64; 12] = [
    6.0, 24.0, 18.0, 28.0, 14.0, 9.0, 16.0, 16.0, 40.0, 9.0, 22.0, 22.0,
];
/// The amount column (0-based), shared by payout lines and totals rows.
const AMOUNT_COL: u16 = 4;

/// The number of decimals of an ISO 4217 currency (2 when unknown: the
/// report shows what was recorded; validation already refused bad codes).
pub fn currency_decimals(code: &str) -> u16 {
    iso_currency::Currency::from_code(code)
        .and_then(|c| c.exponent())
        .unwrap_or(2)
}

/// The Excel number format for an amount in `code`: thousands grouped,
/// the currency's decimals.
pub fn number_format(code: &str) -> String {
    match currency_decimals(code) {
        0 => "#,##0".to_string(),
        n => format!("#,##0.{}", "0".repeat(n as usize)),
    }
}

/// A cell value for a decimal amount. Excel stores every number as a
/// double; the conversion happens here, at the edge, for display only —
/// totals are summed as decimals before it.
fn cell_number(d: Decimal) -> f64 {
    d.to_f64().unwrap_or(0.0)
}

/// The workbook's bytes for the report of `run_id`.
pub fn workbook(store: &Store, run_id: i64, language: ReportLanguage) -> Result<Vec<u8>> {
    let mut book = Workbook::new();
    let bold = Format::new().set_bold();
    let text = Format::new().set_num_format("@");
    let mut formats: BTreeMap<String, (Format, Format)> = BTreeMap::new();
    let mut format_of = |code: &str| {
        formats
            .entry(code.to_string())
            .or_insert_with(|| {
                let f = Format::new().set_num_format(number_format(code));
                (f.clone(), f.set_bold())
            })
            .clone()
    };
    let mut sums: BTreeMap<String, (u64, Decimal)> = BTreeMap::new();

    let sheet = book.add_worksheet();
    sheet.set_name(match language {
        ReportLanguage::En => "Report",
        ReportLanguage::Fr => "Rapport",
    })?;
    for (col, (name, width)) in report_header(language).iter().zip(WIDTHS).enumerate() {
        sheet.write_string_with_format(0, col as u16, *name, &bold)?;
        sheet.set_column_width(col as u16, width)?;
    }
    sheet.set_freeze_panes(1, 0)?;
    let mut line: u32 = 0;
    store.for_each_report_row(run_id, |r| {
        line += 1;
        sheet.write_number(line, 0, r.row as f64)?;
        let texts = [
            (1, &r.transaction_id),
            (2, &r.account_id),
            (3, &r.beneficiary),
            (5, &r.currency),
            (6, &r.state),
            (7, &r.provider_code),
            (8, &r.provider_message),
            (10, &r.initiated_at),
            (11, &r.executed_at),
        ];
        for (col, value) in texts {
            sheet.write_string_with_format(line, col, value.as_str(), &text)?;
        }
        if !r.amount.is_empty() {
            let amount = Decimal::from_str(&r.amount)
                .with_context(|| format!("corrupt amount {:?} in the database", r.amount))?;
            let (plain, _) = format_of(&r.currency);
            sheet.write_number_with_format(line, AMOUNT_COL, cell_number(amount), &plain)?;
            let sum = sums.entry(r.currency.clone()).or_default();
            sum.0 += 1;
            sum.1 += amount;
        }
        sheet.write_number(line, 9, f64::from(r.attempts))?;
        Ok(())
    })?;
    line += 1;
    for (currency, (count, total)) in &sums {
        line += 1;
        let label = match language {
            ReportLanguage::En => format!("total {currency} ({count} payouts)"),
            ReportLanguage::Fr => format!("total {currency} ({count} paiements)"),
        };
        let (_, strong) = format_of(currency);
        sheet.write_string_with_format(line, 3, &label, &bold)?;
        sheet.write_number_with_format(line, AMOUNT_COL, cell_number(*total), &strong)?;
        sheet.write_string_with_format(line, 5, currency, &bold)?;
    }

    let summary = book.add_worksheet();
    summary.set_name(match language {
        ReportLanguage::En => "Summary",
        ReportLanguage::Fr => "Synthèse",
    })?;
    write_summary(
        summary,
        &store.totals(run_id)?,
        language,
        &bold,
        &mut format_of,
    )?;
    book.save_to_buffer().context("cannot build the workbook")
}

fn write_summary(
    sheet: &mut Worksheet,
    totals: &Totals,
    language: ReportLanguage,
    bold: &Format,
    format_of: &mut impl FnMut(&str) -> (Format, Format),
) -> Result<()> {
    for (col, name) in summary_header(language).iter().enumerate() {
        sheet.write_string_with_format(0, col as u16, *name, bold)?;
        sheet.set_column_width(col as u16, 16.0)?;
    }
    let mut line = 0u32;
    for (currency, states) in totals {
        let (plain, _) = format_of(currency);
        for (state, t) in states {
            line += 1;
            sheet.write_string(line, 0, currency)?;
            sheet.write_string(line, 1, state.as_str())?;
            sheet.write_number(line, 2, t.count as f64)?;
            sheet.write_number_with_format(line, 3, cell_number(t.total), &plain)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats_follow_the_currency() {
        assert_eq!(number_format("XOF"), "#,##0");
        assert_eq!(number_format("EUR"), "#,##0.00");
        assert_eq!(number_format("KWD"), "#,##0.000");
    }
}
