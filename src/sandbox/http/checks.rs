//! What the sandbox checks of a provider call before it touches the books,
//! in order: the API key (compared in constant time; a 401 may quote the
//! header received, a misbehaviour), the headers `provider-api.md` names
//! for each call (400/406/415), and the body's size (413).

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

use super::reply::{Refused, error};
use super::{App, Call};
use crate::provider::wire::codes;

/// Largest request body read. A payout body is well under 2 KiB; this
/// leaves room for long descriptions and refuses abuse early.
const MAX_BODY: usize = 64 * 1024;

/// Byte comparison whose time does not depend on where the inputs differ.
pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A 401 answer; with `echo_authorization` it quotes the header received,
/// as some providers do (a client must never print it).
pub(super) fn unauthorized(app: &App, headers: &HeaderMap, message: &str) -> Refused {
    let message = match headers.get(header::AUTHORIZATION) {
        Some(v) if app.misbehaviour.echo_authorization => format!(
            "{message} (received Authorization: {})",
            String::from_utf8_lossy(v.as_bytes())
        ),
        _ => message.to_owned(),
    };
    let mut r = error(StatusCode::UNAUTHORIZED, codes::UNAUTHORIZED, &message);
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    Box::new(r)
}

pub(crate) fn check_auth(app: &App, headers: &HeaderMap) -> Result<(), Refused> {
    let unauthorized = |message: &str| {
        if app.misbehaviour.echo_authorization {
            return unauthorized(app, headers, message);
        }
        let mut r = error(StatusCode::UNAUTHORIZED, codes::UNAUTHORIZED, message);
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        Box::new(r)
    };
    if headers.get(header::AUTHORIZATION).is_none() {
        return Err(unauthorized(
            "missing Authorization: Bearer <API key> header",
        ));
    }
    let Some(token) = bearer(headers) else {
        return Err(unauthorized(
            "the Authorization header must be Bearer <API key>",
        ));
    };
    if app.key_index(token).is_some() {
        Ok(())
    } else {
        Err(unauthorized("invalid API key"))
    }
}

/// The token of an `Authorization: Bearer <token>` header.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes();
    match value.split_at_checked(7) {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case(b"bearer ") => Some(token),
        _ => None,
    }
}

/// Whether a media type (parameters ignored) is JSON.
pub(super) fn is_json(value: &HeaderValue) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether an `Accept` header admits JSON.
pub(super) fn accepts_json(value: &HeaderValue) -> bool {
    let Ok(v) = value.to_str() else { return false };
    v.split(',').any(|item| {
        let t = item.split(';').next().unwrap_or("").trim();
        ["application/json", "application/*", "*/*"]
            .iter()
            .any(|ok| t.eq_ignore_ascii_case(ok))
    })
}

/// The headers `provider-api.md` names for each call.
pub(super) fn check_headers(call: Call, headers: &HeaderMap) -> Result<(), Refused> {
    if call != Call::Status && !headers.get(header::CONTENT_TYPE).is_some_and(is_json) {
        return Err(Box::new(error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            codes::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        )));
    }
    match call {
        Call::Initiate | Call::Execute | Call::Status => {
            if let Some(accept) = headers.get(header::ACCEPT)
                && !accepts_json(accept)
            {
                return Err(Box::new(error(
                    StatusCode::NOT_ACCEPTABLE,
                    codes::NOT_ACCEPTABLE,
                    "this call answers application/json; fix the Accept header",
                )));
            }
        }
        Call::Pay => {
            let ok = headers
                .get("x-requested-with")
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"XMLHttpRequest"));
            if !ok {
                return Err(Box::new(error(
                    StatusCode::BAD_REQUEST,
                    codes::MISSING_HEADER,
                    "/pay requires the header X-Requested-With: XMLHttpRequest",
                )));
            }
        }
    }
    Ok(())
}

pub(super) async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, Refused> {
    let too_large = || {
        Box::new(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::PAYLOAD_TOO_LARGE,
            "the request body is larger than 64 KiB",
        ))
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| too_large())
}
