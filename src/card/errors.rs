//! Why a card payment request cannot be sent: [`FieldError`] (one field, one
//! problem, one fix) and [`InvalidRequest`] (all of them; exit code 2), and
//! how a value is shown inside them. The rule they keep: an error names the
//! field and quotes its value only when the value may be shown; card data is
//! masked or hidden, never quoted.

use std::fmt;

use serde::Serialize;

/// How much of a value an error message quotes: enough to recognise it.
const QUOTE_CHARS: usize = 60;

/// The `value` of an error about a field that is not there.
pub(crate) const MISSING: &str = "(missing)";

/// One reason the request cannot be sent. `value` is what the user wrote as
/// far as it may be shown: card data is masked (`400000******3220`) or hidden
/// entirely (CVV, OTP), other values are quoted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The JSON path of the field, e.g. `payment_details.card_number`.
    pub field: String,
    pub value: String,
    pub problem: String,
    pub fix: String,
}

impl FieldError {
    pub(crate) fn new(
        field: impl Into<String>,
        value: impl Into<String>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> FieldError {
        FieldError {
            field: field.into(),
            value: value.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {}: {}; fix: {}",
            self.field, self.value, self.problem, self.fix
        )
    }
}

/// The request failed validation; nothing was sent. Callers branch on it
/// (exit code 2, the list of errors in the chosen output format).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the payment request is invalid ({} problem(s)), nothing was sent", .errors.len())]
pub struct InvalidRequest {
    pub errors: Vec<FieldError>,
}

impl InvalidRequest {
    pub fn one(error: FieldError) -> InvalidRequest {
        InvalidRequest {
            errors: vec![error],
        }
    }
}

/// A value as quoted in an error message: Rust string syntax (control
/// characters escaped, so nothing can drive the terminal), shortened.
pub(crate) fn quote(value: &str) -> String {
    let short: String = value.chars().take(QUOTE_CHARS).collect();
    if short.len() < value.len() {
        format!("{short:?}…")
    } else {
        format!("{short:?}")
    }
}

/// How a secret value is described in an error: never its content.
pub(crate) fn hidden(value: &str) -> String {
    format!("(hidden, {} characters)", value.chars().count())
}

/// A field of the wrong JSON type: names the type found, never the value
/// (the value may be a card number written as a JSON number).
pub(crate) fn wrong_type(field: &str, found: &str, want: &str) -> FieldError {
    FieldError::new(
        field,
        format!("({found})"),
        format!("must be {want}, not {found}"),
        format!(
            "write it as {want}, e.g. \"{field_short}\": \"...\"",
            field_short = field.rsplit('.').next().unwrap_or(field)
        ),
    )
}
