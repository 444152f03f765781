//! End-to-end tests of what payrun writes for people (issue 18, the
//! operator's month): spreadsheet-ready reports (the payroll's delimiter
//! and BOM, `.xlsx` read back with calamine), the approval page (rendered
//! in a real headless Chromium when it is installed), outputs that would
//! overwrite an input, reconcile's CSV, `init`, `status` and `--help`.

mod common;

use calamine::{Data, Reader, Xlsx, open_workbook};
use common::browser::check_in_chromium;
use common::*;
use payrun::sandbox::SandboxConfig;
use std::path::Path;
use std::process::Command;

fn payrun(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(dir)
        .env("PAYRUN_API_KEY", KEY)
        // The per-user data folder of a test is its own temporary folder.
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("RUST_LOG")
        .args(args)
        .output()
        .unwrap()
}

const BOM: &str = "\u{feff}";

/// `payrun run FILE` against `base_url` with the test database and the
/// given report path.
fn run_to(
    w: &Work,
    file: &Path,
    base_url: &str,
    report: &str,
    extra: &[&str],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env_remove("RUST_LOG")
        .arg("run")
        .arg(file)
        .args([
            "--base-url",
            base_url,
            "--report",
            report,
            "--quiet",
            "--db",
        ])
        .arg(w.db())
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_semicolon_payroll_with_a_bom_gets_a_semicolon_report_with_a_bom() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let body = format!("{BOM}{}", payroll(3, account).replace(',', ";"));
    let file = w.write("paie.csv", &body);
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let bytes = std::fs::read(w.report()).unwrap();
    assert!(bytes.starts_with(BOM.as_bytes()), "no BOM");
    let report = String::from_utf8(bytes).unwrap();
    let header = report.lines().next().unwrap();
    assert!(
        header.starts_with(&format!("{BOM}row;transaction_id;account_id")),
        "{header}"
    );
    let mut r = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(&report.as_bytes()[BOM.len()..]);
    let rows: Vec<_> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| &r[6] == "executed"), "{rows:?}");
    let summary = std::fs::read_to_string(w.path("report.csv.summary.csv")).unwrap();
    assert!(
        summary.starts_with(&format!("{BOM}currency;state;count;total")),
        "{summary}"
    );
    // A plain comma payroll keeps the plain report.
    let w2 = Work::new();
    let file = w2.write("payroll.csv", &payroll(1, |i| account(i + 10)));
    let out = w2.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let plain = std::fs::read_to_string(w2.report()).unwrap();
    assert!(plain.starts_with("row,transaction_id,"), "{plain}");
}

