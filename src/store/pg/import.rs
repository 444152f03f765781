//! Import (PostgreSQL): a new run and its payouts recorded in one
//! transaction, all or nothing, as in `sqlite/import.rs`. Imports are
//! serialised by an advisory lock, under which ids are given as SQLite
//! gives rowids (the highest so far, plus one): the same run and payout
//! ids as SQLite, consecutive and in file order within a run, and an
//! import rolled back leaves no gap. Payouts are buffered and inserted
//! [`BATCH`] rows per statement (`batch.rs`); a transaction id already
//! recorded is skipped by the insert (`ON CONFLICT DO NOTHING`) and
//! listed, the whole import then refused with
//! [`ImportError::DuplicateIds`] — the same lines in the same order as
//! SQLite.

use super::batch::Columns;
use super::driver::Driver;
use super::{LOST, Pg};
use crate::payout::Payout;
use crate::store::errors::{DuplicateIds, ImportError, MAX_DUPLICATES_LISTED};
use crate::store::types::{NewRun, RetryLink};
use anyhow::{Context, Result};
use postgres::{Client, Statement};
use std::collections::{HashMap, HashSet};

/// Key of the advisory lock held by an import until it commits.
const IMPORT_LOCK: i64 = 0x5041_5952_0002;

/// Payouts (and skipped rows) per insert statement.
pub(super) const BATCH: usize = 1000;

impl Pg {
    /// Starts importing a new run. Nothing is visible until
    /// [`Import::commit`]; dropping the import rolls it back.
    pub fn begin_import(&mut self, new: &NewRun<'_>) -> Result<Import<'_>> {
        let sender_json = serde_json::to_string(new.sender)?;
        let values: [String; 8] = [
            new.identity.into(),
            new.file_sha256.into(),
            new.label.into(),
            new.file_path.into(),
            new.provider.into(),
            sender_json,
            new.period.into(),
            new.sheet.into(),
        ];
        let client = self.client.get_mut().take().context(LOST)?;
        let mut imp = Import {
            pg: self,
            driver: Some(Driver::new(client)),
            committed: false,
            run_id: 0,
            next_id: 0,
            earlier: None,
            person: None,
            overrides: Vec::new(),
            rows: 0,
            seq: 0,
            pending: Columns::default(),
            skipped: Vec::new(),
            duplicates: Vec::new(),
            duplicate_total: 0,
            first_payout: None,
            last_payout: None,
        };
        let (run_id, next_id, earlier) = imp
            .call(move |c| {
                c.batch_execute("BEGIN")?;
                c.execute("SELECT pg_advisory_xact_lock($1)", &[&IMPORT_LOCK])?;
                let [a, b, c2, d, e, f, g, h] = &values;
                let run = c.query_one(
                    &format!(
                        "INSERT INTO runs (id, identity, file_sha256, label, file_path, provider,
                            sender_json, rows_total, rows_rejected, created_at, period, sheet,
                            id_scheme)
                         VALUES ((SELECT COALESCE(max(id), 0) + 1 FROM runs),
                            $1, $2, $3, $4, $5, $6, 0, 0, {}, $7, $8, 3) RETURNING id",
                        super::schema::NOW
                    ),
                    &[a, b, c2, d, e, f, g, h],
                )?;
                let last = c.query_one("SELECT COALESCE(max(id), 0) FROM payouts", &[])?;
                // Asked once per batch of rows: prepared once per import.
                let earlier = c.prepare(&super::history::earlier_sql())?;
                let person = c.prepare(&super::person::same_person_sql())?;
                Ok((run.get(0), last.get::<_, i64>(0) + 1, (earlier, person)))
            })
            .context("cannot record the run")?;
        (imp.run_id, imp.next_id) = (run_id, next_id);
        (imp.earlier, imp.person) = (Some(earlier.0), Some(earlier.1));
        Ok(imp)
    }
}

