//! The PostgreSQL backend of the checkpoint: for platforms whose machines
//! come and go, and for several workers sharing one run. Same schema
//! discipline (append-only migrations), same durability rule (an intent is
//! committed before its request leaves; commits grouped), same operations
//! as [`super::sqlite`]; the facade [`crate::store::Store`] dispatches to it.
//!
//! The `postgres` client is blocking, like `rusqlite`; it runs its own
//! small runtime, so it must not be called on a thread that drives async
//! tasks: [`off_runtime`] moves such a call to a short-lived thread.

mod apply;
mod booked;
mod cancel;
mod conn;
mod history;
mod import;
mod outputs;
mod reads;
mod resolve;
pub(crate) mod schema;
#[allow(dead_code)] // used by the operations being ported
mod sql;

pub use import::Import;

use super::errors::WriteError;
use super::target::PgTarget;
use super::types::Work;
use super::writer::GroupOp;
use anyhow::{Context, Result};
use std::cell::RefCell;

/// An open PostgreSQL checkpoint.
pub struct Pg {
    #[allow(dead_code)] // used by the operations being ported
    client: RefCell<postgres::Client>,
    target: PgTarget,
}

impl Pg {
    /// Connects and migrates.
    pub fn connect(target: &PgTarget) -> Result<Pg> {
        let url = target.url().to_string();
        let client = off_runtime(move || -> Result<postgres::Client> {
            let mut client = postgres::Client::connect(&url, postgres::NoTls)?;
            schema::migrate(&mut client)?;
            Ok(client)
        })
        .with_context(|| format!("cannot use the database {target}"))?;
        Ok(Pg {
            client: RefCell::new(client),
            target: target.clone(),
        })
    }

    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    pub(crate) fn commit_group(
        &mut self,
        _group: &[GroupOp<'_>],
    ) -> Result<Vec<Vec<Work>>, WriteError> {
        Err(WriteError::Disk(
            "the PostgreSQL store is not complete yet".into(),
        ))
    }
}

/// Runs a blocking database call where it may block: directly on a plain
/// thread, on a scoped thread when the caller is inside a Tokio runtime.
pub(crate) fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| s.spawn(f).join()).unwrap_or_else(|p| std::panic::resume_unwind(p))
}

pub(crate) fn todo<T>() -> Result<T> {
    anyhow::bail!("the PostgreSQL store is not complete yet")
}

#[cfg(test)]
mod tests {
    use crate::store::test_support::pg_target;
    use crate::store::{Db, Store};

    #[test]
    fn connects_migrates_and_reconnects() {
        let Some(db) = pg_target() else {
            eprintln!("skipped: PAYRUN_TEST_POSTGRES is not set");
            return;
        };
        drop(Store::connect(&db).unwrap());
        // A second connection finds the schema current and leaves it.
        assert!(matches!(Store::connect(&db).unwrap(), Store::Postgres(_)));
        assert!(matches!(db, Db::Postgres(_)));
    }
}
