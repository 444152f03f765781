//! Four eyes (issue 34): with `require_approval = true`, nothing is
//! executed until someone other than the run's preparer approves the
//! initiated payouts, and an approval covers exactly what was approved.
//! Against the sandbox in its non-idempotent mode (a second execute
//! really pays twice), checked on its ledger: the preparer cannot approve
//! their own run; a change after approval voids it, naming the change; a
//! crash between approval and execution keeps it; `--initiate-only` never
//! executes even when approved; on PostgreSQL a worker waits for an
//! approval recorded from another desk; the approval page says where the
//! approval stands (in headless chromium when installed).

mod common;

use common::browser::check_in_chromium;
use common::*;
use payrun::sandbox::SandboxConfig;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

fn non_idempotent() -> Sandbox {
    Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ..SandboxConfig::default()
    })
}

/// A folder whose payrun.toml requires approvals, with a payroll of `n`.
fn four_eyes(n: usize) -> (Work, std::path::PathBuf) {
    let w = Work::new();
    w.write("payrun.toml", "require_approval = true\n");
    let file = w.write("payroll.csv", &payroll(n, account));
    (w, file)
}

/// `payrun run` as OS user `user`.
fn run_as(w: &Work, user: &str, file: &std::path::Path, url: &str, extra: &[&str]) -> Output {
    w.run_cmd(file, url, extra)
        .env("USER", user)
        .output()
        .unwrap()
}

