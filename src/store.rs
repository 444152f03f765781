//! The SQLite checkpoint: the one place that talks SQL. Every state change of
//! every payout passes through here and is committed before the engine acts
//! on it (ARCHITECTURE.md, "Money invariants").
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
//!   refuse at once, naming the holder's pid; the OS drops the lock of a
//!   killed process, so a stale lock never needs manual cleanup.

use crate::payout::{Payout, SenderOverride, State};
use crate::provider::wire::{Beneficiary, InitiateRequest, Sender};
use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::mpsc;
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// `PRAGMA application_id` of a payrun database ("PAYR"), so a foreign
/// SQLite file is recognised and left alone.
pub const APPLICATION_ID: i32 = 0x5041_5952;

/// Append-only: never edit a released entry, only add new ones. Entry `i`
/// moves the schema from `user_version = i` to `i + 1`.
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    identity      TEXT NOT NULL UNIQUE,   -- sha256(file bytes [+ label])
    file_sha256   TEXT NOT NULL,
    label         TEXT NOT NULL DEFAULT '',
    file_path     TEXT NOT NULL,
    provider      TEXT NOT NULL,          -- base URL, or 'sandbox'
    sender_json   TEXT NOT NULL,          -- configured sender at import time
    rows_total    INTEGER NOT NULL,
    rows_rejected INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    finished_at   TEXT,
    -- Payouts of a run have consecutive ids: queries on one run are rowid
    -- ranges, so no (run_id, state) index has to be kept up to date on
    -- every insert and every state change.
    first_payout  INTEGER,
    last_payout   INTEGER
);
CREATE TABLE payouts (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    row            INTEGER NOT NULL,
    transaction_id TEXT NOT NULL UNIQUE,  -- also the cross-run duplicate guard
    account_id     TEXT NOT NULL,
    amount         TEXT NOT NULL,         -- decimal as written, major unit
    wire_amount    TEXT NOT NULL,         -- digits sent to the provider
    currency       TEXT NOT NULL,
    method         TEXT NOT NULL,
    description    TEXT NOT NULL,
    b_first        TEXT NOT NULL,
    b_last         TEXT NOT NULL,
    b_phone        TEXT NOT NULL,
    b_email        TEXT NOT NULL,
    sender_json    TEXT,                  -- per-row sender override, rare
    state          TEXT NOT NULL,
    provider_code  TEXT,
    provider_msg   TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    initiated_at   TEXT,
    executed_at    TEXT,
    updated_at     TEXT
);
CREATE TABLE rejected_rows (
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    row     INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    PRIMARY KEY (run_id, row)
);
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY,
    payout_id  INTEGER NOT NULL REFERENCES payouts(id),
    at         TEXT NOT NULL,
    action     TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    reason     TEXT NOT NULL
);
"#];

/// The payouts of run `?1`, as a rowid range (see the `runs` table).
const RUN_RANGE: &str = "id BETWEEN (SELECT COALESCE(first_payout, 1) FROM runs WHERE id = ?1)
                     AND (SELECT COALESCE(last_payout, 0) FROM runs WHERE id = ?1)";

/// SQL expression for "now" as an RFC 3339 UTC timestamp with milliseconds.
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

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
}

/// A payout the engine is about to send, with the exact body it will send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub id: i64,
    pub row: u64,
    pub state: State,
    pub request: InitiateRequest,
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
}

/// Import was refused because transaction ids are already used.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct DuplicateIds(pub Vec<String>);

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

impl Store {
    /// Opens (creating if needed) the database at `path`, checks that it is
    /// a payrun database this version understands, and migrates it.
    pub fn open(path: &Path) -> Result<Store> {
        check_header(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("cannot open the database {}", path.display()))?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .init()
            .with_context(|| format!("cannot use the database {}", path.display()))?;
        Ok(store)
    }

