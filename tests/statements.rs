//! Closing the month with statements as portals export them (issue 30):
//! a preamble, the portal's own headers and words, grouped French amounts
//! with no-break spaces, a Total footer, `;` and a BOM; a statement scoped
//! to its provider and dates; an id listed twice never settles (issue 28,
//! item 5). The real binary against the in-process sandbox, whose ledger
//! says what really happened.

mod common;

use common::*;
use payrun::sandbox::SandboxConfig;
use std::process::{Command, Output};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The sandbox's own statement (English, `,`): id, account, wire amount,
/// currency, status, date `YYYY-MM-DD HH:MM:SS`.
fn sandbox_statement(sb: &Sandbox) -> Vec<[String; 6]> {
    let text = common::sandbox_statement(sb, "");
    csv::Reader::from_reader(text.as_bytes())
        .records()
        .map(|r| {
            let r = r.unwrap();
            std::array::from_fn(|i| r[i].to_string())
        })
        .collect()
}

/// A whole number with French groups of three, separated by `sep`.
fn grouped(n: u64, sep: char) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(sep);
        }
        out.push(c);
    }
    out
}

/// `2026-11-23 16:03:57` as the portal writes it: `23/11/2026 16:03`.
fn portal_date(iso: &str) -> String {
    let (d, t) = iso.split_once(' ').unwrap();
    let p: Vec<&str> = d.split('-').collect();
    format!("{}/{}/{} {}", p[2], p[1], p[0], &t[..5])
}

/// The portal's `[statement]` section: its headers and words, French
/// numbers, amounts in major units (payrun sends minor units).
const PORTAL_CONFIG: &str = "amount_unit = \"minor\"\n\
    settle_wait = \"0s\"\n\
    [statement]\n\
    transaction_id = [\"Réf. opération\"]\n\
    account = [\"N° bénéficiaire\"]\n\
    amount = [\"Montant net\"]\n\
    currency = [\"Devise\"]\n\
    status = [\"État\"]\n\
    date = [\"Date opération\"]\n\
    paid = [\"Succès\"]\n\
    failed = [\"Échec\"]\n\
    not_final = [\"En cours\"]\n\
    number_format = \"fr\"\n\
    amount_unit = \"major\"\n";

