//! The row validator: one raw row in, a typed `Payout` or every field error
//! of that row out. Pure apart from the memory of transaction ids already
//! seen (a repeat is rejected), so it is tested without any file.

use super::FieldError;
use super::account;
use super::amount;
use super::columns::{Col, Columns};
use super::fields::{self, MAX_NAME_LEN, MAX_TEXT_LEN};
use super::ids::IdSet;
use super::number::NumberFormat;
use super::numeric::{self, NumberColumns};
use super::phone::Phones;
use super::reason::{Name, Reason};
use crate::config::{AmountUnit, Config};
use crate::input::RawRow;
use crate::payout::{Payout, SenderOverride};
use anyhow::{Context, Result};
use rust_decimal::Decimal;
use std::collections::BTreeMap;

pub struct Validator {
    columns: Columns,
    /// Cells in the header row; a data row with another count is misaligned.
    width: usize,
    unit: AmountUnit,
    default_payout_method: Option<String>,
    phones: Phones,
    ids: IdSet,
    format: Option<NumberFormat>,
    /// `max_amount` per upper-case currency code.
    max_amount: BTreeMap<String, Decimal>,
    /// `default_currency`, checked: used when the file has no currency
    /// column.
    default_currency: Option<(&'static str, u16)>,
    /// Columns payrun does not read whose name says whether to pay the row
    /// (`Statut`, `pay`): field index and header.
    status_columns: Vec<(usize, String)>,
    /// (account key, currency, amount, method) of the valid rows so far.
    payees: IdSet,
    payees_seen: u64,
    key: String,
    /// Identifier columns holding number cells, for the summary's notice.
    number_columns: NumberColumns,
}

/// Whether a valid row pays the same as an earlier one.
pub enum Repeat {
    New,
    /// Same account key, currency, amount and method as this earlier row.
    Of(u64),
    /// Past the first [`MAX_PAYEES`] rows: not checked.
    NotChecked,
}

/// Valid rows checked for a repeated payee: a payroll is far smaller, and
/// the set stays about 2 MB instead of growing with a million-row file
/// (the transaction-id set already takes most of the memory budget).
pub const MAX_PAYEES: u64 = 100_000;

/// Headers (normalized) of columns that often say whether to pay a row.
const STATUS_HEADERS: [&str; 10] = [
    "status", "statut", "pay", "payer", "apayer", "paid", "etat", "state", "valide", "actif",
];
/// Cell values (normalized) that mark a row as not to be paid.
const NOT_TO_PAY: [&str; 16] = [
    "no",
    "non",
    "n",
    "false",
    "faux",
    "0",
    "cancelled",
    "canceled",
    "annule",
    "annulee",
    "suspendu",
    "suspended",
    "bloque",
    "blocked",
    "stop",
    "inactif",
];

impl Validator {
    /// Checks the config keys the rules depend on, so a bad one is reported
    /// once rather than on every row.
    /// `skip_column`: the field index of the config's `[skip]` rule, which
    /// handles that column itself.
    pub fn new(
        columns: Columns,
        width: usize,
        cfg: &Config,
        skip_column: Option<usize>,
    ) -> Result<Validator> {
        let status_columns = columns
            .unused()
            .iter()
            .filter(|(i, h)| {
                Some(*i) != skip_column
                    && STATUS_HEADERS.contains(&super::columns::normalize(h).as_str())
            })
            .cloned()
            .collect();
        let phone_region = cfg
            .default_phone_region
            .as_deref()
            .map(fields::phone_region)
            .transpose()
            .map_err(anyhow::Error::msg)
            .context("invalid config")?;
        let default_payout_method = match cfg.default_payout_method_id.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => {
                fields::identifier(m, "default_payout_method_id")
                    .map_err(anyhow::Error::msg)
                    .context("invalid config")?;
                Some(m.to_owned())
            }
            _ => None,
        };
        let default_currency = cfg
            .default_currency
            .as_deref()
            .map(|c| fields::currency(c.trim()))
            .transpose()
            .map_err(|e| {
                anyhow::anyhow!(
                    "default_currency = {:?}: {e}",
                    cfg.default_currency.as_deref().unwrap_or_default()
                )
            })
            .context("invalid config")?;
        let mut max_amount = BTreeMap::new();
        for (code, max) in &cfg.max_amount {
            let (code, _) = fields::currency(code.trim())
                .map_err(|e| anyhow::anyhow!("[max_amount] {code:?}: {e}"))
                .context("invalid config")?;
            if *max <= Decimal::ZERO {
                anyhow::bail!(
                    "invalid config: [max_amount] {code} = {max} must be greater than zero"
                );
            }
            max_amount.insert(code.to_owned(), *max);
        }
        Ok(Validator {
            payees: IdSet::default(),
            payees_seen: 0,
            key: String::new(),
            number_columns: NumberColumns::default(),
            status_columns,
            format: cfg.number_format,
            max_amount,
            default_currency,
            columns,
            width,
            unit: cfg.amount_unit(),
            default_payout_method,
            phones: Phones::new(phone_region),
            ids: IdSet::default(),
        })
    }

