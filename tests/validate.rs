//! End-to-end tests of `payrun validate`: the real binary on files in a
//! temporary folder, checking exit codes, summaries and `rejected.csv`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HEADER: &str = "transaction_id,account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname,beneficiary_phone,beneficiary_email";

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// Runs `payrun validate ARGS` in `dir` (so no stray ./payrun.toml is read).
fn validate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .arg("validate")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run payrun")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) -> String {
    std::fs::write(dir.join(name), content).unwrap();
    name.to_owned()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn read_csv(path: &Path) -> Vec<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    r.records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect()
}

#[test]
fn sample_payroll_is_all_valid() {
    let dir = tempfile::tempdir().unwrap();
    let file = samples().join("payroll.csv");
    let cfg = samples().join("payrun.toml");
    let o = validate(
        dir.path(),
        &[file.to_str().unwrap(), "--config", cfg.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("50 rows, 50 valid, 0 rejected"), "{out}");
    assert!(out.contains("All rows are valid."), "{out}");

    let o = validate(dir.path(), &[file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(v["rows"], 50);
    assert_eq!(v["valid"], 50);
    assert_eq!(v["rejected"], 0);
    // Sandbox currencies only, each with a count and an exact total.
    let cur = v["currencies"].as_object().unwrap();
    let codes: Vec<&str> = cur.keys().map(String::as_str).collect();
    assert_eq!(codes, ["EUR", "GHS", "KES", "NGN", "USD", "XOF"]);
    let count: u64 = cur.values().map(|c| c["count"].as_u64().unwrap()).sum();
    assert_eq!(count, 50);
    assert_eq!(v["currencies"]["XOF"]["total"], "2695000");
}

/// The French sample reads as meant with its config, and is refused
/// (amounts, status) without it.
#[test]
fn french_sample_with_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = samples().join("paie-novembre-fr.csv");
    let cfg = samples().join("paie-fr.toml");
    let o = validate(
        dir.path(),
        &[
            file.to_str().unwrap(),
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let v = json(&o);
    assert_eq!(v["currencies"]["XOF"]["total"], "407500");
    assert_eq!(v["currencies"]["GHS"]["total"], "4250.50");
    assert_eq!(v["skipped_rows"], serde_json::json!([4]));
    let o = validate(dir.path(), &[file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(json(&o)["valid"], 0);
}

#[test]
fn sample_with_errors_exits_2_and_writes_rejected_rows() {
    let dir = tempfile::tempdir().unwrap();
    let file = samples().join("payroll-with-errors.csv");
    let o = validate(
        dir.path(),
        &[file.to_str().unwrap(), "--rejected", "rejected.csv"],
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("16 rows, 7 valid, 9 rejected"), "{out}");
    for expected in [
        "row 3, column amount, value \"12 500\": thousands separators",
        "row 5, column amount, value \"-25000\": an amount must not carry a sign",
        "row 7, column currency, value \"CFA\": not an ISO 4217 currency code",
        "row 8, column transaction_id, value \"PAY-2025-03-001\": transaction_id \"PAY-2025-03-001\" is already used on row 2",
        "row 10, column account_id, value \"\": account_id is required",
        "row 12, column amount, value \"2.5E+3\": scientific notation",
        "row 13, column beneficiary_email, value \"ama.asantewaa@gmail\"",
        "row 14, column beneficiary_phone, value \"0271234567\": the number has no country code",
        "row 15, column amount, value \"4200.50\": the provider receives whole USD amounts",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }

    let rejected = read_csv(&dir.path().join("rejected.csv"));
    let original = read_csv(&file);
    assert_eq!(rejected.len(), 10, "header + 9 rows");
    assert_eq!(rejected[0].last().unwrap(), "reasons");
    assert_eq!(rejected[0][..rejected[0].len() - 1], original[0][..]);
    // Rows as they came in (row 3 of the file is its third line here),
    // except the formula-injection guard on cells starting with + or -.
    assert_eq!(rejected[1][2], "12 500");
    assert_eq!(rejected[1][8], "'+2250505112233");
    assert_eq!(rejected[2][2], "'-25000");
    assert!(rejected[1][10].starts_with("row 3, column amount"));
    for (r, o) in rejected[1..]
        .iter()
        .zip([2usize, 4, 6, 7, 9, 11, 12, 13, 14])
    {
        for (cell, orig) in r[..r.len() - 1].iter().zip(&original[o]) {
            assert_eq!(cell.trim_start_matches('\''), orig.as_str());
        }
    }
    for row in &rejected {
        for cell in row {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "unsafe cell {cell:?}"
            );
        }
    }

    // The rejected file can be re-submitted as it is: the `reasons`
    // column is ignored and the `'` guards are removed, so the same rows
    // fail for the same reasons (the duplicate id is now unique).
    let o = validate(dir.path(), &["rejected.csv", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json(&o);
    assert_eq!(v["rows"], 9);
    assert_eq!(v["rejected"], 8);
    assert_eq!(v["valid"], 1);
}

#[test]
fn json_lists_errors_with_row_column_value() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "{HEADER}\nT1,2250701020304,10.5,XOF,momo,x,Awa,Koné,,\nT2,2250701020305,100,USD,momo,x,Awa,Koné,,\n"
        ),
    );
    let o = validate(dir.path(), &[&f, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let v = json(&o);
    assert_eq!(v["rows"], 2);
    assert_eq!(v["valid"], 1);
    assert_eq!(v["rejected"], 1);
    assert_eq!(v["currencies"]["USD"]["count"], 1);
    assert_eq!(v["currencies"]["USD"]["total"], "100.00");
    let e = &v["errors"][0];
    assert_eq!(e["row"], 2);
    assert_eq!(e["column"], "amount");
    assert_eq!(e["value"], "10.5");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("XOF has 0 decimal place(s)")
    );
}

#[test]
fn semicolons_bom_crlf_and_quoted_newlines() {
    let dir = tempfile::tempdir().unwrap();
    let content = "\u{feff}Account ID;Amount;Currency;Payout Method ID;Description;Beneficiary First Name;Beneficiary-Last-Name\r\n\
                   2250701020304;25000;XOF;momo;\"Salaire; mars\r\nprime \"\"13e mois\"\"\";Zoë;N'Guessan\r\n\
                   \r\n\
                   2250701020305;-3;XOF;momo;x;Awa;Koné\r\n";
    let f = write(dir.path(), "fr.csv", content);
    let o = validate(dir.path(), &[&f, "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["rows"], 2, "{v}");
    // The description with a line break is rejected; the row is row 2 even
    // though it spans two lines, and the record after the blank line (row
    // 3) is row 4, as a spreadsheet shows them.
    let rows: Vec<u64> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["row"].as_u64().unwrap())
        .collect();
    assert_eq!(rows, [2, 4]);
    assert_eq!(v["errors"][0]["column"], "Description");
    assert_eq!(v["errors"][1]["column"], "Amount");
}

#[test]
fn french_headers_through_config_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "payrun.toml",
        "default_payout_method_id = \"momo\"\ndefault_phone_region = \"CI\"\n\
         [columns]\n\"Numéro Mobile Money\" = \"account_id\"\n\"Montant\" = \"amount\"\n\
         \"Devise\" = \"currency\"\n\"Prénom\" = \"beneficiary_firstname\"\n\
         \"Nom\" = \"beneficiary_lastname\"\n\"Téléphone\" = \"beneficiary_phone\"\n",
    );
    let f = write(
        dir.path(),
        "paie.csv",
        "Numéro Mobile Money;Montant;Devise;Prénom;Nom;Téléphone;Service\n\
         2250701020304;150000;XOF;Aïcha;N'Guessan;07 01 02 03 04;Ventes\n",
    );
    // ./payrun.toml is read by default.
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("1 row, 1 valid"));
    let o = validate(dir.path(), &[&f, "--config", &cfg]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn missing_column_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "p.csv",
        "account_id,Net,currency,beneficiary_firstname,beneficiary_lastname,payout_method_id\n1,2,XOF,a,b,momo\n",
    );
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("missing required column amount"), "{err}");
    assert!(err.contains("headers not read: \"Net\""), "{err}");
    assert!(!err.contains("\"account_id\""), "{err}");
    assert!(err.contains("[columns]"), "{err}");
    assert!(err.contains("payrun.toml in the folder"), "{err}");
}

/// A payroll program's export: a title, the company and a blank row above
/// the header, `;`, a BOM. The header row is found below them, the rows
/// above are named in the summary, rows keep their spreadsheet numbers,
/// and rejected.csv starts at the header (so it runs as it is). The same
/// rows with the header first read exactly as before: no notice.
#[test]
fn a_title_above_the_header_row_is_skipped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let header = HEADER.replace(',', ";");
    let body = "T1;2250700000001;25000;XOF;momo;Nov;Awa;Koné;;\n\
                T2;2250700000002;-5;XOF;momo;Nov;Bo;Lee;;\n";
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "\u{feff}Paie de novembre 2026;;;\nSociété Acme, Abidjan;;;\n;;;\n{header}\n{body}"
        ),
    );
    let o = validate(
        dir.path(),
        &[&f, "--format", "json", "--rejected", "rej.csv"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["rows"], 2);
    assert_eq!(v["valid"], 1);
    let notices = v["notices"].to_string();
    assert!(
        notices.contains("rows 1 to 2 before the header row (row 4) were skipped")
            && notices.contains("Paie de novembre 2026")
            && notices.contains("Société Acme, Abidjan"),
        "{notices}"
    );
    assert_eq!(errors(&v)[0].0, 6, "{v}");
    let rejected = std::fs::read_to_string(dir.path().join("rej.csv")).unwrap();
    // The input's BOM and `;` kept: it opens in columns in the same Excel.
    assert!(
        rejected.starts_with("\u{feff}transaction_id;"),
        "{rejected}"
    );
    // The same rows with the header first: no notice, same verdicts.
    let f = write(dir.path(), "q.csv", format!("{header}\n{body}"));
    let o = validate(dir.path(), &[&f, "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["notices"], serde_json::json!([]), "{v}");
    assert_eq!(
        (v["valid"].clone(), errors(&v)[0].0),
        (serde_json::json!(1), 3)
    );
    // No header within the first rows: the first row's columns are named,
    // as before.
    let f = write(dir.path(), "r.csv", format!("Paie;;\n{body}"));
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("missing required columns"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn files_that_cannot_be_validated_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(String, &str)> = vec![
        (write(dir.path(), "empty.csv", ""), "is empty"),
        (
            write(dir.path(), "header.csv", format!("{HEADER}\n\n")),
            "no data rows",
        ),
        (
            write(
                dir.path(),
                "quote.csv",
                format!(
                    "{HEADER},notes\nT1,1,5,XOF,momo,x,Ana,Lee,,,\"see memo\nT2,2,5,XOF,momo,x,Bo,Lee,,,\n"
                ),
            ),
            "line 2: a double quote (\") opened there is never closed",
        ),
        (
            "no-such-file.csv".to_owned(),
            "cannot open no-such-file.csv",
        ),
    ];
    for (file, expected) in cases {
        let rejected = dir.path().join(format!("{file}.rejected.csv"));
        let o = validate(
            dir.path(),
            &[&file, "--rejected", rejected.to_str().unwrap()],
        );
        assert_eq!(o.status.code(), Some(1), "{file}");
        assert!(stderr(&o).contains(expected), "{file}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
        // No half-written rejected file is left behind.
        assert!(!rejected.exists(), "{file}");
        let leftovers = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".partial")
            })
            .count();
        assert_eq!(leftovers, 0);
    }
}

#[test]
fn unknown_config_key_and_sheet_on_csv_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let sample = samples().join("payroll.csv");
    let cfg = write(dir.path(), "bad.toml", "amount_units = \"minor\"\n");
    let o = validate(dir.path(), &[sample.to_str().unwrap(), "--config", &cfg]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("amount_units"), "{}", stderr(&o));

    let o = validate(dir.path(), &[sample.to_str().unwrap(), "--sheet", "Paie"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--sheet"));
}

#[test]
fn minor_units_config_accepts_cents() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "minor.toml", "amount_unit = \"minor\"\n");
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "{HEADER}\nT1,US-1,1250.75,USD,bank,x,Ann,Lee,,\nT2,CI-1,1250,XOF,bank,x,Awa,Koné,,\n"
        ),
    );
    let o = validate(dir.path(), &[&f, "--config", &cfg, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(json(&o)["currencies"]["USD"]["total"], "1250.75");
}

#[test]
fn misaligned_row_is_rejected_not_shifted() {
    let dir = tempfile::tempdir().unwrap();
    // An unquoted comma in the description pushes every later cell one
    // column to the right.
    let f = write(
        dir.path(),
        "p.csv",
        format!("{HEADER}\nT1,2250701020304,5000,XOF,momo,Salaire mars, prime,Awa,Koné,,\n"),
    );
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("row 2: the row has 11 cells but the header has 10"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn formula_cells_are_neutralised_in_rejected_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "{HEADER}\n=HYPERLINK(\"http://x\"),1,0,XOF,momo,@SUM(A1),+Awa,-Koné,\"\t+225\",=1+1\n"
        ),
    );
    let o = validate(dir.path(), &[&f, "--rejected", "out.csv"]);
    assert_eq!(o.status.code(), Some(2));
    let rows = read_csv(&dir.path().join("out.csv"));
    assert_eq!(rows[1][0], "'=HYPERLINK(\"http://x\")");
    assert_eq!(rows[1][5], "'@SUM(A1)");
    assert_eq!(rows[1][6], "'+Awa");
    assert_eq!(rows[1][7], "'-Koné");
    assert_eq!(rows[1][8], "'\t+225");
    assert_eq!(rows[1][9], "'=1+1");
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// (row, column, value, message) of each error in a JSON output.
fn errors(v: &serde_json::Value) -> Vec<(u64, String, String, String)> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["row"].as_u64().unwrap(),
                e["column"].as_str().unwrap().to_owned(),
                e["value"].as_str().unwrap().to_owned(),
                e["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

const SHORT: &str =
    "account_id,amount,currency,payout_method_id,beneficiary_firstname,beneficiary_lastname";

/// `80.000` XOF is 80 or 80 000 depending on who wrote it: refused with
/// both readings, as are the other locale-dependent amounts and a pasted
/// account number; never a silent different amount.
#[test]
fn ambiguous_amounts_refused_naming_both_readings() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "{SHORT}\n\
             A1,80.000,XOF,momo,Awa,Koné\n\
             A2,1.000,XOF,momo,Awa,Koné\n\
             A3,\"1,500\",USD,momo,Ann,Lee\n\
             A4,2250700000023,XOF,momo,Awa,Koné\n\
             A5,120 000 FCFA,XOF,momo,Awa,Koné\n\
             A6,120000 FCFA,EUR,momo,Awa,Koné\n\
             A7,\"1.000,000.5\",EUR,momo,Awa,Koné\n\
             A8,120000 XOF,XOF,momo,Awa,Koné\n"
        ),
    );
    let o = validate(dir.path(), &[&f, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(v["valid"], 1, "{v}");
    let errs = errors(&v);
    let at = |row: u64| errs.iter().find(|e| e.0 == row).unwrap();
    assert_eq!((at(2).1.as_str(), at(2).2.as_str()), ("amount", "80.000"));
    assert!(
        at(2).3.contains("reads 80 the English way") && at(2).3.contains("80000 the French way"),
        "{:?}",
        at(2)
    );
    assert!(
        at(3).3.contains("reads 1 ") && at(3).3.contains("1000"),
        "{:?}",
        at(3)
    );
    assert!(
        at(4).3.contains("1500") && at(4).3.contains("1.5"),
        "{:?}",
        at(4)
    );
    assert!(at(5).3.contains("13 digits"), "{:?}", at(5));
    assert!(at(6).3.contains("number_format = \"fr\""), "{:?}", at(6));
    assert!(
        at(7).3.contains("says FCFA") && at(7).3.contains("says EUR"),
        "{:?}",
        at(7)
    );
    assert!(at(8).3.contains("fit neither"), "{:?}", at(8));
    // Minor units: `1.500` USD is not silently 1.50.
    let cfg = write(dir.path(), "minor.toml", "amount_unit = \"minor\"\n");
    let f = write(
        dir.path(),
        "m.csv",
        format!("{SHORT}\nA1,1.500,USD,momo,Ann,Lee\n"),
    );
    let o = validate(dir.path(), &[&f, "--config", &cfg]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
}

/// number_format = "fr" reads the French convention: spaces of every kind
/// and `.` between thousands, decimal comma, currency words.
#[test]
fn number_format_fr_reads_french_amounts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "payrun.toml",
        "number_format = \"fr\"\namount_unit = \"minor\"\n",
    );
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "{SHORT}\n\
             A1,\"25 000,50\",EUR,momo,Awa,Koné\n\
             A2,80.000,XOF,momo,Awa,Koné\n\
             A3,120\u{a0}000 FCFA,XOF,momo,Awa,Koné\n\
             A4,1\u{202f}500,XOF,momo,Awa,Koné\n\
             A5,12.50,EUR,momo,Awa,Koné\n"
        ),
    );
    let o = validate(dir.path(), &[&f, "--config", &cfg, "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["currencies"]["EUR"]["total"], "25000.50", "{v}");
    assert_eq!(v["currencies"]["XOF"]["total"], "201500", "{v}");
    // `12.50` does not fit the French convention: refused, with the
    // English reading named.
    let errs = errors(&v);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].0, 6);
    assert!(
        errs[0].3.contains("number_format = \"fr\""),
        "{:?}",
        errs[0]
    );
    assert!(errs[0].3.contains("12.50"), "{:?}", errs[0]);
}

