//! Reading the three request bodies: JSON parsing (malformed JSON is a 400)
//! and field rules (every missing or invalid field is named in one 422).
//! The checks run on a `serde_json::Value` rather than a derived
//! `Deserialize`, so one answer lists all the problems, not just the first.
//! Valid bodies come out as the shared wire types of `provider::wire`, plus
//! what the ledger needs (the parsed amount and a fingerprint of the body).

use rust_decimal::Decimal;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::card;
use crate::provider::wire::{
    Beneficiary, ExecuteRequest, InitiateRequest, PayRequest, PaymentDetails, Sender,
};

/// Longest transaction or account id accepted. The provider gives no
/// bound; 128 leaves room for any derived id (a 64-hex run hash plus a row
/// number) while refusing obviously broken input.
pub(crate) const MAX_ID_LEN: usize = 128;
/// Most digits in an amount: `Decimal` holds 28 digits exactly.
pub(crate) const MAX_AMOUNT_DIGITS: usize = 28;

/// One named problem of a request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub field: String,
    pub reason: String,
}

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyError {
    /// Not JSON at all (400).
    Malformed(String),
    /// JSON, but fields are missing or invalid (422).
    Invalid(Vec<FieldError>),
}

/// A body equal to a previous one under the same transaction id has the
/// same fingerprint: a SHA-256 of its canonical serialisation (the wire
/// struct, so key order and white space do not matter), cut to 128 bits.
pub(crate) type Fingerprint = [u8; 16];

fn fingerprint<T: serde::Serialize>(value: &T) -> Fingerprint {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    let mut out = [0u8; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// A valid `/initiates` body.
#[derive(Debug, Clone)]
pub(crate) struct Initiate {
    pub request: InitiateRequest,
    pub amount: Decimal,
    pub fingerprint: Fingerprint,
}

/// A valid `/pay` body, without the secrets: the card number survives
/// only as its mask, CVV and OTP not at all.
#[derive(Debug, Clone)]
pub(crate) struct Pay {
    pub transaction_id: String,
    pub merchant_id: String,
    pub currency: String,
    pub payment_method_id: String,
    pub amount: Decimal,
    pub masked_card: String,
    pub enrolment: card::Enrolment,
    pub fingerprint: Fingerprint,
}

fn parse_object(body: &[u8]) -> Result<Map<String, Value>, BodyError> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(BodyError::Invalid(vec![FieldError {
            field: "(body)".into(),
            reason: "must be a JSON object".into(),
        }])),
        // serde_json's message names line and column, never the content.
        Err(e) => Err(BodyError::Malformed(format!("malformed JSON: {e}"))),
    }
}

/// Walks one JSON object and collects the problems of its fields.
struct Fields<'a, 'e> {
    obj: &'a Map<String, Value>,
    prefix: &'static str,
    errors: &'e mut Vec<FieldError>,
}

impl<'a> Fields<'a, '_> {
    fn error(&mut self, name: &str, reason: impl Into<String>) {
        self.errors.push(FieldError {
            field: format!("{}{}", self.prefix, name),
            reason: reason.into(),
        });
    }

    /// A string field; `null` counts as missing.
    fn string(&mut self, name: &str, required: bool) -> &'a str {
        match self.obj.get(name) {
            None | Some(Value::Null) => {
                if required {
                    self.error(name, "is required");
                }
                ""
            }
            Some(Value::String(s)) => {
                if required && s.trim().is_empty() {
                    self.error(name, "must not be empty");
                }
                s
            }
            Some(_) => {
                self.error(name, "must be a string");
                ""
            }
        }
    }

    fn required(&mut self, name: &str) -> &'a str {
        self.string(name, true)
    }

    fn optional(&mut self, name: &str) -> String {
        self.string(name, false).to_owned()
    }

    /// An identifier: required, bounded, no control characters.
    fn id(&mut self, name: &str) -> &'a str {
        let s = self.required(name);
        if s.chars().count() > MAX_ID_LEN {
            self.error(name, format!("must be at most {MAX_ID_LEN} characters"));
        } else if s.chars().any(char::is_control) {
            self.error(name, "must not contain control characters");
        }
        s
    }

    /// An amount: a string of digits greater than 0.
    fn amount(&mut self, name: &str) -> Decimal {
        if let Some(Value::Number(_)) = self.obj.get(name) {
            self.error(name, "must be a string of digits, not a JSON number");
            return Decimal::ZERO;
        }
        let s = self.required(name);
        if s.is_empty() {
            return Decimal::ZERO;
        }
        match parse_amount(s) {
            Ok(d) => d,
            Err(reason) => {
                self.error(name, reason);
                Decimal::ZERO
            }
        }
    }

    /// A currency code: three upper-case letters (ISO 4217 form).
    fn currency(&mut self, name: &str) -> &'a str {
        let s = self.required(name);
        let iso_form = s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase());
        if !s.is_empty() && !iso_form {
            self.error(name, "must be an ISO 4217 code of three upper-case letters");
        }
        s
    }

    /// A nested object; `None` when absent (or invalid, which is recorded).
    fn object(&mut self, name: &str, required: bool) -> Option<&'a Map<String, Value>> {
        match self.obj.get(name) {
            None | Some(Value::Null) => {
                if required {
                    self.error(name, "is required");
                }
                None
            }
            Some(Value::Object(map)) => Some(map),
            Some(_) => {
                self.error(name, "must be an object");
                None
            }
        }
    }
}

