//! Opening a database file: refuse what is not a payrun database (another
//! program's SQLite file, a non-SQLite file, a newer schema) before touching
//! it, set the durability pragmas, and migrate. This is where the durability
//! rule is set: WAL, `synchronous = FULL`.

use super::Sqlite;
use super::schema::{self, APPLICATION_ID};
use anyhow::{Context, Result, bail};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::Path;

impl Sqlite {
    /// Opens (creating if needed) the database at `path`, checks that it is
    /// a payrun database this version understands, and migrates it.
    pub fn open(path: &Path) -> Result<Sqlite> {
        check_header(path)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .with_context(|| format!("cannot open the database {}", path.display()))?;
        let mut store = Sqlite {
            conn,
            path: path.to_path_buf(),
            cursors: Default::default(),
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
        if version > schema::current_version() {
            bail!(
                "this database was written by a newer payrun (schema {version}, this payrun knows {}); \
                 upgrade payrun to use it",
                schema::current_version()
            );
        }
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            bail!("cannot switch the database to WAL mode (got {mode})");
        }
        // FULL: a commit is on disk before the engine sends the request it
        // announces (see `ARCHITECTURE.md`, "Durability"). An 8 MiB page cache: larger sped
        // up nothing measurable and a million-row import must stay under
        // 64 MiB alongside the validator's duplicate-id table.
        self.conn.execute_batch(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -8192;",
        )?;
        // Plans that never depend on the values bound: SQLite otherwise
        // marks a statement to be compiled again when a value bound to a
        // `column = ?` term changes, and rusqlite's statement cache clears
        // the bindings of every statement it takes back, which then
        // compiles the statement again at its next use. The import's
        // per-row lookup of earlier payouts spent 40 % of the import's time
        // re-parsing its SQL (docs/PERFORMANCE.md, "The import, again").
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        schema::migrate(&mut self.conn, version)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_and_newer_databases_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, b"hello, this is not sqlite at all").unwrap();
        assert!(
            format!("{:#}", Sqlite::open(&junk).unwrap_err()).contains("not a payrun database")
        );

        let foreign = dir.path().join("foreign.db");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t(x)")
            .unwrap();
        assert!(format!("{:#}", Sqlite::open(&foreign).unwrap_err()).contains("another program"));

        let newer = dir.path().join("newer.db");
        drop(Sqlite::open(&newer).unwrap());
        Connection::open(&newer)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99")
            .unwrap();
        assert!(format!("{:#}", Sqlite::open(&newer).unwrap_err()).contains("newer payrun"));
        // Reopening a good database is fine and idempotent.
        let good = dir.path().join("good.db");
        drop(Sqlite::open(&good).unwrap());
        drop(Sqlite::open(&good).unwrap());
    }

    #[test]
    fn durability_pragmas() {
        let dir = tempfile::tempdir().unwrap();
        let store = Sqlite::open(&dir.path().join("p.db")).unwrap();
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

    /// A cached statement is not compiled again at each use because the
    /// values bound to it changed: the import looks up earlier payouts
    /// once per row with the statement below (`history::earlier`).
    #[test]
    fn cached_statements_are_not_compiled_again_for_new_values() {
        use rusqlite::StatementStatus;
        let dir = tempfile::tempdir().unwrap();
        let store = Sqlite::open(&dir.path().join("p.db")).unwrap();
        let sql = format!(
            "SELECT {} FROM payouts p JOIN runs r ON r.id = p.run_id
             WHERE p.transaction_id = ?1 AND p.run_id <> ?2",
            crate::store::rows::EARLIER_COLS
        );
        for i in 0..20 {
            let mut stmt = store.conn.prepare_cached(&sql).unwrap();
            let found = stmt
                .query([format!("tx-{i}"), "1".into()])
                .unwrap()
                .next()
                .unwrap()
                .is_some();
            assert!(!found);
            assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "use {i}");
        }
    }

    /// The run lock creates the database file empty before it is opened:
    /// an empty file is a new database, not a foreign one.
    #[test]
    fn an_empty_file_opens_as_a_new_database() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        std::fs::write(&db, b"").unwrap();
        let store = Sqlite::open(&db).unwrap();
        let id: i32 = store
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(id, APPLICATION_ID);
    }
}
