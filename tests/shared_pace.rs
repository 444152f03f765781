//! `rate = "auto"` shared by several `payrun run` workers through
//! PostgreSQL (issue 31): one adaptive pace for all of them, kept in the
//! database (`rate_paces`), against the in-process sandbox. A pace found in
//! the database (as a 429 seen by one worker leaves it) governs every
//! worker; the 429s of all workers land in one state.
//!
//! Needs `PAYRUN_TEST_POSTGRES` (e.g.
//! `postgres://postgres@127.0.0.1:5432/test`); each test works in a fresh
//! schema of its own. Without it, every test says it is skipped and passes.

mod common;

use common::pg::Schema;
use common::{KEY, Sandbox, TEST_BACKOFF_MS, Work, code, payroll, text};
use payrun::sandbox::SandboxConfig;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Instant;

/// `payrun run FILE --rate auto` as one worker of the run in `db`.
fn worker(w: &Work, file: &Path, base_url: &str, db: &str, name: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
    cmd.current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .env("PAYRUN_BACKOFF_MS", TEST_BACKOFF_MS)
        .env_remove("RUST_LOG")
        .env_remove("PAYRUN_FAULT")
        .arg("run")
        .arg(file)
        .args(["--base-url", base_url, "--db", db, "--period", "2026-05"])
        .args(["--rate", "auto"])
        .arg("--report")
        .arg(w.path(&format!("{name}.csv")));
    cmd
}

/// Runs `workers` workers on `file` together; each must end well.
fn run_workers(w: &Work, file: &Path, base_url: &str, db: &str, workers: usize) {
    let children: Vec<(Child, std::path::PathBuf)> = (0..workers)
        .map(|i| {
            let log = w.path(&format!("w{i}.log"));
            let out = std::fs::File::create(&log).unwrap();
            let child = worker(w, file, base_url, db, &format!("w{i}"))
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .spawn()
                .unwrap();
            (child, log)
        })
        .collect();
    for (mut child, log) in children {
        let status = child.wait().unwrap();
        let shown = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(status.success(), "{shown}");
    }
}

/// The shared pace rows: (key, rate, events, 429s).
fn paces(schema: &Schema) -> Vec<(String, f64, i64, i64)> {
    schema
        .client()
        .query(
            "SELECT key, rate, events, rate_limited FROM rate_paces ORDER BY key",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
}

/// A pace of 5 calls/s in the database, held to (as after a 429 that
/// measured a limit of 5), governs three workers together: 40 calls take
/// at least 7.8 s, where three workers adapting each on its own would start
/// at 10 calls/s each and be done in about a second and a half. A lower
/// bound only: a slow machine makes the run longer, never shorter.
#[test]
fn a_pace_in_the_database_governs_every_worker() {
    let Some(schema) = Schema::fresh("a_pace_in_the_database_governs_every_worker") else {
        return;
    };
    let db = schema.url();
    let sb = Sandbox::start(SandboxConfig {
        api_key: KEY.into(),
        ..SandboxConfig::default()
    });
    let w = Work::new();
    // A first run of one row makes the provider account's pace row.
    let first = w.write("first.csv", &payroll(1, |i| format!("first-{i}")));
    run_workers(&w, &first, &sb.base_url(), &db, 1);
    let rows = paces(&schema);
    assert_eq!(rows.len(), 1, "one pace per provider account: {rows:?}");
    let key = rows[0].0.clone();
    // As a congestion event leaves it: 5 calls/s, held to for ten minutes.
    let set = schema
        .client()
        .execute(
            "UPDATE rate_paces SET rate = 5, loss_rate = 5, hold_limit = 5,
                 hold_until_us = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT
                     + 600000000,
                 updated_us = (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT
             WHERE key = $1",
            &[&key],
        )
        .unwrap();
    assert_eq!(set, 1);
    let file = w.write("payroll.csv", &payroll(20, |i| format!("acc-{i:04}")));
    let t0 = Instant::now();
    run_workers(&w, &file, &sb.base_url(), &db, 3);
    let took = t0.elapsed();
    let ledger = sb.ledger();
    assert_eq!(ledger.requests.total, 2 + 40, "{:?}", ledger.requests);
    // 40 calls 200 ms apart on one schedule: 39 intervals at least.
    assert!(
        took.as_secs_f64() >= 7.8,
        "40 calls in {took:?}: faster than the shared pace of 5 calls/s"
    );
    let rows = paces(&schema);
    assert!(rows[0].1 <= 5.0, "the held pace stays: {rows:?}");
}

/// Against a provider limit, the 429s every worker meets go to the one
/// state: the congestion events are the run's, not each worker's. (How
/// close the pace settles to the limit is the benchmark's, section 9.)
#[test]
fn the_429s_of_every_worker_land_in_one_pace() {
    let Some(schema) = Schema::fresh("the_429s_of_every_worker_land_in_one_pace") else {
        return;
    };
    let db = schema.url();
    let sb = Sandbox::start(SandboxConfig {
        api_key: KEY.into(),
        rate_limit: Some(40),
        ..SandboxConfig::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(300, |i| format!("acc-{i:04}")));
    run_workers(&w, &file, &sb.base_url(), &db, 3);
    let ledger = sb.ledger();
    let refused = ledger.requests.rate_limited;
    assert!(
        refused > 0,
        "slow start meets the limit: {:?}",
        ledger.requests
    );
    let rows = paces(&schema);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (_, rate, events, counted) = rows[0].clone();
    // Every 429 is reported as it comes (a worker ending may leave its
    // last reports unsent, never invent one).
    assert!(
        counted >= 1 && counted as u64 <= refused,
        "{counted} of {refused}"
    );
    assert!(
        events >= 1 && events <= counted,
        "{events} events, {counted} 429s"
    );
    assert!(rate >= 1.0, "the shared pace {rate}");
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("XDG_DATA_HOME", w.path("data"))
        .args(["status", "--db", &db])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("executed 300"));
}
