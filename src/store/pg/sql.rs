//! SQL shared by the PostgreSQL operations: the column lists and row
//! mappers (the same columns, in the same order, as `sqlite/sql.rs`), and
//! states as text through the state machine, so a name payrun does not know
//! is an error, never coerced.

use crate::machine::State;
use crate::provider::wire::{Beneficiary, InitiateRequest, Sender};
use crate::store::types::{RunInfo, Unresolved, Work, merged_sender};
use anyhow::{Context, Result};
use postgres::GenericClient;
use postgres::Row;

#[allow(unused_imports)] // used by the operations being ported
pub(crate) use crate::store::sqlite::state_list;

pub(super) const RUN_COLS: &str = "id, identity, file_sha256, label, file_path, provider, rows_total, rows_rejected, created_at, finished_at, period, sheet, id_scheme";

/// A state column, read through the state machine.
pub(super) fn state(r: &Row, idx: usize) -> Result<State> {
    let name: String = r.try_get(idx)?;
    Ok(State::parse(&name)?)
}

pub(super) fn run_from_row(r: &Row) -> Result<RunInfo> {
    Ok(RunInfo {
        id: r.try_get(0)?,
        identity: r.try_get(1)?,
        file_sha256: r.try_get(2)?,
        label: r.try_get(3)?,
        file_path: r.try_get(4)?,
        provider: r.try_get(5)?,
        rows_total: r.try_get::<_, i64>(6)? as u64,
        rows_rejected: r.try_get::<_, i64>(7)? as u64,
        created_at: r.try_get(8)?,
        finished_at: r.try_get(9)?,
        period: r.try_get(10)?,
        sheet: r.try_get(11)?,
        id_scheme: r.try_get(12)?,
    })
}

/// Columns of `payouts` that make an [`Unresolved`].
pub(super) const UNRESOLVED_COLS: &str =
    "id, run_id, row, transaction_id, account_id, amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, '')";

pub(super) fn unresolved_from_row(r: &Row) -> Result<Unresolved> {
    Ok(Unresolved {
        id: r.try_get(0)?,
        run_id: r.try_get(1)?,
        row: r.try_get::<_, i64>(2)? as u64,
        transaction_id: r.try_get(3)?,
        account_id: r.try_get(4)?,
        amount: r.try_get(5)?,
        currency: r.try_get(6)?,
        state: state(r, 7)?,
        provider_code: r.try_get(8)?,
        provider_message: r.try_get(9)?,
    })
}

/// Columns of `payouts` that make a [`Work`].
pub(super) const WORK_COLS: &str =
    "id, row, state, transaction_id, wire_amount, currency, method, description,
    account_id, b_first, b_last, b_phone, b_email, sender_json, attempts";

/// The sender configured when the run was imported.
pub(super) fn run_sender(c: &mut impl GenericClient, run_id: i64) -> Result<Sender> {
    let json: String = c
        .query_one("SELECT sender_json FROM runs WHERE id = $1", &[&run_id])?
        .try_get(0)?;
    serde_json::from_str(&json).context("corrupt sender in the database")
}

pub(super) fn work_from_row(r: &Row, run_sender: &Sender) -> Result<Work> {
    let sender = merged_sender(run_sender, r.try_get::<_, Option<String>>(13)?.as_deref())?;
    Ok(Work {
        id: r.try_get(0)?,
        row: r.try_get::<_, i64>(1)? as u64,
        state: state(r, 2)?,
        request: InitiateRequest {
            transaction_id: r.try_get(3)?,
            amount: r.try_get(4)?,
            currency: r.try_get(5)?,
            payout_method_id: r.try_get(6)?,
            description: r.try_get(7)?,
            account_id: r.try_get(8)?,
            sender,
            beneficiary: Beneficiary {
                firstname: r.try_get(9)?,
                lastname: r.try_get(10)?,
                phone: r.try_get(11)?,
                email: r.try_get(12)?,
            },
        },
        attempts: r.try_get::<_, i64>(14)?.try_into().unwrap_or(u32::MAX),
    })
}
