//! End-to-end tests of `payrun run`, `status` and `report` against the
//! in-process sandbox: every row paid exactly once (checked on the
//! sandbox's ledger), through faults, business failures, a wrong key,
//! maker-checker initiation, and re-runs.

mod common;

use common::money::{Policy, check_books, payroll_rows};
use common::*;
use payrun::sandbox::SandboxConfig;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::str::FromStr;

#[test]
fn clean_run_pays_every_row_once_and_report_matches_ledger() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(30, account));
    let out = w.run(&file, &sb.base_url(), &["--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));

    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 30);
    for t in &ledger.transactions {
        assert_eq!(t.debits, 1, "{t:?}");
        assert_eq!(t.status, "SUCCESS");
    }
    let rows = w.report_rows();
    assert_eq!(rows.len(), 30);
    // Report rows in file order, each matching its ledger entry.
    let mut per_currency: BTreeMap<String, Decimal> = BTreeMap::new();
    for (i, _) in rows.iter().enumerate() {
        assert_eq!(col(&rows, i, "row"), (i + 2).to_string());
        assert_eq!(col(&rows, i, "state"), "executed");
        assert_eq!(col(&rows, i, "attempts"), "2");
        assert!(!col(&rows, i, "executed_at").is_empty());
        let tx = col(&rows, i, "transaction_id");
        let entry = ledger.get(&tx).expect("report row is in the ledger");
        assert_eq!(entry.account_id, col(&rows, i, "account_id"));
        assert_eq!(entry.amount.to_string(), col(&rows, i, "amount"));
        *per_currency.entry(col(&rows, i, "currency")).or_default() += entry.amount;
    }
    // The summary's totals are the ledger's.
    let summary = read_csv(&payrun::report::summary_path(&w.report()));
    for rec in &summary {
        assert_eq!(&rec[1], "executed");
        assert_eq!(
            Decimal::from_str(&rec[3]).unwrap(),
            per_currency[&rec[0].to_string()]
        );
    }
    assert_eq!(summary.len(), per_currency.len());
}

#[test]
fn faults_5xx_429_and_ambiguous_still_pay_everyone_exactly_once() {
    // The sandbox allows 30 calls a second (burst 30) while payrun asks for
    // 400: the run meets 429s and must slow down, not fail or skip anyone.
    let config = SandboxConfig {
        seed: 7,
        fail_rate: 0.1,
        ambiguous_rate: 0.1,
        rate_limit: Some(30),
        ..Default::default()
    };
    let opening = config.wallets.clone();
    let sb = Sandbox::start(config);
    let w = Work::new();
    // One row is the magic account whose first execute is carried out and
    // then answered 503, so an ambiguous execute happens whatever the
    // random draws (10 % of 30 executes miss them about 4 % of the time).
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &payroll(30, accounts));
    // `resend` is opt-in (the default is `hold`): one re-send per payout
    // per run; what stays unknown is settled by `reconcile --resend`.
    let out = w.run(
        &file,
        &sb.base_url(),
        &[
            "--rate",
            "400",
            "--concurrency",
            "16",
            "--ambiguous",
            "resend",
            "--resend-delay-ms",
            "0",
        ],
    );
    assert!(matches!(code(&out), 0 | 3), "{}", text(&out));
    w.settle_by_resend(&sb.base_url());
    let ledger = sb.ledger();
    check_books(
        &payroll_rows(&file),
        &opening,
        &ledger,
        &w.report_rows(),
        Policy::Resend,
        "faults",
    );
    // Every kind of fault really happened: 429s, and more requests than
    // the 60 of a clean run.
    assert!(ledger.requests.rate_limited > 0, "{:?}", ledger.requests);
    assert!(ledger.requests.total > 60, "{:?}", ledger.requests);
    // Some execute was answered ambiguously and re-sent (same id).
    assert!(
        ledger.transactions.iter().any(|t| t.execute_calls > 1),
        "no ambiguous execute was re-sent"
    );
}

