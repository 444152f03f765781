//! The reconciliation report (README, "The report"): `report.csv` with one
//! line per input row and the per-currency summary `PATH.summary.csv`, each
//! written whole or not at all. Every cell taken from untrusted text goes
//! through [`crate::output::safe_cell`].

use crate::output::safe_cell;
use crate::payout::State;
use crate::store::{Store, Totals};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The report's header, fixed: reconciliation scripts key on it.
pub const REPORT_HEADER: [&str; 12] = [
    "row",
    "transaction_id",
    "account_id",
    "beneficiary",
    "amount",
    "currency",
    "state",
    "provider_code",
    "provider_message",
    "attempts",
    "initiated_at",
    "executed_at",
];

/// `PATH.summary.csv`.
pub fn summary_path(report: &Path) -> PathBuf {
    let mut s = report.as_os_str().to_owned();
    s.push(".summary.csv");
    PathBuf::from(s)
}

/// Writes the report and its summary for `run_id` (each through a temporary
/// file renamed into place, so a reader never sees half a report) and
/// returns the totals.
pub fn write_report(store: &Store, run_id: i64, path: &Path) -> Result<Totals> {
    write_atomically(path, |w| {
        let mut csv = csv::Writer::from_writer(w);
        csv.write_record(REPORT_HEADER)?;
        store.for_each_report_row(run_id, |r| {
            let row = r.row.to_string();
            let attempts = r.attempts.to_string();
            csv.write_record([
                row.as_str(),
                &safe_cell(&r.transaction_id),
                &safe_cell(&r.account_id),
                &safe_cell(&r.beneficiary),
                &r.amount,
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
    })?;
    let totals = store.totals(run_id)?;
    let rejected = store.run(run_id)?.map(|r| r.rows_rejected).unwrap_or(0);
    write_atomically(&summary_path(path), |w| {
        let mut csv = csv::Writer::from_writer(w);
        csv.write_record(["currency", "state", "count", "total"])?;
        for (currency, states) in &totals {
            for (state, t) in states {
                csv.write_record([
                    currency.as_str(),
                    state.as_str(),
                    &t.count.to_string(),
                    &t.total.to_string(),
                ])?;
            }
        }
        if rejected > 0 {
            csv.write_record(["", State::Rejected.as_str(), &rejected.to_string(), ""])?;
        }
        csv.flush()?;
        Ok(())
    })?;
    Ok(totals)
}

pub(crate) fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut std::fs::File) -> Result<()>,
) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    f(&mut file).with_context(|| format!("cannot write {}", tmp.display()))?;
    file.flush()?;
    file.sync_all()
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    drop(file);
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
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
