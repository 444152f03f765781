//! PostgreSQL for the end-to-end tests: the server named by
//! `PAYRUN_TEST_POSTGRES` (e.g. `postgres://postgres@127.0.0.1:5432/test`),
//! a fresh schema of its own per test (so tests running at once never see
//! each other's rows), and `payrun` commands pointed at it. Without the
//! variable a test prints `skipped: PAYRUN_TEST_POSTGRES is not set …`
//! (visible in a plain `cargo test`) and passes; with it, an unreachable
//! server fails the test (never a silent skip).
#![allow(dead_code)]

use super::{KEY, TEST_BACKOFF_MS, Work};
use std::path::Path;
use std::process::{Command, Output};

/// The variable naming the test server.
pub const ENV: &str = "PAYRUN_TEST_POSTGRES";

/// The server's connection string, or `None` after printing that `test`
/// was skipped.
pub fn server(test: &str) -> Option<String> {
    match std::env::var(ENV) {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            skipped(&format!("{ENV} is not set ({test} needs PostgreSQL)"));
            None
        }
    }
}

/// Says a test was skipped, and why, where `cargo test` shows it: straight
/// to stderr, past the harness's capture of `eprintln!` (which would hide
/// it for a passing test).
pub fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

/// A schema of its own on the test server, dropped with everything in it
/// when the test passes (kept, and named, when it fails).
pub struct Schema {
    base: String,
    pub name: String,
}

impl Schema {
    /// A fresh schema, or `None` (printed) when `PAYRUN_TEST_POSTGRES` is
    /// not set.
    pub fn fresh(test: &str) -> Option<Schema> {
        let base = server(test)?;
        let name = format!("e2e_{:016x}", rand::random::<u64>());
        connect(&base)
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .unwrap();
        Some(Schema { base, name })
    }

    /// The connection string payrun gets: the server's, with the schema
    /// as the search path.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}options=-csearch_path%3D{}", self.base, self.name)
    }

    /// A client on the schema, for looking at payrun's rows directly.
    pub fn client(&self) -> postgres::Client {
        connect(&self.url())
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept schema {} of {ENV} for inspection", self.name);
            return;
        }
        if let Ok(mut c) = postgres::Client::connect(&self.base, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA {} CASCADE", self.name));
        }
    }
}

/// A client on `url`; a server that does not answer fails the test with
/// the variable's name, so CI never mistakes it for a skip.
pub fn connect(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("{ENV}: cannot connect to {url}: {e}"))
}

impl Work {
    /// `payrun run FILE` with `--db DB` (a `postgres://` URL), like
    /// [`Work::run_cmd`] otherwise.
    pub fn run_cmd_db(&self, db: &str, file: &Path, base_url: &str, extra: &[&str]) -> Command {
        let mut cmd = self.payrun_cmd();
        cmd.env("PAYRUN_API_KEY", KEY)
            .arg("run")
            .arg(file)
            .arg("--base-url")
            .arg(base_url)
            .args(["--db", db])
            .arg("--report")
            .arg(self.report())
            .arg("--quiet")
            .args(extra);
        cmd
    }

    pub fn run_db(&self, db: &str, file: &Path, base_url: &str, extra: &[&str]) -> Output {
        self.run_cmd_db(db, file, base_url, extra).output().unwrap()
    }

    /// Any other `payrun` command on `--db DB`: `args` come first, e.g.
    /// `["report", "--out", "r.csv"]`.
    pub fn cmd_db(&self, db: &str, args: &[&str]) -> Output {
        self.payrun_cmd()
            .env("PAYRUN_API_KEY", KEY)
            .args(args)
            .args(["--db", db])
            .output()
            .unwrap()
    }

    /// [`Work::settle_by_resend`] on `--db DB`: re-sends the executes left
    /// unknown until none is (for an idempotent sandbox), then writes the
    /// report again, as an operator would.
    pub fn settle_by_resend_db(&self, db: &str, base_url: &str) {
        for _ in 0..20 {
            let out = self.cmd_db(db, &["reconcile", "--resend", "--base-url", base_url]);
            if super::code(&out) == 0 {
                break;
            }
        }
        let report = self.report();
        let out = self.cmd_db(db, &["report", "--out", report.to_str().unwrap()]);
        assert_eq!(super::code(&out), 0, "{}", super::text(&out));
    }

    /// The binary in this folder, never the real per-user data folder.
    fn payrun_cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
        cmd.current_dir(self.dir.path())
            .env("XDG_DATA_HOME", self.path("data"))
            .env("PAYRUN_BACKOFF_MS", TEST_BACKOFF_MS)
            .env_remove("RUST_LOG");
        cmd
    }
}
