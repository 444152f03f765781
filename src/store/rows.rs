//! Reading a result row, once for both databases: the column lists and the
//! mappers from a row to the store's types (a run, a payout to work on, an
//! earlier payout, an unresolved one, a report line). Each backend only
//! says how its driver reads one column ([`Cols`], implemented in
//! `sqlite/sql.rs` and `pg/sql.rs`); what the columns mean is written here,
//! so the two backends cannot drift apart.

use super::report_rows::{SkippedRow, beneficiary};
use super::types::{Earlier, FailedRow, ReportRow, RunInfo, Unresolved, Work, merged_sender};
use crate::machine::State;
use crate::provider::wire::{Beneficiary, InitiateRequest, Sender};

/// One column of a driver's row, by position.
pub(crate) trait Cols {
    type Error;
    fn text(&self, i: usize) -> Result<String, Self::Error>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn int(&self, i: usize) -> Result<i64, Self::Error>;
    fn flag(&self, i: usize) -> Result<bool, Self::Error>;
    /// Column `i` holds a value payrun cannot read (`why` says which).
    fn invalid(&self, i: usize, why: String) -> Self::Error;

    /// Column `i` as `T`.
    fn col<T: Col>(&self, i: usize) -> Result<T, Self::Error>
    where
        Self: Sized,
    {
        T::read(self, i)
    }
}

/// A type a column is read as.
pub(crate) trait Col: Sized {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error>;
}

impl Col for String {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error> {
        r.text(i)
    }
}

impl Col for Option<String> {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error> {
        r.opt_text(i)
    }
}

impl Col for i64 {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error> {
        r.int(i)
    }
}

impl Col for u64 {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error> {
        let n = r.int(i)?;
        u64::try_from(n).map_err(|_| r.invalid(i, format!("{n} is not a count")))
    }
}

impl Col for bool {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error> {
        r.flag(i)
    }
}

/// States are stored as their names; one payrun does not know is an
/// error, never a fallback.
impl Col for State {
    fn read<R: Cols>(r: &R, i: usize) -> Result<Self, R::Error> {
        let name = r.text(i)?;
        State::parse(&name).map_err(|e| r.invalid(i, e.to_string()))
    }
}

pub(crate) const RUN_COLS: &str = "id, identity, file_sha256, label, file_path, provider, rows_total, rows_rejected, created_at, finished_at, period, sheet, id_scheme";

pub(crate) fn run_info<R: Cols>(r: &R) -> Result<RunInfo, R::Error> {
    Ok(RunInfo {
        id: r.col(0)?,
        identity: r.col(1)?,
        file_sha256: r.col(2)?,
        label: r.col(3)?,
        file_path: r.col(4)?,
        provider: r.col(5)?,
        rows_total: r.col(6)?,
        rows_rejected: r.col(7)?,
        created_at: r.col(8)?,
        finished_at: r.col(9)?,
        period: r.col(10)?,
        sheet: r.col(11)?,
        id_scheme: r.col(12)?,
    })
}

/// Columns of `payouts` that make an [`Unresolved`].
pub(crate) const UNRESOLVED_COLS: &str =
    "id, run_id, row, transaction_id, account_id, amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, ''), wire_amount";

pub(crate) fn unresolved<R: Cols>(r: &R) -> Result<Unresolved, R::Error> {
    Ok(Unresolved {
        id: r.col(0)?,
        run_id: r.col(1)?,
        row: r.col(2)?,
        transaction_id: r.col(3)?,
        account_id: r.col(4)?,
        amount: r.col(5)?,
        currency: r.col(6)?,
        state: r.col(7)?,
        provider_code: r.col(8)?,
        provider_message: r.col(9)?,
        wire_amount: r.col(10)?,
    })
}

/// Columns of `payouts` that make a [`Work`].
pub(crate) const WORK_COLS: &str =
    "id, row, state, transaction_id, wire_amount, currency, method, description,
    account_id, b_first, b_last, b_phone, b_email, sender_json, attempts";

/// A payout to work on; its sender is the run's, merged with the row's own.
pub(crate) fn work<R: Cols>(r: &R, run_sender: &Sender) -> anyhow::Result<Work>
where
    anyhow::Error: From<R::Error>,
{
    let sender = merged_sender(run_sender, r.col::<Option<String>>(13)?.as_deref())?;
    Ok(Work {
        id: r.col(0)?,
        row: r.col(1)?,
        state: r.col(2)?,
        request: InitiateRequest {
            transaction_id: r.col(3)?,
            amount: r.col(4)?,
            currency: r.col(5)?,
            payout_method_id: r.col(6)?,
            description: r.col(7)?,
            account_id: r.col(8)?,
            sender,
            beneficiary: Beneficiary {
                firstname: r.col(9)?,
                lastname: r.col(10)?,
                phone: r.col(11)?,
                email: r.col(12)?,
            },
        },
        attempts: r.col::<i64>(14)?.try_into().unwrap_or(u32::MAX),
    })
}

