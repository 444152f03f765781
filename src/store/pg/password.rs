//! The PostgreSQL password when the connection string has none, from the
//! first source that has one: `PGPASSWORD`; the `database_password_file`
//! key (one line of a regular file, under the API key file's rules:
//! `config::key`); the password file (`PGPASSFILE`, else `~/.pgpass`) in
//! libpq's format and under libpq's rule: a file the group or others may
//! read or write is ignored, with a warning. The password is never shown:
//! it stays a `SecretString` until the driver has it.

use super::settings::Settings;
use crate::config::key;
use anyhow::Result;
use postgres::config::Host;
use secrecy::SecretString;
use std::path::{Path, PathBuf};

/// Where a password may come from besides the connection string, as the
/// command line gathered them.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    /// `PGPASSWORD`.
    pub env: Option<String>,
    /// `database_password_file`.
    pub file: Option<PathBuf>,
    /// `PGPASSFILE`, else `~/.pgpass`.
    pub pgpass: Option<PathBuf>,
}

/// A password found, and what the operator should hear about its file.
#[derive(Debug, Default)]
pub struct Found {
    pub password: Option<SecretString>,
    /// Where it came from, for messages ("PGPASSWORD", a file's path).
    pub from: Option<String>,
    pub warnings: Vec<String>,
}

/// The password for `url` from `sources` (none when the string has one).
pub fn find(url: &str, sources: &Sources) -> Result<Found> {
    let settings = Settings::parse(url)?;
    let config = &settings.config;
    if config.get_password().is_some() {
        return Ok(Found::default());
    }
    if let Some(p) = sources.env.as_deref().filter(|p| !p.is_empty()) {
        return Ok(Found {
            password: Some(SecretString::from(p.to_string())),
            from: Some("PGPASSWORD".into()),
            warnings: Vec::new(),
        });
    }
    if let Some(path) = &sources.file {
        let read = key::read_secret(path, &key::DATABASE_PASSWORD)?;
        return Ok(Found {
            password: Some(read.key),
            from: Some(format!("database_password_file {}", path.display())),
            warnings: read.warning.into_iter().collect(),
        });
    }
    let Some(path) = &sources.pgpass else {
        return Ok(Found::default());
    };
    let user = match config.get_user() {
        Some(u) => u.to_string(),
        None => whoami::username().unwrap_or_default(),
    };
    let want = Want {
        host: host_of(config),
        port: config.get_ports().first().copied().unwrap_or(5432),
        db: config.get_dbname().unwrap_or(&user).to_string(),
        user: user.clone(),
    };
    let (text, warning) = read_pgpass(path);
    let password = text.and_then(|t| lookup(&t, &want)).map(SecretString::from);
    Ok(Found {
        from: password
            .as_ref()
            .map(|_| format!("the password file {}", path.display())),
        password,
        warnings: warning.into_iter().collect(),
    })
}

/// The host as libpq matches it in a password file: the first host
/// (`localhost` for a Unix socket), else the first `hostaddr`.
fn host_of(config: &postgres::Config) -> String {
    match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(_)) => "localhost".to_string(),
        None => config
            .get_hostaddrs()
            .first()
            .map_or_else(|| "localhost".to_string(), |a| a.to_string()),
    }
}

/// The file's text, or nothing (with why, when the file is there but not
/// used: not a regular file, or open to the group or others).
fn read_pgpass(path: &Path) -> (Option<String>, Option<String>) {
    let Ok(meta) = std::fs::metadata(path) else {
        return (None, None);
    };
    let shown = path.display();
    if !meta.is_file() {
        return (
            None,
            Some(format!(
                "the password file {shown} is not a plain file; it was not read"
            )),
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return (
                None,
                Some(format!(
                    "the password file {shown} has group or world access (mode {mode:03o}), so \
                     it was not read, as libpq would not: run `chmod 600 {shown}`"
                )),
            );
        }
    }
    match std::fs::read_to_string(path) {
        Ok(text) => (Some(text), None),
        Err(e) => (
            None,
            Some(format!("cannot read the password file {shown}: {e}")),
        ),
    }
}

/// What a password file line is matched against.
#[derive(Debug)]
struct Want {
    host: String,
    port: u16,
    db: String,
    user: String,
}

/// The password of the first line matching `want`: `host:port:db:user:
/// password`, `*` matching anything in the first four fields, `\:` and
/// `\\` escaping, `#` starting a comment line.
fn lookup(text: &str, want: &Want) -> Option<String> {
    let port = want.port.to_string();
    let wanted = [
        want.host.as_str(),
        port.as_str(),
        want.db.as_str(),
        want.user.as_str(),
    ];
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.starts_with('#'))
        .find_map(|line| {
            let fields = split(line)?;
            fields[..4]
                .iter()
                .zip(wanted)
                .all(|((text, star), w)| *star || text == w)
                .then(|| fields[4].0.clone())
        })
}

