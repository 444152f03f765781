//! SQL shared by the store's reads and writes: the run's rowid range, the
//! timestamp expression, state lists built from the state machine's named
//! sets, and how SQLite reads a column for the row mappers of
//! `store/rows.rs`. A state name the state machine does not know is an error
//! here, never coerced to some other state.

use crate::machine::State;
use crate::provider::wire::Sender;
use crate::store::rows::{self, Cols};
pub(super) use crate::store::rows::{RUN_COLS, UNRESOLVED_COLS, WORK_COLS};
use crate::store::types::{RunInfo, Unresolved};
use anyhow::{Context, Result};
use rusqlite::Connection;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, Type, ValueRef};

/// The payouts of run `?1`, as a rowid range (see the `runs` table).
pub(super) const RUN_RANGE: &str =
    "id BETWEEN (SELECT COALESCE(first_payout, 1) FROM runs WHERE id = ?1)
                     AND (SELECT COALESCE(last_payout, 0) FROM runs WHERE id = ?1)";

/// SQL expression for "now" as an RFC 3339 UTC timestamp with milliseconds.
pub(super) const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

/// A set of states as the inside of an SQL `IN (…)` list, built from one of
/// the state machine's named sets so no query re-types state names. Spliced
/// rather than bound because the list is a constant of the program (names
/// from [`State::as_str`], never input) and a constant statement caches.
pub(crate) fn state_list(states: &[State]) -> String {
    states
        .iter()
        .map(|s| format!("'{}'", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// States are stored as their names; reading one payrun does not know is a
/// conversion error, never a fallback.
impl FromSql for State {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let name = value.as_str()?;
        State::parse(name).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

impl ToSql for State {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

/// "Now" as SQLite formats it, read once per group commit so every row of
/// the group carries the same timestamp and no statement calls strftime.
pub(super) fn sql_now(conn: &Connection) -> Result<String> {
    Ok(conn
        .prepare_cached(&format!("SELECT {NOW}"))?
        .query_row([], |r| r.get(0))?)
}

/// How SQLite reads one column, for the mappers of `store/rows.rs`.
impl Cols for rusqlite::Row<'_> {
    type Error = rusqlite::Error;
    fn text(&self, i: usize) -> rusqlite::Result<String> {
        self.get(i)
    }
    fn opt_text(&self, i: usize) -> rusqlite::Result<Option<String>> {
        self.get(i)
    }
    fn int(&self, i: usize) -> rusqlite::Result<i64> {
        self.get(i)
    }
    fn flag(&self, i: usize) -> rusqlite::Result<bool> {
        self.get(i)
    }
    fn invalid(&self, i: usize, why: String) -> rusqlite::Error {
        rusqlite::Error::FromSqlConversionFailure(i, Type::Text, why.into())
    }
}

pub(super) fn run_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunInfo> {
    rows::run_info(r)
}

pub(super) fn unresolved_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Unresolved> {
    rows::unresolved(r)
}

/// The sender configured when the run was imported.
pub(super) fn run_sender(conn: &Connection, run_id: i64) -> Result<Sender> {
    let json: String = conn
        .prepare_cached("SELECT sender_json FROM runs WHERE id = ?1")?
        .query_row([run_id], |r| r.get(0))?;
    serde_json::from_str(&json).context("corrupt sender in the database")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{NEEDS_OPERATOR, OPEN};

    #[test]
    fn state_lists_come_from_the_named_sets() {
        assert_eq!(
            state_list(OPEN),
            "'pending', 'initiating', 'initiated', 'executing', 'processing'"
        );
        assert_eq!(state_list(NEEDS_OPERATOR), "'unknown', 'processing'");
    }

    #[test]
    fn an_unknown_state_name_is_an_error_not_a_fallback() {
        let conn = Connection::open_in_memory().unwrap();
        let ok: State = conn
            .query_row("SELECT 'executing'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, State::Executing);
        let err = conn
            .query_row("SELECT 'settling'", [], |r| r.get::<_, State>(0))
            .unwrap_err();
        assert!(format!("{err}").contains("settling"), "{err}");
    }
}
