//! End-to-end: no file a command writes is ever one it reads or keeps,
//! nor another of its outputs, nor unwritable — refused before anything is
//! written or sent, every input's SHA-256 unchanged; the approval files of
//! a later run never replace an earlier run's; every CSV payrun writes
//! guards formulas and is read back as written; a rewritten output keeps
//! its mode; the API key file is read as a small regular file.

mod common;

use common::*;
use payrun::sandbox::SandboxConfig;
use sha2::Digest;
use std::path::Path;
use std::process::{Command, Output};

fn sha256(path: &Path) -> String {
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// `payrun ARGS` in `dir`, with the test key.
fn payrun(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(dir)
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .unwrap()
}

/// `payrun run FILE --report REPORT` in the test folder, as `Work::run`.
fn run_to(w: &Work, file: &Path, base_url: &str, report: &str, extra: &[&str]) -> Command {
    w.run_cmd_to(file, base_url, Path::new(report), extra)
}

/// Nothing was sent to the sandbox.
fn nothing_sent(sb: &Sandbox) {
    let r = sb.requests();
    assert_eq!(r.total, 0, "{r:?}");
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn refused(out: &Output, what: &str) {
    assert_eq!(code(out), 1, "{}", text(out));
    let t = text(out);
    assert!(t.contains(what), "{t}");
    assert!(t.contains("(nothing was written)"), "{t}");
}

/// A payroll named `failed.csv` (where the run would write its failed
/// rows) is refused before anything — neither overwritten nor removed, no
/// database made, nothing sent; with the report elsewhere it runs.
#[test]
fn a_payroll_named_failed_csv_is_never_overwritten_nor_removed() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("failed.csv", &payroll(2, account));
    let before = sha256(&file);
    let out = run_to(&w, &file, &sb.base_url(), "report.csv", &[])
        .output()
        .unwrap();
    refused(&out, "refusing to write the failed rows to");
    assert!(text(&out).contains("it is the payroll"), "{}", text(&out));
    assert_eq!(sha256(&file), before);
    assert!(!w.db().exists(), "no database made");
    nothing_sent(&sb);
    std::fs::create_dir(w.path("out")).unwrap();
    let out = run_to(&w, &file, &sb.base_url(), "out/report.csv", &[])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sha256(&file), before, "a clean run removes no payroll");
}

/// A payroll named `rejected.csv` (where the run would write its rejected
/// rows), and a workbook given as its own `--report`: refused before
/// anything, unchanged, nothing sent.
#[test]
fn a_payroll_named_rejected_csv_or_the_report_is_never_overwritten() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let bad = format!("{HEADER}\n+2250700000002,-5,XOF,momo,May,Yao,Kouame\n");
    let file = w.write(
        "rejected.csv",
        &format!("{}{}", payroll(1, account), &bad[HEADER.len() + 1..]),
    );
    let before = sha256(&file);
    let out = run_to(&w, &file, &sb.base_url(), "report.csv", &[])
        .output()
        .unwrap();
    refused(&out, "refusing to write the rejected rows to");
    assert!(text(&out).contains("it is the payroll"), "{}", text(&out));
    assert_eq!(sha256(&file), before);
    let book = w.path("pay.xlsx");
    let mut wb = rust_xlsxwriter::Workbook::new();
    wb.add_worksheet().write_string(0, 0, "account_id").unwrap();
    wb.save(&book).unwrap();
    let before = sha256(&book);
    let out = run_to(&w, &book, &sb.base_url(), "pay.xlsx", &[])
        .output()
        .unwrap();
    refused(&out, "refusing to write the report to");
    assert_eq!(sha256(&book), before);
    assert!(!w.db().exists());
    nothing_sent(&sb);
}

/// The run's approval files are named after the run: a payroll named
/// `approval.csv` is left alone, one named like the run's own is refused
/// before anything is sent.
#[test]
fn approval_files_never_replace_a_payroll() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("approval.csv", &payroll(2, account));
    let before = sha256(&file);
    let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sha256(&file), before);
    assert!(w.path("approval-run-1.csv").exists());

    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("approval-run-1.csv", &payroll(2, account));
    let before = sha256(&file);
    let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
    refused(&out, "refusing to write the control totals to");
    assert_eq!(sha256(&file), before);
    nothing_sent(&sb);
}