    /// The first row paying the same account (by its key) the same amount
    /// in the same currency by the same method as `p`, if any (`p` is
    /// remembered otherwise). Only the
    /// first [`MAX_PAYEES`] valid rows are remembered.
    pub fn repeat_of(&mut self, p: &Payout) -> Repeat {
        if self.payees_seen >= MAX_PAYEES {
            return Repeat::NotChecked;
        }
        self.payees_seen += 1;
        self.key.clear();
        for part in [
            &p.account_key,
            &p.currency,
            &p.wire_amount,
            &p.payout_method_id,
        ] {
            self.key.push_str(part);
            self.key.push('\0');
        }
        match self.payees.insert(&self.key, p.row) {
            Ok(()) => Repeat::New,
            Err(first) => Repeat::Of(first),
        }
    }

    /// Where the file's columns are.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }

    /// Notices naming the identifier columns that held number cells
    /// without a zero-padded format (leading zeros may have been lost).
    pub fn number_column_notices(&self) -> Vec<super::Notice> {
        self.number_columns.notices(&self.columns)
    }

    /// Validates one row. Every rule runs, so the user sees all the row's
    /// mistakes at once.
    pub fn check(&mut self, raw: &RawRow) -> Result<Payout, Vec<FieldError>> {
        let mut errors = Vec::new();
        if raw.fields.len() != self.width {
            errors.push(FieldError::new(
                raw.row,
                "",
                "",
                Reason::Misaligned {
                    cells: raw.fields.len(),
                    width: self.width,
                },
            ));
            return Err(errors);
        }
        self.number_columns.record(raw, &self.columns);

        // A column payrun does not read says not to pay this row: never
        // pay it silently.
        for (i, header) in &self.status_columns {
            let value = raw.fields.get(*i).unwrap_or_default();
            if NOT_TO_PAY.contains(&super::columns::normalize(value).as_str()) {
                errors.push(FieldError::new(
                    raw.row,
                    header,
                    value,
                    Reason::NotToPay {
                        header: header.clone(),
                        value: value.to_owned(),
                    },
                ));
            }
        }

        // Columns whose cell holds a spreadsheet error are reported once and
        // skip their own rule.
        let mut broken = [false; Col::ALL.len()];
        for (i, shown) in &raw.cell_errors {
            if let Some(col) = Col::ALL
                .into_iter()
                .find(|c| self.columns.index(*c) == Some(*i))
            {
                broken[col as usize] = true;
                errors.push(FieldError::new(
                    raw.row,
                    self.columns.label(col),
                    shown,
                    if shown.starts_with('=') {
                        Reason::FormulaWithoutResult {
                            formula: shown.clone(),
                        }
                    } else {
                        Reason::CellError {
                            shown: shown.clone(),
                        }
                    },
                ));
            }
        }

        let columns = &self.columns;
        let get = |col: Col| -> &str {
            if broken[col as usize] {
                return "";
            }
            columns
                .index(col)
                .and_then(|i| raw.fields.get(i))
                .map_or("", fields::clean)
        };
        let mut check = |col: Col, result: Result<(), Reason>| -> bool {
            match result {
                Ok(()) => true,
                Err(reason) => {
                    if !broken[col as usize] {
                        errors.push(FieldError::new(
                            raw.row,
                            columns.label(col),
                            get(col),
                            reason,
                        ));
                    }
                    false
                }
            }
        };

        // transaction_id: optional, unique within the file. A rejected row's
        // id still counts: a repeat is suspicious whichever copy is wrong.
        let transaction_id = match get(Col::TransactionId) {
            "" => None,
            id => {
                let ok = check(Col::TransactionId, fields::identifier(id, "transaction_id"))
                    && check(
                        Col::TransactionId,
                        numeric::check(raw, columns.index(Col::TransactionId), id),
                    )
                    && check(
                        Col::TransactionId,
                        self.ids
                            .insert(id, raw.row)
                            .map_err(|first| Reason::DuplicateId {
                                id: id.to_owned(),
                                first,
                            }),
                    );
                ok.then(|| id.to_owned())
            }
        };

        // Spaces and a number's separators are formatting, not part of
        // the account: the provider gets it without them.
        let account_given = get(Col::AccountId);
        let account_id = account::provider_form(account_given);
        if check(
            Col::AccountId,
            fields::identifier(&account_id, "account_id"),
        ) {
            check(
                Col::AccountId,
                numeric::check(raw, columns.index(Col::AccountId), account_given),
            );
        }

        let currency = match (columns.index(Col::Currency), self.default_currency) {
            (None, Some(c)) => Ok(c),
            _ => fields::currency(get(Col::Currency)),
        };
        let currency = match currency {
            Ok(c) => Some(c),
            Err(e) => {
                check(Col::Currency, Err(e));
                None
            }
        };
        let amount_text = get(Col::Amount);
        let amount = match currency {
            // Without a valid currency only the syntax can be checked.
            None => {
                if let Err(e) = amount::check_syntax(amount_text, self.format) {
                    check(Col::Amount, Err(e.into()));
                }
                None
            }
            Some((code, exp)) => match amount::parse_amount_with(
                amount_text,
                code,
                exp,
                self.unit,
                self.format,
                self.max_amount.get(code).copied(),
            ) {
                Ok(a) => Some(a),
                Err(e) => {
                    check(Col::Amount, Err(e.into()));
                    None
                }
            },
        };

        let payout_method_id = match get(Col::PayoutMethodId) {
            "" => match &self.default_payout_method {
                Some(m) => Some(m.clone()),
                None => {
                    check(Col::PayoutMethodId, Err(Reason::NoPayoutMethod));
                    None
                }
            },
            m => check(
                Col::PayoutMethodId,
                fields::identifier(m, "payout_method_id"),
            )
            .then(|| m.to_owned()),
        };

        let description = get(Col::Description);
        check(Col::Description, fields::text(description, MAX_TEXT_LEN));
        let firstname = get(Col::BeneficiaryFirstname);
        check(
            Col::BeneficiaryFirstname,
            fields::required_text(firstname, MAX_NAME_LEN, Name::First),
        );
        let lastname = get(Col::BeneficiaryLastname);
        check(
            Col::BeneficiaryLastname,
            fields::required_text(lastname, MAX_NAME_LEN, Name::Last),
        );

        let phones = &mut self.phones;
        let mut phone = |col: Col| -> Option<String> {
            // A number cell lost the `+`: its digits may still be a valid
            // international number. One with a zero-padded format shows
            // its leading zero, and is read as the text it shows.
            let numeric = numeric::unpadded(raw, columns.index(col));
            match get(col) {
                "" => None,
                p if numeric && p.bytes().all(|b| b.is_ascii_digit()) => {
                    match phones.normalize(&format!("+{p}")) {
                        Ok(e164) => Some(e164),
                        Err(_) => {
                            check(
                                col,
                                Err(Reason::PhoneNumberCell {
                                    digits: p.to_owned(),
                                }),
                            );
                            None
                        }
                    }
                }
                p => match phones.normalize(p) {
                    Ok(e164) => Some(e164),
                    Err(e) => {
                        check(col, Err(e));
                        None
                    }
                },
            }
        };
        let beneficiary_phone = phone(Col::BeneficiaryPhone);
        let sender_phone = phone(Col::SenderPhone);
        let mut optional = |col: Col, rule: fn(&str) -> Result<(), Reason>| -> Option<String> {
            match get(col) {
                "" => None,
                v => check(col, rule(v)).then(|| v.to_owned()),
            }
        };
        let beneficiary_email = optional(Col::BeneficiaryEmail, fields::email);
        let sender = SenderOverride {
            email: optional(Col::SenderEmail, fields::email),
            firstname: optional(Col::SenderFirstname, |v| fields::text(v, MAX_NAME_LEN)),
            lastname: optional(Col::SenderLastname, |v| fields::text(v, MAX_NAME_LEN)),
            address: optional(Col::SenderAddress, |v| fields::text(v, MAX_TEXT_LEN)),
            phone: sender_phone,
        };

        match (errors.is_empty(), amount, currency, payout_method_id) {
            (true, Some(amount), Some((currency, _)), Some(payout_method_id)) => Ok(Payout {
                row: raw.row,
                transaction_id,
                account_key: account::account_key(&account_id, &mut self.phones),
                account_given: (account_given != account_id).then(|| account_given.to_owned()),
                account_id: account_id.into_owned(),
                amount: amount.value,
                wire_amount: amount.wire,
                currency: currency.to_owned(),
                payout_method_id,
                description: description.to_owned(),
                beneficiary_firstname: firstname.to_owned(),
                beneficiary_lastname: lastname.to_owned(),
                beneficiary_phone,
                beneficiary_email,
                sender,
            }),
            _ => {
                if errors.is_empty() {
                    // Unreachable by construction: a missing piece always
                    // comes with its error. Refuse the row rather than guess.
                    errors.push(FieldError::new(raw.row, "", "", Reason::Unexplained));
                }
                Err(errors)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use csv::StringRecord;
    use rust_decimal::Decimal;
    use std::collections::BTreeMap;

    const HEADER: [&str; 9] = [
        "transaction_id",
        "account_id",
        "amount",
        "currency",
        "payout_method_id",
        "description",
        "beneficiary_firstname",
        "beneficiary_lastname",
        "beneficiary_phone",
    ];

    fn validator(cfg: &str, header: &[&str]) -> Validator {
        let cfg = Config::parse(cfg).unwrap();
        let optional: &[Col] = if cfg.default_payout_method_id.is_none() {
            &[]
        } else {
            &[Col::PayoutMethodId]
        };
        let cols = Columns::resolve(header.iter().copied(), &cfg.columns, optional).unwrap();
        Validator::new(cols, header.len(), &cfg, None).unwrap()
    }

    fn raw(row: u64, cells: &[&str]) -> RawRow {
        RawRow {
            row,
            fields: StringRecord::from(cells.to_vec()),
            cell_errors: Vec::new(),
            numeric: Vec::new(),
            padded: Vec::new(),
        }
    }

    fn good(id: &str) -> [String; 9] {
        [
            id,
            "2250701020304",
            "25000",
            "XOF",
            "momo",
            "Salaire mars, prime incluse",
            "Aïcha",
            "N'Guessan",
            "+225 07 01 02 03 04",
        ]
        .map(String::from)
    }

    fn check(v: &mut Validator, row: u64, cells: &[String]) -> Result<Payout, Vec<FieldError>> {
        let cells: Vec<&str> = cells.iter().map(String::as_str).collect();
        v.check(&raw(row, &cells))
    }

    fn errors_for(cells: [String; 9]) -> Vec<FieldError> {
        let mut v = validator("", &HEADER);
        check(&mut v, 7, &cells).unwrap_err()
    }

    #[test]
    fn valid_row_becomes_payout() {
        let mut v = validator("", &HEADER);
        let p = check(&mut v, 2, &good("T-1")).unwrap();
        assert_eq!(p.row, 2);
        assert_eq!(p.transaction_id.as_deref(), Some("T-1"));
        assert_eq!(p.wire_amount, "25000");
        assert_eq!(p.amount, Decimal::from(25000));
        assert_eq!(p.currency, "XOF");
        assert_eq!(p.beneficiary_phone.as_deref(), Some("+2250701020304"));
        assert_eq!(p.beneficiary_lastname, "N'Guessan");
        assert_eq!(p.description, "Salaire mars, prime incluse");
        assert_eq!(p.sender, SenderOverride::default());
    }

    #[test]
    fn every_error_of_a_row_is_reported_with_row_column_value() {
        let mut cells = good("T-1");
        cells[1] = String::new();
        cells[2] = "12,50".into();
        cells[6] = String::new();
        cells[8] = "0701020304".into();
        let errs = errors_for(cells);
        let cols: Vec<&str> = errs.iter().map(|e| e.column.as_str()).collect();
        assert_eq!(
            cols,
            [
                "account_id",
                "amount",
                "beneficiary_firstname",
                "beneficiary_phone"
            ]
        );
        assert!(errs.iter().all(|e| e.row == 7));
        assert_eq!(errs[1].value, "12,50");
        let shown = errs[1].to_string();
        assert!(
            shown.starts_with("row 7, column amount, value \"12,50\": "),
            "{shown}"
        );
        assert!(errs[3].message.contains("default_phone_region"));
    }

    #[test]
    fn amount_checked_against_currency() {
        let mut cells = good("");
        cells[2] = "100.50".into();
        cells[3] = "USD".into();
        let errs = errors_for(cells.clone());
        assert!(errs[0].message.contains("whole USD amounts"), "{:?}", errs);
        cells[3] = "XOF".into();
        assert!(
            errors_for(cells.clone())[0]
                .message
                .contains("XOF has 0 decimal")
        );
        // Minor units: converted.
        let mut v = validator("amount_unit = \"minor\"", &HEADER);
        cells[3] = "USD".into();
        assert_eq!(check(&mut v, 2, &cells).unwrap().wire_amount, "10050");
        // An unknown currency reports the currency, and the amount's syntax
        // only.
        cells[3] = "CFA".into();
        let errs = errors_for(cells.clone());
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].column, "currency");
        cells[2] = "-5".into();
        assert_eq!(errors_for(cells).len(), 2);
    }

    #[test]
    fn repeated_transaction_id_rejected_naming_first_row() {
        let mut v = validator("", &HEADER);
        assert!(check(&mut v, 2, &good("T-1")).is_ok());
        assert!(check(&mut v, 3, &good("T-2")).is_ok());
        let errs = check(&mut v, 9, &good("T-1")).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].message.contains("already used on row 2"),
            "{}",
            errs[0]
        );
        // Empty ids are derived by the engine, never duplicates.
        assert!(
            check(&mut v, 10, &good(""))
                .unwrap()
                .transaction_id
                .is_none()
        );
        assert!(check(&mut v, 11, &good("")).is_ok());
    }

    #[test]
    fn payout_method_from_config_default() {
        let header: Vec<&str> = HEADER
            .iter()
            .copied()
            .filter(|h| *h != "payout_method_id")
            .collect();
        let mut v = validator("default_payout_method_id = \"bank\"", &header);
        let mut cells = good("").to_vec();
        cells.remove(4);
        assert_eq!(check(&mut v, 2, &cells).unwrap().payout_method_id, "bank");
        // Empty cell in a present column, with and without a default.
        let mut v = validator("default_payout_method_id = \"bank\"", &HEADER);
        let mut cells = good("");
        cells[4] = String::new();
        assert_eq!(check(&mut v, 2, &cells).unwrap().payout_method_id, "bank");
        let errs = errors_for(cells);
        assert!(errs[0].message.contains("default_payout_method_id"));
    }

    #[test]
    fn national_phone_with_region() {
        let mut v = validator("default_phone_region = \"CI\"", &HEADER);
        let mut cells = good("");
        cells[8] = "07 01 02 03 04".into();
        assert_eq!(
            check(&mut v, 2, &cells)
                .unwrap()
                .beneficiary_phone
                .as_deref(),
            Some("+2250701020304")
        );
    }

    #[test]
    fn bad_config_values_fail_once() {
        let cfg = Config::parse("default_phone_region = \"XX1\"").unwrap();
        let cols = Columns::resolve(HEADER.iter().copied(), &cfg.columns, &[]).unwrap();
        let err = Validator::new(cols, HEADER.len(), &cfg, None)
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("default_phone_region"));
    }

    #[test]
    fn misaligned_row_is_one_error() {
        let mut v = validator("", &HEADER);
        let mut cells = good("").to_vec();
        cells.push("extra".into());
        let errs = check(&mut v, 4, &cells).unwrap_err();
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0]
                .to_string()
                .starts_with("row 4: the row has 10 cells but the header has 9")
        );
    }

    #[test]
    fn spreadsheet_error_cells_reject_the_row() {
        let mut v = validator("", &HEADER);
        let cells = good("");
        let mut r = raw(5, &cells.iter().map(String::as_str).collect::<Vec<_>>());
        r.cell_errors.push((2, "#REF!".into()));
        let errs = v.check(&r).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].column, "amount");
        assert_eq!(errs[0].value, "#REF!");
        assert!(errs[0].message.contains("spreadsheet error #REF!"));
    }

    /// Number cells from a workbook: a phone that lost its `+` is read as
    /// international; an account past 15 digits was rounded and is refused.
    #[test]
    fn numeric_cells_in_identifier_columns() {
        let mut v = validator("", &HEADER);
        let mut cells = good("");
        cells[8] = "2250701020304".into();
        cells[1] = "1234567890123460000".into();
        let mut r = raw(3, &cells.iter().map(String::as_str).collect::<Vec<_>>());
        r.numeric = vec![1, 8];
        let errs = v.check(&r).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].column, "account_id");
        assert!(errs[0].message.contains("format the column as Text"));
        cells[1] = "2250701020304".into();
        let mut r = raw(3, &cells.iter().map(String::as_str).collect::<Vec<_>>());
        r.numeric = vec![1, 8];
        let p = v.check(&r).unwrap();
        assert_eq!(p.beneficiary_phone.as_deref(), Some("+2250701020304"));
        // The same digits typed as text in a CSV still need the `+`.
        r.numeric.clear();
        assert!(v.check(&r).is_err());
    }

    /// Number cells with a zero-padded format come as the padded text the
    /// sheet shows: an account keeps its leading zero (and its zeros do
    /// not count as digits the spreadsheet rounded), and a local phone
    /// number is read as typed, not as `+0...`.
    #[test]
    fn zero_padded_number_cells_read_as_shown() {
        let mut v = validator("default_phone_region = \"CI\"\n", &HEADER);
        let mut cells = good("");
        cells[1] = "0000000000000000701020304".into();
        cells[8] = "0701020304".into();
        let mut r = raw(3, &cells.iter().map(String::as_str).collect::<Vec<_>>());
        r.numeric = vec![1, 8];
        r.padded = vec![1, 8];
        let p = v.check(&r).unwrap();
        assert_eq!(p.account_id, "0000000000000000701020304");
        assert_eq!(p.beneficiary_phone.as_deref(), Some("+2250701020304"));
        assert!(v.number_column_notices().is_empty());
        // Unpadded, the same cells are read as numbers and noted.
        r.padded.clear();
        r.row = 4;
        assert!(v.check(&r).is_err(), "+0701020304 is no phone number");
        assert_eq!(v.number_column_notices().len(), 2);
    }

    #[test]
    fn control_characters_and_lengths() {
        let mut cells = good("");
        cells[5] = "two\nlines".into();
        cells[7] = "x".repeat(101);
        let errs = errors_for(cells);
        assert_eq!(errs.len(), 2);
        assert!(errs[0].message.contains("control character"));
        assert!(errs[1].message.contains("101 characters"));
    }

    #[test]
    fn emails_and_sender_overrides() {
        let mut header = HEADER.to_vec();
        header.extend([
            "beneficiary_email",
            "sender_email",
            "sender_phone",
            "sender_address",
        ]);
        let mut v = validator("", &header);
        let mut cells = good("").to_vec();
        cells.extend(
            [
                "awa@example.ci",
                "",
                "+233241234567",
                "1 Rue du Port, Abidjan",
            ]
            .map(String::from),
        );
        let p = check(&mut v, 2, &cells).unwrap();
        assert_eq!(p.beneficiary_email.as_deref(), Some("awa@example.ci"));
        assert_eq!(p.sender.email, None);
        assert_eq!(p.sender.phone.as_deref(), Some("+233241234567"));
        assert_eq!(p.sender.address.as_deref(), Some("1 Rue du Port, Abidjan"));
        cells[9] = "awa@example".into();
        cells[10] = "payroll at acme".into();
        let errs = check(&mut v, 3, &cells).unwrap_err();
        let cols: Vec<&str> = errs.iter().map(|e| e.column.as_str()).collect();
        assert_eq!(cols, ["beneficiary_email", "sender_email"]);
    }

    #[test]
    fn mapped_headers_name_the_users_column() {
        let header = ["Numéro", "Montant", "Devise", "Prénom", "Nom", "Méthode"];
        let mut map = BTreeMap::new();
        for (a, b) in [
            ("Numéro", "account_id"),
            ("Montant", "amount"),
            ("Devise", "currency"),
            ("Prénom", "beneficiary_firstname"),
            ("Nom", "beneficiary_lastname"),
            ("Méthode", "payout_method_id"),
        ] {
            map.insert(a.to_string(), b.to_string());
        }
        let cfg = Config {
            columns: map,
            ..Config::default()
        };
        let cols = Columns::resolve(header, &cfg.columns, &[]).unwrap();
        let mut v = Validator::new(cols, header.len(), &cfg, None).unwrap();
        let errs = v
            .check(&raw(3, &["0701", "1 000", "XOF", "Awa", "Koné", "momo"]))
            .unwrap_err();
        assert_eq!(errs[0].column, "Montant");
    }
}