/// Any other payrun command on the test database, as OS user `user`,
/// with no terminal on stdin.
fn payrun_as(w: &Work, user: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("XDG_DATA_HOME", w.path("data"))
        .env("USER", user)
        .env_remove("RUST_LOG")
        .env_remove("PAYRUN_FAULT")
        .args(args)
        .arg("--db")
        .arg(w.db())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn debits(sb: &Sandbox) -> u32 {
    sb.ledger().transactions.iter().map(|t| t.debits).sum()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_preparer_cannot_approve_their_own_run() {
    let sb = non_idempotent();
    let (w, file) = four_eyes(6);
    let url = sb.base_url();
    let out = run_as(&w, "ama", &file, &url, &["--initiate-only", "--as", "Ama"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let page = std::fs::read_to_string(w.path("approval-run-1.html")).unwrap();
    assert!(page.contains("NOT YET APPROVED"), "{page}");
    assert!(page.contains("Ama (ama@"), "the preparer is on the page");
    // Not approved: the execute step refuses, sends nothing, says what to do.
    let out = run_as(&w, "ama", &file, &url, &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("nothing was executed"), "{err}");
    assert!(err.contains("payrun approve 1"), "{err}");
    assert!(err.contains("Ama (ama@"), "names the preparer: {err}");
    // The preparer, under their own name or another typed from their
    // own account, is refused; so is their name from another account.
    for (user, name) in [("ama", "Ama"), ("ama", "Kofi"), ("kofi", "ama")] {
        let out = payrun_as(&w, user, &["approve", "1", "--as", name, "--yes"]);
        assert_eq!(code(&out), 1, "{user} as {name}: {}", text(&out));
        assert!(
            stderr(&out).contains("the approver must be someone else"),
            "{}",
            text(&out)
        );
    }
    // Without a terminal to confirm on and without --yes: refused.
    let out = payrun_as(&w, "kofi", &["approve", "1", "--as", "Kofi"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(stderr(&out).contains("--yes"), "{}", text(&out));
    let status = stdout(&payrun_as(&w, "kofi", &["status"]));
    assert!(status.contains("approval: not approved yet"), "{status}");
    assert_eq!(debits(&sb), 0, "nothing paid while unapproved");
    // Kofi approves: the same figures as the page, then recorded.
    let out = payrun_as(&w, "kofi", &["approve", "1", "--as", "Kofi", "--yes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = stdout(&out);
    assert!(shown.contains("prepared by Ama (ama@"), "{shown}");
    assert!(shown.contains("XOF: 1 payout(s), total 1,000"), "{shown}");
    assert!(shown.contains("run 1 approved by Kofi (kofi@"), "{shown}");
    let again = payrun_as(&w, "kofi", &["approve", "1", "--as", "Kofi", "--yes"]);
    assert_eq!(code(&again), 0, "{}", text(&again));
    assert!(
        stdout(&again).contains("approved already"),
        "{}",
        text(&again)
    );
    // The preparer executes: every payout paid exactly once.
    let out = run_as(&w, "ama", &file, &url, &["--log-format", "json"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 6);
    assert!(
        ledger.transactions.iter().all(|t| t.debits == 1),
        "{ledger:?}"
    );
    // Everything shows it: the JSON log, the summary, the audit trail,
    // status and the page.
    let result: serde_json::Value = stderr(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v["type"] == "run_result")
        .unwrap();
    assert_eq!(result["approval"]["state"], "approved", "{result}");
    assert_eq!(result["approval"]["approval"]["by"], "Kofi", "{result}");
    let summary = std::fs::read_to_string(w.path("report.csv.summary.csv")).unwrap();
    assert!(summary.contains("XOF,approved,1,1000"), "{summary}");
    assert!(summary.contains("approved_by Kofi (kofi@"), "{summary}");
    let audit = stdout(&payrun_as(&w, "kofi", &["reconcile", "--audit"]));
    assert!(
        audit.contains(",prepared,,,imported by Ama (ama@"),
        "{audit}"
    );
    assert!(audit.contains(",approved,,,\"by Kofi (kofi@"), "{audit}");
    let status = stdout(&payrun_as(&w, "kofi", &["status"]));
    assert!(
        status.contains("approval: approved by Kofi (kofi@"),
        "{status}"
    );
    let html = w.path("run-1.html");
    let out = payrun_as(
        &w,
        "kofi",
        &["summary", "1", "--html", html.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Approved by Kofi (kofi@"), "{page}");
    check_in_chromium(&html, &["Approved by Kofi", "Prepared by"]);
}

#[test]
fn a_change_after_the_approval_voids_it_and_is_named() {
    let sb = non_idempotent();
    let (w, file) = four_eyes(4);
    let url = sb.base_url();
    let out = run_as(&w, "ama", &file, &url, &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = payrun_as(&w, "kofi", &["approve", "1", "--yes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    // A corrected amount, written into the checkpoint behind payrun's back.
    let db = rusqlite::Connection::open(w.db()).unwrap();
    db.execute("UPDATE payouts SET amount = '1500' WHERE row = 3", [])
        .unwrap();
    let out = run_as(&w, "ama", &file, &url, &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("is void"), "{err}");
    assert!(err.contains("row 3 ("), "{err}");
    assert!(
        err.contains("amount 1001 approved, amount 1500 now"),
        "{err}"
    );
    assert!(
        err.contains("GHS: 1 payout(s) totalling 1001 approved, 1 totalling 1500 now"),
        "{err}"
    );
    assert_eq!(debits(&sb), 0, "nothing executed after the change");
    // Put back, and the approval covers the run again.
    db.execute("UPDATE payouts SET amount = '1001' WHERE row = 3", [])
        .unwrap();
    let status = stdout(&payrun_as(&w, "kofi", &["status"]));
    assert!(status.contains("approval: approved by"), "{status}");
    // Revoked: recorded, and the execute step refuses again.
    let out = payrun_as(
        &w,
        "ama",
        &["approve", "1", "--revoke", "--reason", "wrong month"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = run_as(&w, "ama", &file, &url, &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(stderr(&out).contains("revoked by ama@"), "{}", text(&out));
    assert!(stderr(&out).contains("(wrong month)"), "{}", text(&out));
    assert_eq!(debits(&sb), 0);
    // A cancellation after a new approval voids it too, naming the rows.
    let out = payrun_as(&w, "kofi", &["approve", "1", "--yes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = payrun_as(&w, "ama", &["cancel", "1"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let status = stdout(&payrun_as(&w, "kofi", &["status"]));
    assert!(status.contains("is void"), "{status}");
    assert!(
        status.contains("is cancelled since the approval"),
        "{status}"
    );
    let audit = stdout(&payrun_as(&w, "kofi", &["reconcile", "--audit"]));
    assert_eq!(audit.matches(",approved,,,").count(), 2, "{audit}");
    assert!(audit.contains(",revoked,,,by ama@"), "{audit}");
    assert_eq!(debits(&sb), 0);
}

#[test]
fn a_crash_between_approval_and_execution_keeps_the_approval() {
    let sb = non_idempotent();
    let (w, file) = four_eyes(12);
    let url = sb.base_url();
    let out = run_as(&w, "ama", &file, &url, &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    // The approver's process dies right after the approval is committed.
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("USER", "kofi")
        .env("PAYRUN_FAULT", "after_approval")
        .args(["approve", "1", "--yes", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    assert_ne!(code(&out), 0, "{}", text(&out));
    assert!(
        stderr(&out).contains("fault point after_approval"),
        "{}",
        text(&out)
    );
    // The executing run dies after a few execute intents.
    let out = w
        .run_cmd(&file, &url, &[])
        .env("USER", "ama")
        .env("PAYRUN_FAULT", "after_intent_commit:3")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("fault point after_intent_commit"),
        "{}",
        text(&out)
    );
    // The approval holds across both crashes; the run finishes.
    let out = run_as(&w, "ama", &file, &url, &[]);
    assert!([0, 3].contains(&code(&out)), "{}", text(&out));
    assert!(
        !stderr(&out).contains("nothing was executed"),
        "{}",
        text(&out)
    );
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 12);
    for t in &ledger.transactions {
        assert!(
            t.debits <= 1,
            "{} paid {} times",
            t.transaction_id,
            t.debits
        );
    }
    let rows = w.report_rows();
    for i in 0..rows.len() {
        let state = col(&rows, i, "state");
        let tx = col(&rows, i, "transaction_id");
        let debited = ledger.get(&tx).unwrap().debits;
        match state.as_str() {
            "executed" => assert_eq!(debited, 1, "{tx}"),
            // Held after the crash: at most once, never again.
            "unknown" => assert!(debited <= 1, "{tx}"),
            other => panic!("{tx}: {other}"),
        }
    }
}

#[test]
fn initiate_only_never_executes_even_when_approved() {
    let sb = non_idempotent();
    let (w, file) = four_eyes(5);
    let url = sb.base_url();
    let out = run_as(&w, "ama", &file, &url, &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = payrun_as(&w, "kofi", &["approve", "1", "--as", "Kofi", "--yes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    for _ in 0..2 {
        let out = run_as(&w, "ama", &file, &url, &["--initiate-only"]);
        assert_eq!(code(&out), 0, "{}", text(&out));
    }
    let ledger = sb.ledger();
    assert!(
        ledger.transactions.iter().all(|t| t.execute_calls == 0),
        "{ledger:?}"
    );
    assert_eq!(debits(&sb), 0);
    // The page written by the approved --initiate-only run says so.
    let page = std::fs::read_to_string(w.path("approval-run-1.html")).unwrap();
    assert!(page.contains("Approved by Kofi"), "{page}");
}

#[test]
fn a_file_run_waits_for_the_approval_and_ctrl_c_ends_the_wait() {
    let sb = non_idempotent();
    let (w, file) = four_eyes(3);
    w.write(
        "payrun.toml",
        "require_approval = true\non_unapproved = \"wait\"\n",
    );
    let url = sb.base_url();
    let out = run_as(&w, "ama", &file, &url, &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let (mut waiting, mut err) = wait_for_approval(w.run_cmd(&file, &url, &[]).env("USER", "ama"));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(waiting.id() as i32, libc::SIGINT) };
    let status = waiting.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(rest.contains("nothing was executed"), "{rest}");
    assert_eq!(debits(&sb), 0);
    // Waiting again, while Kofi approves on the same machine: the run
    // sees it (the approver takes no run lock) and pays, once each.
    let (mut waiting, mut err) = wait_for_approval(w.run_cmd(&file, &url, &[]).env("USER", "ama"));
    let out = payrun_as(&w, "kofi", &["approve", "1", "--as", "Kofi", "--yes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let status = waiting.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    let ledger = sb.ledger();
    assert!(
        ledger.transactions.iter().all(|t| t.debits == 1),
        "{ledger:?}"
    );
}

/// Starts `cmd` (a run that will find no approval) and returns once it
/// says it waits, with the rest of its stderr to read.
fn wait_for_approval(
    cmd: &mut Command,
) -> (std::process::Child, BufReader<std::process::ChildStderr>) {
    let mut child = cmd
        .env("PAYRUN_APPROVAL_POLL_MS", "20")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("Waiting for it") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the run ended");
    }
    (child, err)
}

#[test]
fn a_postgres_worker_waits_for_an_approval_given_from_another_desk() {
    let Some(schema) = common::pg::Schema::fresh("approve") else {
        return;
    };
    let db = schema.url();
    let sb = non_idempotent();
    let (w, file) = four_eyes(8);
    let url = sb.base_url();
    let out = w
        .run_cmd_db(&db, &file, &url, &["--initiate-only", "--as", "Ama"])
        .env("USER", "ama")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    // A worker on another machine: no approval yet, so it waits (the
    // default on PostgreSQL) and sends nothing.
    let mut worker = w
        .run_cmd_db(&db, &file, &url, &[])
        .env("USER", "svc-payrun")
        .env("PAYRUN_APPROVAL_POLL_MS", "20")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(worker.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("Waiting for it") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the worker ended");
    }
    assert!(line.contains("Ama (ama@"), "{line}");
    assert_eq!(debits(&sb), 0);
    // The approver, from their own desk (another process, connection and
    // OS account).
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("USER", "kofi")
        .args(["approve", "1", "--as", "Kofi", "--yes", "--db", &db])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let status = worker.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 8);
    assert!(
        ledger.transactions.iter().all(|t| t.debits == 1),
        "{ledger:?}"
    );
    // The approval is in the shared checkpoint for every desk to see.
    let mut c = schema.client();
    let by: String = c
        .query_one("SELECT name FROM approvals WHERE action = 'approved'", &[])
        .unwrap()
        .get(0);
    assert_eq!(by, "Kofi");
}

/// Issue 35: with `language = "fr"`, `approve` lists the run's overrides
/// in French (a totals row, its amount grouped) and a void approval names
/// its reasons in French — in `status` and in the run that refuses — with
/// grouped amounts and no English left.
#[test]
fn overrides_and_a_void_approval_are_said_in_french() {
    let sb = non_idempotent();
    let w = Work::new();
    w.write(
        "payrun.toml",
        "require_approval = true\nlanguage = \"fr\"\n",
    );
    let file = w.write(
        "paie.csv",
        &format!(
            "{HEADER}\n{},95000,XOF,momo,Salaire,Awa,Koné\n{},1500000,XOF,momo,Salaire,Ali,Traoré\n,1595000,XOF,,,TOTAL,\n",
            account(0),
            account(1)
        ),
    );
    let url = sb.base_url();
    let out = run_as(&w, "ama", &file, &url, &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = payrun_as(&w, "kofi", &["approve", "1", "--yes"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let mut printed = text(&out);
    assert!(
        printed.contains(
            "ligne 4\u{a0}: une ligne de totaux (1\u{202f}595\u{202f}000 XOF) prise comme total de contrôle, non payée"
        ),
        "{printed}"
    );
    // Ali's amount changed behind payrun's back: the approval is void.
    let db = rusqlite::Connection::open(w.db()).unwrap();
    db.execute("UPDATE payouts SET amount = '1600000' WHERE row = 3", [])
        .unwrap();
    let status = payrun_as(&w, "kofi", &["status"]);
    printed.push_str(&text(&status));
    let out = run_as(&w, "ama", &file, &url, &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    printed.push_str(&text(&out));
    assert_eq!(debits(&sb), 0, "nothing executed after the change");
    for french in [
        "caduque",
        "montant 1\u{202f}500\u{202f}000 approuvés\u{a0}; montant 1\u{202f}600\u{202f}000 maintenant",
        "XOF\u{a0}: 2 paiement(s) pour 1\u{202f}595\u{202f}000 approuvés, 2 pour 1\u{202f}695\u{202f}000 maintenant",
    ] {
        assert!(
            stdout(&status).contains(french),
            "{french:?} not in status:\n{}",
            text(&status)
        );
        assert!(
            stderr(&out).contains(french),
            "{french:?} not in the run:\n{}",
            text(&out)
        );
    }
    for english in [
        "totals row",
        "control total",
        "since the approval",
        " approved, ",
        " now",
        "totalling",
        "is void",
        "payout(s)",
        "row 3",
    ] {
        assert!(
            !printed.contains(english),
            "English {english:?} in what the clerk read:\n{printed}"
        );
    }
}
