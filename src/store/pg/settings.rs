//! From a connection string to a connection: the `sslmode` and
//! `sslrootcert` parameters taken out (the driver knows neither
//! `verify-ca` nor `verify-full`; `tls.rs` carries them out), the rest
//! read by the driver, the password found elsewhere (`PGPASSWORD`,
//! `database_password_file`, `~/.pgpass`: `password.rs`) set if the string
//! has none; `PGSSLMODE` and `PGSSLROOTCERT` stand in for the parameters
//! the string does not give, as in libpq. Nothing here shows the password:
//! errors name the parameter.

use super::tls::{self, Plan, RootCert, SslMode};
use anyhow::{Context, Result, bail};
use percent_encoding::percent_decode_str;
use postgres::config::Host;
use secrecy::{ExposeSecret, SecretString};
use std::str::FromStr;

/// Parameters of libpq that payrun does not carry out, and what to do.
const REFUSED: [(&str, &str); 5] = [
    (
        "sslcert",
        "client certificates are not supported: use a password",
    ),
    (
        "sslkey",
        "client certificates are not supported: use a password",
    ),
    (
        "sslpassword",
        "client certificates are not supported: use a password",
    ),
    ("sslcrl", "certificate revocation lists are not supported"),
    (
        "sslcrldir",
        "certificate revocation lists are not supported",
    ),
];

/// A connection string read: the driver's settings and the TLS wanted.
pub struct Settings {
    pub config: postgres::Config,
    pub mode: SslMode,
    pub root: Option<RootCert>,
    /// Where the password came from when not from the string.
    pub password_from: Option<String>,
}

impl Settings {
    /// Reads `url` (a `postgres://` URL); `sslmode` and `sslrootcert`
    /// default to the `PGSSLMODE` and `PGSSLROOTCERT` variables, as in
    /// libpq, when the string does not say.
    pub fn parse(url: &str) -> Result<Settings> {
        Settings::parse_with(url, |name| std::env::var(name).ok())
    }

    /// [`Settings::parse`] with the environment read through `env`.
    pub fn parse_with(url: &str, env: impl Fn(&str) -> Option<String>) -> Result<Settings> {
        let (main, query) = url.split_once('?').unwrap_or((url, ""));
        let given = |v: Option<String>| v.filter(|v| !v.is_empty());
        let mut mode = match given(env("PGSSLMODE")) {
            Some(v) => SslMode::parse(&v).context("the PGSSLMODE variable")?,
            None => SslMode::default(),
        };
        let mut root = given(env("PGSSLROOTCERT")).map(|v| RootCert::parse(&v));
        let mut kept = Vec::new();
        for kv in query.split('&').filter(|kv| !kv.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let value = percent_decode_str(v).decode_utf8_lossy();
            match k {
                "sslmode" => mode = SslMode::parse(&value)?,
                "sslrootcert" => root = Some(RootCert::parse(&value)),
                _ => {
                    if let Some((_, why)) = REFUSED.iter().find(|(name, _)| *name == k) {
                        bail!("the connection string's `{k}`: {why}");
                    }
                    kept.push(kv);
                }
            }
        }
        let rest = if kept.is_empty() {
            main.to_string()
        } else {
            format!("{main}?{}", kept.join("&"))
        };
        // The driver's own message names the parameter, never its value.
        let config =
            postgres::Config::from_str(&rest).context("the connection string is not valid")?;
        Ok(Settings {
            config,
            mode,
            root,
            password_from: None,
        })
    }

    /// Sets `password` (found in `from`) unless the connection string
    /// has one.
    pub fn default_password(&mut self, password: Option<&SecretString>, from: Option<&str>) {
        if self.config.get_password().is_none()
            && let Some(p) = password
        {
            self.config.password(p.expose_secret());
            self.password_from = from.map(str::to_string);
        }
    }

    /// What TLS the connection uses. A Unix socket has none (libpq does not
    /// ask for it there either, whatever the mode).
    pub fn plan(&self) -> Plan {
        let hosts = self.config.get_hosts();
        let local = !hosts.is_empty()
            && self.config.get_hostaddrs().is_empty()
            && hosts.iter().all(|h| !matches!(h, Host::Tcp(_)));
        if local {
            return Plan::Plain;
        }
        tls::plan(self.mode, self.root.clone(), tls::default_root_file())
    }

    /// Connects (a blocking call).
    pub fn connect(mut self) -> Result<postgres::Client> {
        let plan = self.plan();
        let mode = match plan {
            Plan::Plain => postgres::config::SslMode::Disable,
            Plan::Unchecked { fallback: true } => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        };
        self.config.ssl_mode(mode);
        let connected = match tls::connector(&plan)? {
            None => self.config.connect(postgres::NoTls),
            Some(tls) => self.config.connect(tls),
        };
        let from = self.password_from.as_deref();
        connected.map_err(|e| explain(e, &plan, self.mode, from))
    }
}

