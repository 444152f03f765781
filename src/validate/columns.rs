//! Matching a file's header row to payrun's canonical columns: canonical
//! snake_case names matched ignoring case, accents, spaces, `_`, `-` and
//! invisible characters (`Account ID`, `accountId` and `account-id` are all
//! `account_id`; a byte-order mark or zero-width space never hides a
//! column), built-in French names (`Montant`, `Prénom`), plus the config's
//! `[columns]` table for any other header (`"Net à payer" = "amount"`).
//! Columns payrun does not read are listed, never silently ignored.

use std::collections::BTreeMap;
use std::fmt;

/// Why a header row does not give payrun's columns, as data; explained per
/// language in `crate::lang` (`Display`: English).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnsError {
    /// The config's `[columns]` maps `from` to `to`, not a payrun column.
    NotAColumn { from: String, to: String },
    /// Two headers read as `column`, at 1-based positions (quoted
    /// excerpts of the headers).
    Twice {
        column: &'static str,
        first: String,
        first_at: usize,
        second: String,
        second_at: usize,
    },
    /// Required columns missing.
    Missing {
        missing: Vec<&'static str>,
        found: Found,
        /// Config keys that would provide a default for a missing column.
        defaults: Vec<&'static str>,
        /// The first header not read, to map in the example (at most
        /// [`SHOWN_HEADER_CHARS`] characters).
        to_map: Option<String>,
    },
}

/// The headers of a row missing required columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    EmptyRow,
    /// Every header is already read: the column is not in the file.
    AllRead,
    /// The headers not read (excerpts, at most [`SHOWN_HEADERS`]) and how
    /// many more.
    NotRead {
        shown: Vec<String>,
        more: usize,
    },
}

impl fmt::Display for ColumnsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::lang::columns_error(self, crate::lang::Language::En))
    }
}

impl std::error::Error for ColumnsError {}

/// The canonical columns. The discriminant indexes [`Columns`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    TransactionId,
    AccountId,
    Amount,
    Currency,
    PayoutMethodId,
    Description,
    BeneficiaryFirstname,
    BeneficiaryLastname,
    BeneficiaryPhone,
    BeneficiaryEmail,
    SenderEmail,
    SenderFirstname,
    SenderLastname,
    SenderAddress,
    SenderPhone,
}

impl Col {
    pub const ALL: [Col; 15] = [
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
        Col::SenderEmail,
        Col::SenderFirstname,
        Col::SenderLastname,
        Col::SenderAddress,
        Col::SenderPhone,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Col::TransactionId => "transaction_id",
            Col::AccountId => "account_id",
            Col::Amount => "amount",
            Col::Currency => "currency",
            Col::PayoutMethodId => "payout_method_id",
            Col::Description => "description",
            Col::BeneficiaryFirstname => "beneficiary_firstname",
            Col::BeneficiaryLastname => "beneficiary_lastname",
            Col::BeneficiaryPhone => "beneficiary_phone",
            Col::BeneficiaryEmail => "beneficiary_email",
            Col::SenderEmail => "sender_email",
            Col::SenderFirstname => "sender_firstname",
            Col::SenderLastname => "sender_lastname",
            Col::SenderAddress => "sender_address",
            Col::SenderPhone => "sender_phone",
        }
    }

    /// Columns a file must have. `payout_method_id` is required too unless
    /// the config has `default_payout_method_id`. Beneficiary names are
    /// required because a payout nobody can attribute to a person cannot be
    /// reconciled.
    pub const REQUIRED: [Col; 5] = [
        Col::AccountId,
        Col::Amount,
        Col::Currency,
        Col::BeneficiaryFirstname,
        Col::BeneficiaryLastname,
    ];
}

/// Characters that never distinguish two headers: separators, spaces of
/// every kind, and invisible characters (byte-order marks, zero-width
/// spaces and joiners, soft hyphens) that exports and copy-paste leave.
fn ignored(c: char) -> bool {
    matches!(
        c,
        '_' | '-' | '.' | '\'' | '\u{2019}' | '\u{feff}' | '\u{200b}'
            ..='\u{200f}' | '\u{2060}' | '\u{ad}'
    ) || c.is_whitespace()
        || c.is_control()
}

