//! Import: the validated import of a file as a new run, all rows or none.
//! Each valid row gets its stable id (`identity`), and the re-run rules
//! (`repeat`) decide whether it is paid, re-paid after a failure, listed as
//! already paid, or stops the import (a repeat, a reused id, a payout still
//! open in an unfinished run). Also the legacy guard against an edited copy
//! of an unfinished run imported under the old identity scheme.

use super::Settings;
use super::identity::{self, Batch, Occurrences, PayoutKey};
use super::repeat::{self, Guard, MAX_REPEATS_LISTED, Plan, Repeat};
use crate::machine::SENT_OR_PAID;
use crate::payout::Payout;
use crate::provider::wire::Sender;
use crate::store::{self, Import, NewRun, Store};
use crate::validate::{RowOutcome, ScanOptions, Summary};
use anyhow::{Context, Result};
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
    /// Rows repeating recent payouts (or each other): nothing was recorded.
    Repeats(Repeats),
    /// Every row is a payout still open in this unfinished run, and the run
    /// has no other: the file is a copy of that run's (re-saved, renamed,
    /// moved), which is resumed. Nothing was recorded.
    CopyOf(i64),
}

/// Rows that repeat earlier payouts: the first [`MAX_REPEATS_LISTED`], and
/// how many in all.
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
    let mut imp = store.begin_import(&new)?;
    let opts = ScanOptions {
        sheet: settings.sheet.clone(),
        rejected_path: Some(rejected_path.to_path_buf()),
        skip_hidden_rows: settings.skip_hidden_rows,
        assume_no_hidden_rows: settings.assume_no_hidden_rows,
    };
    let guard = if settings.allow_repeats {
        None
    } else {
        Some(Guard::new(imp.recent_payouts(
            settings.repeat_window_days,
            repeat::GUARDED,
        )?))
    };
    let mut rules = Rules {
        batch,
        guard,
        occurrences: Occurrences::default(),
        repeats: Repeats {
            listed: Vec::new(),
            total: 0,
        },
        fresh: 0,
        matched: std::collections::BTreeMap::new(),
        open: std::collections::BTreeMap::new(),
    };
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
    if let Some(outcome) = rules.verdict(&imp, settings)? {
        return outcome;
    }
    // The one place the store's duplicate-id error is told apart.
    match imp.commit() {
        Ok(id) => Ok(Imported::Run(id)),
        Err(store::ImportError::DuplicateIds(dups)) => Ok(Imported::DuplicateIds(dups.0)),
        Err(e) => Err(e.into()),
    }
}

/// The re-run rules applied row by row during an import, and what they
/// found.
struct Rules<'a> {
    batch: &'a Batch,
    /// `None` with `--allow-repeats`.
    guard: Option<Guard>,
    occurrences: Occurrences,
    repeats: Repeats,
    /// Rows to pay (new or re-paid).
    fresh: u64,
    /// Rows recognised as payouts of an earlier run, per run.
    matched: std::collections::BTreeMap<i64, u64>,
    /// Rows still open in an unfinished run, per run: (count, first row,
    /// that run's file and start).
    open: std::collections::BTreeMap<i64, (u64, u64, String, String)>,
}

impl Rules<'_> {
    /// Records one valid payout: paid, re-paid, skipped or refused.
    fn add(&mut self, imp: &mut Import<'_>, p: &Payout) -> Result<()> {
        let amount = p.amount.normalize().to_string();
        let (occurrence, same_file) =
            self.occurrences
                .next(&p.account_id, &p.currency, &amount, p.row);
        let key = PayoutKey {
            account: &p.account_id,
            amount: &amount,
            currency: &p.currency,
            method: &p.payout_method_id,
        };
        let base = match &p.transaction_id {
            Some(t) => t.clone(),
            None => identity::derived_id(&key, self.batch, occurrence),
        };
        let mut chain = Vec::new();
        let mut id = base.clone();
        while let Some(e) = imp.earlier(&id)? {
            let failed = repeat::failed(e.state);
            chain.push(e);
            if !failed {
                break;
            }
            id = repeat::retry_id(&base, chain.len() as u32 + 1);
        }
        let same_payout = chain.first().is_none_or(|e| {
            e.account_id == p.account_id
                && e.amount == amount
                && e.currency == p.currency
                && e.method == p.payout_method_id
        });
        let retry_of = match repeat::plan(&base, &chain, same_payout) {
            Plan::New => {
                imp.add(p, &base)?;
                None
            }
            Plan::Retry { id, of } => {
                imp.add_retry(p, &id, of)?;
                Some(of)
            }
            Plan::Skip(e) => {
                *self.matched.entry(e.run_id).or_default() += 1;
                return imp.add_skipped(p.row, e.payout_id);
            }
            Plan::Open(e) => {
                *self.matched.entry(e.run_id).or_default() += 1;
                let slot = self.open.entry(e.run_id).or_insert((
                    0,
                    p.row,
                    e.run_file.clone(),
                    e.run_created_at.clone(),
                ));
                slot.0 += 1;
                return imp.add_skipped(p.row, e.payout_id);
            }
            Plan::Conflict(e) => {
                imp.conflict(format!(
                    "row {}: transaction_id {base:?} is already used by run {} ({}, row {}) for \
                     another payout (account {}, {} {}); a transaction id pays once, ever: give \
                     this row a new transaction_id",
                    p.row, e.run_id, e.run_file, e.row, e.account_id, e.amount, e.currency
                ));
                return Ok(());
            }
        };
        self.fresh += 1;
        if let Some(guard) = &self.guard {
            let found = guard.check(
                p.row,
                &p.account_id,
                &p.currency,
                &amount,
                retry_of,
                same_file,
            );
            self.repeats.total += found.len() as u64;
            let room = MAX_REPEATS_LISTED.saturating_sub(self.repeats.listed.len());
            self.repeats.listed.extend(found.into_iter().take(room));
        }
        Ok(())
    }

    /// After every row: `Some` when the import must not be committed.
    fn verdict(&self, imp: &Import<'_>, settings: &Settings) -> Result<Option<Result<Imported>>> {
        if self.fresh == 0 && self.matched.len() == 1 && self.open.len() == 1 {
            let (&run_id, &rows) = self.matched.iter().next().expect("one run");
            if self.open.contains_key(&run_id) && imp.payouts_of(run_id)? == rows {
                return Ok(Some(Ok(Imported::CopyOf(run_id))));
            }
        }
        if !self.open.is_empty() && !settings.new_run {
            let (&run_id, (rows, first_row, file_path, created_at)) =
                self.open.iter().next().expect("one run");
            return Ok(Some(Err(OpenElsewhere {
                run_id,
                file_path: file_path.clone(),
                created_at: created_at.clone(),
                rows: *rows,
                first_row: *first_row,
                given: settings.file.display().to_string(),
            }
            .into())));
        }
        if self.repeats.total > 0 {
            return Ok(Some(Ok(Imported::Repeats(self.repeats.clone()))));
        }
        Ok(None)
    }
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
        'batches: for batch in rx.iter() {
            for p in batch {
                if let Err(e) = rules.add(imp, &p) {
                    insert_error = Some(e);
                    break 'batches;
                }
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