    fn init(&mut self) -> Result<()> {
        // A busy timeout lets `status` read while a run writes.
        self.conn.busy_timeout(std::time::Duration::from_secs(10))?;
        let app_id: i32 = self
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(not_a_database)?;
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let tables: i64 = self.conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if app_id != APPLICATION_ID && (tables > 0 || version > 0) {
            bail!(
                "{} is an SQLite database of another program, not a payrun database; \
                 pass --db with a new file name",
                self.path.display()
            );
        }
        if version > MIGRATIONS.len() as i64 {
            bail!(
                "this database was written by a newer payrun (schema {version}, this payrun knows {}); \
                 upgrade payrun to use it",
                MIGRATIONS.len()
            );
        }
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!("cannot switch the database to WAL mode (got {mode})");
        }
        // FULL: a commit is on disk before the engine sends the request it
        // announces (ARCHITECTURE.md, "Money invariants"). An 8 MiB page cache: larger sped
        // up nothing measurable and a million-row import must stay under
        // 64 MiB alongside the validator's duplicate-id table.
        self.conn.execute_batch(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -8192;",
        )?;
        if version < MIGRATIONS.len() as i64 {
            let tx = self.conn.transaction()?;
            for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
                tx.execute_batch(sql)
                    .with_context(|| format!("migration {} failed", i + 1))?;
            }
            tx.execute_batch(&format!(
                "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
                MIGRATIONS.len()
            ))?;
            tx.commit()?;
        }
        Ok(())
    }

    pub fn find_run(&self, identity: &str) -> Result<Option<RunInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs WHERE identity = ?1"),
                [identity],
                run_from_row,
            )
            .optional()
            .context("cannot read runs")
    }

    pub fn run(&self, id: i64) -> Result<Option<RunInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs WHERE id = ?1"),
                [id],
                run_from_row,
            )
            .optional()
            .context("cannot read runs")
    }

    pub fn runs(&self) -> Result<Vec<RunInfo>> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {RUN_COLS} FROM runs ORDER BY id"))?;
        let rows = stmt.query_map([], run_from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read runs")
    }

    pub fn latest_run(&self) -> Result<Option<RunInfo>> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLS} FROM runs ORDER BY id DESC LIMIT 1"),
                [],
                run_from_row,
            )
            .optional()
            .context("cannot read runs")
    }

    /// Starts importing a new run. Nothing is visible until
    /// [`Import::commit`]; dropping the import rolls it back.
    pub fn begin_import(&mut self, new: &NewRun<'_>) -> Result<Import<'_>> {
        let tx = self.conn.transaction()?;
        let sender_json = serde_json::to_string(new.sender)?;
        tx.execute(
            &format!(
                "INSERT INTO runs (identity, file_sha256, label, file_path, provider, sender_json,
                                   rows_total, rows_rejected, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, {NOW})"
            ),
            params![
                new.identity,
                new.file_sha256,
                new.label,
                new.file_path,
                new.provider,
                sender_json
            ],
        )
        .context("cannot record the run")?;
        let run_id = tx.last_insert_rowid();
        Ok(Import {
            tx,
            run_id,
            rows: 0,
            rejected: 0,
            duplicates: Vec::new(),
            first_payout: None,
            last_payout: None,
        })
    }

    /// Moves up to `limit` pending payouts of `run_id` to `initiating` (the
    /// intent) and returns them. The caller commits.
    fn claim_pending(
        tx: &rusqlite::Transaction<'_>,
        run_id: i64,
        limit: usize,
        now: &str,
        after: i64,
    ) -> Result<Vec<Work>> {
        let (first, last): (Option<i64>, Option<i64>) = tx
            .prepare_cached("SELECT first_payout, last_payout FROM runs WHERE id = ?1")?
            .query_row([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let (Some(first), Some(last)) = (first, last) else {
            return Ok(Vec::new());
        };
        let run_sender = run_sender(tx, run_id)?;
        // One rowid range with both bounds bound directly: given two lower
        // bounds SQLite may pick the looser one and rescan the run from its
        // start on every claim.
        let after = after.max(first - 1);
        let mut stmt = tx.prepare_cached(&format!(
            "UPDATE payouts SET state = 'initiating', updated_at = ?3
             WHERE id IN (SELECT id FROM payouts
                          WHERE id > ?4 AND id <= ?5 AND run_id = ?1 AND state = 'pending'
                          ORDER BY id LIMIT ?2)
             RETURNING {WORK_COLS}"
        ))?;
        let mut rows = stmt.query(params![run_id, limit as i64, now, after, last])?;
        let mut out = Vec::with_capacity(limit);
        while let Some(r) = rows.next()? {
            out.push(work_from_row(r, &run_sender)?);
        }
        // RETURNING gives no order; payouts go out in file order.
        out.sort_unstable_by_key(|w| w.id);
        Ok(out)
    }

    /// Payouts of `run_id` in `state`, with their bodies (resume).
    pub fn works_in_state(&self, run_id: i64, state: State) -> Result<Vec<Work>> {
        let run_sender = run_sender(&self.conn, run_id)?;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {WORK_COLS} FROM payouts WHERE {RUN_RANGE} AND state = ?2 ORDER BY id"
        ))?;
        let mut rows = stmt.query(params![run_id, state.as_str()])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(work_from_row(r, &run_sender)?);
        }
        Ok(out)
    }

    /// Payouts of a run not yet in a final state.
    pub fn open_count(&self, run_id: i64) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            &format!(
                "SELECT count(*) FROM payouts WHERE {RUN_RANGE}
                 AND state IN ('pending', 'initiating', 'initiated', 'executing')"
            ),
            [run_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }

    /// Applies transitions in one transaction.
    pub fn apply(&mut self, ts: &[Transition]) -> Result<()> {
        let tx = self.conn.transaction()?;
        let now = sql_now(&tx)?;
        apply_in(&tx, ts, &now)?;
        tx.commit().context("cannot commit")?;
        Ok(())
    }

    pub fn mark_finished(&mut self, run_id: i64) -> Result<()> {
        self.conn.execute(
            &format!("UPDATE runs SET finished_at = COALESCE(finished_at, {NOW}) WHERE id = ?1"),
            [run_id],
        )?;
        Ok(())
    }

    /// Count of payouts of a run per state.
    pub fn state_counts(&self, run_id: i64) -> Result<BTreeMap<State, u64>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT state, count(*) FROM payouts WHERE {RUN_RANGE} GROUP BY state"
        ))?;
        let mut out = BTreeMap::new();
        let rows = stmt.query_map([run_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (state, n) = row?;
            let state = State::parse(&state)
                .with_context(|| format!("unknown state {state:?} in the database"))?;
            out.insert(state, n as u64);
        }
        Ok(out)
    }

    /// Count and total per currency and state. Amounts are summed as
    /// decimals here, never by SQL (which would sum them as floats).
    pub fn totals(&self, run_id: i64) -> Result<Totals> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT currency, state, amount FROM payouts WHERE {RUN_RANGE}"
        ))?;
        let mut rows = stmt.query([run_id])?;
        let mut out = Totals::new();
        while let Some(r) = rows.next()? {
            let currency: String = r.get(0)?;
            let state: String = r.get(1)?;
            let amount: String = r.get(2)?;
            let state = State::parse(&state)
                .with_context(|| format!("unknown state {state:?} in the database"))?;
            let amount = Decimal::from_str(&amount)
                .with_context(|| format!("corrupt amount {amount:?} in the database"))?;
            let tally = out.entry(currency).or_default().entry(state).or_default();
            tally.count += 1;
            tally.total += amount;
        }
        Ok(out)
    }

    /// Calls `f` for every report line of a run, payouts and rejected rows
    /// merged in row order. Payouts are read in id order, which is row order
    /// because import inserts rows as the file streams by; the two ordered
    /// streams are merged here rather than sorted by SQLite, so a report of a
    /// million rows needs no sort buffer.
    pub fn for_each_report_row(
        &self,
        run_id: i64,
        mut f: impl FnMut(&ReportRow) -> Result<()>,
    ) -> Result<()> {
        let mut rejected_stmt = self
            .conn
            .prepare("SELECT row, reasons FROM rejected_rows WHERE run_id = ?1 ORDER BY row")?;
        let mut rejected = rejected_stmt.query([run_id])?;
        let next_rejected = |rows: &mut rusqlite::Rows<'_>| -> Result<Option<ReportRow>> {
            Ok(match rows.next()? {
                Some(r) => Some(ReportRow {
                    row: r.get::<_, i64>(0)? as u64,
                    transaction_id: String::new(),
                    account_id: String::new(),
                    beneficiary: String::new(),
                    amount: String::new(),
                    currency: String::new(),
                    state: State::Rejected.as_str().to_string(),
                    provider_code: "VALIDATION".to_string(),
                    provider_message: r.get(1)?,
                    attempts: 0,
                    initiated_at: String::new(),
                    executed_at: String::new(),
                }),
                None => None,
            })
        };
        let mut pending_rejected = next_rejected(&mut rejected)?;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT row, transaction_id, account_id, b_first, b_last, amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, ''), attempts,
                    COALESCE(initiated_at, ''), COALESCE(executed_at, '')
             FROM payouts WHERE {RUN_RANGE} ORDER BY id"
        ))?;
        let mut rows = stmt.query([run_id])?;
        while let Some(r) = rows.next()? {
            let first: String = r.get(3)?;
            let last: String = r.get(4)?;
            let beneficiary = match (first.is_empty(), last.is_empty()) {
                (false, false) => format!("{first} {last}"),
                _ => format!("{first}{last}"),
            };
            let row = ReportRow {
                row: r.get::<_, i64>(0)? as u64,
                transaction_id: r.get(1)?,
                account_id: r.get(2)?,
                beneficiary,
                amount: r.get(5)?,
                currency: r.get(6)?,
                state: r.get(7)?,
                provider_code: r.get(8)?,
                provider_message: r.get(9)?,
                attempts: r.get::<_, i64>(10)? as u32,
                initiated_at: r.get(11)?,
                executed_at: r.get(12)?,
            };
            while let Some(rej) = pending_rejected.take_if(|rej| rej.row < row.row) {
                f(&rej)?;
                pending_rejected = next_rejected(&mut rejected)?;
            }
            f(&row)?;
        }
        while let Some(rej) = pending_rejected.take() {
            f(&rej)?;
            pending_rejected = next_rejected(&mut rejected)?;
        }
        Ok(())
    }

    /// Payouts left `unknown` (or in an intent state) for an operator.
    pub fn unresolved(&self, run_id: Option<i64>) -> Result<Vec<Unresolved>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, run_id, row, transaction_id, account_id, amount, currency, state,
                    COALESCE(provider_code, ''), COALESCE(provider_msg, '')
             FROM payouts
             WHERE state IN ('unknown') AND (?1 IS NULL OR run_id = ?1)
             ORDER BY run_id, row",
        )?;
        let rows = stmt.query_map([run_id], unresolved_from_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read payouts")
    }

    pub fn payout_by_transaction_id(&self, transaction_id: &str) -> Result<Option<Unresolved>> {
        self.conn
            .query_row(
                "SELECT id, run_id, row, transaction_id, account_id, amount, currency, state,
                        COALESCE(provider_code, ''), COALESCE(provider_msg, '')
                 FROM payouts WHERE transaction_id = ?1",
                [transaction_id],
                unresolved_from_row,
            )
            .optional()
            .context("cannot read payouts")
    }

    /// Records an operator's decision on a payout, with an audit line.
    pub fn resolve(
        &mut self,
        id: i64,
        from: State,
        to: State,
        action: &str,
        reason: &str,
        code: &str,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        let changed = tx.execute(
            &format!(
                "UPDATE payouts SET state = ?2, provider_code = ?3, provider_msg = ?4,
                        executed_at = CASE WHEN ?2 = 'executed' THEN COALESCE(executed_at, {NOW}) ELSE executed_at END,
                        updated_at = {NOW}
                 WHERE id = ?1 AND state = ?5"
            ),
            params![id, to.as_str(), code, reason, from.as_str()],
        )?;
        if changed != 1 {
            bail!("the payout changed state meanwhile; list it again");
        }
        tx.execute(
            &format!(
                "INSERT INTO audit (payout_id, at, action, from_state, to_state, reason)
                 VALUES (?1, {NOW}, ?2, ?3, ?4, ?5)"
            ),
            params![id, action, from.as_str(), to.as_str(), reason],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The audit trail of a run: (transaction id, time, action, from, to, reason).
    pub fn audit(&self, run_id: i64) -> Result<Vec<[String; 6]>> {
        let mut stmt = self.conn.prepare(
            "SELECT p.transaction_id, a.at, a.action, a.from_state, a.to_state, a.reason
             FROM audit a JOIN payouts p ON p.id = a.payout_id
             WHERE p.run_id = ?1 ORDER BY a.id",
        )?;
        let rows = stmt.query_map([run_id], |r| {
            Ok([
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ])
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read the audit trail")
    }
}

/// An import in progress (one transaction).
pub struct Import<'a> {
    tx: rusqlite::Transaction<'a>,
    run_id: i64,
    rows: u64,
    rejected: u64,
    duplicates: Vec<String>,
    first_payout: Option<i64>,
    last_payout: Option<i64>,
}

/// How many duplicate transaction ids to name before summarising: enough
/// to see the pattern, not a wall of text.
const MAX_DUPLICATES_LISTED: usize = 20;

impl Import<'_> {
    pub fn run_id(&self) -> i64 {
        self.run_id
    }

    /// Adds a valid payout as `pending` under `transaction_id`.
    pub fn add(&mut self, p: &Payout, transaction_id: &str) -> Result<()> {
        self.rows += 1;
        let sender_json = if p.sender == SenderOverride::default() {
            None
        } else {
            Some(serde_json::to_string(&p.sender)?)
        };
        let amount = p.amount.normalize().to_string();
        let res = self
            .tx
            .prepare_cached(
                "INSERT INTO payouts (run_id, row, transaction_id, account_id, amount, wire_amount,
                    currency, method, description, b_first, b_last, b_phone, b_email, sender_json, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, 'pending')",
            )?
            .execute(params![
                self.run_id,
                p.row as i64,
                transaction_id,
                p.account_id,
                amount,
                p.wire_amount,
                p.currency,
                p.payout_method_id,
                p.description,
                p.beneficiary_firstname,
                p.beneficiary_lastname,
                p.beneficiary_phone.as_deref().unwrap_or(""),
                p.beneficiary_email.as_deref().unwrap_or(""),
                sender_json,
            ]);
        match res {
            Ok(_) => {
                let id = self.tx.last_insert_rowid();
                self.first_payout.get_or_insert(id);
                self.last_payout = Some(id);
                Ok(())
            }
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::ConstraintViolation =>
            {
                if self.duplicates.len() < MAX_DUPLICATES_LISTED {
                    let holder: Option<(i64, i64, String)> = self
                        .tx
                        .query_row(
                            "SELECT p.run_id, p.row, r.file_path FROM payouts p JOIN runs r ON r.id = p.run_id
                             WHERE p.transaction_id = ?1",
                            [transaction_id],
                            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                        )
                        .optional()?;
                    let msg = match holder {
                        Some((run, row, file)) if run != self.run_id => format!(
                            "row {}: transaction_id {transaction_id:?} is already used by run {run} ({file}, row {row}); \
                             a transaction id pays once, ever: give this row a new transaction_id",
                            p.row
                        ),
                        Some((_, row, _)) => format!(
                            "row {}: transaction_id {transaction_id:?} repeats row {row} of this file; give each row its own transaction_id",
                            p.row
                        ),
                        None => format!(
                            "row {}: cannot record transaction_id {transaction_id:?}",
                            p.row
                        ),
                    };
                    self.duplicates.push(msg);
                } else {
                    self.duplicates.push(String::new());
                }
                Ok(())
            }
            Err(e) => Err(e).context("cannot record a payout"),
        }
    }

    /// Records a rejected row so the report lists it.
    pub fn add_rejected(&mut self, row: u64, reasons: &str) -> Result<()> {
        self.rows += 1;
        self.rejected += 1;
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO rejected_rows (run_id, row, reasons) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![self.run_id, row as i64, reasons])?;
        Ok(())
    }

    /// Commits the import, or refuses it (rolling back) when transaction ids
    /// collide with earlier runs.
    pub fn commit(self) -> Result<i64> {
        if !self.duplicates.is_empty() {
            let total = self.duplicates.len();
            let mut lines: Vec<String> = self
                .duplicates
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect();
            if total > lines.len() {
                lines.push(format!("... and {} more", total - lines.len()));
            }
            return Err(DuplicateIds(lines).into());
        }
        self.tx.execute(
            "UPDATE runs SET rows_total = ?2, rows_rejected = ?3, first_payout = ?4, last_payout = ?5
             WHERE id = ?1",
            params![
                self.run_id,
                self.rows as i64,
                self.rejected as i64,
                self.first_payout,
                self.last_payout
            ],
        )?;
        self.tx.commit().context("cannot commit the import")?;
        Ok(self.run_id)
    }
}