/// A letter without its accent (`é` to `e`, `œ` to `oe`): French headers
/// are typed with and without accents (`PRENOM`, `Prénom`).
fn fold(c: char) -> &'static str {
    match c {
        'à' | 'â' | 'ä' | 'á' | 'ã' | 'å' => "a",
        'ç' => "c",
        'é' | 'è' | 'ê' | 'ë' => "e",
        'î' | 'ï' | 'í' | 'ì' => "i",
        'ô' | 'ö' | 'ó' | 'ò' | 'õ' => "o",
        'ù' | 'û' | 'ü' | 'ú' => "u",
        'ÿ' => "y",
        'ñ' => "n",
        'œ' => "oe",
        'æ' => "ae",
        _ => "",
    }
}

/// The key headers are compared by: lower case, without accents, spaces,
/// separators and invisible characters.
pub fn normalize(header: &str) -> String {
    let mut key = String::with_capacity(header.len());
    for c in header
        .chars()
        .filter(|c| !ignored(*c))
        .flat_map(char::to_lowercase)
    {
        match fold(c) {
            "" => key.push(c),
            base => key.push_str(base),
        }
    }
    key
}

/// Built-in header names, already normalized: French first, then common
/// English variants. The config's `[columns]` table covers anything else.
const ALIASES: [(&str, Col); 49] = [
    ("reference", Col::TransactionId),
    ("ref", Col::TransactionId),
    ("idtransaction", Col::TransactionId),
    ("referencepaiement", Col::TransactionId),
    ("compte", Col::AccountId),
    ("numerodecompte", Col::AccountId),
    ("numerocompte", Col::AccountId),
    ("numero", Col::AccountId),
    ("numeromobilemoney", Col::AccountId),
    ("comptemobilemoney", Col::AccountId),
    ("account", Col::AccountId),
    ("accountnumber", Col::AccountId),
    ("montant", Col::Amount),
    ("salaire", Col::Amount),
    ("montantnet", Col::Amount),
    ("netapayer", Col::Amount),
    ("devise", Col::Currency),
    ("monnaie", Col::Currency),
    ("methode", Col::PayoutMethodId),
    ("methodedepaiement", Col::PayoutMethodId),
    ("modedepaiement", Col::PayoutMethodId),
    ("moyendepaiement", Col::PayoutMethodId),
    ("libelle", Col::Description),
    ("motif", Col::Description),
    ("objet", Col::Description),
    ("prenom", Col::BeneficiaryFirstname),
    ("prenoms", Col::BeneficiaryFirstname),
    ("firstname", Col::BeneficiaryFirstname),
    ("nom", Col::BeneficiaryLastname),
    ("nomdefamille", Col::BeneficiaryLastname),
    ("lastname", Col::BeneficiaryLastname),
    ("surname", Col::BeneficiaryLastname),
    ("telephone", Col::BeneficiaryPhone),
    ("tel", Col::BeneficiaryPhone),
    ("portable", Col::BeneficiaryPhone),
    ("phone", Col::BeneficiaryPhone),
    ("courriel", Col::BeneficiaryEmail),
    ("email", Col::BeneficiaryEmail),
    ("mail", Col::BeneficiaryEmail),
    ("adresseemail", Col::BeneficiaryEmail),
    ("courrielexpediteur", Col::SenderEmail),
    ("emailexpediteur", Col::SenderEmail),
    ("prenomexpediteur", Col::SenderFirstname),
    ("nomexpediteur", Col::SenderLastname),
    ("adresseexpediteur", Col::SenderAddress),
    ("telephoneexpediteur", Col::SenderPhone),
    ("description", Col::Description),
    ("currencycode", Col::Currency),
    ("mobile", Col::BeneficiaryPhone),
];

fn canonical(normalized: &str) -> Option<Col> {
    Col::ALL
        .into_iter()
        .find(|c| normalize(c.name()) == normalized)
}

