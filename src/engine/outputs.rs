//! The files `payrun run` writes, named once — the report and its
//! summary, `rejected.csv`, `failed.csv`, and after `--initiate-only` the
//! run's approval files `approval-run-N.csv` and `approval-run-N.html` —
//! the check that none is a file the run reads or keeps nor another of
//! them (`report::guard`, made before anything is written or sent), and
//! the writing of those that come after the payouts (docs/reports.md).
//!
//! The approval files carry the run's number: the page a manager is
//! signing for one run is never replaced by a later run's.

use super::identity::Snapshot;
use super::import::sibling;
use super::{ProviderChoice, Settings, approval, failed, verdict};
use crate::report::{self, guard::Files};
use crate::store::{Overrides, RunInfo, Store, Tally, Totals};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `rejected.csv`, beside the report.
pub const REJECTED_FILE: &str = "rejected.csv";
/// `failed.csv`, beside the report.
pub const FAILED_FILE: &str = "failed.csv";

/// The control totals of run `run_id` beside `report`: `approval-run-N.csv`.
pub fn approval_totals(report: &Path, run_id: i64) -> PathBuf {
    sibling(report, &format!("approval-run-{run_id}.csv"))
}

/// The approval page of run `run_id` beside `report`:
/// `approval-run-N.html`.
pub fn approval_page(report: &Path, run_id: i64) -> PathBuf {
    sibling(report, &format!("approval-run-{run_id}.html"))
}

/// Refuses, before anything is written or sent, an output of the run that
/// is one of its inputs (the payroll, the database and its side files,
/// the config, the key file, the provider profile, the in-process
/// sandbox's books), another of its outputs, or cannot be written. With
/// `run` known, under `--initiate-only`, its approval files too.
pub fn check(settings: &Settings, run: Option<i64>) -> Result<()> {
    let mut files = Files::new();
    files
        .input("payroll", &settings.file)
        .config(&settings.config)
        .checkpoint(&settings.db);
    if let (ProviderChoice::Sandbox, Some(db)) = (&settings.provider, settings.db.file()) {
        files.input("sandbox's books", &super::sandbox_state_file(db));
    }
    let report = &settings.report;
    files
        .output("report", report)
        .output("summary", &report::summary_path(report))
        .output("rejected rows", &sibling(report, REJECTED_FILE))
        .output("failed rows", &sibling(report, FAILED_FILE));
    if let (Some(id), true) = (run, settings.engine.initiate_only) {
        files
            .output("control totals", &approval_totals(report, id))
            .output("approval page", &approval_page(report, id));
    }
    files.check()?;
    Ok(())
}

/// What the files written after the payouts say.
pub struct Written {
    pub totals: Totals,
    pub verdict: verdict::Verdict,
    /// `--initiate-only`: the control totals and where they went.
    pub approval: Option<(PathBuf, BTreeMap<String, Tally>)>,
    /// `failed.csv`, when written.
    pub failed: Option<PathBuf>,
    /// What the run was made with that differs from the config.
    pub overrides: Overrides,
}

/// Writes the report (recording where), its summary, the approval files
/// (`--initiate-only`) and `failed.csv`; each whole or not at all. A
/// failure names the command that writes the report again: the payouts
/// are recorded whatever happens to the files.
pub fn write(
    store: &mut Store,
    run: &RunInfo,
    settings: &Settings,
    snapshot: &Snapshot,
) -> Result<Written> {
    let again = || {
        format!(
            "cannot write the files of run {id}; every payout is recorded in the database: once \
             the cause is fixed, write the report with `payrun report --run {id} --out {}`",
            settings.report.display(),
            id = run.id
        )
    };
    let style = report::ReportStyle::of_input(&settings.file, settings.config.language());
    // The verdict is read from the rows in the pass that writes the report;
    // nothing changes them between the two.
    let initiate_only = settings.engine.initiate_only;
    let mut verdict = verdict::Verdict::default();
    let totals = report::write_and_record(store, run.id, &settings.report, &style, &mut |r| {
        verdict.add(r, initiate_only)
    })
    .with_context(again)?;
    // Payouts settled by a re-send on the way: the verdict says so.
    let resent: std::collections::BTreeSet<String> = store
        .audit(run.id)?
        .into_iter()
        .filter(|l| l[2] == "resend")
        .map(|[tx, ..]| tx)
        .collect();
    verdict.resent = resent.len() as u64;
    let overrides = store.overrides(run.id)?;
    let approval = if initiate_only {
        let control = approval::control_totals(&totals);
        let path = approval_totals(&settings.report, run.id);
        approval::write_approval(&path, &control, &overrides.lines(), &style)
            .with_context(again)?;
        // The page a manager approves before anything is executed.
        let page = approval_page(&settings.report, run.id);
        report::html::write_approval(store, run.id, &page, style.language).with_context(again)?;
        Some((path, control))
    } else {
        None
    };
    let failed_path = sibling(&settings.report, FAILED_FILE);
    let failed = if run.file_sha256 == snapshot.sha256 {
        failed::write(
            &failed_path,
            &snapshot.path,
            settings.sheet.as_deref(),
            &settings.config,
            &store.failed_rows(run.id)?,
        )
        .with_context(again)?
    } else {
        // A resumed copy whose rows may sit elsewhere: no failed.csv
        // rather than one with the wrong rows.
        let _ = std::fs::remove_file(&failed_path);
        None
    };
    Ok(Written {
        totals,
        verdict,
        approval,
        failed,
        overrides,
    })
}
