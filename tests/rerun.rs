//! Running a file again (docs/rerun.md): every beneficiary row is paid at
//! most once, checked on the sandbox's ledger by (account, amount,
//! currency) — not only per transaction id — through corrected copies,
//! cosmetic re-saves, copies run from another folder, identical rows,
//! new periods, repeats within the window, and worksheets.

mod common;

use common::*;
use payrun::sandbox::{LedgerSnapshot, SandboxConfig};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Row index 1 (GHS) goes to the sandbox's magic account whose execute
/// fails with RECIPIENT_NOT_FOUND.
fn failing(i: usize) -> String {
    if i == 1 {
        "GH000000000404".to_string()
    } else {
        account(i)
    }
}

/// Successful debits per (account, amount, currency).
fn paid(ledger: &LedgerSnapshot) -> BTreeMap<(String, String, String), u32> {
    let mut out = BTreeMap::new();
    for t in &ledger.transactions {
        if t.debits > 0 {
            *out.entry((
                t.account_id.clone(),
                t.amount.to_string(),
                t.currency.clone(),
            ))
            .or_default() += t.debits;
        }
    }
    out
}

/// The invariant: each beneficiary row paid at most once.
fn assert_each_paid_at_most_once(ledger: &LedgerSnapshot) {
    for (key, n) in paid(ledger) {
        assert_eq!(n, 1, "{key:?} paid {n} times");
    }
}

fn states(w: &Work) -> Vec<String> {
    let rows = w.report_rows();
    (0..rows.len()).map(|i| col(&rows, i, "state")).collect()
}

#[test]
fn a_corrected_copy_after_a_run_with_a_failed_row_pays_only_that_row() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let original = payroll(5, failing);
    let file = w.write("payroll.csv", &original);
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 5);

    // failed.csv beside the report: the failed row, the input's columns,
    // the failed payout's transaction id, and the reason.
    let failed = read_csv(&w.path("failed.csv"));
    assert_eq!(failed.len(), 1);
    assert_eq!(&failed[0][0], "GH000000000404");
    assert_eq!(&failed[0][7], col(&w.report_rows(), 1, "transaction_id"));
    assert!(
        failed[0][8].contains("RECIPIENT_NOT_FOUND"),
        "{:?}",
        failed[0]
    );

    // The clerk fixes the account and a surname in a renamed copy.
    let corrected = original
        .replace("GH000000000404", "GH000000000777")
        .replace("Mensah3", "Mensah-Owusu");
    let copy = w.write("payroll (1).csv", &corrected);
    let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 6, "one new payout only");
    assert_each_paid_at_most_once(&ledger);
    let rows = w.report_rows();
    assert_eq!(
        states(&w),
        ["skipped", "executed", "skipped", "skipped", "skipped"]
    );
    // Each skipped row names the run and row that paid it.
    assert_eq!(col(&rows, 0, "provider_code"), "ALREADY_EXECUTED");
    assert!(
        col(&rows, 3, "provider_message").contains("run 1")
            && col(&rows, 3, "provider_message").contains("row 5"),
        "{rows:?}"
    );
    assert!(!w.path("failed.csv").exists(), "no failure left");
}

#[test]
fn failed_csv_run_as_it_is_retries_only_its_rows_under_a_linked_id() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(4, failing));
    assert_eq!(
        code(&w.run(&file, &sb.base_url(), &["--period", "2026-11"])),
        3
    );
    let first_id = sb
        .ledger()
        .transactions
        .iter()
        .find(|t| t.account_id == "GH000000000404")
        .unwrap()
        .transaction_id
        .clone();
    let failed = w.path("failed.csv");
    let retry = w.write("retry.csv", &std::fs::read_to_string(&failed).unwrap());
    let out = w.run(&retry, &sb.base_url(), &["--period", "2026-11"]);
    // The magic account fails again, but only that row was sent.
    assert_eq!(code(&out), 3, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 5);
    let new = &ledger.transactions[4];
    assert_eq!(new.transaction_id, format!("{first_id}-r2"));
    assert_eq!(new.account_id, "GH000000000404");
    assert_each_paid_at_most_once(&ledger);
}