/// An import in progress (one transaction on the connection it holds).
pub struct Import<'a> {
    pg: &'a mut Pg,
    /// The connection, taken from `pg` and given back on drop.
    driver: Option<Driver>,
    committed: bool,
    pub(super) run_id: i64,
    /// The id the next payout added gets.
    next_id: i64,
    /// The look-up of [`Import::earlier`], prepared.
    pub(super) earlier: Option<Statement>,
    /// The look-up of [`Import::same_person`], prepared.
    pub(super) person: Option<Statement>,
    /// Overrides not yet inserted (after the payouts they name).
    pub(super) overrides: Vec<crate::store::overrides::NewOverride>,
    pub(super) rows: u64,
    /// Rows added so far: orders the duplicate lines found at a flush
    /// among those the caller reported by [`Import::conflict`].
    seq: u64,
    pending: Columns,
    /// Skipped rows not yet inserted: (row, payout id).
    pub(super) skipped: Vec<(i64, i64)>,
    /// The first duplicates (by `seq`); `duplicate_total` counts them all.
    duplicates: Vec<(u64, Duplicate)>,
    duplicate_total: usize,
    first_payout: Option<i64>,
    last_payout: Option<i64>,
}

enum Duplicate {
    Line(String),
    Id { row: u64, transaction_id: String },
}

