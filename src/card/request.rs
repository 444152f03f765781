//! The card payment request: parsed from the user's JSON (the provider's own
//! field names, section 2.3 of `provider-api.md`), validated before anything
//! is sent, and held with the card number, CVV and OTP in secret types that
//! redact themselves in `Debug` and wipe their memory on drop. The wire body
//! is built from it only at send time ([`CardRequest::to_wire`]) and wiped
//! when that guard is dropped.
//!
//! The JSON is read by hand-written serde visitors rather than derived ones:
//! serde's derived errors quote the offending value (`invalid type: integer
//! 4242424242424242`), which would put a card number into an error message.
//! Here every field accepts any JSON type and a wrong type becomes a field
//! error that names the type found, never the value.

use std::fmt;
use std::marker::PhantomData;

use iso_currency::Currency;
use rust_decimal::Decimal;
use secrecy::zeroize::Zeroize;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::config::AmountUnit;
use crate::provider::wire::{PayRequest, PaymentDetails};
use crate::validate::amount::{AmountError, parse_amount};

/// Longest text field accepted. The provider documents no bounds; 255 is the
/// common column size on the provider side, and a longer value is a paste
/// error rather than a name or a description.
pub const MAX_TEXT_CHARS: usize = 255;
/// An e-mail address is at most 254 characters (RFC 5321 path limit).
pub const MAX_EMAIL_CHARS: usize = 254;
/// Shortest and longest primary account number (ISO/IEC 7812 allows 8 to 19
/// digits, but no payment card network issues fewer than 12).
pub const PAN_DIGITS: std::ops::RangeInclusive<usize> = 12..=19;
/// One-time passwords are short codes; anything longer than this is not an
/// OTP but something pasted into the wrong field.
pub const MAX_OTP_CHARS: usize = 32;
/// How much of a value an error message quotes: enough to recognise it.
const QUOTE_CHARS: usize = 60;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// One reason the request cannot be sent. `value` is what the user wrote as
/// far as it may be shown: card data is masked (`400000******3220`) or hidden
/// entirely (CVV, OTP), other values are quoted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The JSON path of the field, e.g. `payment_details.card_number`.
    pub field: String,
    pub value: String,
    pub problem: String,
    pub fix: String,
}

impl FieldError {
    fn new(
        field: impl Into<String>,
        value: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> FieldError {
        FieldError {
            field: field.into(),
            value: value.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {}: {}; fix: {}",
            self.field, self.value, self.problem, self.fix
        )
    }
}

/// The request failed validation; nothing was sent. Callers branch on it
/// (exit code 2, the list of errors in the chosen output format).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the payment request is invalid ({} problem(s)), nothing was sent", .errors.len())]
pub struct InvalidRequest {
    pub errors: Vec<FieldError>,
}

impl InvalidRequest {
    pub fn one(error: FieldError) -> InvalidRequest {
        InvalidRequest {
            errors: vec![error],
        }
    }
}

// ---------------------------------------------------------------------------
// The validated request
// ---------------------------------------------------------------------------

/// A calendar month, for card expiry. Cards are valid through the last day
/// of their expiry month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct YearMonth {
    pub year: u16,
    pub month: u8,
}

impl YearMonth {
    /// The month it is now in the westernmost time zone (UTC−12). A card is
    /// refused as expired only once its expiry month has ended everywhere, so
    /// payrun never rejects a card the issuer would still accept; the
    /// provider has the last word on the few hours in between.
    pub fn current() -> YearMonth {
        /// UTC−12 is the earliest local time on Earth.
        const WESTERNMOST_OFFSET_SECS: u64 = 12 * 3600;
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        YearMonth::from_unix(secs.saturating_sub(WESTERNMOST_OFFSET_SECS))
    }

    /// The UTC calendar month of a Unix time (days-to-civil algorithm of
    /// Howard Hinnant, exact for the whole proleptic Gregorian calendar).
    pub fn from_unix(secs: u64) -> YearMonth {
        let z = (secs / 86_400) as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        YearMonth {
            year: u16::try_from(year).unwrap_or(u16::MAX),
            month: month as u8,
        }
    }
}

impl fmt::Display for YearMonth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}/{:02}", self.month, self.year % 100)
    }
}

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
        let raw: RawRequest = serde_json::from_slice(json).map_err(json_error)?;
        raw.validate(defaults, today)
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

