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
//! Two backends serve one interface: [`Store`] (and [`Import`]) is a
//! facade that dispatches every operation to [`sqlite`] (the embedded
//! default, a file) or [`pg`] (PostgreSQL, shared by several workers). The
//! types in [`types`] and the errors in [`errors`] carry neither; nothing
//! outside this folder knows which backend it talks to, except where a
//! command must (the file lock, the workers of a shared run).
//!
//! One concern per file:
//! - [`target`]: `--db` as a file path or a `postgres://` URL;
//! - [`facade`]: the dispatch of every operation to the backend;
//! - [`writer`]: the thread that group-commits claims and transitions;
//! - [`chain`]: transitions folded into row updates, for both backends;
//! - [`lock`]: one run at a time per SQLite database file;
//! - [`shared`]: the workers of a run shared through PostgreSQL, leases;
//! - [`report_rows`], [`cancel_plan`]: what both backends build alike from
//!   the rows they read (report lines and totals; what a cancel changes);
//! - [`person`]: the per-person guard's look-ups, as data;
//! - [`overrides`]: what a run was allowed beyond the rules, and its read;
//! - [`approvals`]: who prepared a run, its approvals and their payout sets;
//! - [`scratch`]: a private temporary SQLite database for an import's work
//!   that grows with the file (numbering identical payouts);
//! - [`sqlite`], [`pg`]: the backends, one concern per file inside each.

#[cfg(test)]
mod approval_tests;
pub mod approvals;
#[cfg(test)]
mod both_tests;
mod cancel_plan;
mod chain;
mod errors;
mod facade;
mod lock;
pub mod overrides;
pub mod person;
#[cfg(test)]
mod person_tests;
pub mod pg;
mod report_rows;
mod rows;
pub mod scratch;
pub mod shared;
pub mod sqlite;
pub mod target;
pub mod types;
mod waits;
#[cfg(test)]
mod write_tests;
mod writer;

pub use approvals::{
    Action, ApprovalEvent, Change, Changes, Figures, NewApproval, PayoutSet, Preparer,
};
pub use errors::{ChangedMeanwhile, DuplicateIds, ImportError, WriteError, changed_meanwhile};
pub use facade::{Import, Store};
pub use lock::RunLock;
pub use overrides::{NewOverride, Override, OverrideKind, OverrideLine, Overrides};
pub use person::PersonQuery;
pub use shared::{LeaseTerms, Outstanding, WorkerInfo, WorkersBusy};
pub use sqlite::APPLICATION_ID;
pub use target::Db;
pub use types::{
    Booked, CancelOutcome, Earlier, FailedRow, NewRun, RELEASED_ID_MARK, ReportRow, ReportTarget,
    RetryLink, RunInfo, SKIPPED, Tally, Totals, Transition, Unresolved, Work,
};
pub use writer::{Writer, WriterThread};

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
            account_given: None,
            account_key: format!("ACC{row}"),
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

    /// The PostgreSQL server the tests may use (`PAYRUN_TEST_POSTGRES`,
    /// e.g. `postgres://postgres@127.0.0.1:5432/test`), with a fresh empty
    /// schema of its own so tests running at once never see each other's
    /// rows; `None` (the test then runs on SQLite only) when the variable
    /// is not set.
    pub fn pg_target() -> Option<crate::store::Db> {
        let Ok(base) = std::env::var("PAYRUN_TEST_POSTGRES") else {
            skipped_on_postgres();
            return None;
        };
        let pid = std::process::id();
        let schema = format!("t_{pid}_{:016x}", rand::random::<u64>());
        let mut client = postgres::Client::connect(&base, postgres::NoTls)
            .unwrap_or_else(|e| panic!("PAYRUN_TEST_POSTGRES={base} is unreachable: {e}"));
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| drop_schemas_of_ended_processes(&mut client));
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .unwrap();
        let sep = if base.contains('?') { '&' } else { '?' };
        Some(crate::store::Db::parse(&format!(
            "{base}{sep}options=-csearch_path%3D{schema}"
        )))
    }

    /// The schemas `pg_target` made in test processes that have ended.
    /// A schema outlives its test (the store under test holds it until the
    /// process ends), so each test process sweeps, once, what earlier ones
    /// left: names carry the process id, and only those of processes no
    /// longer running on this machine are dropped, never those of a test
    /// process running beside this one.
    fn drop_schemas_of_ended_processes(client: &mut postgres::Client) {
        // Without /proc (not Linux) no process can be told ended: keep all.
        if !std::path::Path::new("/proc/self").exists() {
            return;
        }
        let Ok(rows) = client.query(
            r"SELECT nspname FROM pg_namespace WHERE nspname ~ '^t_[0-9]+_[0-9a-f]{16}$'",
            &[],
        ) else {
            return;
        };
        for row in rows {
            let name: String = row.get(0);
            let pid = name.split('_').nth(1).unwrap_or_default();
            if !std::path::Path::new("/proc").join(pid).exists() {
                let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"));
            }
        }
    }

    /// Says, where a plain `cargo test` shows it (straight to stderr, past
    /// the harness's capture of `eprintln!`), that the running test left
    /// PostgreSQL out.
    fn skipped_on_postgres() {
        use std::io::Write;
        let test = std::thread::current()
            .name()
            .unwrap_or("a store test")
            .to_string();
        let _ = writeln!(
            std::io::stderr(),
            "skipped: {test} on PostgreSQL: PAYRUN_TEST_POSTGRES is not set"
        );
    }

    /// One store per backend under test: SQLite in `dir`, and PostgreSQL
    /// when `PAYRUN_TEST_POSTGRES` is set.
    #[allow(dead_code)] // the ported store tests use it
    pub fn stores(dir: &std::path::Path) -> Vec<super::Store> {
        let mut out = vec![super::Store::open(&dir.join("p.db")).unwrap()];
        if let Some(db) = pg_target() {
            out.push(super::Store::connect(&db).unwrap());
        }
        out
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
