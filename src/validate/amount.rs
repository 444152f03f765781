//! Amount parsing: from the text a person typed to an exact `Decimal` and the
//! provider's wire amount (a string of digits). Amounts never pass through a
//! float: the text is checked character by character and the digits become
//! the `Decimal`'s integer mantissa directly, so `0.1 + 0.2` problems and
//! `12.499999` printouts cannot happen.

use super::number::{self, NumberFormat};
use crate::config::AmountUnit;
use rust_decimal::Decimal;

/// Digits the parser reads before the decimal point (leading zeros not
/// counted): a hard bound that keeps the minor-unit mantissa well inside
/// `Decimal`'s 96 bits. The plausibility limit is [`plausible_digits`].
pub const MAX_INTEGER_DIGITS: usize = 15;

/// Integer digits of the largest plausible single payout in most
/// currencies: up to 999 999 999 (about 1.6 million US dollars in XOF, a
/// billion in USD). A 10- to 13-digit account or phone number pasted in the
/// amount column is longer, so it is refused rather than paid.
pub const PLAUSIBLE_DIGITS: usize = 9;
/// The same for currencies worth less than a tenth of a US cent, where
/// salaries run to eight or nine digits (IDR, VND, ...): up to 10^12 - 1.
pub const PLAUSIBLE_DIGITS_SMALL_UNIT: usize = 12;
/// Currencies with more than about 1,000 units to the US dollar.
const SMALL_UNIT: [&str; 20] = [
    "BIF", "CDF", "COP", "GNF", "IDR", "IQD", "IRR", "KHR", "KRW", "LAK", "LBP", "MGA", "MMK",
    "MNT", "PYG", "SYP", "TZS", "UGX", "UZS", "VND",
];

/// Integer digits of the largest plausible payout in `currency`, unless
/// the config's `max_amount` says otherwise.
pub fn plausible_digits(currency: &str) -> usize {
    if SMALL_UNIT.contains(&currency) {
        PLAUSIBLE_DIGITS_SMALL_UNIT
    } else {
        PLAUSIBLE_DIGITS
    }
}

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
        "the value reads {en} the English way (25,000.50) and {fr} the French way (25 000,50 or 25.000,50), as its separator may mark thousands or decimals, so the amount depends on who wrote it: write it as plain digits (e.g. {fr} or {en}), or set number_format = \"fr\" (25 000,50) or \"en\" (25,000.50) in the config to say how the file writes numbers"
    )]
    Ambiguous { en: String, fr: String },
    #[error(
        "thousands separators and decimal commas are read only when the config says how the file writes numbers: this reads {reading} with number_format = \"{format}\"; set it in the config, or write plain digits with an optional `.` before the decimals"
    )]
    NeedsFormat {
        format: &'static str,
        reading: String,
    },
    #[error("{}", no_convention(format, other))]
    NoConvention {
        format: &'static str,
        other: Option<(&'static str, String)>,
    },
    #[error(
        "the amount says {word} but the currency column says {currency}: correct one of them, or write the amount without a currency"
    )]
    CurrencyMismatch { word: String, currency: String },
    #[error(
        "the amount has {digits} digits before the decimal point, more than any plausible {currency} payment ({limit} at most): this looks like an account or phone number in the amount column; if it is really the amount, raise the limit with [max_amount] {currency} = ... in the config"
    )]
    Implausible {
        digits: usize,
        limit: usize,
        currency: String,
    },
    #[error(
        "the amount is above max_amount for {currency} in the config ({max}): check it, or raise max_amount"
    )]
    AboveMax { currency: String, max: Decimal },
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

