//! End-to-end: execute answers that contradict themselves or belong to
//! another payout, from a small fake provider that writes every byte of
//! them. Each ends `unknown` (under `ambiguous = hold`, the default),
//! exit 3, nothing reported executed, the input files unchanged; and
//! `reconcile --resend` refuses to send them again.

mod common;
#[path = "common/fake.rs"]
mod fake;

use common::*;
use fake::{Fake, Initiated};
use sha2::Digest;
use std::path::Path;
use std::process::Command;

fn sha256(path: &Path) -> String {
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// An answer's `data` for the payout, with `extra` written raw after it
/// (so a key can be given twice).
fn data(p: &Initiated, status: &str, extra: &str) -> String {
    format!(
        r#"{{"transactionId":"{}","amount":"{}","currency":"{}","accountId":"{}","status":"{status}"{extra}}}"#,
        p.transaction_id, p.amount, p.currency, p.account
    )
}

/// Runs a two-row payroll against a fake provider answering `/executes`
/// with `answer`; checks the run ends as the bars say and returns the
/// report's provider codes and messages. `resend_refused`: the answer
/// does not belong to the payout (or contradicts itself), so `reconcile
/// --resend` must not send it again; otherwise (an answer merely not
/// understood) the re-send is the operator's to ask, and stays unknown.
fn run_against(answer: fn(&Initiated) -> String, resend_refused: bool) -> Vec<(String, String)> {
    let fake = Fake::start(move |p| (200, answer(p)));
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    let config = w.write("payrun.toml", "ambiguous = \"hold\"\n");
    let before = [sha256(&file), sha256(&config)];
    let out = w.run(&file, &fake.base_url(), &["--config", "payrun.toml"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!([sha256(&file), sha256(&config)], before);
    assert_eq!(fake.executes(), 2, "one execute per payout, never re-sent");
    let rows = w.report_rows();
    assert_eq!(rows.len(), 2);
    let mut codes = Vec::new();
    for i in 0..rows.len() {
        assert_eq!(col(&rows, i, "state"), "unknown", "{:?}", rows[i]);
        assert_eq!(col(&rows, i, "executed_at"), "");
        codes.push((
            col(&rows, i, "provider_code"),
            col(&rows, i, "provider_message"),
        ));
    }
    // The summary and the status agree: nothing executed.
    let summary = read_csv(&w.path("report.csv.summary.csv"));
    assert_eq!(summary.len(), 2, "{summary:?}");
    assert!(summary.iter().all(|l| &l[1] == "unknown"), "{summary:?}");
    let resent = w.reconcile_resend(&fake.base_url());
    let executes = if resend_refused { 2 } else { 4 };
    assert_eq!(fake.executes(), executes, "{}", text(&resent));
    assert_eq!(code(&resent), 3, "{}", text(&resent));
    let rows = w.report_rows();
    assert!((0..2).all(|i| col(&rows, i, "state") == "unknown"));
    codes
}

fn all_have(codes: &[(String, String)], code: &str, in_message: &str) {
    for (c, m) in codes {
        assert_eq!(c, code, "{m}");
        assert!(m.contains(in_message), "{m}");
    }
}

#[test]
fn a_status_given_twice_is_unknown() {
    let codes = run_against(
        |p| {
            format!(
                r#"{{"status":"success","code":"SUCCESS","data":{}}}"#,
                data(p, "FAILED", r#","status":"SUCCESS""#)
            )
        },
        true,
    );
    all_have(&codes, "DUPLICATE_KEY", "/data/status twice");
}

#[test]
fn two_data_objects_are_unknown() {
    let codes = run_against(
        |p| {
            format!(
                r#"{{"status":"success","code":"SUCCESS","data":{},"data":{}}}"#,
                data(p, "FAILED", ""),
                data(p, "SUCCESS", "")
            )
        },
        true,
    );
    all_have(&codes, "DUPLICATE_KEY", "/data twice");
}

#[test]
fn a_code_given_twice_is_unknown() {
    let codes = run_against(
        |_| r#"{"status":"success","code":"FAILED","code":"SUCCESS"}"#.into(),
        true,
    );
    all_have(&codes, "DUPLICATE_KEY", "/code twice");
}

#[test]
fn an_execute_echoing_another_amount_is_unknown() {
    let codes = run_against(
        |p| {
            let other = Initiated {
                amount: "999999".into(),
                ..p.clone()
            };
            format!(
                r#"{{"status":"success","code":"SUCCESS","data":{}}}"#,
                data(&other, "SUCCESS", "")
            )
        },
        true,
    );
    all_have(&codes, "ECHO_MISMATCH", "answered \"999999\"");
}

#[test]
fn an_execute_echoing_another_account_is_unknown() {
    let codes = run_against(
        |p| {
            let other = Initiated {
                account: "2250799999999".into(),
                ..p.clone()
            };
            format!(
                r#"{{"status":"success","code":"SUCCESS","data":{}}}"#,
                data(&other, "SUCCESS", "")
            )
        },
        true,
    );
    all_have(&codes, "ECHO_MISMATCH", "account sent");
}

#[test]
fn a_status_that_only_folds_to_success_is_unknown() {
    let codes = run_against(
        |p| {
            format!(
                r#"{{"status":"success","code":"OK","data":{}}}"#,
                data(p, "\u{17f}uccess", "")
            )
        },
        false,
    );
    all_have(&codes, "AMBIGUOUS", "matches no rule");
}

/// The answers that pass every check are paid: the fake is read as the
/// sandbox is (a control for the tests above).
#[test]
fn the_same_answers_about_the_payout_are_paid() {
    let fake = Fake::start(|p| {
        (
            200,
            format!(
                r#"{{"status":"success","code":"SUCCESS","data":{}}}"#,
                data(p, "success", "")
            ),
        )
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    let out = w.run(&file, &fake.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let rows = w.report_rows();
    assert!((0..2).all(|i| col(&rows, i, "state") == "executed"));
    // `payrun status` agrees.
    let status = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("XDG_DATA_HOME", w.path("data"))
        .args(["status", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    assert_eq!(code(&status), 0, "{}", text(&status));
}

/// A re-send answered by an answer about another payout records it: the
/// next `reconcile --resend` refuses, and nothing more is sent.
#[test]
fn a_resend_answered_about_another_payout_is_not_sent_again() {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let fake = Fake::start(move |p| {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return (503, r#"{"status":"error","code":"BUSY"}"#.into());
        }
        let other = Initiated {
            amount: "999999".into(),
            ..p.clone()
        };
        (
            200,
            format!(
                r#"{{"status":"success","code":"SUCCESS","data":{}}}"#,
                data(&other, "SUCCESS", "")
            ),
        )
    });
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(1, account));
    let out = w.run(&file, &fake.base_url(), &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(col(&w.report_rows(), 0, "provider_code"), "AMBIGUOUS");
    let resent = w.reconcile_resend(&fake.base_url());
    assert_eq!(code(&resent), 3, "{}", text(&resent));
    assert_eq!(fake.executes(), 2);
    let rows = w.report_rows();
    assert_eq!(col(&rows, 0, "state"), "unknown");
    assert_eq!(col(&rows, 0, "provider_code"), "ECHO_MISMATCH");
    let again = w.reconcile_resend(&fake.base_url());
    assert_eq!(code(&again), 3, "{}", text(&again));
    assert!(text(&again).contains("did not belong"), "{}", text(&again));
    assert_eq!(fake.executes(), 2, "never sent again");
}
