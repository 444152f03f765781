//! Crash safety (issue 5, issue 19): the real binary is killed with
//! SIGKILL at many instants spread over the whole run and at each
//! in-process fault point, resumed each time, and the sandbox's ledger must
//! show that nobody was paid twice and nobody was left out (the checks of
//! `common::money`, made against the provider's books, not payrun's report
//! alone). The same kills run against a sandbox that really pays twice on a
//! second execute, so "nobody paid twice" can fail.
//!
//! Each run draws a fresh seed, printed at the start of the test's output;
//! `PAYRUN_CRASH_SEED=N cargo test --test crash` replays it.

mod common;

use common::money::{Policy, check_books, payroll_rows};
use common::*;
use payrun::sandbox::SandboxConfig;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Kills per crash test, and the fewest accepted (the issue asks for at
/// least 20) when the run ends before the last marks.
const KILLS: usize = 24;
const MIN_KILLS: usize = 20;
/// Rows per crash test: enough calls (two per row) to spread 24 kills over.
const ROWS: usize = 150;
/// How often the tests look at the sandbox or the child: short enough to
/// kill within a request's latency, long enough not to spin a core.
const POLL: Duration = Duration::from_millis(2);
/// Longest a single process may run before the test gives up on it.
const STUCK: Duration = Duration::from_secs(60);

/// What the kills hit.
#[derive(Debug, Default)]
struct Kills {
    kills: usize,
    /// Kills of a process that had already made at least one call: the run
    /// was under way, not starting up.
    mid_run: usize,
    /// Kills right after a request reached the sandbox, within its latency:
    /// that request was still being answered when the process died.
    in_flight: usize,
    /// Provider calls (all processes) at the last kill, and at the end.
    calls_at_last_kill: u64,
    calls_at_end: u64,
    /// A process ended on its own before its kill (the kills fell short).
    ended_early: Option<String>,
}

/// Runs the binary and kills it `KILLS` times, then lets it finish; returns
/// the exit code of the final, uninterrupted run and what the kills hit.
///
/// Most kill instants are chosen in provider calls, not in time: kill `k`
/// waits until the sandbox has counted about `k/(KILLS+1)` of the run's
/// calls, then kills at once, while the request that crossed the mark is
/// still inside the sandbox's latency. So kills cover the whole run, from
/// the first call to the last ones, and land while requests are in flight.
/// One kill in five is by time instead, early, to hit start-up and import.
fn kill_and_resume(
    w: &Work,
    file: &std::path::Path,
    sb: &Sandbox,
    extra: &[&str],
    seed: u64,
) -> (i32, Kills) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    // Marks go up to a clean run's calls (two per row). Kills add calls
    // (re-sent initiates, faults), so the marks are nearly always reached;
    // under `hold` a parked payout sends fewer, and a run may then end
    // before its last kills (allowed down to `MIN_KILLS`).
    let slot = (2 * ROWS as u64) / (KILLS as u64 + 1);
    let mut log = Kills::default();
    while log.kills < KILLS {
        let before = sb.ledger().requests.total;
        let by_time = rng.random_ratio(1, 5);
        // The k-th slot, jittered by half a slot either way.
        let mark = (log.kills as u64 + 1) * slot + rng.random_range(0..slot) - slot / 2;
        let delay = Duration::from_millis(rng.random_range(5..80));
        let mut child = w.run_cmd(file, &sb.base_url(), extra).spawn().unwrap();
        let started = Instant::now();
        let crossed = loop {
            std::thread::sleep(POLL);
            if let Some(status) = child.try_wait().unwrap() {
                log.ended_early = Some(format!(
                    "{status} before kill {} (mark {mark}, calls {})",
                    log.kills + 1,
                    sb.ledger().requests.total
                ));
                break false;
            }
            assert!(started.elapsed() < STUCK, "seed {seed}: run stuck");
            if by_time {
                if started.elapsed() >= delay {
                    break false;
                }
            } else if sb.ledger().requests.total >= mark.max(before + 1) {
                break true;
            }
        };
        if log.ended_early.is_some() {
            break;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        log.kills += 1;
        let after = sb.ledger().requests.total;
        if after > before {
            log.mid_run += 1;
        }
        if crossed {
            log.in_flight += 1;
        }
        log.calls_at_last_kill = after;
    }
    let out = w.run(file, &sb.base_url(), extra);
    log.calls_at_end = sb.ledger().requests.total;
    eprintln!("seed {seed}: {log:?}; final run: {}", text(&out));
    (code(&out), log)
}

/// The kills were spread over the run and hit it while it was working.
fn check_kills(log: &Kills, seed: u64) {
    assert!(log.kills >= MIN_KILLS, "seed {seed}: {log:?}");
    assert!(
        log.mid_run >= KILLS / 2,
        "seed {seed}: too few kills during calls: {log:?}"
    );
    assert!(log.in_flight >= KILLS / 2, "seed {seed}: {log:?}");
    // The last kills come near the end of the run, not only in its first half.
    assert!(
        log.calls_at_last_kill * 10 >= log.calls_at_end * 6,
        "seed {seed}: kills stopped early: {log:?}"
    );
}

/// A finished run re-run makes zero provider calls.
fn rerun_makes_no_calls(w: &Work, sb: &Sandbox, file: &std::path::Path, seed: u64) {
    let before = sb.ledger().requests.total;
    let out = w.run(file, &sb.base_url(), &[]);
    assert!(code(&out) == 0 || code(&out) == 3, "{}", text(&out));
    assert_eq!(
        sb.ledger().requests.total,
        before,
        "seed {seed}: re-run made calls"
    );
}

/// Latency long enough for a kill to land while a request is inside it;
/// some executes carried out and then answered 503 or cut off.
fn faulty(seed: u64, non_idempotent_execute: bool) -> SandboxConfig {
    SandboxConfig {
        seed,
        latency_ms: 5,
        jitter_ms: 10,
        ambiguous_rate: 0.05,
        non_idempotent_execute,
        ..Default::default()
    }
}

fn crash_test(config: SandboxConfig, policy: Policy, seed: u64) {
    let opening = config.wallets.clone();
    let sb = Sandbox::start(config);
    let w = Work::new();
    if policy == Policy::Hold {
        w.parked();
    }
    let file = w.write("payroll.csv", &payroll(ROWS, account));
    let ambiguous = match policy {
        Policy::Resend => "resend",
        Policy::Hold => "hold",
    };
    // Four in flight: the sandbox's latency, not the rate, paces the run.
    let extra = [
        "--rate",
        "1000",
        "--concurrency",
        "4",
        "--ambiguous",
        ambiguous,
        "--resend-delay-ms",
        "0",
    ];
    let (code, kills) = kill_and_resume(&w, &file, &sb, &extra, seed);
    match policy {
        // `resend` re-sends an ambiguous execute once per run; what is
        // still unknown after that is settled as an operator would.
        Policy::Resend if code == 3 => w.settle_by_resend(&sb.base_url()),
        Policy::Resend => assert_eq!(code, 0, "seed {seed}"),
        Policy::Hold => assert!(code == 0 || code == 3, "seed {seed}: exit {code}"),
    }
    check_kills(&kills, seed);
    check_books(
        &payroll_rows(&file),
        &opening,
        &sb.ledger(),
        &w.report_rows(),
        policy,
        &format!("seed {seed}"),
    );
    rerun_makes_no_calls(&w, &sb, &file, seed);
}

#[test]
fn sigkill_at_random_instants_never_pays_twice_or_forgets_anyone() {
    let seed = seed("PAYRUN_CRASH_SEED", "crash");
    crash_test(faulty(seed, false), Policy::Resend, seed);
}

#[test]
fn sigkill_under_hold_leaves_debited_payouts_executed_or_unknown() {
    let seed = seed("PAYRUN_CRASH_SEED", "crash");
    crash_test(faulty(seed, false), Policy::Hold, seed);
}

/// The provider pays again on every execute: only payrun's own care
/// (`hold`: an execute whose outcome a crash hid is never sent again) keeps
/// anyone from being paid twice.
#[test]
fn sigkill_under_hold_against_a_provider_that_pays_twice_never_pays_twice() {
    let seed = seed("PAYRUN_CRASH_SEED", "crash");
    crash_test(faulty(seed, true), Policy::Hold, seed);
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
            // The intent a crash left is re-sent (`resend`; the default
            // `hold` parks it as unknown for an operator).
            let out = w.run(
                &file,
                &sb.base_url(),
                &["--rate", "500", "--ambiguous", "resend"],
            );
            assert_eq!(code(&out), 0, "{point}:{nth}: {}", text(&out));
            check_books(
                &payroll_rows(&file),
                &SandboxConfig::default().wallets,
                &sb.ledger(),
                &w.report_rows(),
                Policy::Resend,
                &format!("{point}:{nth}"),
            );
        }
    }
}

