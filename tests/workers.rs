//! Several `payrun run` workers sharing one run through PostgreSQL (issue
//! 16), against the in-process sandbox: every row paid exactly once by the
//! sandbox's ledger, the run finished whichever worker ends last, each
//! worker's report consistent with the ledger, the provider's rate shared;
//! a worker that dies mid-run has its payouts adopted by another without a
//! second debit; `payrun status` lists the workers holding leases.
//!
//! Needs `PAYRUN_TEST_POSTGRES` (e.g.
//! `postgres://postgres@127.0.0.1:5432/test`); each test works in a fresh
//! schema of its own. Without it, every test says it is skipped and passes.

mod common;

use common::pg::Schema;
use common::{KEY, Sandbox, TEST_BACKOFF_MS, Work, code, col, payroll, read_csv, text};
use payrun::sandbox::{LedgerSnapshot, SandboxConfig};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

const ROWS: usize = 300;

/// A short lease, so a dead worker's payouts are adopted quickly, and a
/// request deadline it outlasts (a worker sends only while it does).
const SHORT_LEASE: [(&str, &str); 2] = [
    ("PAYRUN_LEASE_MS", "1500"),
    ("PAYRUN_REQUEST_TIMEOUT_MS", "400"),
];

/// A sandbox with `config` (and the test key), a folder, and a payroll of
/// [`ROWS`] rows in it.
fn start(config: SandboxConfig) -> (Sandbox, Work, PathBuf) {
    let sb = Sandbox::start(SandboxConfig {
        api_key: KEY.into(),
        ..config
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(ROWS, |i| format!("acc-{i:04}")));
    (sb, w, file)
}

/// `payrun run` as one worker, its report in `NAME.csv`.
fn worker(
    w: &Work,
    file: &Path,
    base_url: &str,
    db: &str,
    name: &str,
    env: &[(&str, &str)],
) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
    cmd.current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .env("PAYRUN_BACKOFF_MS", TEST_BACKOFF_MS)
        .env_remove("RUST_LOG")
        .env_remove("PAYRUN_FAULT")
        .envs(env.iter().copied())
        .arg("run")
        .arg(file)
        .args(["--base-url", base_url, "--db", db, "--period", "2026-05"])
        .arg("--report")
        .arg(w.path(&format!("{name}.csv")))
        .args(["--ambiguous", "resend"]);
    cmd
}

fn status(w: &Work, db: &str, lease_ms: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("XDG_DATA_HOME", w.path("data"))
        .env("PAYRUN_LEASE_MS", lease_ms)
        .args(["status", "--db", db])
        .output()
        .unwrap()
}

fn rate(mut cmd: Command, rate: &str) -> Command {
    cmd.args(["--rate", rate]);
    cmd
}

/// A worker running in the background, its output going to a file (a
/// pipe nobody reads while the test polls would block it).
struct Running {
    child: Child,
    log: PathBuf,
}

fn spawn(w: &Work, mut cmd: Command, name: &str) -> Running {
    let log = w.path(&format!("{name}.log"));
    let file = std::fs::File::create(&log).unwrap();
    let child = cmd
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    Running { child, log }
}

