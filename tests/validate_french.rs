//! `payrun validate` in French (`language = "fr"` or `--lang fr`): the
//! explanation of every refused row — the rule broken and its fix — is
//! French on the terminal and in rejected.csv, with amounts grouped the
//! French way; the same file in English reads as before, and the JSON
//! output keeps its English messages (a machine format).

use std::path::Path;
use std::process::{Command, Output};

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
