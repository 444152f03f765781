//! Reads (PostgreSQL): runs, payouts to resume, counts and totals per
//! state, the report rows, the payouts an operator must settle, and the
//! audit trail — the same rows, strings and order as `sqlite/reads.rs`.
//! Amounts are summed as decimals by `report_rows`, never by SQL; states
//! are read through the state machine, so an unknown name is an error. The
//! report is streamed through two portals of one read-only snapshot, a
//! batch at a time, so a run of a million payouts is never in memory.

use super::Pg;
use super::sql::{RUN_COLS, UNRESOLVED_COLS, WORK_COLS, run_sender, state, state_list};
use crate::machine::{NEEDS_OPERATOR, OPEN, State};
use crate::store::report_rows::{add_to_totals, merge_in_row_order};
use crate::store::rows;
use crate::store::types::{ReportRow, RunInfo, Totals, Unresolved, Work};
use anyhow::{Context, Result};
use postgres::{Client, IsolationLevel, Portal, Row, Transaction};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The payouts of run `$1`. The run's id range, once its import recorded
/// it, bounds a scan of the primary key, so the payouts come in id (file)
/// order without a sort and without reading other runs' rows.
pub(super) const RUN_PAYOUTS: &str = "run_id = $1
    AND id BETWEEN COALESCE((SELECT first_payout FROM runs WHERE id = $1), 0)
               AND COALESCE((SELECT last_payout FROM runs WHERE id = $1), 9223372036854775807)";

/// Rows fetched from a portal at a time.
const FETCH: usize = 1000;

impl Pg {
    pub fn find_run(&self, identity: &str) -> Result<Option<RunInfo>> {
        let identity = identity.to_string();
        self.call(move |c| {
            c.query_opt(
                &format!("SELECT {RUN_COLS} FROM runs WHERE identity = $1"),
                &[&identity],
            )?
            .as_ref()
            .map(rows::run_info)
            .transpose()
        })
        .context("cannot read runs")
    }

    pub fn run(&self, id: i64) -> Result<Option<RunInfo>> {
        self.call(move |c| {
            c.query_opt(
                &format!("SELECT {RUN_COLS} FROM runs WHERE id = $1"),
                &[&id],
            )?
            .as_ref()
            .map(rows::run_info)
            .transpose()
        })
        .context("cannot read runs")
    }

    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        self.call(|c| {
            c.query(&format!("SELECT {RUN_COLS} FROM runs ORDER BY id"), &[])?
                .iter()
                .map(rows::run_info)
                .collect()
        })
        .context("cannot read runs")
    }

    pub fn latest_run(&self) -> Result<Option<RunInfo>> {
        self.call(|c| {
            c.query_opt(
                &format!("SELECT {RUN_COLS} FROM runs ORDER BY id DESC LIMIT 1"),
                &[],
            )?
            .as_ref()
            .map(rows::run_info)
            .transpose()
        })
        .context("cannot read runs")
    }

    /// Payouts of `run_id` in `state`, with their bodies (resume).
    pub fn works_in_state(&self, run_id: i64, state: State) -> Result<Vec<Work>> {
        self.call(move |c| {
            let run_sender = run_sender(c, run_id)?;
            c.query(
                &format!(
                    "SELECT {WORK_COLS} FROM payouts WHERE run_id = $1 AND state = $2 ORDER BY id"
                ),
                &[&run_id, &state.as_str()],
            )?
            .iter()
            .map(|r| rows::work(r, &run_sender))
            .collect()
        })
    }

    /// Payouts of a run not yet in a final state.
    pub fn open_count(&self, run_id: i64) -> Result<u64> {
        self.call(move |c| {
            let n: i64 = c
                .query_one(
                    &format!(
                        "SELECT count(*) FROM payouts WHERE run_id = $1 AND state IN ({})",
                        state_list(OPEN)
                    ),
                    &[&run_id],
                )?
                .try_get(0)?;
            Ok(n as u64)
        })
    }

    /// Count of payouts of a run per state.
    pub fn state_counts(&self, run_id: i64) -> Result<BTreeMap<State, u64>> {
        self.call(move |c| {
            let mut out = BTreeMap::new();
            for r in c.query(
                "SELECT state, count(*) FROM payouts WHERE run_id = $1 GROUP BY state",
                &[&run_id],
            )? {
                out.insert(state(&r, 0)?, r.try_get::<_, i64>(1)? as u64);
            }
            Ok(out)
        })
        .context("cannot count payouts")
    }

    /// Count and total per currency and state. PostgreSQL counts the
    /// payouts of each amount; the amounts are summed as decimals by
    /// [`add_to_totals`], as for SQLite.
    pub fn totals(&self, run_id: i64) -> Result<Totals> {
        self.call(move |c| {
            let mut out = Totals::new();
            for r in c.query(
                "SELECT currency, state, amount, count(*) FROM payouts WHERE run_id = $1
                 GROUP BY currency, state, amount",
                &[&run_id],
            )? {
                let amount: String = r.try_get(2)?;
                let n = r.try_get::<_, i64>(3)? as u64;
                add_to_totals(&mut out, r.try_get(0)?, state(&r, 1)?, &amount, n)?;
            }
            Ok(out)
        })
    }

    /// Calls `f` for every report line of a run, payouts and skipped rows
    /// merged in row order (see `report_rows`).
    pub fn for_each_report_row(
        &self,
        run_id: i64,
        mut f: impl FnMut(&ReportRow) -> Result<()>,
    ) -> Result<()> {
        self.stream(
            move |c, emit| report_rows(c, run_id, emit),
            |r: ReportRow| f(&r),
        )
    }

    /// Payouts left `unknown` (or in an intent state) for an operator.
    pub fn unresolved(&self, run_id: Option<i64>) -> Result<Vec<Unresolved>> {
        self.call(move |c| {
            c.query(
                &format!(
                    "SELECT {UNRESOLVED_COLS} FROM payouts
                     WHERE state IN ({}) AND ($1::BIGINT IS NULL OR run_id = $1)
                     ORDER BY run_id, row",
                    state_list(NEEDS_OPERATOR)
                ),
                &[&run_id],
            )?
            .iter()
            .map(rows::unresolved)
            .collect()
        })
        .context("cannot read payouts")
    }

    pub fn payout_by_transaction_id(&self, transaction_id: &str) -> Result<Option<Unresolved>> {
        let transaction_id = transaction_id.to_string();
        self.call(move |c| {
            c.query_opt(
                &format!("SELECT {UNRESOLVED_COLS} FROM payouts WHERE transaction_id = $1"),
                &[&transaction_id],
            )?
            .as_ref()
            .map(rows::unresolved)
            .transpose()
        })
        .context("cannot read payouts")
    }

    /// The audit trail of a run: (transaction id, time, action, from, to, reason).
    pub fn audit(&self, run_id: i64) -> Result<Vec<[String; 6]>> {
        self.call(move |c| {
            c.query(
                "SELECT p.transaction_id, a.at, a.action, a.from_state, a.to_state, a.reason
                 FROM audit a JOIN payouts p ON p.id = a.payout_id
                 WHERE p.run_id = $1 ORDER BY a.id",
                &[&run_id],
            )?
            .iter()
            .map(|r| {
                // The states are read as states: an unknown name is an
                // error here too, not a line of the trail.
                Ok([
                    r.try_get(0)?,
                    r.try_get(1)?,
                    r.try_get(2)?,
                    state(r, 3)?.as_str().to_string(),
                    state(r, 4)?.as_str().to_string(),
                    r.try_get(5)?,
                ])
            })
            .collect()
        })
        .context("cannot read the audit trail")
    }
}

