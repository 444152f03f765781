//! Import: a new run and its payouts in one transaction (PostgreSQL).

use super::{Pg, todo};
use crate::machine::State;
use crate::payout::Payout;
use crate::store::errors::ImportError;
use crate::store::types::{Earlier, NewRun};
use anyhow::Result;

impl Pg {
    pub fn begin_import(&mut self, _new: &NewRun<'_>) -> Result<Import<'_>> {
        todo()
    }
}

/// An import in progress.
pub struct Import<'a> {
    _pg: &'a mut Pg,
}

impl Import<'_> {
    pub fn run_id(&self) -> i64 {
        0
    }

    pub fn add(&mut self, _p: &Payout, _transaction_id: &str) -> Result<()> {
        todo()
    }

    pub fn add_retry(&mut self, _p: &Payout, _transaction_id: &str, _retry_of: i64) -> Result<()> {
        todo()
    }

    pub fn conflict(&mut self, _line: String) {}

    pub fn commit(self) -> Result<i64, ImportError> {
        Err(ImportError::Database(anyhow::anyhow!(
            "the PostgreSQL store is not complete yet"
        )))
    }

    pub fn earlier(&self, _transaction_id: &str) -> Result<Option<Earlier>> {
        todo()
    }

    pub fn recent_payouts(&self, _window_days: u32, _states: &[State]) -> Result<Vec<Earlier>> {
        todo()
    }

    pub fn payouts_of(&self, _run_id: i64) -> Result<u64> {
        todo()
    }

    pub fn add_skipped(&mut self, _row: u64, _payout_id: i64) -> Result<()> {
        todo()
    }
}
