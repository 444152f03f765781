//! `payrun validate` for a French-speaking clerk (issue 35): with
//! `language = "fr"` in the config, or `--lang fr`, every rule broken is
//! explained in French, in the terminal and in the rejected file; the JSON
//! output and the English run stay as they were.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

/// `payrun validate ARGS` in `dir` (whose payrun.toml, if any, is read).
fn validate(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .arg("validate")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run payrun")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn reasons(path: &Path) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new().from_path(path).unwrap();
    r.records()
        .map(|rec| rec.unwrap().iter().next_back().unwrap().to_owned())
        .collect()
}

/// One bad row per rule family of the sample (number format, sign,
/// scientific notation, decimals, currency, duplicate id, missing account,
/// e-mail, phone): what the French sentence says, and the English
/// sentence it replaces.
const RULES: [(&str, &str); 9] = [
    (
        "ligne 3, colonne amount, valeur \"12 500\"\u{a0}: les séparateurs de milliers et la virgule décimale ne sont lus que si la configuration dit comment le fichier écrit les nombres\u{a0}: avec number_format = \"fr\", ce montant se lit 12\u{202f}500",
        "thousands separators and decimal commas are read only when the config says",
    ),
    (
        "ligne 5, colonne amount, valeur \"-25000\"\u{a0}: un montant ne porte pas de signe",
        "an amount must not carry a sign",
    ),
    (
        "ligne 7, colonne currency, valeur \"CFA\"\u{a0}: ce n'est pas un code de devise ISO 4217\u{a0}: écrivez le code à trois lettres",
        "not an ISO 4217 currency code",
    ),
    (
        "ligne 8, colonne transaction_id, valeur \"PAY-2025-03-001\"\u{a0}: la référence de transaction (transaction_id) \"PAY-2025-03-001\" est déjà utilisée à la ligne 2",
        "is already used on row",
    ),
    (
        "ligne 10, colonne account_id, valeur \"\"\u{a0}: le compte du bénéficiaire (account_id) est obligatoire\u{a0}: renseignez-le",
        "is required: fill it in",
    ),
    (
        "ligne 12, colonne amount, valeur \"2.5E+3\"\u{a0}: la notation scientifique n'est pas acceptée",
        "scientific notation is not accepted",
    ),
    (
        "ligne 13, colonne beneficiary_email, valeur \"ama.asantewaa@gmail\"\u{a0}: ce qui suit `@` n'est pas un nom de domaine valide",
        "is not a valid domain",
    ),
    (
        "ligne 14, colonne beneficiary_phone, valeur \"0271234567\"\u{a0}: le numéro n'a pas d'indicatif pays",
        "the number has no country code",
    ),
    (
        "ligne 15, colonne amount, valeur \"4200.50\"\u{a0}: le prestataire reçoit des montants entiers en USD",
        "the provider receives whole USD amounts",
    ),
];

/// English words and phrases of the rules' sentences: none is left in
/// what a French clerk reads.
const ENGLISH: [&str; 12] = [
    "row ",
    "column ",
    "value ",
    "write ",
    "remove ",
    "fill it in",
    "the amount",
    "the currency",
    "e.g.",
    "in the config",
    " is ",
    " must ",
];