/// Columns of an [`Earlier`], payouts `p` joined with runs `r`.
pub(crate) const EARLIER_COLS: &str =
    "p.id, p.run_id, p.row, p.transaction_id, p.state, p.account_id,
    p.amount, p.currency, p.method, r.file_path, r.created_at, r.finished_at IS NOT NULL,
    COALESCE(p.account_key, p.account_id), CASE WHEN r.period = '' THEN substr(r.created_at, 1, 7)
    ELSE r.period END, COALESCE(p.updated_at, r.created_at), COALESCE(p.origin_run, p.run_id)";

pub(crate) fn earlier<R: Cols>(r: &R) -> Result<Earlier, R::Error> {
    Ok(Earlier {
        payout_id: r.col(0)?,
        run_id: r.col(1)?,
        row: r.col(2)?,
        transaction_id: r.col(3)?,
        state: r.col(4)?,
        account_id: r.col(5)?,
        amount: r.col(6)?,
        currency: r.col(7)?,
        method: r.col(8)?,
        run_file: r.col(9)?,
        run_created_at: r.col(10)?,
        run_finished: r.col(11)?,
        account_key: r.col(12)?,
        period: r.col(13)?,
        at: r.col(14)?,
        origin_run: r.col(15)?,
    })
}

/// A report line of a row skipped as already paid, from the columns the
/// backends' skipped-rows query selects.
pub(crate) fn skipped_report_row<R: Cols>(r: &R) -> Result<ReportRow, R::Error> {
    Ok(SkippedRow {
        row: r.col(0)?,
        transaction_id: r.col(1)?,
        account_id: r.col(2)?,
        b_first: r.col(3)?,
        b_last: r.col(4)?,
        amount: r.col(5)?,
        currency: r.col(6)?,
        state: r.col(7)?,
        run_id: r.col(8)?,
        run_row: r.col(9)?,
        run_file: r.col(10)?,
        run_created_at: r.col(11)?,
    }
    .into_report_row())
}

/// A report line of a payout of the run, from the columns the backends'
/// report query selects.
pub(crate) fn report_row<R: Cols>(r: &R) -> Result<ReportRow, R::Error> {
    Ok(ReportRow {
        row: r.col(0)?,
        transaction_id: r.col(1)?,
        account_id: r.col(2)?,
        beneficiary: beneficiary(r.col(3)?, r.col(4)?),
        amount: r.col(5)?,
        currency: r.col(6)?,
        state: r.col::<State>(7)?.as_str().to_string(),
        provider_code: r.col(8)?,
        provider_message: r.col(9)?,
        attempts: r.col::<i64>(10)? as u32,
        initiated_at: r.col(11)?,
        executed_at: r.col(12)?,
    })
}

/// The failed payouts of a run (`range` selects its payouts), each with
/// the transaction id its row was first paid under: `retry_of` followed
/// back to the payout that has none. In payout order.
pub(crate) fn failed_sql(range: &str) -> String {
    format!(
        "WITH RECURSIVE up(id, parent, root) AS (
             SELECT id, retry_of, transaction_id FROM payouts
             WHERE {range} AND state IN ({failed})
             UNION ALL
             SELECT up.id, q.retry_of, q.transaction_id FROM up JOIN payouts q ON q.id = up.parent)
         SELECT p.row, p.state, COALESCE(p.provider_code, ''), COALESCE(p.provider_msg, ''),
             up.root
         FROM up JOIN payouts p ON p.id = up.id WHERE up.parent IS NULL ORDER BY p.id",
        failed = super::sqlite::state_list(&[State::InitiateFailed, State::ExecuteFailed])
    )
}

/// A row of [`failed_sql`]: the reason is the state, then the provider's
/// code and message when there are.
pub(crate) fn failed_row<R: Cols>(r: &R) -> Result<FailedRow, R::Error> {
    let state: State = r.col(1)?;
    let code: String = r.col(2)?;
    let msg: String = r.col(3)?;
    let reason = match (code.is_empty(), msg.is_empty()) {
        (true, true) => state.as_str().to_string(),
        (false, true) => format!("{state}: {code}"),
        (true, false) => format!("{state}: {msg}"),
        (false, false) => format!("{state}: {code}: {msg}"),
    };
    Ok(FailedRow {
        row: r.col(0)?,
        reason,
        transaction_id: r.col(4)?,
    })
}
