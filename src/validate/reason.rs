//! Why a row or one of its cells was refused, as data: the rule broken and
//! the values its explanation needs (a count, the first row of a repeated
//! id, the currency). The rules return a [`Reason`]; the sentence that
//! explains it and the fix is written per language in one place
//! (`crate::lang::rules`), each an exhaustive `match`, so a new rule
//! without its French text does not compile.

use super::amount::AmountError;
use rust_decimal::Decimal;
use std::fmt;

/// An identifier column, as the rules name it: `transaction_id`,
/// `account_id`, `payout_method_id`, or the config's
/// `default_payout_method_id`.
pub type IdKey = &'static str;

/// A required name: the beneficiary's first or last name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    First,
    Last,
}

/// Why a value, a row or the rows around it were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The amount (its syntax, number format, currency, limits).
    Amount(AmountError),
    /// A text holds a control character (shown escaped, `\u{a}`).
    ControlCharacter {
        escaped: String,
    },
    /// A text is `len` characters long, above `max`.
    TextTooLong {
        len: usize,
        max: usize,
    },
    /// A required name is empty.
    NameRequired(Name),
    /// A required identifier is empty.
    IdRequired(IdKey),
    /// An identifier starts with a spreadsheet's `'` text marker.
    IdTextMarker(IdKey),
    /// An identifier holds a space (`None`) or another character outside
    /// printable ASCII.
    IdCharacter {
        id: IdKey,
        character: Option<char>,
    },
    /// An identifier is `len` bytes long, above `super::fields::MAX_ID_LEN`.
    IdTooLong {
        id: IdKey,
        len: usize,
    },
    CurrencyRequired,
    /// A fund, accounting or withdrawn ISO 4217 code.
    CurrencyNotForPayment {
        code: String,
    },
    /// An ISO 4217 code without minor units (precious metals, `XXX`).
    CurrencyNoMinorUnit {
        code: String,
        name: String,
    },
    CurrencyUnknown,
    EmailTooLong,
    EmailNoAt,
    EmailNotAnAddress,
    EmailSpace,
    EmailCharacter,
    EmailDot,
    EmailDomain,
    /// A phone number without `+` and no `default_phone_region`.
    PhoneNoCountryCode,
    PhoneLetters,
    PhoneNotANumber,
    /// Wrong length or prefix, for its country code (`None`) or in the
    /// default region.
    PhoneInvalid {
        region: Option<String>,
    },
    /// A number cell whose digits are no international number.
    PhoneNumberCell {
        digits: String,
    },
    /// An identifier in a number cell: rounded or lost leading zeros.
    NumberCell,
    /// The transaction id was already used on row `first`.
    DuplicateId {
        id: String,
        first: u64,
    },
    /// No payout method in the row nor in the config.
    NoPayoutMethod,
    /// A column payrun does not read marks the row as not to be paid.
    NotToPay {
        header: String,
        value: String,
    },
    /// A workbook cell holds a formula without its saved result.
    FormulaWithoutResult {
        formula: String,
    },
    /// A workbook cell holds a spreadsheet error (`#REF!`).
    CellError {
        shown: String,
    },
    /// The row has `cells` cells, the header `width`.
    Misaligned {
        cells: usize,
        width: usize,
    },
    /// A totals row followed by row `next`.
    TotalsNotLast {
        total: Decimal,
        currency: String,
        next: u64,
    },
    /// A totals row whose amount differs from the rows above.
    TotalsDiffer {
        total: Decimal,
        sum: Decimal,
        currency: String,
    },
    /// A totals row whose amount cannot be compared.
    TotalsUncomparable,
    /// A row refused without any rule naming why (a bug).
    Unexplained,
}

impl Reason {
    /// The sentence in `language`.
    pub fn shown_in(&self, language: crate::lang::Language) -> String {
        crate::lang::rule(self, language)
    }
}

impl From<AmountError> for Reason {
    fn from(e: AmountError) -> Reason {
        Reason::Amount(e)
    }
}

/// The English sentence (also what the JSON output and the logs carry).
impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::lang::rule(self, crate::lang::Language::En))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;

    /// French amounts in the explanations are grouped as French readers
    /// write them; the English ones stay as they were.
    #[test]
    fn amounts_in_french_reasons_are_grouped() {
        let r = Reason::TotalsDiffer {
            total: Decimal::new(4_935_000, 0),
            sum: Decimal::new(4_785_000, 0),
            currency: "XOF".into(),
        };
        let fr = r.shown_in(Language::Fr);
        assert!(fr.contains("4\u{202f}935\u{202f}000 XOF"), "{fr}");
        assert!(fr.contains("4\u{202f}785\u{202f}000 XOF"), "{fr}");
        assert!(r.to_string().contains("4935000 XOF"));
        let fr = Reason::Amount(AmountError::Ambiguous {
            en: "25000.5".into(),
            fr: "25000500".into(),
        })
        .shown_in(Language::Fr);
        assert!(fr.contains("se lit 25\u{202f}000,5 à l'anglaise"), "{fr}");
        assert!(
            fr.contains("25\u{202f}000\u{202f}500 à la française"),
            "{fr}"
        );
    }
}
