//! The rules for single fields other than the amount: text length and
//! control characters, identifiers, currency codes, e-mail addresses and
//! phone numbers. Each rule is a pure function returning the cleaned value or
//! the [`Reason`] it refuses it (explained per language in `crate::lang`);
//! the caller adds the row, the column and the value.

use super::reason::{IdKey, Name, Reason};
use phonenumber::country;

/// Longest identifier (transaction id, account id, payout method id). The
/// provider documents no bound; 64 characters holds any IBAN (34), any
/// E.164 number (16) and any UUID (36) with room to spare, and a longer
/// value is almost always two cells run together.
pub const MAX_ID_LEN: usize = 64;
/// Longest first or last name: ICAO passports print at most 39 characters
/// per name; 100 leaves room for compound names without accepting a pasted
/// paragraph.
pub const MAX_NAME_LEN: usize = 100;
/// Longest description or address: what a bank statement line or a postal
/// address form holds.
pub const MAX_TEXT_LEN: usize = 255;
/// Longest e-mail address (RFC 5321 path limit).
pub const MAX_EMAIL_LEN: usize = 254;

/// Removes surrounding spaces. Nothing else: a `'` is part of the cell as
/// written. (The formula guard of the files payrun wrote — `failed.csv`,
/// `rejected.csv` — is undone when they are read, `input::guarded`, and
/// only there: in any other file a leading `'` stays, and an account or id
/// that starts with one is refused rather than read as another.)
pub fn clean(raw: &str) -> &str {
    raw.trim()
}

/// A free-text field: at most `max` characters, no control characters
/// (line breaks and tabs break the provider's records and the reports).
pub fn text(value: &str, max: usize) -> Result<(), Reason> {
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(Reason::ControlCharacter {
            escaped: c.escape_unicode().to_string(),
        });
    }
    let len = value.chars().count();
    if len > max {
        return Err(Reason::TextTooLong { len, max });
    }
    Ok(())
}

/// A required text field.
pub fn required_text(value: &str, max: usize, what: Name) -> Result<(), Reason> {
    if value.is_empty() {
        return Err(Reason::NameRequired(what));
    }
    text(value, max)
}

/// An identifier sent to the provider: printable ASCII without spaces, at
/// most [`MAX_ID_LEN`] characters. Non-ASCII look-alikes (a Cyrillic `о`, a
/// non-breaking space) in an id are a classic source of "not found" errors.
pub fn identifier(value: &str, what: IdKey) -> Result<(), Reason> {
    if value.is_empty() {
        return Err(Reason::IdRequired(what));
    }
    // A spreadsheet's text marker (or payrun's own formula guard, which a
    // file payrun wrote is read without): never part of an account or an
    // id, and read as one it would silently name another.
    if value.starts_with('\'') {
        return Err(Reason::IdTextMarker(what));
    }
    if let Some(c) = value.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(Reason::IdCharacter {
            id: what,
            character: (c != ' ').then_some(c),
        });
    }
    if value.len() > MAX_ID_LEN {
        return Err(Reason::IdTooLong {
            id: what,
            len: value.len(),
        });
    }
    Ok(())
}

/// ISO 4217 codes that are not money a person can be paid in: fund and
/// accounting units (BOV, CLF, CHE, CHW, COU, MXV, UYI, UYW, USN, XDR,
/// XSU, XUA, the bond-market units XBA-XBD), the test code XTS, and
/// currencies withdrawn from circulation that the code list may still
/// carry (HRK became EUR in 2023, SLL became SLE, ZWL became ZWG, CUC,
/// and the pre-redenomination BYR, MRO, STD, VEF).
const NOT_FOR_PAYMENT: [&str; 23] = [
    "BOV", "CLF", "CHE", "CHW", "COU", "MXV", "UYI", "UYW", "USN", "XDR", "XSU", "XUA", "XBA",
    "XBB", "XBC", "XBD", "XTS", "HRK", "SLL", "ZWL", "CUC", "BYR", "MRO",
];
/// Further withdrawn codes (kept apart so each list stays readable).
const WITHDRAWN: [&str; 3] = ["STD", "VEF", "LTL"];