/// A later run's approval page and totals never replace an earlier run's:
/// each run has its own, and the first is unchanged by the second.
#[test]
fn each_run_keeps_its_own_approval_page() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let first = w.write("may.csv", &payroll(2, account));
    assert_eq!(
        code(&w.run(&first, &sb.base_url(), &["--initiate-only"])),
        0
    );
    let page1 = w.path("approval-run-1.html");
    let totals1 = w.path("approval-run-1.csv");
    let kept = [sha256(&page1), sha256(&totals1)];
    let second = w.write("june.csv", &payroll(3, |i| account(i + 10)));
    assert_eq!(
        code(&w.run(&second, &sb.base_url(), &["--initiate-only"])),
        0
    );
    assert_eq!([sha256(&page1), sha256(&totals1)], kept);
    let page2 = std::fs::read_to_string(w.path("approval-run-2.html")).unwrap();
    assert!(page2.contains("Payroll run 2: approval"), "{page2}");
    assert!(
        std::fs::read_to_string(&page1)
            .unwrap()
            .contains("Payroll run 1: approval")
    );
}

/// `--report` naming the API key file, the config or the provider profile
/// is refused; so are two outputs of one run in one file.
#[test]
fn the_report_is_never_the_config_the_key_or_the_profile() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let key = w.write("key.txt", &format!("{KEY}\n"));
    let profile = w.write("provider.toml", "status = \"/data/status\"\n");
    let config = w.write(
        "payrun.toml",
        "api_key_file = \"key.txt\"\nprovider_profile = \"provider.toml\"\n",
    );
    let file = w.write("payroll.csv", &payroll(2, account));
    let inputs = [&key, &profile, &config, &file];
    let before: Vec<String> = inputs.iter().map(|p| sha256(p)).collect();
    for (report, role) in [
        ("key.txt", "it is the API key file"),
        ("payrun.toml", "it is the config"),
        ("provider.toml", "it is the provider profile"),
        (
            "rejected.csv",
            "the report and the rejected rows to one file",
        ),
        ("failed.csv", "the report and the failed rows to one file"),
    ] {
        let out = run_to(&w, &file, &sb.base_url(), report, &[])
            .output()
            .unwrap();
        refused(&out, role);
    }
    // And the summary beside it (`PATH.summary.csv`) as much as the report.
    std::fs::rename(&config, w.path("r.csv.summary.csv")).unwrap();
    let mut cmd = run_to(
        &w,
        &file,
        &sb.base_url(),
        "r.csv",
        &["--config", "r.csv.summary.csv"],
    );
    refused(&cmd.output().unwrap(), "refusing to write the summary to");
    std::fs::rename(w.path("r.csv.summary.csv"), &config).unwrap();
    let after: Vec<String> = inputs.iter().map(|p| sha256(p)).collect();
    assert_eq!(after, before);
    assert!(!w.db().exists());
    nothing_sent(&sb);
}

/// `summary --html` and `report --out` never write over the run's payroll,
/// the database or the config.
#[test]
fn summary_and_report_never_write_over_an_input() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("pay.csv", &payroll(2, account));
    assert_eq!(code(&w.run(&file, &sb.base_url(), &[])), 0);
    let config = w.write("payrun.toml", "report_language = \"en\"\n");
    let db = w.db().display().to_string();
    let before = [sha256(&file), sha256(&w.db()), sha256(&config)];
    for (args, what) in [
        (
            vec!["summary", "1", "--html", "pay.csv"],
            "it is the payroll",
        ),
        (vec!["summary", "1", "--html", &db], "it is the database"),
        (
            vec!["summary", "1", "--html", "payrun.toml"],
            "it is the config",
        ),
        (vec!["report", "--out", "pay.csv"], "it is the payroll"),
        (vec!["report", "--out", "payrun.toml"], "it is the config"),
    ] {
        let mut args = args.clone();
        args.extend(["--db", &db]);
        let out = payrun(w.dir.path(), &args);
        refused(&out, what);
    }
    assert_eq!([sha256(&file), sha256(&w.db()), sha256(&config)], before);
}