/// Parses a wire amount: digits only, no leading zero, greater than 0.
pub(crate) fn parse_amount(s: &str) -> Result<Decimal, &'static str> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err("must be a string of digits (no sign, decimal point or spaces)");
    }
    if s.bytes().all(|b| b == b'0') {
        return Err("must be greater than 0");
    }
    if s.starts_with('0') {
        return Err("must not have leading zeros");
    }
    if s.len() > MAX_AMOUNT_DIGITS {
        return Err("has too many digits (at most 28)");
    }
    s.parse::<i128>()
        .ok()
        .and_then(|n| Decimal::try_from_i128_with_scale(n, 0).ok())
        .ok_or("is too large")
}

fn finish<T>(errors: Vec<FieldError>, value: T) -> Result<T, BodyError> {
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(BodyError::Invalid(errors))
    }
}

/// Reads a `POST /initiates` body. Required: `transactionId`, `amount`,
/// `currency`, `payoutMethodId`, `accountId`; `description`, `sender` and
/// `beneficiary` are optional (the provider does not say which are
/// required; these five are what a payout cannot do without).
pub(crate) fn initiate(body: &[u8]) -> Result<Initiate, BodyError> {
    let obj = parse_object(body)?;
    let mut errors = Vec::new();
    let mut f = Fields {
        obj: &obj,
        prefix: "",
        errors: &mut errors,
    };
    let transaction_id = f.id("transactionId").to_owned();
    let amount = f.amount("amount");
    let currency = f.currency("currency").to_owned();
    let payout_method_id = f.required("payoutMethodId").to_owned();
    let account_id = f.id("accountId").to_owned();
    let description = f.optional("description");
    let sender_obj = f.object("sender", false);
    let beneficiary_obj = f.object("beneficiary", false);
    let mut sender = Sender::default();
    if let Some(obj) = sender_obj {
        let mut s = Fields {
            obj,
            prefix: "sender.",
            errors: &mut errors,
        };
        sender = Sender {
            email: s.optional("email"),
            firstname: s.optional("firstname"),
            lastname: s.optional("lastname"),
            address: s.optional("address"),
            phone: s.optional("phone"),
        };
    }
    let mut beneficiary = Beneficiary::default();
    if let Some(obj) = beneficiary_obj {
        let mut b = Fields {
            obj,
            prefix: "beneficiary.",
            errors: &mut errors,
        };
        beneficiary = Beneficiary {
            firstname: b.optional("firstname"),
            lastname: b.optional("lastname"),
            phone: b.optional("phone"),
            email: b.optional("email"),
        };
    }
    let request = InitiateRequest {
        transaction_id,
        amount: amount.to_string(),
        currency,
        payout_method_id,
        description,
        account_id,
        sender,
        beneficiary,
    };
    let fingerprint = fingerprint(&request);
    finish(
        errors,
        Initiate {
            request,
            amount,
            fingerprint,
        },
    )
}

/// Reads a `POST /executes` body: `transactionId` only.
pub(crate) fn execute(body: &[u8]) -> Result<ExecuteRequest, BodyError> {
    let obj = parse_object(body)?;
    let mut errors = Vec::new();
    let mut f = Fields {
        obj: &obj,
        prefix: "",
        errors: &mut errors,
    };
    let transaction_id = f.id("transactionId").to_owned();
    finish(errors, ExecuteRequest { transaction_id })
}

