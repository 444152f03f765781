//! The one interface both backends serve: every operation of [`Store`] and
//! [`Import`] is dispatched to SQLite or PostgreSQL here, so callers never
//! know which one they talk to. Each backend has an inherent method of the
//! same name and signature; a backend missing one does not compile.

use super::approvals::{ApprovalEvent, Changes, NewApproval, PayoutSet, Preparer};
use super::errors::{ImportError, WriteError};
use super::overrides::{NewOverride, Overrides};
use super::person::PersonQuery;
use super::pg::{self, Pg};
use super::sqlite::{self, Sqlite};
use super::target::Db;
use super::types::{
    Booked, CancelOutcome, Earlier, FailedRow, NewRun, ReportRow, ReportTarget, RetryLink, RunInfo,
    Totals, Transition, Unresolved, Work,
};
use super::writer::GroupOp;
use crate::machine::State;
use crate::payout::Payout;
use anyhow::Result;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The checkpoint, whichever backend holds it. One lives per command, so
/// the size of the larger variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Store {
    Sqlite(Sqlite),
    Postgres(Pg),
}

/// A new run being recorded (one transaction; dropping it rolls back).
#[allow(clippy::large_enum_variant)] // one at a time, as `Store`
pub enum Import<'a> {
    Sqlite(sqlite::Import<'a>),
    Postgres(pg::Import<'a>),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::Sqlite(s) => f.debug_tuple("Store::Sqlite").field(&s.path()).finish(),
            Store::Postgres(p) => f.debug_tuple("Store::Postgres").field(&p.target()).finish(),
        }
    }
}

/// Calls the method of whichever backend holds the store.
macro_rules! dispatch {
    ($self:expr, $b:ident => $call:expr) => {
        match $self {
            Store::Sqlite($b) => $call,
            Store::Postgres($b) => $call,
        }
    };
}

macro_rules! dispatch_import {
    ($self:expr, $b:ident => $call:expr) => {
        match $self {
            Import::Sqlite($b) => $call,
            Import::Postgres($b) => $call,
        }
    };
}

impl Store {
    /// Opens (creating if needed) the SQLite database at `path`.
    pub fn open(path: &Path) -> Result<Store> {
        Ok(Store::Sqlite(Sqlite::open(path)?))
    }

    /// Opens the checkpoint `--db` names: a file or a PostgreSQL database.
    pub fn connect(db: &Db) -> Result<Store> {
        match db {
            Db::File(path) => Store::open(path),
            Db::Postgres(target) => Ok(Store::Postgres(Pg::connect(target)?)),
        }
    }