fn alias(normalized: &str) -> Option<Col> {
    ALIASES
        .iter()
        .find(|(a, _)| *a == normalized)
        .map(|(_, c)| *c)
}

/// The column a header names without the config's `[columns]` table: its
/// canonical name or a built-in name. The one matching of headers: the
/// readers ([`Columns::resolve`]) and `payrun init --from` both use it.
pub fn recognise(header: &str) -> Option<Col> {
    let key = normalize(header);
    canonical(&key).or_else(|| alias(&key))
}

/// Characters of a header quoted in a message: a header line can be a
/// pasted paragraph or a whole file on one line.
const SHOWN_HEADER_CHARS: usize = 40;
/// Headers listed in a message.
const SHOWN_HEADERS: usize = 30;

/// A header as quoted in messages: at most [`SHOWN_HEADER_CHARS`].
pub fn excerpt(header: &str) -> String {
    crate::output::shown_at_most(header, SHOWN_HEADER_CHARS)
}

/// Headers as quoted in messages: at most [`SHOWN_HEADERS`] excerpts, and
/// how many more.
pub fn shown(headers: &[String]) -> (Vec<String>, usize) {
    let list = headers
        .iter()
        .take(SHOWN_HEADERS)
        .map(|h| excerpt(h))
        .collect();
    (list, headers.len().saturating_sub(SHOWN_HEADERS))
}

/// Headers as quoted in English messages ([`shown`]).
pub fn listed(headers: &[String]) -> String {
    let (list, more) = shown(headers);
    crate::lang::listed(&list, more, crate::lang::Language::En)
}

/// Where each canonical column sits in the file's rows, and the header text
/// the user wrote for it (messages name the column as the user sees it).
#[derive(Debug, Clone)]
pub struct Columns {
    index: [Option<usize>; Col::ALL.len()],
    label: [String; Col::ALL.len()],
    /// Headers payrun does not read, with their field index.
    unused: Vec<(usize, String)>,
}

