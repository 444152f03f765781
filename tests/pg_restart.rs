//! The database server restarting mid-run (issue 16): the test's own
//! PostgreSQL cluster (`common::cluster`, never the shared server) is killed
//! like a crashed machine while `payrun run` is paying; payrun must stop or
//! wait, never record a state the provider's books contradict, and the same
//! command after the restart must finish the run with every row paid once.

mod common;

use common::cluster::Cluster;
use common::money::{Policy, check_books, payroll_rows};
use common::*;
use payrun::sandbox::{LedgerSnapshot, SandboxConfig};
use std::collections::HashMap;
use std::process::Child;
use std::time::{Duration, Instant};

/// The harness itself: a committed row survives the server's death, a
/// client sees the death as an error, and the restarted server serves.
#[test]
fn the_test_cluster_dies_like_a_machine_and_recovers_its_commits() {
    let Some(c) = Cluster::start("the_test_cluster_dies_like_a_machine_and_recovers_its_commits")
    else {
        return;
    };
    c.create_db("books");
    let mut client = common::pg::connect(&c.url("books"));
    client
        .batch_execute("CREATE TABLE t (n INT); INSERT INTO t VALUES (1)")
        .unwrap();
    c.kill();
    assert!(client.batch_execute("INSERT INTO t VALUES (2)").is_err());
    assert!(postgres::Client::connect(&c.url("books"), postgres::NoTls).is_err());
    c.restart();
    let mut client = common::pg::connect(&c.url("books"));
    let n: i64 = client
        .query_one("SELECT count(*) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

const ROWS: usize = 300;
const WORKERS: usize = 2;
/// Requests in flight per worker: also the most a worker can have sent
/// after the server died (one committed intent per task).
const CONCURRENCY: u64 = 4;
const POLL: Duration = Duration::from_millis(3);
const DEADLINE: Duration = Duration::from_secs(60);
/// How long payrun gets to notice the dead server and stop; one still
/// running then is taken to be waiting for it (also allowed).
const NOTICE: Duration = Duration::from_secs(20);

fn account(i: usize) -> String {
    format!("22508{:08}", i)
}

fn flags() -> [&'static str; 6] {
    [
        "--rate",
        "300",
        "--concurrency",
        "4",
        "--ambiguous",
        "resend",
    ]
}

#[test]
fn the_database_dying_mid_run_records_nothing_wrong_and_the_rerun_finishes() {
    let test = "the_database_dying_mid_run_records_nothing_wrong_and_the_rerun_finishes";
    let Some(cluster) = Cluster::start(test) else {
        return;
    };
    cluster.create_db("payrun");
    let db = cluster.url("payrun");
    let config = SandboxConfig {
        latency_ms: 10,
        jitter_ms: 10,
        ..Default::default()
    };
    let opening = config.wallets.clone();
    let sb = Sandbox::start(config);
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(ROWS, account));
    let spawn = |n: usize| {
        let err = std::fs::File::create(w.path(&format!("worker-{n}.err"))).unwrap();
        w.run_cmd_db(&db, &file, &sb.base_url(), &flags())
            .env("PAYRUN_LEASE_MS", "2000")
            .env("PAYRUN_REQUEST_TIMEOUT_MS", "500")
            .stdout(std::process::Stdio::null())
            .stderr(err)
            .spawn()
            .unwrap()
    };
    let mut workers: Vec<Child> = (0..WORKERS).map(spawn).collect();
    let stderr = |n: usize| std::fs::read_to_string(w.path(&format!("worker-{n}.err"))).unwrap();

    // A third of the way through the run, the server dies.
    let started = Instant::now();
    while sb.requests().total < 2 * ROWS as u64 / 3 {
        for (n, c) in workers.iter_mut().enumerate() {
            assert!(
                c.try_wait().unwrap().is_none(),
                "ended early: {}",
                stderr(n)
            );
        }
        assert!(started.elapsed() < DEADLINE, "no progress");
        std::thread::sleep(POLL);
    }
    cluster.kill();
    let at_death = sb.requests().total;

    // payrun stops (or waits); either way nothing new leaves once no intent
    // can be committed.
    let mut stopped = vec![None; WORKERS];
    let noticed = Instant::now();
    while stopped.iter().any(Option::is_none) && noticed.elapsed() < NOTICE {
        for (n, c) in workers.iter_mut().enumerate() {
            if stopped[n].is_none() {
                stopped[n] = c.try_wait().unwrap();
            }
        }
        std::thread::sleep(POLL);
    }
    let sent_after = sb.requests().total - at_death;
    assert!(
        sent_after <= CONCURRENCY * WORKERS as u64,
        "{sent_after} calls after the database died (at {at_death})"
    );
    for (n, status) in stopped.iter().enumerate() {
        if let Some(status) = status {
            let err = stderr(n);
            assert_eq!(status.code(), Some(1), "worker {n}: {err}");
            assert!(!err.contains("panicked"), "worker {n}: {err}");
            assert!(
                err.contains("database") || err.contains("lease"),
                "worker {n} does not say why it stopped: {err}"
            );
        }
    }

    cluster.restart();
    // Workers that waited carry on and finish; those that stopped are
    // run again below.
    for (n, c) in workers.iter_mut().enumerate() {
        if stopped[n].is_none() {
            let status = wait(c);
            assert!(matches!(status.code(), Some(0 | 1 | 3)), "{}", stderr(n));
        }
    }
    // Before any re-run: what the database says agrees with the books.
    states_agree_with_the_ledger(&db, &sb.ledger());

    let out = w.run_db(&db, &file, &sb.base_url(), &flags());
    match code(&out) {
        0 => {}
        3 => w.settle_by_resend_db(&db, &sb.base_url()),
        _ => panic!("re-run: {}\nserver log:\n{}", text(&out), cluster.log()),
    }
    check_books(
        &payroll_rows(&file),
        &opening,
        &sb.ledger(),
        &w.report_rows(),
        Policy::Resend,
        "after the database restarted",
    );
    let said: Vec<String> = (0..WORKERS)
        .map(|n| stderr(n).lines().last().unwrap_or("").to_string())
        .collect();
    eprintln!(
        "database killed at {at_death} calls; {sent_after} calls after; stopped: {stopped:?}; \
         said: {said:?}"
    );
}

fn wait(c: &mut Child) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = c.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < DEADLINE, "worker never ended");
        std::thread::sleep(POLL);
    }
}

