//! Reading an amount as its author wrote it: digit groups, the decimal mark
//! of the author's convention (`number_format`), and a currency word after
//! the number (`120 000 FCFA`). The output is a plain decimal text
//! (`25000.50`) for [`super::amount`], which does the exact arithmetic.
//!
//! The danger here is a silent different amount: `80.000` is eighty in
//! Accra and eighty thousand in Abidjan. So without `number_format` only
//! plain digits with an optional `.` are read, and any value whose reading
//! depends on the convention is refused with both readings; with a format,
//! a value that does not fit it is refused rather than guessed.

use super::amount::AmountError;

pub use crate::config::NumberFormat;

/// Bytes of the longest amount text read.
const MAX_AMOUNT_TEXT: usize = 64;

/// Characters that separate digit groups or decimals in some convention.
const SEPARATORS: [char; 7] = ['.', ',', ' ', '\u{a0}', '\u{202f}', '\u{2009}', '\''];

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}')
}

/// An amount text made plain, with the currency word found beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    /// Digits with an optional `.` and decimals.
    pub plain: String,
    /// ISO codes a currency word beside the number stands for
    /// (`FCFA`: XOF and XAF), and the word as written.
    pub word: Option<(Vec<&'static str>, String)>,
}

/// Currency words written beside amounts, and the ISO codes they mean.
/// `$` alone is deliberately absent: too many currencies use it.
const WORDS: [(&str, &[&str]); 9] = [
    ("FCFA", &["XOF", "XAF"]),
    ("F CFA", &["XOF", "XAF"]),
    ("F.CFA", &["XOF", "XAF"]),
    ("CFA", &["XOF", "XAF"]),
    ("€", &["EUR"]),
    ("US$", &["USD"]),
    ("₦", &["NGN"]),
    ("GH₵", &["GHS"]),
    ("KSH", &["KES"]),
];

/// The ISO codes `word` stands for: a listed word, or an active ISO 4217
/// code itself (`120000 XOF`).
fn currency_word(word: &str) -> Option<Vec<&'static str>> {
    let upper = word.to_uppercase();
    let squeezed: String = upper
        .chars()
        .map(|c| if is_space(c) { ' ' } else { c })
        .collect();
    if let Some((_, codes)) = WORDS.iter().find(|(w, _)| *w == squeezed) {
        return Some(codes.to_vec());
    }
    iso_currency::Currency::from_code(&squeezed).map(|c| vec![c.code()])
}

/// Splits a trailing (or leading) currency word off `text`.
fn split_word(text: &str) -> (&str, &str) {
    let starts_number = |c: char| c.is_ascii_digit() || SEPARATORS.contains(&c);
    let end = text
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_ascii_digit())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let start = text.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
    let (before, rest) = text.split_at(start);
    let (number, after) = rest.split_at(end.saturating_sub(start));
    let before = before.trim();
    let after = after.trim();
    match (before.is_empty(), after.is_empty()) {
        (true, _) if !after.starts_with(starts_number) => (number.trim(), after),
        (_, true) if !before.ends_with(starts_number) => (number.trim(), before),
        _ => (text, ""),
    }
}

/// Reads `text` (trimmed) in `format` (`None`: plain digits and `.` only).
/// Currency-independent: the three-decimals check that depends on the
/// currency is [`check_decimals`].
pub fn read(text: &str, format: Option<NumberFormat>) -> Result<Read, AmountError> {
    if text.is_empty() {
        return Err(AmountError::Empty);
    }
    // Longer than any written amount (15 digits, separators, decimals and
    // a currency word): refused before its readings are spelled out in a
    // message.
    if text.len() > MAX_AMOUNT_TEXT {
        return Err(AmountError::TooLarge);
    }
    let (number, word) = split_word(text);
    let word = if word.is_empty() {
        None
    } else {
        match currency_word(word) {
            Some(codes) => Some((codes, word.to_owned())),
            // Not a currency: let the plain parser name the mistake.
            None => {
                return Err(super::amount::parse_plain(text)
                    .err()
                    .unwrap_or(AmountError::NotDigits));
            }
        }
    };
    if number
        .chars()
        .any(|c| !c.is_ascii_digit() && !SEPARATORS.contains(&c))
    {
        return Err(super::amount::parse_plain(number)
            .err()
            .unwrap_or(AmountError::NotDigits));
    }
    let plain = groups(number, format)?;
    Ok(Read { plain, word })
}

