//! Import: the validated import of a file as a new run, all rows or none.
//! The re-run rules applied to each valid row are `import/rules.rs` (its
//! stable id, paid or re-paid or skipped, and the per-person guard); this
//! file runs the scan, fills the account keys of payouts recorded before
//! keys existed, records a totals row used as a control total, and returns
//! the verdict. Also the legacy guard against an edited copy of an
//! unfinished run imported under the old identity scheme.

mod rules;

use super::Settings;
use super::guard::Repeat;
use super::identity::Batch;
use crate::machine::SENT_OR_PAID;
use crate::payout::Payout;
use crate::provider::wire::Sender;
use crate::store::{self, Import, NewOverride, NewRun, OverrideKind, Store};
use crate::validate::{RowOutcome, ScanOptions, Summary};
use anyhow::{Context, Result};
pub use rules::NotFailed;
use rules::Rules;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Valid payouts travel from the validation thread to the importer in
/// batches (one wake-up per batch, not per row: per-row hand-offs cost more
/// in futex calls than the parsing itself), with a few batches in flight:
/// enough to absorb jitter, small enough to keep memory flat (~1 MiB).
const IMPORT_BATCH: usize = 512;
const IMPORT_CHANNEL: usize = 4;
/// Errors of rejected rows kept for the terminal; the full list is in
/// `rejected.csv`.
const SHOWN_ERRORS: usize = 10;

/// How an import ended.
#[derive(Debug)]
pub enum Imported {
    /// Every row valid and recorded: the new run's id.
    Run(i64),
    /// Rows were rejected: nothing was recorded.
    Rejected(Rejected),
    /// Transaction ids already used (in the file or the database): nothing
    /// was recorded. One line per offending id.
    DuplicateIds(Vec<String>),
    /// Rows repeating earlier payments of the same person (or each
    /// other): nothing was recorded.
    Repeats(Repeats),
    /// Rows of a `failed.csv` naming payouts that did not fail (paid,
    /// held or still open): nothing was recorded.
    NotFailed(NotFailed),
    /// Every row is a payout still open in this unfinished run, and the run
    /// has no other: the file is a copy of that run's (re-saved, renamed,
    /// moved), which is resumed. Nothing was recorded.
    CopyOf(i64),
}

/// Rows that repeat earlier payments: the first
/// [`super::guard::MAX_REPEATS_LISTED`], and how many in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeats {
    pub listed: Vec<Repeat>,
    pub total: u64,
}

/// Rows of the file that are payouts still open in an unfinished run, in a
/// file that is not simply a copy of that run's: resuming that run would
/// pay rows this file changed or removed, paying this file alone would
/// leave that run's open rows to a later resume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{rows} row(s) of {given} (first: row {first_row}) are payouts still open in unfinished run \
     {run_id} of {file_path} (started {created_at}), but the file is not the same set of payouts \
     as that run. Finish run {run_id} first by running its file again (a re-saved or renamed copy \
     with the same rows resumes it), then run this file: it pays only what is new or failed. \
     To go ahead now and leave those rows to run {run_id}, pass --new-run"
)]
pub struct OpenElsewhere {
    pub run_id: i64,
    pub file_path: String,
    pub created_at: String,
    pub rows: u64,
    pub first_row: u64,
    pub given: String,
}

/// Rows rejected by validation.
#[derive(Debug, Clone)]
pub struct Rejected {
    pub rows: u64,
    pub rejected: u64,
    /// The first few errors, for the terminal.
    pub first_errors: Vec<String>,
    /// Where every rejected row and its reasons are.
    pub rejected_path: PathBuf,
}

/// An unfinished run whose file has the name of the one given, but other
/// bytes: most likely that payroll, edited after a partial run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "run {run_id} of {file_path} (started {created_at}) is unfinished, with {done} payout(s) \
     initiated or paid, and {given} differs from the file it was started with. A changed file \
     is a new run with new transaction ids, so it would pay those rows again. Finish run \
     {run_id} by running its original file (or resolve it with `payrun reconcile`); if this \
     really is a separate payroll, pass --new-run"
)]
pub struct EditedCopy {
    pub run_id: i64,
    pub file_path: String,
    pub created_at: String,
    pub done: u64,
    pub given: String,
}

