//! The checkpoint: the one place that talks SQL. Every state change of every
//! payout passes through here and is committed before the engine acts on it
//! (see `ARCHITECTURE.md`, "Durability").
//!
//! - Durability: WAL with `synchronous=FULL`; a lost `executing` row could
//!   mean a second payment, so throughput comes from group commit (many
//!   payouts' intents or outcomes in one transaction, one fsync), never from
//!   weaker settings.
//! - Schema: an append-only list of migrations keyed by `PRAGMA
//!   user_version`, as cargo's `util/sqlite.rs` does; a database from a newer
//!   payrun, or a file that is not a payrun database, is refused with a clear
//!   message rather than modified.
//! - Concurrency: one writer. The engine talks to a [`Writer`] thread that
//!   owns the connection and commits whatever commands queued up while the
//!   previous commit was in flight, in one transaction.
//! - Exclusion: [`RunLock`] makes a second `payrun run` on the same database
//!   refuse at once, naming the holder's pid, whatever path reaches the file;
//!   the OS drops the lock of a killed process, so a stale lock never needs
//!   manual cleanup.
//!
//! The boundary a second backend (PostgreSQL) would implement: the types in
//! [`types`] and the errors [`ImportError`] and [`WriteError`] carry no
//! SQLite; everything that does (`rusqlite`, pragmas, the file header, the
//! rowid-range trick) lives in the submodules below and never leaks out of
//! `Store`, `Import`, `Writer` and `RunLock`.
//!
//! One concern per file:
//! - [`schema`]: the tables and their append-only migrations;
//! - [`open`]: opening a file, refusing foreign or newer ones, the pragmas;
//! - [`import`]: a new run and its payouts, all or nothing;
//! - [`apply`]: the claim and the transitions, checked against the state
//!   machine and the state the payout is in;
//! - [`writer`]: the thread that group-commits them;
//! - [`history`]: earlier payouts by id and by beneficiary (re-runs and
//!   the repeat guard), skipped rows, failed rows;
//! - [`reads`]: runs, counts, totals, report rows, unresolved, audit;
//! - [`cancel`]: ending a run by an operator, re-pointing an unsent run;
//! - [`resolve`]: an operator's decision on a payout, with its audit line;
//! - [`booked`]: payouts as sent, for matching a provider's statement;
//! - [`lock`]: one run at a time per database file;
//! - [`outputs`]: where a run's report was written, to write it again;
//! - [`sql`]: SQL fragments and row mappers shared by the others.

mod apply;
mod booked;
mod cancel;
mod history;
mod import;
mod lock;
mod open;
mod outputs;
mod reads;
mod resolve;
mod schema;
mod sql;
pub mod types;
mod writer;

pub use apply::WriteError;
pub use cancel::{CancelOutcome, RELEASED_ID_MARK};
pub use import::{DuplicateIds, Import, ImportError};
pub use lock::RunLock;
pub use outputs::ReportTarget;
pub use reads::SKIPPED;
pub use schema::APPLICATION_ID;
pub use types::{
    Booked, Earlier, NewRun, ReportRow, RunInfo, Tally, Totals, Transition, Unresolved, Work,
};
pub use writer::{Writer, WriterThread};

use rusqlite::Connection;
use std::path::PathBuf;

/// The owner of the database connection.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Builders shared by the tests of the submodules.
#[cfg(test)]
pub(crate) mod test_support {
    use super::NewRun;
    use crate::payout::{Payout, SenderOverride};
    use crate::provider::wire::Sender;
    use rust_decimal::Decimal;
    use std::str::FromStr;

    pub fn payout(row: u64, amount: &str) -> Payout {
        Payout {
            row,
            transaction_id: None,
            account_id: format!("acc{row}"),
            amount: Decimal::from_str(amount).unwrap(),
            wire_amount: amount.replace('.', ""),
            currency: "XOF".into(),
            payout_method_id: "momo".into(),
            description: "May salary".into(),
            beneficiary_firstname: "Aïcha".into(),
            beneficiary_lastname: "Koné".into(),
            beneficiary_phone: Some("+2250700000001".into()),
            beneficiary_email: None,
            sender: SenderOverride::default(),
        }
    }

    pub fn new_run<'a>(identity: &'a str, sender: &'a Sender) -> NewRun<'a> {
        NewRun {
            identity,
            file_sha256: identity,
            label: "",
            file_path: "payroll.csv",
            provider: "sandbox",
            sender,
            period: "2026-05",
            sheet: "",
        }
    }
}