/// One reading of a number in a convention, or `None` when it does not fit.
fn reading(number: &str, format: NumberFormat) -> Option<String> {
    let (group_ok, decimal): (fn(char) -> bool, char) = match format {
        NumberFormat::En => (|c| c == ',', '.'),
        NumberFormat::Fr => (|c| is_space(c) || c == '.', ','),
    };
    let (int, frac) = match number.rsplit_once(decimal) {
        Some((int, frac)) => (int, Some(frac)),
        None => (number, None),
    };
    if let Some(frac) = frac
        && (frac.is_empty() || !frac.chars().all(|c| c.is_ascii_digit()))
    {
        return None;
    }
    // Groups: the first 1 to 3 digits, every other exactly 3, one kind of
    // separator (all spaces count as one kind).
    let mut kind: Option<bool> = None;
    let mut digits = String::new();
    for (i, group) in int.split(|c: char| !c.is_ascii_digit()).enumerate() {
        let ok_len = if i == 0 {
            (1..=3).contains(&group.len()) || !int.contains(|c: char| !c.is_ascii_digit())
        } else {
            group.len() == 3
        };
        if group.is_empty() || !ok_len {
            return None;
        }
        digits.push_str(group);
    }
    for c in int.chars().filter(|c| !c.is_ascii_digit()) {
        if !group_ok(c) {
            return None;
        }
        let space = is_space(c);
        if *kind.get_or_insert(space) != space {
            return None;
        }
    }
    Some(match frac {
        Some(f) => format!("{digits}.{f}"),
        None => digits,
    })
}

/// A number with separators, made plain in `format`.
fn groups(number: &str, format: Option<NumberFormat>) -> Result<String, AmountError> {
    let seps: Vec<char> = number.chars().filter(|c| !c.is_ascii_digit()).collect();
    if seps.is_empty() {
        return Ok(number.to_owned());
    }
    if number.starts_with(|c: char| !c.is_ascii_digit())
        || number.ends_with(|c: char| !c.is_ascii_digit())
    {
        return Err(AmountError::Malformed);
    }
    if let Some(format) = format {
        return reading(number, format).ok_or_else(|| AmountError::NoConvention {
            format: format_name(format),
            other: reading(number, other(format)).map(|r| (format_name(other(format)), r)),
        });
    }
    // No format: a single `.` is a decimal point unless exactly three
    // digits follow it (then it may be a thousands separator).
    if seps == ['.'] {
        return point_reading(number).map(|()| number.to_owned());
    }
    match (
        reading(number, NumberFormat::En),
        reading(number, NumberFormat::Fr),
    ) {
        (Some(en), Some(fr)) if en != fr => Err(ambiguous(&en, &fr)),
        (Some(r), _) => Err(AmountError::NeedsFormat {
            format: "en",
            reading: r,
        }),
        (None, Some(r)) => Err(AmountError::NeedsFormat {
            format: "fr",
            reading: r,
        }),
        (None, None) => Err(AmountError::NoConvention {
            format: "",
            other: None,
        }),
    }
}

/// A plain decimal (digits and at most one `.`) whose `.` may be a
/// thousands separator: exactly three digits after it (`80.000`, `1.500`)
/// read as decimals in English and as thousands in French. Refused with
/// both readings; any other plain decimal is fine. Also the rule of amounts
/// written by programs (`amount::parse_amount`), which a person may have
/// typed in a JSON file all the same.
pub fn point_reading(plain: &str) -> Result<(), AmountError> {
    match plain.split_once('.') {
        Some((int, frac)) if frac.len() == 3 && !frac.contains('.') => {
            Err(ambiguous(&format!("{int}.{frac}"), &format!("{int}{frac}")))
        }
        _ => Ok(()),
    }
}

