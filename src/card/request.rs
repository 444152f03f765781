//! The card payment request: parsed from the user's JSON (the provider's own
//! field names), validated before anything is sent, and held with the card
//! number, CVV and OTP in secret types that redact themselves in `Debug` and
//! wipe their memory on drop. The wire body is built from it only at send
//! time ([`CardRequest::to_wire`]) and wiped when that guard is dropped.
//!
//! This file owns the validated types and the assembly of the checked fields
//! into them; reading the JSON is `json`'s, the field checks are `check`'s
//! and `check_card`'s, the errors `errors`'s.

use std::fmt;

use iso_currency::Currency;
use rust_decimal::Decimal;
use secrecy::zeroize::Zeroize;
use secrecy::{ExposeSecret, SecretString};

use crate::config::AmountUnit;
use crate::provider::wire::{PayRequest, PaymentDetails};

use super::check::{
    check_amount, check_currency, check_email, keys_errors, optional_text, required_text,
    text_or_default,
};
use super::check_card::{check_card_number, check_cvv, check_expiry, check_otp};
use super::errors::{MISSING, wrong_type};
use super::json::{self, Raw, RawDetails, RawRequest};
use super::scrub::Secrets;

pub use super::check::{MAX_EMAIL_CHARS, MAX_TEXT_CHARS};
pub use super::check_card::MAX_OTP_CHARS;
pub use super::date::YearMonth;
pub use super::errors::{FieldError, InvalidRequest};
pub use super::pan::{PAN_DIGITS, luhn_valid, mask_pan};

/// What the config contributes to a request: the values used when the
/// request does not carry them, and the unit of the wire amount (the same
/// provider takes payouts and card payments, so `amount_unit` applies to
/// both; by default amounts are whole major units).
#[derive(Debug, Clone, Copy, Default)]
pub struct Defaults<'a> {
    pub merchant_id: Option<&'a str>,
    pub payment_method_id: Option<&'a str>,
    pub amount_unit: AmountUnit,
}

/// The card itself. Only [`Card::masked`] may be shown.
#[derive(Debug)]
pub struct Card {
    /// Digits only (spaces and dashes the user typed are removed).
    number: SecretString,
    cvv: SecretString,
    expiry: YearMonth,
    name_on_card: String,
}

impl Card {
    /// First 6 and last 4 digits, the most PCI DSS allows to display.
    pub fn masked(&self) -> String {
        mask_pan(self.number.expose_secret())
    }

    pub fn expiry(&self) -> YearMonth {
        self.expiry
    }
}

/// A validated card payment request, ready to send.
#[derive(Debug)]
pub struct CardRequest {
    pub transaction_id: String,
    pub merchant_id: String,
    pub payment_method_id: String,
    pub currency: Currency,
    /// In the currency's major unit.
    pub amount: Decimal,
    /// The provider's amount: a string of digits, in the unit the config
    /// names (major by default).
    wire_amount: String,
    pub card: Card,
    otp: SecretString,
    pub customer_email: String,
    pub customer_firstname: String,
    pub customer_lastname: String,
    pub momo_number: String,
    pub description: String,
}

impl CardRequest {
    /// Parses and validates the request JSON. `today` is the current month
    /// (see [`YearMonth::current`]), passed in so expiry checks are testable.
    /// Every problem is reported, not only the first.
    pub fn parse(
        json: &[u8],
        defaults: &Defaults<'_>,
        today: YearMonth,
    ) -> Result<CardRequest, InvalidRequest> {
        json::read(json)?.validate(defaults, today)
    }

    /// The amount as the provider receives it.
    pub fn wire_amount(&self) -> &str {
        &self.wire_amount
    }