/// Borrowed views of the secrets of one request.
pub(crate) struct Secrets<'a> {
    pub pan: &'a str,
    pub cvv: &'a str,
    pub otp: &'a str,
}

// ---------------------------------------------------------------------------
// Card helpers
// ---------------------------------------------------------------------------

/// The Luhn (mod 10) checksum every payment card number satisfies; it catches
/// any single mistyped digit and most swapped neighbours.
pub fn luhn_valid(digits: &str) -> bool {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                let d2 = d * 2;
                if d2 > 9 { d2 - 9 } else { d2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Masks a card number for display: at most the first 6 and last 4 digits
/// (PCI DSS 3.4), fewer for short numbers so at least 3 digits stay hidden.
/// Spaces and dashes are dropped. Text that is not all digits has every digit
/// starred and its other characters kept, so the user can see where the stray
/// character is without any digit being shown.
pub fn mask_pan(raw: &str) -> String {
    let compact: String = raw.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    if compact.is_empty() || !compact.bytes().all(|b| b.is_ascii_digit()) {
        return raw
            .chars()
            .take(QUOTE_CHARS)
            .map(|c| {
                if c.is_ascii_digit() {
                    '*'
                } else if c.is_control() {
                    '?'
                } else {
                    c
                }
            })
            .collect();
    }
    let n = compact.len();
    let (head, tail) = match n {
        13.. => (6, 4),
        8..=12 => (0, 4),
        _ => (0, 0),
    };
    let mut out = String::with_capacity(n);
    out.push_str(&compact[..head]);
    out.extend(std::iter::repeat_n('*', n - head - tail));
    out.push_str(&compact[n - tail..]);
    out
}

/// Removes card data from text the provider sent back before it is shown:
/// digit runs that look like a card number (Luhn-valid, 12 to 19 digits, or
/// containing this card's number) are masked, and words equal to this
/// request's CVV or OTP are replaced. A real provider should never echo them,
/// but what payrun prints must not depend on that.
pub(crate) fn scrub(text: &str, secrets: &Secrets<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if (!secrets.cvv.is_empty() && *word == secrets.cvv)
            || (!secrets.otp.is_empty() && *word == secrets.otp)
        {
            out.push_str("[redacted]");
        } else {
            mask_digit_runs(word, secrets.pan, out);
        }
        word.zeroize();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(if c.is_control() { ' ' } else { c });
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Appends `word` to `out` with every digit run that may be a card number
/// masked: a Luhn-valid run of card-number length, or any run containing
/// `pan`.
fn mask_digit_runs(word: &str, pan: &str, out: &mut String) {
    let mut rest = word;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..start]);
        let run_len = rest[start..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - start);
        let run = &rest[start..start + run_len];
        let card_like = (PAN_DIGITS.contains(&run.len()) && luhn_valid(run))
            || (!pan.is_empty() && run.contains(pan));
        if card_like {
            out.push_str(&mask_pan(run));
        } else {
            out.push_str(run);
        }
        rest = &rest[start + run_len..];
    }
    out.push_str(rest);
}

/// A value as quoted in an error message: Rust string syntax (control
/// characters escaped, so nothing can drive the terminal), shortened.
fn quote(value: &str) -> String {
    let short: String = value.chars().take(QUOTE_CHARS).collect();
    if short.len() < value.len() {
        format!("{short:?}…")
    } else {
        format!("{short:?}")
    }
}

/// How a secret value is described in an error: never its content.
fn hidden(value: &str) -> String {
    format!("(hidden, {} characters)", value.chars().count())
}

const MISSING: &str = "(missing)";

// ---------------------------------------------------------------------------
// Raw JSON reading
// ---------------------------------------------------------------------------

