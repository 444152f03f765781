//! The typed payout a valid input row becomes, and the payout state machine
//! (DESIGN.md section 2). Shared by `validate` (which produces payouts),
//! `store` (which persists them) and `engine` (which moves them).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// Optional per-row overrides of the configured sender.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    pub account_id: String,
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
