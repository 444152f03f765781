//! Checks of the card's fields: the number (digits, length, Luhn), the CVV
//! and the OTP (never shown in an error, only described), and the expiry
//! month and year (two digits each, not in the past). Card data stays in
//! secret types throughout; an error shows only the masked number.

use secrecy::zeroize::Zeroize;
use secrecy::{ExposeSecret, SecretString};

use super::date::{YearMonth, two_digits};
use super::errors::{FieldError, MISSING, hidden, quote, wrong_type};
use super::json::Raw;
use super::pan::{PAN_DIGITS, luhn_valid, mask_pan};

/// One-time passwords are short codes; anything longer than this is not an
/// OTP but something pasted into the wrong field.
pub const MAX_OTP_CHARS: usize = 32;

pub(super) fn check_card_number(
    raw: Raw<SecretString>,
    errs: &mut Vec<FieldError>,
) -> Option<SecretString> {
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

/// The CVV: 3 or 4 digits, never shown in an error.
pub(super) fn check_cvv(
    raw: Raw<SecretString>,
    errs: &mut Vec<FieldError>,
) -> Option<SecretString> {
    let rule = SecretRule {
        field: "payment_details.card_cvv",
        fix: "give the 3-digit code on the back of the card (4 digits on the front for American Express)",
        typed_fix: "write the CVV in quotes (a leading 0 matters), e.g. \"card_cvv\": \"012\"",
    };
    rule.check(raw, errs, |v| {
        if v.is_empty() {
            Some("is empty")
        } else if !((3..=4).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit())) {
            Some("must be 3 or 4 digits")
        } else {
            None
        }
    })
}

/// The one-time password: present, no spaces or control characters, short;
/// never shown in an error.
pub(super) fn check_otp(
    raw: Raw<SecretString>,
    errs: &mut Vec<FieldError>,
) -> Option<SecretString> {
    let rule = SecretRule {
        field: "payment_details.otp",
        fix: "give the one-time password the payer received for this payment",
        typed_fix: "write the OTP in quotes (a leading 0 matters), e.g. \"otp\": \"012345\"",
    };
    rule.check(raw, errs, |v| {
        if v.is_empty() {
            Some("is empty")
        } else if v.chars().any(|c| c.is_control() || c.is_whitespace()) {
            Some("contains spaces or control characters")
        } else if v.chars().count() > MAX_OTP_CHARS {
            Some("is too long for a one-time password")
        } else {
            None
        }
    })
}

/// How a short secret field (CVV, OTP) is checked and described: its errors
/// say how long the value was, never what it was.
struct SecretRule {
    field: &'static str,
    /// The fix when it is missing or breaks its rule.
    fix: &'static str,
    /// The fix when it is not a JSON string.
    typed_fix: &'static str,
}

impl SecretRule {
    /// The trimmed secret, or `None` with an error pushed. `problem` says
    /// what is wrong with a trimmed value, or `None` if it is fine.
    fn check(
        &self,
        raw: Raw<SecretString>,
        errs: &mut Vec<FieldError>,
        problem: impl Fn(&str) -> Option<&'static str>,
    ) -> Option<SecretString> {
        let error = match raw {
            Raw::Text(s) => {
                let v = s.expose_secret().trim();
                match problem(v) {
                    None => return Some(SecretString::from(v)),
                    Some(p) => FieldError::new(self.field, hidden(v), p, self.fix),
                }
            }
            Raw::Absent => FieldError::new(self.field, MISSING, "is required", self.fix),
            Raw::WrongType(t) => {
                let mut e = wrong_type(self.field, t, "a JSON string");
                e.fix = self.typed_fix.to_string();
                e
            }
        };
        errs.push(error);
        None
    }
}

/// Expiry month and year, both two digits as the provider wants them, not
/// before `today`'s month.
pub(super) fn check_expiry(
    month: Raw<String>,
    year: Raw<String>,
    today: YearMonth,
    errs: &mut Vec<FieldError>,
) -> Option<YearMonth> {
    let m = expiry_part("payment_details.expiry_month", month, 1..=12, "07", errs);
    let y = expiry_part("payment_details.expiry_year", year, 0..=99, "29", errs);
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

/// One two-digit half of the expiry date, within `range`. `example` is what
/// the fix suggests writing.
fn expiry_part(
    field: &str,
    raw: Raw<String>,
    range: std::ops::RangeInclusive<u8>,
    example: &str,
    errs: &mut Vec<FieldError>,
) -> Option<u8> {
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
    let problem = match two_digits(t) {
        Some(n) if range.contains(&n) => return Some(n),
        Some(_) => format!(
            "must be between {:02} and {:02}",
            range.start(),
            range.end()
        ),
        None => "must be exactly two digits".to_string(),
    };
    errs.push(FieldError::new(
        field,
        quote(&v),
        problem,
        format!("write it with two digits as printed on the card, e.g. \"{example}\""),
    ));
    None
}
