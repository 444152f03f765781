//! Amount parsing: from the text a person typed to an exact `Decimal` and the
//! provider's wire amount (a string of digits). Amounts never pass through a
//! float: the text is checked character by character and the digits become
//! the `Decimal`'s integer mantissa directly, so `0.1 + 0.2` problems and
//! `12.499999` printouts cannot happen.

use crate::config::AmountUnit;
use rust_decimal::Decimal;

/// Digits allowed before the decimal point (leading zeros not counted).
/// 10^15 of any currency's major unit is far beyond any real payout (even in
/// VND or IDR it is tens of billions of dollars), so a longer number is a
/// pasted account number or a corrupted cell, not an amount. It also keeps
/// the minor-unit mantissa well inside `Decimal`'s 96 bits.
pub const MAX_INTEGER_DIGITS: usize = 15;

/// Why an amount was refused. Each message says what is wrong and how to
/// fix it; the caller adds the row, the column and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("the amount is empty: write the amount to pay, e.g. 25000")]
    Empty,
    #[error(
        "an amount must not carry a sign: write it without `+` or `-` (a payout is always a positive amount)"
    )]
    Sign,
    #[error(
        "scientific notation is not accepted: write every digit, e.g. 2500000 instead of 2.5E6"
    )]
    Exponent,
    #[error(
        "thousands separators and decimal commas are not accepted: write digits with an optional `.` before the decimals, e.g. 1234.50"
    )]
    Separator,
    #[error(
        "the amount must be digits with an optional `.` and decimals, e.g. 1234.50: remove currency symbols, letters and other characters"
    )]
    NotDigits,
    #[error(
        "the amount is malformed: write digits with an optional `.` followed by decimals, e.g. 0.50"
    )]
    Malformed,
    #[error(
        "the amount has more than {MAX_INTEGER_DIGITS} digits before the decimal point: check that this is really the amount column"
    )]
    TooLarge,
    #[error("the amount must be greater than zero: remove the row if nothing is to be paid")]
    Zero,
    #[error(
        "{currency} has {exponent} decimal place(s) (ISO 4217) but this amount has {found}: round it to {exponent} decimal place(s)"
    )]
    TooManyDecimals {
        currency: String,
        exponent: u16,
        found: usize,
    },
    #[error(
        "the provider receives whole {currency} amounts (amount_unit = \"major\") and this amount has a fraction: round it to a whole amount, or set amount_unit = \"minor\" in the config if the provider takes amounts in minor units"
    )]
    Fractional { currency: String },
}

/// The digits of a syntactically valid plain decimal, without leading zeros
/// in the integer part and without trailing zeros in the fraction (they add
/// no precision: `25000.00` is exactly `25000`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainDecimal<'a> {
    pub int: &'a str,
    pub frac: &'a str,
}

/// Checks that `text` (already trimmed) is a plain decimal: ASCII digits,
/// optionally one `.` followed by at least one digit. Nothing else.
pub fn parse_plain(text: &str) -> Result<PlainDecimal<'_>, AmountError> {
    if text.is_empty() {
        return Err(AmountError::Empty);
    }
    // Classify the first offending character so the message names the mistake.
    if let Some((i, c)) = text
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.'))
    {
        return Err(match c {
            '+' | '-' | '\u{2212}' => AmountError::Sign,
            'e' | 'E'
                if i > 0
                    && text[i + 1..]
                        .trim_start_matches(['+', '-'])
                        .chars()
                        .all(|d| d.is_ascii_digit())
                    && text[..i].chars().all(|d| d.is_ascii_digit() || d == '.') =>
            {
                AmountError::Exponent
            }
            ',' | '\'' | ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}' | '_'
                if text[i + c.len_utf8()..].starts_with(|d: char| d.is_ascii_digit()) =>
            {
                AmountError::Separator
            }
            _ => AmountError::NotDigits,
        });
    }
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) => {
            if int.is_empty() || frac.is_empty() || frac.contains('.') {
                // Several dots are thousands separators in some locales.
                return Err(if frac.contains('.') {
                    AmountError::Separator
                } else {
                    AmountError::Malformed
                });
            }
            (int, frac)
        }
        None => (text, ""),
    };
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    if int.len() > MAX_INTEGER_DIGITS {
        return Err(AmountError::TooLarge);
    }
    Ok(PlainDecimal { int, frac })
}

/// A valid amount: the exact value (scaled to the currency's minor-unit
/// digits, so `10` USD is `10.00`) and the provider's digit string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    pub value: Decimal,
    pub wire: String,
}

/// Parses `text` as an amount in `currency`, whose ISO 4217 minor-unit digits
/// are `exponent`, and computes the wire amount for `unit`.
pub fn parse_amount(
    text: &str,
    currency: &str,
    exponent: u16,
    unit: AmountUnit,
) -> Result<Amount, AmountError> {
    let plain = parse_plain(text)?;
    check_amount(&plain, currency, exponent, unit)
}

