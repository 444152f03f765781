//! The SQLite backend of the checkpoint: the embedded default, one file on
//! the local disk. Everything that knows SQLite (`rusqlite`, pragmas, the
//! file header, the rowid-range trick) lives in this folder and never leaks
//! out of [`Sqlite`] and [`Import`]; the facade [`crate::store::Store`]
//! dispatches to it.
//!
//! - Durability: WAL with `synchronous=FULL`; throughput comes from group
//!   commit (many payouts' intents or outcomes in one transaction, one
//!   fsync), never from weaker settings.
//! - Schema: an append-only list of migrations keyed by `PRAGMA
//!   user_version`, as cargo's `util/sqlite.rs` does; a foreign or newer
//!   file is refused with a clear message rather than modified.
//!
//! One concern per file: [`schema`], [`open`], [`import`], [`apply`] (claim
//! and transitions), [`history`], [`person`] (the guard's look-ups), [`overrides`], [`reads`], [`cancel`], [`resolve`],
//! [`booked`], [`outputs`], [`sql`] (fragments and row mappers).

mod apply;
mod booked;
mod cancel;
mod history;
mod import;
mod open;
mod outputs;
mod overrides;
mod person;
mod reads;
mod resolve;
pub(crate) mod schema;
mod sql;
pub(crate) use sql::state_list;

pub use import::Import;
pub use schema::APPLICATION_ID;

use super::errors::WriteError;
use super::types::Work;
use super::writer::GroupOp;
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::PathBuf;

/// An open SQLite checkpoint.
pub struct Sqlite {
    pub(crate) conn: Connection,
    path: PathBuf,
    /// Per run, the last payout id claimed through this connection: claims
    /// walk the run forward, so a million-row run never rescans what it
    /// already sent.
    cursors: HashMap<i64, i64>,
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite").field("path", &self.path).finish()
    }
}

impl Sqlite {
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Runs a writer group in one transaction; returns the claim results in
    /// command order.
    pub(crate) fn commit_group(
        &mut self,
        group: &[GroupOp<'_>],
    ) -> Result<Vec<Vec<Work>>, WriteError> {
        let tx = self.conn.transaction()?;
        let now = sql::sql_now(&tx)?;
        let mut claimed = Vec::new();
        for op in group {
            match op {
                GroupOp::Claim { run_id, limit } => {
                    let after = self.cursors.get(run_id).copied().unwrap_or(0);
                    claimed.push(Sqlite::claim_pending(&tx, *run_id, *limit, &now, after)?);
                }
                GroupOp::Apply(ts) => apply::apply_in(&tx, ts, &now)?,
            }
        }
        crate::fault::hit("before_commit");
        tx.commit()?;
        // Advance the cursors only once the claims are durable.
        for (op, works) in group
            .iter()
            .filter(|op| matches!(op, GroupOp::Claim { .. }))
            .zip(&claimed)
        {
            if let (GroupOp::Claim { run_id, .. }, Some(last)) = (op, works.last()) {
                self.cursors.insert(*run_id, last.id);
            }
        }
        Ok(claimed)
    }
}
