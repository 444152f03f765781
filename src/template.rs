//! Getting started (`payrun init`): the text of a commented `payrun.toml`,
//! a template payroll (CSV and workbook) with English or French headers,
//! and the `[columns]` table that maps an existing file's headers onto
//! payrun's columns. Pure data; `cmd::init` writes the files.

use crate::config::ReportLanguage;
use crate::validate::columns::{Col, normalize};
use anyhow::Result;
use std::fmt::Write as _;

/// The template's columns, in order: what a payroll usually holds.
const TEMPLATE_COLS: [Col; 10] = [
    Col::TransactionId,
    Col::AccountId,
    Col::Amount,
    Col::Currency,
    Col::PayoutMethodId,
    Col::Description,
    Col::BeneficiaryFirstname,
    Col::BeneficiaryLastname,
    Col::BeneficiaryPhone,
    Col::BeneficiaryEmail,
];

/// French headers as payroll offices write them, for the template and for
/// recognising a French file's headers.
fn french(col: Col) -> Option<&'static str> {
    Some(match col {
        Col::TransactionId => "Référence",
        Col::AccountId => "Compte",
        Col::Amount => "Montant",
        Col::Currency => "Devise",
        Col::PayoutMethodId => "Moyen de paiement",
        Col::Description => "Libellé",
        Col::BeneficiaryFirstname => "Prénom",
        Col::BeneficiaryLastname => "Nom",
        Col::BeneficiaryPhone => "Téléphone",
        Col::BeneficiaryEmail => "Courriel",
        _ => return None,
    })
}

/// Other usual spellings (normalized) of a column, beyond its canonical
/// name and the French header above.
const ALIASES: [(&str, Col); 16] = [
    ("account", Col::AccountId),
    ("accountnumber", Col::AccountId),
    ("numerodecompte", Col::AccountId),
    ("numérodecompte", Col::AccountId),
    ("firstname", Col::BeneficiaryFirstname),
    ("prenom", Col::BeneficiaryFirstname),
    ("lastname", Col::BeneficiaryLastname),
    ("phone", Col::BeneficiaryPhone),
    ("telephone", Col::BeneficiaryPhone),
    ("email", Col::BeneficiaryEmail),
    ("libelle", Col::Description),
    ("motif", Col::Description),
    ("reference", Col::TransactionId),
    ("idtransaction", Col::TransactionId),
    ("methode", Col::PayoutMethodId),
    ("salaire", Col::Amount),
];

/// The template's header row in `lang`.
pub fn headers(lang: ReportLanguage) -> Vec<&'static str> {
    TEMPLATE_COLS
        .iter()
        .map(|&c| match lang {
            ReportLanguage::En => c.name(),
            ReportLanguage::Fr => french(c).unwrap_or(c.name()),
        })
        .collect()
}

/// Two example rows, matching [`TEMPLATE_COLS`]: replace them with yours.
pub const EXAMPLE_ROWS: [[&str; 10]; 2] = [
    [
        "PAY-2026-05-001",
        "2250701020304",
        "197500",
        "XOF",
        "momo",
        "Salary May 2026",
        "Aïcha",
        "N'Guessan",
        "+2250701020304",
        "aicha.nguessan@example.ci",
    ],
    [
        "PAY-2026-05-002",
        "2250505112233",
        "210000",
        "XOF",
        "momo",
        "Salary May 2026",
        "Kouadio",
        "Koffi",
        "+2250505112233",
        "k.koffi@example.ci",
    ],
];

