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
        "account_id,Montant,currency,beneficiary_firstname,beneficiary_lastname,payout_method_id\n1,2,XOF,a,b,momo\n",
    );
    let o = validate(dir.path(), &[&f]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("missing required column amount"), "{err}");
    assert!(err.contains("\"Montant\""), "{err}");
    assert!(err.contains("[columns]"), "{err}");
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
                "latin1.csv",
                [
                    format!("{HEADER}\nT1,1,5,XOF,momo,x,Ana,Lee,,\nT2,2,5,XOF,momo,x,Andr")
                        .into_bytes(),
                    vec![0xE9],
                    b",Lee,,\n".to_vec(),
                ]
                .concat(),
            ),
            "line 3 (row 3, field 7) is not valid UTF-8: byte 0xE9",
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
        // A phone number stored as a number has lost its `+`.
        assert!(out.contains("row 2, column Téléphone"), "{out}");
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
}