/// A field as found in the JSON, before validation.
#[derive(Default)]
enum Raw<T> {
    /// Not present, or `null`.
    #[default]
    Absent,
    Text(T),
    /// Present but not a string; names the JSON type found.
    WrongType(&'static str),
}

/// How a JSON string becomes a field value. Secret fields copy the text
/// straight into their secret box; no intermediate `String` is left behind.
trait FromJsonStr: Sized {
    fn from_json_str(s: &str) -> Self;
}

impl FromJsonStr for String {
    fn from_json_str(s: &str) -> Self {
        s.to_owned()
    }
}

impl FromJsonStr for SecretString {
    fn from_json_str(s: &str) -> Self {
        // `String::from(&str)` allocates exactly `len` bytes, so the boxing
        // inside `SecretString::from` does not reallocate and leave a copy.
        SecretString::from(s)
    }
}

struct RawVisitor<T>(PhantomData<T>);

impl<'de, T: FromJsonStr> Visitor<'de> for RawVisitor<T> {
    type Value = Raw<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Raw::Text(T::from_json_str(v)))
    }
    fn visit_string<E: de::Error>(self, mut v: String) -> Result<Self::Value, E> {
        let value = T::from_json_str(&v);
        v.zeroize();
        Ok(Raw::Text(value))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("true/false"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("a number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("a number"))
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("a number"))
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("a number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("a number"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Raw::Absent)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Raw::Absent)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Raw::WrongType("a list"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Raw::WrongType("an object"))
    }
}

/// A `serde::Deserialize` wrapper so `next_value` can produce a `Raw<T>`.
struct RawField<T>(Raw<T>);

impl<'de, T: FromJsonStr> de::Deserialize<'de> for RawField<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor(PhantomData)).map(RawField)
    }
}

/// Bookkeeping shared by the two objects: keys seen (to catch a field given
/// twice) and keys that are not fields (to catch typos such as `card_cvc`).
#[derive(Default)]
struct Keys {
    seen: Vec<&'static str>,
    repeated: Vec<String>,
    unknown: Vec<String>,
}

impl Keys {
    fn store<T>(&mut self, slot: &mut Raw<T>, name: &'static str, prefix: &str, value: Raw<T>) {
        if self.seen.contains(&name) {
            self.repeated.push(format!("{prefix}{name}"));
            // The second value is dropped (and wiped, if secret).
        } else {
            self.seen.push(name);
            *slot = value;
        }
    }
}

#[derive(Default)]
struct RawDetails {
    momo_number: Raw<String>,
    otp: Raw<SecretString>,
    customer_email: Raw<String>,
    customer_firstname: Raw<String>,
    customer_lastname: Raw<String>,
    description: Raw<String>,
    card_number: Raw<SecretString>,
    card_cvv: Raw<SecretString>,
    expiry_month: Raw<String>,
    expiry_year: Raw<String>,
    name_on_card: Raw<String>,
    keys: Keys,
}

#[derive(Default)]
struct RawRequest {
    transaction_id: Raw<String>,
    merchant_id: Raw<String>,
    currency: Raw<String>,
    payment_details: Raw<RawDetails>,
    payment_method_id: Raw<String>,
    amount: Raw<String>,
    keys: Keys,
    /// The top level was not an object: the JSON type found.
    not_an_object: Option<&'static str>,
}

const DETAILS: &str = "payment_details.";

/// A key as written, safe to quote (it is a name, not a value, but it is
/// still untrusted text).
fn key_label(key: &str) -> String {
    quote(key)
}

/// Fills a struct of `Raw` slots from a JSON object, or records the type
/// found when the value is not an object. Written once for both levels.
macro_rules! object_visitor {
    ($visitor:ident, $target:ty, $prefix:expr, { $($name:ident),* $(,)? } $(, $nested:ident => $nested_ty:ty)?) => {
        struct $visitor;

        impl<'de> Visitor<'de> for $visitor {
            type Value = Raw<$target>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = <$target>::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        $(stringify!($name) => {
                            let RawField(v) = map.next_value()?;
                            out.keys.store(&mut out.$name, stringify!($name), $prefix, v);
                        })*
                        $(stringify!($nested) => {
                            let v = map.next_value::<$nested_ty>()?.0;
                            out.keys.store(&mut out.$nested, stringify!($nested), $prefix, v);
                        })?
                        other => {
                            out.keys.unknown.push(format!("{}{}", $prefix, key_label(other)));
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Raw::Text(out))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Raw::WrongType("a string"))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Raw::WrongType("true/false"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Raw::WrongType("a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Raw::WrongType("a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Raw::WrongType("a number"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Raw::Absent)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Raw::Absent)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Raw::WrongType("a list"))
            }
        }
    };
}

object_visitor!(DetailsVisitor, RawDetails, DETAILS, {
    momo_number, otp, customer_email, customer_firstname, customer_lastname,
    description, card_number, card_cvv, expiry_month, expiry_year, name_on_card,
});

