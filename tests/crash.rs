//! Crash safety (issue 5): the real binary is killed with SIGKILL at many
//! random instants and at each in-process fault point, resumed each time,
//! and the sandbox's ledger must show that nobody was paid twice and nobody
//! was left out. Kill instants come from a seeded RNG
//! (`PAYRUN_CRASH_SEED`, printed on failure) so a failure can be replayed.

mod common;

use common::*;
use payrun::sandbox::SandboxConfig;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::time::Duration;

/// Kills per crash test: the issue asks for at least 20.
const KILLS: usize = 24;

fn seed() -> u64 {
    std::env::var("PAYRUN_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261122)
}

fn account(i: usize) -> String {
    format!("22507{:08}", i)
}

/// Runs the binary, kills it at random instants `KILLS` times, then lets
/// it finish; returns the exit code of the final, uninterrupted run.
fn kill_and_resume(
    w: &Work,
    file: &std::path::Path,
    sb: &Sandbox,
    extra: &[&str],
    seed: u64,
) -> i32 {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut kills = 0;
    let mut finished_early = 0;
    while kills < KILLS {
        let mut child = w.run_cmd(file, &sb.base_url(), extra).spawn().unwrap();
        // The kill instant: anywhere from during start-up and import to
        // deep into the pipeline.
        let delay = Duration::from_millis(rng.random_range(5..250));
        std::thread::sleep(delay);
        match child.try_wait().unwrap() {
            Some(_) => {
                // Finished before the kill: the run is done; stop killing.
                finished_early += 1;
                break;
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                kills += 1;
            }
        }
    }
    assert!(
        kills >= KILLS,
        "seed {seed}: the run finished after only {kills} kills ({finished_early}); slow it down"
    );
    let out = w.run(file, &sb.base_url(), extra);
    eprintln!("seed {seed}: {kills} kills; final run: {}", text(&out));
    code(&out)
}

/// Re-sends the executes left unknown until none is (the sandbox is
/// idempotent), then rewrites the report, as an operator would.
fn settle_by_reconcile(w: &Work, sb: &Sandbox) {
    for _ in 0..20 {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
            .env("PAYRUN_API_KEY", KEY)
            .args([
                "reconcile",
                "--resend",
                "--base-url",
                &sb.base_url(),
                "--db",
            ])
            .arg(w.db())
            .output()
            .unwrap();
        if code(&out) == 0 {
            break;
        }
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args(["report", "--db"])
        .arg(w.db())
        .arg("--out")
        .arg(w.report())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
}

/// The invariants of issue 5, checked against the ledger and the report.
fn check_invariants(w: &Work, sb: &Sandbox, rows: usize, hold: bool, seed: u64) {
    let ledger = sb.ledger();
    let report = w.report_rows();
    assert_eq!(report.len(), rows, "seed {seed}: every row in the report");
    let states: HashMap<String, String> = (0..report.len())
        .map(|i| (col(&report, i, "transaction_id"), col(&report, i, "state")))
        .collect();
    for t in &ledger.transactions {
        assert!(t.debits <= 1, "seed {seed}: paid twice: {t:?}");
        let state = states
            .get(&t.transaction_id)
            .unwrap_or_else(|| panic!("seed {seed}: {} missing from the report", t.transaction_id));
        if t.debits == 1 {
            let ok = state == "executed" || (hold && state == "unknown");
            assert!(ok, "seed {seed}: debited but {state}: {t:?}");
        }
    }
    for (i, _) in report.iter().enumerate() {
        let state = col(&report, i, "state");
        if hold {
            assert!(
                state == "executed" || state == "unknown",
                "seed {seed}: row {i} is {state}"
            );
        } else {
            assert_eq!(state, "executed", "seed {seed}: row {i}");
        }
    }
    // A finished run re-run makes zero provider calls.
    let before = sb.ledger().requests.total;
    let out = w.run(
        std::path::Path::new(&w.path("payroll.csv")),
        &sb.base_url(),
        &[],
    );
    assert!(code(&out) == 0 || code(&out) == 3, "{}", text(&out));
    assert_eq!(
        sb.ledger().requests.total,
        before,
        "seed {seed}: re-run made calls"
    );
}

fn faulty_sandbox(seed: u64) -> Sandbox {
    Sandbox::start(SandboxConfig {
        seed,
        latency_ms: 2,
        jitter_ms: 8,
        ambiguous_rate: 0.05,
        ..Default::default()
    })
}

#[test]
fn sigkill_at_random_instants_never_pays_twice_or_forgets_anyone() {
    let seed = seed();
    let sb = faulty_sandbox(seed);
    let w = Work::new();
    let rows = 150;
    let file = w.write("payroll.csv", &payroll(rows, account));
    // `resend` is opt-in (the default is `hold`): one delayed re-send per
    // payout per run; what the sandbox's faults leave unknown after it is
    // settled by `reconcile --resend`, as an operator would.
    let extra = [
        "--rate",
        "50",
        "--concurrency",
        "16",
        "--ambiguous",
        "resend",
        "--resend-delay-ms",
        "0",
    ];
    let code = kill_and_resume(&w, &file, &sb, &extra, seed);
    assert!(matches!(code, 0 | 3), "seed {seed}");
    if code == 3 {
        settle_by_reconcile(&w, &sb);
    }
    check_invariants(&w, &sb, rows, false, seed);
    assert_eq!(sb.ledger().transactions.len(), rows);
}

#[test]
fn sigkill_under_hold_leaves_debited_payouts_executed_or_unknown() {
    let seed = seed().wrapping_add(1);
    let sb = faulty_sandbox(seed);
    let w = Work::new();
    let rows = 150;
    let file = w.write("payroll.csv", &payroll(rows, account));
    let extra = ["--rate", "50", "--concurrency", "16", "--ambiguous", "hold"];
    let code = kill_and_resume(&w, &file, &sb, &extra, seed);
    assert!(code == 0 || code == 3, "seed {seed}: exit {code}");
    check_invariants(&w, &sb, rows, true, seed);
}

/// Each window is hit on purpose: the process dies at the fault point, the
/// next run resumes, and the ledger shows exactly one debit per row.
#[test]
fn every_fault_point_window_is_recovered() {
    for point in [
        "before_send",
        "after_answer",
        "after_intent_commit",
        "before_commit",
    ] {
        // Group commits merge, so fewer of them than of the other points.
        let nths: &[u32] = if point == "before_commit" {
            &[1, 2, 5]
        } else {
            &[1, 7, 19]
        };
        for &nth in nths {
            let sb = Sandbox::start(SandboxConfig::default());
            let w = Work::new();
            let rows = 20;
            let file = w.write("payroll.csv", &payroll(rows, account));
            let out = w
                .run_cmd(&file, &sb.base_url(), &["--rate", "500"])
                .env("PAYRUN_FAULT", format!("{point}:{nth}"))
                .output()
                .unwrap();
            assert!(
                !out.status.success(),
                "{point}:{nth} should have died: {}",
                text(&out)
            );
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("fault point"),
                "{point}:{nth}: {}",
                text(&out)
            );
            // Resumed with `resend` (opt-in): the execute in flight is
            // sent again under the same id.
            let out = w.run(
                &file,
                &sb.base_url(),
                &["--rate", "500", "--ambiguous", "resend"],
            );
            assert_eq!(code(&out), 0, "{point}:{nth}: {}", text(&out));
            let ledger = sb.ledger();
            assert_eq!(ledger.transactions.len(), rows, "{point}:{nth}");
            for t in &ledger.transactions {
                assert_eq!(t.debits, 1, "{point}:{nth}: {t:?}");
            }
            let report = w.report_rows();
            assert!((0..rows).all(|i| col(&report, i, "state") == "executed"));
        }
    }
}

#[test]
fn a_second_run_on_the_same_database_refuses_and_a_killed_holder_is_recovered() {
    let sb = Sandbox::start(SandboxConfig {
        latency_ms: 100,
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(40, account));
    let mut first = w
        .run_cmd(&file, &sb.base_url(), &["--rate", "50"])
        .spawn()
        .unwrap();
    // Readiness, not a sleep: wait until the holder has written its pid.
    let lock = w.path("payrun.db.lock");
    let pid = first.id().to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&lock).unwrap_or_default() != pid {
        assert!(std::time::Instant::now() < deadline, "lock never taken");
        std::thread::yield_now();
    }
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    first.kill().unwrap();
    first.wait().unwrap();
    // The lock of the killed process is gone with it.
    let out = w.run(&file, &sb.base_url(), &["--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(sb.ledger().transactions.iter().all(|t| t.debits == 1));
}

#[test]
fn corrupted_or_foreign_database_is_a_clear_error() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    std::fs::write(w.db(), b"this is a spreadsheet, not a database").unwrap();
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a payrun database"),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.total, 0);
    // The file was left as it was.
    assert_eq!(
        std::fs::read(w.db()).unwrap(),
        b"this is a spreadsheet, not a database"
    );
}

#[test]
fn ctrl_c_finishes_in_flight_calls_records_them_and_resumes() {
    let sb = Sandbox::start(SandboxConfig {
        latency_ms: 20,
        ..Default::default()
    });
    let w = Work::new();
    let rows = 200;
    let file = w.write("payroll.csv", &payroll(rows, account));
    let child = w
        .run_cmd(
            &file,
            &sb.base_url(),
            &["--rate", "100", "--concurrency", "8"],
        )
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Readiness: wait until some payouts were paid, then interrupt.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while sb
        .ledger()
        .transactions
        .iter()
        .filter(|t| t.debits == 1)
        .count()
        < 5
    {
        assert!(std::time::Instant::now() < deadline, "no progress");
        std::thread::yield_now();
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("interrupted") && err.contains("resume"),
        "{err}"
    );
    let paid_before = sb
        .ledger()
        .transactions
        .iter()
        .filter(|t| t.debits == 1)
        .count();
    assert!(paid_before < rows, "interrupted before the end");
    // Everything answered before the interrupt was recorded: the report of
    // the interrupted run already lists every debited payout as executed.
    let report = w.report_rows();
    let executed = (0..report.len())
        .filter(|&i| col(&report, i, "state") == "executed")
        .count();
    assert_eq!(executed, paid_before);
    let out = w.run(&file, &sb.base_url(), &["--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(sb.ledger().transactions.iter().all(|t| t.debits == 1));
    assert_eq!(sb.ledger().transactions.len(), rows);
}

/// A full disk during a commit: simulated with a file-size limit (writes
/// beyond it fail with EFBIG; SIGXFSZ is ignored so the process sees the
/// error). The run stops with a clear error, and the next run, with room
/// again, finishes without paying anyone twice.
#[test]
fn full_disk_during_a_commit_is_a_clear_error_and_loses_nothing() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let rows = 400;
    let file = w.write("payroll.csv", &payroll(rows, account));
    let cmd = w.run_cmd(&file, &sb.base_url(), &["--rate", "2000"]);
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| format!("'{}'", a.to_string_lossy()))
        .collect();
    // 256 blocks of 512 bytes: room for the import, not for the whole run.
    let script = format!(
        "trap '' XFSZ; ulimit -f 256; exec '{}' {}",
        env!("CARGO_BIN_EXE_payrun"),
        args.join(" ")
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(
        err.contains("database") || err.contains("disk") || err.contains("file too large"),
        "{}",
        text(&out)
    );
    assert!(!err.contains("panicked"), "{}", text(&out));
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--rate", "2000", "--ambiguous", "resend"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), rows);
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
}