#[test]
fn an_xlsx_report_keeps_accounts_as_text_amounts_as_numbers_and_totals_per_currency() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    // Two currencies, with an account Excel would show as 2.25E+12.
    let body = format!(
        "{HEADER}\n2250701020304,197500,XOF,momo,May,Aïcha,N'Guessan\n\
         2250505112233,210000,XOF,momo,May,Kouadio,Koffi\n\
         2330241234567,1250.50,GHS,momo,May,Ama,Mensah\n"
    );
    let file = w.write("payroll.csv", &body);
    let cfg = w.write(
        "payrun.toml",
        "report_language = \"fr\"\namount_unit = \"minor\"\n",
    );
    let xlsx = w.path("report.xlsx");
    let out = run_to(
        &w,
        &file,
        &sb.base_url(),
        xlsx.to_str().unwrap(),
        &["--config", cfg.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let mut book: Xlsx<_> = open_workbook(&xlsx).unwrap();
    let names = book.sheet_names();
    assert_eq!(names, vec!["Rapport".to_string(), "Synthèse".to_string()]);
    let sheet = book.worksheet_range("Rapport").unwrap();
    let rows: Vec<Vec<Data>> = sheet.rows().map(|r| r.to_vec()).collect();
    // French header.
    assert_eq!(rows[0][2], Data::String("compte".into()));
    assert_eq!(rows[0][4], Data::String("montant".into()));
    // Identifiers are text, amounts are numbers.
    assert_eq!(rows[1][2], Data::String("2250701020304".into()));
    assert_eq!(rows[1][4], Data::Float(197500.0));
    assert_eq!(rows[3][4], Data::Float(1250.5));
    assert_eq!(rows[1][6], Data::String("executed".into()));
    // One totals row per currency, after a blank line.
    let totals: Vec<&Vec<Data>> = rows
        .iter()
        .filter(|r| matches!(&r[3], Data::String(s) if s.starts_with("total ")))
        .collect();
    assert_eq!(totals.len(), 2, "{rows:?}");
    assert_eq!(totals[0][3], Data::String("total GHS (1 paiements)".into()));
    assert_eq!(totals[0][4], Data::Float(1250.5));
    assert_eq!(totals[1][4], Data::Float(407500.0));
    // Amount cells carry the currency's decimals.
    let formats = std::process::Command::new("unzip")
        .args(["-p", xlsx.to_str().unwrap(), "xl/styles.xml"])
        .output();
    if let Ok(f) = formats
        && f.status.success()
    {
        let styles = String::from_utf8_lossy(&f.stdout);
        assert!(
            styles.contains("#,##0.00") && styles.contains("formatCode=\"#,##0\""),
            "{styles}"
        );
    }
}

#[test]
fn reconcile_rewrites_the_report_so_a_settled_payout_is_not_unknown() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let body = format!("{BOM}{}", payroll(2, accounts).replace(',', ";"));
    let file = w.write("payroll.csv", &body);
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let read = |w: &Work| {
        let body = std::fs::read_to_string(w.report()).unwrap();
        assert!(body.starts_with(BOM), "the rewrite keeps the BOM");
        let mut r = csv::ReaderBuilder::new()
            .delimiter(b';')
            .from_reader(&body.as_bytes()[BOM.len()..]);
        r.records().map(Result::unwrap).collect::<Vec<_>>()
    };
    let rows = read(&w);
    assert_eq!(&rows[0][6], "unknown");
    let tx = rows[0][1].to_string();
    let db = w.db().display().to_string();
    let out = payrun(
        w.dir.path(),
        &[
            "reconcile",
            "--db",
            &db,
            "--mark",
            "executed",
            &tx,
            "--reason",
            "statement line 4",
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let rows = read(&w);
    assert_eq!(&rows[0][6], "executed", "{rows:?}");
    assert_eq!(&rows[0][7], "OPERATOR_MARKED_EXECUTED");
}

#[test]
fn reconcile_listing_and_audit_are_proper_formula_safe_csv() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &payroll(2, accounts));
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let db = w.db().display().to_string();
    let out = payrun(w.dir.path(), &["reconcile", "--db", &db]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "run",
            "row",
            "transaction_id",
            "state",
            "account_id",
            "amount",
            "currency",
            "what_to_do"
        ]
    );
    let listed: Vec<_> = r.records().map(Result::unwrap).collect();
    assert_eq!(listed.len(), 1, "stdout is one CSV table: {}", text(&out));
    let tx = listed[0][2].to_string();
    let reason = "=HYPERLINK(\"x\"), paid, per statement";
    let out = payrun(
        w.dir.path(),
        &[
            "reconcile",
            "--db",
            &db,
            "--mark",
            "failed",
            &tx,
            "--reason",
            reason,
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = payrun(w.dir.path(), &["reconcile", "--db", &db, "--audit"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    // The run's own lines (who prepared it) stand beside the payouts'.
    let audit: Vec<_> = r
        .records()
        .map(Result::unwrap)
        .filter(|l| &l[3] != "prepared")
        .collect();
    assert_eq!(audit.len(), 1, "{}", text(&out));
    assert_eq!(audit[0].len(), 7);
    // The commas stay inside the one field, and the formula is defused.
    assert_eq!(&audit[0][6], &format!("'{reason}"));
}

#[test]
fn an_output_that_is_an_input_is_refused_before_anything_is_written() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let body = payroll(2, account);
    let file = w.write("payroll.csv", &body);
    let cases: Vec<(String, &str)> = vec![
        (file.display().to_string(), "payroll"),
        (
            w.dir
                .path()
                .join(".")
                .join("payroll.csv")
                .display()
                .to_string(),
            "payroll",
        ),
        (w.db().display().to_string(), "database"),
    ];
    #[cfg(unix)]
    let cases = {
        let mut c = cases;
        let link = w.path("link.csv");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        c.push((link.display().to_string(), "payroll"));
        c
    };
    for (report, role) in cases {
        let out = run_to(&w, &file, &sb.base_url(), &report, &[]);
        assert_eq!(code(&out), 1, "{report}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("refusing") && err.contains(role), "{err}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            body,
            "payroll untouched"
        );
    }
    assert!(
        !w.db().exists(),
        "nothing was written, not even the database"
    );
    assert!(sb.ledger().transactions.is_empty(), "nothing was sent");
    // `rejected.csv` is written beside the report: a payroll named so is safe.
    let rej = w.write("rejected.csv", &body);
    let out = w.run(&rej, &sb.base_url(), &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&rej).unwrap(), body);
    // `payrun report --out` on the database or on the run's payroll.
    let good = w.write("good.csv", &payroll(1, |i| account(i + 50)));
    let out = w.run(&good, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let good_text = std::fs::read_to_string(&good).unwrap();
    let db = w.db().display().to_string();
    for target in [good.display().to_string(), db.clone()] {
        let out = payrun(w.dir.path(), &["report", "--db", &db, "--out", &target]);
        assert_eq!(code(&out), 1, "{target}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("refusing"),
            "{}",
            text(&out)
        );
    }
    assert_eq!(std::fs::read_to_string(&good).unwrap(), good_text);
    // `validate --rejected` on the payroll.
    let out = payrun(
        w.dir.path(),
        &["validate", "payroll.csv", "--rejected", "payroll.csv"],
    );
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), body);
}