#[test]
fn ambiguous_execute_is_resent_and_recorded_executed_or_held_as_unknown() {
    // Magic accounts: executed and debited, then answered 503 / cut off.
    let accounts = |i: usize| match i {
        0 => "CI000000000503".to_string(),
        1 => "CI000000000504".to_string(),
        _ => account(i),
    };
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(4, accounts));
    // `resend` is opt-in now (the default is `hold`).
    let out = w.run(
        &file,
        &sb.base_url(),
        &[
            "--rate",
            "200",
            "--ambiguous",
            "resend",
            "--resend-delay-ms",
            "0",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    for t in &ledger.transactions {
        assert_eq!(t.debits, 1, "{t:?}");
    }
    let rows = w.report_rows();
    assert_eq!(col(&rows, 0, "state"), "executed");
    assert_eq!(col(&rows, 1, "state"), "executed");
    assert_eq!(col(&rows, 0, "attempts"), "3");

    // Under `hold`, the same answers park the payouts as unknown.
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let file = w.write("payroll.csv", &payroll(4, accounts));
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--rate", "200", "--ambiguous", "hold"],
    );
    assert_eq!(code(&out), 3, "{}", text(&out));
    let rows = w.report_rows();
    assert_eq!(col(&rows, 0, "state"), "unknown");
    assert_eq!(col(&rows, 1, "state"), "unknown");
    assert_eq!(col(&rows, 2, "state"), "executed");
    // Held, not re-sent: one execute each, paid once.
    for i in 0..2 {
        let t = sb.ledger().get(&col(&rows, i, "transaction_id")).cloned();
        let t = t.unwrap();
        assert_eq!((t.execute_calls, t.debits), (1, 1), "{t:?}");
    }

    // reconcile lists them, then resend settles them as executed.
    let reconcile = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
            .env("PAYRUN_API_KEY", KEY)
            .arg("reconcile")
            .arg("--db")
            .arg(w.db())
            .args(args)
            .output()
            .unwrap()
    };
    let out = reconcile(&[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        listed.contains(&col(&rows, 0, "transaction_id")),
        "{listed}"
    );
    let out = reconcile(&["--resend", "--base-url", &sb.base_url()]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = reconcile(&[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    for t in &sb.ledger().transactions {
        assert_eq!(t.debits, 1, "{t:?}");
    }
}

#[test]
fn reconcile_mark_records_the_operator_decision_in_the_report() {
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let file = w.write("payroll.csv", &payroll(2, accounts));
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let tx = col(&w.report_rows(), 0, "transaction_id");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
            .args(args)
            .output()
            .unwrap()
    };
    let db = w.db().display().to_string();
    // A reason is required.
    let out = run(&["reconcile", "--db", &db, "--mark", "executed", &tx]);
    assert_ne!(code(&out), 0);
    let out = run(&[
        "reconcile",
        "--db",
        &db,
        "--mark",
        "executed",
        &tx,
        "--reason",
        "statement 2026-11 line 42",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let report = w.path("again.csv").display().to_string();
    let out = run(&["report", "--db", &db, "--out", &report]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let rows = read_csv(std::path::Path::new(&report));
    assert_eq!(col(&rows, 0, "state"), "executed");
    assert_eq!(col(&rows, 0, "provider_code"), "OPERATOR_MARKED_EXECUTED");
    assert_eq!(
        col(&rows, 0, "provider_message"),
        "statement 2026-11 line 42"
    );
    // The audit trail records the decision with its reason.
    let out = run(&["reconcile", "--db", &db, "--audit"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let audit = String::from_utf8_lossy(&out.stdout);
    assert!(
        audit.contains(&tx) && audit.contains("mark,unknown,executed,statement 2026-11 line 42"),
        "{audit}"
    );
    // Marking a payout that is not unknown is refused.
    let out = run(&[
        "reconcile",
        "--db",
        &db,
        "--mark",
        "failed",
        &tx,
        "--reason",
        "oops",
    ]);
    assert_eq!(code(&out), 1, "{}", text(&out));
}

#[test]
fn business_failures_are_reported_with_the_provider_code() {
    let accounts = |i: usize| match i {
        0 => "GH000000000404".to_string(),
        1 => "GH000000000429".to_string(),
        2 => "GH000000000422".to_string(),
        _ => account(i),
    };
    let mut wallets = SandboxConfig::default().wallets;
    wallets.remove("NGN"); // payroll row index 3 is NGN: no wallet
    let sb = Sandbox::start(SandboxConfig {
        wallets,
        ..Default::default()
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(6, accounts));
    let out = w.run(&file, &sb.base_url(), &["--rate", "200"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let rows = w.report_rows();
    let expect = [
        ("execute_failed", "RECIPIENT_NOT_FOUND"),
        ("execute_failed", "LIMIT_EXCEEDED"),
        ("initiate_failed", "INVALID_ACCOUNT"),
        ("initiate_failed", "CURRENCY_WALLET_MISMATCH"),
        ("executed", ""),
        ("executed", ""),
    ];
    for (i, (state, code)) in expect.iter().enumerate() {
        assert_eq!(col(&rows, i, "state"), *state, "row {i}");
        if !code.is_empty() {
            assert_eq!(col(&rows, i, "provider_code"), *code, "row {i}");
            assert!(!col(&rows, i, "provider_message").is_empty());
        }
    }
    // The report tells the ledger's truth: paid rows debited once, failed
    // rows never.
    let ledger = sb.ledger();
    for i in 0..rows.len() {
        let tx = col(&rows, i, "transaction_id");
        let debits = ledger.get(&tx).map_or(0, |t| t.debits);
        let paid = col(&rows, i, "state") == "executed";
        assert_eq!(debits, u32::from(paid), "row {i}: {:?}", ledger.get(&tx));
    }
}

#[test]
fn insufficient_balance_stops_executions_in_that_currency_only() {
    let mut wallets = SandboxConfig::default().wallets;
    wallets.insert("XOF".into(), Decimal::from(2500));
    let sb = Sandbox::start(SandboxConfig {
        wallets,
        ..Default::default()
    });
    let w = Work::new();
    // One payout at a time, in file order. The XOF wallet (2500) pays the
    // first two XOF rows; the third (1000 > 500 left) fails. The XOF rows
    // after it (100 and 200) would fit in what is left, so only the halt
    // keeps them from being paid; the GHS rows after it are paid.
    let file = w.write(
        "payroll.csv",
        &format!(
            "{HEADER}\n\
             2250700000001,1000,XOF,momo,A,Ama,Mensah\n\
             2250700000002,1000,GHS,momo,B,Ama,Mensah\n\
             2250700000003,1000,XOF,momo,C,Ama,Mensah\n\
             2250700000004,1000,XOF,momo,D,Ama,Mensah\n\
             2250700000005,1000,GHS,momo,E,Ama,Mensah\n\
             2250700000006,100,XOF,momo,F,Ama,Mensah\n\
             2250700000007,200,XOF,momo,G,Ama,Mensah\n\
             2250700000008,1000,GHS,momo,H,Ama,Mensah\n"
        ),
    );
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--rate", "200", "--concurrency", "1"],
    );
    assert_eq!(code(&out), 3, "{}", text(&out));
    let rows = w.report_rows();
    let ledger = sb.ledger();
    let state = |i: usize| col(&rows, i, "state");
    let entry = |i: usize| ledger.get(&col(&rows, i, "transaction_id")).cloned();
    assert_eq!(
        [state(0), state(2), state(3)],
        ["executed", "executed", "execute_failed"]
    );
    assert_eq!(col(&rows, 3, "provider_code"), "INSUFFICIENT_BALANCE");
    // The XOF rows after the failure: not executed, nothing sent to execute
    // them, and the report does not call them failed (a top-up and a
    // re-run pays them).
    for i in [5, 6] {
        assert_ne!(state(i), "executed", "row {i}");
        assert!(!state(i).ends_with("failed"), "row {i}: {}", state(i));
        let executes = entry(i).map_or(0, |t| t.execute_calls);
        assert_eq!(executes, 0, "row {i}: {:?}", entry(i));
    }
    // Other currencies go on, before and after the failure.
    for i in [1, 4, 7] {
        assert_eq!(state(i), "executed", "row {i}");
        assert_eq!(entry(i).unwrap().debits, 1, "row {i}");
    }
    assert_eq!(ledger.wallets["XOF"], Decimal::from(500));
}

#[test]
fn wrong_key_stops_at_once_and_never_leaks_the_key() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(200, account));
    let out = w
        .run_cmd(
            &file,
            &sb.base_url(),
            &["--rate", "1000", "--concurrency", "4"],
        )
        .env("PAYRUN_API_KEY", "sk_wrong_secret_123")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    let all = text(&out);
    assert!(all.contains("API key"), "{all}");
    assert!(!all.contains("sk_wrong_secret_123"), "{all}");
    // Stopped at once: at most one round of requests in flight, not 200.
    assert!(
        sb.ledger().requests.total <= 8,
        "{:?}",
        sb.ledger().requests
    );
    let db = std::fs::read(w.db()).unwrap();
    assert!(!String::from_utf8_lossy(&db).contains("sk_wrong_secret_123"));
    // With the right key the same command resumes and pays everyone.
    let out = w.run(&file, &sb.base_url(), &["--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 200);
    assert!(sb.ledger().transactions.iter().all(|t| t.debits == 1));
}

#[test]
fn initiate_only_then_run_executes() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(10, account));
    let out = w.run(&file, &sb.base_url(), &["--initiate-only", "--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 10);
    assert!(
        ledger
            .transactions
            .iter()
            .all(|t| t.status == "INITIATED" && t.debits == 0)
    );
    assert_eq!(ledger.requests.executes, 0);
    let rows = w.report_rows();
    assert!((0..10).all(|i| col(&rows, i, "state") == "initiated"));

    let out = w.run(&file, &sb.base_url(), &["--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.requests.initiates, 10, "no second initiation");
    assert!(
        ledger
            .transactions
            .iter()
            .all(|t| t.status == "SUCCESS" && t.debits == 1)
    );
}

#[test]
fn finished_run_rerun_makes_no_calls_and_rewrites_the_report() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(8, account));
    let out = w.run(&file, &sb.base_url(), &["--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let before = sb.ledger().requests.total;
    std::fs::remove_file(w.report()).unwrap();
    let out = w.run(&file, &sb.base_url(), &["--rate", "500"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().requests.total, before);
    assert_eq!(w.report_rows().len(), 8);

    // status shows the run as finished with its totals.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args(["status", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("finished") && s.contains("executed 8"), "{s}");
}

#[test]
fn invalid_rows_send_nothing_and_write_rejected_csv() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let mut text_ = payroll(5, account);
    text_.push_str("2250799999999,12abc,XOF,momo,Bad,Ama,Mensah\n");
    let file = w.write("payroll.csv", &text_);
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert_eq!(sb.ledger().requests.total, 0);
    let rejected = read_csv(&w.path("rejected.csv"));
    assert_eq!(rejected.len(), 1);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("row 7"),
        "{}",
        text(&out)
    );
}

#[test]
fn transaction_ids_used_by_another_run_are_refused() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let a = w.write(
        "a.csv",
        &format!("transaction_id,{HEADER}\nT-1,2250700000001,1000,XOF,momo,May,Ama,Mensah\n"),
    );
    let b = w.write(
        "b.csv",
        &format!("transaction_id,{HEADER}\nT-1,2250700000002,2000,XOF,momo,June,Kofi,Annan\n"),
    );
    assert_eq!(code(&w.run(&a, &sb.base_url(), &[])), 0);
    let out = w.run(&b, &sb.base_url(), &[]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("T-1") && err.contains("already used"), "{err}");
    assert_eq!(sb.ledger().transactions.len(), 1);
}

/// Changed for issue 11: a label is a batch reference (part of every
/// derived id), and paying the same rows again under another label within
/// the repeat window is now refused until a human allows it.
#[test]
fn same_file_with_a_label_is_a_separate_batch_refused_as_a_repeat_until_allowed() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, account));
    assert_eq!(code(&w.run(&file, &sb.base_url(), &[])), 0);
    let out = w.run(&file, &sb.base_url(), &["--label", "bonus"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3);
    assert_eq!(
        code(&w.run(
            &file,
            &sb.base_url(),
            &["--label", "bonus", "--allow-repeats"]
        )),
        0
    );
    assert_eq!(sb.ledger().transactions.len(), 6);
}

#[test]
fn built_in_sandbox_quick_start_works() {
    let w = Work::new();
    w.write("payroll.csv", &payroll(5, account));
    // The default database is in the per-user data folder (issue 11),
    // here a temporary one.
    let data = w.path("data");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env_remove("PAYRUN_API_KEY")
        .env("XDG_DATA_HOME", &data)
        .env("HOME", &data)
        .args(["run", "payroll.csv", "--sandbox", "--rate", "200"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(data.join("payrun/payrun-sandbox.db").exists());
    assert!(!data.join("payrun/payrun.db").exists());
    assert!(!w.path("payrun.db").exists() && !w.path("payrun-sandbox.db").exists());
    assert_eq!(read_csv(&w.path("report.csv")).len(), 5);
}

#[test]
fn unreachable_provider_stops_the_run_resumably_without_failing_rows() {
    // A port with nothing listening: every request is refused (never sent).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let base_url = format!("http://127.0.0.1:{port}");
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, account));
    let out = w.run(&file, &base_url, &["--concurrency", "1"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not accepting requests"),
        "{}",
        text(&out)
    );
    let rows = w.report_rows();
    assert!(
        (0..3).all(|i| col(&rows, i, "state") == "pending"),
        "{rows:?}"
    );

    // The provider comes back on the same address: the same command resumes.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))
        .unwrap();
    let server = rt.spawn(payrun::sandbox::serve(
        listener,
        SandboxConfig::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let out = w.run(&file, &base_url, &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let _ = stop.send(());
    rt.block_on(server).unwrap().unwrap();
}

#[test]
fn import_only_needs_no_key_and_sends_nothing() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(4, account));
    let out = w
        .run_cmd(&file, &sb.base_url(), &["--import-only"])
        .env_remove("PAYRUN_API_KEY")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().requests.total, 0);
    // No rejected rows: no rejected.csv to mislead anyone.
    assert!(!w.path("rejected.csv").exists());
    // The same command without --import-only pays the recorded run.
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(sb.ledger().transactions.iter().all(|t| t.debits == 1));
}

/// A zero-padded account number cell (`0000000000` format, LibreOffice's
/// `numeric-ids.xlsx`) is paid to the account the sheet shows, with its
/// leading zero, not to the number's digits.
#[test]
fn zero_padded_account_is_paid_as_shown() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.path("paie.xlsx");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/numeric-ids.xlsx");
    std::fs::copy(fixture, &file).unwrap();
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let rows = read_csv(&w.report());
    assert_eq!(col(&rows, 0, "account_id"), "0701020304");
    assert_eq!(col(&rows, 1, "account_id"), "2250505112233");
}

/// An .xls workbook, whose hidden rows payrun cannot see (row 3 of the
/// fixture is hidden), is not paid unless the user says none is hidden.
#[test]
fn xls_workbook_is_not_paid_without_assume_no_hidden_rows() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.write("payrun.toml", "default_payout_method_id = \"momo\"\n");
    let file = w.path("paie.xls");
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hidden-row.xls");
    std::fs::copy(fixture, &file).unwrap();
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("--assume-no-hidden-rows"),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.total, 0);
    let out = w.run(&file, &sb.base_url(), &["--assume-no-hidden-rows"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3);
}

#[test]
fn a_usage_error_exits_1_not_2() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args(["run", "--no-such-flag"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
}

/// Changed for issue 11: rows are recognised by their payout, not by the
/// file's name. An edited copy of an unfinished run is still refused (its
/// rows are open in that run); `--new-run` now leaves those rows to that
/// run and pays only the edited one, instead of paying every row again
/// under new ids — and since issue 28 only with `--allow-repeats`, as its
/// person is already being paid in the period.
#[test]
fn an_edited_copy_of_an_unfinished_run_is_refused() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let original = payroll(6, account);
    let file = w.write("payroll.csv", &original);
    // Initiated, not yet executed: the run is unfinished.
    let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    // The file is edited (one amount changed) and run again.
    w.write("payroll.csv", &original.replacen(",1003,", ",1300,", 1));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run 1") && err.contains("--new-run"), "{err}");
    assert_eq!(sb.ledger().requests.executes, 0, "nothing paid");
    assert_eq!(sb.ledger().transactions.len(), 6, "nothing initiated again");
    // The operator goes ahead: only the edited row is new, but its person
    // is being paid in this period by run 1 (issue 28): a changed amount
    // is not a second payment unless the operator says so.
    let out = w.run(&file, &sb.base_url(), &["--new-run"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("row 5") && err.contains("is already being paid 1003 NGN"),
        "{err}"
    );
    assert_eq!(sb.ledger().transactions.len(), 6, "nothing initiated");
    let out = w.run(&file, &sb.base_url(), &["--new-run", "--allow-repeats"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 7);
    // The original file still resumes its own run.
    w.write("payroll.csv", &original);
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
    let accounts: std::collections::BTreeSet<&str> = ledger
        .transactions
        .iter()
        .map(|t| t.account_id.as_str())
        .collect();
    assert_eq!(accounts.len(), 6, "the unchanged rows were paid once");
}