    /// Builds the provider's `/pay` body. The card data is copied into plain
    /// strings only here; the returned guard wipes them when dropped, so
    /// hold it only for the duration of the call.
    pub fn to_wire(&self) -> WireRequest {
        WireRequest(PayRequest {
            transaction_id: self.transaction_id.clone(),
            merchant_id: self.merchant_id.clone(),
            currency: self.currency.code().to_string(),
            payment_details: PaymentDetails {
                momo_number: self.momo_number.clone(),
                otp: self.otp.expose_secret().to_string(),
                customer_email: self.customer_email.clone(),
                customer_firstname: self.customer_firstname.clone(),
                customer_lastname: self.customer_lastname.clone(),
                description: self.description.clone(),
                card_number: self.card.number.expose_secret().to_string(),
                card_cvv: self.card.cvv.expose_secret().to_string(),
                expiry_month: format!("{:02}", self.card.expiry.month),
                expiry_year: format!("{:02}", self.card.expiry.year % 100),
                name_on_card: self.card.name_on_card.clone(),
            },
            payment_method_id: self.payment_method_id.clone(),
            amount: self.wire_amount.clone(),
        })
    }

    /// The strings that must never be shown, for scrubbing the provider's
    /// answer before it is printed (a provider may echo what it received).
    pub(crate) fn secrets(&self) -> Secrets<'_> {
        Secrets {
            pan: self.card.number.expose_secret(),
            cvv: self.card.cvv.expose_secret(),
            otp: self.otp.expose_secret(),
        }
    }
}

/// The wire body of one `/pay` call. Its card fields are plain `String`s (the
/// wire form); dropping the guard zeroes them.
pub struct WireRequest(PayRequest);

impl WireRequest {
    pub fn body(&self) -> &PayRequest {
        &self.0
    }
}

impl fmt::Debug for WireRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // PayRequest's Debug already redacts the card fields.
        self.0.fmt(f)
    }
}

impl WireRequest {
    /// Zeroes every card field of the body.
    fn wipe(&mut self) {
        let d = &mut self.0.payment_details;
        d.card_number.zeroize();
        d.card_cvv.zeroize();
        d.otp.zeroize();
        d.expiry_month.zeroize();
        d.expiry_year.zeroize();
        d.name_on_card.zeroize();
    }
}

impl Drop for WireRequest {
    fn drop(&mut self) {
        self.wipe();
    }
}

impl RawRequest {
    fn validate(
        self,
        defaults: &Defaults<'_>,
        today: YearMonth,
    ) -> Result<CardRequest, InvalidRequest> {
        if let Some(found) = self.not_an_object {
            return Err(InvalidRequest::one(FieldError::new(
                "request",
                format!("({found})"),
                "the request must be a JSON object",
                "write one JSON object {\"transaction_id\": ..., \"payment_details\": {...}, ...}",
            )));
        }
        let mut errs = Vec::new();
        keys_errors(&self.keys, &mut errs);

        let transaction_id = required_text(
            "transaction_id",
            self.transaction_id,
            "give the unique id of this payment, e.g. \"PAY-2024-0001\"; it is the reference to check with the provider",
            &mut errs,
        );
        let merchant_id = text_or_default(
            "merchant_id",
            self.merchant_id,
            defaults.merchant_id,
            "add \"merchant_id\" to the request, or set `merchant_id` in payrun.toml",
            &mut errs,
        );
        let payment_method_id = text_or_default(
            "payment_method_id",
            self.payment_method_id,
            defaults.payment_method_id,
            "add \"payment_method_id\" to the request, or set `card_payment_method_id` in payrun.toml",
            &mut errs,
        );
        let currency = check_currency(self.currency, &mut errs);
        let amount = check_amount(self.amount, currency, defaults.amount_unit, &mut errs);

        let details = check_details(self.payment_details, today, &mut errs);

        // Every check ran (so every problem is reported); the request exists
        // only if all passed.
        let request = (|| {
            let (amount, wire_amount) = amount?;
            let d = details?;
            Some(CardRequest {
                transaction_id: transaction_id?,
                merchant_id: merchant_id?,
                payment_method_id: payment_method_id?,
                currency: currency?,
                amount,
                wire_amount,
                card: d.card,
                otp: d.otp,
                customer_email: d.customer_email,
                customer_firstname: d.customer_firstname,
                customer_lastname: d.customer_lastname,
                momo_number: d.momo_number,
                description: d.description,
            })
        })();
        match request {
            Some(request) if errs.is_empty() => Ok(request),
            _ => {
                debug_assert!(!errs.is_empty(), "a missing field must have an error");
                if errs.is_empty() {
                    errs.push(FieldError::new(
                        "request",
                        "(the whole file)",
                        "the request is incomplete",
                        "check it against the README example",
                    ));
                }
                Err(InvalidRequest { errors: errs })
            }
        }
    }
}

