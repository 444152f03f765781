//! End-to-end tests of the rate limiter inside `payrun run` (docs/rate.md):
//! `rate = auto` against a sandbox whose limit payrun does not know pays
//! everyone once and stays polite, the summary shows the rate it settled on,
//! and Ctrl-C during a provider's `Retry-After` pause ends the run at once,
//! resumable. Not timed: bounds are generous, nothing asserts speed.

mod common;

use common::*;
use payrun::sandbox::SandboxConfig;
use std::time::{Duration, Instant};

fn account(i: usize) -> String {
    format!("2250{i:09}")
}

/// `POST /_sandbox/...` on the test sandbox with the test key.
fn control(sb: &Sandbox, route: &str, body: serde_json::Value) {
    let url = format!("{}/_sandbox/{route}", sb.base_url());
    let status = sb.rt.block_on(async {
        reqwest::Client::new()
            .post(url)
            .bearer_auth(KEY)
            .json(&body)
            .send()
            .await
            .unwrap()
            .status()
    });
    assert!(status.is_success(), "{route}: {status}");
}

/// Waits (bounded) until the sandbox's ledger satisfies `ok`.
fn wait_for_ledger(
    sb: &Sandbox,
    what: &str,
    ok: impl Fn(&payrun::sandbox::LedgerSnapshot) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ok(&sb.ledger()) {
        assert!(Instant::now() < deadline, "never saw: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn auto_rate_against_an_unknown_limit_pays_everyone_once_with_few_429s() {
    let limit = 40;
    let sb = Sandbox::start(SandboxConfig {
        rate_limit: Some(limit),
        latency_ms: 20,
        ..Default::default()
    });
    let w = Work::new();
    let rows = 150;
    let file = w.write("payroll.csv", &payroll(rows, account));
    // Not quiet: the summary names the rate payrun settled on.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env_remove("RUST_LOG")
        .arg("run")
        .arg(&file)
        .args(["--base-url", &sb.base_url(), "--rate", "auto"])
        .arg("--db")
        .arg(w.db())
        .arg("--report")
        .arg(w.report())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), rows);
    for t in &ledger.transactions {
        assert_eq!(t.debits, 1, "{t:?}");
    }
    let rows_out = w.report_rows();
    assert!((0..rows).all(|i| col(&rows_out, i, "state") == "executed"));
    // Polite: slow start overshoots once, then the rate settles under the
    // limit. A flooding client would see most calls refused.
    let r = &ledger.requests;
    assert!(r.rate_limited > 0, "the limit was never found: {r:?}");
    assert!(
        (r.rate_limited as f64) <= 0.10 * r.total as f64,
        "too many 429s: {r:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("rate: settled at "))
        .unwrap_or_else(|| panic!("no rate line in the summary:\n{err}"));
    assert!(
        line.contains(&format!("{} answer(s) 429", r.rate_limited)),
        "{line} vs {r:?}"
    );
    assert!(line.contains("latency "), "{line}");
}

#[test]
fn ctrl_c_during_a_retry_after_pause_stops_at_once_and_resumes() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let rows = 100;
    let file = w.write("payroll.csv", &payroll(rows, account));
    // A fixed slow rate so the run is still going when the pause starts.
    let mut child = w
        .run_cmd(&file, &sb.base_url(), &["--rate", "10"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_ledger(&sb, "a first call", |l| l.requests.total > 0);
    // The provider asks for 50 s of silence: every call answers 429 with
    // `Retry-After` (the seconds left), within payrun's 60 s cap.
    control(&sb, "pause", serde_json::json!({"seconds": 50}));
    wait_for_ledger(&sb, "a 429", |l| l.requests.rate_limited > 0);
    let calls_at_sigint = sb.ledger().requests.total;
    let t0 = Instant::now();
    // SAFETY: kill(2) on the pid of a child this test spawned and still owns.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    // Bounded well under the 50 s pause: a run that slept through the pause
    // fails here instead of hanging.
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(25) {
            child.kill().unwrap();
            panic!("payrun still running 25 s after SIGINT during a Retry-After pause");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted"), "{err}");
    // Nothing left during the pause after the interrupt (the calls in
    // flight at SIGINT may still land).
    let after = sb.ledger().requests.total;
    assert!(after <= calls_at_sigint + 2, "{calls_at_sigint} -> {after}");
    // Resumable: once the provider accepts calls again, the same command
    // finishes the run, everyone paid once.
    control(&sb, "pause", serde_json::json!({"seconds": 1}));
    std::thread::sleep(Duration::from_millis(1100));
    let out = w.run(&file, &sb.base_url(), &["--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), rows);
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
}

#[test]
fn a_retry_after_beyond_the_cap_stops_the_run_resumable_with_a_clear_message() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(5, account));
    // 90 s: more than the 60 s payrun pauses for, less than the provider
    // client's own limit, so the limiter is the one to decide.
    control(&sb, "pause", serde_json::json!({"seconds": 90}));
    let t0 = Instant::now();
    let out = w.run(&file, &sb.base_url(), &["--rate", "50"]);
    assert!(
        t0.elapsed() < Duration::from_secs(30),
        "the run slept through the pause"
    );
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Retry-After"), "{err}");
    assert!(
        err.contains("run the same command again to resume")
            || err.contains("Run the same command again to resume"),
        "{err}"
    );
    assert!(sb.ledger().transactions.iter().all(|t| t.debits == 0));
    let rows = w.report_rows();
    assert!(
        (0..5).all(|i| col(&rows, i, "state") == "pending"),
        "{rows:?}"
    );
}

/// The number of milliseconds after `label` in `line` (`label 52 ms`).
fn ms_after(line: &str, label: &str) -> u64 {
    let rest = &line[line
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {line}"))
        + label.len()..];
    rest.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no figure after {label:?} in {line}"))
}

/// A tight rate against a provider of a known latency: the summary shows
/// the provider's latency (the HTTP call alone: at least the sandbox's 50
/// ms) apart from the queue wait, which carries the pace's waits (at 2
/// calls/s, hundreds of ms per call) instead of passing them off as a slow
/// provider. Lower bounds only, each forced by the setup; the one upper
/// bound is generous.
#[test]
fn provider_latency_and_queue_wait_are_shown_apart() {
    let sb = Sandbox::start(SandboxConfig {
        latency_ms: 50,
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(4, account));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .env_remove("RUST_LOG")
        .arg("run")
        .arg(&file)
        .args(["--base-url", &sb.base_url(), "--rate", "2"])
        .arg("--db")
        .arg(w.db())
        .arg("--report")
        .arg(w.report())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().requests.total, 8);
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("rate: "))
        .unwrap_or_else(|| panic!("no rate line in the summary:\n{err}"));
    let provider = ms_after(line, "provider latency ");
    let queued = ms_after(line, "queue wait ");
    assert!(
        provider >= 50,
        "the call itself takes the sandbox's 50 ms: {line}"
    );
    assert!(provider < 2_000, "{line}");
    // 8 calls at 2/s span at least 3 s (one second of burst): most of it
    // waiting for the pace, not the provider.
    assert!(queued >= 100, "the pace's waits are the queue's: {line}");
    // The progress line shows both too.
    assert!(
        err.lines()
            .any(|l| l.contains(", latency ") && l.contains(", queue ")),
        "{err}"
    );
}