impl Running {
    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

fn wait(mut r: Running) -> Output {
    let status = r.child.wait().unwrap();
    Output {
        status,
        stdout: Vec::new(),
        stderr: std::fs::read(&r.log).unwrap_or_default(),
    }
}

/// Every row paid exactly once, by the ledger; every line of every report
/// executed and the ledger's. Returns the transaction ids.
fn check_paid_once(ledger: &LedgerSnapshot, reports: &[&Path]) {
    let payouts: Vec<_> = ledger
        .transactions
        .iter()
        .filter(|t| t.kind == "payout")
        .collect();
    assert_eq!(payouts.len(), ROWS, "one ledger entry per row");
    for t in &payouts {
        assert_eq!(
            t.debits, 1,
            "{} debited {} times",
            t.transaction_id, t.debits
        );
        assert_eq!(t.status, "SUCCESS", "{}", t.transaction_id);
    }
    assert_eq!(ledger.total_debits(), ROWS as u64);
    for report in reports {
        let rows = read_csv(report);
        assert_eq!(rows.len(), ROWS, "{}", report.display());
        for i in 0..rows.len() {
            assert_eq!(
                col(&rows, i, "state"),
                "executed",
                "{} line {i}",
                report.display()
            );
            let tx = col(&rows, i, "transaction_id");
            assert!(ledger.get(&tx).is_some_and(|t| t.debits == 1), "{tx}");
        }
    }
}

/// How many payouts each worker carried to their end (by lease owner).
fn payouts_per_worker(db: &str) -> Vec<(i64, i64)> {
    let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
    c.query(
        "SELECT lease_owner, count(*) FROM payouts GROUP BY lease_owner ORDER BY lease_owner",
        &[],
    )
    .unwrap()
    .iter()
    .map(|r| (r.get::<_, Option<i64>>(0).unwrap_or(0), r.get(1)))
    .collect()
}

/// Payouts worker `id` holds in a state where its request may be in flight.
fn in_flight_of(db: &str, id: i64) -> Vec<i64> {
    let mut c = postgres::Client::connect(db, postgres::NoTls).unwrap();
    c.query(
        "SELECT id FROM payouts WHERE lease_owner = $1
           AND state IN ('initiating', 'initiated', 'executing')",
        &[&id],
    )
    .unwrap()
    .iter()
    .map(|r| r.get(0))
    .collect()
}

#[test]
fn three_workers_pay_one_run_exactly_once_within_the_shared_rate() {
    let Some(schema) =
        Schema::fresh("three_workers_pay_one_run_exactly_once_within_the_shared_rate")
    else {
        return;
    };
    let db = schema.url();
    // The provider refuses beyond 200 calls/s (with a second's burst): three
    // workers at `--rate 200` each would meet 429s unless they share it.
    let (sb, w, file) = start(SandboxConfig {
        rate_limit: Some(200),
        ..SandboxConfig::default()
    });
    let t0 = Instant::now();
    let children: Vec<Running> = ["w1", "w2", "w3"]
        .iter()
        .map(|name| {
            let cmd = rate(worker(&w, &file, &sb.base_url(), &db, name, &[]), "200");
            spawn(&w, cmd, name)
        })
        .collect();
    for child in children {
        let out = wait(child);
        assert_eq!(code(&out), 0, "{}", text(&out));
    }
    let elapsed = t0.elapsed();
    let ledger = sb.ledger();
    let reports: Vec<_> = ["w1", "w2", "w3"]
        .map(|n| w.path(&format!("{n}.csv")))
        .to_vec();
    check_paid_once(
        &ledger,
        &reports.iter().map(|p| p.as_path()).collect::<Vec<_>>(),
    );
    // Two calls per row, shared at 200/s by the three workers.
    assert_eq!(
        ledger.requests.total,
        2 * ROWS as u64,
        "{:?}",
        ledger.requests
    );
    assert_eq!(ledger.requests.rate_limited, 0, "{:?}", ledger.requests);
    let rate = (2 * ROWS) as f64 / elapsed.as_secs_f64();
    assert!(rate <= 200.0 * 1.05, "{rate:.0} calls/s over {elapsed:?}");
    // The work was shared, and nobody's payout was left behind.
    let per = payouts_per_worker(&db);
    assert!(per.len() >= 2, "one worker did everything: {per:?}");
    let out = status(&w, &db, "15000");
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("finished"), "{shown}");
    assert!(shown.contains(&format!("executed {ROWS}")), "{shown}");
    assert!(
        !shown.contains("  worker "),
        "no worker holds anything now: {shown}"
    );
}

