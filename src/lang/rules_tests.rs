//! Every validation rule explained in both languages: one example of each
//! [`Reason`] and [`AmountError`], and of each notice, refusal and
//! summary line about a file (the `variant` matches fail to compile when
//! one is added without its example), rendered in English and in French,
//! non-empty, different, and the French free of the English sentence's
//! words.

use super::Language;
use crate::validate::amount::AmountError;
use crate::validate::reason::{Name, Reason};
use rust_decimal::Decimal;

/// The index of `e`'s variant: exhaustive, so a new amount rule must be
/// added to [`amount_examples`].
fn amount_variant(e: &AmountError) -> usize {
    match e {
        AmountError::Empty => 0,
        AmountError::Sign => 1,
        AmountError::Exponent => 2,
        AmountError::Separator => 3,
        AmountError::Ambiguous { .. } => 4,
        AmountError::NeedsFormat { .. } => 5,
        AmountError::NoConvention { .. } => 6,
        AmountError::CurrencyMismatch { .. } => 7,
        AmountError::Implausible { .. } => 8,
        AmountError::AboveMax { .. } => 9,
        AmountError::NotDigits => 10,
        AmountError::Malformed => 11,
        AmountError::TooLarge => 12,
        AmountError::Zero => 13,
        AmountError::TooManyDecimals { .. } => 14,
        AmountError::Fractional { .. } => 15,
    }
}
const AMOUNT_VARIANTS: usize = 16;

fn amount_examples() -> Vec<AmountError> {
    vec![
        AmountError::Empty,
        AmountError::Sign,
        AmountError::Exponent,
        AmountError::Separator,
        AmountError::Ambiguous {
            en: "25000.5".into(),
            fr: "25.0005".into(),
        },
        AmountError::NeedsFormat {
            format: "fr",
            reading: "150000".into(),
        },
        AmountError::NoConvention {
            format: "",
            other: None,
        },
        AmountError::NoConvention {
            format: "en",
            other: Some(("fr", "1500000".into())),
        },
        AmountError::CurrencyMismatch {
            word: "EUR".into(),
            currency: "XOF".into(),
        },
        AmountError::Implausible {
            digits: 14,
            limit: 12,
            currency: "XOF".into(),
        },
        AmountError::AboveMax {
            currency: "XOF".into(),
            max: Decimal::from(5_000_000),
        },
        AmountError::NotDigits,
        AmountError::Malformed,
        AmountError::TooLarge,
        AmountError::Zero,
        AmountError::TooManyDecimals {
            currency: "XOF".into(),
            exponent: 0,
            found: 2,
        },
        AmountError::Fractional {
            currency: "XOF".into(),
        },
    ]
}

/// The index of `r`'s variant: exhaustive, so a new rule must be added to
/// [`examples`].
fn variant(r: &Reason) -> usize {
    match r {
        Reason::Amount(_) => 0,
        Reason::ControlCharacter { .. } => 1,
        Reason::TextTooLong { .. } => 2,
        Reason::NameRequired(_) => 3,
        Reason::IdRequired(_) => 4,
        Reason::IdTextMarker(_) => 5,
        Reason::IdCharacter { .. } => 6,
        Reason::IdTooLong { .. } => 7,
        Reason::CurrencyRequired => 8,
        Reason::CurrencyNotForPayment { .. } => 9,
        Reason::CurrencyNoMinorUnit { .. } => 10,
        Reason::CurrencyUnknown => 11,
        Reason::EmailTooLong => 12,
        Reason::EmailNoAt => 13,
        Reason::EmailNotAnAddress => 14,
        Reason::EmailSpace => 15,
        Reason::EmailCharacter => 16,
        Reason::EmailDot => 17,
        Reason::EmailDomain => 18,
        Reason::PhoneNoCountryCode => 19,
        Reason::PhoneLetters => 20,
        Reason::PhoneNotANumber => 21,
        Reason::PhoneInvalid { .. } => 22,
        Reason::PhoneNumberCell { .. } => 23,
        Reason::NumberCell => 24,
        Reason::DuplicateId { .. } => 25,
        Reason::NoPayoutMethod => 26,
        Reason::NotToPay { .. } => 27,
        Reason::FormulaWithoutResult { .. } => 28,
        Reason::CellError { .. } => 29,
        Reason::Misaligned { .. } => 30,
        Reason::TotalsNotLast { .. } => 31,
        Reason::TotalsDiffer { .. } => 32,
        Reason::TotalsUncomparable => 33,
        Reason::Unexplained => 34,
    }
}
const VARIANTS: usize = 35;

