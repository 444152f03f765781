//! The identity of a payee's account (docs/rerun.md, "One person, one
//! account key"): two spellings of one account are one person. Three forms
//! of an account, each a pure function of the cell:
//!
//! - as the row gives it (trimmed): what reports show;
//! - [`provider_form`]: what the provider receives — spaces removed, and
//!   for a number (digits, an optional leading `+`) its dashes, dots,
//!   slashes and brackets too: no provider takes `07 08 12 34 56`, and an
//!   account such as `ABC-123` keeps the dash it may need;
//! - [`account_key`]: what identifies the person — every formatting
//!   character removed, letters in upper case, and a phone number in one
//!   E.164 form however it was typed (`+225…`, `00225…`, `225…` with the
//!   `+` lost, or the national `07…` in the configured region). Leading
//!   zeros that are not a phone prefix are kept: `00123` and `123` are two
//!   bank accounts.
//!
//! Derived transaction ids, the occurrence numbering, the already-paid
//! skip and the repeat guard all use the key; nothing compares accounts as
//! typed.

use super::phone::Phones;
use std::borrow::Cow;

/// Characters that only format an account: spaces of every kind (including
/// no-break and narrow no-break spaces), dashes and hyphens, dots, slashes
/// and brackets.
pub fn is_formatting(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '-' | '.' | '/' | '(' | ')' | '\u{2010}'..='\u{2015}' | '\u{2212}'
        )
}

/// True when `s` is one or more ASCII digits.
fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// The account as the provider receives it: whitespace removed; a number
/// (digits and formatting, an optional leading `+`) without its
/// formatting. Anything else keeps its punctuation.
pub fn provider_form(given: &str) -> Cow<'_, str> {
    let number = given
        .chars()
        .enumerate()
        .all(|(i, c)| c.is_ascii_digit() || is_formatting(c) || (c == '+' && i == 0))
        && given.chars().any(|c| c.is_ascii_digit());
    if number {
        if given.chars().any(is_formatting) {
            return Cow::Owned(given.chars().filter(|c| !is_formatting(*c)).collect());
        }
    } else if given.chars().any(char::is_whitespace) {
        return Cow::Owned(given.chars().filter(|c| !c.is_whitespace()).collect());
    }
    Cow::Borrowed(given)
}