#[test]
fn initiate_only_writes_an_approval_page_that_renders_in_a_browser() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let mut body = format!("{HEADER}\n");
    for i in 0..12 {
        body.push_str(&format!(
            "{},{},{},momo,May,Ama <b>&</b>,Mensah{i}\n",
            account(i),
            100_000 + i * 1000,
            if i % 3 == 0 { "GHS" } else { "XOF" }
        ));
    }
    let file = w.write("payroll.csv", &body);
    let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let page = w.path("approval-run-1.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // 8 XOF rows: 101000+102000+104000+105000+107000+108000+110000+111000.
    assert!(html.contains("848,000 XOF"), "{html}");
    assert!(html.contains("418,000 GHS"), "{html}");
    assert!(html.contains("Ama &lt;b&gt;&amp;&lt;/b&gt;"), "escaped");
    let sha = payrun::engine::import::file_sha256(&file).unwrap();
    assert!(html.contains(&sha), "the file's hash is shown");
    for external in ["src=", "<link", "url(", "<script"] {
        assert!(!html.contains(external), "self-contained: {external}");
    }
    // `payrun summary RUN --html FILE` writes the same page on demand.
    let db = w.db().display().to_string();
    let again = w.path("again.html");
    let out = payrun(
        w.dir.path(),
        &[
            "summary",
            "1",
            "--db",
            &db,
            "--html",
            again.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("XOF: 8 payout(s), total 848,000"));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), html);
    // It refuses to write over the database.
    let out = payrun(w.dir.path(), &["summary", "--db", &db, "--html", &db]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    check_in_chromium(
        &page,
        &["848,000 XOF", "418,000 GHS", "Payroll run 1: approval"],
    );
}