fn examples() -> Vec<Reason> {
    let mut all: Vec<Reason> = amount_examples().into_iter().map(Reason::from).collect();
    all.extend([
        Reason::ControlCharacter {
            escaped: "\\u{a}".into(),
        },
        Reason::TextTooLong { len: 120, max: 100 },
        Reason::NameRequired(Name::First),
        Reason::NameRequired(Name::Last),
        Reason::IdRequired("account_id"),
        Reason::IdRequired("transaction_id"),
        Reason::IdTextMarker("account_id"),
        Reason::IdCharacter {
            id: "account_id",
            character: None,
        },
        Reason::IdCharacter {
            id: "payout_method_id",
            character: Some('\u{a0}'),
        },
        Reason::IdTooLong {
            id: "transaction_id",
            len: 300,
        },
        Reason::CurrencyRequired,
        Reason::CurrencyNotForPayment { code: "HRK".into() },
        Reason::CurrencyNoMinorUnit {
            code: "XAU".into(),
            name: "Gold".into(),
        },
        Reason::CurrencyUnknown,
        Reason::EmailTooLong,
        Reason::EmailNoAt,
        Reason::EmailNotAnAddress,
        Reason::EmailSpace,
        Reason::EmailCharacter,
        Reason::EmailDot,
        Reason::EmailDomain,
        Reason::PhoneNoCountryCode,
        Reason::PhoneLetters,
        Reason::PhoneNotANumber,
        Reason::PhoneInvalid { region: None },
        Reason::PhoneInvalid {
            region: Some("CI".into()),
        },
        Reason::PhoneNumberCell {
            digits: "2250701".into(),
        },
        Reason::NumberCell,
        Reason::DuplicateId {
            id: "PAY-7".into(),
            first: 3,
        },
        Reason::NoPayoutMethod,
        Reason::NotToPay {
            header: "Statut".into(),
            value: "annulé".into(),
        },
        Reason::FormulaWithoutResult {
            formula: "=B2*2".into(),
        },
        Reason::CellError {
            shown: "#REF!".into(),
        },
        Reason::Misaligned { cells: 5, width: 4 },
        Reason::TotalsNotLast {
            total: Decimal::from(6_091_999),
            currency: "XOF".into(),
            next: 12,
        },
        Reason::TotalsDiffer {
            total: Decimal::from(6_091_999),
            sum: Decimal::from(5_991_999),
            currency: "XOF".into(),
        },
        Reason::TotalsUncomparable,
        Reason::Unexplained,
    ]);
    all
}

/// Words of the English sentences that no French one may hold.
/// (`column` is left out: the config's `[skip] column = ...` is quoted.)
const ENGLISH_WORDS: [&str; 15] = [
    " the ",
    " is ",
    " write ",
    " remove ",
    " and ",
    " with ",
    " must ",
    " should ",
    " check ",
    " row ",
    " amount ",
    " not ",
    " set ",
    " or ",
    "fill it in",
];

#[test]
fn the_examples_cover_every_rule() {
    let mut seen = [false; VARIANTS];
    let mut seen_amount = [false; AMOUNT_VARIANTS];
    for r in examples() {
        seen[variant(&r)] = true;
        if let Reason::Amount(e) = &r {
            seen_amount[amount_variant(e)] = true;
        }
    }
    assert!(seen.iter().all(|s| *s), "{seen:?}");
    assert!(seen_amount.iter().all(|s| *s), "{seen_amount:?}");
}

