//! The data the store hands out and takes in. Nothing here knows SQL: these
//! types are the interface any backend of the checkpoint shares (SQLite
//! today, PostgreSQL later).

use crate::machine::State;
use crate::provider::wire::{InitiateRequest, Sender};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A run as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunInfo {
    pub id: i64,
    pub identity: String,
    pub file_sha256: String,
    pub label: String,
    pub file_path: String,
    pub provider: String,
    pub rows_total: u64,
    pub rows_rejected: u64,
    pub created_at: String,
    pub finished_at: Option<String>,
    /// The batch/period reference the run was imported under (empty for
    /// runs imported before periods existed).
    pub period: String,
    /// The worksheet named with `--sheet` (empty: the first, or CSV).
    pub sheet: String,
    /// 1: transaction ids derived from the file's bytes and row numbers
    /// (older runs); 2: derived from the payout itself; 3: from the payout
    /// with its canonical account key (docs/rerun.md).
    pub id_scheme: i64,
}

/// What a new run records.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub identity: &'a str,
    pub file_sha256: &'a str,
    pub label: &'a str,
    pub file_path: &'a str,
    pub provider: &'a str,
    pub sender: &'a Sender,
    pub period: &'a str,
    pub sheet: &'a str,
}

/// A payout the engine is about to send, with the exact body it will send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub id: i64,
    pub row: u64,
    pub state: State,
    pub request: InitiateRequest,
    /// Requests sent for it so far, across runs (its attempt budget).
    pub attempts: u32,
}

/// One committed state change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub id: i64,
    /// The state the payout must be in; the write fails otherwise.
    pub from: State,
    pub to: State,
    /// Provider code and message; `None` keeps the recorded ones.
    pub code: Option<String>,
    pub message: Option<String>,
    /// Requests sent since the last transition (added to `attempts`).
    pub attempts: u32,
    pub stamp_initiated: bool,
    pub stamp_executed: bool,
}

impl Transition {
    pub fn new(id: i64, from: State, to: State) -> Transition {
        Transition {
            id,
            from,
            to,
            code: None,
            message: None,
            attempts: 0,
            stamp_initiated: false,
            stamp_executed: false,
        }
    }
}

/// One line of the reconciliation report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    pub row: u64,
    pub transaction_id: String,
    pub account_id: String,
    pub beneficiary: String,
    pub amount: String,
    pub currency: String,
    pub state: String,
    pub provider_code: String,
    pub provider_message: String,
    pub attempts: u32,
    pub initiated_at: String,
    pub executed_at: String,
}

/// Count and total of one (currency, state) cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub count: u64,
    pub total: Decimal,
}

/// Totals per currency, then per state.
pub type Totals = BTreeMap<String, BTreeMap<State, Tally>>;

/// A payout whose outcome an operator resolves (`payrun reconcile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub id: i64,
    pub run_id: i64,
    pub row: u64,
    pub transaction_id: String,
    pub account_id: String,
    pub amount: String,
    pub currency: String,
    pub state: State,
    pub provider_code: String,
    pub provider_message: String,
    /// The amount as sent to the provider (digits): what its answers echo.
    pub wire_amount: String,
}

/// A payout recorded by an earlier run, as the re-run rules need it: what
/// it paid, where it came from, and how far it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Earlier {
    pub payout_id: i64,
    pub run_id: i64,
    pub row: u64,
    pub transaction_id: String,
    pub state: State,
    pub account_id: String,
    /// The canonical account key (the account as sent, for a payout whose
    /// key was never filled).
    pub account_key: String,
    /// Normalised decimal, as stored.
    pub amount: String,
    pub currency: String,
    pub method: String,
    pub run_file: String,
    pub run_created_at: String,
    pub run_finished: bool,
    /// Its run's period (for a run from before periods, the month it was
    /// started in).
    pub period: String,
    /// When it last changed state (its run's start if it never did): the
    /// payout's own time, which the repeat window is measured from.
    pub at: String,
    /// The run whose import asked for it: its own, or for a re-payment of
    /// a failed payout, the run that first asked for that payout.
    pub origin_run: i64,
}

/// A failed payout of a run, as `failed.csv` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRow {
    pub row: u64,
    /// The state, the provider's code and message.
    pub reason: String,
    /// The transaction id its row was first paid under (for a re-payment,
    /// the id of the payout it re-pays, followed back): run again, that id
    /// finds this payout and re-pays it under the next linked id.
    pub transaction_id: String,
}

/// A re-payment's link to what it replaces: the failed payout, and the run
/// whose import first asked for the payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryLink {
    pub of: i64,
    pub origin_run: i64,
}

/// A payout as recorded, with what the provider was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booked {
    pub id: i64,
    pub run_id: i64,
    pub row: u64,
    pub transaction_id: String,
    pub account_id: String,
    /// The amount sent to the provider (digits, in the configured unit).
    pub wire_amount: Decimal,
    /// The amount in the currency's major unit, as the row gave it.
    pub amount: Decimal,
    pub currency: String,
    pub state: State,
    /// When the execute was recorded (else the last change, else the
    /// initiation), as stored: the day a statement lists it under.
    pub sent_at: String,
}

/// The suffix given to the transaction id of a cancelled payout that was
/// never sent, freeing the id (unique across runs) for a new run while
/// keeping the original readable in the report.
pub const RELEASED_ID_MARK: &str = "~cancelled-";

/// What `cancel_run` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CancelOutcome {
    /// Cancelled from `pending`: never sent; their ids are free again.
    pub never_sent: u64,
    /// Cancelled from `initiated`: initiated, never executed; ids stay used.
    pub initiated: u64,
    /// Open payouts left as they are (a request may be at the provider).
    pub left_open: BTreeMap<State, u64>,
}

/// A run's report as last written. `language` is the config's name for it
/// (`en`, `fr`); `delimiter` one ASCII byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportTarget {
    pub path: PathBuf,
    pub delimiter: u8,
    pub bom: bool,
    pub language: String,
}

/// The report's `state` cell of a row an earlier run already paid (or
/// holds): not a payout state, the row has no payout of its own.
pub const SKIPPED: &str = "skipped";

/// The sender of one payout: the run's, with the row's override (stored as
/// JSON, rare) laid over it.
pub(crate) fn merged_sender(run: &Sender, override_json: Option<&str>) -> anyhow::Result<Sender> {
    let mut sender = run.clone();
    if let Some(json) = override_json {
        let o: crate::payout::SenderOverride = serde_json::from_str(json)
            .map_err(|_| anyhow::anyhow!("corrupt sender override in the database"))?;
        let pick = |v: Option<String>, d: &mut String| {
            if let Some(v) = v {
                *d = v;
            }
        };
        pick(o.email, &mut sender.email);
        pick(o.firstname, &mut sender.firstname);
        pick(o.lastname, &mut sender.lastname);
        pick(o.address, &mut sender.address);
        pick(o.phone, &mut sender.phone);
    }
    Ok(sender)
}