/// `payment_details`, present and an object, with its fields checked.
fn check_details(
    raw: Raw<RawDetails>,
    today: YearMonth,
    errs: &mut Vec<FieldError>,
) -> Option<ValidDetails> {
    match raw {
        Raw::Text(d) => d.validate(today, errs),
        Raw::Absent => {
            errs.push(FieldError::new(
                "payment_details",
                MISSING,
                "the card and payer details are missing",
                "add a \"payment_details\" object with card_number, card_cvv, expiry_month, expiry_year, otp and customer_email",
            ));
            None
        }
        Raw::WrongType(t) => {
            errs.push(wrong_type("payment_details", t, "a JSON object"));
            None
        }
    }
}

struct ValidDetails {
    card: Card,
    otp: SecretString,
    customer_email: String,
    customer_firstname: String,
    customer_lastname: String,
    momo_number: String,
    description: String,
}

impl RawDetails {
    fn validate(self, today: YearMonth, errs: &mut Vec<FieldError>) -> Option<ValidDetails> {
        keys_errors(&self.keys, errs);
        let number = check_card_number(self.card_number, errs);
        let cvv = check_cvv(self.card_cvv, errs);
        let expiry = check_expiry(self.expiry_month, self.expiry_year, today, errs);
        let otp = check_otp(self.otp, errs);
        let customer_email = check_email(self.customer_email, errs);
        let name_on_card = optional_text("payment_details.name_on_card", self.name_on_card, errs);
        let customer_firstname = optional_text(
            "payment_details.customer_firstname",
            self.customer_firstname,
            errs,
        );
        let customer_lastname = optional_text(
            "payment_details.customer_lastname",
            self.customer_lastname,
            errs,
        );
        let momo_number = optional_text("payment_details.momo_number", self.momo_number, errs);
        let description = optional_text("payment_details.description", self.description, errs);
        Some(ValidDetails {
            card: Card {
                number: number?,
                cvv: cvv?,
                expiry: expiry?,
                name_on_card: name_on_card?,
            },
            otp: otp?,
            customer_email: customer_email?,
            customer_firstname: customer_firstname?,
            customer_lastname: customer_lastname?,
            momo_number: momo_number?,
            description: description?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// The tests' "today": March 2026.
    const TODAY: YearMonth = YearMonth {
        year: 2026,
        month: 3,
    };
    const PAN: &str = "4000000000003220";
    const CVV: &str = "737";
    const OTP: &str = "918273";

    fn valid() -> Value {
        json!({
            "transaction_id": "PAY-0001",
            "merchant_id": "merchant-1",
            "currency": "XOF",
            "payment_method_id": "card-pm",
            "amount": "25000",
            "payment_details": {
                "momo_number": "+2250700000000",
                "otp": OTP,
                "customer_email": "ama.mensah@example.com",
                "customer_firstname": "Ama",
                "customer_lastname": "Mensah",
                "description": "Order 42",
                "card_number": PAN,
                "card_cvv": CVV,
                "expiry_month": "12",
                "expiry_year": "29",
                "name_on_card": "AMA MENSAH"
            }
        })
    }

    fn parse(v: &Value) -> Result<CardRequest, InvalidRequest> {
        CardRequest::parse(v.to_string().as_bytes(), &Defaults::default(), TODAY)
    }

    /// Sets `path` (`a.b`) in a copy of the valid request; `Value::Null`
    /// removes the field.
    fn with(path: &str, value: Value) -> Value {
        let mut v = valid();
        let (obj, key) = match path.split_once('.') {
            Some((outer, inner)) => (&mut v[outer], inner),
            None => (&mut v, path),
        };
        let obj = obj.as_object_mut().unwrap();
        if value.is_null() {
            obj.remove(key);
        } else {
            obj.insert(key.to_string(), value);
        }
        v
    }

    /// The errors of an invalid request, asserting none shows card data.
    fn errors(v: &Value) -> Vec<FieldError> {
        let err = parse(v).expect_err("must be invalid");
        let all = format!(
            "{err} {:?} {}",
            err,
            err.errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        for secret in [PAN, CVV, OTP, "4000 0000 0000 3220", "4000000000003221"] {
            assert!(!all.contains(secret), "{secret:?} shown in {all}");
        }
        err.errors
    }

    /// The single error on `field`, asserting it is the only one.
    fn only_error(v: &Value, field: &str) -> FieldError {
        let errs = errors(v);
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert_eq!(errs[0].field, field, "{errs:#?}");
        assert!(!errs[0].problem.is_empty() && !errs[0].fix.is_empty());
        errs[0].clone()
    }

    #[test]
    fn valid_request_parses_and_builds_the_wire_body() {
        let req = parse(&valid()).unwrap();
        assert_eq!(req.transaction_id, "PAY-0001");
        assert_eq!(req.currency, Currency::XOF);
        assert_eq!(req.amount, Decimal::from(25_000));
        assert_eq!(req.card.masked(), "400000******3220");
        assert_eq!(
            req.card.expiry(),
            YearMonth {
                year: 2029,
                month: 12
            }
        );
        let wire = req.to_wire();
        let body = serde_json::to_value(wire.body()).unwrap();
        // Exactly the provider's field names and values, as the provider documents its `/pay` body.
        assert_eq!(body, valid());
    }

    #[test]
    fn card_number_spaces_and_dashes_are_removed_before_sending() {
        let req = parse(&with(
            "payment_details.card_number",
            json!("4000 0000-0000 3220"),
        ))
        .unwrap();
        assert_eq!(req.to_wire().body().payment_details.card_number, PAN);
    }

    #[test]
    fn debug_never_shows_card_data() {
        let req = parse(&valid()).unwrap();
        let wire = req.to_wire();
        let dbg = format!("{req:?} {:#?} {wire:?}", req);
        for secret in [PAN, CVV, OTP] {
            assert!(!dbg.contains(secret), "{secret} in {dbg}");
        }
    }

    #[test]
    fn wire_guard_wipes_card_fields_on_drop() {
        let req = parse(&valid()).unwrap();
        let mut wire = req.to_wire();
        assert_eq!(wire.body().payment_details.card_number, PAN);
        // `Drop` runs exactly this; called directly to observe the result.
        wire.wipe();
        let d = &wire.body().payment_details;
        assert!(d.card_number.is_empty() && d.card_cvv.is_empty() && d.otp.is_empty());
        assert_eq!(wire.body().transaction_id, "PAY-0001");
    }

    #[test]
    fn merchant_and_payment_method_default_from_config() {
        let v = with("merchant_id", Value::Null);
        let v = {
            let mut v = v;
            v.as_object_mut().unwrap().remove("payment_method_id");
            v
        };
        let defaults = Defaults {
            merchant_id: Some("cfg-merchant"),
            payment_method_id: Some("cfg-pm"),
            ..Defaults::default()
        };
        let req = CardRequest::parse(v.to_string().as_bytes(), &defaults, TODAY).unwrap();
        assert_eq!(req.merchant_id, "cfg-merchant");
        assert_eq!(req.payment_method_id, "cfg-pm");
        // The request wins over the config.
        let req = CardRequest::parse(valid().to_string().as_bytes(), &defaults, TODAY).unwrap();
        assert_eq!(req.merchant_id, "merchant-1");
        assert_eq!(req.payment_method_id, "card-pm");
    }

    #[test]
    fn missing_merchant_or_payment_method_names_the_config_key() {
        let e = only_error(&with("merchant_id", Value::Null), "merchant_id");
        assert!(e.fix.contains("`merchant_id` in payrun.toml"), "{e}");
        let e = only_error(&with("payment_method_id", Value::Null), "payment_method_id");
        assert!(e.fix.contains("`card_payment_method_id`"), "{e}");
    }

    #[test]
    fn transaction_id_is_required() {
        only_error(&with("transaction_id", Value::Null), "transaction_id");
        only_error(&with("transaction_id", json!("  ")), "transaction_id");
        only_error(&with("transaction_id", json!("a\nb")), "transaction_id");
        only_error(&with("transaction_id", json!(17)), "transaction_id");
    }

    #[test]
    fn card_number_rules_show_only_the_masked_number() {
        const F: &str = "payment_details.card_number";
        let e = only_error(&with(F, json!("4000000000003221")), F);
        assert_eq!(e.value, "400000******3221");
        assert!(e.problem.contains("Luhn"), "{e}");
        let e = only_error(&with(F, json!("4000 0000 0000 322O")), F);
        assert!(e.problem.contains("other than digits"), "{e}");
        assert_eq!(e.value, "**** **** **** ***O");
        let e = only_error(&with(F, json!("40000000")), F);
        assert!(e.fix.contains("has 8"), "{e}");
        let e = only_error(&with(F, json!("40000000000032200000")), F);
        assert!(e.problem.contains("length"), "{e}");
        only_error(&with(F, json!("")), F);
        only_error(&with(F, Value::Null), F);
        // A JSON number: the error names the type, never the digits.
        let e = only_error(&with(F, json!(4_000_000_000_003_220_u64)), F);
        assert_eq!(e.value, "(a number)");
    }

    #[test]
    fn cvv_must_be_3_or_4_digits_and_is_never_shown() {
        const F: &str = "payment_details.card_cvv";
        assert!(parse(&with(F, json!("1234"))).is_ok());
        for bad in ["12", "12345", "7a7", "", "73 7"] {
            let e = only_error(&with(F, json!(bad)), F);
            assert!(e.value.starts_with("(hidden"), "{e}");
        }
        only_error(&with(F, Value::Null), F);
        only_error(&with(F, json!(737)), F);
    }

    #[test]
    fn otp_must_be_present_and_is_never_shown() {
        const F: &str = "payment_details.otp";
        only_error(&with(F, Value::Null), F);
        let e = only_error(&with(F, json!("   ")), F);
        assert!(e.value.starts_with("(hidden"), "{e}");
        only_error(&with(F, json!("12 34")), F);
        only_error(&with(F, json!("1".repeat(MAX_OTP_CHARS + 1))), F);
        only_error(&with(F, json!(918_273)), F);
    }

    #[test]
    fn expiry_month_and_year_are_two_digits() {
        const M: &str = "payment_details.expiry_month";
        const Y: &str = "payment_details.expiry_year";
        for bad in ["13", "00", "1", "012", "ab", ""] {
            only_error(&with(M, json!(bad)), M);
        }
        for bad in ["2029", "9", "x9", ""] {
            only_error(&with(Y, json!(bad)), Y);
        }
        only_error(&with(M, Value::Null), M);
        only_error(&with(Y, json!(29)), Y);
        let e = only_error(&with(Y, json!("2029")), Y);
        assert!(e.fix.contains("two digits"), "{e}");
    }

    #[test]
    fn expiry_in_the_past_is_refused_and_this_month_accepted() {
        let at = |m: &str, y: &str| {
            let mut v = valid();
            v["payment_details"]["expiry_month"] = json!(m);
            v["payment_details"]["expiry_year"] = json!(y);
            v
        };
        // Today is 03/2026: a card expiring 03/26 is valid to the month's end.
        assert!(parse(&at("03", "26")).is_ok());
        assert!(parse(&at("01", "27")).is_ok());
        let e = only_error(&at("02", "26"), "payment_details.expiry_month/expiry_year");
        assert!(e.problem.contains("expired"), "{e}");
        assert_eq!(e.value, "\"02/26\"");
        only_error(&at("12", "25"), "payment_details.expiry_month/expiry_year");
    }

    #[test]
    fn currency_must_be_iso_4217() {
        const F: &str = "currency";
        assert_eq!(
            parse(&with(F, json!(" xof "))).unwrap().currency,
            Currency::XOF
        );
        for bad in ["XYZ", "FCFA", "€", "XAU", "XXX", "BOV"] {
            only_error(&with(F, json!(bad)), F);
        }
        only_error(&with(F, Value::Null), F);
    }

    #[test]
    fn amount_follows_the_payout_rule() {
        const F: &str = "amount";
        assert_eq!(
            parse(&with(F, json!("1000.00"))).unwrap().wire_amount(),
            "1000"
        );
        assert_eq!(parse(&with(F, json!("007"))).unwrap().wire_amount(), "7");
        let cases = [
            ("-5", "sign"),
            ("+5", "sign"),
            ("1e3", "scientific"),
            ("1,000", "separator"),
            ("1 000", "separator"),
            ("10.5", "0 decimal place"),
            ("0", "greater than zero"),
            ("", "empty"),
            ("12abc", "digits"),
        ];
        for (bad, word) in cases {
            let e = only_error(&with(F, json!(bad)), F);
            assert!(
                format!("{} {}", e.problem, e.fix).contains(word),
                "{bad}: {e}"
            );
            assert!(e.value.starts_with('"'), "{e}");
        }
        // EUR has cents, but the provider takes whole major units.
        let mut v = with(F, json!("10.50"));
        v["currency"] = json!("EUR");
        let e = only_error(&v, F);
        assert!(e.problem.contains("fraction"), "{e}");
        let e = only_error(&with(F, json!(25000)), F);
        assert!(e.fix.contains("in quotes"), "{e}");
        only_error(&with(F, Value::Null), F);
    }

    #[test]
    fn amount_in_minor_units_when_the_config_says_so() {
        let mut v = with("amount", json!("10.50"));
        v["currency"] = json!("EUR");
        let defaults = Defaults {
            amount_unit: AmountUnit::Minor,
            ..Defaults::default()
        };
        let req = CardRequest::parse(v.to_string().as_bytes(), &defaults, TODAY).unwrap();
        assert_eq!(req.wire_amount(), "1050");
        assert_eq!(req.amount, Decimal::new(1050, 2));
    }

    #[test]
    fn email_must_be_plausible() {
        const F: &str = "payment_details.customer_email";
        for ok in [
            "a@b.co",
            "first.last+tag@mail.example.org",
            "zoë@exämple.ci",
        ] {
            assert!(parse(&with(F, json!(ok))).is_ok(), "{ok}");
        }
        for bad in [
            "ama",
            "ama@",
            "@example.com",
            "ama@example",
            "ama@@example.com",
            "ama@exa mple.com",
            "ama@example.c",
            "ama@.example.com",
            "ama@example..com",
            "ama@example.123",
        ] {
            only_error(&with(F, json!(bad)), F);
        }
        only_error(&with(F, Value::Null), F);
    }

    #[test]
    fn optional_text_fields_may_be_absent_but_not_corrupt() {
        let mut v = valid();
        let d = v["payment_details"].as_object_mut().unwrap();
        for k in [
            "momo_number",
            "customer_firstname",
            "customer_lastname",
            "description",
            "name_on_card",
        ] {
            d.remove(k);
        }
        let req = parse(&v).unwrap();
        assert_eq!(req.to_wire().body().payment_details.name_on_card, "");
        only_error(
            &with(
                "payment_details.description",
                json!("x".repeat(MAX_TEXT_CHARS + 1)),
            ),
            "payment_details.description",
        );
        only_error(
            &with("payment_details.name_on_card", json!("AMA\u{1b}[2J")),
            "payment_details.name_on_card",
        );
    }

    #[test]
    fn unknown_and_repeated_fields_are_named() {
        let e = only_error(
            &with("payment_details.card_cvc", json!("737")),
            "payment_details.\"card_cvc\"",
        );
        assert!(e.problem.contains("typo"), "{e}");
        only_error(&with("amout", json!("1")), "\"amout\"");
        let text = valid().to_string().replacen(
            "\"card_cvv\":\"737\"",
            "\"card_cvv\":\"737\",\"card_cvv\":\"111\"",
            1,
        );
        let err = CardRequest::parse(text.as_bytes(), &Defaults::default(), TODAY).unwrap_err();
        assert_eq!(err.errors.len(), 1, "{err:?}");
        assert_eq!(err.errors[0].field, "payment_details.card_cvv");
        assert!(!format!("{err:?}").contains("111"));
    }

    #[test]
    fn malformed_json_is_one_error_without_content() {
        for text in [
            "",
            "{",
            "not json",
            "{\"card_number\": \"4000000000003220\",}",
            "{\"card_number\": 4000000000003220x}",
        ] {
            let err = CardRequest::parse(text.as_bytes(), &Defaults::default(), TODAY).unwrap_err();
            assert_eq!(err.errors.len(), 1, "{text}");
            assert_eq!(err.errors[0].field, "request");
            assert!(!format!("{err:?}").contains("3220"), "{err:?}");
        }
        for (text, found) in [
            ("[1]", "(a list)"),
            ("\"4000000000003220\"", "(a string)"),
            ("null", "(null)"),
        ] {
            let err = CardRequest::parse(text.as_bytes(), &Defaults::default(), TODAY).unwrap_err();
            assert_eq!(err.errors[0].value, found);
            assert!(!format!("{err:?}").contains("3220"), "{err:?}");
        }
        let e = only_error(&with("payment_details", json!(PAN)), "payment_details");
        assert_eq!(e.value, "(a string)");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let v = json!({
            "amount": "-1",
            "currency": "ZZZ",
            "payment_details": {"card_number": "4000000000003221", "card_cvv": "1"}
        });
        let fields: Vec<String> = errors(&v).into_iter().map(|e| e.field).collect();
        for f in [
            "transaction_id",
            "merchant_id",
            "payment_method_id",
            "currency",
            "amount",
            "payment_details.card_number",
            "payment_details.card_cvv",
            "payment_details.expiry_month",
            "payment_details.expiry_year",
            "payment_details.otp",
            "payment_details.customer_email",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} not in {fields:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_card_fields_never_panic_or_leak(
            pan in "\\PC{0,24}",
            cvv in "\\PC{0,6}",
            otp in "[0-9]{6}",
        ) {
            let mut v = valid();
            v["payment_details"]["card_number"] = json!(pan);
            v["payment_details"]["card_cvv"] = json!(cvv);
            v["payment_details"]["otp"] = json!(otp);
            if let Err(err) = parse(&v) {
                let text = format!("{err:?}");
                let compact: String = pan.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
                if compact.len() >= 12 && compact.bytes().all(|b| b.is_ascii_digit()) {
                    proptest::prop_assert!(!text.contains(&compact));
                }
                let quoted_otp = format!("\"{otp}\"");
                proptest::prop_assert!(!text.contains(&quoted_otp));
            }
        }
    }
}