#[test]
fn every_rule_is_explained_in_english_and_in_french() {
    for r in examples() {
        let en = r.shown_in(Language::En);
        let fr = r.shown_in(Language::Fr);
        assert!(en.len() > 20, "{r:?}: {en:?}");
        assert!(fr.len() > 20, "{r:?}: {fr:?}");
        assert_ne!(en, fr, "{r:?}");
        // The English sentence is the JSON output's and the logs'.
        assert_eq!(r.to_string(), en);
        // French, with the French punctuation before `:` and `;`.
        assert!(!fr.contains(" : ") && !fr.contains(" ; "), "{fr:?}");
        for word in ENGLISH_WORDS {
            assert!(!fr.contains(word), "{r:?}: {word:?} in {fr:?}");
        }
    }
}

#[test]
fn french_amounts_are_grouped() {
    let fr = Reason::TotalsDiffer {
        total: Decimal::from(6_091_999),
        sum: Decimal::from(5_991_999),
        currency: "XOF".into(),
    }
    .shown_in(Language::Fr);
    assert!(fr.contains("6\u{202f}091\u{202f}999 XOF"), "{fr}");
    assert!(fr.contains("5\u{202f}991\u{202f}999 XOF"), "{fr}");
    assert_eq!(
        Reason::TotalsDiffer {
            total: Decimal::from(6_091_999),
            sum: Decimal::from(5_991_999),
            currency: "XOF".into(),
        }
        .to_string(),
        "this is a totals row of 6091999 XOF, but the valid rows above add up to 5991999 XOF: a row may be missing, changed or rejected; correct the rows or the total"
    );
}

use crate::input::{InputError, InputNotice};
use crate::validate::columns::{ColumnsError, Found};
use crate::validate::notice::{Line, Notice, Refusal, SkippedBy};

fn notice_variant(n: &Notice) -> usize {
    match n {
        Notice::Input(InputNotice::Windows1252) => 0,
        Notice::Input(InputNotice::GuardUndone { .. }) => 1,
        Notice::Input(InputNotice::FirstVisibleSheet { .. }) => 2,
        Notice::Input(InputNotice::Preamble { .. }) => 3,
        Notice::HiddenNotLookedFor { .. } => 4,
        Notice::HiddenLeftOut { .. } => 5,
        Notice::PayeesCapped { .. } => 6,
        Notice::TotalsRowUsed { .. } => 7,
        Notice::NumberColumn { .. } => 8,
    }
}
const NOTICE_VARIANTS: usize = 9;

fn notices() -> Vec<Notice> {
    vec![
        InputNotice::Windows1252.into(),
        InputNotice::GuardUndone {
            last_column: "reasons".into(),
            cells: 5,
        }
        .into(),
        InputNotice::FirstVisibleSheet {
            sheet: "Paie".into(),
            hidden: vec!["Brouillon".into()],
        }
        .into(),
        InputNotice::Preamble {
            first: 1,
            last: 3,
            header_row: 4,
            said: vec!["\"Relevé\"".into()],
            more: false,
        }
        .into(),
        InputNotice::Preamble {
            first: 1,
            last: 1,
            header_row: 2,
            said: vec!["\"Paie\"".into()],
            more: true,
        }
        .into(),
        Notice::HiddenNotLookedFor { ext: "xls".into() },
        Notice::HiddenLeftOut { count: 2 },
        Notice::PayeesCapped { max: 100_000 },
        Notice::TotalsRowUsed {
            row: 32,
            total: Decimal::from(4_935_000),
            currency: "XOF".into(),
        },
        Notice::NumberColumn {
            header: "Compte".into(),
            count: 3,
            first: 2,
            phone: true,
        },
    ]
}

fn columns_variant(e: &ColumnsError) -> usize {
    match e {
        ColumnsError::NotAColumn { .. } => 0,
        ColumnsError::Twice { .. } => 1,
        ColumnsError::Missing { .. } => 2,
    }
}