    pub(crate) fn commit_group(
        &mut self,
        group: &[GroupOp<'_>],
    ) -> Result<Vec<Vec<Work>>, WriteError> {
        dispatch!(self, b => b.commit_group(group))
    }

    /// Applies transitions in one transaction (outside the writer thread).
    pub fn apply(&mut self, ts: &[Transition]) -> Result<(), WriteError> {
        dispatch!(self, b => b.apply(ts))
    }

    pub fn mark_finished(&mut self, run_id: i64) -> Result<()> {
        dispatch!(self, b => b.mark_finished(run_id))
    }

    /// Payouts as sent, for matching a provider's statement.
    pub fn booked(&self, run_id: Option<i64>) -> Result<Vec<Booked>> {
        dispatch!(self, b => b.booked(run_id))
    }

    /// Points a run that never sent anything at another provider URL.
    pub fn repoint_unsent_run(&mut self, run_id: i64, provider: &str) -> Result<bool> {
        dispatch!(self, b => b.repoint_unsent_run(run_id, provider))
    }

    /// Cancels every payout of the run whose execute was never sent.
    pub fn cancel_run(&mut self, run_id: i64) -> Result<CancelOutcome> {
        dispatch!(self, b => b.cancel_run(run_id))
    }

    pub fn unfinished_run_of(
        &self,
        file_sha256: &str,
        label: &str,
        sheet: &str,
    ) -> Result<Option<RunInfo>> {
        dispatch!(self, b => b.unfinished_run_of(file_sha256, label, sheet))
    }

    pub fn payout_count(&self, run_id: i64) -> Result<u64> {
        dispatch!(self, b => b.payout_count(run_id))
    }

    pub fn skipped_count(&self, run_id: i64) -> Result<u64> {
        dispatch!(self, b => b.skipped_count(run_id))
    }

    pub fn failed_rows(&self, run_id: i64) -> Result<Vec<FailedRow>> {
        dispatch!(self, b => b.failed_rows(run_id))
    }

    /// Starts importing a new run; nothing is visible until
    /// [`Import::commit`].
    pub fn begin_import(&mut self, new: &NewRun<'_>) -> Result<Import<'_>> {
        Ok(match self {
            Store::Sqlite(b) => Import::Sqlite(b.begin_import(new)?),
            Store::Postgres(b) => Import::Postgres(b.begin_import(new)?),
        })
    }

    pub fn set_report_target(&mut self, run_id: i64, t: &ReportTarget) -> Result<()> {
        dispatch!(self, b => b.set_report_target(run_id, t))
    }

    pub fn report_target(&self, run_id: i64) -> Result<Option<ReportTarget>> {
        dispatch!(self, b => b.report_target(run_id))
    }

    pub fn find_run(&self, identity: &str) -> Result<Option<RunInfo>> {
        dispatch!(self, b => b.find_run(identity))
    }

    pub fn run(&self, id: i64) -> Result<Option<RunInfo>> {
        dispatch!(self, b => b.run(id))
    }

    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        dispatch!(self, b => b.runs())
    }

    pub fn latest_run(&self) -> Result<Option<RunInfo>> {
        dispatch!(self, b => b.latest_run())
    }

    pub fn works_in_state(&self, run_id: i64, state: State) -> Result<Vec<Work>> {
        dispatch!(self, b => b.works_in_state(run_id, state))
    }

    pub fn open_count(&self, run_id: i64) -> Result<u64> {
        dispatch!(self, b => b.open_count(run_id))
    }

    pub fn state_counts(&self, run_id: i64) -> Result<BTreeMap<State, u64>> {
        dispatch!(self, b => b.state_counts(run_id))
    }

    pub fn totals(&self, run_id: i64) -> Result<Totals> {
        dispatch!(self, b => b.totals(run_id))
    }

    /// Every row of the run's report, in file order.
    pub fn for_each_report_row(
        &self,
        run_id: i64,
        f: impl FnMut(&ReportRow) -> Result<()>,
    ) -> Result<()> {
        dispatch!(self, b => b.for_each_report_row(run_id, f))
    }

    pub fn unresolved(&self, run_id: Option<i64>) -> Result<Vec<Unresolved>> {
        dispatch!(self, b => b.unresolved(run_id))
    }

    pub fn payout_by_transaction_id(&self, transaction_id: &str) -> Result<Option<Unresolved>> {
        dispatch!(self, b => b.payout_by_transaction_id(transaction_id))
    }

    pub fn audit(&self, run_id: i64) -> Result<Vec<[String; 6]>> {
        dispatch!(self, b => b.audit(run_id))
    }

    /// Gives payouts recorded before account keys existed the key `key`
    /// computes from their account; how many.
    pub fn fill_account_keys(&mut self, key: &mut dyn FnMut(&str) -> String) -> Result<u64> {
        dispatch!(self, b => b.fill_account_keys(key))
    }

    /// What a run was allowed beyond the rules (second payments, a totals
    /// row used, rows skipped as already paid): for the approval page, the
    /// report summary and the audit trail.
    pub fn overrides(&self, run_id: i64) -> Result<Overrides> {
        dispatch!(self, b => b.overrides(run_id))
    }

    /// Who imported the run (`None`: before payrun recorded it).
    pub fn preparer(&self, run_id: i64) -> Result<Option<Preparer>> {
        dispatch!(self, b => b.preparer(run_id))
    }

    /// The run's payout set as it stands: what an approval covers.
    pub fn payout_set(&self, run_id: i64) -> Result<PayoutSet> {
        dispatch!(self, b => b.payout_set(run_id))
    }

    /// Every approval and revocation of the run, oldest first.
    pub fn approval_events(&self, run_id: i64) -> Result<Vec<ApprovalEvent>> {
        dispatch!(self, b => b.approval_events(run_id))
    }

    /// Records an approval with the payout set it covers (`None`: the run
    /// no longer holds the set shown to the approver), or a revocation.
    pub fn record_approval(&mut self, new: &NewApproval<'_>) -> Result<Option<ApprovalEvent>> {
        dispatch!(self, b => b.record_approval(new))
    }

    /// How the run's payouts differ from those an approval covered.
    pub fn approval_changes(&self, approval_id: i64, run_id: i64) -> Result<Changes> {
        dispatch!(self, b => b.approval_changes(approval_id, run_id))
    }

    /// An operator's decision on one payout, with its audit line.
    pub fn resolve(
        &mut self,
        id: i64,
        from: State,
        to: State,
        action: &str,
        reason: &str,
        code: &str,
    ) -> Result<()> {
        dispatch!(self, b => b.resolve(id, from, to, action, reason, code))
    }
}

impl Import<'_> {
    pub fn run_id(&self) -> i64 {
        dispatch_import!(self, b => b.run_id())
    }