/// Emits the report lines of `run_id` from one read-only snapshot: the
/// skipped rows and the payouts are two portals read a batch at a time.
fn report_rows(
    c: &mut Client,
    run_id: i64,
    emit: &mut dyn FnMut(ReportRow) -> Result<()>,
) -> Result<()> {
    let mut tx = c
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    // Rows skipped as already paid by an earlier run (docs/rerun.md).
    let skipped = tx.bind(
        "SELECT s.row, p.transaction_id, COALESCE(p.account_given, p.account_id), p.b_first,
                    p.b_last, p.amount,
                p.currency, p.state, p.run_id, p.row, r.file_path, r.created_at
           FROM skipped_rows s JOIN payouts p ON p.id = s.payout_id
           JOIN runs r ON r.id = p.run_id
          WHERE s.run_id = $1
         ORDER BY s.row",
        &[&run_id],
    )?;
    let payouts = tx.bind(
        &format!(
            "SELECT row, transaction_id, COALESCE(account_given, account_id), b_first, b_last,
                    amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, ''), attempts,
                    COALESCE(initiated_at, ''), COALESCE(executed_at, '')
             FROM payouts WHERE {RUN_PAYOUTS} ORDER BY id"
        ),
        &[&run_id],
    )?;
    let tx = RefCell::new(tx);
    let mut skipped = Batches::new(&tx, &skipped);
    let mut payouts = Batches::new(&tx, &payouts);
    merge_in_row_order(
        || {
            let Some(r) = skipped.next()? else {
                return Ok(None);
            };
            Ok(Some(rows::skipped_report_row(&r)?))
        },
        || {
            let Some(r) = payouts.next()? else {
                return Ok(None);
            };
            Ok(Some(rows::report_row(&r)?))
        },
        emit,
    )?;
    tx.into_inner().commit()?;
    Ok(())
}

/// The rows of one portal, fetched [`FETCH`] at a time.
struct Batches<'t, 'c> {
    tx: &'t RefCell<Transaction<'c>>,
    portal: &'t Portal,
    rows: std::vec::IntoIter<Row>,
    done: bool,
}

impl<'t, 'c> Batches<'t, 'c> {
    fn new(tx: &'t RefCell<Transaction<'c>>, portal: &'t Portal) -> Self {
        Batches {
            tx,
            portal,
            rows: Vec::new().into_iter(),
            done: false,
        }
    }

    fn next(&mut self) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.rows.next() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let rows = self
                .tx
                .borrow_mut()
                .query_portal(self.portal, FETCH as i32)?;
            self.done = rows.len() < FETCH;
            self.rows = rows.into_iter();
        }
    }
}
