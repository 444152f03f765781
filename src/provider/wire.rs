//! The provider's request bodies with exactly the field names of
//! `provider-api.md`, and the response envelope. Response bodies are not
//! documented by the provider; the envelope
//! `{"status","code","message","data"}` is our interpretation (README,
//! "The envelope"), shared by the client and the sandbox so it lives in one place.

use serde::{Deserialize, Serialize};

/// `sender` object of a payout initiation (section 2.1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sender {
    #[serde(default)]
    pub email: String,
    #[serde(default)]
    pub firstname: String,
    #[serde(default)]
    pub lastname: String,
    #[serde(default)]
    pub address: String,
    #[serde(default)]
    pub phone: String,
}

/// `beneficiary` object of a payout initiation (section 2.1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Beneficiary {
    #[serde(default)]
    pub firstname: String,
    #[serde(default)]
    pub lastname: String,
    #[serde(default)]
    pub phone: String,
    #[serde(default)]
    pub email: String,
}

/// `POST /initiates` body (section 2.1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitiateRequest {
    pub transaction_id: String,
    /// A string of digits.
    pub amount: String,
    pub currency: String,
    pub payout_method_id: String,
    pub description: String,
    pub account_id: String,
    pub sender: Sender,
    pub beneficiary: Beneficiary,
}

/// `POST /executes` body (section 2.2).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteRequest {
    pub transaction_id: String,
}

/// `payment_details` of a card payment (section 2.3). Card number, CVV and
/// OTP are plain strings here only because this is the wire form; the
/// `card` module holds them in secret types and builds this at send time.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentDetails {
    #[serde(default)]
    pub momo_number: String,
    #[serde(default)]
    pub otp: String,
    #[serde(default)]
    pub customer_email: String,
    #[serde(default)]
    pub customer_firstname: String,
    #[serde(default)]
    pub customer_lastname: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub card_number: String,
    #[serde(default)]
    pub card_cvv: String,
    #[serde(default)]
    pub expiry_month: String,
    #[serde(default)]
    pub expiry_year: String,
    #[serde(default)]
    pub name_on_card: String,
}

impl std::fmt::Debug for PaymentDetails {
    // Card data must never reach a log line through a stray `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaymentDetails")
            .field("card_number", &"<redacted>")
            .field("card_cvv", &"<redacted>")
            .field("otp", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// `POST /pay` body (section 2.3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PayRequest {
    pub transaction_id: String,
    pub merchant_id: String,
    pub currency: String,
    pub payment_details: PaymentDetails,
    pub payment_method_id: String,
    /// A string of digits.
    pub amount: String,
}

/// Every answer of the sandbox, and our reading of the provider's answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// `"success"` or `"error"`.
    pub status: String,
    #[serde(default)]
    pub code: String,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub data: Option<serde_json::Value>,
}

/// Codes the sandbox uses and the client recognises.
pub mod codes {
    pub const DUPLICATE_IGNORED: &str = "DUPLICATE_IGNORED";
    pub const DUPLICATE_TRANSACTION_ID: &str = "DUPLICATE_TRANSACTION_ID";
    pub const ALREADY_EXECUTED: &str = "ALREADY_EXECUTED";
    pub const TRANSACTION_NOT_FOUND: &str = "TRANSACTION_NOT_FOUND";
    pub const INSUFFICIENT_BALANCE: &str = "INSUFFICIENT_BALANCE";
    pub const CURRENCY_WALLET_MISMATCH: &str = "CURRENCY_WALLET_MISMATCH";
    pub const INVALID_PAYOUT_METHOD: &str = "INVALID_PAYOUT_METHOD";
    pub const CARD_NOT_3DS_ENROLLED: &str = "CARD_NOT_3DS_ENROLLED";
    pub const UNAUTHORIZED: &str = "UNAUTHORIZED";
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    pub const RATE_LIMITED: &str = "RATE_LIMITED";

    // Added with the sandbox (issue 3).
    /// `code` of a fresh successful answer: equal to `data.status`.
    pub const INITIATED: &str = "INITIATED";
    pub const SUCCESS: &str = "SUCCESS";
    pub const REQUIRES_3DS: &str = "REQUIRES_3DS";
    /// Execution failures (`data.failureCode`; 422).
    pub const RECIPIENT_NOT_FOUND: &str = "RECIPIENT_NOT_FOUND";
    pub const LIMIT_EXCEEDED: &str = "LIMIT_EXCEEDED";
    pub const AUTHENTICATION_FAILED: &str = "AUTHENTICATION_FAILED";
    /// Refusals of a request (4xx).
    pub const INVALID_ACCOUNT: &str = "INVALID_ACCOUNT";
    pub const INVALID_PAYMENT_METHOD: &str = "INVALID_PAYMENT_METHOD";
    pub const INVALID_MERCHANT: &str = "INVALID_MERCHANT";
    pub const CARD_DECLINED: &str = "CARD_DECLINED";
    pub const MALFORMED_JSON: &str = "MALFORMED_JSON";
    pub const MISSING_HEADER: &str = "MISSING_HEADER";
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "UNSUPPORTED_MEDIA_TYPE";
    pub const NOT_ACCEPTABLE: &str = "NOT_ACCEPTABLE";
    pub const PAYLOAD_TOO_LARGE: &str = "PAYLOAD_TOO_LARGE";
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const METHOD_NOT_ALLOWED: &str = "METHOD_NOT_ALLOWED";
    /// Server errors (5xx).
    pub const INTERNAL_ERROR: &str = "INTERNAL_ERROR";
    pub const BAD_GATEWAY: &str = "BAD_GATEWAY";
    pub const SERVICE_UNAVAILABLE: &str = "SERVICE_UNAVAILABLE";
}