/// The bar of issue 30. Five payouts end `unknown` (the provider paid
/// three, failed one, and one line of the export was doctored), one is
/// executed. The portal's export settles the four it proves, leaves the
/// doctored one unknown and flagged `amount_differs`, exits 3, and says
/// what it skipped and what it spoke about.
#[test]
fn a_portal_export_settles_what_the_provider_paid_or_failed_and_flags_the_doctored_line() {
    // Non-idempotent: a second execute of a paid payout would pay twice.
    let sb = Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ..SandboxConfig::default()
    });
    let w = Work::new();
    w.write("payrun.toml", PORTAL_CONFIG);
    // Magic accounts: debited then 503 (…503), debited then cut (…504),
    // failed then 503 (…513); the last row is paid cleanly.
    let magic = |n: u8, suffix: &str| format!("2250{n}{suffix}");
    let rows = [
        (magic(1, "000000000503"), "25000", "XOF"),
        (magic(2, "000000000504"), "1250000", "XOF"),
        (magic(3, "000000000513"), "30000", "XOF"),
        (magic(4, "000000000503"), "1250.50", "EUR"),
        (magic(5, "000000000503"), "40000", "XOF"),
        (account(17), "18000", "XOF"),
    ];
    let mut payroll = String::from(HEADER);
    payroll.push('\n');
    for (i, (account, amount, currency)) in rows.iter().enumerate() {
        payroll.push_str(&format!(
            "{account},{amount},{currency},momo,Salaire novembre,Awa,Koné{i}\n"
        ));
    }
    let file = w.write("paie.csv", &payroll);
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let report = w.report_rows();
    let state = |w: &Work, i: usize| col(&w.report_rows(), i, "state");
    let tx: Vec<String> = (0..rows.len())
        .map(|i| col(&report, i, "transaction_id"))
        .collect();
    for i in 0..5 {
        assert_eq!(state(&w, i), "unknown", "row {i}");
    }
    assert_eq!(state(&w, 5), "executed");
    // What the provider really did.
    let ledger = sb.ledger();
    let truth: Vec<&str> = tx
        .iter()
        .map(|t| ledger.get(t).unwrap().status.as_str())
        .collect();
    assert_eq!(
        truth,
        [
            "SUCCESS", "SUCCESS", "FAILED", "SUCCESS", "SUCCESS", "SUCCESS"
        ]
    );

    // The portal's export, from the provider's books: a preamble, its own
    // headers and words, major units in French groups (no-break and narrow
    // no-break spaces), accounts as the portal groups them, a Total footer
    // per currency, `;`, a BOM. Row 4's amount is doctored.
    let mut lines = vec![
        "\u{feff}Relevé des opérations - Wave Business;;;;;".to_string(),
        "Compte marchand : ACME SARL (M-20931);;;;;".to_string(),
        "Période : du 01/11/2026 au 30/11/2026;;;;;".to_string(),
        ";;;;;".to_string(),
        "Réf. opération;N° bénéficiaire;Montant net;Devise;État;Date opération".to_string(),
    ];
    let mut xof_total = 0u64;
    for [id, account, amount, currency, status, date] in sandbox_statement(&sb) {
        let wire: u64 = amount.parse().unwrap();
        let shown = match currency.as_str() {
            "EUR" => format!("{},{:02}", grouped(wire / 100, '\u{202f}'), wire % 100),
            _ if id == tx[4] => grouped(wire + 5000, '\u{a0}'),
            _ => {
                xof_total += wire;
                grouped(wire, '\u{a0}')
            }
        };
        let word = match status.as_str() {
            "Successful" => "Succès",
            "Failed" => "Échec",
            _ => "En cours",
        };
        // The portal groups accounts; a phone number with its `+`.
        let account = if account.len() <= 13 {
            format!("+{} {} {}", &account[..3], &account[3..5], &account[5..])
        } else {
            format!("{} {} {}", &account[..3], &account[3..5], &account[5..])
        };
        lines.push(format!(
            "{id};{account};{shown};{currency};{word};{}",
            portal_date(&date)
        ));
    }
    // The footer counts the doctored line as the portal showed it.
    xof_total += 45000;
    lines.push(format!("Total;;{};XOF;;", grouped(xof_total, '\u{a0}')));
    lines.push("Total;;1\u{202f}250,50;EUR;;".to_string());
    let export = lines.join("\r\n") + "\r\n";
    w.write("releve-novembre.csv", &export);

    let out = reconcile(&w, &["--statement", "releve-novembre.csv"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let said = stdout(&out);
    for (i, to) in [
        (0, "executed"),
        (1, "executed"),
        (2, "execute_failed"),
        (3, "executed"),
    ] {
        assert!(
            said.contains(&format!("{}: unknown -> {to} (statement line", tx[i])),
            "row {i}: {}",
            text(&out)
        );
        assert_eq!(state(&w, i), to, "row {i}: the report is rewritten");
    }
    assert_eq!(state(&w, 4), "unknown", "the doctored line settles nothing");
    assert_eq!(state(&w, 5), "executed");
    let errors = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        errors.contains("skipped: rows 1 to 3 before the header row (row 5) were skipped")
            && errors.contains("\"Relevé des opérations - Wave Business\""),
        "{errors}"
    );
    assert!(
        errors.contains("line 12") && errors.contains("a total line, equal to the sum"),
        "{errors}"
    );
    assert!(
        errors.contains(&format!("scope: provider {}", sb.base_url())),
        "{errors}"
    );
    // reconciliation.csv flags the doctored line, with both amounts.
    let recon = read_csv(&w.path("reconciliation.csv"));
    let line = |id: &str| recon.iter().find(|r| &r[3] == id).unwrap().clone();
    let doctored = line(&tx[4]);
    assert_eq!(
        (&doctored[0], &doctored[4], &doctored[6], &doctored[10]),
        ("amount_differs", "unknown", "40000", "45000")
    );
    assert_eq!(&line(&tx[3])[6], "1250.50");
    assert_eq!(&line(&tx[3])[10], "1250.50");
    for i in [0, 1, 2, 3, 5] {
        assert_eq!(&line(&tx[i])[0], "matched", "row {i}");
    }
    // `reconcile` still lists the doctored payout as open; the ledger shows
    // nobody was paid twice and nothing unpaid is reported paid.
    let open = reconcile(&w, &[]);
    assert_eq!(code(&open), 3);
    assert!(stdout(&open).contains(&tx[4]), "{}", text(&open));
    let ledger = sb.ledger();
    for (i, t) in tx.iter().enumerate() {
        let entry = ledger.get(t).unwrap();
        assert!(entry.debits <= 1, "{entry:?}");
        let paid = entry.status == "SUCCESS";
        let recorded = state(&w, i);
        assert!(
            (recorded == "executed") <= paid && (recorded == "execute_failed") <= !paid,
            "row {i}: {recorded} vs {entry:?}"
        );
    }
    // The same export again changes nothing.
    let again = reconcile(&w, &["--statement", "releve-novembre.csv"]);
    assert_eq!(code(&again), 3);
    assert!(!stdout(&again).contains("->"), "{}", text(&again));
    // The approval page tells the approver the period and, in its audit
    // section, every settlement the statement made, with its line.
    let page = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .args(["summary", "1", "--html", "page.html", "--db"])
        .arg(w.db())
        .output()
        .unwrap();
    assert_eq!(code(&page), 0, "{}", text(&page));
    let html = std::fs::read_to_string(w.path("page.html")).unwrap();
    assert!(html.contains("<th>Period</th><td>20"), "{html}");
    assert!(html.contains("<h2>Audit trail</h2>"), "{html}");
    for id in &tx[..4] {
        let row = html
            .lines()
            .find(|l| l.contains(id.as_str()) && l.contains("<td>statement</td>"));
        assert!(
            row.is_some_and(|r| r.contains("releve-novembre.csv (sha256 ")),
            "{id}: {html}"
        );
    }
    assert!(!html.contains(&format!("<code>{}</code></td><td>statement", tx[4])));

    // The payroll run again (a later run): what the statement settled paid
    // stays paid, the doctored one stays held; only the failed row is paid
    // again, under a new id. Nobody is paid twice, per id and per person.
    let again = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_ne!(code(&again), 1, "{}", text(&again));
    assert_ne!(code(&again), 2, "{}", text(&again));
    paid_once_per_person(&sb.ledger(), &[&tx[0], &tx[1], &tx[3], &tx[4], &tx[5]]);
    assert_eq!(state(&w, 4), "unknown", "{}", text(&again));
    assert_eq!(sb.ledger().get(&tx[4]).unwrap().debits, 1);
}

