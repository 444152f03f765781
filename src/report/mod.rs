//! The reconciliation report (README, "The report"): `report.csv` with one
//! line per input row and the per-currency summary `PATH.summary.csv`, each
//! written whole or not at all. Every CSV cell taken from untrusted text
//! goes through [`crate::output::safe_cell`].
//!
//! Files: `style` (the payroll's delimiter, BOM and the header language),
//! `xlsx` (the workbook report), `html` (the approval page, with its
//! four-eyes section in `signoff_html`), `guard`
//! (refusing an output that would overwrite an input).

pub mod guard;
pub mod html;
pub mod signoff_html;
pub mod style;
pub mod xlsx;

// Every output is written through the one atomic writer (temporary file,
// sync, rename; the old file's permissions kept); kept here under its old
// name for the report's siblings.
use crate::output::safe_cell;
pub(crate) use crate::output::write_atomically;
use crate::payout::State;
use crate::store::{ReportRow, ReportTarget, SKIPPED, Store, Totals};
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};
pub use style::ReportStyle;

/// The report's header in its default language, fixed: reconciliation
/// scripts key on it (`report_language = "fr"` gives people French names).
pub const REPORT_HEADER: [&str; 12] = crate::lang::Language::En.text().report_header;

/// `PATH.summary.csv`.
pub fn summary_path(report: &Path) -> PathBuf {
    let mut s = report.as_os_str().to_owned();
    s.push(".summary.csv");
    PathBuf::from(s)
}

/// Writes the report and its summary for `run_id` in the default style
/// (`,`, no BOM, English header) and returns the totals.
pub fn write_report(store: &Store, run_id: i64, path: &Path) -> Result<Totals> {
    write_report_styled(store, run_id, path, &ReportStyle::default())
}

/// Whether `path` asks for a workbook (`.xlsx`, any case).
pub fn is_workbook(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("xlsx"))
}

/// Writes the report (a workbook when `path` ends in `.xlsx`, else CSV in
/// `style`) and its summary `PATH.summary.csv` for `run_id`, each through a
/// temporary file renamed into place so a reader never sees half a report,
/// and returns the totals.
pub fn write_report_styled(
    store: &Store,
    run_id: i64,
    path: &Path,
    style: &ReportStyle,
) -> Result<Totals> {
    write_report_seeing(store, run_id, path, style, &mut |_| {})
}

/// [`write_report_styled`], showing every report row once to `seen` (in
/// the pass that writes a CSV report; a workbook's rows in a pass of their
/// own): what a caller needs of the rows without reading them again.
fn write_report_seeing(
    store: &Store,
    run_id: i64,
    path: &Path,
    style: &ReportStyle,
    seen: &mut dyn FnMut(&ReportRow),
) -> Result<Totals> {
    if is_workbook(path) {
        let bytes = xlsx::workbook(store, run_id, style.language)?;
        write_atomically(path, |w| Ok(w.write_all(&bytes)?))?;
        store.for_each_report_row(run_id, |r| {
            seen(r);
            Ok(())
        })?;
    } else {
        write_csv_report(store, run_id, path, style, seen)?;
    }
    let totals = store.totals(run_id)?;
    let rejected = store.run(run_id)?.map(|r| r.rows_rejected).unwrap_or(0);
    let overrides = store.overrides(run_id)?;
    let approval = crate::signoff::standing_if_any(store, run_id)?;
    write_atomically(&summary_path(path), |w| {
        let mut csv = csv_writer(w, style)?;
        csv.write_record(style::summary_header(style.language))?;
        for (currency, states) in &totals {
            for (state, t) in states {
                csv.write_record([
                    currency.as_str(),
                    state.as_str(),
                    &t.count.to_string(),
                    &style.amount(&t.total.to_string()),
                ])?;
            }
        }
        if rejected > 0 {
            csv.write_record(["", State::Rejected.as_str(), &rejected.to_string(), ""])?;
        }
        // What the run was allowed beyond the rules, as lines of their own.
        let mut lines = override_lines(&overrides);
        lines.extend(approval_lines(approval.as_ref()));
        for [currency, what, count, total] in lines {
            csv.write_record([
                safe_cell(&currency).as_ref(),
                &safe_cell(&what),
                &count,
                &style.amount(&total),
            ])?;
        }
        csv.flush()?;
        Ok(())
    })?;
    Ok(totals)
}