/// A currency accepted for payouts: an active ISO 4217 code of money, with
/// a number of minor-unit digits (so not `XXX`, `XAU`, fund codes or
/// withdrawn currencies). Returns the upper-case code and that number of
/// digits.
pub fn currency(value: &str) -> Result<(&'static str, u16), Reason> {
    if value.is_empty() {
        return Err(Reason::CurrencyRequired);
    }
    let upper = value.to_ascii_uppercase();
    if NOT_FOR_PAYMENT.contains(&upper.as_str()) || WITHDRAWN.contains(&upper.as_str()) {
        return Err(Reason::CurrencyNotForPayment { code: upper });
    }
    match iso_currency::Currency::from_code(&upper) {
        Some(c) => match c.exponent() {
            Some(exp) => Ok((c.code(), exp)),
            None => Err(Reason::CurrencyNoMinorUnit {
                code: c.code().to_owned(),
                name: c.name().to_owned(),
            }),
        },
        None => Err(Reason::CurrencyUnknown),
    }
}

/// A plausible e-mail address: one `@`, a local part and a dotted domain of
/// letters, digits and hyphens, no spaces. Plausible, not deliverable:
/// only the recipient's server can tell that.
pub fn email(value: &str) -> Result<(), Reason> {
    if value.chars().count() > MAX_EMAIL_LEN {
        return Err(Reason::EmailTooLong);
    }
    let Some((local, domain)) = value.split_once('@') else {
        return Err(Reason::EmailNoAt);
    };
    if local.is_empty() || domain.is_empty() || domain.contains('@') {
        return Err(Reason::EmailNotAnAddress);
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Reason::EmailSpace);
    }
    if value.contains([',', ';', '<', '>', '(', ')', '[', ']', '\\', '"']) {
        return Err(Reason::EmailCharacter);
    }
    if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
        return Err(Reason::EmailDot);
    }
    let labels: Vec<&str> = domain.split('.').collect();
    let well_formed = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
        && labels.last().is_some_and(|tld| {
            tld.chars().count() >= 2 && !tld.chars().all(|c| c.is_ascii_digit())
        });
    if !well_formed {
        return Err(Reason::EmailDomain);
    }
    Ok(())
}

/// Parses the config's `default_phone_region` (ISO 3166 alpha-2, e.g. `CI`).
pub fn phone_region(code: &str) -> Result<country::Id, String> {
    code.trim()
        .to_ascii_uppercase()
        .parse::<country::Id>()
        .map_err(|_| {
            format!(
                "default_phone_region = {code:?} is not an ISO 3166 country code: write two letters, e.g. \"CI\", \"GH\", \"KE\""
            )
        })
}

