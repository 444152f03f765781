//! The sandbox's answers as the provider shapes them: the envelope
//! (`status`, `code`, `message`, `data`) on every answer, the refusals built
//! on it (validation, 5xx, 404/405, 429 with `Retry-After`).

use std::sync::atomic::Ordering;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::super::fields::{BodyError, FieldError};
use super::super::state::Answer;
use super::{App, Call};
use crate::provider::wire::{Envelope, codes};

/// An envelope answer.
fn envelope(
    status: StatusCode,
    code: &str,
    message: &str,
    data: Option<serde_json::Value>,
) -> Response {
    let body = Envelope {
        status: if status.is_success() {
            "success"
        } else {
            "error"
        }
        .into(),
        code: code.into(),
        message: message.into(),
        data,
    };
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

pub(super) fn answer_response(a: Answer) -> Response {
    envelope(a.status, a.code, &a.message, a.data)
}

pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response {
    envelope(status, code, message, None)
}

pub(super) fn server_error(status: StatusCode) -> Response {
    let (code, message) = match status {
        StatusCode::BAD_GATEWAY => (codes::BAD_GATEWAY, "bad gateway"),
        StatusCode::SERVICE_UNAVAILABLE => (
            codes::SERVICE_UNAVAILABLE,
            "service temporarily unavailable",
        ),
        _ => (codes::INTERNAL_ERROR, "internal server error"),
    };
    error(status, code, message)
}

fn validation_error(errors: &[FieldError]) -> Response {
    let list: Vec<String> = errors
        .iter()
        .map(|e| format!("{} {}", e.field, e.reason))
        .collect();
    let data = serde_json::json!({
        "fields": errors
            .iter()
            .map(|e| serde_json::json!({"field": e.field, "reason": e.reason}))
            .collect::<Vec<_>>()
    });
    envelope(
        StatusCode::UNPROCESSABLE_ENTITY,
        codes::VALIDATION_ERROR,
        &format!("invalid request: {}", list.join("; ")),
        Some(data),
    )
}

pub(super) fn body_error(e: BodyError) -> Refused {
    Box::new(match e {
        BodyError::Malformed(m) => error(StatusCode::BAD_REQUEST, codes::MALFORMED_JSON, &m),
        BodyError::Invalid(list) => validation_error(&list),
    })
}

pub(super) async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, codes::NOT_FOUND, "no such route")
}

pub(super) async fn method_not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        codes::METHOD_NOT_ALLOWED,
        "method not allowed on this route",
    )
}

/// A refusal given before anything was done (boxed: refusals are the
/// rare path and a `Response` is large).
pub(crate) type Refused = Box<Response>;

/// A 429 with `Retry-After`, counted.
pub(super) fn rate_limited(app: &App, call: Call, secs: u64) -> Response {
    app.rate_limited.fetch_add(1, Ordering::Relaxed);
    tracing::debug!(call = call.name(), status = 429, "sandbox: rate limited");
    let mut r = error(
        StatusCode::TOO_MANY_REQUESTS,
        codes::RATE_LIMITED,
        "rate limit exceeded; retry after the Retry-After delay",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    r
}