/// SHA-256 of the file's bytes, streamed.
pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// The identity of a run of the old scheme: the file's hash, or the hash of
/// hash and label (kept to find and resume such runs).
pub fn run_identity(file_sha256: &str, label: &str) -> String {
    if label.is_empty() {
        file_sha256.to_string()
    } else {
        let mut h = Sha256::new();
        h.update(file_sha256.as_bytes());
        h.update([0]);
        h.update(label.as_bytes());
        hex::encode(h.finalize())
    }
}

/// The transaction id of a row without one under the old scheme: fixed by
/// the run identity and the row number. Kept for the record: runs of that
/// scheme hold such ids; new runs use [`identity::derived_id`].
pub fn derived_transaction_id(identity: &str, row: u64) -> String {
    format!("pr-{}-{row:09}", &identity[..16.min(identity.len())])
}

/// Refuses a file whose name matches an unfinished run imported under the
/// old identity scheme (ids from the file's bytes and row numbers) but
/// whose bytes differ: its ids would differ from that run's, so running it
/// would pay again everyone that run already paid. Runs of the current
/// scheme are recognised row by row instead.
pub fn refuse_if_edited_copy(store: &Store, file: &Path) -> Result<()> {
    let Some(name) = file.file_name() else {
        return Ok(());
    };
    for run in store.runs()? {
        if run.id_scheme != 1
            || run.finished_at.is_some()
            || Path::new(&run.file_path).file_name() != Some(name)
        {
            continue;
        }
        let counts = store.state_counts(run.id)?;
        let done: u64 = SENT_OR_PAID
            .iter()
            .map(|s| counts.get(s).copied().unwrap_or(0))
            .sum();
        return Err(EditedCopy {
            run_id: run.id,
            file_path: run.file_path,
            created_at: run.created_at,
            done,
            given: file.display().to_string(),
        }
        .into());
    }
    Ok(())
}

/// `name` in the folder of `path`.
pub fn sibling(path: &Path, name: &str) -> PathBuf {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
        _ => PathBuf::from(name),
    }
}

/// Validates and imports the file (read from `input`, the snapshot of
/// `settings.file`) as a new run, all rows or none.
#[allow(clippy::too_many_arguments)]
pub fn import(
    store: &mut Store,
    settings: &Settings,
    input: &Path,
    file_sha: &str,
    identity: &str,
    batch: &Batch,
    provider: &str,
    rejected_path: &Path,
) -> Result<Imported> {
    let sender = Sender::from(&settings.config.sender);
    let file_path = settings.file.display().to_string();
    let new = NewRun {
        identity,
        file_sha256: file_sha,
        label: &settings.label,
        file_path: &file_path,
        provider,
        sender: &sender,
        period: &batch.period,
        sheet: &batch.sheet,
    };
    fill_account_keys(store, &settings.config)?;
    let mut imp = store.begin_import(&new)?;
    imp.set_preparer(&settings.preparer)?;
    let opts = ScanOptions {
        sheet: settings.sheet.clone(),
        rejected_path: Some(rejected_path.to_path_buf()),
        skip_hidden_rows: settings.skip_hidden_rows,
        assume_no_hidden_rows: settings.assume_no_hidden_rows,
    };
    let mut rules = Rules::new(batch, settings.allow_repeats, settings.repeat_window_days)?;
    let (summary, first_errors) = scan_into(&mut imp, settings, input, &opts, &mut rules)?;
    if summary.rejected == 0 {
        // The file holds only its header: remove it, so that a rejected.csv
        // beside the report always means rows to fix.
        let _ = std::fs::remove_file(rejected_path);
    } else {
        drop(imp);
        return Ok(Imported::Rejected(Rejected {
            rows: summary.rows,
            rejected: summary.rejected,
            first_errors,
            rejected_path: rejected_path.to_path_buf(),
        }));
    }
    let failed_file = summary
        .unused_columns
        .iter()
        .any(|h| crate::validate::columns::normalize(h) == "failurereason");
    let given = settings.file.display().to_string();
    if let Some(outcome) = rules.verdict(&imp, settings.new_run, &given, failed_file)? {
        return outcome;
    }
    if let Some(t) = &summary.control_total {
        imp.add_override(NewOverride {
            kind: OverrideKind::TotalsRow,
            row: t.row,
            payout_id: None,
            earlier_id: None,
            currency: Some(t.currency.clone()),
            amount: Some(t.total.normalize().to_string()),
            detail: format!(
                "row {} is a totals row ({} {}, the sum of the rows above): used as a control \
                 total, not paid",
                t.row, t.total, t.currency
            ),
        })?;
    }
    // The one place the store's duplicate-id error is told apart.
    match imp.commit() {
        Ok(id) => Ok(Imported::Run(id)),
        Err(store::ImportError::DuplicateIds(dups)) => Ok(Imported::DuplicateIds(dups.0)),
        Err(e) => Err(e.into()),
    }
}

