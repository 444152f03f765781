//! The validation rules explained in English: what is wrong and how to fix
//! it, one sentence per [`Reason`]. The row, the column and the value are
//! framed around it by `Text::field_error`. The amount's sentences are the
//! `Display` of `AmountError`, next to the rules that raise them.

use crate::validate::fields::MAX_ID_LEN;
use crate::validate::numeric::SPREADSHEET_DIGITS;
use crate::validate::reason::{Name, Reason};

const EMAIL_FIX: &str = "write one address like name@example.com";

pub(super) fn rule(reason: &Reason) -> String {
    match reason {
        Reason::Amount(e) => e.to_string(),
        Reason::ControlCharacter { escaped } => format!(
            "the text contains a control character ({escaped}): remove line breaks, tabs and other invisible characters"
        ),
        Reason::TextTooLong { len, max } => {
            format!("the text is {len} characters long; at most {max} are accepted: shorten it")
        }
        Reason::NameRequired(name) => format!(
            "{} is required: fill it in",
            match name {
                Name::First => "the beneficiary's first name",
                Name::Last => "the beneficiary's last name",
            }
        ),
        Reason::IdRequired(what) => format!("{what} is required: fill it in"),
        Reason::IdTextMarker(what) => format!(
            "{what} starts with ', a spreadsheet program's text marker, not part of an \
             identifier: remove the ' (payrun reads its own failed.csv and rejected.csv without it)"
        ),
        Reason::IdCharacter { id, character } => {
            let shown = match character {
                None => "a space".to_owned(),
                Some(c) => format!("`{}` ({})", c.escape_debug(), c.escape_unicode()),
            };
            format!(
                "{id} may hold only letters A-Z, digits and ASCII punctuation, and it contains {shown}: retype it without that character"
            )
        }
        Reason::IdTooLong { id, len } => format!(
            "{id} is {len} characters long; at most {MAX_ID_LEN} are accepted: check that the cell holds one identifier"
        ),
        Reason::CurrencyRequired => {
            "the currency is required: write its ISO 4217 code, e.g. XOF, KES, USD".into()
        }
        Reason::CurrencyNotForPayment { code } => format!(
            "{code} is a fund, accounting or withdrawn ISO 4217 code, not a currency payouts can be made in: write the code of the currency paid, e.g. EUR instead of HRK, SLE instead of SLL, BOB instead of BOV"
        ),
        Reason::CurrencyNoMinorUnit { code, name } => format!(
            "{code} ({name}) is not a currency payouts can be made in: write the ISO 4217 code of a real currency, e.g. XOF, KES, USD"
        ),
        Reason::CurrencyUnknown => "not an ISO 4217 currency code: write the three-letter code, e.g. XOF (CFA franc), GHS (cedi), KES, NGN, EUR, USD".into(),
        Reason::EmailTooLong => format!(
            "the address is longer than {} characters: {EMAIL_FIX}",
            crate::validate::fields::MAX_EMAIL_LEN
        ),
        Reason::EmailNoAt => format!("the address has no `@`: {EMAIL_FIX}"),
        Reason::EmailNotAnAddress => format!("not an e-mail address: {EMAIL_FIX}"),
        Reason::EmailSpace => {
            format!("the address contains a space: {EMAIL_FIX} (one address per cell)")
        }
        Reason::EmailCharacter => format!(
            "the address contains a character addresses cannot hold: {EMAIL_FIX} (one address per cell)"
        ),
        Reason::EmailDot => format!("the part before `@` has a misplaced dot: {EMAIL_FIX}"),
        Reason::EmailDomain => format!(
            "the domain after `@` is not a valid domain (like example.com): {EMAIL_FIX}"
        ),
        Reason::PhoneNoCountryCode => "the number has no country code: write it in international form, +CC followed by the number (e.g. +2250701020304), or set default_phone_region in the config (e.g. \"CI\")".into(),
        Reason::PhoneLetters => "a phone number holds digits only (spaces, dots, dashes and brackets are fine): remove the letters and any extension".into(),
        Reason::PhoneNotANumber => {
            "not a phone number: write it in international form, e.g. +2250701020304".into()
        }
        Reason::PhoneInvalid { region } => {
            let whose = match region {
                None => "for its country code".to_owned(),
                Some(r) => format!("in the default region {r:?}"),
            };
            format!(
                "not a valid phone number {whose} (wrong length or prefix): check the digits, and write it in international form +CC... if it is from another country"
            )
        }
        Reason::PhoneNumberCell { digits } => format!(
            "the cell is a number, so it holds no `+` and no leading zero, and {digits} is not a valid international number: format the column as Text and type the number as +CC..."
        ),
        Reason::NumberCell => format!(
            "the cell is a number, and spreadsheets keep only {SPREADSHEET_DIGITS} significant digits and drop leading zeros, so this may not be the identifier that was typed: format the column as Text and type the identifiers again"
        ),
        Reason::DuplicateId { id, first } => format!(
            "transaction_id {id:?} is already used on row {first}: every payout needs its own id (a repeated id is how the provider recognises a payment already made), so give this row a new one or delete it if it is a duplicate"
        ),
        Reason::NoPayoutMethod => "payout_method_id is empty and the config has no default_payout_method_id: fill it in (e.g. the provider's mobile money or bank method id) or set default_payout_method_id in the config".into(),
        Reason::NotToPay { header, value } => format!(
            "payrun does not read this column, and it marks the row as not to be paid: remove the row, or add a skip rule to the config so such rows are left out and listed: [skip] column = {header:?}, values = [{value:?}]"
        ),
        Reason::FormulaWithoutResult { formula } => format!(
            "the cell holds the formula {formula} but no saved result (the file was written by a program that does not compute formulas): open and save it in a spreadsheet program, or type the value itself"
        ),
        Reason::CellError { shown } => format!(
            "the cell holds the spreadsheet error {shown}: correct the formula or type the value itself"
        ),
        Reason::Misaligned { cells, width } => format!(
            "the row has {cells} cells but the header has {width}, so its values may sit under the wrong columns: put a value that contains the delimiter (often a description with a comma) in double quotes, or remove the extra cells"
        ),
        Reason::TotalsNotLast {
            total,
            currency,
            next,
        } => format!(
            "this row has no payee and its amount ({total} {currency}) is the sum of the rows above, like a totals row, but row {next} follows it: a totals row must be the last row of the data; move it to the end or remove it, or fill in the account and the payee if it is a payment"
        ),
        Reason::TotalsDiffer {
            total,
            sum,
            currency,
        } => format!(
            "this is a totals row of {total} {currency}, but the valid rows above add up to {sum} {currency}: a row may be missing, changed or rejected; correct the rows or the total"
        ),
        Reason::TotalsUncomparable => "this looks like a totals row, but its amount cannot be compared with the rows above (several currencies, or no amount): remove the row from the file".into(),
        Reason::Unexplained => "the row could not be validated: please report this".into(),
    }
}
