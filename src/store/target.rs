//! Where the checkpoint lives, as `--db` (or `database` in `payrun.toml`)
//! names it: a file path (SQLite, the default) or a `postgres://` /
//! `postgresql://` connection string. A connection string may carry a
//! password: it is shown only with the password replaced, never logged or
//! written to a report. A password found elsewhere (`PGPASSWORD`,
//! `database_password_file`, `~/.pgpass`: `pg/password.rs`) travels
//! beside the string as a secret, and is never shown at all.

use super::pg::password::{self, Sources};
use anyhow::Result;
use secrecy::SecretString;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// The checkpoint a command uses.
#[derive(Clone, PartialEq, Eq)]
pub enum Db {
    File(PathBuf),
    Postgres(PgTarget),
}

/// A PostgreSQL connection string. `Debug` and `Display` hide the password.
#[derive(Clone)]
pub struct PgTarget {
    url: String,
    /// The password when the string has none ([`PgTarget::find_password`]).
    password: Option<Arc<SecretString>>,
    /// Where that password came from ("PGPASSWORD", a file), for messages.
    password_from: Option<String>,
}

/// Two targets are the same database when their strings are.
impl PartialEq for PgTarget {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
    }
}

impl Eq for PgTarget {}

impl Db {
    /// Reads `--db`: a `postgres://` or `postgresql://` URL selects
    /// PostgreSQL; anything else is a file path.
    pub fn parse(s: &str) -> Db {
        let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            Db::Postgres(PgTarget {
                url: s.to_string(),
                password: None,
                password_from: None,
            })
        } else {
            Db::File(PathBuf::from(s))
        }
    }

    /// The file path, for SQLite.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Db::File(p) => Some(p),
            Db::Postgres(_) => None,
        }
    }
}

impl PgTarget {
    /// The connection string itself, for connecting only.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Finds the password in `sources` when the string has none; returns
    /// what the operator should hear about its file (`chmod 600`).
    pub fn find_password(&mut self, sources: &Sources) -> Result<Vec<String>> {
        let found = password::find(&self.url, sources)?;
        self.password = found.password.map(Arc::new);
        self.password_from = found.from;
        Ok(found.warnings)
    }

    /// The password found by [`PgTarget::find_password`], for connecting.
    pub(crate) fn password(&self) -> Option<&SecretString> {
        self.password.as_deref()
    }

    /// Where the password found came from (`None`: the string's own, or none).
    pub(crate) fn password_from(&self) -> Option<&str> {
        self.password_from.as_deref()
    }
}

impl fmt::Display for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.url))
    }
}

impl fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgTarget({self})")
    }
}

impl fmt::Display for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Db::File(p) => write!(f, "{}", p.display()),
            Db::Postgres(t) => t.fmt(f),
        }
    }
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Db::File(p) => write!(f, "Db::File({})", p.display()),
            Db::Postgres(t) => write!(f, "Db::Postgres({t})"),
        }
    }
}

/// The URL with any password (`user:secret@`, `password=` in the query)
/// replaced by `***`.
fn redact(url: &str) -> String {
    let (main, query) = url.split_once('?').unwrap_or((url, ""));
    let mut out = match main.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
                None => main.to_string(),
            },
            None => main.to_string(),
        },
        None => main.to_string(),
    };
    if !query.is_empty() {
        let params: Vec<String> = query
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&params.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_select_postgres_and_paths_sqlite() {
        assert!(matches!(Db::parse("postgres://u@h/db"), Db::Postgres(_)));
        assert!(matches!(Db::parse("PostgreSQL://u@h/db"), Db::Postgres(_)));
        assert_eq!(Db::parse("payrun.db"), Db::File("payrun.db".into()));
        assert_eq!(Db::parse("./postgres.db"), Db::File("./postgres.db".into()));
    }

    #[test]
    fn passwords_never_show() {
        let db =
            Db::parse("postgres://pay:s3cret@db.example:5432/pay?sslmode=require&password=other");
        let shown = format!("{db} {db:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("other"),
            "{shown}"
        );
        assert!(
            shown.contains("postgres://pay:***@db.example:5432/pay?sslmode=require&password=***")
        );
        let Db::Postgres(t) = db else { unreachable!() };
        assert!(t.url().contains("s3cret"));
    }
}
