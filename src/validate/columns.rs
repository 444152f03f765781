//! Matching a file's header row to payrun's canonical columns (README,
//! "Columns"): canonical snake_case names matched ignoring case, spaces, `_`
//! and `-` (`Account ID`, `accountId` and `account-id` are all
//! `account_id`), plus the config's `[columns]` table for any other header
//! (`"Montant" = "amount"`). Unknown extra columns are ignored.

use anyhow::{Result, bail};
use std::collections::BTreeMap;

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

/// The key headers are compared by: lower case, without spaces, `_` and `-`.
pub fn normalize(header: &str) -> String {
    header
        .trim()
        .chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-' | '\u{a0}'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn canonical(normalized: &str) -> Option<Col> {
    Col::ALL
        .into_iter()
        .find(|c| normalize(c.name()) == normalized)
}

/// Where each canonical column sits in the file's rows, and the header text
/// the user wrote for it (messages name the column as the user sees it).
#[derive(Debug, Clone)]
pub struct Columns {
    index: [Option<usize>; Col::ALL.len()],
    label: [String; Col::ALL.len()],
}

impl Columns {
    /// Resolves `headers`. Errors name every missing required column, list
    /// the headers found, and name two headers that claim the same column.
    pub fn resolve<'a>(
        headers: impl IntoIterator<Item = &'a str>,
        mapping: &BTreeMap<String, String>,
        payout_method_required: bool,
    ) -> Result<Columns> {
        // The [columns] table, keyed by normalized header; its targets must
        // be canonical names.
        let mut mapped: BTreeMap<String, Col> = BTreeMap::new();
        for (from, to) in mapping {
            let Some(col) = canonical(&normalize(to)) else {
                bail!(
                    "[columns] maps {from:?} to {to:?}, which is not a payrun column; the columns are: {}",
                    Col::ALL.map(Col::name).join(", ")
                );
            };
            mapped.insert(normalize(from), col);
        }

        let mut index = [None; Col::ALL.len()];
        let mut label: [String; Col::ALL.len()] = Default::default();
        let mut found = Vec::new();
        for (i, header) in headers.into_iter().enumerate() {
            let header = header.trim();
            found.push(header.to_owned());
            let key = normalize(header);
            if key.is_empty() {
                continue;
            }
            let Some(col) = mapped.get(&key).copied().or_else(|| canonical(&key)) else {
                continue;
            };
            let slot = col as usize;
            if index[slot].is_some() {
                bail!(
                    "two columns are read as `{}`: {:?} (column {}) and {:?} (column {}); rename or remove one of them",
                    col.name(),
                    label[slot],
                    index[slot].map_or(0, |j| j + 1),
                    header,
                    i + 1
                );
            }
            index[slot] = Some(i);
            label[slot] = header.to_owned();
        }

        let mut required: Vec<Col> = Col::REQUIRED.to_vec();
        if payout_method_required {
            required.push(Col::PayoutMethodId);
        }
        let missing: Vec<&str> = required
            .iter()
            .filter(|c| index[**c as usize].is_none())
            .map(|c| c.name())
            .collect();
        if !missing.is_empty() {
            let found = if found.iter().all(String::is_empty) {
                "none".to_owned()
            } else {
                found
                    .iter()
                    .map(|h| format!("{h:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let extra = if missing.contains(&"payout_method_id") {
                " (or set default_payout_method_id in the config)"
            } else {
                ""
            };
            bail!(
                "missing required column{} {}{extra}; headers found: {found}. Rename the header in the file, or map it in the config's [columns] table, e.g. \"Montant\" = \"amount\"",
                if missing.len() > 1 { "s" } else { "" },
                missing.join(", "),
            );
        }
        Ok(Columns { index, label })
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

    fn resolve(headers: &[&str], mapping: &[(&str, &str)], pm: bool) -> Result<Columns> {
        let map = mapping
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        Columns::resolve(headers.iter().copied(), &map, pm)
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
        let err = resolve(
            &["account_id", "Montant", "beneficiary_firstname"],
            &[],
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(
                "missing required columns amount, currency, beneficiary_lastname, payout_method_id"
            ),
            "{err}"
        );
        assert!(err.contains("\"Montant\""), "{err}");
        assert!(err.contains("default_payout_method_id"), "{err}");
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
        h.push("Montant");
        assert!(resolve(&h, &[("Montant", "amount")], false).is_err());
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