/// A connection error, with what the settings asked for when the
/// handshake, the server's rules or its password check refused it.
fn explain(
    e: postgres::Error,
    plan: &Plan,
    mode: SslMode,
    password_from: Option<&str>,
) -> anyhow::Error {
    let e = anyhow::Error::new(e);
    let text = format!("{e:#}");
    let hint = if ["UnknownIssuer", "BadSignature", "issuer"]
        .iter()
        .any(|t| text.contains(t))
    {
        match plan {
            Plan::Checked {
                roots: RootCert::File(f),
                ..
            } => Some(format!(
                "the server's certificate is not signed by a CA in {} (sslmode={}, sslrootcert)",
                f.display(),
                mode.as_str()
            )),
            _ => Some(format!(
                "the server's certificate is not signed by a CA payrun trusts (sslmode={}): \
                 name the CA's PEM file with sslrootcert=",
                mode.as_str()
            )),
        }
    } else if text.contains("NotValidForName") || text.contains("not valid for name") {
        Some(
            "the server's certificate was not issued for the host name in the connection \
             string (sslmode=verify-full): connect by the name the certificate carries"
                .to_string(),
        )
    } else if text.contains("no encryption") {
        Some("the server requires TLS: use sslmode=verify-full (or require)".to_string())
    } else if text.contains("password missing") {
        Some(
            "the server asks for a password and none was found: set PGPASSWORD, add a line \
             to ~/.pgpass, or point `database_password_file` at a file holding it"
                .to_string(),
        )
    } else if text.contains("password authentication failed") {
        Some(format!(
            "the server refused the password from {}",
            password_from.unwrap_or("the connection string")
        ))
    } else if text.contains("server does not support TLS") {
        Some(format!(
            "sslmode={} needs TLS and the server offers none",
            mode.as_str()
        ))
    } else {
        None
    };
    match hint {
        Some(h) => e.context(h),
        None => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PGSSLMODE` and `PGSSLROOTCERT` apply where the string is silent;
    /// the string's own parameters win; a bad mode names the variable.
    #[test]
    fn the_pgssl_variables_stand_in_for_what_the_string_does_not_say() {
        let env = |mode: &'static str, root: &'static str| {
            move |name: &str| match name {
                "PGSSLMODE" => Some(mode.to_string()),
                "PGSSLROOTCERT" => Some(root.to_string()),
                _ => None,
            }
        };
        let s = Settings::parse_with("postgres://u@db.example/d", env("verify-full", "/ca.pem"))
            .unwrap();
        assert_eq!(s.mode, SslMode::VerifyFull);
        assert_eq!(s.root, Some(RootCert::File("/ca.pem".into())));
        let s = Settings::parse_with(
            "postgres://u@db.example/d?sslmode=require&sslrootcert=system",
            env("verify-full", "/ca.pem"),
        )
        .unwrap();
        assert_eq!((s.mode, s.root), (SslMode::Require, Some(RootCert::System)));
        // Unset or empty: libpq's defaults.
        let s = Settings::parse_with("postgres://u@db.example/d", env("", "")).unwrap();
        assert_eq!((s.mode, s.root), (SslMode::default(), None));
        let e = Settings::parse_with("postgres://u@db.example/d", env("strict", ""))
            .err()
            .unwrap();
        let shown = format!("{e:#}");
        assert!(
            shown.contains("PGSSLMODE") && shown.contains("strict"),
            "{shown}"
        );
    }

    #[test]
    fn tls_parameters_are_taken_out_and_the_rest_reaches_the_driver() {
        let s = Settings::parse(
            "postgres://pay:pw@db.example:6543/pay?sslmode=verify-full\
             &sslrootcert=%2Fetc%2Fpayrun%2Fca.pem&options=-csearch_path%3Dx&connect_timeout=5",
        )
        .unwrap();
        assert_eq!(s.mode, SslMode::VerifyFull);
        assert_eq!(s.root, Some(RootCert::File("/etc/payrun/ca.pem".into())));
        assert_eq!(s.config.get_ports(), [6543]);
        assert_eq!(s.config.get_options(), Some("-csearch_path=x"));
        assert_eq!(s.config.get_password(), Some(&b"pw"[..]));
        assert_eq!(
            s.plan(),
            Plan::Checked {
                roots: RootCert::File("/etc/payrun/ca.pem".into()),
                name: true
            }
        );
        let s = Settings::parse("postgres://u@h/d").unwrap();
        assert_eq!(s.mode, SslMode::Prefer);
        assert_eq!(s.plan(), Plan::Unchecked { fallback: true });
        // A Unix socket: no TLS, as libpq.
        let s = Settings::parse("postgres://u@%2Frun%2Fpg/d?sslmode=verify-full").unwrap();
        assert_eq!(s.plan(), Plan::Plain);
    }

    #[test]
    fn a_password_found_elsewhere_never_overrides_the_strings() {
        let mut s = Settings::parse("postgres://u@h/d").unwrap();
        s.default_password(Some(&SecretString::from("file-pw")), Some("PGPASSWORD"));
        assert_eq!(s.config.get_password(), Some(&b"file-pw"[..]));
        assert_eq!(s.password_from.as_deref(), Some("PGPASSWORD"));
        let mut s = Settings::parse("postgres://u:url-pw@h/d").unwrap();
        s.default_password(Some(&SecretString::from("file-pw")), Some("PGPASSWORD"));
        assert_eq!(s.config.get_password(), Some(&b"url-pw"[..]));
        assert_eq!(s.password_from, None);
    }

    #[test]
    fn refused_parameters_say_why_without_the_password() {
        let e = Settings::parse("postgres://u:s3cret@h/d?sslcert=c.pem")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("sslcert") && e.contains("use a password"), "{e}");
        let e = format!(
            "{:#}",
            Settings::parse("postgres://u:s3cret@h/d?sslmode=verify")
                .err()
                .unwrap()
        );
        assert!(e.contains("verify-full") && !e.contains("s3cret"), "{e}");
        let e = format!(
            "{:#}",
            Settings::parse("postgres://u:s3cret@h/d?bogus=1")
                .err()
                .unwrap()
        );
        assert!(e.contains("bogus") && !e.contains("s3cret"), "{e}");
    }
}