const RUN_COLS: &str = "id, identity, file_sha256, label, file_path, provider, rows_total, rows_rejected, created_at, finished_at";

fn run_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunInfo> {
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
    })
}

fn unresolved_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Unresolved> {
    let state: String = r.get(7)?;
    Ok(Unresolved {
        id: r.get(0)?,
        run_id: r.get(1)?,
        row: r.get::<_, i64>(2)? as u64,
        transaction_id: r.get(3)?,
        account_id: r.get(4)?,
        amount: r.get(5)?,
        currency: r.get(6)?,
        state: State::parse(&state).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(7, rusqlite::types::Type::Text, Box::new(e))
        })?,
        provider_code: r.get(8)?,
        provider_message: r.get(9)?,
    })
}

/// Columns of `payouts` that make a [`Work`], in the order `work_from_row` reads.
const WORK_COLS: &str =
    "id, row, state, transaction_id, wire_amount, currency, method, description,
    account_id, b_first, b_last, b_phone, b_email, sender_json";

/// The sender configured when the run was imported.
fn run_sender(conn: &Connection, run_id: i64) -> Result<Sender> {
    let json: String = conn
        .prepare_cached("SELECT sender_json FROM runs WHERE id = ?1")?
        .query_row([run_id], |r| r.get(0))?;
    serde_json::from_str(&json).context("corrupt sender in the database")
}