/// No recorded state is ahead of, or behind, what the provider did: a
/// payout recorded pending was never sent, one recorded initiated (or
/// failed) was never debited, one recorded executed was debited once, and
/// every debit belongs to a payout recorded where money may have moved.
fn states_agree_with_the_ledger(db: &str, ledger: &LedgerSnapshot) {
    let rows = common::pg::connect(db)
        .query("SELECT transaction_id, state FROM payouts", &[])
        .unwrap();
    let recorded: HashMap<String, String> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    for (tx, state) in &recorded {
        let t = ledger.get(tx);
        let debits = t.map_or(0, |t| t.debits);
        let ok = match state.as_str() {
            "pending" => t.is_none(),
            "initiated" => t.is_some() && debits == 0,
            "initiate_failed" | "execute_failed" => debits == 0,
            "executed" => debits == 1,
            "initiating" => debits == 0,
            "executing" | "processing" | "unknown" => debits <= 1,
            _ => false,
        };
        assert!(ok, "{tx} recorded {state}, ledger {t:?}");
    }
    for t in ledger.transactions.iter().filter(|t| t.kind == "payout") {
        let state = recorded
            .get(&t.transaction_id)
            .unwrap_or_else(|| panic!("{t:?} is not in the database"));
        if t.debits > 0 {
            assert!(
                ["executing", "processing", "executed", "unknown"].contains(&state.as_str()),
                "{t:?} debited but recorded {state}"
            );
        }
    }
}