/// The template payroll as CSV text (`,`, UTF-8 without BOM).
pub fn payroll_csv(lang: ReportLanguage) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(headers(lang))?;
    for row in EXAMPLE_ROWS {
        w.write_record(row)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// The template payroll as an `.xlsx` workbook: every cell text, so Excel
/// keeps the accounts' and phones' digits as typed.
pub fn payroll_xlsx(lang: ReportLanguage) -> Result<Vec<u8>> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    let bold = rust_xlsxwriter::Format::new().set_bold();
    let text = rust_xlsxwriter::Format::new().set_num_format("@");
    for (c, h) in headers(lang).iter().enumerate() {
        sheet.write_string_with_format(0, c as u16, *h, &bold)?;
        sheet.set_column_format(c as u16, &text)?;
        sheet.set_column_width(c as u16, 20)?;
    }
    for (r, row) in EXAMPLE_ROWS.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            sheet.write_string_with_format(r as u32 + 1, c as u16, *v, &text)?;
        }
    }
    Ok(book.save_to_buffer()?)
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The commented `payrun.toml` for a new user; with `fr`, the French
/// headers of the template are mapped and reports use French headers.
pub fn config_toml(lang: ReportLanguage) -> String {
    let mut t = String::from(
        "# payrun configuration. Every key is optional; an unknown key is an error\n\
         # naming it. Command-line flags override this file. See the README,\n\
         # \"Configuration keys\".\n\n\
         # The provider's base URL (ask your provider). For a rehearsal use\n\
         # `payrun run FILE --sandbox` instead, which needs no URL and no key.\n\
         # base_url = \"https://api.provider.example/v1\"\n\n\
         # The API key is never written here: set PAYRUN_API_KEY in the\n\
         # environment, or name a file holding it:\n\
         # api_key_file = \"/etc/payrun/api-key\"\n\n\
         # The checkpoint: payrun.db in the per-user data folder by default, or\n\
         # PostgreSQL for several workers (docs/store.md): TLS as libpq's sslmode\n\
         # says (verify-full across a network), the password never in this file:\n\
         # PGPASSWORD, ~/.pgpass, or a file holding it.\n\
         # database = \"postgres://payrun@pg.example.com:5432/payroll?sslmode=verify-full&sslrootcert=/etc/payrun/pg-ca.pem\"\n\
         # database_password_file = \"/etc/payrun/db-password\"\n\n\
         # Payout method for rows without a payout_method_id column.\n\
         default_payout_method_id = \"momo\"\n\n\
         # Country for phone numbers written without +country code.\n\
         default_phone_region = \"CI\"\n\n\
         # An execute whose outcome is unknown (timeout, crash): \"hold\" (the\n\
         # default) parks it as `unknown` for `payrun reconcile`. \"resend\"\n\
         # re-sends it under the same transactionId, which pays twice unless\n\
         # the provider deduplicates executes: only after `payrun probe` says so.\n\
         ambiguous = \"hold\"\n\n\
         # Four eyes: nothing is executed until someone other than the person\n\
         # who imported the run approves its figures (`payrun approve RUN`).\n\
         # The built-in sandbox's quick start, without this file, does not ask.\n\
         require_approval = true\n\n",
    );
    t.push_str("# Headers of reports and approval pages: \"en\" or \"fr\".\n");
    let _ = writeln!(
        t,
        "report_language = {}\n",
        quoted(match lang {
            ReportLanguage::En => "en",
            ReportLanguage::Fr => "fr",
        })
    );
    t.push_str(
        "# The sender sent with every payout (a row's sender_* columns override it).\n\
         [sender]\n\
         email = \"payroll@example.com\"\n\
         firstname = \"Payroll\"\n\
         lastname = \"Office\"\n\
         address = \"1 Main Street\"\n\
         phone = \"+2250700000000\"\n\n\
         # Map a header of your file to a payrun column; `payrun init --from FILE`\n\
         # prints this table for your file. Matching ignores case, spaces, _ and -.\n\
         [columns]\n",
    );
    for col in TEMPLATE_COLS {
        if let (ReportLanguage::Fr, Some(h)) = (lang, french(col)) {
            let _ = writeln!(t, "{} = {}", quoted(h), quoted(col.name()));
        }
    }
    if lang == ReportLanguage::En {
        t.push_str("# \"Montant\" = \"amount\"\n");
    }
    t
}

/// The payrun column a header most likely means: its canonical name, a
/// French header, or a usual spelling.
pub fn guess(header: &str) -> Option<Col> {
    let key = normalize(header);
    Col::ALL
        .into_iter()
        .find(|c| normalize(c.name()) == key)
        .or_else(|| {
            Col::ALL
                .into_iter()
                .find(|&c| french(c).is_some_and(|f| normalize(f) == key))
        })
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == key).map(|&(_, c)| c))
}