/// Reads a `POST /pay` body. Required: `transaction_id`, `merchant_id`,
/// `currency`, `payment_method_id`, `amount`, and in `payment_details` the
/// card number (digits, Luhn), CVV (3-4 digits), expiry month and year
/// (two digits each, not in the past) and the OTP. `now` is the current
/// (year, month), given so tests can pin it.
pub(crate) fn pay(body: &[u8], now: (u32, u32)) -> Result<Pay, BodyError> {
    let obj = parse_object(body)?;
    let mut errors = Vec::new();
    let mut f = Fields {
        obj: &obj,
        prefix: "",
        errors: &mut errors,
    };
    let transaction_id = f.id("transaction_id").to_owned();
    let merchant_id = f.required("merchant_id").to_owned();
    let currency = f.currency("currency").to_owned();
    let payment_method_id = f.required("payment_method_id").to_owned();
    let amount = f.amount("amount");
    let details_obj = f.object("payment_details", true);

    let mut masked_card = String::new();
    let mut enrolment = card::Enrolment::NotEnrolled;
    let mut details = PaymentDetails::default();
    if let Some(obj) = details_obj {
        let mut d = Fields {
            obj,
            prefix: "payment_details.",
            errors: &mut errors,
        };
        // Reasons below name the rule, never the value: these are secrets.
        let number = d.required("card_number");
        if !number.is_empty() {
            match card::card_number_problem(number) {
                Some(reason) => d.error("card_number", reason),
                None => {
                    masked_card = card::mask(number);
                    enrolment = card::enrolment(number);
                }
            }
        }
        let cvv = d.required("card_cvv");
        if !cvv.is_empty()
            && let Some(reason) = card::cvv_problem(cvv)
        {
            d.error("card_cvv", reason);
        }
        let month = d.required("expiry_month");
        let year = d.required("expiry_year");
        let parsed_month = card::parse_month(month);
        let parsed_year = card::parse_year(year);
        if !month.is_empty() && parsed_month.is_none() {
            d.error("expiry_month", "must be two digits, 01 to 12");
        }
        if !year.is_empty() && parsed_year.is_none() {
            d.error("expiry_year", "must be two digits");
        }
        if let (Some(m), Some(y)) = (parsed_month, parsed_year)
            && card::expired(y, m, now)
        {
            d.error(
                "expiry_year",
                "the card has expired (expiry month is in the past)",
            );
        }
        d.required("otp");
        details = PaymentDetails {
            momo_number: d.optional("momo_number"),
            otp: String::new(),
            customer_email: d.optional("customer_email"),
            customer_firstname: d.optional("customer_firstname"),
            customer_lastname: d.optional("customer_lastname"),
            description: d.optional("description"),
            // Only the mask enters the fingerprint; CVV and OTP never do.
            card_number: masked_card.clone(),
            card_cvv: String::new(),
            expiry_month: month.to_owned(),
            expiry_year: year.to_owned(),
            name_on_card: d.optional("name_on_card"),
        };
    }
    let canonical = PayRequest {
        transaction_id: transaction_id.clone(),
        merchant_id: merchant_id.clone(),
        currency: currency.clone(),
        payment_details: details,
        payment_method_id: payment_method_id.clone(),
        amount: amount.to_string(),
    };
    let fingerprint = fingerprint(&canonical);
    finish(
        errors,
        Pay {
            transaction_id,
            merchant_id,
            currency,
            payment_method_id,
            amount,
            masked_card,
            enrolment,
            fingerprint,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields_of(err: BodyError) -> Vec<String> {
        match err {
            BodyError::Invalid(list) => list.into_iter().map(|e| e.field).collect(),
            BodyError::Malformed(m) => panic!("expected field errors, got {m}"),
        }
    }

    fn initiate_body() -> serde_json::Value {
        json!({
            "transactionId": "tx-1", "amount": "1000", "currency": "XOF",
            "payoutMethodId": "momo", "description": "salary", "accountId": "2250700000001",
            "sender": {"email": "a@b.c", "firstname": "A", "lastname": "B", "address": "x", "phone": "+1"},
            "beneficiary": {"firstname": "C", "lastname": "D", "phone": "+2", "email": "c@d.e"}
        })
    }

    #[test]
    fn amounts() {
        assert_eq!(parse_amount("1"), Ok(Decimal::ONE));
        assert_eq!(
            parse_amount("9999999999999999999999999999").map(|d| d.to_string()),
            Ok("9999999999999999999999999999".to_string())
        );
        for bad in [
            "",
            "0",
            "000",
            "012",
            "-1",
            "+1",
            "1.5",
            "1 000",
            "1e3",
            "99999999999999999999999999999",
        ] {
            assert!(parse_amount(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn valid_initiate_round_trips_to_the_wire_type() {
        let body = serde_json::to_vec(&initiate_body()).unwrap();
        let got = initiate(&body).unwrap();
        assert_eq!(got.request.transaction_id, "tx-1");
        assert_eq!(got.request.sender.email, "a@b.c");
        assert_eq!(got.request.beneficiary.lastname, "D");
        assert_eq!(got.amount, Decimal::from(1000));
    }

    #[test]
    fn fingerprint_ignores_layout_but_not_content() {
        let a = initiate(br#"{"transactionId":"t","amount":"5","currency":"XOF","payoutMethodId":"momo","accountId":"1"}"#).unwrap();
        let b = initiate(br#"{ "accountId":"1", "payoutMethodId":"momo", "currency":"XOF", "amount":"5", "transactionId":"t" }"#).unwrap();
        let c = initiate(br#"{"transactionId":"t","amount":"6","currency":"XOF","payoutMethodId":"momo","accountId":"1"}"#).unwrap();
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_ne!(a.fingerprint, c.fingerprint);
    }

    #[test]
    fn every_problem_is_named() {
        let body = br#"{"amount": 100, "currency": "xof", "payoutMethodId": "", "accountId": 7, "sender": "x", "beneficiary": {"email": 3}}"#;
        let fields = fields_of(initiate(body).unwrap_err());
        assert_eq!(
            fields,
            [
                "transactionId",
                "amount",
                "currency",
                "payoutMethodId",
                "accountId",
                "sender",
                "beneficiary.email"
            ]
        );
    }

    #[test]
    fn malformed_and_non_object_bodies() {
        assert!(matches!(
            initiate(b"{not json"),
            Err(BodyError::Malformed(_))
        ));
        assert!(matches!(initiate(b""), Err(BodyError::Malformed(_))));
        assert_eq!(fields_of(initiate(b"[1,2]").unwrap_err()), ["(body)"]);
    }

    #[test]
    fn long_and_control_ids_are_refused() {
        let long = "x".repeat(MAX_ID_LEN + 1);
        let body = json!({"transactionId": long});
        assert_eq!(
            fields_of(execute(&serde_json::to_vec(&body).unwrap()).unwrap_err()),
            ["transactionId"]
        );
        assert!(execute(br#"{"transactionId":"a\nb"}"#).is_err());
        assert_eq!(
            execute(br#"{"transactionId":"tx-9"}"#)
                .unwrap()
                .transaction_id,
            "tx-9"
        );
    }

    fn pay_body(card: &str, cvv: &str, mm: &str, yy: &str, otp: Option<&str>) -> Vec<u8> {
        let mut details = json!({
            "card_number": card, "card_cvv": cvv, "expiry_month": mm, "expiry_year": yy,
            "name_on_card": "A B", "customer_email": "a@b.c"
        });
        if let Some(otp) = otp {
            details["otp"] = json!(otp);
        }
        serde_json::to_vec(&json!({
            "transaction_id": "p-1", "merchant_id": "m-1", "currency": "XOF",
            "payment_method_id": "card", "amount": "500", "payment_details": details
        }))
        .unwrap()
    }

    #[test]
    fn pay_rules() {
        let now = (2026, 6);
        let ok = pay(
            &pay_body("4000000000003220", "123", "06", "26", Some("1234")),
            now,
        )
        .unwrap();
        assert_eq!(ok.masked_card, "400000******3220");
        assert_eq!(ok.enrolment, card::Enrolment::Enrolled);

        let err = pay(&pay_body("4000000000003221", "12", "05", "26", None), now).unwrap_err();
        assert_eq!(
            fields_of(err),
            [
                "payment_details.card_number",
                "payment_details.card_cvv",
                "payment_details.expiry_year",
                "payment_details.otp"
            ]
        );
        let err = pay(
            &pay_body("4000000000003220", "123", "13", "2", Some("1")),
            now,
        )
        .unwrap_err();
        assert_eq!(
            fields_of(err),
            [
                "payment_details.expiry_month",
                "payment_details.expiry_year"
            ]
        );
        let err = pay(br#"{"transaction_id":"p"}"#, now).unwrap_err();
        assert_eq!(
            fields_of(err),
            [
                "merchant_id",
                "currency",
                "payment_method_id",
                "amount",
                "payment_details"
            ]
        );
    }

    #[test]
    fn pay_fingerprint_excludes_secrets() {
        let now = (2026, 1);
        let a = pay(
            &pay_body("4000000000003220", "123", "12", "30", Some("1111")),
            now,
        )
        .unwrap();
        let b = pay(
            &pay_body("4000000000003220", "999", "12", "30", Some("2222")),
            now,
        )
        .unwrap();
        let c = pay(
            &pay_body("4000002760003184", "123", "12", "30", Some("1111")),
            now,
        )
        .unwrap();
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_ne!(a.fingerprint, c.fingerprint);
        let debug = format!("{a:?}");
        assert!(!debug.contains("4000000000003220") && !debug.contains("1111"));
    }

    #[test]
    fn errors_never_echo_card_values() {
        let err = pay(
            &pay_body("4000000000003221", "12", "05", "20", Some("1")),
            (2026, 1),
        )
        .unwrap_err();
        let text = format!("{err:?}");
        assert!(!text.contains("4000000000003221"));
    }
}