impl Import<'_> {
    pub fn run_id(&self) -> i64 {
        self.run_id
    }

    /// Runs `f` on the import's connection (inside its transaction).
    pub(super) fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.driver.as_ref().context(LOST)?.run(f)?
    }

    /// Adds a valid payout as `pending` under `transaction_id`; its payout
    /// id (if the id turns out taken, the import is refused at commit).
    pub fn add(&mut self, p: &Payout, transaction_id: &str) -> Result<Option<i64>> {
        self.insert(p, transaction_id, None)
    }

    /// Adds a valid payout as `pending` under `transaction_id`, re-paying
    /// the failed earlier payout of `link` (recorded as the link).
    pub fn add_retry(
        &mut self,
        p: &Payout,
        transaction_id: &str,
        link: RetryLink,
    ) -> Result<Option<i64>> {
        self.insert(p, transaction_id, Some(link))
    }

    fn insert(
        &mut self,
        p: &Payout,
        transaction_id: &str,
        link: Option<RetryLink>,
    ) -> Result<Option<i64>> {
        self.rows += 1;
        self.seq += 1;
        let id = self.next_id;
        self.pending.push(self.seq, id, p, transaction_id, link)?;
        self.next_id += 1;
        if self.pending.len() >= BATCH {
            self.flush_payouts()?;
        }
        Ok(Some(id))
    }

    /// Inserts the buffered payouts; those whose transaction id is taken
    /// become duplicates.
    pub(super) fn flush_payouts(&mut self) -> Result<()> {
        if self.pending.len() == 0 {
            return Ok(());
        }
        let cols = std::mem::take(&mut self.pending);
        let run_id = self.run_id;
        let (mut cols, inserted) = self.call(move |c| {
            let inserted = cols.insert(c, run_id).context("cannot record a payout")?;
            Ok((cols, inserted))
        })?;
        for &id in &inserted {
            self.first_payout = Some(self.first_payout.map_or(id, |f| f.min(id)));
            self.last_payout = Some(self.last_payout.map_or(id, |l| l.max(id)));
        }
        if inserted.len() < cols.len() {
            // Rows are inserted in file order: of two rows with one id,
            // the first got it.
            let inserted: HashSet<i64> = inserted.into_iter().collect();
            for i in 0..cols.len() {
                if !inserted.contains(&cols.id[i]) {
                    let dup = Duplicate::Id {
                        row: cols.row[i] as u64,
                        transaction_id: cols.transaction_id[i].clone(),
                    };
                    self.push_duplicate(cols.seq[i], dup);
                }
            }
        }
        cols.clear();
        self.pending = cols;
        Ok(())
    }

    fn push_duplicate(&mut self, seq: u64, d: Duplicate) {
        self.duplicate_total += 1;
        self.duplicates.push((seq, d));
        // Only the first lines are listed: keep memory bounded.
        if self.duplicates.len() > 4 * MAX_DUPLICATES_LISTED {
            self.duplicates.sort_by_key(|(s, _)| *s);
            self.duplicates.truncate(MAX_DUPLICATES_LISTED);
        }
    }

    /// Refuses the import for a reason found by the caller (a transaction
    /// id of the file that an earlier run used for another payout): one
    /// line among the duplicate-id lines.
    pub fn conflict(&mut self, line: String) {
        self.rows += 1;
        self.seq += 1;
        self.push_duplicate(self.seq, Duplicate::Line(line));
    }

    /// Commits the import, or refuses it (rolling back) when transaction ids
    /// collide with earlier runs.
    pub fn commit(mut self) -> Result<i64, ImportError> {
        self.flush_payouts()?;
        self.flush_skipped()?;
        self.flush_overrides()?;
        if self.duplicate_total > 0 {
            return Err(ImportError::DuplicateIds(DuplicateIds(
                self.duplicate_lines()?,
            )));
        }
        let (run_id, rows) = (self.run_id, self.rows as i64);
        let (first, last) = (self.first_payout, self.last_payout);
        self.call(move |c| {
            c.execute(
                "UPDATE runs SET rows_total = $2, rows_rejected = 0, first_payout = $3,
                    last_payout = $4 WHERE id = $1",
                &[&run_id, &rows, &first, &last],
            )
            .context("cannot record the run's totals")?;
            c.batch_execute("COMMIT")
                .context("cannot commit the import")
        })?;
        self.committed = true;
        Ok(self.run_id)
    }

    /// The listed duplicate lines, then how many more there were.
    fn duplicate_lines(&mut self) -> Result<Vec<String>> {
        self.duplicates.sort_by_key(|(s, _)| *s);
        self.duplicates.truncate(MAX_DUPLICATES_LISTED);
        let ids: Vec<String> = self
            .duplicates
            .iter()
            .filter_map(|(_, d)| match d {
                Duplicate::Id { transaction_id, .. } => Some(transaction_id.clone()),
                Duplicate::Line(_) => None,
            })
            .collect();
        let holders: HashMap<String, (i64, i64, String)> = self.call(move |c| {
            let rows = c.query(
                "SELECT p.transaction_id, p.run_id, p.row, r.file_path
                 FROM payouts p JOIN runs r ON r.id = p.run_id
                 WHERE p.transaction_id = ANY($1)",
                &[&ids],
            )?;
            Ok(rows
                .iter()
                .map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3))))
                .collect())
        })?;
        let mut lines: Vec<String> = self
            .duplicates
            .drain(..)
            .map(|(_, d)| match d {
                Duplicate::Line(line) => line,
                Duplicate::Id {
                    row,
                    transaction_id: t,
                } => match holders.get(&t) {
                    Some((run, held, file)) if *run != self.run_id => format!(
                        "row {row}: transaction_id {t:?} is already used by run {run} ({file}, row {held}); \
                         a transaction id pays once, ever: give this row a new transaction_id"
                    ),
                    Some((_, held, _)) => format!(
                        "row {row}: transaction_id {t:?} repeats row {held} of this file; give each row its own transaction_id"
                    ),
                    None => format!("row {row}: cannot record transaction_id {t:?}"),
                },
            })
            .collect();
        if self.duplicate_total > lines.len() {
            lines.push(format!(
                "... and {} more",
                self.duplicate_total - lines.len()
            ));
        }
        Ok(lines)
    }
}

/// Rolls back what was not committed and gives the connection back.
impl Drop for Import<'_> {
    fn drop(&mut self) {
        if let Some(driver) = self.driver.take() {
            if !self.committed {
                let _ = driver.run(|c| c.batch_execute("ROLLBACK"));
            }
            *self.pg.client.get_mut() = driver.finish();
        }
    }
}