#[test]
fn max_amount_per_currency() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(
        dir.path(),
        "payrun.toml",
        "[max_amount]\nXOF = 500000\nIDR = 10000000000000\n",
    );
    let f = write(
        dir.path(),
        "p.csv",
        format!(
            "{SHORT}\nA1,500000,XOF,momo,Awa,Koné\nA2,500001,XOF,momo,Awa,Koné\nA3,2250700000023,IDR,momo,Budi,Santoso\n"
        ),
    );
    let o = validate(dir.path(), &[&f, "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["valid"], 2, "{v}");
    let errs = errors(&v);
    assert_eq!(errs[0].0, 3);
    assert!(
        errs[0].3.contains("above max_amount for XOF"),
        "{:?}",
        errs[0]
    );
    let cfg_bad = write(dir.path(), "bad.toml", "[max_amount]\nCFA = 5\n");
    let o = validate(dir.path(), &[&f, "--config", &cfg_bad]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("[max_amount] \"CFA\""),
        "{}",
        stderr(&o)
    );
    drop(cfg);
}

/// French Excel's default CSV (Windows-1252, `;`) made by LibreOffice: read
/// without any config thanks to the built-in French headers, with a notice;
/// the `Statut` column payrun does not read marks a row `annulé`, which is
/// refused until a skip rule says what to do.
#[test]
fn windows_1252_french_export_with_status_column() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("paie-nov-cp1252.csv");
    let file = file.to_str().unwrap();
    let o = validate(dir.path(), &[file, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let v = json(&o);
    assert!(
        v["notices"][0].as_str().unwrap().contains("Windows-1252"),
        "{v}"
    );
    assert_eq!(v["unused_columns"], serde_json::json!(["Statut"]));
    assert_eq!(v["valid"], 2, "{v}");
    let errs = errors(&v);
    assert_eq!(
        (errs[0].0, errs[0].1.as_str(), errs[0].2.as_str()),
        (3, "Statut", "annulé")
    );
    assert!(errs[0].3.contains("[skip]"), "{:?}", errs[0]);

    let text = validate(dir.path(), &[file]);
    let out = stdout(&text);
    assert!(out.contains("Note: read as Windows-1252"), "{out}");
    assert!(out.contains("Columns not read: \"Statut\""), "{out}");

    // With a skip rule the row is left out and listed, not paid.
    let cfg = write(
        dir.path(),
        "payrun.toml",
        "[skip]\ncolumn = \"statut\"\nvalues = [\"Annulé\", \"non\"]\n",
    );
    let o = validate(dir.path(), &[file, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = json(&o);
    assert_eq!(
        (
            v["rows"].as_u64(),
            v["valid"].as_u64(),
            v["skipped"].as_u64()
        ),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(v["skipped_rows"], serde_json::json!([3]));
    assert_eq!(v["currencies"]["XOF"]["total"], "248500");
    let out = stdout(&validate(dir.path(), &[file]));
    assert!(
        out.contains("Skipped by the config's [skip] rule, not paid: 1 row (row 3)"),
        "{out}"
    );
    // The same file declared UTF-8 names the bad byte and the fix.
    write(dir.path(), "payrun.toml", "encoding = \"utf-8\"\n");
    let o = validate(dir.path(), &[file]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("encoding = \"windows-1252\""),
        "{}",
        stderr(&o)
    );
    drop(cfg);
}

/// An .xlsx written by LibreOffice with French headers needs no config.
#[test]
fn french_xlsx_needs_no_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = fixture("paie-fr.xlsx");
    let o = validate(dir.path(), &[file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let v = json(&o);
    assert_eq!(v["valid"], 1, "{v}");
    assert_eq!(v["currencies"]["XOF"]["total"], "150000");
}

#[test]
fn default_currency_and_invisible_header_characters() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "payrun.toml",
        "default_currency = \"XOF\"\ndefault_payout_method_id = \"momo\"\n",
    );
    // A second BOM and a zero-width space in the transaction_id header
    // must not hide the column (ids would be derived and rows paid twice).
    let f = write(
        dir.path(),
        "p.csv",
        "\u{feff}\u{feff}transaction\u{200b}_id,Numéro,Montant,PRENOM,Nom,Service\n\
         T-1,2250701020304,25000,Awa,Koné,Ventes\n\
         T-1,2250701020305,25000,Ali,Koné,Ventes\n\
         T-3,2250701020304,25000,Awa,Koné,Ventes\n",
    );
    let o = validate(dir.path(), &[&f, "--format", "json"]);
    let v = json(&o);
    assert_eq!(v["currencies"]["XOF"]["count"], 2, "{v}");
    let errs = errors(&v);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].3.contains("already used on row 2"), "{:?}", errs[0]);
    assert_eq!(v["unused_columns"], serde_json::json!(["Service"]));
    // Row 4 pays the same account the same amount as row 2: a notice.
    assert_eq!(v["repeated"], 1);
    assert_eq!(v["repeated_rows"], serde_json::json!([[4, 2]]));
    let out = stdout(&validate(dir.path(), &[&f]));
    assert!(out.contains("row 4 repeats row 2"), "{out}");
    let bad = write(
        dir.path(),
        "bad.toml",
        "default_currency = \"CFA\"\ndefault_payout_method_id = \"momo\"\n",
    );
    let o = validate(dir.path(), &[&f, "--config", &bad]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("default_currency"), "{}", stderr(&o));
}

#[test]
fn fund_and_withdrawn_currencies_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut content = format!("{SHORT}\n");
    let codes = [
        "BOV", "CLF", "UYW", "CHE", "CHW", "COU", "MXV", "USN", "HRK", "SLL", "ZWL", "XAU",
    ];
    for c in codes {
        content.push_str(&format!("A,100,{c},momo,Awa,Koné\n"));
    }
    let f = write(dir.path(), "p.csv", content);
    let v = json(&validate(dir.path(), &[&f, "--format", "json"]));
    assert_eq!(v["rejected"], codes.len(), "{v}");
    assert!(errors(&v).iter().all(|e| e.1 == "currency"));
}

/// A huge header line gives a short message, not one as long as the file.
#[test]
fn huge_header_line_gives_a_short_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "p.csv",
        format!("{}\n1\n", "x".repeat(3_000_000)),
    );
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stderr.len() < 2_000, "{} bytes", o.stderr.len());
    // A header row of 100,000 unread columns lists a few of them.
    let mut header = String::from(SHORT);
    let mut row = String::from("A1,100,XOF,momo,Awa,Koné");
    for i in 0..100_000 {
        header.push_str(&format!(",extra{i}"));
        row.push(',');
    }
    let f = write(dir.path(), "wide.csv", format!("{header}\n{row}\n"));
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.len() < 4_000, "{} bytes", o.stdout.len());
    assert!(stdout(&o).contains("and 99970 more"), "{}", stdout(&o));
}