/// The currency-dependent half of [`parse_amount`], for a text already known
/// to be a plain decimal.
pub fn check_amount(
    plain: &PlainDecimal<'_>,
    currency: &str,
    exponent: u16,
    unit: AmountUnit,
) -> Result<Amount, AmountError> {
    if plain.frac.len() > usize::from(exponent) {
        return Err(AmountError::TooManyDecimals {
            currency: currency.to_owned(),
            exponent,
            found: plain.frac.len(),
        });
    }
    // The minor-unit mantissa: integer digits, the decimals, padded with
    // zeros to `exponent` decimals. At most 15 + exponent (<= 4) digits, so
    // it fits a u128 and Decimal's 96-bit mantissa.
    let mut minor: u128 = 0;
    let pad = usize::from(exponent) - plain.frac.len();
    for b in plain
        .int
        .bytes()
        .chain(plain.frac.bytes())
        .chain(std::iter::repeat_n(b'0', pad))
    {
        minor = minor * 10 + u128::from(b - b'0');
    }
    if minor == 0 {
        return Err(AmountError::Zero);
    }
    let value = Decimal::try_from_i128_with_scale(minor as i128, u32::from(exponent))
        .map_err(|_| AmountError::TooLarge)?;
    let wire = match unit {
        AmountUnit::Major => {
            if !plain.frac.is_empty() {
                return Err(AmountError::Fractional {
                    currency: currency.to_owned(),
                });
            }
            plain.int.to_owned()
        }
        AmountUnit::Minor => minor.to_string(),
    };
    Ok(Amount { value, wire })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn major(text: &str, exp: u16) -> Result<Amount, AmountError> {
        parse_amount(text, "TST", exp, AmountUnit::Major)
    }
    fn minor(text: &str, exp: u16) -> Result<Amount, AmountError> {
        parse_amount(text, "TST", exp, AmountUnit::Minor)
    }

    #[test]
    fn whole_amounts_in_major_units() {
        let a = major("25000", 0).unwrap();
        assert_eq!(a.wire, "25000");
        assert_eq!(a.value, Decimal::from(25000));
        assert_eq!(major("0100", 2).unwrap().wire, "100");
        assert_eq!(major("100.00", 2).unwrap().wire, "100");
        assert_eq!(major("100.00", 2).unwrap().value.to_string(), "100.00");
        // Trailing zeros add no precision, even beyond the currency's digits.
        assert_eq!(major("25000.000", 0).unwrap().wire, "25000");
    }

    #[test]
    fn fractions_rejected_in_major_units() {
        assert!(matches!(
            major("10.5", 2),
            Err(AmountError::Fractional { .. })
        ));
    }

    #[test]
    fn minor_units_conversion() {
        assert_eq!(minor("10.5", 2).unwrap().wire, "1050");
        assert_eq!(minor("10", 2).unwrap().wire, "1000");
        assert_eq!(minor("0.01", 2).unwrap().wire, "1");
        assert_eq!(minor("1.234", 3).unwrap().wire, "1234");
        assert_eq!(minor("25000", 0).unwrap().wire, "25000");
        assert_eq!(minor("10.5", 2).unwrap().value.to_string(), "10.50");
    }

    #[test]
    fn too_many_decimals() {
        assert_eq!(
            minor("1.5", 0),
            Err(AmountError::TooManyDecimals {
                currency: "TST".into(),
                exponent: 0,
                found: 1
            })
        );
        assert!(matches!(
            minor("10.001", 2),
            Err(AmountError::TooManyDecimals { found: 3, .. })
        ));
        let msg = minor("10.001", 2).unwrap_err().to_string();
        assert!(msg.contains("TST has 2 decimal place(s)"), "{msg}");
    }

    #[test]
    fn each_mistake_named() {
        assert_eq!(major("", 2), Err(AmountError::Empty));
        assert_eq!(major("-5", 2), Err(AmountError::Sign));
        assert_eq!(major("+5", 2), Err(AmountError::Sign));
        assert_eq!(major("5-", 2), Err(AmountError::Sign));
        assert_eq!(major("1e5", 2), Err(AmountError::Exponent));
        assert_eq!(major("2.5E+6", 2), Err(AmountError::Exponent));
        assert_eq!(major("1,000", 2), Err(AmountError::Separator));
        assert_eq!(major("12,50", 2), Err(AmountError::Separator));
        assert_eq!(major("1 000", 2), Err(AmountError::Separator));
        assert_eq!(major("1\u{a0}000", 2), Err(AmountError::Separator));
        assert_eq!(major("1'000", 2), Err(AmountError::Separator));
        assert_eq!(major("1.000.000", 2), Err(AmountError::Separator));
        assert_eq!(major("$100", 2), Err(AmountError::NotDigits));
        assert_eq!(major("100 XOF", 0), Err(AmountError::NotDigits));
        assert_eq!(major("100XOF", 0), Err(AmountError::NotDigits));
        assert_eq!(major("NaN", 2), Err(AmountError::NotDigits));
        assert_eq!(major("inf", 2), Err(AmountError::NotDigits));
        assert_eq!(major("１００", 2), Err(AmountError::NotDigits));
        assert_eq!(major(".5", 2), Err(AmountError::Malformed));
        assert_eq!(major("5.", 2), Err(AmountError::Malformed));
        assert_eq!(major(".", 2), Err(AmountError::Malformed));
        assert_eq!(major("0", 2), Err(AmountError::Zero));
        assert_eq!(major("0.00", 2), Err(AmountError::Zero));
        assert_eq!(major("1234567890123456", 0), Err(AmountError::TooLarge));
        assert_eq!(
            major("000123456789012345", 0).unwrap().wire,
            "123456789012345"
        );
    }

    /// The largest accepted amount still converts exactly in every unit.
    #[test]
    fn largest_amount_is_exact() {
        let a = minor("999999999999999.9999", 4).unwrap();
        assert_eq!(a.wire, "9999999999999999999");
        assert_eq!(a.value.to_string(), "999999999999999.9999");
    }

    proptest! {
        /// Any valid decimal round-trips: its wire amount is the exact
        /// integer value times 10^exponent, computed independently here
        /// with integer arithmetic (never a float).
        #[test]
        fn valid_decimals_round_trip(
            int in 0u64..1_000_000_000_000_000,
            frac_digits in proptest::collection::vec(0u8..10, 0..=4),
            leading_zeros in 0usize..3,
            trailing_zeros in 0usize..3,
            exponent in 0u16..=4,
        ) {
            let frac: String = frac_digits.iter().map(|d| char::from(b'0' + d)).collect();
            let mut text = format!("{}{int}", "0".repeat(leading_zeros));
            if !frac.is_empty() || trailing_zeros > 0 {
                text = format!("{text}.{frac}{}", "0".repeat(trailing_zeros));
            }
            let significant = frac.trim_end_matches('0');
            let expected_minor = {
                let mut m = u128::from(int);
                for i in 0..usize::from(exponent) {
                    let d = significant.as_bytes().get(i).map_or(0, |b| b - b'0');
                    m = m * 10 + u128::from(d);
                }
                m
            };
            let result = minor(&text, exponent);
            if significant.len() > usize::from(exponent) {
                let is_too_many = matches!(result, Err(AmountError::TooManyDecimals { .. }));
                prop_assert!(is_too_many);
            } else if expected_minor == 0 {
                prop_assert_eq!(result, Err(AmountError::Zero));
            } else {
                let a = result.unwrap();
                prop_assert_eq!(&a.wire, &expected_minor.to_string());
                // The value is the text's exact decimal value.
                let exact = Decimal::from_str(&text).unwrap();
                prop_assert_eq!(a.value, exact);
                prop_assert_eq!(a.value.scale(), u32::from(exponent));
                // Major units: whole amounts give the integer, others are refused.
                let m = major(&text, exponent);
                if significant.is_empty() {
                    prop_assert_eq!(m.unwrap().wire, int.to_string());
                } else {
                    let is_fractional = matches!(m, Err(AmountError::Fractional { .. }));
                    prop_assert!(is_fractional);
                }
            }
        }

        /// Any amount with a sign, an exponent, a letter or a separator
        /// anywhere is refused, whatever else it holds.
        #[test]
        fn decorated_amounts_rejected(
            digits in "[0-9]{1,8}(\\.[0-9]{1,2})?",
            bad in prop_oneof![
                Just("-"), Just("+"), Just("e"), Just("E3"), Just(","), Just(" "),
                Just("\u{a0}"), Just("'"), Just("$"), Just("€"), Just("k"), Just("_"),
                Just("XOF"), Just("\t"), Just("%"),
            ],
            pos in 0usize..3,
        ) {
            let text = match pos {
                0 => format!("{bad}{digits}"),
                1 => format!("{digits}{bad}"),
                _ => {
                    let (a, b) = digits.split_at(digits.len() / 2);
                    format!("{a}{bad}{b}")
                }
            };
            prop_assert!(parse_plain(&text).is_err(), "{:?} accepted", text);
            prop_assert!(minor(&text, 2).is_err());
        }

        /// Arbitrary text never panics, and whatever is accepted is a plain
        /// decimal.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,24}") {
            if let Ok(a) = minor(&text, 2) {
                prop_assert!(text.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
                prop_assert!(a.wire.bytes().all(|b| b.is_ascii_digit()));
            }
        }
    }
}