/// The summary's lines for a run's overrides: (currency, what, count,
/// total) — rows skipped as already paid, second payments allowed, and the
/// totals row used as a control total (its currency and amount).
fn override_lines(o: &crate::store::Overrides) -> Vec<[String; 4]> {
    let mut out = Vec::new();
    if o.skipped_as_paid > 0 {
        let n = o.skipped_as_paid.to_string();
        out.push([String::new(), SKIPPED.to_string(), n, String::new()]);
    }
    if o.second_payments_total > 0 {
        let n = o.second_payments_total.to_string();
        out.push([String::new(), "second_payment".into(), n, String::new()]);
    }
    if let Some(t) = &o.totals_row {
        let currency = t.currency.clone().unwrap_or_default();
        let total = t.amount.clone().unwrap_or_default();
        out.push([currency, "totals_row".into(), String::new(), total]);
    }
    out
}

/// The summary's lines for the run's approval (four eyes): the figures
/// approved per currency and who approved them when, or why it does not
/// hold.
fn approval_lines(s: Option<&crate::signoff::Standing>) -> Vec<[String; 4]> {
    use crate::signoff::Standing;
    let Some(s) = s else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Standing::Approved(a) = s {
        for (cur, t) in &a.figures {
            let (count, total) = (t.count.to_string(), t.total.to_string());
            out.push([cur.clone(), "approved".into(), count, total]);
        }
        let by = format!("approved_by {} at {}", a.by.shown(), a.at);
        out.push([String::new(), by, String::new(), String::new()]);
    } else {
        let what = format!("approval_{}: {}", s.word(), s.describe());
        out.push([String::new(), what, String::new(), String::new()]);
    }
    out
}

/// Writes the report and records where and how, so `payrun reconcile` can
/// write it again after settling a payout.
///
/// Every report row is shown once to `seen`.
pub fn write_and_record(
    store: &mut Store,
    run_id: i64,
    path: &Path,
    style: &ReportStyle,
    seen: &mut dyn FnMut(&ReportRow),
) -> Result<Totals> {
    let totals = write_report_seeing(store, run_id, path, style, seen)?;
    // Absolute, so a later command from another directory finds it.
    let recorded = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    store.set_report_target(
        run_id,
        &ReportTarget {
            path: recorded,
            delimiter: style.delimiter,
            bom: style.bom,
            language: style::language_name(style.language).to_string(),
        },
    )?;
    Ok(totals)
}

/// Writes the recorded report of `run_id` again, in its recorded style.
/// `None` when the run has no recorded report (runs from before payrun
/// recorded it, or never reported). The recorded path (and its summary)
/// is checked first against `inputs` and the run's payroll, as any
/// output is: the file there may have changed since.
pub fn rewrite_recorded(
    store: &Store,
    run_id: i64,
    inputs: &guard::Files,
) -> Result<Option<PathBuf>> {
    let Some(t) = store.report_target(run_id)? else {
        return Ok(None);
    };
    let mut files = inputs.clone();
    if let Some(run) = store.run(run_id)? {
        files.payroll_of(&run);
    }
    files
        .output("report", &t.path)
        .output("summary", &summary_path(&t.path))
        .check()?;
    let style = ReportStyle {
        delimiter: t.delimiter,
        bom: t.bom,
        language: style::language_from_name(&t.language),
    };
    write_report_styled(store, run_id, &t.path, &style)?;
    Ok(Some(t.path))
}

/// A CSV writer in `style`: its delimiter, and the BOM first when asked.
fn csv_writer<W: Write>(mut w: W, style: &ReportStyle) -> Result<csv::Writer<W>> {
    if style.bom {
        w.write_all(style::BOM)?;
    }
    Ok(csv::WriterBuilder::new()
        .delimiter(style.delimiter)
        .from_writer(w))
}

fn write_csv_report(
    store: &Store,
    run_id: i64,
    path: &Path,
    style: &ReportStyle,
    seen: &mut dyn FnMut(&ReportRow),
) -> Result<()> {
    write_atomically(path, |w| {
        let mut csv = csv_writer(w, style)?;
        csv.write_record(style::report_header(style.language))?;
        store.for_each_report_row(run_id, |r| {
            seen(r);
            let row = r.row.to_string();
            let attempts = r.attempts.to_string();
            csv.write_record([
                row.as_str(),
                &safe_cell(&r.transaction_id),
                &safe_cell(&r.account_id),
                &safe_cell(&r.beneficiary),
                &style.amount(&r.amount),
                &r.currency,
                &r.state,
                &safe_cell(&r.provider_code),
                &safe_cell(&r.provider_message),
                &attempts,
                &r.initiated_at,
                &r.executed_at,
            ])?;
            Ok(())
        })?;
        csv.flush()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_path_is_beside_the_report() {
        assert_eq!(
            summary_path(Path::new("/tmp/r/report.csv")),
            PathBuf::from("/tmp/r/report.csv.summary.csv")
        );
    }
}