#[test]
fn init_writes_a_working_start_and_never_overwrites() {
    let w = Work::new();
    let out = payrun(w.dir.path(), &["init", "--lang", "fr"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    // What it says is French too (issue 35).
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("écrit\u{a0}: "), "{said}");
    assert!(
        said.contains("suite\u{a0}: remplissez payroll-template.csv (ou le .xlsx)"),
        "{said}"
    );
    assert!(
        !said.contains("wrote ") && !said.contains("next:"),
        "{said}"
    );
    let toml = std::fs::read_to_string(w.path("payrun.toml")).unwrap();
    assert!(toml.contains("language = \"fr\"\n"), "{toml}");
    assert!(toml.contains("number_format = \"fr\"\n"), "{toml}");
    let csv = std::fs::read_to_string(w.path("payroll-template.csv")).unwrap();
    assert!(
        csv.starts_with("\u{feff}Référence;Compte;Montant;Devise"),
        "{csv}"
    );
    let mut book: Xlsx<_> = open_workbook(w.path("payroll-template.xlsx")).unwrap();
    let first = book.worksheet_range_at(0).unwrap().unwrap();
    assert_eq!(first.get((0, 2)), Some(&Data::String("Montant".into())));
    assert_eq!(
        first.get((1, 1)),
        Some(&Data::String("2250701020304".into()))
    );
    // The template validates with the config written beside it, both forms.
    for t in ["payroll-template.csv", "payroll-template.xlsx"] {
        let out = payrun(w.dir.path(), &["validate", t]);
        assert_eq!(code(&out), 0, "{t}: {}", text(&out));
    }
    // A second init refuses and leaves the files alone.
    std::fs::write(w.path("payrun.toml"), "# mine\n").unwrap();
    let out = payrun(w.dir.path(), &["init"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(w.path("payrun.toml")).unwrap(),
        "# mine\n"
    );
    // --from prints the [columns] table for a file's headers.
    let file = w.write(
        "export.csv",
        "Matricule,Montant,Devise,Compte,Prénom,Nom\n1,2,XOF,3,A,B\n",
    );
    let out = payrun(w.dir.path(), &["init", "--from", file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("\"Montant\" = \"amount\""), "{table}");
    assert!(table.contains("\"Compte\" = \"account_id\""), "{table}");
    assert!(table.contains("# \"Matricule\" = \"\""), "{table}");
}

/// Issue 35: `payrun sandbox` and `payrun probe` print in the config's
/// `language` (or `--lang`); the sandbox's URL stays last on its line.
#[test]
fn sandbox_and_probe_speak_the_configs_language() {
    use std::io::BufRead;
    let w = Work::new();
    w.write("payrun.toml", "language = \"fr\"\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .args(["sandbox", "--listen", "127.0.0.1:0", "--seed", "7"])
        .env_remove("PAYRUN_SANDBOX_API_KEY")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    let (first, key, seed) = (next(), next(), next());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        first.starts_with("bac à sable payrun à l'écoute sur http://127.0.0.1:"),
        "{first}"
    );
    assert_eq!(key, "clé d'API\u{a0}: sk_sandbox_test");
    assert_eq!(seed, "graine\u{a0}: 7");

    let sb = Sandbox::start(SandboxConfig::default());
    let out = payrun(w.dir.path(), &["probe", "--base-url", &sb.base_url()]);
    let said = String::from_utf8_lossy(&out.stdout);
    for french in [
        "sondage payrun de ",
        "(paiement d'essai ",
        "   envoyé\u{a0}:   POST ",
        "   réponse\u{a0}:  HTTP ",
        "   constat\u{a0}:  [",
    ] {
        assert!(said.contains(french), "{french:?} not in\n{said}");
    }
    for english in ["payrun probe of", "sent:", "answer:", "finding:"] {
        assert!(!said.contains(english), "{english:?} in\n{said}");
    }
    // --lang overrides the config.
    let out = payrun(
        w.dir.path(),
        &["probe", "--lang", "en", "--base-url", &sb.base_url()],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("payrun probe of"));
}

#[test]
fn status_says_which_database_it_reads() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &payroll(1, account));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let db = w.db().display().to_string();
    let out = payrun(w.dir.path(), &["status", "--db", &db]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.starts_with(&format!("database: {db}\n")), "{shown}");
    // Missing: the absolute path it looked for is named.
    let out = payrun(w.dir.path(), &["status", "--db", "nowhere.db"]);
    assert_eq!(code(&out), 1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&w.path("nowhere.db").display().to_string()),
        "{err}"
    );
}