object_visitor!(RequestVisitor, RawRequest, "", {
    transaction_id, merchant_id, currency, payment_method_id, amount,
}, payment_details => DetailsField);

struct DetailsField(Raw<RawDetails>);

impl<'de> de::Deserialize<'de> for DetailsField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DetailsVisitor).map(DetailsField)
    }
}

impl<'de> de::Deserialize<'de> for RawRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match d.deserialize_any(RequestVisitor)? {
            Raw::Text(r) => r,
            Raw::Absent => RawRequest {
                not_an_object: Some("null"),
                ..RawRequest::default()
            },
            Raw::WrongType(t) => RawRequest {
                not_an_object: Some(t),
                ..RawRequest::default()
            },
        })
    }
}

/// A JSON syntax error. Only the category and position are shown: serde's
/// messages for data errors can quote the value, and the value may be a card
/// number. (Syntax and end-of-file messages never quote input.)
fn json_error(e: serde_json::Error) -> InvalidRequest {
    use serde_json::error::Category;
    let problem = match e.classify() {
        Category::Syntax | Category::Eof => format!("it is not valid JSON ({e})"),
        Category::Io => "it could not be read".to_string(),
        Category::Data => format!(
            "it does not have the expected shape (line {} column {})",
            e.line(),
            e.column()
        ),
    };
    InvalidRequest::one(FieldError::new(
        "request",
        "(the whole file)",
        problem,
        "write one JSON object with the fields of the provider's card payment request (see the README example)",
    ))
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

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

        let details = match self.payment_details {
            Raw::Text(d) => Some(d),
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
        };
        let details = details.and_then(|d| d.validate(today, &mut errs));

        match (
            errs.is_empty(),
            transaction_id,
            merchant_id,
            payment_method_id,
            currency,
            amount,
            details,
        ) {
            (
                true,
                Some(transaction_id),
                Some(merchant_id),
                Some(payment_method_id),
                Some(currency),
                Some((amount, wire_amount)),
                Some(d),
            ) => Ok(CardRequest {
                transaction_id,
                merchant_id,
                payment_method_id,
                currency,
                amount,
                wire_amount,
                card: d.card,
                otp: d.otp,
                customer_email: d.customer_email,
                customer_firstname: d.customer_firstname,
                customer_lastname: d.customer_lastname,
                momo_number: d.momo_number,
                description: d.description,
            }),
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

fn keys_errors(keys: &Keys, errs: &mut Vec<FieldError>) {
    for name in &keys.repeated {
        errs.push(FieldError::new(
            name.clone(),
            "(given more than once)",
            "the field appears twice in the JSON, so which value is meant is unclear",
            "keep only one of them",
        ));
    }
    for name in &keys.unknown {
        errs.push(FieldError::new(
            name.clone(),
            "(unknown field)",
            "this is not a field of the provider's card payment request (a typo?)",
            "use the provider's field names: transaction_id, merchant_id, currency, amount, payment_method_id, payment_details{momo_number, otp, customer_email, customer_firstname, customer_lastname, description, card_number, card_cvv, expiry_month, expiry_year, name_on_card}",
        ));
    }
}

fn wrong_type(field: &str, found: &str, want: &str) -> FieldError {
    FieldError::new(
        field,
        format!("({found})"),
        format!("must be {want}, not {found}"),
        format!(
            "write it as {want}, e.g. \"{field_short}\": \"...\"",
            field_short = field.rsplit('.').next().unwrap_or(field)
        ),
    )
}

/// Rejects characters that would corrupt a terminal or a log line.
fn control_char_error(field: &str, value: &str) -> Option<FieldError> {
    value.chars().any(char::is_control).then(|| {
        FieldError::new(
            field,
            quote(value),
            "contains a control character (tab, newline or similar)",
            "remove it",
        )
    })
}

/// Common checks of a non-secret text value: trimmed, no control
/// characters, not too long. `None` (with an error pushed) if it fails.
fn clean_text(field: &str, value: &str, errs: &mut Vec<FieldError>) -> Option<String> {
    let value = value.trim();
    if let Some(e) = control_char_error(field, value) {
        errs.push(e);
        return None;
    }
    if value.chars().count() > MAX_TEXT_CHARS {
        errs.push(FieldError::new(
            field,
            quote(value),
            format!("is longer than {MAX_TEXT_CHARS} characters"),
            "shorten it",
        ));
        return None;
    }
    Some(value.to_string())
}

fn required_text(
    field: &str,
    raw: Raw<String>,
    fix: &str,
    errs: &mut Vec<FieldError>,
) -> Option<String> {
    match raw {
        Raw::Text(v) if !v.trim().is_empty() => clean_text(field, &v, errs),
        Raw::Text(_) | Raw::Absent => {
            errs.push(FieldError::new(field, MISSING, "is required", fix));
            None
        }
        Raw::WrongType(t) => {
            errs.push(wrong_type(field, t, "a JSON string"));
            None
        }
    }
}

fn text_or_default(
    field: &str,
    raw: Raw<String>,
    default: Option<&str>,
    fix: &str,
    errs: &mut Vec<FieldError>,
) -> Option<String> {
    match (raw, default) {
        (Raw::Absent, Some(d)) if !d.trim().is_empty() => clean_text(field, d, errs),
        (Raw::Text(v), Some(d)) if v.trim().is_empty() && !d.trim().is_empty() => {
            clean_text(field, d, errs)
        }
        (raw, _) => required_text(field, raw, fix, errs),
    }
}

fn optional_text(field: &str, raw: Raw<String>, errs: &mut Vec<FieldError>) -> Option<String> {
    match raw {
        Raw::Absent => Some(String::new()),
        Raw::Text(v) => clean_text(field, &v, errs),
        Raw::WrongType(t) => {
            errs.push(wrong_type(field, t, "a JSON string"));
            None
        }
    }
}

fn check_currency(raw: Raw<String>, errs: &mut Vec<FieldError>) -> Option<Currency> {
    const FIELD: &str = "currency";
    let text = match raw {
        Raw::Text(v) if !v.trim().is_empty() => v,
        Raw::Text(_) | Raw::Absent => {
            errs.push(FieldError::new(
                FIELD,
                MISSING,
                "is required",
                "give the ISO 4217 code of a currency the merchant has a wallet in, e.g. \"XOF\"",
            ));
            return None;
        }
        Raw::WrongType(t) => {
            errs.push(wrong_type(FIELD, t, "a JSON string"));
            return None;
        }
    };
    let code = text.trim().to_ascii_uppercase();
    match Currency::from_code(&code) {
        Some(c) if c.is_special() || c.is_fund() || c.exponent().is_none() => {
            errs.push(FieldError::new(
                FIELD,
                quote(&text),
                format!("{code} is an ISO 4217 fund or special code ({}), not a currency a card is charged in", c.name()),
                "use the ordinary currency code, e.g. \"XOF\", \"EUR\", \"USD\"",
            ));
            None
        }
        Some(c) => Some(c),
        None => {
            errs.push(FieldError::new(
                FIELD,
                quote(&text),
                "is not an ISO 4217 currency code",
                "use the three-letter code, e.g. \"XOF\", \"EUR\", \"USD\"",
            ));
            None
        }
    }
}

/// The amount rule of payouts (`validate::amount`): digits with at most the
/// currency's decimals, greater than zero, no sign, exponent or separators;
/// with `amount_unit = "major"` (the default) a whole number.
fn check_amount(
    raw: Raw<String>,
    currency: Option<Currency>,
    unit: AmountUnit,
    errs: &mut Vec<FieldError>,
) -> Option<(Decimal, String)> {
    const FIELD: &str = "amount";
    const DIGITS_FIX: &str = "write the whole amount as digits only, e.g. \"25000\"";
    let text = match raw {
        Raw::Text(v) => v,
        Raw::Absent => {
            errs.push(FieldError::new(
                FIELD,
                MISSING,
                "is required",
                "give the amount as a string of digits in the currency's major unit, e.g. \"25000\"",
            ));
            return None;
        }
        Raw::WrongType(t) => {
            let mut e = wrong_type(FIELD, t, "a JSON string of digits");
            e.fix = "write it in quotes, e.g. \"amount\": \"25000\" (JSON numbers can lose digits)"
                .to_string();
            errs.push(e);
            return None;
        }
    };
    // Without a valid currency the amount's syntax is still worth checking;
    // the decimals rule then uses 0 places.
    let (code, exponent) = match currency {
        Some(c) => (c.code(), c.exponent().unwrap_or(0)),
        None => ("the currency", 0),
    };
    match parse_amount(text.trim(), code, exponent, unit) {
        Ok(a) => Some((a.value, a.wire)),
        Err(e) => {
            // `parse_amount` says what is wrong and how to fix it in one
            // sentence ("...: round it to ..."); split it for the report.
            let msg = e.to_string();
            let (problem, fix) = msg.split_once(": ").unwrap_or((msg.as_str(), DIGITS_FIX));
            // Its syntax fixes suggest decimals (`1234.50`), which whole
            // major units do not allow.
            let syntax = matches!(
                e,
                AmountError::Separator | AmountError::NotDigits | AmountError::Malformed
            );
            let fix = if syntax && unit == AmountUnit::Major {
                DIGITS_FIX
            } else {
                fix
            };
            errs.push(FieldError::new(FIELD, quote(&text), problem, fix));
            None
        }
    }
}

fn check_card_number(raw: Raw<SecretString>, errs: &mut Vec<FieldError>) -> Option<SecretString> {
    const FIELD: &str = "payment_details.card_number";
    let secret = match raw {
        Raw::Text(s) => s,
        Raw::Absent => {
            errs.push(FieldError::new(
                FIELD,
                MISSING,
                "is required",
                "give the number printed on the card",
            ));
            return None;
        }
        Raw::WrongType(t) => {
            let mut e = wrong_type(FIELD, t, "a JSON string");
            // No example number here: a real-looking one in an error
            // message would trip every card-data scanner.
            e.fix = "write the card number as a JSON string, in double quotes".to_string();
            errs.push(e);
            return None;
        }
    };
    let raw = secret.expose_secret().trim();
    // Digits only; the spaces and dashes people copy from the card go.
    // Built in a buffer of the final size so no partial copy is reallocated.
    let mut digits = String::with_capacity(raw.len());
    digits.extend(raw.chars().filter(|c| !matches!(c, ' ' | '-')));
    let error = if digits.is_empty() {
        Some((
            "is empty",
            "give the number printed on the card".to_string(),
        ))
    } else if !digits.bytes().all(|b| b.is_ascii_digit()) {
        Some((
            "contains characters other than digits, spaces and dashes",
            "re-type the number printed on the card (letters such as O or l are often mistaken for 0 and 1)".to_string(),
        ))
    } else if !PAN_DIGITS.contains(&digits.len()) {
        Some((
            "does not have the length of a card number",
            format!(
                "a card number has {} to {} digits; this one has {}: check for a missing or extra digit",
                PAN_DIGITS.start(),
                PAN_DIGITS.end(),
                digits.len()
            ),
        ))
    } else if !luhn_valid(&digits) {
        Some((
            "fails the Luhn checksum, so a digit is mistyped",
            "re-type the number printed on the card".to_string(),
        ))
    } else {
        None
    };
    match error {
        Some((problem, fix)) => {
            errs.push(FieldError::new(FIELD, mask_pan(raw), problem, fix));
            digits.zeroize();
            None
        }
        None => {
            let secret = SecretString::from(digits.as_str());
            digits.zeroize();
            Some(secret)
        }
    }
}

fn check_cvv(raw: Raw<SecretString>, errs: &mut Vec<FieldError>) -> Option<SecretString> {
    const FIELD: &str = "payment_details.card_cvv";
    const FIX: &str = "give the 3-digit code on the back of the card (4 digits on the front for American Express)";
    match raw {
        Raw::Text(s) => {
            let v = s.expose_secret().trim();
            if (3..=4).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()) {
                Some(SecretString::from(v))
            } else {
                let problem = if v.is_empty() {
                    "is empty"
                } else {
                    "must be 3 or 4 digits"
                };
                errs.push(FieldError::new(FIELD, hidden(v), problem, FIX));
                None
            }
        }
        Raw::Absent => {
            errs.push(FieldError::new(FIELD, MISSING, "is required", FIX));
            None
        }
        Raw::WrongType(t) => {
            let mut e = wrong_type(FIELD, t, "a JSON string");
            e.fix = "write the CVV in quotes (a leading 0 matters), e.g. \"card_cvv\": \"012\""
                .to_string();
            errs.push(e);
            None
        }
    }
}

fn check_otp(raw: Raw<SecretString>, errs: &mut Vec<FieldError>) -> Option<SecretString> {
    const FIELD: &str = "payment_details.otp";
    const FIX: &str = "give the one-time password the payer received for this payment";
    match raw {
        Raw::Text(s) => {
            let v = s.expose_secret().trim();
            let problem = if v.is_empty() {
                Some("is empty")
            } else if v.chars().any(|c| c.is_control() || c.is_whitespace()) {
                Some("contains spaces or control characters")
            } else if v.chars().count() > MAX_OTP_CHARS {
                Some("is too long for a one-time password")
            } else {
                None
            };
            match problem {
                None => Some(SecretString::from(v)),
                Some(problem) => {
                    errs.push(FieldError::new(FIELD, hidden(v), problem, FIX));
                    None
                }
            }
        }
        Raw::Absent => {
            errs.push(FieldError::new(FIELD, MISSING, "is required", FIX));
            None
        }
        Raw::WrongType(t) => {
            let mut e = wrong_type(FIELD, t, "a JSON string");
            e.fix = "write the OTP in quotes (a leading 0 matters), e.g. \"otp\": \"012345\""
                .to_string();
            errs.push(e);
            None
        }
    }
}

/// Expiry month and year, both two digits as the provider wants them, not
/// before `today`'s month.
fn check_expiry(
    month: Raw<String>,
    year: Raw<String>,
    today: YearMonth,
    errs: &mut Vec<FieldError>,
) -> Option<YearMonth> {
    let two_digits = |field: &str,
                      raw: Raw<String>,
                      range: std::ops::RangeInclusive<u8>,
                      example: &str,
                      errs: &mut Vec<FieldError>|
     -> Option<u8> {
        let v = match raw {
            Raw::Text(v) => v,
            Raw::Absent => {
                errs.push(FieldError::new(
                    field,
                    MISSING,
                    "is required",
                    format!("give it as printed on the card, with two digits, e.g. \"{example}\""),
                ));
                return None;
            }
            Raw::WrongType(t) => {
                let mut e = wrong_type(field, t, "a JSON string of two digits");
                e.fix = format!("write it in quotes with two digits, e.g. \"{example}\"");
                errs.push(e);
                return None;
            }
        };
        let t = v.trim();
        let n = (t.len() == 2 && t.bytes().all(|b| b.is_ascii_digit()))
            .then(|| t.parse::<u8>().ok())
            .flatten()
            .filter(|n| range.contains(n));
        if n.is_none() {
            let problem = if t.len() != 2 || !t.bytes().all(|b| b.is_ascii_digit()) {
                "must be exactly two digits".to_string()
            } else {
                format!(
                    "must be between {:02} and {:02}",
                    range.start(),
                    range.end()
                )
            };
            errs.push(FieldError::new(
                field,
                quote(&v),
                problem,
                format!("write it with two digits as printed on the card, e.g. \"{example}\""),
            ));
        }
        n
    };
    let m = two_digits("payment_details.expiry_month", month, 1..=12, "07", errs);
    let y = two_digits("payment_details.expiry_year", year, 0..=99, "29", errs);
    let (m, y) = (m?, y?);
    let expiry = YearMonth {
        year: 2000 + u16::from(y),
        month: m,
    };
    if expiry < today {
        errs.push(FieldError::new(
            "payment_details.expiry_month/expiry_year",
            format!("\"{expiry}\""),
            format!("the card expired at the end of {expiry} (it is now {today})"),
            "check the expiry date on the card, or ask the customer for a card that has not expired",
        ));
        return None;
    }
    Some(expiry)
}

/// A plausible address: one `@`, something before it, a dotted domain after
/// it with a top-level part of at least two letters, no spaces. Deliverability
/// is the provider's business; this catches typos and swapped fields.
fn check_email(raw: Raw<String>, errs: &mut Vec<FieldError>) -> Option<String> {
    const FIELD: &str = "payment_details.customer_email";
    const FIX: &str = "give the payer's e-mail address, e.g. \"ama.mensah@example.com\"";
    let v = match raw {
        Raw::Text(v) if !v.trim().is_empty() => v,
        Raw::Text(_) | Raw::Absent => {
            errs.push(FieldError::new(FIELD, MISSING, "is required", FIX));
            return None;
        }
        Raw::WrongType(t) => {
            errs.push(wrong_type(FIELD, t, "a JSON string"));
            return None;
        }
    };
    let t = v.trim();
    let plausible = t.chars().count() <= MAX_EMAIL_CHARS
        && !t.chars().any(|c| c.is_whitespace() || c.is_control())
        && match t.split_once('@') {
            Some((local, domain)) => {
                !local.is_empty()
                    && !domain.contains('@')
                    && domain.split('.').count() >= 2
                    && domain.split('.').all(|label| {
                        !label.is_empty()
                            && !label.starts_with('-')
                            && !label.ends_with('-')
                            && label.chars().all(|c| c.is_alphanumeric() || c == '-')
                    })
                    && domain.rsplit('.').next().is_some_and(|tld| {
                        tld.chars().count() >= 2 && tld.chars().all(char::is_alphabetic)
                    })
            }
            None => false,
        };
    if plausible {
        Some(t.to_string())
    } else {
        errs.push(FieldError::new(
            FIELD,
            quote(&v),
            "is not a plausible e-mail address",
            FIX,
        ));
        None
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
    fn luhn() {
        for ok in [
            "4000000000003220",
            "4242424242424242",
            "5555555555554444",
            "378282246310005",
            "79927398713",
        ] {
            assert!(luhn_valid(ok), "{ok}");
        }
        for bad in [
            "4000000000003221",
            "4242424242424241",
            "",
            "42a2",
            "79927398710",
        ] {
            assert!(!luhn_valid(bad), "{bad}");
        }
    }

    #[test]
    fn masking_shows_at_most_first_6_and_last_4() {
        assert_eq!(mask_pan("4000000000003220"), "400000******3220");
        assert_eq!(mask_pan("4000 0000 0000 3220"), "400000******3220");
        assert_eq!(mask_pan("4000-0000-0000-3220"), "400000******3220");
        assert_eq!(mask_pan("378282246310005"), "378282*****0005");
        assert_eq!(mask_pan("4000000000003220123"), "400000*********0123");
        assert_eq!(mask_pan("400000000322"), "********0322");
        assert_eq!(mask_pan("4000000"), "*******");
        assert_eq!(mask_pan("4000 0000 0000 322O"), "**** **** **** ***O");
        assert_eq!(mask_pan(""), "");
    }

    #[test]
    fn calendar_months_from_unix_time() {
        let ym = |year, month| YearMonth { year, month };
        assert_eq!(YearMonth::from_unix(0), ym(1970, 1));
        assert_eq!(YearMonth::from_unix(951_782_400), ym(2000, 2));
        assert_eq!(YearMonth::from_unix(1_700_000_000), ym(2023, 11));
        assert_eq!(YearMonth::from_unix(1_709_251_199), ym(2024, 2));
        assert_eq!(YearMonth::from_unix(1_709_251_200), ym(2024, 3));
        assert_eq!(YearMonth::from_unix(4_102_444_800), ym(2100, 1));
        assert!(YearMonth::current() >= ym(2025, 1));
        assert_eq!(ym(2029, 7).to_string(), "07/29");
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
        // Exactly the provider's field names and values (section 2.3).
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

    #[test]
    fn scrub_masks_card_numbers_and_secrets() {
        let s = Secrets {
            pan: PAN,
            cvv: CVV,
            otp: OTP,
        };
        let out = scrub(
            "pan 4000000000003220 x4000000000003220y cvv 737 otp 918273 ok 7370 id 123\u{1b}[2J",
            &s,
        );
        assert!(
            !out.contains(PAN) && !out.contains(" 737 ") && !out.contains(OTP),
            "{out}"
        );
        assert!(out.contains("400000******3220"), "{out}");
        assert!(out.contains("ok 7370 id 123"), "{out}");
        assert!(!out.contains('\u{1b}'), "{out}");
    }

    proptest::proptest! {
        #[test]
        fn masked_numbers_show_at_most_ten_digits(digits in "[0-9]{12,19}") {
            let masked = mask_pan(&digits);
            proptest::prop_assert_eq!(masked.len(), digits.len());
            let shown = masked.bytes().filter(u8::is_ascii_digit).count();
            proptest::prop_assert!(shown <= 10 && shown + 3 <= digits.len());
        }

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