fn no_convention(format: &str, other: &Option<(&'static str, String)>) -> String {
    let what = if format.is_empty() {
        "its separators fit neither the French (25 000,50) nor the English (25,000.50) way of writing numbers".to_owned()
    } else {
        format!("it does not fit number_format = \"{format}\" of the config")
    };
    let hint = match other {
        Some((f, r)) => format!(" (with number_format = \"{f}\" it would read {r})"),
        None => String::new(),
    };
    format!("{what}{hint}: write plain digits with an optional decimal mark, e.g. 25000.50")
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

/// Parses `text` as a plain decimal amount in `currency`, whose ISO 4217
/// minor-unit digits are `exponent`, and computes the wire amount for
/// `unit`: digits and an optional `.`, nothing else, and never a value
/// whose reading depends on the locale (`80.000`: 80, or 80 000 the French
/// way), refused as in payroll files ([`number::point_reading`]). For
/// amounts in JSON (the card API); payroll files go through
/// [`parse_amount_with`], which also reads `number_format`, currency words
/// and refuses implausible amounts.
pub fn parse_amount(
    text: &str,
    currency: &str,
    exponent: u16,
    unit: AmountUnit,
) -> Result<Amount, AmountError> {
    let plain = parse_plain(text)?;
    number::point_reading(text)?;
    check_amount(&plain, currency, exponent, unit)
}

/// Parses `text` as an amount in `currency`: read in `format` (see
/// [`number`]), refused when its reading depends on the convention, when a
/// currency word beside it names another currency, or when it is above
/// `max` (the config's `max_amount` for the currency; without one, above
/// the built-in plausible limit).
pub fn parse_amount_with(
    text: &str,
    currency: &str,
    exponent: u16,
    unit: AmountUnit,
    format: Option<NumberFormat>,
    max: Option<Decimal>,
) -> Result<Amount, AmountError> {
    let read = number::read(text, format)?;
    number::check_decimals(&read.plain, exponent)?;
    if let Some((codes, word)) = &read.word
        && !codes.contains(&currency)
    {
        return Err(AmountError::CurrencyMismatch {
            word: word.clone(),
            currency: currency.to_owned(),
        });
    }
    let plain = parse_plain(&read.plain)?;
    if max.is_none() && plain.int.len() > plausible_digits(currency) {
        return Err(AmountError::Implausible {
            digits: plain.int.len(),
            limit: plausible_digits(currency),
            currency: currency.to_owned(),
        });
    }
    let amount = check_amount(&plain, currency, exponent, unit)?;
    if let Some(max) = max
        && amount.value > max
    {
        return Err(AmountError::AboveMax {
            currency: currency.to_owned(),
            max,
        });
    }
    Ok(amount)
}

/// The syntax check alone, for a row whose currency is unknown.
pub fn check_syntax(text: &str, format: Option<NumberFormat>) -> Result<(), AmountError> {
    let read = number::read(text, format)?;
    parse_plain(&read.plain).map(|_| ())
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

    /// A payroll file's amount, without number_format or max_amount.
    fn major(text: &str, exp: u16) -> Result<Amount, AmountError> {
        parse_amount_with(text, "TST", exp, AmountUnit::Major, None, None)
    }
    fn minor(text: &str, exp: u16) -> Result<Amount, AmountError> {
        parse_amount_with(text, "TST", exp, AmountUnit::Minor, None, None)
    }

    #[test]
    fn whole_amounts_in_major_units() {
        let a = major("25000", 0).unwrap();
        assert_eq!(a.wire, "25000");
        assert_eq!(a.value, Decimal::from(25000));
        assert_eq!(major("0100", 2).unwrap().wire, "100");
        assert_eq!(major("100.00", 2).unwrap().wire, "100");
        assert_eq!(major("100.00", 2).unwrap().value.to_string(), "100.00");
        // Trailing zeros add no precision, even beyond the currency's digits...
        assert_eq!(major("25000.00", 0).unwrap().wire, "25000");
        // ...except three of them: `25000.000` XOF is 25 million written
        // the French way as often as 25 000 with decimals.
        assert_eq!(
            major("25000.000", 0),
            Err(AmountError::Ambiguous {
                en: "25000".into(),
                fr: "25000000".into()
            })
        );
    }

    /// The card API's plain rule refuses the locale-ambiguous `80.000`
    /// like a payroll row, whatever the currency's decimals.
    #[test]
    fn plain_amounts_refuse_three_digits_after_the_point() {
        let plain = |t: &str, exp| parse_amount(t, "TST", exp, AmountUnit::Minor);
        assert_eq!(
            plain("80.000", 0),
            Err(AmountError::Ambiguous {
                en: "80".into(),
                fr: "80000".into()
            })
        );
        assert!(matches!(
            plain("1.500", 3),
            Err(AmountError::Ambiguous { .. })
        ));
        assert_eq!(plain("80.00", 2).unwrap().wire, "8000");
        assert_eq!(plain("1.5", 3).unwrap().wire, "1500");
        assert_eq!(plain("1.5000", 4).unwrap().wire, "15000");
        assert_eq!(plain("80000", 0).unwrap().wire, "80000");
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
        assert_eq!(minor("1.2345", 4).unwrap().wire, "12345");
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
            minor("10.0001", 2),
            Err(AmountError::TooManyDecimals { found: 4, .. })
        ));
        let msg = minor("10.0001", 2).unwrap_err().to_string();
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
        assert!(matches!(
            major("1,000", 2),
            Err(AmountError::Ambiguous { .. })
        ));
        assert!(matches!(
            major("12,50", 2),
            Err(AmountError::NeedsFormat { format: "fr", .. })
        ));
        assert!(matches!(
            major("1 000", 2),
            Err(AmountError::NeedsFormat { format: "fr", .. })
        ));
        assert!(matches!(
            major("1\u{a0}000", 2),
            Err(AmountError::NeedsFormat { .. })
        ));
        assert!(matches!(
            major("1'000", 2),
            Err(AmountError::NoConvention { .. })
        ));
        assert!(matches!(
            major("1.000.000", 2),
            Err(AmountError::NeedsFormat { format: "fr", .. })
        ));
        assert_eq!(major("$100", 2), Err(AmountError::NotDigits));
        assert!(matches!(
            major("100 XOF", 0),
            Err(AmountError::CurrencyMismatch { .. })
        ));
        assert_eq!(major("100 francs", 0), Err(AmountError::NotDigits));
        assert_eq!(major("NaN", 2), Err(AmountError::NotDigits));
        assert_eq!(major("inf", 2), Err(AmountError::NotDigits));
        assert_eq!(major("１００", 2), Err(AmountError::NotDigits));
        assert_eq!(major(".5", 2), Err(AmountError::Malformed));
        assert_eq!(major("5.", 2), Err(AmountError::Malformed));
        assert_eq!(major(".", 2), Err(AmountError::Malformed));
        assert_eq!(major("0", 2), Err(AmountError::Zero));
        assert_eq!(major("0.00", 2), Err(AmountError::Zero));
        assert_eq!(parse_plain("1234567890123456"), Err(AmountError::TooLarge));
        assert_eq!(
            parse_plain("000123456789012345").unwrap().int,
            "123456789012345"
        );
    }

    /// A 13-digit account number pasted in the amount column is refused;
    /// the config's max_amount replaces the built-in limit.
    #[test]
    fn implausible_amounts_and_max_amount() {
        let xof = |t: &str, max: Option<Decimal>| {
            parse_amount_with(t, "XOF", 0, AmountUnit::Major, None, max)
        };
        let err = xof("2250700000023", None).unwrap_err();
        assert!(
            matches!(
                err,
                AmountError::Implausible {
                    digits: 13,
                    limit: 9,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("[max_amount] XOF"), "{err}");
        assert_eq!(xof("999999999", None).unwrap().wire, "999999999");
        assert!(parse_amount_with("2500000000", "IDR", 0, AmountUnit::Major, None, None).is_ok());
        let max = Some(Decimal::from(5_000_000));
        assert!(matches!(
            xof("5000001", max),
            Err(AmountError::AboveMax { .. })
        ));
        assert!(xof("5000000", max).is_ok());
        assert!(xof("2250700000023", Some(Decimal::from(10_000_000_000_000u64))).is_ok());
    }

    #[test]
    fn number_formats_and_currency_words() {
        let read = |t: &str, cur: &str, f| parse_amount_with(t, cur, 0, AmountUnit::Major, f, None);
        assert_eq!(
            read("120 000 FCFA", "XOF", Some(NumberFormat::Fr))
                .unwrap()
                .wire,
            "120000"
        );
        assert_eq!(read("120000 F CFA", "XAF", None).unwrap().wire, "120000");
        let err = read("120000 FCFA", "EUR", None).unwrap_err().to_string();
        assert!(
            err.contains("says FCFA") && err.contains("says EUR"),
            "{err}"
        );
        // `1.500` USD in minor units is not silently 1.50.
        assert!(matches!(
            parse_amount_with("1.500", "USD", 2, AmountUnit::Minor, None, None),
            Err(AmountError::Ambiguous { .. })
        ));
        // In a three-decimal currency the English convention reads it.
        assert_eq!(
            parse_amount_with(
                "1.500",
                "KWD",
                3,
                AmountUnit::Minor,
                Some(NumberFormat::En),
                None
            )
            .unwrap()
            .wire,
            "1500"
        );
        // `80.000` XOF with number_format = "en" is still refused.
        assert!(read("80.000", "XOF", Some(NumberFormat::En)).is_err());
        assert_eq!(
            read("80.000", "XOF", Some(NumberFormat::Fr)).unwrap().wire,
            "80000"
        );
    }

    /// The largest accepted amount still converts exactly in every unit.
    #[test]
    fn largest_amount_is_exact() {
        let a = parse_amount_with(
            "999999999999999.9999",
            "TST",
            4,
            AmountUnit::Minor,
            None,
            Some(Decimal::MAX),
        )
        .unwrap();
        assert_eq!(a.wire, "9999999999999999999");
        assert_eq!(a.value.to_string(), "999999999999999.9999");
    }

    /// The card API's amounts meet `parse_plain` first: it names the first
    /// mistake, and calls a character an exponent or a separator only when
    /// digits around it make it one.
    #[test]
    fn plain_syntax_names_the_first_mistake() {
        let cases = [
            // An `e` is an exponent only after digits and before digits.
            ("e5", AmountError::NotDigits),
            ("25000each", AmountError::NotDigits),
            ("1e5", AmountError::Exponent),
            ("2.5E-3", AmountError::Exponent),
            // A separator is one only when a digit follows it.
            ("1,000", AmountError::Separator),
            ("1 000", AmountError::Separator),
            ("100,", AmountError::NotDigits),
            // Several dots: the thousands separators of some locales.
            ("1.000.000", AmountError::Separator),
            (".5", AmountError::Malformed),
            ("5.", AmountError::Malformed),
        ];
        for (text, want) in cases {
            assert_eq!(parse_plain(text), Err(want.clone()), "{text}");
            assert_eq!(
                parse_amount(text, "TST", 2, AmountUnit::Minor),
                Err(want),
                "{text}"
            );
        }
    }

    /// A row whose currency is unknown still has its amount checked.
    #[test]
    fn syntax_alone_for_an_unknown_currency() {
        assert_eq!(check_syntax("25000.50", None), Ok(()));
        assert_eq!(check_syntax("120 000 FCFA", Some(NumberFormat::Fr)), Ok(()));
        assert_eq!(check_syntax("$100", None), Err(AmountError::NotDigits));
        assert!(matches!(
            check_syntax("12,50", None),
            Err(AmountError::NeedsFormat { .. })
        ));
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
            let result = parse_amount_with(&text, "TST", exponent, AmountUnit::Minor, None, Some(Decimal::MAX));
            let written_decimals = text.split_once('.').map_or(0, |(_, f)| f.len());
            if written_decimals == 3 {
                // Thousands or decimals: refused whatever the currency
                // without a number_format.
                let is_ambiguous = matches!(result, Err(AmountError::Ambiguous { .. }));
                prop_assert!(is_ambiguous);
            } else if significant.len() > usize::from(exponent) {
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
                let m = parse_amount_with(&text, "TST", exponent, AmountUnit::Major, None, Some(Decimal::MAX));
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
            // Spaces around a value are trimmed, as in every cell.
            let text = match pos {
                0 => format!("{bad}{digits}"),
                1 => format!("{digits}{bad}"),
                _ => {
                    let (a, b) = digits.split_at(digits.len() / 2);
                    format!("{a}{bad}{b}")
                }
            };
            prop_assume!(text.trim() == text);
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