fn columns_errors() -> Vec<ColumnsError> {
    vec![
        ColumnsError::NotAColumn {
            from: "Net".into(),
            to: "montant".into(),
        },
        ColumnsError::Twice {
            column: "amount",
            first: "\"Montant\"".into(),
            first_at: 4,
            second: "\"Net à payer\"".into(),
            second_at: 6,
        },
        ColumnsError::Missing {
            missing: vec!["account_id"],
            found: Found::NotRead {
                shown: vec!["\"Numéro\"".into()],
                more: 2,
            },
            defaults: vec![],
            to_map: Some("Numéro".into()),
        },
        ColumnsError::Missing {
            missing: vec!["account_id", "currency"],
            found: Found::AllRead,
            defaults: vec!["default_currency"],
            to_map: None,
        },
        ColumnsError::Missing {
            missing: vec!["beneficiary_lastname"],
            found: Found::EmptyRow,
            defaults: vec![],
            to_map: None,
        },
    ]
}

fn refusal_variant(r: &Refusal) -> usize {
    match r {
        Refusal::HiddenUnknown { .. } => 0,
        Refusal::HiddenRows { .. } => 1,
        Refusal::Columns { .. } => 2,
        Refusal::NoDataRows { .. } => 3,
        Refusal::SkipColumn { .. } => 4,
        Refusal::SkipNoValues => 5,
    }
}
const REFUSAL_VARIANTS: usize = 6;

fn refusals() -> Vec<Refusal> {
    let mut all = vec![
        Refusal::HiddenUnknown {
            path: "paie.xls".into(),
            ext: "xls".into(),
        },
        Refusal::HiddenRows {
            path: "paie.xlsx".into(),
            count: 1,
            named: vec![7],
        },
        Refusal::HiddenRows {
            path: "paie.xlsx".into(),
            count: 25,
            named: (2..22).collect(),
        },
        Refusal::NoDataRows {
            path: "paie.csv".into(),
        },
        Refusal::SkipColumn {
            column: "\"Statut\"".into(),
        },
        Refusal::SkipNoValues,
    ];
    all.extend(columns_errors().into_iter().map(|error| Refusal::Columns {
        path: "paie.xlsx".into(),
        error: Box::new(error),
        sheets: vec!["\"Paie\"".into(), "\"Primes\"".into()],
    }));
    all
}

fn line_variant(l: &Line<'_>) -> usize {
    match l {
        Line::Note(_) => 0,
        Line::NotRead(_) => 1,
        Line::Skipped { .. } => 2,
        Line::Repeated { .. } => 3,
    }
}
const LINE_VARIANTS: usize = 4;

/// The English and the French sentence of each example.
fn said_about_files() -> Vec<(String, String)> {
    let notices = notices();
    let headers: Vec<String> = (0..35).map(|i| format!("Note {i}")).collect();
    let mut lines: Vec<Line<'_>> = notices.iter().map(Line::Note).collect();
    lines.extend([
        Line::NotRead(&headers),
        Line::Skipped {
            by: SkippedBy::Rule,
            count: 1,
            rows: &[4],
            more: false,
        },
        Line::Skipped {
            by: SkippedBy::Hidden,
            count: 3,
            rows: &[4, 5],
            more: true,
        },
        Line::Skipped {
            by: SkippedBy::Both,
            count: 2,
            rows: &[4, 5],
            more: false,
        },
        Line::Repeated {
            pairs: &[[5, 2], [9, 3]],
            more: true,
        },
    ]);
    let mut seen = [false; LINE_VARIANTS];
    lines.iter().for_each(|l| seen[line_variant(l)] = true);
    assert!(seen.iter().all(|s| *s), "{seen:?}");
    let mut all: Vec<(String, String)> = notices
        .iter()
        .map(|n| (n.to_string(), n.shown_in(Language::Fr)))
        .collect();
    all.extend(
        refusals()
            .iter()
            .map(|r| (r.to_string(), r.shown_in(Language::Fr))),
    );
    all.extend(
        lines
            .iter()
            .map(|l| (l.shown_in(Language::En), l.shown_in(Language::Fr))),
    );
    all.extend(
        input_errors()
            .iter()
            .map(|e| (e.to_string(), e.shown_in(Language::Fr))),
    );
    all
}

fn input_error_variant(e: &InputError) -> usize {
    match e {
        InputError::EmptyFile { .. } => 0,
        InputError::EmptySheet { .. } => 1,
        InputError::NoSuchSheet { .. } => 2,
        InputError::SheetOfCsv { .. } => 3,
        InputError::WorkbookAsCsv { .. } => 4,
        InputError::NulBytes { .. } => 5,
        InputError::UnclosedQuote { .. } => 6,
        InputError::NotUtf8 { .. } => 7,
    }
}

