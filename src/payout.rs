//! The typed payout a valid input row becomes; its states live in
//! [`crate::machine`] (see `ARCHITECTURE.md`). Shared by `validate` (which produces payouts),
//! `store` (which persists them) and `engine` (which moves them).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// Sender details, each optional: the configured sender (`[sender]` in
/// `payrun.toml`) and a row's overrides of it. One struct for both; the
/// provider's body is [`crate::provider::wire::Sender`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SenderOverride {
    pub email: Option<String>,
    pub firstname: Option<String>,
    pub lastname: Option<String>,
    pub address: Option<String>,
    pub phone: Option<String>,
}

/// One valid row, ready to be imported. Text fields are trimmed; phone
/// numbers are E.164; `wire_amount` is exactly the digits string the
/// provider receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payout {
    /// Row number as the user sees it in a spreadsheet (header is row 1).
    pub row: u64,
    /// From the file's `transaction_id` column; `None` means "derive it".
    pub transaction_id: Option<String>,
    /// The account as the provider receives it (`validate::account::provider_form`).
    pub account_id: String,
    /// The account as the row gives it, when it differs from `account_id`
    /// (spaces, dashes): what reports show.
    pub account_given: Option<String>,
    /// The canonical account key: the identity of the person paid
    /// (`validate::account::account_key`, docs/rerun.md).
    pub account_key: String,
    /// The amount as written in the file, in the currency's major unit.
    pub amount: Decimal,
    /// The provider's amount: a string of digits (major or minor units).
    pub wire_amount: String,
    /// ISO 4217 code, upper case.
    pub currency: String,
    pub payout_method_id: String,
    pub description: String,
    pub beneficiary_firstname: String,
    pub beneficiary_lastname: String,
    pub beneficiary_phone: Option<String>,
    pub beneficiary_email: Option<String>,
    pub sender: SenderOverride,
}

pub use crate::machine::State;

/// The provider's sender body from configured details: a missing detail is
/// sent empty.
impl From<&SenderOverride> for crate::provider::wire::Sender {
    fn from(s: &SenderOverride) -> Self {
        crate::provider::wire::Sender {
            email: s.email.clone().unwrap_or_default(),
            firstname: s.firstname.clone().unwrap_or_default(),
            lastname: s.lastname.clone().unwrap_or_default(),
            address: s.address.clone().unwrap_or_default(),
            phone: s.phone.clone().unwrap_or_default(),
        }
    }
}