/// The two readings, shown as numbers (`80.000` read as a decimal is 80).
fn ambiguous(en: &str, fr: &str) -> AmountError {
    let shown = |s: &str| {
        let s = s.trim_start_matches('0');
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            s
        };
        if s.is_empty() || s.starts_with('.') {
            format!("0{s}")
        } else {
            s.to_owned()
        }
    };
    AmountError::Ambiguous {
        en: shown(en),
        fr: shown(fr),
    }
}

fn other(f: NumberFormat) -> NumberFormat {
    match f {
        NumberFormat::Fr => NumberFormat::En,
        NumberFormat::En => NumberFormat::Fr,
    }
}

fn format_name(f: NumberFormat) -> &'static str {
    match f {
        NumberFormat::Fr => "fr",
        NumberFormat::En => "en",
    }
}

/// With a currency known: exactly three decimals written in a currency
/// with fewer decimals (`80.000` XOF, `1,500` USD in `fr`) read as
/// decimals only by convention; the author may have meant thousands.
pub fn check_decimals(plain: &str, exponent: u16) -> Result<(), AmountError> {
    match plain.split_once('.') {
        Some((int, frac)) if frac.len() == 3 && exponent < 3 => {
            Err(ambiguous(&format!("{int}.{frac}"), &format!("{int}{frac}")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use NumberFormat::{En, Fr};

    fn plain(text: &str, f: Option<NumberFormat>) -> Result<String, AmountError> {
        read(text, f).map(|r| r.plain)
    }

    #[test]
    fn plain_numbers_need_no_format() {
        assert_eq!(plain("25000", None).unwrap(), "25000");
        assert_eq!(plain("12.50", None).unwrap(), "12.50");
        assert_eq!(plain("12.5000", None).unwrap(), "12.5000");
    }

    #[test]
    fn three_digits_after_one_separator_is_ambiguous() {
        for text in ["80.000", "1.000", "1.500"] {
            assert!(
                matches!(plain(text, None), Err(AmountError::Ambiguous { .. })),
                "{text}"
            );
        }
        let err = plain("80.000", None).unwrap_err().to_string();
        assert!(
            err.contains("reads 80 the English way") && err.contains("80000 the French way"),
            "{err}"
        );
        assert!(err.contains("number_format"), "{err}");
        assert_eq!(
            plain("1,500", None),
            Err(AmountError::Ambiguous {
                en: "1500".into(),
                fr: "1.5".into()
            })
        );
    }

    #[test]
    fn french_convention() {
        assert_eq!(plain("25 000,50", Some(Fr)).unwrap(), "25000.50");
        assert_eq!(plain("25\u{a0}000,50", Some(Fr)).unwrap(), "25000.50");
        assert_eq!(
            plain("1\u{202f}250\u{202f}000", Some(Fr)).unwrap(),
            "1250000"
        );
        assert_eq!(plain("80.000", Some(Fr)).unwrap(), "80000");
        assert_eq!(plain("1.250.000,5", Some(Fr)).unwrap(), "1250000.5");
        assert_eq!(plain("12,5", Some(Fr)).unwrap(), "12.5");
        // A decimal point, or groups of the wrong size, do not fit.
        for bad in ["12.5", "25,000.50", "1 00 000", "1.000 000", "1,2,3"] {
            assert!(
                matches!(plain(bad, Some(Fr)), Err(AmountError::NoConvention { .. })),
                "{bad}"
            );
        }
        let msg = plain("25,000.50", Some(Fr)).unwrap_err().to_string();
        assert!(msg.contains("\"en\"") && msg.contains("25000.50"), "{msg}");
    }

    #[test]
    fn english_convention() {
        assert_eq!(plain("25,000.50", Some(En)).unwrap(), "25000.50");
        assert_eq!(plain("1,500", Some(En)).unwrap(), "1500");
        assert_eq!(plain("80.000", Some(En)).unwrap(), "80.000");
        for bad in ["25 000", "1.000,50", "1,50", "12,5000"] {
            assert!(plain(bad, Some(En)).is_err(), "{bad}");
        }
    }

    #[test]
    fn mixed_separators_fit_no_convention() {
        assert!(matches!(
            plain("1.000,000.5", None),
            Err(AmountError::NoConvention { .. })
        ));
        assert!(matches!(
            plain("1'000", None),
            Err(AmountError::NoConvention { .. })
        ));
        assert!(matches!(
            plain("12 500", None),
            Err(AmountError::NeedsFormat { format: "fr", .. })
        ));
        assert!(matches!(
            plain("12,50", None),
            Err(AmountError::NeedsFormat { format: "fr", .. })
        ));
    }

    #[test]
    fn currency_words() {
        let r = read("120 000 FCFA", Some(Fr)).unwrap();
        assert_eq!(r.plain, "120000");
        assert_eq!(r.word.unwrap().0, ["XOF", "XAF"]);
        assert_eq!(
            read("120000 F CFA", None).unwrap().word.unwrap().0,
            ["XOF", "XAF"]
        );
        assert_eq!(read("120000 xof", None).unwrap().word.unwrap().0, ["XOF"]);
        assert_eq!(read("€ 100", None).unwrap().word.unwrap().0, ["EUR"]);
        assert_eq!(read("100XOF", None).unwrap().plain, "100");
        assert_eq!(read("100 francs", None), Err(AmountError::NotDigits));
        assert_eq!(read("$100", None), Err(AmountError::NotDigits));
        assert_eq!(read("1e5", None), Err(AmountError::Exponent));
        assert_eq!(read("-5", None), Err(AmountError::Sign));
    }

    #[test]
    fn long_values_refused_before_reading() {
        let long = "1 000".repeat(1000);
        assert_eq!(read(&long, None), Err(AmountError::TooLarge));
    }

    /// A separator at either end of the number is a malformed number,
    /// whatever the format: not a currency word, not a misplaced separator.
    #[test]
    fn a_separator_at_either_end_is_malformed() {
        for text in ["100,", ",5", "100.", ".5", "1 000,"] {
            for f in [None, Some(Fr), Some(En)] {
                assert_eq!(read(text, f), Err(AmountError::Malformed), "{text} {f:?}");
            }
        }
    }

    /// Texts up to MAX_AMOUNT_TEXT bytes are read; longer ones are refused
    /// before anything else.
    #[test]
    fn the_longest_text_read() {
        let at_limit = format!("{}1", "0".repeat(MAX_AMOUNT_TEXT - 1));
        assert_eq!(plain(&at_limit, None).unwrap(), at_limit);
        assert_eq!(
            read(&format!("0{at_limit}"), None),
            Err(AmountError::TooLarge)
        );
    }

    /// The first group may be longer than three digits only when it is the
    /// whole integer part (no group separator at all).
    #[test]
    fn a_long_first_group_only_without_group_separators() {
        assert_eq!(plain("2500,50", Some(Fr)).unwrap(), "2500.50");
        assert_eq!(plain("2500.50", Some(En)).unwrap(), "2500.50");
        for (bad, f) in [("1234,567", En), ("2500 000", Fr), ("2500.000,5", Fr)] {
            assert!(
                matches!(plain(bad, Some(f)), Err(AmountError::NoConvention { .. })),
                "{bad}"
            );
        }
    }

    /// Both readings are shown as numbers: `0.500` reads 0.5 the English
    /// way (not `.5`) and 500 the French way.
    #[test]
    fn readings_are_shown_as_numbers() {
        assert_eq!(
            plain("0.500", None),
            Err(AmountError::Ambiguous {
                en: "0.5".into(),
                fr: "500".into()
            })
        );
    }

    #[test]
    fn decimals_against_the_currency() {
        assert!(check_decimals("80.000", 0).is_err());
        assert!(check_decimals("1.500", 2).is_err());
        assert!(check_decimals("1.500", 3).is_ok());
        assert!(check_decimals("80.00", 0).is_ok());
    }
}