/// A run started with a relative path records it as given; from another
/// folder, `summary --html`, `report --out` and `reconcile --output`
/// still know that file as the run's payroll (by its bytes) and refuse it.
#[test]
fn the_payroll_is_known_from_another_folder() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    std::fs::create_dir(w.path("may")).unwrap();
    let file = w.write("may/pay.csv", &payroll(2, account));
    let db = w.db().display().to_string();
    let out = w
        .run_cmd_to(
            Path::new("pay.csv"),
            &sb.base_url(),
            Path::new("report.csv"),
            &[],
        )
        .current_dir(w.path("may"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let statement = w.write(
        "statement.csv",
        "transaction_id,amount,currency,status\nx,1,XOF,SUCCESS\n",
    );
    let before = [sha256(&file), sha256(&statement)];
    for args in [
        vec!["summary", "1", "--html", "may/pay.csv"],
        vec!["report", "--out", "may/pay.csv"],
        vec![
            "reconcile",
            "--statement",
            "statement.csv",
            "--output",
            "may/pay.csv",
        ],
    ] {
        let mut args = args.clone();
        args.extend(["--db", &db]);
        let out = payrun(w.dir.path(), &args);
        refused(&out, "it is the payroll of run 1 (pay.csv, the same bytes)");
    }
    assert_eq!([sha256(&file), sha256(&statement)], before);
    // Another file of that folder is written as asked.
    let out = payrun(
        w.dir.path(),
        &["summary", "1", "--html", "may/page.html", "--db", &db],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
}

/// `reconcile --statement reconciliation.csv` (the default `--output`)
/// and `--output` naming the database are refused before anything is
/// settled or written.
#[test]
fn reconcile_never_writes_over_the_statement_or_the_database() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    assert_eq!(code(&w.run(&file, &sb.base_url(), &[])), 0);
    let statement = w.write(
        "reconciliation.csv",
        "transaction_id,amount,currency,status\nx,1,XOF,SUCCESS\n",
    );
    let db = w.db().display().to_string();
    let kept = |w: &Work| {
        [
            sha256(&statement),
            sha256(&w.db()),
            sha256(&file),
            sha256(&w.report()),
        ]
    };
    let before = kept(&w);
    for (output, what) in [
        ("reconciliation.csv", "it is the statement"),
        (db.as_str(), "it is the database"),
        ("payroll.csv", "it is the payroll of run 1"),
        // Written again once payouts settle: the reconciliation would be
        // replaced by it.
        ("report.csv", "it is the report of run 1"),
        ("report.csv.summary.csv", "it is the report of run 1"),
    ] {
        let out = payrun(
            w.dir.path(),
            &[
                "reconcile",
                "--statement",
                "reconciliation.csv",
                "--output",
                output,
                "--db",
                &db,
            ],
        );
        refused(&out, what);
    }
    // The default `--output` is reconciliation.csv: the statement here.
    let out = payrun(
        w.dir.path(),
        &[
            "reconcile",
            "--statement",
            "reconciliation.csv",
            "--db",
            &db,
        ],
    );
    refused(&out, "it is the statement");
    assert_eq!(kept(&w), before);
}

/// A directory as `--report` fails before anything is paid: exit 1, no
/// request, no database, no temporary file left.
#[test]
fn a_directory_as_report_fails_before_paying() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    std::fs::create_dir(w.path("out")).unwrap();
    let before = sha256(&file);
    let out = run_to(&w, &file, &sb.base_url(), "out", &[])
        .output()
        .unwrap();
    refused(&out, "it is a directory");
    nothing_sent(&sb);
    assert_eq!(sha256(&file), before);
    assert_eq!(names(w.dir.path()), ["out", "payroll.csv"]);
    assert!(names(&w.path("out")).is_empty());
    // A folder that does not exist: the same, before anything.
    let out = run_to(&w, &file, &sb.base_url(), "nowhere/report.csv", &[])
        .output()
        .unwrap();
    refused(&out, "does not exist");
    nothing_sent(&sb);
}

