//! Opening a payroll at its header row (docs/input.md, "Columns"): the first
//! row whose headers give every required column ([`columns::Columns`] with
//! the config's `[columns]` table and defaults), within the first rows of
//! the sheet (`input::header`, shared with provider statements). A row above
//! it (a title, a company name, a period) is skipped and named in the
//! summary. When no row is a header, the file is opened as it is, so the
//! first row's missing columns are named exactly as before.

use super::columns::{self, Col};
use crate::config::Config;
use crate::input::{self, RowSource, header};
use anyhow::Result;
use std::path::Path;

/// The required columns the config provides a default for.
pub fn optional_columns(cfg: &Config) -> Vec<Col> {
    let mut optional = Vec::new();
    if cfg
        .default_payout_method_id
        .as_deref()
        .is_some_and(|m| !m.trim().is_empty())
    {
        optional.push(Col::PayoutMethodId);
    }
    if cfg.default_currency.is_some() {
        optional.push(Col::Currency);
    }
    optional
}

/// The payroll at `path` positioned after its header row, and the notice
/// naming the rows skipped above it (if any).
pub fn open_payroll(
    path: &Path,
    sheet: Option<&str>,
    cfg: &Config,
) -> Result<(Box<dyn RowSource>, Option<input::InputNotice>)> {
    let optional = optional_columns(cfg);
    let is_header = |r: &csv::StringRecord| {
        columns::Columns::resolve(r.iter(), &cfg.columns, &optional).is_ok()
    };
    let encoding = cfg.encoding.as_deref();
    match header::open_at_header(path, sheet, encoding, &is_header)? {
        Some(opened) => {
            let notice = header::preamble_skipped(&opened.preamble, opened.source.header().row);
            Ok((opened.source, notice))
        }
        None => Ok((input::open(path, sheet, encoding)?, None)),
    }
}
