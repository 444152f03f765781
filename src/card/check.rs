//! Checks of the request's ordinary fields: the ids and free text (trimmed,
//! no control characters, bounded), the currency (ISO 4217), the amount (the
//! payouts' rule), the payer's e-mail, and the keys given twice or unknown.
//! Each check takes a field as found ([`Raw`]) and returns its clean value,
//! or `None` with a [`FieldError`] pushed, so every problem is reported at
//! once. The card's own fields are checked in `check_card`.

use iso_currency::Currency;
use rust_decimal::Decimal;

use crate::config::AmountUnit;
use crate::validate::amount::{AmountError, parse_amount};

use super::errors::{FieldError, MISSING, quote, wrong_type};
use super::json::{Keys, Raw};

/// Longest text field accepted. The provider documents no bounds; 255 is the
/// common column size on the provider side, and a longer value is a paste
/// error rather than a name or a description.
pub const MAX_TEXT_CHARS: usize = 255;
/// An e-mail address is at most 254 characters (RFC 5321 path limit).
pub const MAX_EMAIL_CHARS: usize = 254;

pub(super) fn keys_errors(keys: &Keys, errs: &mut Vec<FieldError>) {
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

/// Rejects characters that would corrupt a terminal or a log line.
pub(super) fn control_char_error(field: &str, value: &str) -> Option<FieldError> {
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

pub(super) fn required_text(
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

pub(super) fn text_or_default(
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

pub(super) fn optional_text(
    field: &str,
    raw: Raw<String>,
    errs: &mut Vec<FieldError>,
) -> Option<String> {
    match raw {
        Raw::Absent => Some(String::new()),
        Raw::Text(v) => clean_text(field, &v, errs),
        Raw::WrongType(t) => {
            errs.push(wrong_type(field, t, "a JSON string"));
            None
        }
    }
}

pub(super) fn check_currency(raw: Raw<String>, errs: &mut Vec<FieldError>) -> Option<Currency> {
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
pub(super) fn check_amount(
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
            let fix = match &e {
                // The payroll message suggests `number_format`, which JSON
                // amounts do not read: name the two ways to write it instead.
                AmountError::Ambiguous { en, fr } => ambiguous_fix(en, fr, unit),
                _ if syntax && unit == AmountUnit::Major => DIGITS_FIX.to_owned(),
                _ => fix.to_owned(),
            };
            errs.push(FieldError::new(FIELD, quote(&text), problem, fix));
            None
        }
    }
}

/// The fix of an amount such as `80.000`, which reads `en` with a decimal
/// point and `fr` with a thousands separator: write the one meant without
/// the ambiguity (a fraction only where the unit allows one).
fn ambiguous_fix(en: &str, fr: &str, unit: AmountUnit) -> String {
    if en.contains('.') && unit == AmountUnit::Major {
        format!("write \"{fr}\" if {fr} is meant (amounts are whole major units here)")
    } else {
        format!("write \"{fr}\" if {fr} is meant, or \"{en}\" if {en} is meant")
    }
}

/// A plausible address: one `@`, something before it, a dotted domain after
/// it with a top-level part of at least two letters, no spaces. Deliverability
/// is the provider's business; this catches typos and swapped fields.
pub(super) fn check_email(raw: Raw<String>, errs: &mut Vec<FieldError>) -> Option<String> {
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

    fn amount(text: &str, code: &str, unit: AmountUnit) -> Result<String, FieldError> {
        let mut errs = Vec::new();
        let c = Currency::from_code(code);
        match check_amount(Raw::Text(text.to_owned()), c, unit, &mut errs) {
            Some((_, wire)) => Ok(wire),
            None => Err(errs.remove(0)),
        }
    }

    /// `80.000` XOF is 80 000 the French way and 80 the English way: the
    /// card payment is refused naming the value and both readings, as a
    /// payroll row would be, instead of charging 80.
    #[test]
    fn locale_ambiguous_amounts_refused() {
        let e = amount("80.000", "XOF", AmountUnit::Major).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("\"80.000\""), "{text}");
        assert!(text.contains("reads 80 "), "{text}");
        assert!(text.contains("80000"), "{text}");
        assert!(!text.contains("number_format"), "{text}");
        let e = amount("1.500", "EUR", AmountUnit::Minor).unwrap_err();
        assert!(e.to_string().contains("\"1.5\" if 1.5 is meant"), "{e}");
        let e = amount("1.500", "XOF", AmountUnit::Major).unwrap_err();
        assert!(e.to_string().contains("whole major units"), "{e}");
        // Unambiguous writings of the same amounts still pass.
        assert_eq!(amount("80000", "XOF", AmountUnit::Major).unwrap(), "80000");
        assert_eq!(amount("80", "XOF", AmountUnit::Major).unwrap(), "80");
        assert_eq!(amount("80.00", "EUR", AmountUnit::Major).unwrap(), "80");
        assert_eq!(amount("1.5", "EUR", AmountUnit::Minor).unwrap(), "150");
        assert_eq!(amount("1.50", "EUR", AmountUnit::Minor).unwrap(), "150");
    }
}
