//! End-to-end tests of `payrun run` (and `payrun probe`) against the
//! in-process sandbox speaking other providers' dialects and misbehaving:
//! strict reading of answers, `processing`, configuration stops (redirects),
//! echo mismatches, endless bodies, a 401 quoting the key, and — with a
//! provider whose execute is not idempotent — nobody paid twice under
//! faults and kill -9 with `ambiguous = hold` (the default).

mod common;

use common::*;
use payrun::sandbox::{
    Dialect, LedgerSnapshot, Misbehaviour, Mismatch, Outage, Redirect, RedirectOn, SandboxConfig,
    magic,
};
use std::process::Output;

/// The report's states, in row order.
fn states(w: &Work) -> Vec<String> {
    let rows = w.report_rows();
    (0..rows.len()).map(|i| col(&rows, i, "state")).collect()
}

/// Every payout the report calls executed was debited exactly once, and
/// no payout was debited more than once.
fn report_matches_ledger(w: &Work, ledger: &LedgerSnapshot) {
    let rows = w.report_rows();
    for i in 0..rows.len() {
        let tx = col(&rows, i, "transaction_id");
        let debits = ledger.get(&tx).map_or(0, |t| t.debits);
        assert!(debits <= 1, "{tx} debited {debits} times");
        if col(&rows, i, "state") == "executed" {
            assert_eq!(debits, 1, "{tx} reported executed, ledger disagrees");
        }
        if debits == 1 {
            let st = col(&rows, i, "state");
            assert!(
                st == "executed" || st == "unknown" || st == "processing",
                "{tx} debited but reported {st}"
            );
        }
    }
}

const FLAT_PROFILE: &str = r#"
[provider]
status = "/status"
code = "/code"
message = "/message"
result = ""
failure_code = "/failureCode"
echo_transaction_id = "/transactionId"
echo_amount = "/amount"
echo_currency = "/currency"
echo_account = "/accountId"
"#;

/// A clean run with one failing account, in a dialect, read with the
/// profile written to `payrun.toml` (none: the built-in profile).
fn dialect_run(dialect: Dialect, profile: Option<&str>) {
    let sb = Sandbox::start(SandboxConfig {
        dialect,
        ..Default::default()
    });
    let w = Work::new();
    if let Some(p) = profile {
        w.write("payrun.toml", p);
    }
    let accounts = |i: usize| {
        if i == 1 {
            format!("CI{}", magic::RECIPIENT_NOT_FOUND)
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &payroll(6, accounts));
    let out = w.run(&file, &sb.base_url(), &[]);
    // One failed payout: the run is incomplete.
    assert_eq!(code(&out), 3, "{dialect:?}: {}", text(&out));
    let st = states(&w);
    assert_eq!(st[1], "execute_failed", "{dialect:?}: {st:?}");
    for (i, s) in st.iter().enumerate() {
        if i != 1 {
            assert_eq!(s, "executed", "{dialect:?} row {i}: {st:?}");
        }
    }
    let rows = w.report_rows();
    assert_eq!(col(&rows, 1, "provider_code"), "RECIPIENT_NOT_FOUND");
    report_matches_ledger(&w, &sb.ledger());
}

#[test]
fn envelope_dialect_pays_and_fails_as_the_provider_says() {
    dialect_run(Dialect::Envelope, None);
}

#[test]
fn errors_in_200_are_failures_never_payments() {
    dialect_run(Dialect::ErrorsIn200, None);
}

#[test]
fn flat_bodies_read_with_a_flat_profile() {
    dialect_run(Dialect::Flat, Some(FLAT_PROFILE));
}

#[test]
fn conflict_on_repeat_already_executed_409_counts_as_paid() {
    let sb = Sandbox::start(SandboxConfig {
        dialect: Dialect::ConflictOnRepeat,
        ..Default::default()
    });
    let w = Work::new();
    // Row 0 is executed and debited, then answered 503: unknown. Its one
    // re-send (ambiguous = resend) is answered 409 ALREADY_EXECUTED.
    let accounts = |i: usize| {
        if i == 0 {
            format!("CI{}", magic::EXECUTE_THEN_503)
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &payroll(3, accounts));
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--ambiguous", "resend", "--resend-delay-ms", "50"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(states(&w), ["executed"; 3]);
    let rows = w.report_rows();
    assert_eq!(col(&rows, 0, "provider_code"), "ALREADY_EXECUTED");
    // Initiate, execute, and the one re-send.
    assert_eq!(col(&rows, 0, "attempts"), "3");
    let ledger = sb.ledger();
    let t = ledger.get(&col(&rows, 0, "transaction_id")).unwrap();
    assert_eq!((t.execute_calls, t.debits), (2, 1), "{t:?}");
    report_matches_ledger(&w, &ledger);
}

#[test]
fn hold_is_the_default_and_never_resends_an_ambiguous_execute() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let accounts = |i: usize| {
        if i == 0 {
            format!("CI{}", magic::EXECUTE_THEN_503)
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &payroll(2, accounts));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(states(&w), ["unknown", "executed"]);
    let rows = w.report_rows();
    let t = sb.ledger();
    let t = t.get(&col(&rows, 0, "transaction_id")).unwrap();
    assert_eq!(t.execute_calls, 1, "hold re-sent an execute: {t:?}");
}

#[test]
fn resend_waits_for_its_delay_and_sends_only_once() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    // Executed, then the answer is cut off: unknown, re-sent once later.
    let accounts = |_| format!("CI{}", magic::EXECUTE_THEN_CUT);
    let file = w.write("payroll.csv", &payroll(1, accounts));
    let started = std::time::Instant::now();
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--ambiguous", "resend", "--resend-delay-ms", "1500"],
    );
    let took = started.elapsed();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(states(&w), ["executed"]);
    assert_eq!(
        col(&w.report_rows(), 0, "provider_code"),
        "ALREADY_EXECUTED"
    );
    assert!(took >= std::time::Duration::from_millis(1500), "{took:?}");
    let ledger = sb.ledger();
    let t = &ledger.transactions[0];
    // One execute, one re-send after the delay: never a burst right after
    // the cut.
    assert_eq!(t.execute_calls, 2, "{t:?}");
    assert_eq!(t.debits, 1);
}