fn input_errors() -> Vec<InputError> {
    let path = || "paie.csv".to_owned();
    let all = vec![
        InputError::EmptyFile { path: path() },
        InputError::EmptySheet {
            path: path(),
            sheet: "Paie".into(),
        },
        InputError::NoSuchSheet {
            path: path(),
            wanted: "Novembre".into(),
            sheets: vec!["Paie".into(), "Primes".into()],
        },
        InputError::SheetOfCsv {
            path: path(),
            sheet: "Paie".into(),
        },
        InputError::WorkbookAsCsv { path: path() },
        InputError::NulBytes { path: path() },
        InputError::UnclosedQuote { line: 3 },
        InputError::NotUtf8 {
            line: 4,
            row: 4,
            field: 2,
            byte: 0xE9,
            before: "Kon".into(),
        },
    ];
    let mut seen = [false; 8];
    all.iter().for_each(|e| seen[input_error_variant(e)] = true);
    assert!(seen.iter().all(|s| *s), "{seen:?}");
    all
}

#[test]
fn the_examples_cover_every_notice_and_refusal() {
    let mut seen = [false; NOTICE_VARIANTS];
    notices()
        .iter()
        .for_each(|n| seen[notice_variant(n)] = true);
    assert!(seen.iter().all(|s| *s), "{seen:?}");
    let mut seen = [false; REFUSAL_VARIANTS];
    refusals()
        .iter()
        .for_each(|r| seen[refusal_variant(r)] = true);
    assert!(seen.iter().all(|s| *s), "{seen:?}");
    let mut seen = [false; 3];
    columns_errors()
        .iter()
        .for_each(|e| seen[columns_variant(e)] = true);
    assert!(seen.iter().all(|s| *s), "{seen:?}");
}

#[test]
fn everything_said_about_a_file_is_in_english_and_in_french() {
    for (en, fr) in said_about_files() {
        assert!(en.len() > 20 && fr.len() > 20, "{en:?} / {fr:?}");
        assert_ne!(en, fr);
        assert!(!fr.contains(" : ") && !fr.contains(" ; "), "{fr:?}");
        for word in ENGLISH_WORDS
            .iter()
            .chain(&[" more", "Note:", "Skipped", "not read"])
        {
            assert!(!fr.contains(word), "{word:?} in {fr:?}");
        }
    }
}

/// The English sentences are the ones payrun wrote before they were data
/// (tests and scripts match them).
#[test]
fn the_english_sentences_are_unchanged() {
    let missing = ColumnsError::Missing {
        missing: vec!["account_id", "payout_method_id"],
        found: Found::NotRead {
            shown: vec!["\"Numéro\"".into()],
            more: 2,
        },
        defaults: vec!["default_payout_method_id"],
        to_map: Some("Numéro".into()),
    };
    assert_eq!(
        missing.to_string(),
        "missing required columns account_id, payout_method_id (or set default_payout_method_id in the config); headers not read: \"Numéro\", and 2 more. Rename the header in the file, or map it in the [columns] table of the config file (payrun.toml in the folder you run payrun from, or the file given with --config), e.g. \"Numéro\" = \"account_id\""
    );
    assert_eq!(
        Notice::TotalsRowUsed {
            row: 32,
            total: Decimal::from(4_935_000),
            currency: "XOF".into(),
        }
        .to_string(),
        "row 32 is a totals row (4935000 XOF), equal to the sum of the rows above: used as a control total, not paid"
    );
    assert_eq!(
        Line::Skipped {
            by: SkippedBy::Rule,
            count: 1,
            rows: &[4],
            more: false,
        }
        .shown_in(Language::En),
        "Skipped by the config's [skip] rule, not paid: 1 row (row 4)"
    );
    let fr = Notice::TotalsRowUsed {
        row: 32,
        total: Decimal::from(4_935_000),
        currency: "XOF".into(),
    }
    .shown_in(Language::Fr);
    assert!(fr.contains("(4\u{202f}935\u{202f}000 XOF)"), "{fr}");
}