#[test]
fn cosmetic_resaves_renames_reorders_and_workbooks_pay_nobody_again() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let original = payroll(6, account);
    let file = w.write("payroll.csv", &original);
    assert_eq!(code(&w.run(&file, &sb.base_url(), &[])), 0);
    let n = sb.ledger().transactions.len();
    assert_eq!(n, 6);

    // BOM and CRLF, renamed.
    let resaved = format!("\u{feff}{}", original.replace('\n', "\r\n"));
    let f = w.write("payroll (1).csv", &resaved);
    let out = w.run(&f, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        states(&w).iter().all(|s| s == "skipped"),
        "{:?}",
        states(&w)
    );

    // Rows reordered, with a trailing amount zero (1000.00 is 1000).
    let mut lines: Vec<&str> = original.lines().collect();
    lines[1..].reverse();
    let reordered = lines.join("\n").replace(",1001,", ",1001.00,");
    let f = w.write("reordered.csv", &reordered);
    let out = w.run(&f, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));

    // The same rows saved as a workbook.
    let xlsx = w.path("payroll.xlsx");
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    for (r, line) in original.lines().enumerate() {
        for (c, cell) in line.split(',').enumerate() {
            sheet.write_string(r as u32, c as u16, cell).unwrap();
        }
    }
    book.save(&xlsx).unwrap();
    let out = w.run(&xlsx, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        states(&w).iter().all(|s| s == "skipped"),
        "{:?}",
        states(&w)
    );

    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), n, "nothing initiated again");
    assert_each_paid_at_most_once(&ledger);
}

#[test]
fn a_resaved_copy_of_an_unfinished_run_resumes_it() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let original = payroll(4, account);
    let file = w.write("payroll.csv", &original);
    let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let copy = w.write("copy.csv", &original.replace('\n', "\r\n"));
    let out = w.run(&copy, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 4);
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
}

/// `payrun` with no `--db`: the data folder comes from XDG_DATA_HOME, a
/// temporary folder (never the real home).
fn bare(dir: &Path, data: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
    cmd.current_dir(dir)
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", data)
        .env("HOME", data)
        .env_remove("RUST_LOG")
        .args(args);
    cmd
}

#[test]
fn a_copy_run_from_another_folder_meets_the_same_history() {
    let sb = Sandbox::start(SandboxConfig::default());
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let text_ = payroll(3, account);
    std::fs::write(a.join("payroll.csv"), &text_).unwrap();
    std::fs::write(b.join("payroll.csv"), &text_).unwrap();
    let url = sb.base_url();
    let run = ["run", "payroll.csv", "--base-url", &url, "--quiet"];
    let out = bare(&a, &data, &run).output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(data.join("payrun/payrun.db").exists());
    assert!(!a.join("payrun.db").exists());
    let out = bare(&b, &data, &run).output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3, "not paid again");
    assert_each_paid_at_most_once(&sb.ledger());
    // status says where the history is.
    let out = bare(&b, &data, &["status"]).output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains(&data.join("payrun/payrun.db").display().to_string()),
        "{s}"
    );

    // The built-in sandbox keeps its own database there too.
    let out = bare(&a, &data, &["run", "payroll.csv", "--sandbox", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(data.join("payrun/payrun-sandbox.db").exists());
}

#[test]
fn identical_rows_in_a_file_are_flagged_then_paid_once_each_when_allowed() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let twice = format!(
        "{HEADER}\n2250700000001,5000,XOF,momo,Bonus,Ama,Mensah\n2250700000002,7000,XOF,momo,Pay,Kofi,Annan\n2250700000001,5000,XOF,momo,Bonus,Ama,Mensah\n"
    );
    let file = w.write("bonus.csv", &twice);
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("row 4") && err.contains("repeats row 2"),
        "{err}"
    );
    assert_eq!(sb.ledger().requests.total, 0);

    let out = w.run(&file, &sb.base_url(), &["--allow-repeats"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 3);
    let key = (
        "2250700000001".to_string(),
        "5000".to_string(),
        "XOF".to_string(),
    );
    assert_eq!(paid(&ledger)[&key], 2, "two distinct payouts, as allowed");
    // A re-saved copy recognises both occurrences: nothing more is paid.
    let copy = w.write("bonus copy.csv", &twice.replace('\n', "\r\n"));
    let out = w.run(&copy, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3);
}

/// Moves every run of the database, and every change of its payouts,
/// `days` into the past (the repeat window runs from each payout's own
/// last change).
fn age_runs(db: &Path, days: u32) {
    let conn = rusqlite::Connection::open(db).unwrap();
    for (table, column) in [("runs", "created_at"), ("payouts", "updated_at")] {
        conn.execute(
            &format!(
                "UPDATE {table} SET {column} = strftime('%Y-%m-%dT%H:%M:%fZ', {column}, '-{days} days')"
            ),
            [],
        )
        .unwrap();
    }
}