fn work_from_row(r: &rusqlite::Row<'_>, run_sender: &Sender) -> Result<Work> {
    let state: String = r.get(2)?;
    let state = State::parse(&state).with_context(|| format!("unknown state {state:?}"))?;
    let mut sender = run_sender.clone();
    if let Some(json) = r.get::<_, Option<String>>(13)? {
        let o: SenderOverride =
            serde_json::from_str(&json).context("corrupt sender override in the database")?;
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
    })
}

/// "Now" as SQLite formats it, read once per group commit so every row of
/// the group carries the same timestamp and no statement calls strftime.
fn sql_now(conn: &Connection) -> Result<String> {
    Ok(conn
        .prepare_cached(&format!("SELECT {NOW}"))?
        .query_row([], |r| r.get(0))?)
}

fn apply_in(tx: &rusqlite::Transaction<'_>, ts: &[Transition], now: &str) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "UPDATE payouts SET state = ?2,
                provider_code = COALESCE(?3, provider_code),
                provider_msg = COALESCE(?4, provider_msg),
                attempts = attempts + ?5,
                initiated_at = COALESCE(initiated_at, ?6),
                executed_at = COALESCE(executed_at, ?7),
                updated_at = ?8
         WHERE id = ?1 AND state = ?9",
    )?;
    for t in ts {
        if !crate::machine::allowed(t.from, t.to) {
            bail!(
                "refused to move payout {} from {} to {}: not a transition payrun makes",
                t.id,
                t.from,
                t.to
            );
        }
        let changed = stmt.execute(params![
            t.id,
            t.to.as_str(),
            t.code,
            t.message,
            t.attempts,
            t.stamp_initiated.then_some(now),
            t.stamp_executed.then_some(now),
            now,
            t.from.as_str(),
        ])?;
        if changed != 1 {
            bail!(
                "payout {} was not in state {} any more (moving it to {}); another process changed it",
                t.id,
                t.from,
                t.to
            );
        }
    }
    Ok(())
}

