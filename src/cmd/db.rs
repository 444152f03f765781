//! `--db` for every command that reads or writes the checkpoint: the flag,
//! else the `database` key of `payrun.toml`, else the per-user default
//! file, as a [`Db`] — a file path (SQLite) or a `postgres://` connection
//! string — and what a command does with it before opening it: a file must
//! exist (except for `run`), and holds one process at a time; a PostgreSQL
//! database always exists and is shared. Shown with its password hidden.

use crate::config::Config;
use crate::store::pg::password::Sources as PasswordSources;
use crate::store::{Db, RunLock, Store};
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// The checkpoint a command uses; for PostgreSQL, with its password found
/// (`PGPASSWORD`, `database_password_file`, `PGPASSFILE` or `~/.pgpass`)
/// when the connection string has none, and any warning about its file
/// told on stderr.
pub fn resolve(flag: Option<&Path>, cfg: &Config, sandbox: bool) -> Result<Db> {
    let path = crate::config::resolve_db(flag, cfg, sandbox)?;
    let mut db = from_path(path);
    if let Db::Postgres(target) = &mut db {
        for w in target.find_password(&password_sources(cfg))? {
            eprintln!("payrun: warning: {w}");
        }
    }
    Ok(db)
}

/// Where a PostgreSQL password may be, besides the connection string.
fn password_sources(cfg: &Config) -> PasswordSources {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    PasswordSources {
        env: var("PGPASSWORD").map(|v| v.to_string_lossy().into_owned()),
        file: cfg.database_password_file.clone(),
        pgpass: var("PGPASSFILE")
            .map(PathBuf::from)
            .or_else(|| dirs::home_dir().map(|h| h.join(".pgpass"))),
    }
}

/// A path that reads `postgres://…` is a connection string.
fn from_path(path: PathBuf) -> Db {
    match path.to_str() {
        Some(s) => Db::parse(s),
        None => Db::File(path),
    }
}

/// Opens a checkpoint that must already hold runs: a missing file is an
/// error naming it (with `hint` after it), never a new empty database.
pub fn open_existing(db: &Db, hint: &str) -> Result<Store> {
    if let Db::File(path) = db
        && !path.exists()
    {
        bail!("no database at {}; {hint}", path.display());
    }
    Store::connect(db)
}

/// On a shared (PostgreSQL) database, before `reconcile` settles payouts
/// or `cancel` ends a run: refused, naming them, while workers of `runs`
/// (all: `None`) may still send; then no worker joins until the command
/// ends (`Store::exclude_workers`). Nothing to do on a SQLite file, whose
/// lock ([`lock`]) admits one process.
pub fn exclude_workers(store: &mut Store, runs: Option<Vec<i64>>) -> Result<()> {
    if !store.is_shared() {
        return Ok(());
    }
    store.exclude_workers(runs, super::run::lease_terms_from_env()?)
}

/// One process at a time on a SQLite file (`run`, `reconcile`,
/// `cancel`); on PostgreSQL, workers share the database and an operator's
/// change waits for none of them ([`exclude_workers`]).
pub fn lock(db: &Db) -> Result<Option<RunLock>> {
    match db {
        Db::File(path) => Ok(Some(RunLock::acquire(path)?)),
        Db::Postgres(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_string_in_the_flag_or_the_config_is_postgres() {
        let cfg = Config::default();
        let url = Path::new("postgres://pay:secret@db.example/pay");
        let db = resolve(Some(url), &cfg, false).unwrap();
        assert!(matches!(db, Db::Postgres(_)));
        assert!(!db.to_string().contains("secret"), "{db}");
        assert!(db.file().is_none());
        let cfg = Config {
            database: Some("postgresql://u@h/d".into()),
            ..Config::default()
        };
        assert!(matches!(
            resolve(None, &cfg, false).unwrap(),
            Db::Postgres(_)
        ));
        let file = resolve(Some(Path::new("payrun.db")), &cfg, false).unwrap();
        assert_eq!(file, Db::File("payrun.db".into()));
        assert_eq!(file.file(), Some(Path::new("payrun.db")));
    }

    #[test]
    fn a_missing_file_is_named_and_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::File(dir.path().join("none.db"));
        let err = open_existing(&db, "pass --db").unwrap_err().to_string();
        assert!(
            err.contains("no database at") && err.contains("pass --db"),
            "{err}"
        );
        assert!(!dir.path().join("none.db").exists());
    }
}
