//! Reading the request JSON into [`RawRequest`]: every field as it was
//! found ([`Raw`]: absent, a string, or the wrong JSON type), keys given
//! twice and unknown keys recorded, nothing validated yet (the checks live
//! in `check` and `check_card`).
//!
//! The JSON is read by one hand-written serde visitor rather than derived
//! ones: serde's derived errors quote the offending value (`invalid type:
//! integer 4242424242424242`), which would put a card number into an error
//! message. Here every field accepts any JSON type and a wrong type becomes
//! [`Raw::WrongType`], naming the type found, never the value. Secret fields
//! are copied straight from the parser's buffer into their secret box.

use std::fmt;
use std::marker::PhantomData;

use secrecy::SecretString;
use secrecy::zeroize::Zeroize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::errors::{FieldError, InvalidRequest, quote};

/// A field as found in the JSON, before validation.
#[derive(Default)]
pub(super) enum Raw<T> {
    /// Not present, or `null`.
    #[default]
    Absent,
    Text(T),
    /// Present but of another JSON type; names the type found.
    WrongType(&'static str),
}

/// What a field accepts from the JSON. A string field takes a JSON string;
/// an object (the request, its `payment_details`) takes a JSON object; every
/// other JSON type is [`Raw::WrongType`].
trait FromJson: Sized {
    /// The JSON type the field wants, for serde's `expecting`.
    const EXPECTING: &'static str;

    /// The field from a JSON string, or `None` when a string is the wrong
    /// type for it.
    fn from_json_str(_: &str) -> Option<Self> {
        None
    }

    /// The field from a JSON object, or `None` (once the object is skipped)
    /// when an object is the wrong type for it.
    fn from_json_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl FromJson for String {
    const EXPECTING: &'static str = "a string";
    fn from_json_str(s: &str) -> Option<Self> {
        Some(s.to_owned())
    }
}

impl FromJson for SecretString {
    const EXPECTING: &'static str = "a string";
    fn from_json_str(s: &str) -> Option<Self> {
        // `String::from(&str)` allocates exactly `len` bytes, so the boxing
        // inside `SecretString::from` does not reallocate and leave a copy.
        Some(SecretString::from(s))
    }
}

/// The one visitor of every field and object.
struct RawVisitor<T>(PhantomData<T>);

/// JSON numbers are never a field's type (amounts, CVVs and card numbers
/// are strings, so no digit is lost or reformatted).
macro_rules! numbers_are_wrong_type {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method<E: de::Error>(self, _: $ty) -> Result<Self::Value, E> {
            Ok(Raw::WrongType("a number"))
        })*
    };
}

impl<'de, T: FromJson> Visitor<'de> for RawVisitor<T> {
    type Value = Raw<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(T::from_json_str(v).map_or(Raw::WrongType("a string"), Raw::Text))
    }
    fn visit_string<E: de::Error>(self, mut v: String) -> Result<Self::Value, E> {
        let value = self.visit_str(&v);
        v.zeroize();
        value
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Raw::WrongType("true/false"))
    }
    numbers_are_wrong_type!(visit_i64: i64, visit_u64: u64, visit_i128: i128, visit_u128: u128, visit_f64: f64);
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
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(T::from_json_map(map)?.map_or(Raw::WrongType("an object"), Raw::Text))
    }
}

/// A `serde::Deserialize` wrapper so `next_value` can produce a `Raw<T>`.
struct RawField<T>(Raw<T>);

impl<'de, T: FromJson> de::Deserialize<'de> for RawField<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor(PhantomData)).map(RawField)
    }
}

/// Bookkeeping shared by the two objects: keys seen (to catch a field given
/// twice) and keys that are not fields (to catch typos such as `card_cvc`).
#[derive(Default)]
pub(super) struct Keys {
    seen: Vec<&'static str>,
    /// Fields given more than once, with their JSON path.
    pub repeated: Vec<String>,
    /// Keys that are not fields, quoted, with their JSON path.
    pub unknown: Vec<String>,
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

/// `payment_details` as found.
#[derive(Default)]
pub(super) struct RawDetails {
    pub momo_number: Raw<String>,
    pub otp: Raw<SecretString>,
    pub customer_email: Raw<String>,
    pub customer_firstname: Raw<String>,
    pub customer_lastname: Raw<String>,
    pub description: Raw<String>,
    pub card_number: Raw<SecretString>,
    pub card_cvv: Raw<SecretString>,
    pub expiry_month: Raw<String>,
    pub expiry_year: Raw<String>,
    pub name_on_card: Raw<String>,
    pub keys: Keys,
}

/// The whole request as found.
#[derive(Default)]
pub(super) struct RawRequest {
    pub transaction_id: Raw<String>,
    pub merchant_id: Raw<String>,
    pub currency: Raw<String>,
    pub payment_details: Raw<RawDetails>,
    pub payment_method_id: Raw<String>,
    pub amount: Raw<String>,
    pub keys: Keys,
    /// The top level was not an object: the JSON type found.
    pub not_an_object: Option<&'static str>,
}

/// The JSON path prefix of the fields inside `payment_details`.
const DETAILS: &str = "payment_details.";

/// Fills a struct of `Raw` slots from a JSON object, by field name. Written
/// once for both levels.
macro_rules! json_object {
    ($target:ty, $prefix:expr, { $($name:ident),* $(,)? }) => {
        impl FromJson for $target {
            const EXPECTING: &'static str = "an object";
            fn from_json_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
                let mut out = <$target>::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        $(stringify!($name) => {
                            let RawField(v) = map.next_value()?;
                            out.keys.store(&mut out.$name, stringify!($name), $prefix, v);
                        })*
                        other => {
                            // A key is a name, not a value, but it is still
                            // untrusted text: quoted like a value.
                            out.keys.unknown.push(format!("{}{}", $prefix, quote(other)));
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Some(out))
            }
        }
    };
}

json_object!(RawDetails, DETAILS, {
    momo_number, otp, customer_email, customer_firstname, customer_lastname,
    description, card_number, card_cvv, expiry_month, expiry_year, name_on_card,
});

json_object!(RawRequest, "", {
    transaction_id, merchant_id, currency, payment_method_id, amount, payment_details,
});

/// Reads the request JSON. A top level that is not an object is recorded in
/// [`RawRequest::not_an_object`]; only unreadable JSON is an error here.
pub(super) fn read(json: &[u8]) -> Result<RawRequest, InvalidRequest> {
    let RawField(raw) = serde_json::from_slice::<RawField<RawRequest>>(json).map_err(json_error)?;
    Ok(match raw {
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