fn not_a_database(e: rusqlite::Error) -> anyhow::Error {
    anyhow::anyhow!(
        "the file is not a payrun database or is corrupted ({e}); pass --db with a new file name, or restore it from a backup"
    )
}

/// Refuses a file that exists, is not empty, and does not start with the
/// SQLite header, before SQLite is let near it.
fn check_header(path: &Path) -> Result<()> {
    let Ok(mut f) = std::fs::File::open(path) else {
        return Ok(());
    };
    let mut head = [0u8; 16];
    let n = f.read(&mut head).unwrap_or(0);
    if n == 0 {
        return Ok(());
    }
    if n < 16 || &head != b"SQLite format 3\0" {
        bail!(
            "{} is not a payrun database (not an SQLite file); pass --db with another file name",
            path.display()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The writer thread: group commit.

/// Upper bound on commands folded into one transaction, so one commit never
/// holds replies back for long.
const MAX_GROUP: usize = 4096;

enum Cmd {
    Claim {
        run_id: i64,
        limit: usize,
        reply: oneshot::Sender<Result<Vec<Work>, String>>,
    },
    Apply {
        ts: Vec<Transition>,
        reply: oneshot::Sender<Result<(), String>>,
    },
    /// Finish the commands queued before this one, then stop.
    Stop,
}

/// Handle to the writer thread. Cloneable; every command is answered once
/// its transaction has committed.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Cmd>,
}

/// Returns the store when the writer stops.
pub struct WriterThread {
    join: JoinHandle<Store>,
    tx: mpsc::Sender<Cmd>,
}

impl WriterThread {
    /// Stops the writer once the commands already queued are committed, and
    /// returns the store. Handles still held elsewhere (a task not yet
    /// dropped after an error) get "writer stopped" instead of keeping the
    /// thread alive.
    pub fn join(self) -> Result<Store> {
        let _ = self.tx.send(Cmd::Stop);
        self.join
            .join()
            .map_err(|_| anyhow::anyhow!("the database writer thread panicked"))
    }
}

impl Writer {
    /// Moves `store` onto a writer thread.
    pub fn spawn(store: Store) -> (Writer, WriterThread) {
        let (tx, rx) = mpsc::channel::<Cmd>();
        let join = std::thread::Builder::new()
            .name("payrun-store".into())
            .spawn(move || writer_loop(store, rx))
            .expect("cannot spawn the database writer thread");
        (Writer { tx: tx.clone() }, WriterThread { join, tx })
    }

    /// Claims up to `limit` pending payouts (intent `initiating` committed).
    pub async fn claim(&self, run_id: i64, limit: usize) -> Result<Vec<Work>> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Claim {
                run_id,
                limit,
                reply,
            })
            .map_err(|_| anyhow::anyhow!("the database writer stopped"))?;
        rx.await
            .map_err(|_| anyhow::anyhow!("the database writer stopped"))?
            .map_err(writer_error)
    }

    /// Commits transitions; returns once they are durable.
    pub async fn apply(&self, ts: Vec<Transition>) -> Result<()> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .send(Cmd::Apply { ts, reply })
            .map_err(|_| anyhow::anyhow!("the database writer stopped"))?;
        rx.await
            .map_err(|_| anyhow::anyhow!("the database writer stopped"))?
            .map_err(writer_error)
    }
}