#[test]
fn next_months_identical_payroll_with_a_new_period_is_paid() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(4, account));
    assert_eq!(
        code(&w.run(&file, &sb.base_url(), &["--period", "2026-10"])),
        0
    );
    age_runs(&w.db(), 31);
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 8);
    assert!(paid(&ledger).values().all(|&n| n == 2), "one per month");
    // The same period again is recognised: nothing more.
    let copy = w.write(
        "payroll again.csv",
        &payroll(4, account).replace('\n', "\r\n"),
    );
    let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 8);
}

#[test]
fn the_same_payroll_again_within_the_window_is_refused_then_allowed() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, account));
    assert_eq!(
        code(&w.run(&file, &sb.base_url(), &["--period", "2026-11"])),
        0
    );
    // A new period the same week: new ids, but the same beneficiaries,
    // amounts and currencies as payouts of a few days ago.
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11-b"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("row 2")
            && err.contains(&account(0))
            && err.contains("run 1")
            && err.contains("executed"),
        "{err}"
    );
    assert!(err.contains("--allow-repeats"), "{err}");
    assert_eq!(sb.ledger().transactions.len(), 3, "nothing sent");
    assert_each_paid_at_most_once(&sb.ledger());
    // After a human has looked: allowed.
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--period", "2026-11-b", "--allow-repeats"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 6);
    // Outside the window (config key), the same rows are not repeats.
    age_runs(&w.db(), 3);
    let cfg = w.write("payrun.toml", "repeat_window_days = 2\n");
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--period", "2026-11-c", "--config", cfg.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 9);
}

#[test]
fn the_worksheet_is_part_of_the_identity() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let xlsx = w.path("book.xlsx");
    let mut book = rust_xlsxwriter::Workbook::new();
    for (name, offset) in [("Mars", 0), ("Avril", 100)] {
        let sheet = book.add_worksheet().set_name(name).unwrap();
        for (r, line) in payroll(3, |i| account(i + offset)).lines().enumerate() {
            for (c, cell) in line.split(',').enumerate() {
                sheet.write_string(r as u32, c as u16, cell).unwrap();
            }
        }
    }
    book.save(&xlsx).unwrap();
    let out = w.run(&xlsx, &sb.base_url(), &["--sheet", "Mars"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = w.run(&xlsx, &sb.base_url(), &["--sheet", "Avril"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 6, "April is paid, not 'resumed'");
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
    assert_each_paid_at_most_once(&ledger);
}

#[test]
fn a_named_pipe_is_read_once_and_recognised_like_the_file() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, account));
    let script = format!(
        "exec \"$0\" run <(cat {:?}) --base-url {} --db {:?} --report {:?} --quiet",
        file,
        sb.base_url(),
        w.db(),
        w.report()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3);
    // The file itself is the same payouts: nothing more.
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3);
    assert_each_paid_at_most_once(&sb.ledger());
}

/// A finished run run again makes no call, so it needs no API key: exit 0
/// with its verdict. A run with work left (initiated, not executed) and a
/// new file are refused without the key, naming it, and nothing is sent.
#[test]
fn a_finished_run_needs_no_key_a_run_with_work_left_does() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(3, account));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let keyless = |file: &Path| {
        let mut cmd = w.run_cmd(file, &sb.base_url(), &[]);
        cmd.env_remove("PAYRUN_API_KEY");
        cmd.output().unwrap()
    };
    let out = keyless(&file);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        text(&out).contains("all 3 payout(s) executed; nothing left to do"),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("API key"), "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 3);

    // Work left: initiated only, then run without the key.
    let second = w.write("second.csv", &payroll(2, |i| account(i + 50)));
    let out = w.run(&second, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = keyless(&second);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("PAYRUN_API_KEY"), "{}", text(&out));
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), 5);
    assert_eq!(
        ledger.transactions.iter().filter(|t| t.debits == 1).count(),
        3,
        "nothing executed without the key"
    );
    // A new file: refused before it is recorded.
    let third = w.write("third.csv", &payroll(1, |i| account(i + 90)));
    let out = keyless(&third);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("PAYRUN_API_KEY"), "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 5);
}