/// Gives the payouts recorded before account keys existed their key,
/// under the configured phone region, before the guard looks people up
/// (once: later imports find none).
fn fill_account_keys(store: &mut Store, cfg: &crate::config::Config) -> Result<()> {
    let region = cfg
        .default_phone_region
        .as_deref()
        .map(crate::validate::fields::phone_region)
        .transpose()
        .map_err(anyhow::Error::msg)
        .context("invalid config")?;
    let mut phones = crate::validate::phone::Phones::new(region);
    store
        .fill_account_keys(&mut |account| {
            crate::validate::account::account_key(account, &mut phones)
        })
        .context("cannot give earlier payouts their account key")?;
    Ok(())
}

/// Validation (parsing, checks) runs on its own thread and hands valid
/// payouts over a bounded channel to this one, which applies the re-run
/// rules and inserts them: the two halves overlap, and the channel bound
/// keeps memory constant.
fn scan_into(
    imp: &mut Import<'_>,
    settings: &Settings,
    input: &Path,
    opts: &ScanOptions,
    rules: &mut Rules<'_>,
) -> Result<(Summary, Vec<String>)> {
    std::thread::scope(|scope| -> Result<_> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Payout>>(IMPORT_CHANNEL);
        let scanner = scope.spawn(move || scan(settings, input, opts, tx));
        let mut insert_error = None;
        for batch in rx.iter() {
            if let Err(e) = rules.add_batch(imp, &batch) {
                insert_error = Some(e);
                break;
            }
        }
        drop(rx);
        let (summary, first_errors) = scanner
            .join()
            .map_err(|_| anyhow::anyhow!("the validation thread panicked"))?;
        if let Some(e) = insert_error {
            return Err(e);
        }
        Ok((summary?, first_errors))
    })
}

/// The validation thread: scans the file, sends valid payouts in batches,
/// keeps the first errors.
fn scan(
    settings: &Settings,
    input: &Path,
    opts: &ScanOptions,
    tx: std::sync::mpsc::SyncSender<Vec<Payout>>,
) -> (Result<Summary>, Vec<String>) {
    let mut first_errors: Vec<String> = Vec::new();
    let mut batch = Vec::with_capacity(IMPORT_BATCH);
    let summary = crate::validate::scan(input, &settings.config, opts, |outcome| {
        match outcome {
            RowOutcome::Valid(p) => {
                batch.push(p);
                if batch.len() == IMPORT_BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(IMPORT_BATCH));
                    tx.send(full)
                        .map_err(|_| anyhow::anyhow!("import stopped"))?;
                }
            }
            RowOutcome::Rejected(r) => {
                if first_errors.len() < SHOWN_ERRORS {
                    first_errors.extend(r.errors.iter().map(|e| e.to_string()));
                }
            }
        }
        Ok(())
    });
    if summary.is_ok() && !batch.is_empty() {
        let _ = tx.send(batch);
    }
    first_errors.truncate(SHOWN_ERRORS);
    (summary, first_errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_and_derived_ids_are_deterministic() {
        let a = run_identity("abcdef0123456789abcdef", "");
        assert_eq!(a, "abcdef0123456789abcdef");
        let b = run_identity("abcdef0123456789abcdef", "june");
        assert_ne!(a, b);
        assert_eq!(b, run_identity("abcdef0123456789abcdef", "june"));
        assert_eq!(
            derived_transaction_id(&a, 7),
            "pr-abcdef0123456789-000000007"
        );
    }

    #[test]
    fn sibling_paths() {
        assert_eq!(
            sibling(Path::new("report.csv"), "rejected.csv"),
            PathBuf::from("rejected.csv")
        );
        assert_eq!(
            sibling(Path::new("/tmp/x/report.csv"), "rejected.csv"),
            PathBuf::from("/tmp/x/rejected.csv")
        );
    }
}