fn writer_error(e: String) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot record progress in the database ({e}). Everything committed before is safe; \
         free disk space (or fix the database file), then run the same command again to resume"
    )
}

fn writer_loop(mut store: Store, rx: mpsc::Receiver<Cmd>) -> Store {
    let (mut groups, mut commands) = (0u64, 0u64);
    let started = std::time::Instant::now();
    let mut busy = std::time::Duration::ZERO;
    let mut stopping = false;
    let mut cursors = std::collections::HashMap::new();
    while !stopping {
        let Ok(first) = rx.recv() else { break };
        if matches!(first, Cmd::Stop) {
            break;
        }
        let t0 = std::time::Instant::now();
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(Cmd::Stop) => {
                    stopping = true;
                    break;
                }
                Ok(c) => group.push(c),
                Err(_) => break,
            }
        }
        groups += 1;
        commands += group.len() as u64;
        let result = run_group(&mut store, &group, &mut cursors);
        busy += t0.elapsed();
        match result {
            Ok(mut claimed) => {
                for cmd in group {
                    match cmd {
                        Cmd::Claim { reply, .. } => {
                            let _ = reply.send(Ok(claimed.remove(0)));
                        }
                        Cmd::Apply { reply, .. } => {
                            let _ = reply.send(Ok(()));
                        }
                        Cmd::Stop => {}
                    }
                }
            }
            Err(e) => {
                let msg = format!("{e:#}");
                for cmd in group {
                    match cmd {
                        Cmd::Claim { reply, .. } => {
                            let _ = reply.send(Err(msg.clone()));
                        }
                        Cmd::Apply { reply, .. } => {
                            let _ = reply.send(Err(msg.clone()));
                        }
                        Cmd::Stop => {}
                    }
                }
            }
        }
    }
    tracing::debug!(
        groups,
        commands,
        busy_ms = busy.as_millis() as u64,
        total_ms = started.elapsed().as_millis() as u64,
        "database writer done"
    );
    store
}

