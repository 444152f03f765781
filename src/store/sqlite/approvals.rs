//! Four eyes (SQLite; see `store/approvals.rs`): the preparer recorded by
//! the import, an approval recorded in one immediate transaction with the
//! payout set it covers (only if the run still holds exactly the set shown
//! to the approver), and the reads that judge it.

use super::Sqlite;
use super::import::Import;
use super::sql::NOW;
use crate::store::approvals::{
    self, Action, ApprovalEvent, Change, Changes, EVENT_COLS, NewApproval, PayoutSet, Preparer,
    SetDigest,
};
use crate::who::Person;
use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// The payouts of run `?{n}` (alias `p`), as a rowid range.
fn run_range(n: u8) -> String {
    format!(
        "p.id BETWEEN (SELECT COALESCE(first_payout, 1) FROM runs WHERE id = ?{n})
              AND (SELECT COALESCE(last_payout, 0) FROM runs WHERE id = ?{n})"
    )
}

impl Import<'_> {
    /// Records who is importing this run.
    pub fn set_preparer(&mut self, p: &Person) -> Result<()> {
        self.tx
            .execute(
                &format!(
                    "INSERT INTO run_preparers (run_id, name, os_user, host, at)
                     VALUES (?1, ?2, ?3, ?4, {NOW})"
                ),
                params![self.run_id, p.name, p.os_user, p.host],
            )
            .context("cannot record who prepared the run")?;
        Ok(())
    }
}

/// The set of run `run_id` as `conn` sees it now.
fn payout_set_in(conn: &Connection, run_id: i64) -> Result<PayoutSet> {
    let mut stmt = conn.prepare(&approvals::set_sql(&run_range(1)))?;
    let mut rows = stmt.query([run_id])?;
    let mut digest = SetDigest::new();
    while let Some(r) = rows.next()? {
        digest.add_row(approvals::set_item(r)?)?;
    }
    Ok(digest.finish())
}

impl Sqlite {
    /// Who imported run `run_id` (`None`: before payrun recorded it).
    pub fn preparer(&self, run_id: i64) -> Result<Option<Preparer>> {
        self.conn
            .query_row(
                "SELECT name, os_user, host, at FROM run_preparers WHERE run_id = ?1",
                [run_id],
                |r| {
                    Ok(Preparer {
                        person: Person {
                            name: r.get(0)?,
                            os_user: r.get(1)?,
                            host: r.get(2)?,
                        },
                        at: r.get(3)?,
                    })
                },
            )
            .optional()
            .context("cannot read who prepared the run")
    }

    /// The run's payout set as it stands.
    pub fn payout_set(&self, run_id: i64) -> Result<PayoutSet> {
        payout_set_in(&self.conn, run_id).context("cannot read the run's payouts")
    }

    /// Every approval and revocation of the run, oldest first.
    pub fn approval_events(&self, run_id: i64) -> Result<Vec<ApprovalEvent>> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {EVENT_COLS} FROM approvals WHERE run_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([run_id], |r| approvals::approval_event(r))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .context("cannot read the run's approvals")
    }

    /// Records an approval (with its payout set: `None` when the run no
    /// longer holds the set shown) or a revocation.
    pub fn record_approval(&mut self, new: &NewApproval<'_>) -> Result<Option<ApprovalEvent>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        if new.action == Action::Approved {
            let now = payout_set_in(&tx, new.run_id)?;
            if now.not_initiated > 0 || now.digest != new.set.digest {
                return Ok(None);
            }
        }
        let id: i64 = tx
            .query_row(
                &approvals::insert_sql('?', NOW),
                params![
                    new.run_id,
                    new.action.as_str(),
                    new.by.name,
                    new.by.os_user,
                    new.by.host,
                    new.file_sha256,
                    new.period,
                    approvals::figures_text(&new.set.figures),
                    new.set.payouts as i64,
                    new.set.digest,
                    new.overrides.join("\n"),
                    new.revokes,
                    new.reason
                ],
                |r| r.get(0),
            )
            .context("cannot record the approval")?;
        if new.action == Action::Approved {
            tx.execute(
                &approvals::copy_set_sql('?', &run_range(2)),
                params![id, new.run_id],
            )
            .context("cannot record the approved payouts")?;
        }
        crate::fault::hit("before_approval_commit");
        tx.commit()?;
        let event = self
            .conn
            .query_row(
                &format!("SELECT {EVENT_COLS} FROM approvals WHERE id = ?1"),
                [id],
                |r| approvals::approval_event(r),
            )
            .context("cannot read the approval back")?;
        Ok(Some(event))
    }

    /// How the run's payouts differ from those approval `approval_id`
    /// covered.
    pub fn approval_changes(&self, approval_id: i64, run_id: i64) -> Result<Changes> {
        let mut listed: Vec<Change> = Vec::new();
        let mut stmt = self
            .conn
            .prepare(&approvals::left_or_altered_sql('?', false))?;
        for c in stmt.query_map([approval_id], |r| approvals::left_change(r))? {
            listed.push(c?);
        }
        let range = run_range(2);
        let mut stmt = self
            .conn
            .prepare(&approvals::joined_sql('?', &range, false))?;
        for c in stmt.query_map(params![approval_id, run_id], |r| {
            approvals::joined_change(r)
        })? {
            listed.push(c?);
        }
        let left: i64 = self.conn.query_row(
            &approvals::left_or_altered_sql('?', true),
            [approval_id],
            |r| r.get(0),
        )?;
        let joined: i64 = self.conn.query_row(
            &approvals::joined_sql('?', &range, true),
            params![approval_id, run_id],
            |r| r.get(0),
        )?;
        Ok(Changes {
            listed,
            total: (left + joined) as u64,
        })
    }
}