#[test]
fn a_dead_workers_payouts_are_adopted_and_never_paid_twice() {
    let Some(schema) = Schema::fresh("a_dead_workers_payouts_are_adopted_and_never_paid_twice")
    else {
        return;
    };
    let db = schema.url();
    let (sb, w, file) = start(SandboxConfig::default());
    let lease = SHORT_LEASE;
    // The first worker dies like a power cut right after the provider
    // answered an execute, before recording it: debited, still `executing`.
    let out = worker(&w, &file, &sb.base_url(), &db, "w1", &lease)
        .env("PAYRUN_FAULT", "after_answer:120")
        .output()
        .unwrap();
    assert_ne!(code(&out), 0, "{}", text(&out));
    assert!(
        text(&out).contains("fault point after_answer"),
        "{}",
        text(&out)
    );
    let paid_before = sb.ledger().total_debits();
    assert!(paid_before > 0);
    // Its lease holds it for `status` (judging with a long lease)...
    let out = status(&w, &db, "600000");
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    let line = shown
        .lines()
        .find(|l| l.trim_start().starts_with("worker "))
        .unwrap_or_else(|| panic!("no worker listed: {shown}"));
    assert!(
        line.contains(" pid ") && line.contains("live") && line.contains("last heartbeat"),
        "{line}"
    );
    assert!(!line.contains("holds 0 "), "{line}");
    // ...and expired with the workers' own lease, once it has passed.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let shown = String::from_utf8_lossy(&status(&w, &db, "1500").stdout).to_string();
        if shown.contains("  expired  holds") {
            break;
        }
        assert!(Instant::now() < deadline, "never expired: {shown}");
    }

    let held = in_flight_of(&db, 1);
    assert!(!held.is_empty(), "the dead worker held payouts in flight");

    // Two workers finish the run: they adopt what the dead one held.
    let children: Vec<Running> = ["w2", "w3"]
        .iter()
        .map(|name| {
            spawn(
                &w,
                worker(&w, &file, &sb.base_url(), &db, name, &lease),
                name,
            )
        })
        .collect();
    for child in children {
        let out = wait(child);
        assert_eq!(code(&out), 0, "{}", text(&out));
    }
    let ledger = sb.ledger();
    check_paid_once(
        &ledger,
        &[w.path("w2.csv").as_path(), w.path("w3.csv").as_path()],
    );
    // A request the dead worker had sent was sent again by its adopter,
    // under the same transaction id (the resumed path), and paid once.
    let again = ledger
        .transactions
        .iter()
        .filter(|t| t.initiate_calls > 1 || t.execute_calls > 1)
        .count();
    assert!(again >= 1, "the in-flight request was resumed");
    // What it held was adopted (its lease moved) and carried to the end.
    let mut c = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    for id in held {
        let r = c
            .query_one(
                "SELECT lease_owner, state FROM payouts WHERE id = $1",
                &[&id],
            )
            .unwrap();
        let (owner, state): (Option<i64>, String) = (r.get(0), r.get(1));
        assert!(
            owner.is_some_and(|o| o != 1),
            "payout {id} still the dead worker's"
        );
        assert_eq!(state, "executed", "payout {id}");
    }
    let per = payouts_per_worker(&db);
    assert!(per.len() >= 3, "both live workers paid some: {per:?}");
    let shown = String::from_utf8_lossy(&status(&w, &db, "1500").stdout).to_string();
    assert!(shown.contains("finished"), "{shown}");
}

#[test]
fn a_worker_whose_lease_lapses_stops_sending_and_another_finishes() {
    let Some(schema) =
        Schema::fresh("a_worker_whose_lease_lapses_stops_sending_and_another_finishes")
    else {
        return;
    };
    let db = schema.url();
    let (sb, w, file) = start(SandboxConfig::default());
    let lease = SHORT_LEASE;
    let mut slow = worker(&w, &file, &sb.base_url(), &db, "w1", &lease);
    slow.args(["--rate", "40"]);
    let mut child = spawn(&w, slow, "w1");
    // Once it is paying, its heartbeat is made a lease old behind its back
    // (a stalled process, a partitioned network): it must stop sending.
    let deadline = Instant::now() + Duration::from_secs(60);
    while sb.ledger().total_debits() < 20 {
        assert!(Instant::now() < deadline, "the worker never paid");
        assert!(child.running(), "{}", text(&wait(child)));
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut c = postgres::Client::connect(&db, postgres::NoTls).unwrap();
    c.execute(
        "UPDATE workers SET heartbeat_at = now() - interval '1 hour'",
        &[],
    )
    .unwrap();
    let out = wait(child);
    assert_eq!(
        code(&out),
        1,
        "the exit code of an interrupted run: {}",
        text(&out)
    );
    let all = text(&out);
    assert!(
        all.contains("lease lapsed") && all.contains("stopped sending"),
        "{all}"
    );
    assert!(!all.contains("panicked"), "{all}");
    let paid = sb.ledger().total_debits();
    assert!(
        paid < ROWS as u64,
        "it stopped before the end ({paid} paid)"
    );
    // Another worker adopts what it left and finishes the run.
    let out = worker(&w, &file, &sb.base_url(), &db, "w2", &lease)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    check_paid_once(&sb.ledger(), &[w.path("w2.csv").as_path()]);
}

/// Whether process `pid` is stopped (SIGSTOP): state `T` in its stat line.
fn is_stopped(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let i = stat.rfind(')')?;
            stat.get(i + 2..i + 3).map(|s| s == "T")
        })
        .unwrap_or(false)
}