#[test]
fn every_rule_broken_is_explained_in_french() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("payrun.toml"), "language = \"fr\"\n").unwrap();
    let file = sample("payroll-with-errors.csv");
    let file = file.to_str().unwrap();
    let o = validate(dir.path(), &[file, "--rejected", "rejets.csv"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let shown = text(&o);
    assert!(
        shown.contains("16 ligne(s), 7 valide(s), 9 rejetée(s)"),
        "{shown}"
    );
    for (french, english) in RULES {
        assert!(shown.contains(french), "{french:?} not in\n{shown}");
        assert!(!shown.contains(english), "{english:?} in\n{shown}");
    }
    for english in ENGLISH {
        assert!(!shown.contains(english), "English {english:?} in\n{shown}");
    }

    // rejected.csv: the same sentences, one row each.
    let written = reasons(&dir.path().join("rejets.csv"));
    assert_eq!(written.len(), 9, "{written:?}");
    for (french, _) in RULES {
        assert!(
            written.iter().any(|r| r.contains(french)),
            "{french:?} not in {written:?}"
        );
    }
    for english in ENGLISH {
        assert!(
            written.iter().all(|r| !r.contains(english)),
            "English {english:?} in {written:?}"
        );
    }

    // The JSON output is for programs: its messages stay English.
    let o = validate(dir.path(), &[file, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let messages: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("an amount must not carry a sign")),
        "{messages:?}"
    );
}

/// Without `language`, the same file is explained in English, as before.
#[test]
fn without_language_the_rules_stay_english() {
    let dir = tempfile::tempdir().unwrap();
    let file = sample("payroll-with-errors.csv");
    let o = validate(
        dir.path(),
        &[file.to_str().unwrap(), "--rejected", "rejected.csv"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let shown = text(&o);
    for (french, english) in RULES {
        assert!(shown.contains(english), "{english:?} not in\n{shown}");
        assert!(!shown.contains(french), "{french:?} in\n{shown}");
    }
    let written = reasons(&dir.path().join("rejected.csv"));
    assert!(
        written[0].starts_with(
            "row 3, column amount, value \"12 500\": thousands separators and decimal commas are read only when the config says how the file writes numbers"
        ),
        "{written:?}"
    );
}

/// `text` in Windows-1252, as a French Excel's plain "CSV" saves it (only
/// ASCII and `é` here).
fn windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c {
            'é' => 0xE9,
            c if c.is_ascii() => c as u8,
            c => panic!("{c} is not in this test's Windows-1252"),
        })
        .collect()
}

const FR_CONFIG: &str = "language = \"fr\"\nnumber_format = \"fr\"\ndefault_currency = \"XOF\"\ndefault_payout_method_id = \"momo\"\n";

/// A header without the account column: refused, in French, naming the
/// column missing and the header to map.
#[test]
fn a_missing_column_is_explained_in_french() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("payrun.toml"), FR_CONFIG).unwrap();
    std::fs::write(
        dir.path().join("paie.csv"),
        "Nom;Prénom;Montant;Matricule\nKoné;Awa;150 000;M-01\n",
    )
    .unwrap();
    let o = validate(dir.path(), &["paie.csv"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let shown = text(&o);
    for french in [
        "impossible de valider paie.csv\u{a0}: colonne obligatoire manquante\u{a0}: account_id\u{a0}; en-têtes non lus\u{a0}: ",
        "Renommez l'en-tête dans le fichier, ou associez-le dans la table [columns] du fichier de configuration",
        "par ex. \"Matricule\" = \"account_id\"",
    ] {
        assert!(shown.contains(french), "{french:?} not in\n{shown}");
    }
    for english in [
        "cannot validate",
        "missing required column",
        "headers not read",
        "Rename the header",
    ] {
        assert!(!shown.contains(english), "{english:?} in\n{shown}");
    }
    // --lang en says it in English, whatever the config.
    let o = validate(dir.path(), &["paie.csv", "--lang", "en"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("cannot validate paie.csv: missing required column account_id"),
        "{}",
        text(&o)
    );
}

/// How the file was read (its encoding, the title row above the header,
/// the columns not read, a payee pasted twice): French lines of the
/// summary with `language = "fr"` or `--lang fr`, English with `--lang en`.
#[test]
fn the_notices_of_the_summary_are_french() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("payrun.toml"), FR_CONFIG).unwrap();
    let csv = "Paie de novembre;;;;\n\
               Nom;Prénom;Numéro Mobile Money;Montant;Matricule\n\
               Koné;Awa;07 08 12 10 10;150 000;M-01\n\
               Yao;Adjoua;07 08 12 10 11;160 000;M-02\n\
               Yao;Adjoua;07 08 12 10 11;160 000;M-02\n";
    std::fs::write(dir.path().join("paie.csv"), windows_1252(csv)).unwrap();
    let o = validate(dir.path(), &["paie.csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let shown = text(&o);
    for french in [
        "Avis\u{a0}: lu en Windows-1252 (le fichier n'est pas en UTF-8 valide",
        "Avis\u{a0}: la ligne 1, avant la ligne d'en-tête (ligne 2), a été ignorée",
        "Colonnes non lues\u{a0}: \"Matricule\"",
        "Même compte, même montant et même devise qu'une ligne précédente (collée deux fois\u{a0}?)\u{a0}: la ligne 5 répète la ligne 4",
        "470\u{202f}000",
    ] {
        assert!(shown.contains(french), "{french:?} not in\n{shown}");
    }
    for english in [
        "Note:",
        "read as",
        "Columns not read",
        "Same account",
        "repeats row",
        "skipped",
    ] {
        assert!(!shown.contains(english), "{english:?} in\n{shown}");
    }
    // The JSON output keeps the English sentences.
    let o = validate(dir.path(), &["paie.csv", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["notices"][0]
            .as_str()
            .unwrap()
            .starts_with("read as Windows-1252"),
        "{v}"
    );
    let o = validate(dir.path(), &["paie.csv", "--lang", "en"]);
    let shown = text(&o);
    for english in [
        "Note: read as Windows-1252",
        "Note: row 1 before the header row (row 2) was skipped",
        "Columns not read: \"Matricule\"",
        "row 5 repeats row 4",
    ] {
        assert!(shown.contains(english), "{english:?} not in\n{shown}");
    }

    // --lang fr without any language in the config.
    std::fs::write(
        dir.path().join("payrun.toml"),
        FR_CONFIG.replace("language = \"fr\"\n", ""),
    )
    .unwrap();
    let o = validate(dir.path(), &["paie.csv", "--lang", "fr"]);
    let shown = text(&o);
    assert!(shown.contains("Colonnes non lues\u{a0}: "), "{shown}");
    assert!(!shown.contains("Columns not read"), "{shown}");
}

/// A file the reader cannot read at all is refused in French too: a quote
/// never closed, `--sheet` for a CSV file.
#[test]
fn an_unreadable_file_is_explained_in_french() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("payrun.toml"), FR_CONFIG).unwrap();
    std::fs::write(
        dir.path().join("paie.csv"),
        "Nom;Prénom;Numéro Mobile Money;Montant\nKoné;Awa;07 08 12 10 10;150 000\n\"Yao;Adjoua;07 08 12 10 11;160 000\n",
    )
    .unwrap();
    let o = validate(dir.path(), &["paie.csv"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let shown = text(&o);
    assert!(
        shown.contains("impossible de valider paie.csv: ligne 3 du fichier\u{a0}: un guillemet droit (\") ouvert là n'est jamais refermé"),
        "{shown}"
    );
    assert!(!shown.contains("double quote"), "{shown}");
    let o = validate(dir.path(), &["paie.csv", "--lang", "en"]);
    assert!(
        text(&o).contains(
            "cannot validate paie.csv: line 3: a double quote (\") opened there is never closed"
        ),
        "{}",
        text(&o)
    );
    let o = validate(dir.path(), &["paie.csv", "--sheet", "Paie"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("--sheet \"Paie\" ne s'applique qu'aux classeurs de tableur"),
        "{}",
        text(&o)
    );
}

/// `payrun validate` in French (`language = "fr"` or `--lang fr`): the
/// explanation of every refused row — the rule broken and its fix — is
/// French on the terminal and in rejected.csv, with amounts grouped the
/// French way; the same file in English reads as before, and the JSON
/// output keeps its English messages (a machine format).
mod one_file_of_refused_rows {
    use super::{text, validate};
    use std::path::Path;
    use std::process::Output;

    const CONFIG: &str = "default_payout_method_id = \"momo\"\n\
    default_phone_region = \"CI\"\n\
    number_format = \"fr\"\n\
    [columns]\n\
    \"Référence\" = \"transaction_id\"\n\
    \"Numéro Mobile Money\" = \"account_id\"\n\
    \"Montant\" = \"amount\"\n\
    \"Devise\" = \"currency\"\n\
    \"Prénom\" = \"beneficiary_firstname\"\n\
    \"Nom\" = \"beneficiary_lastname\"\n\
    \"Téléphone\" = \"beneficiary_phone\"\n\
    \"E-mail\" = \"beneficiary_email\"\n";

    /// One bad row per family of rules: amount (zero, decimals, implausible),
    /// currency, account, phone, e-mail, repeated reference, name, a row
    /// with a cell too many.
    const PAYROLL: &str = "\u{feff}Référence;Numéro Mobile Money;Montant;Devise;Prénom;Nom;Téléphone;E-mail\r\n\
    R-1;2250701020304;150 000;XOF;Aya;Koffi;+225 07 01 02 03 04;\r\n\
    R-2;2250701020305;0;XOF;Awa;Koné;;\r\n\
    R-3;2250701020306;150 000,50;XOF;Awa;Koné;;\r\n\
    R-4;2250701020307;150 000;CFA;Awa;Koné;;\r\n\
    R-5;;150 000;XOF;Awa;Koné;;\r\n\
    R-6;2250701020308;150 000;XOF;Awa;Koné;+225 12;\r\n\
    R-1;2250701020309;150 000;XOF;Awa;Koné;;\r\n\
    R-7;2250701020310;150 000;XOF;;Koné;;\r\n\
    R-8;2250701020311;150 000;XOF;Awa;Koné;;;en trop\r\n\
    R-9;2250701020312;2250701020304;XOF;Awa;Koné;;\r\n\
    R-10;2250701020313;150 000;XOF;Awa;Koné;;awa@exemple\r\n";

    /// What the French clerk reads, rule by rule.
    const FRENCH: [&str; 12] = [
        "ligne 3, colonne Montant, valeur \"0\"\u{a0}: le montant doit être supérieur à zéro\u{a0}: supprimez la ligne s'il n'y a rien à payer",
        "la devise XOF a 0 décimale(s) (ISO 4217) mais ce montant en a 1\u{a0}: arrondissez-le à 0 décimale(s)",
        "ce n'est pas un code de devise ISO 4217\u{a0}: écrivez le code à trois lettres",
        "ligne 6, colonne Numéro Mobile Money, valeur \"\"\u{a0}: le compte du bénéficiaire (account_id) est obligatoire\u{a0}: renseignez-le",
        "ce numéro de téléphone n'est pas valide pour son indicatif pays",
        "la référence de transaction (transaction_id) \"R-1\" est déjà utilisée à la ligne 2",
        "le prénom du bénéficiaire est obligatoire\u{a0}: renseignez-le",
        "ligne 10\u{a0}: la ligne a 9 cellules mais l'en-tête en a 8",
        "on dirait un numéro de compte ou de téléphone dans la colonne du montant",
        "ce qui suit `@` n'est pas un nom de domaine valide (comme exemple.com)",
        "écrivez une seule adresse, comme nom@exemple.com",
        "mettez entre guillemets droits",
    ];

    /// The English explanations of the same rows: none may reach the clerk.
    const ENGLISH: [&str; 14] = [
        "the amount must be greater than zero",
        "remove the row if nothing is to be paid",
        "decimal place(s)",
        "not an ISO 4217 currency code",
        "is required: fill it in",
        "not a valid phone number",
        "is already used on row",
        "every payout needs its own id",
        "the beneficiary's first name",
        "cells but the header has",
        "looks like an account or phone number",
        "is not a valid domain",
        "write one address like",
        "in double quotes",
    ];

    fn payroll(dir: &Path, config: &str) {
        std::fs::write(dir.join("payrun.toml"), config).unwrap();
        std::fs::write(dir.join("paie.csv"), PAYROLL).unwrap();
    }

    fn check_french(o: &Output, rejected: &Path) {
        assert_eq!(o.status.code(), Some(2), "{}", text(o));
        let shown = text(o);
        for french in FRENCH {
            assert!(shown.contains(french), "{french:?} not in\n{shown}");
        }
        for english in ENGLISH {
            assert!(!shown.contains(english), "{english:?} in\n{shown}");
        }
        let file = std::fs::read_to_string(rejected).unwrap();
        assert!(file.starts_with('\u{feff}'), "the input's BOM is kept");
        let mut reader = csv::ReaderBuilder::new()
            .delimiter(b';')
            .flexible(true)
            .from_reader(file.trim_start_matches('\u{feff}').as_bytes());
        let reasons: Vec<String> = reader
            .records()
            .map(|r| r.unwrap().iter().next_back().unwrap().to_owned())
            .collect();
        assert_eq!(reasons.len(), 10, "{file}");
        let all = reasons.join("\n");
        for french in FRENCH {
            assert!(
                all.contains(french),
                "{french:?} not in rejected.csv\n{all}"
            );
        }
        for english in ENGLISH {
            assert!(!all.contains(english), "{english:?} in rejected.csv\n{all}");
        }
    }

    #[test]
    fn the_rules_are_explained_in_french_with_language_fr() {
        let dir = tempfile::tempdir().unwrap();
        payroll(dir.path(), &format!("language = \"fr\"\n{CONFIG}"));
        let o = validate(dir.path(), &["paie.csv", "--rejected", "rejets.csv"]);
        check_french(&o, &dir.path().join("rejets.csv"));
    }

    #[test]
    fn the_rules_are_explained_in_french_with_lang_fr() {
        let dir = tempfile::tempdir().unwrap();
        payroll(dir.path(), CONFIG);
        let o = validate(
            dir.path(),
            &["paie.csv", "--lang", "fr", "--rejected", "rejets.csv"],
        );
        check_french(&o, &dir.path().join("rejets.csv"));
    }

    /// The same file in English reads as it always did, and the JSON output
    /// keeps the English messages whatever the language.
    #[test]
    fn english_and_json_are_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        payroll(dir.path(), CONFIG);
        let o = validate(dir.path(), &["paie.csv", "--rejected", "rejected.csv"]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let shown = text(&o);
        for english in ENGLISH {
            assert!(shown.contains(english), "{english:?} not in\n{shown}");
        }
        assert!(
            shown.contains(
                "row 3, column Montant, value \"0\": the amount must be greater than zero: remove the row if nothing is to be paid"
            ),
            "{shown}"
        );
        assert!(!shown.contains("le montant"), "{shown}");
        let file = std::fs::read_to_string(dir.path().join("rejected.csv")).unwrap();
        assert!(
            file.contains("transaction_id \"\"R-1\"\" is already used on row 2"),
            "{file}"
        );

        std::fs::write(
            dir.path().join("payrun.toml"),
            format!("language = \"fr\"\n{CONFIG}"),
        )
        .unwrap();
        let o = validate(dir.path(), &["paie.csv", "--format", "json"]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("the amount must be greater than zero"),
            "{out}"
        );
        assert!(!out.contains("le montant doit"), "{out}");
    }
}
