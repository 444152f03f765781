//! Import: a new run and its payouts recorded in one transaction, all or
//! nothing. Transaction ids are unique across every run of the database
//! (a transaction id pays once, ever); a collision refuses the whole import
//! with [`ImportError::DuplicateIds`], which the caller lists for the user.

use super::Sqlite;
use super::sql::NOW;
use crate::machine::State;
use crate::payout::{Payout, SenderOverride};
use crate::store::errors::{DuplicateIds, ImportError, MAX_DUPLICATES_LISTED};
use crate::store::types::{NewRun, RetryLink};
use anyhow::{Context, Result};
use rusqlite::{OptionalExtension, params};

impl Sqlite {
    /// Starts importing a new run. Nothing is visible until
    /// [`Import::commit`]; dropping the import rolls it back.
    pub fn begin_import(&mut self, new: &NewRun<'_>) -> Result<Import<'_>> {
        let tx = self.conn.transaction()?;
        let sender_json = serde_json::to_string(new.sender)?;
        tx.execute(
            &format!(
                "INSERT INTO runs (identity, file_sha256, label, file_path, provider, sender_json,
                                   rows_total, rows_rejected, created_at, period, sheet, id_scheme)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, {NOW}, ?7, ?8, 3)"
            ),
            params![
                new.identity,
                new.file_sha256,
                new.label,
                new.file_path,
                new.provider,
                sender_json,
                new.period,
                new.sheet
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
}

/// An import in progress (one transaction).
pub struct Import<'a> {
    pub(super) tx: rusqlite::Transaction<'a>,
    pub(super) run_id: i64,
    pub(super) rows: u64,
    rejected: u64,
    duplicates: Vec<String>,
    first_payout: Option<i64>,
    last_payout: Option<i64>,
}

impl Import<'_> {
    pub fn run_id(&self) -> i64 {
        self.run_id
    }

    /// Adds a valid payout as `pending` under `transaction_id`; its payout
    /// id (`None` when the id is taken: the import will be refused).
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
                    currency, method, description, b_first, b_last, b_phone, b_email, sender_json, state,
                    retry_of, origin_run, account_key, account_given)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                    ?18, ?19)",
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
                State::Pending,
                link.map(|l| l.of),
                link.map(|l| l.origin_run),
                p.account_key,
                p.account_given,
            ]);
        match res {
            Ok(_) => {
                let id = self.tx.last_insert_rowid();
                self.first_payout.get_or_insert(id);
                self.last_payout = Some(id);
                Ok(Some(id))
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
                Ok(None)
            }
            Err(e) => Err(e).context("cannot record a payout"),
        }
    }

    /// Refuses the import for a reason found by the caller (a transaction
    /// id of the file that an earlier run used for another payout): one
    /// line among the duplicate-id lines.
    pub fn conflict(&mut self, line: String) {
        self.rows += 1;
        if self.duplicates.len() < MAX_DUPLICATES_LISTED {
            self.duplicates.push(line);
        } else {
            self.duplicates.push(String::new());
        }
    }

    /// Commits the import, or refuses it (rolling back) when transaction ids
    /// collide with earlier runs.
    pub fn commit(self) -> Result<i64, ImportError> {
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
            return Err(ImportError::DuplicateIds(DuplicateIds(lines)));
        }
        self.tx
            .execute(
            "UPDATE runs SET rows_total = ?2, rows_rejected = ?3, first_payout = ?4, last_payout = ?5
             WHERE id = ?1",
            params![
                self.run_id,
                self.rows as i64,
                self.rejected as i64,
                self.first_payout,
                self.last_payout
            ],
        )
            .context("cannot record the run's totals")?;
        self.tx.commit().context("cannot commit the import")?;
        Ok(self.run_id)
    }
}