/// Normalises a phone number to E.164 (`+2250701020304`). A number written
/// without `+` is read in `region`, the config's `default_phone_region`;
/// without one it cannot be interpreted and is refused.
pub fn phone(value: &str, region: Option<country::Id>) -> Result<String, Reason> {
    let international = value.starts_with('+');
    if !international && region.is_none() {
        return Err(Reason::PhoneNoCountryCode);
    }
    if value.chars().any(|c| c.is_alphabetic()) {
        return Err(Reason::PhoneLetters);
    }
    let region = if international { None } else { region };
    let parsed = phonenumber::parse(region, value).map_err(|_| Reason::PhoneNotANumber)?;
    if !phonenumber::is_valid(&parsed) {
        return Err(Reason::PhoneInvalid {
            region: (!international)
                .then(|| region.map(|r| r.as_ref().to_owned()).unwrap_or_default()),
        });
    }
    Ok(parsed.format().mode(phonenumber::Mode::E164).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_spaces_only() {
        assert_eq!(clean("  Awa  "), "Awa");
        // A `'` is the cell's, wherever it is.
        assert_eq!(clean("'+2250701020304"), "'+2250701020304");
        assert_eq!(clean("'=1+1"), "'=1+1");
        assert_eq!(clean("'Ndiaye"), "'Ndiaye");
        assert_eq!(clean("O'Brien"), "O'Brien");
    }

    #[test]
    fn text_rules() {
        assert!(text("Salaire de mars, prime incluse", MAX_TEXT_LEN).is_ok());
        assert!(text("Zoë N'Guessan", MAX_NAME_LEN).is_ok());
        assert!(
            text("line\nbreak", MAX_TEXT_LEN)
                .unwrap_err()
                .to_string()
                .contains("control character")
        );
        assert!(text("tab\there", MAX_TEXT_LEN).is_err());
        assert!(text("zero\u{0}", MAX_TEXT_LEN).is_err());
        assert!(text(&"é".repeat(100), 100).is_ok());
        assert!(
            text(&"é".repeat(101), 100)
                .unwrap_err()
                .to_string()
                .contains("101 characters")
        );
        assert!(
            required_text("", 10, super::Name::Last)
                .unwrap_err()
                .to_string()
                .contains("required")
        );
    }

    #[test]
    fn identifier_rules() {
        assert!(identifier("PAY-2024-03/0001", "transaction_id").is_ok());
        assert!(
            identifier("", "account_id")
                .unwrap_err()
                .to_string()
                .contains("required")
        );
        assert!(
            identifier("12 34", "account_id")
                .unwrap_err()
                .to_string()
                .contains("a space")
        );
        // Cyrillic small o in place of a Latin o.
        assert!(identifier("m\u{43e}mo", "payout_method_id").is_err());
        assert!(
            identifier(&"x".repeat(65), "transaction_id")
                .unwrap_err()
                .to_string()
                .contains("65 characters")
        );
        assert!(identifier(&"x".repeat(64), "transaction_id").is_ok());
        let e = identifier("'+2250700000001", "account_id")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("account_id starts with '"), "{e}");
        assert!(identifier("pay'1", "transaction_id").is_ok());
    }

    #[test]
    fn currency_rules() {
        assert_eq!(currency("XOF").unwrap(), ("XOF", 0));
        assert_eq!(currency("usd").unwrap(), ("USD", 2));
        assert_eq!(currency("KWD").unwrap(), ("KWD", 3));
        assert!(currency("").unwrap_err().to_string().contains("required"));
        assert!(
            currency("CFA")
                .unwrap_err()
                .to_string()
                .contains("ISO 4217")
        );
        assert!(currency("US$").is_err());
        assert!(
            currency("XAU")
                .unwrap_err()
                .to_string()
                .contains("not a currency payouts")
        );
        assert!(currency("XXX").is_err());
        for code in [
            "BOV", "CLF", "UYW", "CHE", "CHW", "COU", "MXV", "USN", "HRK", "SLL", "ZWL", "XAG",
        ] {
            assert!(currency(code).is_err(), "{code}");
        }
        assert!(
            currency("hrk")
                .unwrap_err()
                .to_string()
                .contains("withdrawn")
        );
        assert_eq!(currency("SLE").unwrap().0, "SLE");
    }

    #[test]
    fn email_rules() {
        for ok in [
            "awa.kone@example.ci",
            "kwame+payroll@mail.example.com.gh",
            "zoë@exämple.fr",
            "a@b.co",
        ] {
            assert!(email(ok).is_ok(), "{ok}");
        }
        for bad in [
            "awa.kone",
            "@example.com",
            "awa@",
            "awa@example",
            "awa@@example.com",
            "awa kone@example.com",
            "awa@example..com",
            "awa@-example.com",
            "awa@example.c",
            "a@b.com, c@d.com",
            ".awa@example.com",
            "awa..k@example.com",
            "awa@1.2.3.4",
        ] {
            assert!(email(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn phone_international() {
        assert_eq!(
            phone("+225 07 01 02 03 04", None).unwrap(),
            "+2250701020304"
        );
        assert_eq!(phone("+233 24 123 4567", None).unwrap(), "+233241234567");
        assert_eq!(phone("+254712345678", None).unwrap(), "+254712345678");
        assert_eq!(phone("+234 803 123 4567", None).unwrap(), "+2348031234567");
        assert!(
            phone("+225 12", None)
                .unwrap_err()
                .to_string()
                .contains("not a valid phone number")
        );
        assert!(phone("+225 07 CALL ME", None).is_err());
        assert!(phone("+", None).is_err());
    }

    #[test]
    fn phone_national_needs_region() {
        let err = phone("0701020304", None).unwrap_err().to_string();
        assert!(
            err.contains("+CC") && err.contains("default_phone_region"),
            "{err}"
        );
        let ci = phone_region("ci").unwrap();
        assert_eq!(phone("07 01 02 03 04", Some(ci)).unwrap(), "+2250701020304");
        let gh = phone_region("GH").unwrap();
        assert_eq!(phone("024 123 4567", Some(gh)).unwrap(), "+233241234567");
        // An international number ignores the default region.
        assert_eq!(phone("+254712345678", Some(ci)).unwrap(), "+254712345678");
        assert!(phone("12", Some(ci)).is_err());
        assert!(phone_region("Ivory").is_err());
    }
}