/// The `[columns]` table for a file's `headers`: a mapping for each header
/// payrun can guess, a comment for those it already reads by name, and a
/// commented line to fill in for the others.
pub fn columns_table(headers: &[String]) -> String {
    let mut t = String::from("[columns]\n");
    let mut taken = std::collections::BTreeSet::new();
    for h in headers {
        let h = h.trim();
        if h.is_empty() {
            continue;
        }
        let key = normalize(h);
        match guess(h) {
            Some(c) if normalize(c.name()) == key => {
                taken.insert(c.name());
                let _ = writeln!(t, "# {} is read as {} already", quoted(h), c.name());
            }
            Some(c) if taken.insert(c.name()) => {
                let _ = writeln!(t, "{} = {}", quoted(h), quoted(c.name()));
            }
            _ => {
                let _ = writeln!(
                    t,
                    "# {} = \"\"   # not recognised: name its payrun column, or leave it out",
                    quoted(h)
                );
            }
        }
    }
    let missing: Vec<&str> = Col::REQUIRED
        .iter()
        .map(|c| c.name())
        .filter(|n| !taken.contains(n))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(t, "# still missing (required): {}", missing.join(", "));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn both_configs_parse_and_map_the_template_headers() {
        for lang in [ReportLanguage::En, ReportLanguage::Fr] {
            let cfg = Config::parse(&config_toml(lang)).unwrap();
            assert_eq!(cfg.report_language(), lang);
            let hs = headers(lang);
            let cols = crate::validate::columns::Columns::resolve(
                hs.iter().copied(),
                &cfg.columns,
                &[crate::validate::columns::Col::PayoutMethodId],
            );
            assert!(cols.is_ok(), "{lang:?}: {:?}", cols.err());
        }
    }

    /// The PostgreSQL lines `payrun init` writes commented out mean, once
    /// uncommented, what the comment says: a TLS-checked connection with
    /// the password from a file.
    #[test]
    fn the_commented_database_lines_parse_as_documented() {
        let text: String = config_toml(ReportLanguage::En)
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(k) if k.starts_with("database") => k,
                _ => l,
            })
            .fold(String::new(), |t, l| t + l + "\n");
        let cfg = Config::parse(&text).unwrap();
        let db = cfg.database.as_deref().unwrap().to_str().unwrap();
        assert!(db.contains("sslmode=verify-full&sslrootcert="), "{db}");
        assert!(matches!(
            crate::store::Db::parse(db),
            crate::store::Db::Postgres(_)
        ));
        assert_eq!(
            cfg.database_password_file.as_deref(),
            Some(std::path::Path::new("/etc/payrun/db-password"))
        );
    }

    /// The top-level keys of `text` whose removal changes what the
    /// configuration means ([`Config::resolved`]): the keys not at their
    /// documented default.
    fn keys_off_default(text: &str) -> Vec<String> {
        let resolved = |t: &str| format!("{:?}", Config::parse(t).unwrap().resolved());
        let whole = resolved(text);
        let table: toml::Table = toml::from_str(text).unwrap();
        table
            .keys()
            .filter(|k| {
                let mut without = table.clone();
                without.remove(k.as_str());
                resolved(&toml::to_string(&without).unwrap()) != whole
            })
            .cloned()
            .collect()
    }

    /// Starting points are code: `payrun init`'s configs and the samples
    /// keep every key at its documented default, except the placeholders
    /// each is meant to carry. `ambiguous` above all: "resend" against a
    /// provider that does not deduplicate executes pays twice.
    #[test]
    fn starting_points_keep_the_documented_defaults() {
        let sample = |name: &str| {
            std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("samples")
                    .join(name),
            )
            .unwrap()
        };
        let cases: [(&str, String, &[&str]); 4] = [
            (
                "payrun init",
                config_toml(ReportLanguage::En),
                &[
                    "default_payout_method_id",
                    "default_phone_region",
                    "require_approval",
                    "sender",
                ],
            ),
            (
                "payrun init --lang fr",
                config_toml(ReportLanguage::Fr),
                &[
                    "default_payout_method_id",
                    "default_phone_region",
                    "report_language",
                    "require_approval",
                    "sender",
                    "columns",
                ],
            ),
            (
                "samples/payrun.toml",
                sample("payrun.toml"),
                &["base_url", "sender"],
            ),
            (
                "samples/paie-fr.toml",
                sample("paie-fr.toml"),
                &["number_format", "amount_unit", "skip"],
            ),
        ];
        for (name, text, allowed) in cases {
            let mut off = keys_off_default(&text);
            off.sort();
            let mut want: Vec<String> = allowed.iter().map(|k| k.to_string()).collect();
            want.sort();
            assert_eq!(off, want, "{name}: keys not at their default");
            let cfg = Config::parse(&text).unwrap();
            assert_eq!(cfg.ambiguous(), crate::config::Ambiguous::Hold, "{name}");
        }
        // The configs a new user starts from say `hold`, and that it is the
        // default, in the comment right above the key.
        for text in [
            config_toml(ReportLanguage::En),
            config_toml(ReportLanguage::Fr),
            sample("payrun.toml"),
        ] {
            let lines: Vec<&str> = text.lines().collect();
            let at = lines
                .iter()
                .position(|l| l.starts_with("ambiguous"))
                .unwrap();
            assert_eq!(lines[at], "ambiguous = \"hold\"", "{text}");
            let mut comment: Vec<&str> = lines[..at]
                .iter()
                .rev()
                .take_while(|l| l.starts_with('#'))
                .map(|l| l.trim_start_matches('#').trim())
                .collect();
            comment.reverse();
            let comment = comment.join(" ");
            assert!(comment.contains("\"hold\" (the default)"), "{comment}");
        }
    }

    #[test]
    fn columns_table_maps_french_headers_and_flags_unknown_ones() {
        let hs: Vec<String> = [
            "Montant",
            "Devise",
            "account_id",
            "Prénom",
            "Nom",
            "Matricule",
        ]
        .map(String::from)
        .to_vec();
        let t = columns_table(&hs);
        assert!(t.contains("\"Montant\" = \"amount\""), "{t}");
        assert!(t.contains("\"Prénom\" = \"beneficiary_firstname\""), "{t}");
        assert!(
            t.contains("# \"account_id\" is read as account_id already"),
            "{t}"
        );
        assert!(t.contains("# \"Matricule\" = \"\""), "{t}");
        assert!(!t.contains("still missing"), "{t}");
        // The table is valid TOML a user can paste.
        let cfg = Config::parse(&t).unwrap();
        assert_eq!(cfg.columns.get("Nom").unwrap(), "beneficiary_lastname");
    }
}