mod workbooks {
    use super::*;
    use rust_xlsxwriter::{Format, Formula, Workbook};

    const COLUMNS: [&str; 7] = [
        "Numéro Mobile Money",
        "Montant",
        "Devise",
        "Prénom",
        "Nom",
        "Téléphone",
        "Date de paie",
    ];

    const FRENCH_CONFIG: &str = "default_payout_method_id = \"momo\"\n\
        [columns]\n\
        \"Numéro Mobile Money\" = \"account_id\"\n\
        \"Montant\" = \"amount\"\n\
        \"Devise\" = \"currency\"\n\
        \"Prénom\" = \"beneficiary_firstname\"\n\
        \"Nom\" = \"beneficiary_lastname\"\n\
        \"Téléphone\" = \"beneficiary_phone\"\n\
        \"Date de paie\" = \"description\"\n";

    /// A workbook whose first sheet is a cover page and whose "Paie" sheet
    /// holds the payroll, starting at row 3 (rows 1-2 are empty), with
    /// number cells for accounts and amounts, a formula, a date, a blank
    /// row and an error cell.
    fn payroll_xlsx(dir: &Path) -> PathBuf {
        let mut book = Workbook::new();
        let cover = book.add_worksheet().set_name("Résumé").unwrap();
        cover.write_string(0, 0, "Paie de mars 2025").unwrap();
        let sheet = book.add_worksheet().set_name("Paie").unwrap();
        let date = Format::new().set_num_format("yyyy-mm-dd");
        for (c, h) in COLUMNS.iter().enumerate() {
            sheet.write_string(2, c as u16, *h).unwrap();
        }
        // Row 4: account and amount as numbers, date cell.
        sheet.write_number(3, 0, 2250701020304.0).unwrap();
        sheet.write_number(3, 1, 25000.0).unwrap();
        sheet.write_string(3, 2, "XOF").unwrap();
        sheet.write_string(3, 3, "Aïcha").unwrap();
        sheet.write_string(3, 4, "N'Guessan").unwrap();
        sheet.write_string(3, 5, "+225 07 01 02 03 04").unwrap();
        sheet
            .write_number_with_format(3, 6, 45747.0, &date)
            .unwrap();
        // Row 5: amount from a formula (cached value 150000).
        sheet.write_number(4, 0, 2250505112233.0).unwrap();
        sheet
            .write_formula(4, 1, Formula::new("=100000+50000").set_result("150000"))
            .unwrap();
        sheet.write_string(4, 2, "XOF").unwrap();
        sheet.write_string(4, 3, "Kouadio").unwrap();
        sheet.write_string(4, 4, "Koffi").unwrap();
        // Row 6 is blank. Row 7: 12.5 XOF, a fraction XOF cannot have.
        sheet.write_number(6, 0, 2250102030405.0).unwrap();
        sheet.write_number(6, 1, 12.5).unwrap();
        sheet.write_string(6, 2, "XOF").unwrap();
        sheet.write_string(6, 3, "Adjoua").unwrap();
        sheet.write_string(6, 4, "Yao").unwrap();
        // Row 8: an amount cell holding #REF!.
        sheet.write_number(7, 0, 2250708091011.0).unwrap();
        sheet
            .write_formula(7, 1, Formula::new("=#REF!*2").set_result("#REF!"))
            .unwrap();
        sheet.write_string(7, 2, "XOF").unwrap();
        sheet.write_string(7, 3, "Brou").unwrap();
        sheet.write_string(7, 4, "Kouassi").unwrap();
        // Row 9: a float-noise formula result in USD: 0.1 + 0.2 is 0.3.
        sheet.write_string(8, 0, "US-CHASE-1").unwrap();
        sheet
            .write_formula(
                8,
                1,
                Formula::new("=0.1+0.2").set_result("0.30000000000000004"),
            )
            .unwrap();
        sheet.write_string(8, 2, "USD").unwrap();
        sheet.write_string(8, 3, "Sarah").unwrap();
        sheet.write_string(8, 4, "Johnson").unwrap();
        let path = dir.join("paie.xlsx");
        book.save(&path).unwrap();
        path
    }

