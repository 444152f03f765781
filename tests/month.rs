//! The month exactly once, per person (issue 28): each seam between runs,
//! files and tools where a person could be paid twice or silently left
//! out, reproduced against the sandbox in its **non-idempotent** mode (a
//! second execute really pays twice) and checked on the ledger per
//! canonical account and currency — what the provider debited per person,
//! against what the operator explicitly asked for.

mod common;

use common::*;
use payrun::sandbox::{LedgerSnapshot, SandboxConfig};
use payrun::validate::{account::account_key, fields::phone_region, phone::Phones};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A sandbox where every execute debits again.
fn non_idempotent() -> Sandbox {
    Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ..SandboxConfig::default()
    })
}

/// What the provider debited, per canonical account (region CI) and
/// currency.
fn paid_per_person(ledger: &LedgerSnapshot) -> BTreeMap<(String, String), Decimal> {
    let mut phones = Phones::new(Some(phone_region("CI").unwrap()));
    let mut out = BTreeMap::new();
    for t in ledger.transactions.iter().filter(|t| t.kind == "payout") {
        if t.debits > 0 {
            let key = (account_key(&t.account_id, &mut phones), t.currency.clone());
            *out.entry(key).or_default() += t.amount * Decimal::from(t.debits);
        }
    }
    out
}

/// The operator's asks: (account, currency, total), accounts written any
/// way (they are compared by key).
fn asked(rows: &[(&str, &str, i64)]) -> BTreeMap<(String, String), Decimal> {
    let mut phones = Phones::new(Some(phone_region("CI").unwrap()));
    let mut out = BTreeMap::new();
    for (account, currency, total) in rows {
        let key = (account_key(account, &mut phones), currency.to_string());
        *out.entry(key).or_default() += Decimal::from(*total);
    }
    out
}

const HEAD: &str = "account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname";

/// A payroll from (account, amount, method, name) rows, in XOF.
fn payroll_of(rows: &[(&str, i64, &str, &str)]) -> String {
    let mut s = format!("{HEAD}\n");
    for (account, amount, method, name) in rows {
        s.push_str(&format!(
            "{account},{amount},XOF,{method},Salaire novembre,{name},Koné\n"
        ));
    }
    s
}

const AWA: &str = "+2250701100001";
const ALI: &str = "+2250701100002";
const EVA: &str = "+2250701100003";