/// Every ledger transaction debited at most once, and each account of
/// `paid` (transaction ids the provider paid) paid by exactly one
/// transaction in all.
fn paid_once_per_person(ledger: &payrun::sandbox::LedgerSnapshot, paid: &[&str]) {
    for t in &ledger.transactions {
        assert!(t.debits <= 1, "{t:?}");
    }
    for id in paid {
        let account = &ledger.get(id).unwrap().account_id;
        let debited: Vec<&str> = ledger
            .transactions
            .iter()
            .filter(|t| &t.account_id == account && t.debits > 0)
            .map(|t| t.transaction_id.as_str())
            .collect();
        assert_eq!(debited.len(), 1, "{account}: {debited:?}");
    }
}

/// A statement covers one provider account and a date range: with a
/// history of runs against two providers, payouts of the other provider
/// are never missing from it; with `--run`, lines of another run of the
/// same provider are matched to its payouts (and settle them), not
/// `unknown_to_payrun`; a payout sent outside `--from/--to` is out of
/// scope. An id listed twice ("Failed", then "Successful") settles nothing.
#[test]
fn a_statement_speaks_about_its_provider_and_dates_and_a_duplicate_never_settles() {
    let a = Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ..SandboxConfig::default()
    });
    let b = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let magic = |n: usize| format!("2250{n}000000000503");
    // Run 1 against A: two payouts left unknown (paid at A).
    let one = w.write("one.csv", &payroll(2, magic));
    assert_eq!(
        code(&w.run(&one, &a.base_url(), &["--ambiguous", "hold"])),
        3
    );
    let tx_one: Vec<String> = (0..2)
        .map(|i| col(&w.report_rows(), i, "transaction_id"))
        .collect();
    // Run 2 against A, run 3 against B: paid.
    let two = w.write("two.csv", &payroll(3, |i| account(20 + i)));
    assert_eq!(code(&w.run(&two, &a.base_url(), &[])), 0);
    let tx_two: Vec<String> = (0..3)
        .map(|i| col(&w.report_rows(), i, "transaction_id"))
        .collect();
    let three = w.write("three.csv", &payroll(4, |i| account(40 + i)));
    assert_eq!(code(&w.run(&three, &b.base_url(), &[])), 0);

    // A's own statement: run 1's first payout and all of run 2.
    let statement = |skip: &[&str], extra: &[String]| {
        let mut lines = vec!["Transaction ID,Account,Amount,Currency,Status,Date".to_string()];
        for [id, account, amount, currency, status, date] in sandbox_statement(&a) {
            if id != tx_one[1] && !skip.contains(&id.as_str()) {
                lines.push(format!(
                    "{id},{account},{amount},{currency},{status},{date}"
                ));
            }
        }
        lines.extend(extra.iter().cloned());
        w.write("statement-a.csv", &(lines.join("\n") + "\n"));
    };
    statement(&[], &[]);
    let out = reconcile(&w, &["--statement", "statement-a.csv", "--run", "2"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        stdout(&out).contains(&format!(
            "{}: unknown -> executed (statement line",
            tx_one[0]
        )),
        "{}",
        text(&out)
    );
    let recon = read_csv(&w.path("reconciliation.csv"));
    assert!(recon.iter().all(|r| &r[0] == "matched"), "{recon:?}");
    assert_eq!(recon.len(), 4, "{recon:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("in scope 3 payout(s); out of scope 2 (other runs 2, outside the dates 0); other providers' payouts not compared 4"),
        "{err}"
    );

    // Run 2's last line dropped: missing, in scope; outside --from/--to it
    // is out of scope and only counted.
    statement(&[tx_two[2].as_str()], &[]);
    let out = reconcile(&w, &["--statement", "statement-a.csv", "--run", "2"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let recon = read_csv(&w.path("reconciliation.csv"));
    let missing: Vec<&str> = recon
        .iter()
        .filter(|r| &r[0] == "missing_from_statement")
        .map(|r| &r[3])
        .collect();
    assert_eq!(missing, [tx_two[2].as_str()]);
    let out = reconcile(
        &w,
        &[
            "--statement",
            "statement-a.csv",
            "--run",
            "2",
            "--from",
            "2000-01-01",
            "--to",
            "2000-01-31",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let summary = read_csv(&w.path("reconciliation.csv.summary.csv"));
    assert_eq!((&summary[0][7], &summary[0][5]), ("1", "0"), "{summary:?}");

    // Run 1's second payout, still unknown, listed twice with conflicting
    // statuses: it settles by neither line and both are named.
    let [id, account, amount, currency, _, date] = sandbox_statement(&a)
        .into_iter()
        .find(|l| l[0] == tx_one[1])
        .unwrap();
    let twice = [
        format!("{id},{account},{amount},{currency},Failed,{date}"),
        format!("{id},{account},{amount},{currency},Successful,{date}"),
    ];
    statement(&[], &twice);
    let out = reconcile(&w, &["--statement", "statement-a.csv"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert!(
        !stdout(&out).contains(&format!("{id}: unknown ->")),
        "{}",
        text(&out)
    );
    assert!(
        stdout(&out).contains(&format!(
            "{id}: not settled: 2 lines for this id, with conflicting statuses: line 6 \"Failed\", line 7 \"Successful\""
        )),
        "{}",
        text(&out)
    );
    let recon = read_csv(&w.path("reconciliation.csv"));
    let flagged: Vec<_> = recon.iter().filter(|r| r[3] == id).collect();
    assert_eq!(flagged.len(), 2);
    assert!(
        flagged
            .iter()
            .all(|r| &r[0] == "duplicate_in_statement" && &r[4] == "unknown")
    );
    let open = reconcile(&w, &[]);
    assert!(stdout(&open).contains(&id), "{}", text(&open));
    // A later run of the same file does not pay it again (the provider
    // paid it once; a second execute would pay twice here).
    let later = w.run(&one, &a.base_url(), &["--ambiguous", "hold"]);
    assert_ne!(code(&later), 1, "{}", text(&later));
    assert_ne!(code(&later), 2, "{}", text(&later));
    let ledger = a.ledger();
    assert_eq!(ledger.get(&id).unwrap().debits, 1, "{:?}", ledger.get(&id));
    paid_once_per_person(&ledger, &[&tx_one[0], &tx_one[1]]);
}

/// The payroll the workbook fixtures' statements speak about: three
/// payouts the provider paid and one it failed, all answered ambiguously
/// (magic accounts …503, …513, …504), and one paid cleanly.
const WORKBOOK_PAYROLL: &str = "transaction_id,account_id,amount,currency,payout_method_id,beneficiary_firstname,beneficiary_lastname\n\
    PAIE-2611-001,22501000000000503,25000,XOF,momo,Awa,Koné\n\
    PAIE-2611-002,22502000000000513,30000,XOF,momo,Bo,Lee\n\
    PAIE-2611-003,22503000000000504,1250000,XOF,momo,Chi,Obi\n\
    PAIE-2611-004,22504000000000503,1250.50,EUR,momo,Dee,Ama\n\
    PAIE-2611-005,2250700000017,18000,XOF,momo,Eli,Sow\n";

/// A LibreOffice-written workbook statement (tests/fixtures/
/// make-statement.sh xlsx): a cover sheet without the statement's headers
/// (skipped and named), then the operations below two title rows, amounts
/// in number cells (an EUR fraction, read plainly although the portal's
/// CSV exports need `number_format = "fr"`), dates in date cells, and a
/// Total row whose saved SUMIF equals the lines above. Every unknown payout
/// the provider paid or failed is settled; nothing is left: exit 0.
#[test]
fn a_workbook_statement_with_a_cover_sheet_settles_like_its_csv() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/releve-novembre.xlsx");
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.write("payrun.toml", PORTAL_CONFIG);
    std::fs::copy(&fixture, w.path("releve-novembre.xlsx")).unwrap();
    let file = w.write("paie.csv", WORKBOOK_PAYROLL);
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let out = reconcile(&w, &["--statement", "releve-novembre.xlsx"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let said = stdout(&out);
    for (id, to) in [
        ("PAIE-2611-001", "executed"),
        ("PAIE-2611-002", "execute_failed"),
        ("PAIE-2611-003", "executed"),
        ("PAIE-2611-004", "executed"),
    ] {
        assert!(
            said.contains(&format!("{id}: unknown -> {to} (statement line")),
            "{id}: {}",
            text(&out)
        );
    }
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains("sheet \"Résumé\" has no statement header row"),
        "{err}"
    );
    assert!(
        err.contains("sheet \"Opérations\": rows 1 to 2 before the header row (row 4)"),
        "{err}"
    );
    assert!(
        err.contains("line 10") && err.contains("equal to the sum of the lines above"),
        "{err}"
    );
    let ledger = sb.ledger();
    assert_eq!(ledger.get("PAIE-2611-002").unwrap().status, "FAILED");
    assert_eq!(code(&reconcile(&w, &[])), 0, "nothing left open");
}

/// A LibreOffice-written `.ods` statement with one sheet per currency
/// (tests/fixtures/make-statement.sh ods): a cover sheet (skipped and
/// named), a hidden draft sheet whose line contradicts the real one (never
/// read, and named), then "XOF" and "EUR", each below a title row, with a
/// "Sous-total" row equal to its lines. Lines are named by their sheet.
/// `--sheet EUR` reads that sheet alone (the XOF payouts are then missing
/// from it); the whole workbook settles every unknown payout: exit 0.
#[test]
fn a_statement_workbook_with_a_sheet_per_currency_is_read_sheet_by_sheet() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/releve-par-devise.ods");
    let sb = Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ..SandboxConfig::default()
    });
    let w = Work::new();
    w.write("payrun.toml", PORTAL_CONFIG);
    std::fs::copy(&fixture, w.path("releve.ods")).unwrap();
    let file = w.write("paie.csv", WORKBOOK_PAYROLL);
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));

    let out = reconcile(&w, &["--statement", "releve.ods", "--sheet", "EUR"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains("PAIE-2611-004: unknown -> executed (statement line 4"),
        "{}",
        text(&out)
    );
    assert!(
        !said.contains("PAIE-2611-001: unknown ->"),
        "{}",
        text(&out)
    );
    let recon = read_csv(&w.path("reconciliation.csv"));
    let missing = recon
        .iter()
        .filter(|r| &r[0] == "missing_from_statement")
        .count();
    assert_eq!(missing, 4, "{recon:?}");

    let out = reconcile(&w, &["--statement", "releve.ods"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let said = stdout(&out);
    for (id, to, place) in [
        ("PAIE-2611-001", "executed", "sheet \"XOF\" line 4"),
        ("PAIE-2611-002", "execute_failed", "sheet \"XOF\" line 5"),
        ("PAIE-2611-003", "executed", "sheet \"XOF\" line 6"),
    ] {
        assert!(
            said.contains(&format!("{id}: unknown -> {to} (statement {place}")),
            "{id}: {}",
            text(&out)
        );
    }
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    for expected in [
        "sheet \"Synthèse\" has no statement header row",
        "sheet \"Brouillon\" is hidden (or a chart): not read",
        "sheet \"XOF\": row 1 before the header row (row 3) was skipped",
        "sheet \"XOF\" line 8 (\"Sous-total 1323000 XOF\") is a total line, equal to the sum",
        "sheet \"EUR\" line 5",
    ] {
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let recon = read_csv(&w.path("reconciliation.csv"));
    let sheets: Vec<(&str, &str)> = recon.iter().map(|r| (&r[3], &r[14])).collect();
    assert!(sheets.contains(&("PAIE-2611-004", "EUR")), "{sheets:?}");
    assert!(sheets.contains(&("PAIE-2611-005", "XOF")), "{sheets:?}");
    assert_eq!(sb.ledger().get("PAIE-2611-004").unwrap().debits, 1);
    assert_eq!(code(&reconcile(&w, &[])), 0, "nothing left open");
}