/// A workbook whose text cells hold formulas: `failed.csv` and
/// `rejected.csv` write every such cell with the guard, and payrun reads
/// them back as they were — the failed row is paid again under its linked
/// id, with its account (`+233…`, guarded as `'+233…`) unchanged.
#[test]
fn failed_and_rejected_csv_guard_formulas_and_read_back_as_written() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let book = w.path("payroll.xlsx");
    let mut wb = rust_xlsxwriter::Workbook::new();
    let sheet = wb.add_worksheet();
    let rows: [[&str; 7]; 3] = [
        [
            "account_id",
            "amount",
            "currency",
            "payout_method_id",
            "description",
            "beneficiary_firstname",
            "beneficiary_lastname",
        ],
        [
            "2250700000001",
            "1000",
            "GHS",
            "momo",
            "May",
            "Ama",
            "Mensah",
        ],
        [
            "+233000000000404",
            "1500",
            "GHS",
            "momo",
            "+Awa",
            "=cmd|' /C calc'!A0",
            "=1+1",
        ],
    ];
    for (r, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            sheet.write_string(r as u32, c as u16, *cell).unwrap();
        }
    }
    wb.save(&book).unwrap();
    let before = sha256(&book);
    let out = w.run(&book, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(sha256(&book), before);
    let failed = std::fs::read_to_string(w.path("failed.csv")).unwrap();
    for guarded in ["'+233000000000404", "'+Awa", "'=cmd|' /C calc'!A0", "'=1+1"] {
        assert!(failed.contains(guarded), "{guarded}: {failed}");
    }
    for record in read_csv(&w.path("failed.csv")) {
        for cell in record.iter() {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "a live formula: {cell:?}"
            );
        }
    }
    let first = sb
        .ledger()
        .transactions
        .iter()
        .find(|t| t.account_id == "+233000000000404")
        .unwrap()
        .transaction_id
        .clone();
    // Run again as it is (renamed: failed.csv is where this run writes).
    let retry = w.write("retry.csv", &failed);
    let out = w.run(&retry, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let ledger = sb.ledger();
    let again: Vec<_> = ledger
        .transactions
        .iter()
        .filter(|t| t.transaction_id == format!("{first}-r2"))
        .collect();
    assert_eq!(again.len(), 1, "{:?}", ledger.transactions);
    assert_eq!(again[0].account_id, "+233000000000404");
    assert_eq!(again[0].amount, rust_decimal::Decimal::from(1500));
    let rows = w.report_rows();
    assert_eq!(col(&rows, 0, "beneficiary"), "'=cmd|' /C calc'!A0 =1+1");

    // rejected.csv: the same guard, read back the same way.
    let bad = format!("{HEADER}\n+2250700000002,-5,XOF,momo,=SUM(A1),@Yao,Kouame\n");
    let file = w.write("bad.csv", &bad);
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let rejected = std::fs::read_to_string(w.path("rejected.csv")).unwrap();
    for guarded in ["'+2250700000002", "'-5", "'=SUM(A1)", "'@Yao"] {
        assert!(rejected.contains(guarded), "{guarded}: {rejected}");
    }
    let again = w.write("again.csv", &rejected);
    let out = payrun(w.dir.path(), &["validate", "again.csv", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Read as written: the amount is -5 again (refused for being
    // negative), not `'-5` (refused as not a number).
    let errors = json["errors"].to_string();
    assert!(errors.contains("\"value\":\"-5\""), "{errors}");
    assert!(!errors.contains("'"), "{errors}");
    let _ = again;
}

/// A report made `chmod 600` stays 600 when payrun writes it again; a new
/// one follows the umask.
#[cfg(unix)]
#[test]
fn a_rewritten_report_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(2, account));
    assert_eq!(code(&w.run(&file, &sb.base_url(), &[])), 0);
    let summary = w.path("report.csv.summary.csv");
    for p in [w.report(), summary.clone()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let db = w.db().display().to_string();
    let out = payrun(
        w.dir.path(),
        &["report", "--out", "report.csv", "--db", &db],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let again = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&again), 0, "{}", text(&again));
    for p in [w.report(), summary] {
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", p.display());
    }
}

/// `api_key_file = "/dev/zero"` is refused at once, naming the fix; a key
/// file others can read works, with a warning naming `chmod 600`.
#[cfg(unix)]
#[test]
fn the_key_file_is_a_small_regular_file() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(1, account));
    w.write("payrun.toml", "api_key_file = \"/dev/zero\"\n");
    let mut cmd = w.run_cmd(&file, &sb.base_url(), &[]);
    cmd.env_remove("PAYRUN_API_KEY");
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("not a regular file (a device)"),
        "{}",
        text(&out)
    );
    nothing_sent(&sb);
    let key = w.write("key.txt", &format!("{KEY}\n"));
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    w.write("payrun.toml", "api_key_file = \"key.txt\"\n");
    let mut cmd = w.run_cmd(&file, &sb.base_url(), &[]);
    cmd.env_remove("PAYRUN_API_KEY");
    let out = cmd.output().unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(text(&out).contains("chmod 600 key.txt"), "{}", text(&out));
    assert!(!text(&out).contains(KEY), "{}", text(&out));
}
