//! Getting started (`payrun init`): the text of a commented `payrun.toml`,
//! a template payroll (CSV and workbook) with English or French headers,
//! and the `[columns]` table that maps an existing file's headers onto
//! payrun's columns. Pure data; `cmd::init` writes the files.

use crate::config::ReportLanguage;
use crate::validate::columns::{Col, normalize, recognise};
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

/// French headers as payroll offices write them, for the template. Each
/// is one of the readers' built-in names ([`recognise`]): a French file
/// needs no `[columns]` table.
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
pub const EXAMPLE_ROWS: [[&str; 10]; 2] = example_rows("197500", "210000", "Salary May 2026");

/// The example rows with the language's amounts and description.
const fn example_rows(
    a: &'static str,
    b: &'static str,
    what: &'static str,
) -> [[&'static str; 10]; 2] {
    [
        [
            "PAY-2026-05-001",
            "2250701020304",
            a,
            "XOF",
            "momo",
            what,
            "Aïcha",
            "N'Guessan",
            "+2250701020304",
            "aicha.nguessan@example.ci",
        ],
        [
            "PAY-2026-05-002",
            "2250505112233",
            b,
            "XOF",
            "momo",
            what,
            "Kouadio",
            "Koffi",
            "+2250505112233",
            "k.koffi@example.ci",
        ],
    ]
}

/// The French template's rows: amounts grouped by a space as French
/// spreadsheets show them (read with `number_format = "fr"`).
const EXAMPLE_ROWS_FR: [[&str; 10]; 2] = example_rows("197 500", "210 000", "Salaire mai 2026");

/// The example rows in `lang`.
fn example_rows_in(lang: ReportLanguage) -> [[&'static str; 10]; 2] {
    match lang {
        ReportLanguage::En => EXAMPLE_ROWS,
        ReportLanguage::Fr => EXAMPLE_ROWS_FR,
    }
}

/// The template payroll as CSV text, every line ended: in English `,`
/// and UTF-8 without BOM; in French `;` and a UTF-8 byte-order mark, as
/// a French Excel saves "CSV UTF-8" and needs to open it in columns.
pub fn payroll_csv(lang: ReportLanguage) -> Result<String> {
    let french = lang == ReportLanguage::Fr;
    let mut w = csv::WriterBuilder::new()
        .delimiter(if french { b';' } else { b',' })
        .from_writer(Vec::new());
    w.write_record(headers(lang))?;
    for row in example_rows_in(lang) {
        w.write_record(row)?;
    }
    let text = String::from_utf8(w.into_inner()?)?;
    Ok(if french {
        format!("\u{feff}{text}")
    } else {
        text
    })
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
    for (r, row) in example_rows_in(lang).iter().enumerate() {
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

/// The commented `payrun.toml` for a new user; with `fr`, every French
/// default: French pages and messages, `150 000` amounts, the CFA franc.
pub fn config_toml(lang: ReportLanguage) -> String {
    config_text(lang, None)
}

/// The `payrun.toml` for an existing payroll with `headers` (`payrun init
/// --from FILE`): [`config_toml`] with the file's `[columns]` table, and
/// `default_currency` set when the file has no currency column.
pub fn config_for_file(lang: ReportLanguage, headers: &[String]) -> String {
    config_text(lang, Some(headers))
}

/// The columns a config from [`config_text`] gives a default for.
fn defaulted(lang: ReportLanguage, headers: Option<&[String]>) -> Vec<Col> {
    let mut cols = vec![Col::PayoutMethodId];
    let has_currency =
        headers.is_some_and(|hs| hs.iter().any(|h| recognise(h) == Some(Col::Currency)));
    if lang == ReportLanguage::Fr || (headers.is_some() && !has_currency) {
        cols.push(Col::Currency);
    }
    cols
}

fn config_text(lang: ReportLanguage, headers: Option<&[String]>) -> String {
    let defaults = defaulted(lang, headers);
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
    t.push_str(
        "# The language of everything payrun writes for people: reports, the\n\
         # approval page, summaries, the terminal's lines; amounts grouped as\n\
         # the language does. \"en\" or \"fr\". Machine formats (JSON, exit codes,\n\
         # the report's machine column names with \"en\") do not change.\n",
    );
    let _ = writeln!(t, "language = {}\n", quoted(lang.name()));
    t.push_str("# How the file writes numbers: \"fr\" reads `150 000` and `150 000,50`,\n# \"en\" reads `150,000.50`. Unset: plain digits only.\n");
    if lang == ReportLanguage::Fr {
        t.push_str("number_format = \"fr\"\n\n");
    } else {
        t.push_str("# number_format = \"en\"\n\n");
    }
    t.push_str("# Currency of rows when the file has no currency column.\n");
    if defaults.contains(&Col::Currency) {
        t.push_str("default_currency = \"XOF\"\n\n");
    } else {
        t.push_str("# default_currency = \"XOF\"\n\n");
    }
    t.push_str(
        "# The sender sent with every payout (a row's sender_* columns override it).\n\
         [sender]\n\
         email = \"payroll@example.com\"\n\
         firstname = \"Payroll\"\n\
         lastname = \"Office\"\n\
         address = \"1 Main Street\"\n\
         phone = \"+2250700000000\"\n\n\
         # Map a header of your file to a payrun column; `payrun init --from FILE`\n\
         # writes this table for your file. Matching ignores case, accents, spaces,\n\
         # _ and -; French headers (Montant, Prénom, Nom, Numéro Mobile Money...)\n\
         # need no line here (docs/input.md lists the names read).\n",
    );
    match headers {
        Some(hs) => t.push_str(&columns_table(hs, &defaults)),
        None => t.push_str("[columns]\n# \"Net à payer\" = \"amount\"\n"),
    }
    t
}

/// The payrun column a header means without a `[columns]` line: the
/// readers' own matching ([`recognise`]), not a copy of it.
pub fn guess(header: &str) -> Option<Col> {
    recognise(header)
}

/// The `[columns]` table for a file's `headers`: a mapping for each header
/// payrun reads by a built-in name, a comment for those it reads by their
/// canonical name, and a commented line to fill in for the others; then
/// the required columns still missing, not counting those the config
/// gives a default for (`defaults`).
pub fn columns_table(headers: &[String], defaults: &[Col]) -> String {
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
        .chain([Col::PayoutMethodId].iter())
        .filter(|c| !defaults.contains(c))
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
            assert_eq!(cfg.language(), lang);
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
                    "language",
                    "number_format",
                    "default_currency",
                    "require_approval",
                    "sender",
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

    /// The French template is what a French Excel opens in columns and
    /// what the readers take as it is: `;`, a byte-order mark, every line
    /// ended, French words, headers the readers know without a table.
    #[test]
    fn the_french_template_is_french_through() {
        let csv = payroll_csv(ReportLanguage::Fr).unwrap();
        assert!(
            csv.starts_with("\u{feff}Référence;Compte;Montant;Devise;"),
            "{csv}"
        );
        assert!(csv.ends_with('\n'), "{csv}");
        assert!(
            csv.contains("Salaire mai 2026") && csv.contains(";197 500;"),
            "{csv}"
        );
        assert!(!csv.contains("Salary"), "{csv}");
        for lang in [ReportLanguage::En, ReportLanguage::Fr] {
            for h in headers(lang) {
                assert!(recognise(h).is_some(), "{h} is not read without a table");
            }
        }
        let cfg = Config::parse(&config_toml(ReportLanguage::Fr)).unwrap();
        assert_eq!(cfg.number_format, Some(crate::config::NumberFormat::Fr));
        assert_eq!(cfg.default_currency.as_deref(), Some("XOF"));
    }

    /// `init --from` matches headers as the readers do: a file with
    /// `Numéro Mobile Money` and no currency column gets a config that
    /// reads it as it is.
    #[test]
    fn a_config_for_a_file_reads_that_file() {
        let hs: Vec<String> = ["Nom", "Prénom", "Numéro Mobile Money", "Montant"]
            .map(String::from)
            .to_vec();
        for lang in [ReportLanguage::En, ReportLanguage::Fr] {
            let text = config_for_file(lang, &hs);
            assert!(!text.contains("not recognised"), "{text}");
            assert!(!text.contains("still missing"), "{text}");
            assert!(
                text.contains("\"Numéro Mobile Money\" = \"account_id\""),
                "{text}"
            );
            let cfg = Config::parse(&text).unwrap();
            assert_eq!(cfg.default_currency.as_deref(), Some("XOF"), "{text}");
            let cols = crate::validate::columns::Columns::resolve(
                hs.iter().map(String::as_str),
                &cfg.columns,
                &[Col::PayoutMethodId, Col::Currency],
            );
            assert!(cols.is_ok(), "{:?}", cols.err());
        }
        // A file that has a currency column keeps the English default unset.
        let mut with = hs.clone();
        with.push("Devise".into());
        let cfg = Config::parse(&config_for_file(ReportLanguage::En, &with)).unwrap();
        assert_eq!(cfg.default_currency, None);
        // Still missing: named, and only what no default covers.
        let t = columns_table(&["Montant".to_string()], &[Col::PayoutMethodId]);
        assert!(t.contains("still missing (required): account_id, currency, beneficiary_firstname, beneficiary_lastname\n"), "{t}");
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
        let t = columns_table(&hs, &[Col::PayoutMethodId]);
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