/// Runs a group of commands in one transaction; returns the claim results
/// in command order.
fn run_group(
    store: &mut Store,
    group: &[Cmd],
    cursors: &mut std::collections::HashMap<i64, i64>,
) -> Result<Vec<Vec<Work>>> {
    let tx = store.conn.transaction()?;
    let now = sql_now(&tx)?;
    let mut claimed = Vec::new();
    for cmd in group {
        match cmd {
            Cmd::Claim { run_id, limit, .. } => {
                // Claims walk the run forward from the last claimed id, so a
                // million-row run never rescans what it already sent.
                let after = cursors.get(run_id).copied().unwrap_or(0);
                let works = Store::claim_pending(&tx, *run_id, *limit, &now, after)?;
                claimed.push(works);
            }
            Cmd::Apply { ts, .. } => apply_in(&tx, ts, &now)?,
            Cmd::Stop => {}
        }
    }
    crate::fault::hit("before_commit");
    tx.commit().context("cannot commit")?;
    // Advance the cursors only once the claims are durable.
    for (cmd, works) in group
        .iter()
        .filter(|c| matches!(c, Cmd::Claim { .. }))
        .zip(&claimed)
    {
        if let (Cmd::Claim { run_id, .. }, Some(last)) = (cmd, works.last()) {
            cursors.insert(*run_id, last.id);
        }
    }
    Ok(claimed)
}

// ---------------------------------------------------------------------------
// The run lock.

/// Exclusive lock on a database for the life of a run. Backed by an OS file
/// lock on `<db>.lock`, so it disappears with the process however it dies.
#[derive(Debug)]
pub struct RunLock {
    _file: std::fs::File,
}

impl RunLock {
    pub fn acquire(db: &Path) -> Result<RunLock> {
        let path = lock_path(db);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    "another payrun process".to_string()
                } else {
                    format!("payrun pid {holder}")
                };
                bail!(
                    "the database {} is in use by {who}; one run at a time per database \
                     (wait for it to finish, or stop it, then run again)",
                    db.display()
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        file.flush()?;
        Ok(RunLock { _file: file })
    }
}