impl Columns {
    /// Resolves `headers`. Errors name every missing required column, list
    /// the headers found, and name two headers that claim the same column.
    /// `optional` lists required columns the config provides a default for
    /// (`payout_method_id`, `currency`).
    pub fn resolve<'a>(
        headers: impl IntoIterator<Item = &'a str>,
        mapping: &BTreeMap<String, String>,
        optional: &[Col],
    ) -> Result<Columns, ColumnsError> {
        // The [columns] table, keyed by normalized header; its targets must
        // be canonical names.
        let mut mapped: BTreeMap<String, Col> = BTreeMap::new();
        for (from, to) in mapping {
            let Some(col) = canonical(&normalize(to)) else {
                return Err(ColumnsError::NotAColumn {
                    from: from.clone(),
                    to: to.clone(),
                });
            };
            mapped.insert(normalize(from), col);
        }

        let mut index = [None; Col::ALL.len()];
        let mut label: [String; Col::ALL.len()] = Default::default();
        let mut found = Vec::new();
        let mut unused = Vec::new();
        for (i, header) in headers.into_iter().enumerate() {
            let header = header.trim_matches(|c: char| ignored(c) && c != '_' && c != '-');
            found.push(header.to_owned());
            let key = normalize(header);
            if key.is_empty() {
                continue;
            }
            let Some(col) = mapped.get(&key).copied().or_else(|| recognise(header)) else {
                unused.push((i, header.to_owned()));
                continue;
            };
            let slot = col as usize;
            if index[slot].is_some() {
                return Err(ColumnsError::Twice {
                    column: col.name(),
                    first: excerpt(&label[slot]),
                    first_at: index[slot].map_or(0, |j| j + 1),
                    second: excerpt(header),
                    second_at: i + 1,
                });
            }
            index[slot] = Some(i);
            label[slot] = header.to_owned();
        }

        let mut required: Vec<Col> = Col::REQUIRED.to_vec();
        required.push(Col::PayoutMethodId);
        required.retain(|c| !optional.contains(c));
        let missing: Vec<&'static str> = required
            .iter()
            .filter(|c| index[**c as usize].is_none())
            .map(|c| c.name())
            .collect();
        if !missing.is_empty() {
            let unmapped: Vec<String> = unused.iter().map(|(_, h)| h.clone()).collect();
            let found = if found.iter().all(String::is_empty) {
                Found::EmptyRow
            } else if unmapped.is_empty() {
                Found::AllRead
            } else {
                let (shown, more) = shown(&unmapped);
                Found::NotRead { shown, more }
            };
            let mut defaults = Vec::new();
            if missing.contains(&"payout_method_id") {
                defaults.push("default_payout_method_id");
            }
            if missing.contains(&"currency") {
                defaults.push("default_currency");
            }
            // An example mapping only with a header left to map: every
            // header read already means the column is not in the file.
            return Err(ColumnsError::Missing {
                missing,
                found,
                defaults,
                to_map: unmapped
                    .first()
                    .map(|h| h.chars().take(SHOWN_HEADER_CHARS).collect()),
            });
        }
        Ok(Columns {
            index,
            label,
            unused,
        })
    }

    /// Headers payrun does not read, with their field index, in file order.
    pub fn unused(&self) -> &[(usize, String)] {
        &self.unused
    }

    /// The field index of `col` in a row, if the file has that column.
    pub fn index(&self, col: Col) -> Option<usize> {
        self.index[col as usize]
    }

    /// The header the user wrote for `col` (its canonical name if absent).
    pub fn label(&self, col: Col) -> &str {
        let l = &self.label[col as usize];
        if l.is_empty() { col.name() } else { l }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: [&str; 5] = [
        "account_id",
        "amount",
        "currency",
        "beneficiary_firstname",
        "beneficiary_lastname",
    ];

    fn resolve(
        headers: &[&str],
        mapping: &[(&str, &str)],
        pm: bool,
    ) -> Result<Columns, ColumnsError> {
        let map = mapping
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let optional: &[Col] = if pm { &[] } else { &[Col::PayoutMethodId] };
        Columns::resolve(headers.iter().copied(), &map, optional)
    }

    #[test]
    fn variants_of_canonical_names_match() {
        let cols = resolve(
            &[
                "Account ID",
                "AMOUNT",
                "currency",
                "beneficiaryFirstname",
                "Beneficiary-Last_Name",
                "Notes",
                "payoutMethodId",
            ],
            &[],
            true,
        )
        .unwrap();
        assert_eq!(cols.index(Col::AccountId), Some(0));
        assert_eq!(cols.index(Col::BeneficiaryLastname), Some(4));
        assert_eq!(cols.index(Col::PayoutMethodId), Some(6));
        assert_eq!(cols.index(Col::Description), None);
        assert_eq!(cols.label(Col::AccountId), "Account ID");
        assert_eq!(cols.label(Col::Description), "description");
    }

    #[test]
    fn config_mapping_applies() {
        let cols = resolve(
            &["Numéro Mobile Money", "Montant", "Devise", "Prénom", "Nom"],
            &[
                ("numéro mobile money", "account_id"),
                ("Montant", "amount"),
                ("Devise", "currency"),
                ("Prénom", "beneficiary_firstname"),
                ("Nom", "Beneficiary Lastname"),
            ],
            false,
        )
        .unwrap();
        assert_eq!(cols.index(Col::AccountId), Some(0));
        assert_eq!(cols.index(Col::BeneficiaryLastname), Some(4));
        assert_eq!(cols.label(Col::Amount), "Montant");
    }

    #[test]
    fn missing_columns_are_all_named_with_headers_found() {
        let err = resolve(&["account_id", "Net", "beneficiary_firstname"], &[], true)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "missing required columns amount, currency, beneficiary_lastname, payout_method_id"
            ),
            "{err}"
        );
        // Only the headers not read are named, and where the config goes.
        assert!(err.contains("headers not read: \"Net\"."), "{err}");
        assert!(!err.contains("\"account_id\""), "{err}");
        assert!(err.contains("default_payout_method_id"), "{err}");
        assert!(err.contains("default_currency"), "{err}");
        assert!(err.contains("payrun.toml in the folder"), "{err}");
        assert!(err.contains("\"Net\" = \"amount\""), "{err}");
    }

    /// With every header read, the message asks for the column instead
    /// of proposing to map a header that already means something else.
    #[test]
    fn a_column_absent_from_a_file_read_whole_is_asked_for() {
        let err = resolve(
            &["Nom", "Prénom", "Numéro Mobile Money", "Montant"],
            &[],
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("every header of the file is already read"),
            "{err}"
        );
        assert!(err.contains("Add a currency column to the file"), "{err}");
        assert!(!err.contains("\"Montant\" = \"currency\""), "{err}");
        assert_eq!(recognise("Numéro Mobile Money"), Some(Col::AccountId));
        assert_eq!(recognise("Matricule"), None);
    }

    #[test]
    fn payout_method_optional_with_default() {
        assert!(resolve(&BASE, &[], false).is_ok());
        assert!(resolve(&BASE, &[], true).is_err());
    }

    #[test]
    fn two_headers_for_one_column_refused() {
        let mut h = BASE.to_vec();
        h.push("Amount");
        let err = resolve(&h, &[], false).unwrap_err().to_string();
        assert!(err.contains("two columns are read as `amount`"), "{err}");
        let mut h = BASE.to_vec();
        h.push("Net");
        assert!(resolve(&h, &[("Net", "amount")], false).is_err());
        // A 26 MB header is quoted as an excerpt.
        let mut h = BASE.to_vec();
        let huge = format!("amount{}", "x".repeat(1_000_000));
        h.push(&huge);
        let err = resolve(&h, &[(&huge, "amount")], false)
            .unwrap_err()
            .to_string();
        assert!(err.len() < 500, "{} bytes", err.len());
    }

    /// French headers need no config; accents, case and invisible
    /// characters do not matter; unused headers are listed.
    #[test]
    fn french_aliases_and_invisible_characters() {
        let cols = resolve(
            &[
                "\u{feff}\u{feff}Référence",
                "Numéro",
                "Montant",
                "DEVISE",
                "PRENOM",
                "Nom",
                "Téléphone",
                "Courriel",
                "Libellé",
                "Statut",
                "Service",
            ],
            &[],
            true,
        );
        let err = cols.unwrap_err().to_string();
        assert!(
            err.contains("missing required column payout_method_id"),
            "{err}"
        );
        assert!(err.contains("\"Statut\", \"Service\""), "{err}");
        let cols = resolve(
            &[
                "\u{feff}\u{feff}Référence",
                "Numéro",
                "Montant",
                "DEVISE",
                "PRENOM",
                "Nom",
                "Téléphone",
                "Courriel",
                "Libellé",
                "Statut",
                "Mode de paiement",
            ],
            &[],
            true,
        )
        .unwrap();
        for (col, i) in [
            (Col::TransactionId, 0),
            (Col::AccountId, 1),
            (Col::Amount, 2),
            (Col::Currency, 3),
            (Col::BeneficiaryFirstname, 4),
            (Col::BeneficiaryLastname, 5),
            (Col::BeneficiaryPhone, 6),
            (Col::BeneficiaryEmail, 7),
            (Col::Description, 8),
            (Col::PayoutMethodId, 10),
        ] {
            assert_eq!(cols.index(col), Some(i), "{col:?}");
        }
        assert_eq!(cols.label(Col::TransactionId), "Référence");
        assert_eq!(cols.unused(), [(9, "Statut".to_owned())]);
        // A zero-width space or no-break space inside a header.
        let cols = resolve(
            &[
                "transaction\u{200b}_id",
                "account\u{a0}id",
                "amount",
                "currency",
                "Prénom",
                "Nom",
                "payout_method_id",
            ],
            &[],
            true,
        )
        .unwrap();
        assert_eq!(cols.index(Col::TransactionId), Some(0));
        assert_eq!(cols.index(Col::AccountId), Some(1));
        assert!(cols.unused().is_empty());
    }

    #[test]
    fn mapping_to_unknown_column_refused() {
        let err = resolve(&BASE, &[("Montant", "amout")], false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("\"amout\"") && err.contains("not a payrun column"),
            "{err}"
        );
    }
}