/// A line's five fields, unescaped, each with whether it was a bare `*`;
/// `None` for a line with fewer.
fn split(line: &str) -> Option<Vec<(String, bool)>> {
    let mut fields = Vec::with_capacity(5);
    let (mut field, mut raw) = (String::new(), String::new());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                raw.push(c);
                if let Some(n) = chars.next() {
                    field.push(n);
                    raw.push(n);
                }
            }
            ':' if fields.len() < 4 => {
                fields.push((std::mem::take(&mut field), raw == "*"));
                raw.clear();
            }
            c => {
                field.push(c);
                raw.push(c);
            }
        }
    }
    if fields.len() < 4 {
        return None;
    }
    fields.push((field, false));
    Some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    fn want(host: &str, port: u16, db: &str, user: &str) -> Want {
        Want {
            host: host.into(),
            port,
            db: db.into(),
            user: user.into(),
        }
    }

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let text = "# comment\n\
                    db.example:5432:pay:payrun:first\n\
                    db.example:*:*:payrun:second\n\
                    *:*:*:*:any\\:thing\\\\\n\
                    short:line\n";
        assert_eq!(
            lookup(text, &want("db.example", 5432, "pay", "payrun")).as_deref(),
            Some("first")
        );
        assert_eq!(
            lookup(text, &want("db.example", 6543, "other", "payrun")).as_deref(),
            Some("second")
        );
        assert_eq!(
            lookup(text, &want("elsewhere", 5432, "pay", "bob")).as_deref(),
            Some("any:thing\\")
        );
        assert_eq!(
            lookup("h:5432:d:u:pw\r\n", &want("h", 5432, "d", "u")).as_deref(),
            Some("pw")
        );
        // An escaped colon is part of a field; an escaped star is a star.
        let text = "fe80\\:\\:1:5432:d:u:v6\n\\*:5432:d:u:literal\n";
        assert_eq!(
            lookup(text, &want("fe80::1", 5432, "d", "u")).as_deref(),
            Some("v6")
        );
        assert_eq!(lookup(text, &want("other", 5432, "d", "u")), None);
        assert_eq!(
            lookup(text, &want("*", 5432, "d", "u")).as_deref(),
            Some("literal")
        );
        // A password may hold colons.
        assert_eq!(
            lookup("h:1:d:u:a:b:c\n", &want("h", 1, "d", "u")).as_deref(),
            Some("a:b:c")
        );
    }

    fn write(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn sources_in_order_and_the_pgpass_permission_rule() {
        let dir = tempfile::tempdir().unwrap();
        let pgpass = write(
            dir.path(),
            "pgpass",
            "db.example:5432:pay:payrun:from-pgpass\n",
            0o600,
        );
        let file = write(dir.path(), "pw", "from-file\n", 0o600);
        let url = "postgres://payrun@db.example/pay";
        let all = Sources {
            env: Some("from-env".into()),
            file: Some(file.clone()),
            pgpass: Some(pgpass.clone()),
        };
        let got = |url: &str, s: &Sources| {
            find(url, s)
                .unwrap()
                .password
                .map(|p| p.expose_secret().to_string())
        };
        assert_eq!(got(url, &all).as_deref(), Some("from-env"));
        let no_env = Sources {
            env: Some(String::new()),
            ..all.clone()
        };
        assert_eq!(got(url, &no_env).as_deref(), Some("from-file"));
        let only_pgpass = Sources {
            pgpass: Some(pgpass.clone()),
            ..Sources::default()
        };
        assert_eq!(got(url, &only_pgpass).as_deref(), Some("from-pgpass"));
        // The string's own password wins: nothing else is read.
        assert_eq!(got("postgres://payrun:pw@db.example/pay", &all), None);
        // No line for this database: none.
        assert_eq!(
            got("postgres://payrun@db.example/other", &only_pgpass),
            None
        );
        // Open to others: ignored, and said.
        let open = write(dir.path(), "open", "*:*:*:*:leaked\n", 0o644);
        let found = find(
            url,
            &Sources {
                pgpass: Some(open.clone()),
                ..Sources::default()
            },
        )
        .unwrap();
        assert!(found.password.is_none());
        assert!(
            found.warnings[0].contains(&format!("chmod 600 {}", open.display())),
            "{:?}",
            found.warnings
        );
        // database_password_file: the API key file's rules and warnings.
        let loose = write(dir.path(), "loose", "pw\n", 0o640);
        let found = find(
            url,
            &Sources {
                file: Some(loose.clone()),
                ..Sources::default()
            },
        )
        .unwrap();
        assert_eq!(found.password.unwrap().expose_secret(), "pw");
        assert!(
            found.warnings[0].contains("database password file"),
            "{:?}",
            found.warnings
        );
        let e = find(
            url,
            &Sources {
                file: Some(dir.path().to_path_buf()),
                ..Sources::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("database_password_file") && e.contains("not a regular file"),
            "{e}"
        );
    }
}
