//! The look-ups of the per-person guard (docs/rerun.md, "One person, one
//! period"), as data both backends take: which earlier payouts of one
//! person (canonical account key and currency) a row about to be paid is
//! compared with, in the states of [`crate::machine::GUARDED`]. The decision is `engine::guard`'s; the backends only run
//! one indexed look-up per row (`payouts_account_key`), a batch of rows per
//! query on PostgreSQL (one round trip), never a table of the whole history
//! in memory.

use crate::machine::{OPEN, State};

/// One row about to be paid, as the guard looks its person up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonQuery<'a> {
    pub account_key: &'a str,
    pub currency: &'a str,
    /// Payouts of this period count whatever their amount.
    pub period: &'a str,
    /// Payouts of other periods count with this amount (normalised
    /// decimal) when they changed within the window, or are still open.
    pub amount: &'a str,
    pub window_days: u32,
    /// Payouts asked for by this run's import are not compared (for a
    /// re-payment, the run that first asked for the payout: its siblings
    /// were part of that one request). `None`: only the run being imported
    /// is left out.
    pub origin_run: Option<i64>,
}

/// Earlier payouts listed per row: enough to name them, bounded whatever
/// the history.
pub const PER_ROW: i64 = 5;

/// The states always compared, however old: money that has not moved yet
/// but may when their run is resumed (or that the provider is still
/// moving).
pub(crate) fn always_compared() -> &'static [State] {
    OPEN
}

/// Earlier payouts whose key was never filled, taken per statement when
/// filling them.
pub const KEY_FILL_BATCH: i64 = 1000;