#[test]
fn pending_dialect_ends_processing_with_exit_3_and_nothing_paid_unsaid() {
    let sb = Sandbox::start(SandboxConfig {
        dialect: Dialect::Pending,
        ..Default::default()
    });
    let w = Work::new();
    w.parked();
    let file = w.write("payroll.csv", &payroll(4, account));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(states(&w), ["processing"; 4]);
    let ledger = sb.ledger();
    for t in &ledger.transactions {
        assert_eq!((t.status.as_str(), t.debits), ("PENDING", 0), "{t:?}");
    }
    report_matches_ledger(&w, &ledger);
    // The summary and `status` count them; `reconcile` lists them.
    let summary = read_csv(&payrun::report::summary_path(&w.report()));
    assert!(summary.iter().all(|r| &r[1] == "processing"), "{summary:?}");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args(["status", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&status.stdout);
    assert!(
        s.contains("processing 4") && s.contains("in progress"),
        "{s}"
    );
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args(["reconcile", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    assert_eq!(code(&listed), 3, "{}", text(&listed));
    let l = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(l.matches(",processing").count(), 4, "{l}");
    // A second run sends nothing more for them.
    let before = sb.ledger().requests.executes;
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(sb.ledger().requests.executes, before);
}

fn redirect_run(status: u16, on: RedirectOn) -> (Output, Work, LedgerSnapshot) {
    let sb = Sandbox::start(SandboxConfig {
        misbehaviour: Misbehaviour {
            redirect: Some(Redirect { status, on }),
            ..Default::default()
        },
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(5, account));
    let out = w.run(&file, &sb.base_url(), &["--concurrency", "1"]);
    let ledger = sb.ledger();
    (out, w, ledger)
}

#[test]
fn redirects_on_either_call_stop_the_run_resumable_without_a_second_post() {
    for status in [301, 302, 307, 308] {
        for on in [
            RedirectOn::Initiates,
            RedirectOn::Executes,
            RedirectOn::Both,
        ] {
            let (out, w, ledger) = redirect_run(status, on);
            let what = format!("{status} on {on:?}");
            assert_eq!(code(&out), 1, "{what}: {}", text(&out));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("redirect") && err.contains("base_url") && err.contains("resume"),
                "{what}: {err}"
            );
            assert_eq!(ledger.requests.redirect_hits, 0, "{what}");
            // Stopped at the first redirected call: never a second POST.
            let first = if on == RedirectOn::Executes { 2 } else { 1 };
            assert_eq!(
                ledger.requests.total, first,
                "{what}: {:?}",
                ledger.requests
            );
            assert!(
                ledger.requests.executes <= 1,
                "{what}: {:?}",
                ledger.requests
            );
            for t in &ledger.transactions {
                assert!(t.execute_calls <= 1 && t.debits == 0, "{what}: {t:?}");
            }
            let st = states(&w);
            assert!(
                st.iter().all(|s| s != "executed" && !s.ends_with("failed")),
                "{what}: {st:?}"
            );
            // The intent is left in place for the resume.
            let intent = if on == RedirectOn::Executes {
                "executing"
            } else {
                "initiating"
            };
            assert_eq!(
                st.iter().filter(|s| *s == intent).count(),
                1,
                "{what}: {st:?}"
            );
        }
    }
}

#[test]
fn initiate_echo_mismatch_is_unknown_and_never_executed() {
    let sb = Sandbox::start(SandboxConfig {
        misbehaviour: Misbehaviour {
            initiate_mismatch: Some(Mismatch::Amount),
            ..Default::default()
        },
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, account));
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "resend"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(states(&w), ["unknown"; 3]);
    let rows = w.report_rows();
    assert_eq!(col(&rows, 0, "provider_code"), "ECHO_MISMATCH");
    let no_execute = |l: &LedgerSnapshot| {
        assert_eq!(l.requests.executes, 0, "{:?}", l.requests);
        assert!(l.transactions.iter().all(|t| t.execute_calls == 0));
    };
    no_execute(&sb.ledger());
    // `reconcile --resend` refuses them too.
    let out = w.reconcile_resend(&sb.base_url());
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("not re-sent"),
        "{}",
        text(&out)
    );
    no_execute(&sb.ledger());
}

#[test]
fn endless_body_is_cut_and_memory_stays_bounded() {
    let sb = Sandbox::start(SandboxConfig {
        misbehaviour: Misbehaviour {
            endless_body: true,
            ..Default::default()
        },
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(1, account));
    let cmd = w.run_cmd(&file, &sb.base_url(), &[]);
    // Under a 1 GiB address-space limit: an unbounded read would die of it.
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect();
    let out = std::process::Command::new("sh")
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .arg("-c")
        .arg(format!(
            "ulimit -v 1048576; exec '{}' {}",
            env!("CARGO_BIN_EXE_payrun"),
            args.join(" ")
        ))
        .output()
        .unwrap();
    // Stopped cleanly (the provider "is not answering"), not killed.
    assert_eq!(code(&out), 1, "{}", text(&out));
    let st = states(&w);
    assert!(st[0] == "initiating" || st[0] == "unknown", "{st:?}");
    assert_eq!(sb.ledger().requests.executes, 0);
}

#[test]
fn a_401_quoting_the_key_never_shows_it() {
    let sb = Sandbox::start(SandboxConfig {
        outage: Outage::Unauthorized,
        misbehaviour: Misbehaviour {
            echo_authorization: true,
            ..Default::default()
        },
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    let out = w
        .run_cmd(&file, &sb.base_url(), &[])
        .env("RUST_LOG", "trace")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("API key"), "{all}");
    assert!(!all.contains(KEY), "key leaked: {all}");
    let db = std::fs::read(w.db()).unwrap();
    let wal = std::fs::read(w.path("payrun.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(KEY.len()).any(|x| x == KEY.as_bytes()),
            "key in the database"
        );
    }
    let report = std::fs::read_to_string(w.report()).unwrap();
    assert!(!report.contains(KEY), "{report}");
}

/// With a provider that debits on every execute, `hold` (the default)
/// pays nobody twice through ambiguous answers and kill -9 at random
/// instants, resumed each time.
#[test]
fn hold_pays_nobody_twice_on_a_non_idempotent_provider_under_kill_9() {
    use rand::{Rng, SeedableRng};
    let seed: u64 = std::env::var("PAYRUN_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    eprintln!("kill -9 test seed: {seed} (PAYRUN_TEST_SEED={seed} to replay)");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let sb = Sandbox::start(SandboxConfig {
        seed,
        non_idempotent_execute: true,
        ambiguous_rate: 0.15,
        latency_ms: 10,
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(40, account));
    let extra = ["--rate", "300", "--concurrency", "2"];
    let mut kills = 0;
    for _ in 0..5 {
        let mut child = w.run_cmd(&file, &sb.base_url(), &extra).spawn().unwrap();
        let after = std::time::Duration::from_millis(rng.random_range(20..300));
        std::thread::sleep(after);
        if child.try_wait().unwrap().is_some() {
            break;
        }
        // SIGKILL: no chance to finish anything.
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
    }
    assert!(
        kills >= 2,
        "seed {seed}: only {kills} kill(s) landed mid-run"
    );
    let out = w.run(&file, &sb.base_url(), &extra);
    assert!(matches!(code(&out), 0 | 3), "seed {seed}: {}", text(&out));
    let ledger = sb.ledger();
    for t in &ledger.transactions {
        assert!(t.debits <= 1, "seed {seed}: paid twice: {t:?}");
        assert!(t.execute_calls <= 1, "seed {seed}: executed twice: {t:?}");
    }
    let rows = w.report_rows();
    assert_eq!(rows.len(), 40);
    for i in 0..rows.len() {
        let tx = col(&rows, i, "transaction_id");
        let st = col(&rows, i, "state");
        let debits = ledger.get(&tx).map_or(0, |t| t.debits);
        if debits > 0 {
            assert!(
                st == "executed" || st == "unknown",
                "seed {seed}: {tx} debited, reported {st}"
            );
        }
        if st == "executed" {
            assert_eq!(debits, 1, "seed {seed}: {tx}");
        }
    }
}

/// `payrun probe` against every dialect: five answers shown, a profile to
/// start from that payrun accepts, and no money moved (the probe's payout
/// never executed, nothing debited).
#[test]
fn probe_moves_no_money_in_any_dialect() {
    for dialect in [
        Dialect::Envelope,
        Dialect::ErrorsIn200,
        Dialect::Flat,
        Dialect::ConflictOnRepeat,
        Dialect::Pending,
    ] {
        let sb = Sandbox::start(SandboxConfig {
            dialect,
            non_idempotent_execute: true,
            ..Default::default()
        });
        let w = Work::new();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
            .current_dir(w.dir.path())
            .env("PAYRUN_API_KEY", KEY)
            .args(["probe", "--base-url", &sb.base_url()])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(matches!(code(&out), 0 | 3), "{dialect:?}: {}", text(&out));
        for n in 1..=5 {
            assert!(stdout.contains(&format!("{n}. ")), "{dialect:?}: {stdout}");
        }
        assert!(stdout.contains("resend: "), "{stdout}");
        assert!(!stdout.contains(KEY), "{stdout}");
        let ledger = sb.ledger();
        assert_eq!(ledger.requests.pay, 0);
        let probe: Vec<_> = ledger
            .transactions
            .iter()
            .filter(|t| t.transaction_id.starts_with("probe-"))
            .collect();
        assert_eq!(probe.len(), 1, "{dialect:?}: {:?}", ledger.transactions);
        let t = probe[0];
        assert_eq!((t.execute_calls, t.debits), (0, 0), "{dialect:?}: {t:?}");
        assert!(stdout.contains(&t.transaction_id), "{stdout}");
        // Only the initiates of the probe and two executes of absent ids.
        assert_eq!(ledger.requests.executes, 2, "{:?}", ledger.requests);
        // The skeleton is a profile payrun accepts.
        let at = stdout.find("# payrun provider profile").expect("skeleton");
        let table: toml::Table = toml::from_str(&stdout[at..]).unwrap();
        let spec: payrun::provider::ProfileSpec = table["provider"].clone().try_into().unwrap();
        payrun::provider::Profile::from_spec(&spec)
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}\n{}", &stdout[at..]));
        // The envelope sandbox is what the built-in profile reads: all good,
        // and `resend` never claimed safe.
        if dialect == Dialect::Envelope {
            assert_eq!(code(&out), 0, "{stdout}");
            assert!(stdout.contains("resend: not proven"), "{stdout}");
        }
        if dialect == Dialect::ConflictOnRepeat {
            assert!(stdout.contains("resend: NOT safe"), "{stdout}");
        }
    }
}