/// The canonical key of an account: the identity of the person paid.
/// `phones` carries the configured region (`default_phone_region`) and
/// the compiled phone rules. Deterministic: the same account and region
/// always give the same key.
pub fn account_key(account: &str, phones: &mut Phones) -> String {
    let s: String = account
        .chars()
        .filter(|c| !is_formatting(*c))
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if let Some(rest) = s.strip_prefix('+') {
        if digits(rest) {
            return phones.normalize(&s).unwrap_or(s);
        }
        return s;
    }
    if !digits(&s) {
        return s;
    }
    // A number in the configured region: national (`0701100001`), with
    // its country code but no `+` (`2250701100001`), or after the
    // region's international prefix (`00225…`).
    if let Some(e164) = phones.in_region(&s) {
        return e164;
    }
    // An international number whose `+` was lost, or written after `00`.
    if let Some(e164) = s
        .strip_prefix("00")
        .and_then(|rest| phones.international(rest))
    {
        return e164;
    }
    phones.international(&s).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::fields::phone_region;
    use proptest::prelude::*;

    fn ci() -> Phones {
        Phones::new(Some(phone_region("CI").unwrap()))
    }

    #[test]
    fn one_phone_number_however_it_is_typed() {
        let mut p = ci();
        for typed in [
            "+2250701100001",
            "+225 07 01 10 00 01",
            "+225\u{a0}07\u{a0}01\u{a0}10\u{a0}00\u{a0}01",
            "+225\u{202f}07.01.10.00.01",
            "2250701100001",
            "225 07 01 10 00 01",
            "00225 07 01 10 00 01",
            "0701100001",
            "07 01 10 00 01",
            "07-01-10-00-01",
            "(07) 01 10 00 01",
        ] {
            assert_eq!(account_key(typed, &mut p), "+2250701100001", "{typed}");
        }
        // Without a region, the national form cannot be read as a phone,
        // but every international spelling still can.
        let mut none = Phones::new(None);
        assert_eq!(account_key("0701100001", &mut none), "0701100001");
        for typed in ["+225 0701100001", "2250701100001", "00225 0701100001"] {
            assert_eq!(account_key(typed, &mut none), "+2250701100001", "{typed}");
        }
        // Another country's number that lost its `+`, in the CI region.
        assert_eq!(account_key("33612345678", &mut p), "+33612345678");
    }

    #[test]
    fn bank_accounts_keep_their_leading_zeros_and_lose_their_formatting() {
        let mut p = ci();
        assert_eq!(account_key("000123456789", &mut p), "000123456789");
        assert_ne!(
            account_key("000123456789", &mut p),
            account_key("123456789", &mut p)
        );
        assert_eq!(
            account_key("CI93 CI00 8010 0100 1234 5678 9012", &mut p),
            "CI93CI0080100100123456789012"
        );
        assert_eq!(
            account_key("ci93-ci00.8010", &mut p),
            account_key("CI93CI008010", &mut p)
        );
        assert_eq!(account_key("wallet/ABC-123", &mut p), "WALLETABC123");
        // A `+` that is not a phone number is kept as written.
        assert_eq!(account_key("+12", &mut p), "+12");
    }

    /// A character that is neither a digit nor formatting makes an account
    /// no number, whatever digits it holds: its key is the account as typed
    /// (formatting removed), and the phone rules are never asked. They would
    /// drop a trailing `#`, `*`, `,` or `~` and read the number before it,
    /// making `+2250701100001#` the person paid at `+2250701100001`.
    #[test]
    fn a_character_that_is_no_digit_makes_no_number() {
        let mut p = ci();
        for (typed, key) in [
            ("+2250701100001#", "+2250701100001#"),
            ("+225 07 01 10 00 01*", "+2250701100001*"),
            ("+2250701100001,1", "+2250701100001,1"),
            ("+2250701100001~", "+2250701100001~"),
            ("0701100001#", "0701100001#"),
            ("07 01 10 00 01 *", "0701100001*"),
            ("2250701100001#", "2250701100001#"),
        ] {
            assert_eq!(account_key(typed, &mut p), key, "{typed}");
        }
    }

    #[test]
    fn the_provider_gets_numbers_without_separators_and_other_ids_as_given() {
        assert_eq!(provider_form("07 08 12 34 56"), "0708123456");
        assert_eq!(provider_form("+225 07-08.12/34 56"), "+2250708123456");
        assert_eq!(provider_form("(07) 08 12 34 56"), "0708123456");
        assert_eq!(provider_form("0708123456"), "0708123456");
        assert!(matches!(provider_form("0708123456"), Cow::Borrowed(_)));
        assert_eq!(provider_form("ABC-123"), "ABC-123");
        assert_eq!(provider_form("ABC 123"), "ABC123");
        assert_eq!(provider_form("CI93 CI00 8010"), "CI93CI008010");
        assert_eq!(provider_form("awa.kone@wallet"), "awa.kone@wallet");
        // A `+` inside is not a number's sign: kept.
        assert_eq!(provider_form("12+34"), "12+34");
        assert_eq!(provider_form("-"), "-");
    }

    #[test]
    fn an_account_with_letters_is_no_phone_number() {
        let mut p = ci();
        // Letters after a phone number make another account, not that
        // phone number: the key keeps the account as typed (formatting
        // removed, upper case).
        for (typed, key) in [
            ("+2250701100001AB", "+2250701100001AB"),
            ("+22507011000ab", "+22507011000AB"),
            ("+225 07 01 10 00 01 x", "+2250701100001X"),
            ("0701100001AB", "0701100001AB"),
            ("2250701100001 b", "2250701100001B"),
            ("00225 0701100001-C", "002250701100001C"),
        ] {
            assert_eq!(account_key(typed, &mut p), key, "{typed}");
            assert_ne!(account_key(typed, &mut p), "+2250701100001", "{typed}");
        }
        // An empty or formatting-only account has an empty key, and a lone
        // `+` stays a `+`: none of them is a number.
        for (typed, key) in [("", ""), (" ", ""), ("--", ""), (" / ", ""), ("+", "+")] {
            assert_eq!(account_key(typed, &mut p), key, "{typed:?}");
        }
    }

    #[test]
    fn only_digits_and_formatting_make_a_number_for_the_provider() {
        // Formatting without a digit is not a number: only its spaces go.
        assert_eq!(provider_form("--"), "--");
        assert_eq!(provider_form(" / "), "/");
        assert_eq!(provider_form("( )"), "()");
        assert_eq!(provider_form("."), ".");
        // A letter anywhere, the first character included, makes an
        // account that keeps its punctuation.
        assert_eq!(provider_form("A 12-34"), "A12-34");
        assert_eq!(provider_form("A12-34"), "A12-34");
        assert_eq!(provider_form("12-34 B"), "12-34B");
        // A `+` is a number's sign only as the first character.
        assert_eq!(provider_form("12+34-56"), "12+34-56");
        assert_eq!(provider_form("1+2 3"), "1+23");
        assert_eq!(provider_form("+12-34"), "+1234");
        // Digits with formatting are a number.
        assert_eq!(provider_form("1-2"), "12");
    }

    /// Formatting characters a spreadsheet or a person puts in an account.
    fn separator() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            " ", "\u{a0}", "\u{202f}", "-", ".", "/", "(", ")", "\u{2013}",
        ])
    }

    /// `s` with `sep` inserted after every `every` characters.
    fn spread(s: &str, sep: &str, every: usize) -> String {
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && i % every == 0 {
                out.push_str(sep);
            }
            out.push(c);
        }
        out
    }

    proptest! {
        /// The key ignores formatting and case, and is its own key.
        #[test]
        fn formatting_and_case_never_change_the_key(
            account in "[0-9A-Za-z]{1,20}",
            plus in any::<bool>(),
            sep in separator(),
            every in 1usize..5,
        ) {
            let account = if plus { format!("+{account}") } else { account };
            let mut p = ci();
            let key = account_key(&account, &mut p);
            prop_assert_eq!(&account_key(&spread(&account, sep, every), &mut p), &key);
            prop_assert_eq!(&account_key(&account.to_lowercase(), &mut p), &key);
            prop_assert_eq!(&account_key(&key, &mut p), &key);
            // What the provider receives has the same key.
            let sent = provider_form(&account).into_owned();
            prop_assert_eq!(account_key(&sent, &mut p), key);
        }

        /// A valid Ivorian mobile number has one key in every spelling.
        #[test]
        fn every_spelling_of_a_phone_number_is_one_key(
            prefix in prop::sample::select(vec!["01", "05", "07"]),
            rest in "[0-9]{8}",
            sep in separator(),
        ) {
            let national = format!("{prefix}{rest}");
            let mut p = ci();
            let Ok(e164) = p.normalize(&format!("+225{national}")) else {
                return Ok(());
            };
            for typed in [
                format!("+225{national}"),
                format!("225{national}"),
                format!("00225{national}"),
                national.clone(),
                spread(&national, sep, 2),
            ] {
                prop_assert_eq!(&account_key(&typed, &mut p), &e164, "{}", typed);
            }
        }

        /// Digit strings that are not phone numbers keep every digit:
        /// leading zeros make another account.
        #[test]
        fn leading_zeros_of_other_numbers_are_kept(number in "[1-9][0-9]{11,18}") {
            let mut p = ci();
            let key = account_key(&number, &mut p);
            if !key.starts_with('+') {
                prop_assert_eq!(&key, &number);
                let zero = format!("0{number}");
                let padded = account_key(&zero, &mut p);
                if !padded.starts_with('+') {
                    prop_assert_ne!(padded, key);
                }
            }
        }
    }
}
