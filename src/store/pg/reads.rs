//! Reads: runs, payouts to resume, counts, totals, report rows, unresolved, audit (PostgreSQL).

use super::{Pg, todo};
use crate::machine::State;
use crate::store::types::{ReportRow, RunInfo, Totals, Unresolved, Work};
use anyhow::Result;
use std::collections::BTreeMap;

impl Pg {
    pub fn find_run(&self, _identity: &str) -> Result<Option<RunInfo>> {
        todo()
    }

    pub fn run(&self, _id: i64) -> Result<Option<RunInfo>> {
        todo()
    }

    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        todo()
    }

    pub fn latest_run(&self) -> Result<Option<RunInfo>> {
        todo()
    }

    pub fn works_in_state(&self, _run_id: i64, _state: State) -> Result<Vec<Work>> {
        todo()
    }

    pub fn open_count(&self, _run_id: i64) -> Result<u64> {
        todo()
    }

    pub fn state_counts(&self, _run_id: i64) -> Result<BTreeMap<State, u64>> {
        todo()
    }

    pub fn totals(&self, _run_id: i64) -> Result<Totals> {
        todo()
    }

    pub fn for_each_report_row(
        &self,
        _run_id: i64,
        _f: impl FnMut(&ReportRow) -> Result<()>,
    ) -> Result<()> {
        todo()
    }

    pub fn unresolved(&self, _run_id: Option<i64>) -> Result<Vec<Unresolved>> {
        todo()
    }

    pub fn payout_by_transaction_id(&self, _transaction_id: &str) -> Result<Option<Unresolved>> {
        todo()
    }

    pub fn audit(&self, _run_id: i64) -> Result<Vec<[String; 6]>> {
        todo()
    }
}