/// The issue-31 fence, against a provider that pays again on every
/// execute: a worker frozen (SIGSTOP) after its lease check, right before
/// an execute leaves, and woken after its lease lapsed and another worker
/// adopted and paid that payout, sends nothing at all: no second debit, and
/// not one request of its own in the ledger after the freeze.
#[test]
fn a_worker_frozen_before_its_execute_leaves_sends_nothing_once_its_lease_lapsed() {
    let Some(schema) = Schema::fresh(
        "a_worker_frozen_before_its_execute_leaves_sends_nothing_once_its_lease_lapsed",
    ) else {
        return;
    };
    let db = schema.url();
    // Worker A has a key of its own, so the ledger counts its requests.
    const KEY_A: &str = "sk_worker_a_frozen";
    let (sb, w, file) = start(SandboxConfig {
        non_idempotent_execute: true,
        more_api_keys: vec![KEY_A.into()],
        ..SandboxConfig::default()
    });
    // One call at a time, so nothing else of A's is in flight when it
    // freezes before sending its fifth execute.
    let mut cmd = worker(&w, &file, &sb.base_url(), &db, "a", &SHORT_LEASE);
    cmd.env("PAYRUN_API_KEY", KEY_A)
        .env("PAYRUN_FAULT", "checked_execute:5:stop")
        .args(["--max-concurrency", "1", "--rate", "500"]);
    let mut a = spawn(&w, cmd, "a");
    let pid = a.child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !is_stopped(pid) {
        assert!(
            a.running(),
            "A ended instead of freezing: {}",
            text(&wait(a))
        );
        assert!(Instant::now() < deadline, "A never froze");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent_by_a = sb.ledger().requests_with_key(KEY_A);
    assert!(sent_by_a >= 5, "{sent_by_a}");
    // The payout A froze on: its execute intent committed, not sent.
    let mut c = schema.client();
    let frozen: Vec<String> = c
        .query(
            "SELECT transaction_id FROM payouts WHERE state = 'executing'",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(frozen.len(), 1, "{frozen:?}");
    assert_eq!(
        sb.ledger().get(&frozen[0]).map(|t| t.execute_calls),
        Some(0)
    );
    // B finishes the run: it adopts what A held once A's lease and a request
    // deadline have passed, and (`--ambiguous resend`) sends the frozen
    // payout's execute itself.
    let out = rate(
        worker(&w, &file, &sb.base_url(), &db, "b", &SHORT_LEASE),
        "1000",
    )
    .output()
    .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().get(&frozen[0]).map(|t| t.debits), Some(1));
    // A wakes where it froze, with its lease long lapsed.
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGCONT) }, 0);
    let out = wait(a);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("lease lapsed"), "{all}");
    let ledger = sb.ledger();
    assert_eq!(
        ledger.requests_with_key(KEY_A),
        sent_by_a,
        "A sent requests after its lease lapsed"
    );
    let t = ledger.get(&frozen[0]).unwrap();
    assert_eq!((t.execute_calls, t.debits), (1, 1), "{t:?}");
    check_paid_once(&ledger, &[w.path("b.csv").as_path()]);
}

