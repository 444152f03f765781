//! Four eyes (PostgreSQL), as `sqlite/approvals.rs`: the preparer
//! recorded inside the import's transaction; an approval recorded in one
//! repeatable-read transaction, so the set it checks against what the
//! approver was shown is the set it copies; and the reads that judge it.

use super::Pg;
use super::import::Import;
use super::schema::NOW;
use crate::store::approvals::{
    self, Action, ApprovalEvent, Change, Changes, EVENT_COLS, NewApproval, PayoutSet, Preparer,
    SetDigest,
};
use crate::who::Person;
use anyhow::{Context, Result};
use postgres::{IsolationLevel, Transaction};

/// The payouts of run `${n}` (alias `p`).
fn run_of(n: u8) -> String {
    format!("p.run_id = ${n}")
}

/// Rows fetched from a portal at a time.
const FETCH: i32 = 1000;

impl Import<'_> {
    /// Records who is importing this run.
    pub fn set_preparer(&mut self, p: &Person) -> Result<()> {
        let (run_id, p) = (self.run_id, p.clone());
        self.call(move |c| {
            c.execute(
                &format!(
                    "INSERT INTO run_preparers (run_id, name, os_user, host, at)
                     VALUES ($1, $2, $3, $4, {NOW})"
                ),
                &[&run_id, &p.name, &p.os_user, &p.host],
            )?;
            Ok(())
        })
        .context("cannot record who prepared the run")
    }
}

/// The set of run `run_id` as `tx` sees it, read a portal at a time.
fn payout_set_in(tx: &mut Transaction<'_>, run_id: i64) -> Result<PayoutSet> {
    let portal = tx.bind(&approvals::set_sql(&run_of(1)), &[&run_id])?;
    let mut digest = SetDigest::new();
    loop {
        let rows = tx.query_portal(&portal, FETCH)?;
        if rows.is_empty() {
            break;
        }
        for r in &rows {
            digest.add_row(approvals::set_item(r)?)?;
        }
    }
    Ok(digest.finish())
}

impl Pg {
    /// Who imported run `run_id` (`None`: before payrun recorded it).
    pub fn preparer(&self, run_id: i64) -> Result<Option<Preparer>> {
        self.call(move |c| {
            let row = c.query_opt(
                "SELECT name, os_user, host, at FROM run_preparers WHERE run_id = $1",
                &[&run_id],
            )?;
            Ok(row.map(|r| Preparer {
                person: Person {
                    name: r.get(0),
                    os_user: r.get(1),
                    host: r.get(2),
                },
                at: r.get(3),
            }))
        })
        .context("cannot read who prepared the run")
    }

    /// The run's payout set as it stands.
    pub fn payout_set(&self, run_id: i64) -> Result<PayoutSet> {
        self.call(move |c| {
            let mut tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let set = payout_set_in(&mut tx, run_id)?;
            tx.commit()?;
            Ok(set)
        })
        .context("cannot read the run's payouts")
    }

    /// Every approval and revocation of the run, oldest first.
    pub fn approval_events(&self, run_id: i64) -> Result<Vec<ApprovalEvent>> {
        self.call(move |c| {
            c.query(
                &format!("SELECT {EVENT_COLS} FROM approvals WHERE run_id = $1 ORDER BY id"),
                &[&run_id],
            )?
            .iter()
            .map(approvals::approval_event)
            .collect()
        })
        .context("cannot read the run's approvals")
    }

    /// Records an approval (with its payout set: `None` when the run no
    /// longer holds the set shown) or a revocation.
    pub fn record_approval(&mut self, new: &NewApproval<'_>) -> Result<Option<ApprovalEvent>> {
        let figures = approvals::figures_text(&new.set.figures);
        let overrides = new.overrides.join("\n");
        let payouts = new.set.payouts as i64;
        self.call(move |c| {
            let mut tx = c
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .start()?;
            if new.action == Action::Approved {
                let now = payout_set_in(&mut tx, new.run_id)?;
                if now.not_initiated > 0 || now.digest != new.set.digest {
                    return Ok(None);
                }
            }
            let id: i64 = tx
                .query_one(
                    &approvals::insert_sql('$', NOW),
                    &[
                        &new.run_id,
                        &new.action.as_str(),
                        &new.by.name,
                        &new.by.os_user,
                        &new.by.host,
                        &new.file_sha256,
                        &new.period,
                        &figures,
                        &payouts,
                        &new.set.digest,
                        &overrides,
                        &new.revokes,
                        &new.reason,
                    ],
                )?
                .get(0);
            if new.action == Action::Approved {
                tx.execute(
                    &approvals::copy_set_sql('$', &run_of(2)),
                    &[&id, &new.run_id],
                )?;
            }
            crate::fault::hit("before_approval_commit");
            tx.commit()?;
            let row = c.query_one(
                &format!("SELECT {EVENT_COLS} FROM approvals WHERE id = $1"),
                &[&id],
            )?;
            Ok(Some(approvals::approval_event(&row)?))
        })
        .context("cannot record the approval")
    }

    /// How the run's payouts differ from those approval `approval_id`
    /// covered.
    pub fn approval_changes(&self, approval_id: i64, run_id: i64) -> Result<Changes> {
        self.call(move |c| {
            let mut listed: Vec<Change> = Vec::new();
            for r in c.query(&approvals::left_or_altered_sql('$', false), &[&approval_id])? {
                listed.push(approvals::left_change(&r)?);
            }
            let run = run_of(2);
            for r in c.query(
                &approvals::joined_sql('$', &run, false),
                &[&approval_id, &run_id],
            )? {
                listed.push(approvals::joined_change(&r)?);
            }
            let left: i64 = c
                .query_one(&approvals::left_or_altered_sql('$', true), &[&approval_id])?
                .get(0);
            let joined: i64 = c
                .query_one(
                    &approvals::joined_sql('$', &run, true),
                    &[&approval_id, &run_id],
                )?
                .get(0);
            Ok(Changes {
                listed,
                total: (left + joined) as u64,
            })
        })
        .context("cannot compare the run with its approval")
    }
}
