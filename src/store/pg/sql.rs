//! SQL shared by the PostgreSQL operations: how the driver reads one column
//! for the row mappers of `store/rows.rs` (shared with SQLite, so both
//! backends read the same columns the same way), states as text through the
//! state machine (a name payrun does not know is an error, never coerced),
//! and the run's sender.

use crate::machine::State;
use crate::provider::wire::Sender;
use crate::store::rows::Cols;
pub(super) use crate::store::rows::{RUN_COLS, UNRESOLVED_COLS, WORK_COLS};
use anyhow::{Context, Result};
use postgres::GenericClient;
use postgres::Row;

pub(crate) use crate::store::sqlite::state_list;

/// How PostgreSQL reads one column, for the mappers of `store/rows.rs`.
impl Cols for Row {
    type Error = anyhow::Error;
    fn text(&self, i: usize) -> Result<String> {
        Ok(self.try_get(i)?)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        Ok(self.try_get(i)?)
    }
    fn int(&self, i: usize) -> Result<i64> {
        Ok(self.try_get(i)?)
    }
    fn flag(&self, i: usize) -> Result<bool> {
        Ok(self.try_get(i)?)
    }
    fn invalid(&self, i: usize, why: String) -> anyhow::Error {
        anyhow::anyhow!("column {i}: {why}")
    }
}

/// A state column, read through the state machine.
pub(super) fn state(r: &Row, idx: usize) -> Result<State> {
    r.col(idx)
}

/// The sender configured when the run was imported.
pub(super) fn run_sender(c: &mut impl GenericClient, run_id: i64) -> Result<Sender> {
    let json: String = c
        .query_one("SELECT sender_json FROM runs WHERE id = $1", &[&run_id])?
        .try_get(0)?;
    serde_json::from_str(&json).context("corrupt sender in the database")
}
