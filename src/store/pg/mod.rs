//! The PostgreSQL backend of the checkpoint: for platforms whose machines
//! come and go, and for several workers sharing one run. Same schema
//! discipline (append-only migrations), same durability rule (an intent is
//! committed before its request leaves; commits grouped), same operations
//! as [`super::sqlite`]; the facade [`crate::store::Store`] dispatches to it.
//!
//! The `postgres` client is blocking, like `rusqlite`; it runs its own
//! small runtime, so it must not be called on a thread that drives async
//! tasks: [`off_runtime`] moves such a call to a short-lived thread, and an
//! import, which makes a call per row, takes the connection to a thread of
//! its own for its whole life (`driver.rs`).

mod apply;
mod approvals;
mod batch;
mod booked;
mod cancel;
mod conn;
mod driver;
mod history;
mod import;
mod outputs;
mod overrides;
pub mod password;
mod person;
mod rate;
mod reads;
mod resolve;
pub(crate) mod schema;
mod settings;
#[allow(dead_code)] // used by the operations being ported
mod sql;
pub mod tls;
mod workers;

pub use import::Import;

use super::target::PgTarget;
use anyhow::{Context, Result};
use std::cell::RefCell;
use std::collections::HashMap;

/// An open PostgreSQL checkpoint.
pub struct Pg {
    /// The connection; `None` only while an [`Import`] holds it (it gives
    /// it back when committed or dropped) and inside [`Drop`].
    client: RefCell<Option<postgres::Client>>,
    target: PgTarget,
    /// The worker this process registered for a shared run: its claims
    /// take the lease (`lease_owner`), and its transitions apply only to
    /// payouts it still holds (PG.md, "Fence"). `None`: a single process.
    worker: Option<i64>,
    /// Statements of the write path, prepared once per connection.
    prepared: HashMap<&'static str, postgres::Statement>,
    /// Per run, the last payout id claimed through this connection (see
    /// `apply.rs`: a hint that keeps claims off what was already sent).
    cursors: HashMap<i64, i64>,
}

impl Pg {
    /// Connects (TLS as `sslmode` says: `tls.rs`) and migrates. Commits
    /// wait for the server's disk (`synchronous_commit = on`), whatever the
    /// server's own setting.
    pub fn connect(target: &PgTarget) -> Result<Pg> {
        let client = off_runtime(move || -> Result<postgres::Client> {
            let mut settings = settings::Settings::parse(target.url())?;
            settings.default_password(target.password(), target.password_from());
            let mut client = settings.connect()?;
            client.batch_execute("SET synchronous_commit = on")?;
            schema::migrate(&mut client)?;
            Ok(client)
        })
        .with_context(|| format!("cannot use the database {target}"))?;
        Ok(Pg {
            client: RefCell::new(Some(client)),
            target: target.clone(),
            worker: None,
            prepared: HashMap::new(),
            cursors: HashMap::new(),
        })
    }

    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    /// The worker id this process registered (`None`: not a shared run).
    pub fn set_worker(&mut self, id: Option<i64>) {
        self.worker = id;
    }

    pub fn worker(&self) -> Option<i64> {
        self.worker
    }
}

pub(super) const LOST: &str = "the connection to the database was lost";

/// Dropping a client closes it with a blocking call, which would panic on
/// a thread that drives async tasks: there, it is closed on a plain thread.
impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().take()
            && tokio::runtime::Handle::try_current().is_ok()
        {
            let _ = std::thread::spawn(move || drop(client)).join();
        }
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

#[cfg(test)]
mod tests {
    use crate::store::test_support::pg_target;
    use crate::store::{Db, Store};

    #[test]
    fn connects_migrates_and_reconnects() {
        let Some(db) = pg_target() else {
            return;
        };
        drop(Store::connect(&db).unwrap());
        // A second connection finds the schema current and leaves it.
        assert!(matches!(Store::connect(&db).unwrap(), Store::Postgres(_)));
        assert!(matches!(db, Db::Postgres(_)));
    }
}