    /// Adds a payout as `pending`; its payout id (`None`: the id is taken
    /// and the import will be refused).
    pub fn add(&mut self, p: &Payout, transaction_id: &str) -> Result<Option<i64>> {
        dispatch_import!(self, b => b.add(p, transaction_id))
    }

    /// Adds a re-payment of a failed payout, linked to it.
    pub fn add_retry(
        &mut self,
        p: &Payout,
        transaction_id: &str,
        link: RetryLink,
    ) -> Result<Option<i64>> {
        dispatch_import!(self, b => b.add_retry(p, transaction_id, link))
    }

    /// Refuses the import for a reason found by the caller: one line among
    /// the duplicate-id lines.
    pub fn conflict(&mut self, line: String) {
        dispatch_import!(self, b => b.conflict(line))
    }

    /// Commits the import, or refuses it (rolling back).
    pub fn commit(self) -> Result<i64, ImportError> {
        dispatch_import!(self, b => b.commit())
    }

    /// The payout of an earlier run holding `transaction_id`, if any.
    pub fn earlier(&self, transaction_id: &str) -> Result<Option<Earlier>> {
        dispatch_import!(self, b => b.earlier(transaction_id))
    }

    /// Earlier payouts to the person of `q` the guard compares a row
    /// with (one indexed query).
    pub fn same_person(&self, q: &PersonQuery<'_>) -> Result<Vec<Earlier>> {
        dispatch_import!(self, b => b.same_person(q))
    }

    /// [`Import::earlier`] of a batch of ids at once (one round trip on
    /// PostgreSQL): the ids found, each with its payout.
    pub fn earlier_many(&self, transaction_ids: &[String]) -> Result<HashMap<String, Earlier>> {
        dispatch_import!(self, b => b.earlier_many(transaction_ids))
    }

    /// [`Import::same_person`] of a batch of queries at once (one round
    /// trip on PostgreSQL), in order.
    pub fn same_person_many(&self, qs: &[PersonQuery<'_>]) -> Result<Vec<Vec<Earlier>>> {
        dispatch_import!(self, b => b.same_person_many(qs))
    }

    /// Records what this run is allowed beyond the rules.
    pub fn add_override(&mut self, o: NewOverride) -> Result<()> {
        dispatch_import!(self, b => b.add_override(o))
    }

    /// Records who is importing this run (four eyes: they may not
    /// approve it).
    pub fn set_preparer(&mut self, p: &crate::who::Person) -> Result<()> {
        dispatch_import!(self, b => b.set_preparer(p))
    }

    pub fn payouts_of(&self, run_id: i64) -> Result<u64> {
        dispatch_import!(self, b => b.payouts_of(run_id))
    }

    pub fn add_skipped(&mut self, row: u64, payout_id: i64) -> Result<()> {
        dispatch_import!(self, b => b.add_skipped(row, payout_id))
    }
}