fn lock_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payout(row: u64, amount: &str) -> Payout {
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

    fn new_run<'a>(identity: &'a str, sender: &'a Sender) -> NewRun<'a> {
        NewRun {
            identity,
            file_sha256: identity,
            label: "",
            file_path: "payroll.csv",
            provider: "sandbox",
            sender,
        }
    }

    #[test]
    fn import_claim_apply_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender {
            firstname: "Acme".into(),
            ..Default::default()
        };
        let mut imp = store.begin_import(&new_run("abc", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.add(&payout(3, "2500"), "tx-3").unwrap();
        imp.add_rejected(4, "row 4: bad amount").unwrap();
        let run_id = imp.commit().unwrap();
        let run = store.find_run("abc").unwrap().unwrap();
        assert_eq!(run.id, run_id);
        assert_eq!(run.rows_total, 3);
        assert_eq!(run.rows_rejected, 1);

        let tx = store.conn.transaction().unwrap();
        let claimed = Store::claim_pending(&tx, run_id, 10, "2026-11-22T00:00:00.000Z", 0).unwrap();
        tx.commit().unwrap();
        assert_eq!(claimed.len(), 2);
        assert_eq!(claimed[0].request.transaction_id, "tx-2");
        assert_eq!(claimed[0].request.sender.firstname, "Acme");
        assert_eq!(claimed[0].request.beneficiary.firstname, "Aïcha");
        assert_eq!(
            store
                .works_in_state(run_id, State::Initiating)
                .unwrap()
                .len(),
            2
        );
        let intent = Transition::new(claimed[0].id, State::Initiating, State::Executing);
        let mut t = Transition::new(claimed[0].id, State::Executing, State::Executed);
        t.attempts = 2;
        t.stamp_executed = true;
        store.apply(&[intent, t]).unwrap();
        let totals = store.totals(run_id).unwrap();
        assert_eq!(totals["XOF"][&State::Executed].total, Decimal::from(1000));
        assert_eq!(totals["XOF"][&State::Initiating].count, 1);
        let mut lines = Vec::new();
        store
            .for_each_report_row(run_id, |r| {
                lines.push(r.clone());
                Ok(())
            })
            .unwrap();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].state, "executed");
        assert_eq!(lines[0].attempts, 2);
        assert!(!lines[0].executed_at.is_empty());
        assert_eq!(lines[2].state, "rejected");
    }

    #[test]
    fn cross_run_duplicate_ids_are_refused_and_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("one", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.commit().unwrap();
        let mut imp = store.begin_import(&new_run("two", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-new").unwrap();
        imp.add(&payout(3, "1000"), "tx-2").unwrap();
        let err = imp.commit().unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("tx-2") && msg.contains("already used by run 1"),
            "{msg}"
        );
        assert!(store.find_run("two").unwrap().is_none());
        assert!(store.payout_by_transaction_id("tx-new").unwrap().is_none());
    }

    #[test]
    fn large_import_keeps_row_order_and_finds_duplicates() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let n = 105;
        let mut imp = store.begin_import(&new_run("big", &sender)).unwrap();
        for i in 0..n {
            imp.add(&payout(i as u64 + 2, "100"), &format!("tx-{i:04}"))
                .unwrap();
        }
        imp.add_rejected(n as u64 + 2, "bad").unwrap();
        let run_id = imp.commit().unwrap();
        let mut rows = Vec::new();
        store
            .for_each_report_row(run_id, |r| {
                rows.push(r.row);
                Ok(())
            })
            .unwrap();
        assert_eq!(rows, (2..n as u64 + 3).collect::<Vec<_>>());
        assert_eq!(store.open_count(run_id).unwrap(), n as u64);

        // A second run reusing one id of the first is refused whole.
        let mut imp = store.begin_import(&new_run("again", &sender)).unwrap();
        for i in 0..40 {
            let id = if i == 17 {
                "tx-0003".to_string()
            } else {
                format!("new-{i}")
            };
            imp.add(&payout(i as u64 + 2, "100"), &id).unwrap();
        }
        let msg = format!("{:#}", imp.commit().unwrap_err());
        assert!(msg.contains("row 19") && msg.contains("tx-0003"), "{msg}");
        assert!(store.find_run("again").unwrap().is_none());
    }

    #[test]
    fn foreign_and_newer_databases_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, b"hello, this is not sqlite at all").unwrap();
        assert!(format!("{:#}", Store::open(&junk).unwrap_err()).contains("not a payrun database"));

        let foreign = dir.path().join("foreign.db");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        assert!(format!("{:#}", Store::open(&foreign).unwrap_err()).contains("another program"));

        let newer = dir.path().join("newer.db");
        drop(Store::open(&newer).unwrap());
        Connection::open(&newer)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
        assert!(format!("{:#}", Store::open(&newer).unwrap_err()).contains("newer payrun"));
        // Reopening a good database is fine and idempotent.
        let good = dir.path().join("good.db");
        drop(Store::open(&good).unwrap());
        drop(Store::open(&good).unwrap());
    }

    #[test]
    fn durability_pragmas() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("p.db")).unwrap();
        let sync: i64 = store
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 2, "synchronous must be FULL");
        let mode: String = store
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn run_lock_is_exclusive_and_names_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        let lock = RunLock::acquire(&db).unwrap();
        let err = RunLock::acquire(&db).unwrap_err();
        assert!(
            format!("{err:#}").contains(&format!("pid {}", std::process::id())),
            "{err:#}"
        );
        drop(lock);
        RunLock::acquire(&db).unwrap();
    }

    #[test]
    fn resolve_writes_audit() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        let run_id = imp.commit().unwrap();
        let p = store.payout_by_transaction_id("tx-2").unwrap().unwrap();
        store
            .apply(&[
                Transition::new(p.id, State::Pending, State::Initiating),
                Transition::new(p.id, State::Initiating, State::Executing),
                Transition::new(p.id, State::Executing, State::Unknown),
            ])
            .unwrap();
        assert_eq!(store.unresolved(Some(run_id)).unwrap().len(), 1);
        store
            .resolve(
                p.id,
                State::Unknown,
                State::Executed,
                "mark",
                "statement 2026-05",
                "OPERATOR_MARKED",
            )
            .unwrap();
        assert!(store.unresolved(Some(run_id)).unwrap().is_empty());
        let audit = store.audit(run_id).unwrap();
        assert_eq!(audit.len(), 1);
        assert_eq!(audit[0][0], "tx-2");
        assert_eq!(audit[0][5], "statement 2026-05");
        // A second decision on the same payout is refused.
        assert!(
            store
                .resolve(p.id, State::Unknown, State::ExecuteFailed, "mark", "x", "X")
                .is_err()
        );
    }
}