/// The windows where an execute may have been carried out, hit on purpose
/// under `hold`, against a provider that pays again on every execute: the
/// resumed run parks the payout as unknown and never sends its execute
/// again, so nobody is paid twice. One payout at a time, so the Nth answer
/// is known: answers alternate initiate, execute.
#[test]
fn fault_points_under_hold_never_execute_twice_on_a_provider_that_pays_twice() {
    for (point, nth) in [
        ("after_answer", 2),
        ("after_answer", 6),
        ("after_intent_commit", 1),
        ("after_intent_commit", 4),
    ] {
        let config = SandboxConfig {
            non_idempotent_execute: true,
            ..Default::default()
        };
        let opening = config.wallets.clone();
        let sb = Sandbox::start(config);
        let w = Work::new();
        w.parked();
        let file = w.write("payroll.csv", &payroll(8, account));
        let extra = ["--concurrency", "1", "--ambiguous", "hold"];
        let out = w
            .run_cmd(&file, &sb.base_url(), &extra)
            .env("PAYRUN_FAULT", format!("{point}:{nth}"))
            .output()
            .unwrap();
        assert!(!out.status.success(), "{point}:{nth}: {}", text(&out));
        let out = w.run(&file, &sb.base_url(), &extra);
        assert_eq!(code(&out), 3, "{point}:{nth}: {}", text(&out));
        let ledger = sb.ledger();
        check_books(
            &payroll_rows(&file),
            &opening,
            &ledger,
            &w.report_rows(),
            Policy::Hold,
            &format!("{point}:{nth}"),
        );
        // The death hid exactly one execute's outcome: that payout is held
        // (not executed), with the one execute it had, if any.
        let report = w.report_rows();
        let held: Vec<_> = (0..report.len())
            .filter(|&i| col(&report, i, "state") != "executed")
            .map(|i| ledger.get(&col(&report, i, "transaction_id")).unwrap())
            .collect();
        assert_eq!(held.len(), 1, "{point}:{nth}: {held:?}");
        let paid = u32::from(point == "after_answer");
        assert_eq!(
            (held[0].execute_calls, held[0].debits),
            (paid, paid),
            "{point}:{nth}"
        );
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
        std::thread::sleep(POLL);
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
        std::thread::sleep(POLL);
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
