//! SQL shared by the store's reads and writes: the run's rowid range, the
//! timestamp expression, state lists built from the state machine's named
//! sets, and the mapping of rows to [`RunInfo`], [`Work`] and
//! [`Unresolved`]. A state name the state machine does not know is an error
//! here, never coerced to some other state.

use crate::machine::State;
use crate::provider::wire::{Beneficiary, InitiateRequest, Sender};
use crate::store::types::{RunInfo, Unresolved, Work, merged_sender};
use anyhow::{Context, Result};
use rusqlite::Connection;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

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

pub(super) const RUN_COLS: &str = "id, identity, file_sha256, label, file_path, provider, rows_total, rows_rejected, created_at, finished_at, period, sheet, id_scheme";

pub(super) fn run_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunInfo> {
    Ok(RunInfo {
        id: r.get(0)?,
        identity: r.get(1)?,
        file_sha256: r.get(2)?,
        label: r.get(3)?,
        file_path: r.get(4)?,
        provider: r.get(5)?,
        rows_total: r.get::<_, i64>(6)? as u64,
        rows_rejected: r.get::<_, i64>(7)? as u64,
        created_at: r.get(8)?,
        finished_at: r.get(9)?,
        period: r.get(10)?,
        sheet: r.get(11)?,
        id_scheme: r.get(12)?,
    })
}

/// Columns of `payouts` that make an [`Unresolved`], in the order
/// [`unresolved_from_row`] reads.
pub(super) const UNRESOLVED_COLS: &str =
    "id, run_id, row, transaction_id, account_id, amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, '')";

pub(super) fn unresolved_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Unresolved> {
    Ok(Unresolved {
        id: r.get(0)?,
        run_id: r.get(1)?,
        row: r.get::<_, i64>(2)? as u64,
        transaction_id: r.get(3)?,
        account_id: r.get(4)?,
        amount: r.get(5)?,
        currency: r.get(6)?,
        state: r.get(7)?,
        provider_code: r.get(8)?,
        provider_message: r.get(9)?,
    })
}

/// Columns of `payouts` that make a [`Work`], in the order `work_from_row` reads.
pub(super) const WORK_COLS: &str =
    "id, row, state, transaction_id, wire_amount, currency, method, description,
    account_id, b_first, b_last, b_phone, b_email, sender_json, attempts";

/// The sender configured when the run was imported.
pub(super) fn run_sender(conn: &Connection, run_id: i64) -> Result<Sender> {
    let json: String = conn
        .prepare_cached("SELECT sender_json FROM runs WHERE id = ?1")?
        .query_row([run_id], |r| r.get(0))?;
    serde_json::from_str(&json).context("corrupt sender in the database")
}

pub(super) fn work_from_row(r: &rusqlite::Row<'_>, run_sender: &Sender) -> Result<Work> {
    let state: State = r.get(2)?;
    let sender = merged_sender(run_sender, r.get::<_, Option<String>>(13)?.as_deref())?;
    Ok(Work {
        id: r.get(0)?,
        row: r.get::<_, i64>(1)? as u64,
        state,
        request: InitiateRequest {
            transaction_id: r.get(3)?,
            amount: r.get(4)?,
            currency: r.get(5)?,
            payout_method_id: r.get(6)?,
            description: r.get(7)?,
            account_id: r.get(8)?,
            sender,
            beneficiary: Beneficiary {
                firstname: r.get(9)?,
                lastname: r.get(10)?,
                phone: r.get(11)?,
                email: r.get(12)?,
            },
        },
        attempts: r.get::<_, i64>(14)?.try_into().unwrap_or(u32::MAX),
    })
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