#[test]
fn workers_whose_wallet_ran_out_both_end_without_waiting_for_each_other() {
    let Some(schema) =
        Schema::fresh("workers_whose_wallet_ran_out_both_end_without_waiting_for_each_other")
    else {
        return;
    };
    let db = schema.url();
    // The XOF wallet pays a few rows only: each worker halts XOF and leaves
    // its initiated XOF payouts resting, which the other must not wait for.
    let mut config = SandboxConfig::default();
    config.wallets.insert("XOF".into(), 5_000.into());
    let (sb, w, file) = start(config);
    let lease = SHORT_LEASE;
    let mut children: Vec<Running> = ["w1", "w2"]
        .iter()
        .map(|name| {
            let cmd = rate(worker(&w, &file, &sb.base_url(), &db, name, &lease), "200");
            spawn(&w, cmd, name)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    while children.iter_mut().any(Running::running) {
        if Instant::now() > deadline {
            let outs: Vec<String> = children
                .into_iter()
                .map(|mut c| {
                    let _ = c.child.kill();
                    text(&wait(c))
                })
                .collect();
            panic!(
                "the workers wait for each other for ever:\n{}",
                outs.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for child in children {
        let out = wait(child);
        assert_eq!(
            code(&out),
            3,
            "finished with payouts not executed: {}",
            text(&out)
        );
    }
    let ledger = sb.ledger();
    assert!(ledger.transactions.iter().all(|t| t.debits <= 1));
    let shown = String::from_utf8_lossy(&status(&w, &db, "1500").stdout).to_string();
    assert!(
        shown.contains("in progress") && shown.contains("initiated"),
        "{shown}"
    );
}

#[test]
fn sandbox_and_a_postgres_database_are_refused_together_without_the_password() {
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, |i| format!("acc-{i}")));
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("XDG_DATA_HOME", w.path("data"))
        .arg("run")
        .arg(&file)
        .args([
            "--sandbox",
            "--db",
            "postgres://pay:s3cret@127.0.0.1:1/none",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("--sandbox") && all.contains("PostgreSQL"),
        "{all}"
    );
    assert!(!all.contains("s3cret"), "{all}");
    // A database that cannot be reached is named, its password hidden.
    let out = status(&w, "postgres://pay:s3cret@127.0.0.1:1/none", "15000");
    assert_eq!(code(&out), 1, "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("postgres://pay:***@127.0.0.1:1/none"), "{all}");
    assert!(!all.contains("s3cret"), "{all}");
}

/// `payrun cancel` and `payrun reconcile` settling payouts coordinate with
/// live workers (issue 31): refused, naming the worker (host, pid, lease)
/// and changing nothing, while one may still send; carried out once it
/// stopped.
#[test]
fn cancel_and_reconcile_are_refused_while_a_worker_may_still_send() {
    let Some(schema) =
        Schema::fresh("cancel_and_reconcile_are_refused_while_a_worker_may_still_send")
    else {
        return;
    };
    let db = schema.url();
    let (sb, w, file) = start(SandboxConfig::default());
    let out = worker(&w, &file, &sb.base_url(), &db, "a", &[])
        .arg("--import-only")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let mut c = schema.client();
    let run: i64 = c.query_one("SELECT id FROM runs", &[]).unwrap().get(0);
    let tx: String = c
        .query_one(
            "SELECT transaction_id FROM payouts ORDER BY id LIMIT 1",
            &[],
        )
        .unwrap()
        .get(0);
    // A worker of the run, live on another machine.
    c.execute(
        "INSERT INTO workers (run_id, host, pid) VALUES ($1, 'box-b', 812)",
        &[&run],
    )
    .unwrap();
    let payrun = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_payrun"))
            .current_dir(w.dir.path())
            .env("XDG_DATA_HOME", w.path("data"))
            .env_remove("PAYRUN_LEASE_MS")
            .args(args)
            .args(["--db", &db])
            .output()
            .unwrap()
    };
    let run_arg = run.to_string();
    let cancelled = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM payouts WHERE state = 'cancelled'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    for args in [
        vec!["cancel", run_arg.as_str()],
        vec![
            "reconcile",
            "--mark",
            "failed",
            tx.as_str(),
            "--reason",
            "test",
        ],
    ] {
        let out = payrun(&args);
        let all = text(&out);
        assert_eq!(code(&out), 1, "{args:?}: {all}");
        assert!(
            all.contains(&format!("of run {run} on box-b pid 812"))
                && all.contains("live, lease 45.0 s")
                && all.contains("Nothing was changed"),
            "{args:?}: {all}"
        );
    }
    assert_eq!(cancelled(&mut c), 0);
    // Listing what is open only reads: it works alongside workers.
    assert_eq!(code(&payrun(&["reconcile"])), 3);
    // The worker stops (its calls over): the cancel is carried out.
    c.execute("UPDATE workers SET stopped_at = now()", &[])
        .unwrap();
    let out = payrun(&["cancel", &run_arg]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(cancelled(&mut c), ROWS as i64);
}