    #[test]
    fn xlsx_with_french_headers_and_sheet() {
        let dir = tempfile::tempdir().unwrap();
        let book = payroll_xlsx(dir.path());
        let cfg = write(dir.path(), "payrun.toml", FRENCH_CONFIG);
        let minor = write(
            dir.path(),
            "minor.toml",
            format!("amount_unit = \"minor\"\n{FRENCH_CONFIG}"),
        );

        // The first sheet is the cover page: no payroll columns there.
        let o = validate(dir.path(), &[book.to_str().unwrap(), "--config", &cfg]);
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        assert!(
            stderr(&o).contains("missing required columns"),
            "{}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("worksheets are \"Résumé\", \"Paie\": if the payroll is on another one, choose it with --sheet NAME"),
            "{}",
            stderr(&o)
        );

        let o = validate(
            dir.path(),
            &[
                book.to_str().unwrap(),
                "--config",
                &minor,
                "--sheet",
                "Paie",
                "--format",
                "json",
                "--rejected",
                "rejected.csv",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert_eq!(v["rows"], 5, "{v}");
        assert_eq!(v["valid"], 3, "{v}");
        assert_eq!(v["currencies"]["XOF"]["total"], "175000");
        assert_eq!(v["currencies"]["USD"]["total"], "0.30");
        let errors: Vec<(u64, String, String)> = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["row"].as_u64().unwrap(),
                    e["column"].as_str().unwrap().to_owned(),
                    e["value"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(
            errors,
            [
                (7, "Montant".to_owned(), "12.5".to_owned()),
                (8, "Montant".to_owned(), "#REF!".to_owned()),
            ]
        );
        assert!(
            v["errors"][1]["message"]
                .as_str()
                .unwrap()
                .contains("spreadsheet error #REF!")
        );

        // rejected.csv holds the cells as text: digits, not 2.25E+12.
        let rows = read_csv(&dir.path().join("rejected.csv"));
        assert_eq!(rows[0][..7], COLUMNS.map(String::from)[..]);
        assert_eq!(rows[1][0], "2250102030405");
        assert_eq!(rows[1][1], "12.5");
        assert_eq!(rows[2][1], "#REF!");
        assert!(rows[2][7].starts_with("row 8, column Montant"));

        // Major units: 0.30 USD now has a fraction.
        let o = validate(
            dir.path(),
            &[
                book.to_str().unwrap(),
                "--sheet",
                "Paie",
                "--format",
                "json",
            ],
        );
        let v = json(&o);
        assert_eq!(v["valid"], 2, "{v}");
        assert!(
            v["errors"][2]["message"]
                .as_str()
                .unwrap()
                .contains("whole USD amounts")
        );
    }

    /// Dates are read as shown and number cells as their digits: seen in
    /// rejected.csv, which holds the cells as text.
    #[test]
    fn xlsx_dates_and_number_cells_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut book = Workbook::new();
        let sheet = book.add_worksheet();
        for (c, h) in COLUMNS.iter().enumerate() {
            sheet.write_string(0, c as u16, *h).unwrap();
        }
        sheet.write_number(1, 0, 2250701020304.0).unwrap();
        sheet.write_number(1, 1, 25000.0).unwrap();
        sheet.write_string(1, 2, "XXX").unwrap();
        sheet.write_string(1, 3, "Aïcha").unwrap();
        sheet.write_string(1, 4, "N'Guessan").unwrap();
        sheet.write_number(1, 5, 2250701020304.0).unwrap();
        let date = Format::new().set_num_format("dd/mm/yyyy");
        sheet
            .write_number_with_format(1, 6, 45747.0, &date)
            .unwrap();
        let path = dir.path().join("paie.xlsx");
        book.save(&path).unwrap();
        let cfg = write(dir.path(), "payrun.toml", FRENCH_CONFIG);
        let o = validate(
            dir.path(),
            &[
                path.to_str().unwrap(),
                "--config",
                &cfg,
                "--rejected",
                "r.csv",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        let rows = read_csv(&dir.path().join("r.csv"));
        assert_eq!(
            rows[1][..7],
            [
                "2250701020304",
                "25000",
                "XXX",
                "Aïcha",
                "N'Guessan",
                "2250701020304",
                "2025-03-31"
            ]
        );
        let out = stdout(&o);
        assert!(out.contains("row 2, column Devise, value \"XXX\""), "{out}");
        // A phone number stored as a number has lost its `+`, but its
        // digits form a valid international number: accepted.
        assert!(!out.contains("column Téléphone"), "{out}");
    }

    /// tests/fixtures/paie.ods: sheets "Notes" and "Paie"; in "Paie" row 1
    /// is empty, the header is row 2, then a valid row 3, an empty row 4
    /// and row 5 with 12.5 XOF; accounts are number cells, dates date cells.
    #[test]
    fn ods_workbook() {
        let dir = tempfile::tempdir().unwrap();
        let ods = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/paie.ods");
        let cfg = write(dir.path(), "payrun.toml", FRENCH_CONFIG);
        let o = validate(
            dir.path(),
            &[
                ods.to_str().unwrap(),
                "--config",
                &cfg,
                "--sheet",
                "Paie",
                "--rejected",
                "r.csv",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        assert!(stdout(&o).contains("2 rows, 1 valid, 1 rejected"));
        assert!(
            stdout(&o)
                .contains("row 5, column Montant, value \"12.5\": XOF has 0 decimal place(s)")
        );
        let rows = read_csv(&dir.path().join("r.csv"));
        assert_eq!(
            rows[1][..7],
            [
                "2250505112233",
                "12.5",
                "XOF",
                "Kouadio",
                "Koffi",
                "'+2250505112233",
                "2025-03-31"
            ]
        );
    }

    /// A hidden first sheet (lookups, an old version) is skipped, with a
    /// notice; --sheet still reaches it.
    #[test]
    fn hidden_first_sheet_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut book = Workbook::new();
        let old = book.add_worksheet().set_name("Ancien").unwrap();
        old.write_string(0, 0, "vieux").unwrap();
        old.set_hidden(true);
        let sheet = book.add_worksheet().set_name("Paie").unwrap();
        // A workbook's active sheet cannot be hidden.
        sheet.set_active(true);
        for (c, h) in [
            "Numéro",
            "Montant",
            "Devise",
            "Prénom",
            "Nom",
            "Mode de paiement",
        ]
        .iter()
        .enumerate()
        {
            sheet.write_string(0, c as u16, *h).unwrap();
        }
        sheet.write_string(1, 0, "2250701020304").unwrap();
        sheet.write_number(1, 1, 25000.0).unwrap();
        for (c, v) in ["XOF", "Awa", "Koné", "momo"].iter().enumerate() {
            sheet.write_string(1, c as u16 + 2, *v).unwrap();
        }
        let path = dir.path().join("paie.xlsx");
        book.save(&path).unwrap();
        let o = validate(dir.path(), &[path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert!(
            v["notices"][0].as_str().unwrap().contains("\"Ancien\""),
            "{v}"
        );
        let o = validate(dir.path(), &[path.to_str().unwrap(), "--sheet", "Ancien"]);
        assert_eq!(o.status.code(), Some(1));
    }

    /// A TOTAL row at the bottom is a control total, not a payout and not
    /// a reason to reject the file; one that does not match is refused.
    #[test]
    fn totals_row_is_a_control_total() {
        let dir = tempfile::tempdir().unwrap();
        let make = |total: &str, label: &str| {
            let mut book = Workbook::new();
            let sheet = book.add_worksheet().set_name("Paie").unwrap();
            for (c, h) in [
                "Numéro",
                "Montant",
                "Devise",
                "Prénom",
                "Nom",
                "Mode de paiement",
            ]
            .iter()
            .enumerate()
            {
                sheet.write_string(0, c as u16, *h).unwrap();
            }
            for (r, (acct, amount)) in [("2250701020304", 25000.0), ("2250701020305", 30000.0)]
                .into_iter()
                .enumerate()
            {
                let r = r as u32 + 1;
                sheet.write_string(r, 0, acct).unwrap();
                sheet.write_number(r, 1, amount).unwrap();
                for (c, v) in ["XOF", "Awa", "Koné", "momo"].iter().enumerate() {
                    sheet.write_string(r, c as u16 + 2, *v).unwrap();
                }
            }
            sheet.write_string(3, 4, label).unwrap();
            sheet
                .write_formula(3, 1, Formula::new("=SUM(B2:B3)").set_result(total))
                .unwrap();
            let path = dir.path().join(format!("paie-{total}.xlsx"));
            book.save(&path).unwrap();
            path
        };
        let ok = make("55000", "Total général");
        let o = validate(dir.path(), &[ok.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert_eq!(v["valid"], 2);
        assert_eq!(v["control_total"]["row"], 4);
        assert_eq!(v["control_total"]["total"], "55000");
        assert!(
            v["notices"][0].as_str().unwrap().contains("totals row"),
            "{v}"
        );
        let bad = make("60000", "TOTAL");
        let o = validate(dir.path(), &[bad.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stdout(&o).contains("row 4: this is a totals row of 60000 XOF, but the valid rows above add up to 55000 XOF"),
            "{}",
            stdout(&o)
        );
    }

    /// A formula saved without its result is named as such, not read as
    /// an empty amount.
    #[test]
    fn formula_without_saved_value() {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture("formula-no-value.xlsx");
        let o = validate(dir.path(), &[file.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let errs = errors(&json(&o));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            (errs[0].0, errs[0].1.as_str(), errs[0].2.as_str()),
            (2, "Montant", "=100000+50000")
        );
        assert!(errs[0].3.contains("no saved result"), "{:?}", errs[0]);
    }

    /// Tiny hostile workbooks asking for gigabytes to petabytes are
    /// refused with a message; the process never aborts.
    #[test]
    fn hostile_workbooks_refused_within_memory_budget() {
        let dir = tempfile::tempdir().unwrap();
        for (name, expected) in [
            (
                "huge-span.xlsx",
                "17179869184 cells, more than payrun reads",
            ),
            ("absurd-strings.xlsx", "claims 4000000000000000 strings"),
            (
                "repeated-rows.ods",
                "1000001028 cells, more than payrun reads in an .ods file",
            ),
            // Under calamine's own limit (100 million cells), this 1 KB
            // file made payrun take 5 GB before it was counted first.
            (
                "repeated-rows-80m.ods",
                "80001028 cells, more than payrun reads in an .ods file",
            ),
        ] {
            let o = validate(dir.path(), &[fixture(name).to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
            assert!(stderr(&o).contains(expected), "{name}: {}", stderr(&o));
            assert!(!stderr(&o).contains("memory allocation"), "{name}");
        }
    }

    #[test]
    fn unknown_sheet_and_broken_workbook_exit_1() {
        let dir = tempfile::tempdir().unwrap();
        let book = payroll_xlsx(dir.path());
        let o = validate(dir.path(), &[book.to_str().unwrap(), "--sheet", "Salaires"]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(err.contains("no worksheet named \"Salaires\""), "{err}");
        assert!(err.contains("\"Résumé\", \"Paie\""), "{err}");

        let fake = write(dir.path(), "fake.xlsx", "account_id,amount\n1,2\n");
        let o = validate(dir.path(), &[&fake]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains("cannot read fake.xlsx as a .xlsx workbook"),
            "{}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"));
    }

    /// A workbook with three payroll rows, the middle one (spreadsheet row 3)
    /// hidden in the spreadsheet program.
    fn hidden_row_xlsx(dir: &Path) -> PathBuf {
        let mut book = Workbook::new();
        let sheet = book.add_worksheet();
        for (c, h) in [
            "account_id",
            "amount",
            "currency",
            "beneficiary_firstname",
            "beneficiary_lastname",
        ]
        .iter()
        .enumerate()
        {
            sheet.write_string(0, c as u16, *h).unwrap();
        }
        for (r, (account, amount)) in [("A-1", 1000.0), ("A-2", 70000.0), ("A-3", 2000.0)]
            .into_iter()
            .enumerate()
        {
            let r = r as u32 + 1;
            sheet.write_string(r, 0, account).unwrap();
            sheet.write_number(r, 1, amount).unwrap();
            sheet.write_string(r, 2, "XOF").unwrap();
            sheet.write_string(r, 3, "Awa").unwrap();
            sheet.write_string(r, 4, "Koné").unwrap();
        }
        sheet.set_row_hidden(2).unwrap();
        let path = dir.join("hidden.xlsx");
        book.save(&path).unwrap();
        path
    }

    /// An .ods (written as its zip parts) whose header is followed by two
    /// repeated blank rows, then three payroll rows, the middle one
    /// (spreadsheet row 5) filtered out.
    fn filtered_row_ods(dir: &Path) -> PathBuf {
        use std::io::Write;
        let row = |cells: &[&str], attrs: &str| {
            let cells: String = cells
                .iter()
                .map(|c| {
                    format!(
                        r#"<table:table-cell office:value-type="string"><text:p>{c}</text:p></table:table-cell>"#
                    )
                })
                .collect();
            format!("<table:table-row{attrs}>{cells}</table:table-row>")
        };
        let header = [
            "account_id",
            "amount",
            "currency",
            "beneficiary_firstname",
            "beneficiary_lastname",
        ];
        let rows = [
            row(&header, ""),
            r#"<table:table-row table:number-rows-repeated="2"><table:table-cell/></table:table-row>"#.to_string(),
            row(&["A-1", "1000", "XOF", "Awa", "Kone"], ""),
            row(&["A-2", "70000", "XOF", "Awa", "Kone"], r#" table:visibility="filter""#),
            row(&["A-3", "2000", "XOF", "Awa", "Kone"], ""),
        ]
        .concat();
        let content = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"><office:body><office:spreadsheet><table:table table:name="Paie">{rows}</table:table></office:spreadsheet></office:body></office:document-content>"#
        );
        let path = dir.join("filtered.ods");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let opts = zip::write::SimpleFileOptions::default();
        zip.start_file("mimetype", opts).unwrap();
        zip.write_all(b"application/vnd.oasis.opendocument.spreadsheet")
            .unwrap();
        zip.start_file("META-INF/manifest.xml", opts).unwrap();
        zip.write_all(br#"<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/></manifest:manifest>"#)
            .unwrap();
        zip.start_file("content.xml", opts).unwrap();
        zip.write_all(content.as_bytes()).unwrap();
        zip.finish().unwrap();
        path
    }

    #[test]
    fn filtered_ods_rows_are_refused_or_skipped_with_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let book = filtered_row_ods(dir.path());
        write(
            dir.path(),
            "payrun.toml",
            "default_payout_method_id = \"momo\"\n",
        );
        let file = book.to_str().unwrap();
        let o = validate(dir.path(), &[file]);
        assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
        assert!(
            stderr(&o).contains("so nobody sees it: row 5;"),
            "{}",
            stderr(&o)
        );
        let o = validate(
            dir.path(),
            &[file, "--skip-hidden-rows", "--format", "json"],
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert_eq!(v["skipped_rows"], serde_json::json!([5]));
        assert_eq!(v["currencies"]["XOF"]["total"], "3000");
    }

    /// `numeric-ids.xlsx` (LibreOffice): the account of row 2 is the number
    /// 701020304 in a `0000000000` format, shown as `0701020304`; row 3's is
    /// 2250505112233 in a General format. Row 2 is read padded, as shown;
    /// row 3 is read as its digits and the column is named in a notice,
    /// since a leading zero lost there cannot be seen.
    #[test]
    fn number_cells_in_the_account_column() {
        let dir = tempfile::tempdir().unwrap();
        let book = fixture("numeric-ids.xlsx");
        let o = validate(dir.path(), &[book.to_str().unwrap(), "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert_eq!(v["valid"], 2);
        let notices: Vec<String> = v["notices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            notices,
            [
                "column \"Numéro\" holds numbers, not text (row 3): leading zeros would have been lost and payrun cannot tell; check these identifiers, and format the column as Text"
            ]
        );
        let text = stdout(&validate(dir.path(), &[book.to_str().unwrap()]));
        assert!(
            text.contains("Note: column \"Numéro\" holds numbers, not text"),
            "{text}"
        );
    }

    /// `hidden-row.xls` (LibreOffice) has row 3 (A-2, 70000) hidden, and
    /// nothing payrun reads says so. Refused, even with --skip-hidden-rows
    /// (which could not skip it); read only with --assume-no-hidden-rows,
    /// with a note, and then the hidden row is read like any other.
    #[test]
    fn xls_hidden_rows_cannot_be_checked_so_the_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "payrun.toml",
            "default_payout_method_id = \"momo\"\n",
        );
        let book = fixture("hidden-row.xls");
        let file = book.to_str().unwrap();
        for extra in [&[][..], &["--skip-hidden-rows"][..]] {
            let o = validate(dir.path(), &[&[file][..], extra].concat());
            assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", stdout(&o));
            let err = stderr(&o);
            assert!(
                err.contains("cannot tell which rows of a .xls workbook are hidden")
                    && err.contains("save the workbook as .xlsx")
                    && err.contains("--assume-no-hidden-rows"),
                "{err}"
            );
        }
        let o = validate(
            dir.path(),
            &[file, "--assume-no-hidden-rows", "--format", "json"],
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert_eq!(v["currencies"]["XOF"]["total"], "73000");
        let notices = v["notices"].to_string();
        assert!(
            notices.contains("hidden or filtered rows were not looked for"),
            "{notices}"
        );
    }

    #[test]
    fn hidden_rows_are_refused_or_skipped_with_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let book = hidden_row_xlsx(dir.path());
        write(
            dir.path(),
            "payrun.toml",
            "default_payout_method_id = \"momo\"\n",
        );
        let file = book.to_str().unwrap();
        // The whole file is refused: exit 1, "could not be validated".
        let o = validate(dir.path(), &[file]);
        assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("1 row is hidden or filtered out in the spreadsheet")
                && err.contains("row 3;")
                && err.contains("unhide them, delete them, or pass --skip-hidden-rows"),
            "{err}"
        );

        let o = validate(
            dir.path(),
            &[file, "--skip-hidden-rows", "--format", "json"],
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        let v = json(&o);
        assert_eq!(
            (
                v["rows"].as_u64(),
                v["valid"].as_u64(),
                v["skipped"].as_u64(),
                v["skipped_hidden"].as_u64()
            ),
            (Some(3), Some(2), Some(1), Some(1))
        );
        assert_eq!(v["skipped_rows"], serde_json::json!([3]));
        // The hidden 70000 is not in the total.
        assert_eq!(v["currencies"]["XOF"]["total"], "3000");
        let out = stdout(&validate(dir.path(), &[file, "--skip-hidden-rows"]));
        assert!(
            out.contains(
                "Skipped by --skip-hidden-rows (hidden or filtered rows), not paid: 1 row (row 3)"
            ),
            "{out}"
        );
    }
}