#[test]
fn every_subcommand_help_has_an_example_the_key_and_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    // Every subcommand `payrun --help` lists, so a new one is checked too.
    let top = payrun(dir.path(), &["--help"]);
    let top = String::from_utf8_lossy(&top.stdout).to_string();
    let subs: Vec<&str> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|s| *s != "help")
        .collect();
    for expected in [
        "validate", "run", "init", "sandbox", "probe", "cancel", "approve",
    ] {
        assert!(subs.contains(&expected), "{expected} not in {subs:?}");
    }
    for sub in subs {
        let out = payrun(dir.path(), &[sub, "--help"]);
        assert_eq!(code(&out), 0, "{sub}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("Example"), "{sub}: no example\n{help}");
        assert!(help.contains("PAYRUN_API_KEY"), "{sub}: no key\n{help}");
        assert!(
            help.contains("Exit codes: 0"),
            "{sub}: no exit codes\n{help}"
        );
        // A file a help text names is one the repository has.
        for word in help.split(|c: char| c.is_whitespace() || "()`,;".contains(c)) {
            if word.ends_with(".md") {
                let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(word);
                assert!(
                    path.exists(),
                    "{sub} --help names {word}, which does not exist"
                );
            }
        }
    }
}

/// Every relative link of README.md, ARCHITECTURE.md and docs/*.md
/// resolves to a file of the repository (an anchor after `#` aside).
#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    let mut broken = Vec::new();
    let mut seen = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        // `[text](target)`: the target up to the closing bracket.
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].trim();
            let target = target.split_whitespace().next().unwrap_or("");
            if target.is_empty()
                || target.starts_with('#')
                || target.contains("://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let file = target.split('#').next().unwrap();
            seen += 1;
            if !page.parent().unwrap().join(file).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
        // "the README's ... section" style pointers to the sandbox's
        // magic accounts are links now.
        assert!(
            !text.contains("the README's sandbox section"),
            "{}: points to a README section that moved",
            page.display()
        );
    }
    assert!(
        seen > 10,
        "only {seen} relative links found: is the parser right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// A payrun command in `w`'s folder as OS user `user` (four eyes need
/// two people), without --quiet: what a clerk sees.
fn clerk(w: &Work, user: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .env("PAYRUN_BACKOFF_MS", TEST_BACKOFF_MS)
        .env("USER", user)
        .env_remove("RUST_LOG")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The Bar of the French issue: a French payroll as Excel saves it (its
/// own headers, `;`, a BOM, CRLF, `150 000` amounts, accounts typed with
/// spaces) goes from `payrun init --lang fr --from FILE` to a paid run on
/// the sandbox with no edit of the config but the provider's URL and the
/// sender, and every output for people is in French with grouped amounts.
#[test]
fn a_french_payroll_from_init_to_paid_in_french() {
    const N: usize = 30;
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let mut csv = String::from("\u{feff}Nom;Prénom;Numéro Mobile Money;Montant\r\n");
    let mut total = 0u64;
    for i in 0..N {
        let amount = 150_000 + 1_000 * i as u64;
        total += amount;
        let thousands = amount / 1000;
        csv.push_str(&format!(
            "Koffi{i};Aya;07 08 12 {:02} {:02};{thousands} 000\r\n",
            i / 10 + 10,
            i % 10 + 10
        ));
    }
    assert_eq!(total, 4_935_000);
    let file = w.write("paie-novembre.csv", &csv);
    let name = "paie-novembre.csv";

    // 1. init writes the config that reads the file as it is.
    let out = clerk(&w, "awa", &["init", "--lang", "fr", "--from", name]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(!shown.contains("not recognised"), "{shown}");
    assert!(!shown.contains("still missing"), "{shown}");
    let written = std::fs::read_to_string(w.path("payrun.toml")).unwrap();
    for key in [
        "language = \"fr\"",
        "number_format = \"fr\"",
        "default_currency = \"XOF\"",
    ] {
        assert!(written.contains(key), "{key} not in\n{written}");
    }
    // 2. The only edits: the provider's URL and the sender.
    let edited = format!(
        "base_url = \"{}\"\n{}",
        sb.base_url(),
        written
            .replace("payroll@example.com", "paie@entreprise.ci")
            .replace("firstname = \"Payroll\"", "firstname = \"Service\"")
            .replace("lastname = \"Office\"", "lastname = \"Paie\"")
    );
    std::fs::write(w.path("payrun.toml"), &edited).unwrap();

    // 3. validate: every row read, in French, the total grouped.
    let out = clerk(&w, "awa", &["validate", name, "--rejected", "rejets.csv"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("30 ligne(s), 30 valide(s), 0 rejetée(s)"),
        "{shown}"
    );
    assert!(shown.contains("4\u{202f}935\u{202f}000"), "{shown}");
    assert!(shown.contains("Toutes les lignes sont valides."), "{shown}");
    assert!(
        shown.contains("rien n'est écrit dans rejets.csv"),
        "{shown}"
    );
    assert!(
        !w.path("rejets.csv").exists(),
        "no header-only rejected file"
    );
    let validated = text(&out);

    // 4. Initiate, approve (someone else), execute.
    let db = w.db().display().to_string();
    let report = "rapport.csv";
    let run = |user: &str, extra: &[&str]| {
        let mut args = vec!["run", name, "--db", &db, "--report", report, "--as", user];
        args.extend_from_slice(extra);
        clerk(&w, &user.to_lowercase(), &args)
    };
    let out = run("Awa", &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let mut printed = validated;
    printed.push_str(&text(&out));
    let page = std::fs::read_to_string(w.path("approval-run-1.html")).unwrap();
    for french in [
        "<html lang=\"fr\">",
        "PAS ENCORE APPROUVÉ",
        "Totaux par devise",
        "4\u{202f}935\u{202f}000 XOF",
        "150\u{202f}000",
        "Bénéficiaires",
    ] {
        assert!(page.contains(french), "{french} not in the approval page");
    }
    let totals = std::fs::read_to_string(w.path("approval-run-1.csv")).unwrap();
    assert!(
        totals.starts_with("\u{feff}devise;nombre;total;remarque"),
        "{totals}"
    );
    assert!(
        totals.contains("XOF;30;4935000;"),
        "amounts stay numbers: {totals}"
    );
    let out = clerk(
        &w,
        "kofi",
        &["approve", "1", "--as", "Kofi", "--yes", "--db", &db],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    printed.push_str(&text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("XOF\u{a0}: 30 paiement(s), total 4\u{202f}935\u{202f}000"),
        "{shown}"
    );
    assert!(shown.contains("lot 1 approuvé par Kofi"), "{shown}");
    let out = run("Awa", &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    printed.push_str(&text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    for french in [
        "devise   état",
        "exécuté",
        "4\u{202f}935\u{202f}000",
        "débit\u{a0}: aucune limite atteinte",
        "rapport\u{a0}: rapport.csv",
        "suite\u{a0}: les 30 paiement(s) sont exécutés",
    ] {
        assert!(err.contains(french), "{french} not in\n{err}");
    }
    // The progress line, the approval event, the summary, the rate (the
    // provider's latency and the queue wait apart), the report's path and
    // the verdict: French.
    for french in [
        "30/30 initiés, 30/30 exécutés, 0 en échec, 0 d'issue inconnue",
        "lot 1 approuvé par Kofi",
        "latence du fournisseur",
        "attente ",
    ] {
        assert!(err.contains(french), "{french} not in\n{err}");
    }
    let status = clerk(&w, "awa", &["status", "--db", &db]);
    assert_eq!(code(&status), 0, "{}", text(&status));
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains("exécuté 30 (4\u{202f}935\u{202f}000)"),
        "{shown}"
    );
    assert!(shown.contains("terminé"), "{shown}");
    printed.push_str(&text(&status));
    // Closing the month: the provider's statement, then nothing open.
    let releve = sandbox_statement(&sb, "&lang=fr");
    w.write("releve.csv", &releve);
    let out = clerk(
        &w,
        "awa",
        &["reconcile", "--db", &db, "--statement", "releve.csv"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = text(&out);
    for french in [
        "périmètre\u{a0}: fournisseur",
        "XOF\u{a0}: rapprochés 30 (4\u{202f}935\u{202f}000 XOF)",
        "0 écart(s)",
    ] {
        assert!(shown.contains(french), "{french} not in\n{shown}");
    }
    printed.push_str(&shown);
    let out = clerk(&w, "awa", &["reconcile", "--db", &db]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    printed.push_str(&text(&out));
    // The approver looks at the run again: French.
    let out = clerk(
        &w,
        "kofi",
        &["approve", "1", "--as", "Kofi", "--yes", "--db", &db],
    );
    printed.push_str(&text(&out));
    // Nothing a person reads in the whole month is left in English.
    for english in [
        "initiated",
        "executed",
        "executing",
        " failed",
        "unknown",
        "calls/s",
        "latency",
        "queue",
        "rate:",
        "note:",
        "next:",
        "report:",
        "approval:",
        "approved by",
        "payout(s)",
        "using the built-in sandbox",
        "checking ",
        "recorded ",
        "writing the report",
        "resuming run",
        "nothing was",
        "run again",
        "database:",
        "finished",
        "in progress",
        "prepared by",
        "states:",
        // Closing and approving (issue 35, reconcile and approve).
        "scope:",
        "in scope",
        "matched",
        "discrepanc",
        "statement sha256",
        "nothing open",
        "not final",
        "approved",
        "totalling",
        " now",
        // validate's summary
        "Note:",
        "Columns not read",
        "rows, ",
        " rejected",
        "All rows",
    ] {
        assert!(
            !printed.contains(english),
            "English {english:?} in what the clerk read:\n{printed}"
        );
    }
    // Paid once each, as typed (the provider got the account without spaces).
    let ledger = sb.ledger();
    assert_eq!(ledger.transactions.len(), N);
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
    let body = std::fs::read_to_string(w.path(report)).unwrap();
    assert!(
        body.starts_with("\u{feff}ligne;id_transaction;compte;bénéficiaire;montant"),
        "{body}"
    );
    assert!(
        body.contains(";07 08 12 10 10;Aya Koffi0;150000;XOF;executed;"),
        "{body}"
    );

    // 5. The summary and its page, in French, rendered by a browser.
    let out = clerk(
        &w,
        "awa",
        &["summary", "1", "--db", &db, "--html", "page.html"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("lot 1  paie-novembre.csv"), "{shown}");
    assert!(
        shown.contains("XOF: 30 paiement(s), total 4\u{202f}935\u{202f}000"),
        "{shown}"
    );
    check_in_chromium(
        &w.path("page.html"),
        &[
            // (the DOM dump writes U+00A0 as &nbsp;)
            "Lot de paie 1&nbsp;: approbation",
            "4\u{202f}935\u{202f}000 XOF",
            "Approuvé par Kofi",
            "<td>exécuté</td>",
        ],
    );
    let _ = file;
}