fn november() -> Vec<(&'static str, i64, &'static str, &'static str)> {
    vec![
        (AWA, 95000, "momo", "Awa"),
        (ALI, 80000, "momo", "Ali"),
        (EVA, 70000, "momo", "Eva"),
    ]
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `payrun` with the test's folder, key and data folder, not `run`.
fn payrun(w: &Work, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .args(args)
        .output()
        .unwrap()
}

/// Item 1: the configuration `payrun init` writes keeps `ambiguous` at
/// `hold`, so against a provider that does not deduplicate executes an
/// ambiguous answer is never sent again: nobody is paid twice.
#[test]
fn the_init_config_never_pays_twice_on_ambiguous_answers() {
    let sb = Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ambiguous_rate: 0.2,
        seed: 28,
        ..SandboxConfig::default()
    });
    let w = Work::new();
    let out = payrun(&w, &["init"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let file = w.write("payroll.csv", &payroll(30, account));
    // The init config asks for four eyes: Ama initiates, Kofi approves.
    let period = ["--period", "2026-11"];
    let as_ama = |extra: &[&str]| {
        let args: Vec<&str> = period.iter().chain(extra).copied().collect();
        w.run_cmd(&file, &sb.base_url(), &args)
            .env("USER", "ama")
            .output()
            .unwrap()
    };
    let out = as_ama(&["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("USER", "kofi")
        .args(["approve", "1", "--yes", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = as_ama(&[]);
    assert!([0, 3].contains(&code(&out)), "{}", text(&out));
    let ledger = sb.ledger();
    assert!(ledger.requests.total > 30, "ambiguous answers happened");
    for t in &ledger.transactions {
        assert!(
            t.debits <= 1,
            "{} debited {} times",
            t.transaction_id,
            t.debits
        );
    }
    let mut phones = Phones::new(Some(phone_region("CI").unwrap()));
    let mut want: BTreeMap<(String, String), Decimal> = BTreeMap::new();
    for r in common::money::payroll_rows(&file) {
        *want
            .entry((account_key(&r.account, &mut phones), r.currency))
            .or_default() += r.amount;
    }
    for (key, total) in paid_per_person(&ledger) {
        let asked = want.get(&key).copied().unwrap_or_default();
        assert!(total <= asked, "{key:?} paid {total}, asked {asked}");
    }
}

/// Item 2: November paid; a copy with Awa corrected to 105000 in the same
/// period stops before anything is sent, naming the earlier payment and
/// what to do. Paid on purpose (`--allow-repeats`), the second payment is
/// on the approval page and in the audit trail.
#[test]
fn a_corrected_amount_for_a_paid_person_stops_the_run() {
    let sb = non_idempotent();
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll_of(&november()));
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let before = sb.ledger().requests.total;

    let corrected = file_text(&file).replace("95000", "105000");
    let copy = w.write("payroll (corrigé).csv", &corrected);
    let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = stderr(&out);
    for part in [
        "row 2: account +2250701100001, 105000 XOF",
        "was already paid 95000 XOF in period 2026-11 by run 1 (",
        "row 2, on 20",
        "now executed",
        "pay only the difference, 10000 XOF",
        "--allow-repeats",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    assert_eq!(sb.ledger().requests.total, before, "nothing sent");

    // The operator means it: a second payment, approved on paper first.
    let out = w.run(
        &copy,
        &sb.base_url(),
        &["--period", "2026-11", "--allow-repeats", "--initiate-only"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let page = std::fs::read_to_string(w.latest_approval("html")).unwrap();
    assert!(!page.contains("No notices"), "{page}");
    assert!(page.contains("paid with --allow-repeats: row 2"), "{page}");
    assert!(page.contains("2 row(s) left out as already paid"), "{page}");
    let approval = std::fs::read_to_string(w.latest_approval("csv")).unwrap();
    assert!(
        approval.contains("paid with --allow-repeats: row 2"),
        "{approval}"
    );
    let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let audit = payrun(
        &w,
        &["reconcile", "--audit", "--db", w.db().to_str().unwrap()],
    );
    let audit = String::from_utf8_lossy(&audit.stdout).into_owned();
    assert!(
        audit.contains("allow_repeat") && audit.contains("paid with --allow-repeats: row 2"),
        "{audit}"
    );
    assert_eq!(
        paid_per_person(&sb.ledger()),
        asked(&[
            (AWA, "XOF", 95000 + 105000),
            (ALI, "XOF", 80000),
            (EVA, "XOF", 70000)
        ])
    );
}

fn file_text(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Item 3: the same payroll with its accounts re-typed — the `+` lost by a
/// spreadsheet, spaces, the national form, `00` — is the same people: every
/// row is recognised as paid, nothing is sent.
#[test]
fn a_re_typed_account_is_the_same_person() {
    let sb = non_idempotent();
    let w = Work::new();
    w.write("payrun.toml", "default_phone_region = \"CI\"\n");
    let file = w.write("payroll.csv", &payroll_of(&november()));
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let paid = sb.ledger().requests.total;
    let original = file_text(&file);
    for (name, retyped) in [
        ("no plus", original.replace("+225", "225")),
        ("spaces", original.replace("+2250701", "+225 07 01 ")),
        ("national", original.replace("+2250701", "07 01 ")),
        ("00", original.replace("+225", "00225")),
    ] {
        let copy = w.write(&format!("payroll {name}.csv"), &retyped);
        let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
        assert_eq!(code(&out), 0, "{name}: {}", text(&out));
        let rows = w.report_rows();
        for i in 0..rows.len() {
            assert_eq!(col(&rows, i, "state"), "skipped", "{name}: row {i}");
        }
        assert_eq!(sb.ledger().requests.total, paid, "{name}: nothing sent");
    }
    assert_eq!(
        paid_per_person(&sb.ledger()),
        asked(&[
            (AWA, "XOF", 95000),
            (ALI, "XOF", 80000),
            (EVA, "XOF", 70000)
        ])
    );
}

/// Item 4: two rows of one payee that differ only in payout method keep
/// their ids when the rows are swapped.
#[test]
fn reordering_rows_that_differ_only_in_method_pays_nobody_again() {
    let sb = non_idempotent();
    let w = Work::new();
    let rows = vec![
        (AWA, 1000, "momo", "Awa"),
        (AWA, 1000, "bank", "Awa"),
        (ALI, 500, "momo", "Ali"),
    ];
    let file = w.write("payroll.csv", &payroll_of(&rows));
    let flags = ["--period", "2026-11", "--allow-repeats"];
    let out = w.run(&file, &sb.base_url(), &flags);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let swapped = payroll_of(&[rows[1], rows[0], rows[2]]);
    let copy = w.write("payroll reordered.csv", &swapped);
    let out = w.run(&copy, &sb.base_url(), &flags);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(
        paid_per_person(&sb.ledger()),
        asked(&[(AWA, "XOF", 2000), (ALI, "XOF", 500)]),
        "each of Awa's two payments once"
    );
}

/// Item 5: a statement listing one id twice with conflicting statuses
/// ("Failed", then "Successful") settles nothing. The payout the provider
/// paid stays unknown: it is not in failed.csv, and a new file paying
/// that person again in the period is stopped. A clean statement then
/// settles it as paid; the ledger shows each person paid once.
#[test]
fn a_statement_listing_an_id_twice_never_leads_to_a_second_payment() {
    let sb = non_idempotent();
    let w = Work::new();
    w.parked();
    let awa = format!("2250700{}", payrun::sandbox::magic::EXECUTE_THEN_503);
    let rows = [
        (awa.as_str(), 95000, "momo", "Awa"),
        (ALI, 80000, "momo", "Ali"),
    ];
    let file = w.write("payroll.csv", &payroll_of(&rows));
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let tx = col(&w.report_rows(), 0, "transaction_id");
    assert_eq!(col(&w.report_rows(), 0, "state"), "unknown");
    assert_eq!(sb.ledger().get(&tx).map(|t| t.debits), Some(1), "paid once");

    let clean = common::sandbox_statement(&sb, "");
    let mut lines: Vec<String> = clean.lines().map(str::to_string).collect();
    let at = lines.iter().position(|l| l.starts_with(&tx)).unwrap();
    assert!(lines[at].contains(",Successful,"), "{}", lines[at]);
    let failed_first = lines[at].replace(",Successful,", ",Failed,");
    lines.insert(at, failed_first);
    w.write("statement.csv", &(lines.join("\n") + "\n"));
    let out = reconcile(&w, &["--statement", "statement.csv"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains(&format!("{tx}: not settled: 2 lines")),
        "{said}"
    );

    // The same file again: Awa still unknown, no failed.csv to re-pay her.
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(col(&w.report_rows(), 0, "state"), "unknown");
    assert!(!w.path("failed.csv").exists());
    // The clerk pays Awa again in a new file: her row is recognised (held,
    // not sent); with its amount changed, the run is stopped.
    let before = sb.ledger().requests.total;
    let again = w.write("awa.csv", &payroll_of(&rows[..1]).replace('\n', "\r\n"));
    let out = w.run(&again, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(col(&w.report_rows(), 0, "state"), "skipped");
    let changed = w.write(
        "awa 2.csv",
        &payroll_of(&rows[..1]).replace("95000", "96000"),
    );
    let out = w.run(&changed, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        stderr(&out).contains("may already have been paid (its outcome is unknown)"),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.total, before, "nothing sent");

    w.write("statement.csv", &clean);
    let out = reconcile(&w, &["--statement", "statement.csv"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(
        paid_per_person(&sb.ledger()),
        asked(&[(awa.as_str(), "XOF", 95000), (ALI, "XOF", 80000)])
    );
}

/// Item 6: of two identical rows, the first is paid and the second fails;
/// `failed.csv` names the failed payout, so running it pays that one (under
/// its linked id), never matches the paid sibling. Run again once paid, a
/// copy of it is refused.
#[test]
fn failed_csv_re_pays_the_failed_payout_not_its_paid_sibling() {
    let sb = non_idempotent();
    let w = Work::new();
    let rows = [
        (AWA, 1000, "momo", "Awa"),
        (AWA, 1000, "momo", "Awa"),
        (ALI, 500, "momo", "Ali"),
    ];
    let file = w.write("payroll.csv", &payroll_of(&rows));
    let flags = [
        "--period",
        "2026-11",
        "--allow-repeats",
        "--concurrency",
        "1",
    ];
    // One payout at a time: sends are init 2, exec 2, init 3, exec 3. Die
    // before the fourth: row 3's execute intent is committed, never sent.
    let out = w
        .run_cmd(&file, &sb.base_url(), &flags)
        .env("PAYRUN_FAULT", "before_send:4")
        .output()
        .unwrap();
    assert!(stderr(&out).contains("fault point"), "{}", text(&out));
    // Resumed under `hold`: row 3 is `unknown`; the operator checks the
    // provider's books (not debited) and marks it failed.
    let out = w.run(&file, &sb.base_url(), &flags);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let report = w.report_rows();
    assert_eq!(col(&report, 1, "state"), "unknown");
    let tx = col(&report, 1, "transaction_id");
    assert_eq!(sb.ledger().get(&tx).map(|t| t.debits), Some(0));
    let db = w.db();
    let out = payrun(
        &w,
        &[
            "reconcile",
            "--mark",
            "failed",
            &tx,
            "--reason",
            "statement: not debited",
            "--db",
            db.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    // The same file again writes failed.csv: the failed row, named.
    let out = w.run(&file, &sb.base_url(), &flags);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let failed = read_csv(&w.path("failed.csv"));
    assert_eq!(failed.len(), 1);
    assert_eq!(&failed[0][7], tx.as_str(), "{:?}", failed[0]);

    // Renamed (failed.csv is where this run writes its own failed rows)
    // and run, it leaves no failure: the stale failed.csv goes.
    let failed_text = file_text(&w.path("failed.csv"));
    let retry = w.write("retry.csv", &failed_text);
    let out = w.run(&retry, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(!w.path("failed.csv").exists());
    assert_eq!(
        paid_per_person(&sb.ledger()),
        asked(&[(AWA, "XOF", 2000), (ALI, "XOF", 500)]),
        "both of Awa's rows paid once, as asked"
    );
    assert!(sb.ledger().get(&format!("{tx}-r2")).is_some());

    // A copy of that failed.csv, once its row is paid, is refused.
    let again = w.write("failed again.csv", &failed_text.replace('\n', "\r\n"));
    let before = sb.ledger().requests.total;
    let out = w.run(&again, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!(
            "row 2: transaction {tx} did not fail: it was paid again as {tx}-r2, now executed"
        )),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.total, before, "nothing sent");
}

/// Item 7: a row naming a payee whose account is empty is refused, even
/// when its amount is the sum of the rows above; a real totals row (no
/// payee, at the end) is used, and shown by `run`, in the summary and on
/// the approval page.
#[test]
fn a_payee_row_is_never_a_totals_row() {
    let sb = non_idempotent();
    let w = Work::new();
    let text_of = |last: &str| {
        format!(
            "transaction_id,{HEAD},beneficiary_phone,beneficiary_email\n\
             PAY-1,{AWA},95000,XOF,momo,Salaire,Awa,Koné,,\n{last}\n"
        )
    };
    let file = w.write(
        "payroll.csv",
        &text_of("PAY-2,,95000,XOF,momo,Salaire,Ali,Traoré,+2250701100002,ali@example.ci"),
    );
    let out = w.run(&file, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("row 3, column account_id") && err.contains("fill it in"),
        "{err}"
    );
    assert_eq!(sb.ledger().requests.total, 0, "nothing sent");

    let file = w.write("payroll.csv", &text_of(",,95000,XOF,,,TOTAL,,,"));
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--period", "2026-11", "--initiate-only"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let used = "row 3 is a totals row (95000 XOF, the sum of the rows above)";
    assert!(stderr(&out).contains(used), "{}", text(&out));
    let summary = file_text(&w.path("report.csv.summary.csv"));
    assert!(summary.contains("XOF,totals_row,,95000"), "{summary}");
    let page = file_text(&w.latest_approval("html"));
    assert!(page.contains(used), "{page}");
}

/// Item 9: an unfinished run older than the window still pays its open
/// payouts when resumed; a new period's run of the same people and
/// amounts is stopped, whatever the run's start.
#[test]
fn an_old_unfinished_run_still_guards_its_open_payouts() {
    let sb = non_idempotent();
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll_of(&november()));
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--period", "2026-10", "--initiate-only"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let conn = rusqlite::Connection::open(w.db()).unwrap();
    conn.execute_batch(
        "UPDATE runs SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', created_at, '-40 days');
         UPDATE payouts SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', updated_at, '-40 days');",
    )
    .unwrap();
    drop(conn);
    let copy = w.write("payroll nov.csv", &file_text(&file).replace('\n', "\r\n"));
    let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(
        stderr(&out).contains("is already being paid 95000 XOF in period 2026-10"),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.executes, 0, "nothing paid");
}

/// A checkpoint written by the previous schema (ids of scheme v2, no
/// account keys) opens, and is guarded per person: a re-typed copy of the
/// payroll it paid gets new (v3) ids, and is stopped, not paid again; the
/// row that failed there is paid once corrected.
#[test]
fn a_database_of_the_previous_schema_is_guarded_per_person() {
    let sb = non_idempotent();
    let w = Work::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/payrun-v3.db");
    std::fs::copy(fixture, w.db()).unwrap();
    w.write("payrun.toml", "default_phone_region = \"CI\"\n");
    let original = "account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname\n\
        +2250701100001,95000,XOF,momo,Salaire novembre,Awa,Koné\n\
        +2250701100002,80000,XOF,momo,Salaire novembre,Ali,Traoré\n";
    for (name, body) in [
        ("re-saved", original.replace('\n', "\r\n")),
        ("re-typed", original.replace("+2250701", "07 01 ")),
    ] {
        let copy = w.write(&format!("paie {name}.csv"), &body);
        let out = w.run(&copy, &sb.base_url(), &["--period", "2026-11"]);
        assert_eq!(code(&out), 2, "{name}: {}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains("was already paid 95000 XOF in period 2026-11 by run 1")
                && err.contains("was already paid 80000 XOF in period 2026-11 by run 1"),
            "{name}: {err}"
        );
        assert_eq!(sb.ledger().requests.total, 0, "{name}: nothing sent");
    }
    let fixed = w.write(
        "kofi.csv",
        "account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname\n\
         GH000000000777,1000,GHS,momo,Salaire novembre,Kofi,Mensah\n",
    );
    let out = w.run(&fixed, &sb.base_url(), &["--period", "2026-11"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(
        paid_per_person(&sb.ledger()),
        asked(&[("GH000000000777", "GHS", 1000)])
    );
}

#[path = "month/sim.rs"]
mod sim;

/// Random months played by default (the floor: 500 within a
/// minute of test time; docs/guarantees.md, "The proof").
const MONTHS: u64 = 500;

/// The share of months whose kills are the real binary dying at the fault
/// point rather than the run crashed in-process (`PAYRUN_MONTH_REAL_KILLS`;
/// in the soak, a quarter).
const REAL_KILLS: f64 = 0.04;
const SOAK_REAL_KILLS: f64 = 0.25;

/// How many random months `simulated_months` plays (`PAYRUN_MONTHS`),
/// for how long at least (`PAYRUN_MONTH_SOAK_SECS`, the benchmark
/// machine's soak: months are played until that many seconds passed), and
/// the share of months of real kills.
fn months_wanted() -> (u64, std::time::Duration, f64) {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let soak = std::time::Duration::from_secs(var("PAYRUN_MONTH_SOAK_SECS").unwrap_or(0));
    let real = std::env::var("PAYRUN_MONTH_REAL_KILLS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|p| (0.0..=1.0).contains(p))
        .unwrap_or(if soak.is_zero() {
            REAL_KILLS
        } else {
            SOAK_REAL_KILLS
        });
    (var("PAYRUN_MONTHS").unwrap_or(MONTHS), soak, real)
}

/// The proof of issue 28: random months (tests/month/sim.rs), each checked
/// on the ledger after every step and closed. Month `i` plays seed
/// `SEED + i`; a failure prints the month's seed and its steps, and
/// `PAYRUN_MONTH_SEED=S PAYRUN_MONTHS=1 cargo test --test month
/// simulated_months` replays it.
#[test]
fn simulated_months() {
    let seed = common::seed("PAYRUN_MONTH_SEED", "month");
    let (months, soak, real_kills) = months_wanted();
    let start = std::time::Instant::now();
    let next = std::sync::atomic::AtomicU64::new(0);
    let played = std::sync::atomic::AtomicU64::new(0);
    // Two months at a time, one per core: each has its own sandbox and
    // database, and its threads their own name (an in-process crash is
    // that month's alone).
    std::thread::scope(|scope| {
        for k in 0..2 {
            let (next, played) = (&next, &played);
            std::thread::Builder::new()
                .name(format!("month-{k}"))
                .spawn_scoped(scope, move || {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        if i >= months && start.elapsed() >= soak {
                            break;
                        }
                        let s = seed.wrapping_add(i);
                        if let Err((e, log)) = sim::month(s, 10, &format!("month-{k}"), real_kills)
                        {
                            panic!(
                                "month seed {s}: {e}\nreplay: PAYRUN_MONTH_SEED={s} PAYRUN_MONTHS=1 PAYRUN_MONTH_REAL_KILLS={real_kills} cargo test --test month simulated_months\n{}",
                                log.join("\n")
                            );
                        }
                        played.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                })
                .unwrap();
        }
    });
    let played = played.into_inner();
    eprintln!(
        "simulated_months: {played} months in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
