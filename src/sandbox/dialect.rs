//! Provider dialects: the sandbox can speak like providers other than the
//! one `provider-api.md` describes, so a client's reading of answers can be
//! tested end to end. A dialect changes two things: the rules of the books
//! (`Rules`: 409 on a repeated id, payouts that settle later) and the shape
//! of every answer (`reshape`, applied to the envelope the routes produce).
//! Non-idempotent execution is a rule too, but orthogonal to the dialect.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::provider::wire::Envelope;

/// Codes only some dialects use (the others are the provider's own, in
/// `provider::wire::codes`).
pub mod codes {
    /// `conflict-on-repeat`: `/initiates` under an id already used (MTN
    /// MoMo's `409 RESOURCE_ALREADY_EXIST` for a reused reference id),
    /// same body or not.
    pub const RESOURCE_ALREADY_EXIST: &str = "RESOURCE_ALREADY_EXIST";
    /// `pending`: accepted, not final yet (never polled).
    pub const PENDING: &str = "PENDING";
    /// `pending`: still not final after at least one status poll.
    pub const PROCESSING: &str = "PROCESSING";
    /// `flat`: `status` of an answer that is an error about the request
    /// itself (no transaction to describe).
    pub const ERROR: &str = "ERROR";
}

/// How the sandbox talks. The default is the provider's documented one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    /// `{"status":"success"|"error","code","message","data"}` with
    /// meaningful HTTP statuses (docs/provider.md).
    #[default]
    #[value(name = "envelope")]
    Envelope,
    /// The envelope, but every application error is HTTP 200 with
    /// `"status":"error"` (429 and 5xx keep their status: a gateway gives
    /// those).
    #[value(name = "errors-in-200")]
    ErrorsIn200,
    /// No envelope: the transaction's fields at the top level with
    /// `status` (`SUCCESS`, `FAILED`, `INITIATED`, `PENDING`… or `ERROR`),
    /// `code` and `message`.
    #[value(name = "flat")]
    Flat,
    /// The envelope, with MTN MoMo / CinetPay rules: a repeated initiate
    /// is `409 RESOURCE_ALREADY_EXIST`, a repeated execute of a paid
    /// payout `409 ALREADY_EXECUTED` (no data).
    #[value(name = "conflict-on-repeat")]
    ConflictOnRepeat,
    /// The envelope, with executes answered `202 PENDING`; the payout
    /// settles later (see `Settlement`), visible through `GET /status`.
    #[value(name = "pending")]
    Pending,
}

/// When a pending payout settles (`pending` dialect): at the first of
/// the two that is reached. Both `None` settles at the first look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settlement {
    /// After this many `GET /status` polls of it (the poll that reaches
    /// the count sees the outcome).
    pub after_polls: Option<u32>,
    /// After this many milliseconds since `/executes` accepted it.
    pub after_ms: Option<u64>,
}

impl Default for Settlement {
    /// Two polls: the first answers `PROCESSING`, the second the outcome,
    /// so a client meets a not-final status on a poll too.
    fn default() -> Self {
        Settlement {
            after_polls: Some(2),
            after_ms: None,
        }
    }
}

impl Settlement {
    pub(crate) fn is_due(self, polls: u32, elapsed_ms: u64) -> bool {
        if self.after_polls.is_none() && self.after_ms.is_none() {
            return true;
        }
        self.after_polls.is_some_and(|n| polls >= n)
            || self.after_ms.is_some_and(|ms| elapsed_ms >= ms)
    }
}

/// The book-keeping rules a configuration asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Rules {
    pub repeat_conflicts: bool,
    /// `Some` in the `pending` dialect.
    pub settle: Option<Settlement>,
    pub non_idempotent: bool,
}

impl Rules {
    pub(crate) fn new(dialect: Dialect, settlement: Settlement, non_idempotent: bool) -> Rules {
        Rules {
            repeat_conflicts: dialect == Dialect::ConflictOnRepeat,
            settle: (dialect == Dialect::Pending).then_some(settlement),
            non_idempotent,
        }
    }
}

/// Whether the dialect rewrites answers (the others only change rules).
pub(crate) fn reshapes(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::ErrorsIn200 | Dialect::Flat)
}

/// Header set on answers that must reach the client as they are (the
/// endless body, the redirect); removed before sending.
pub(crate) const RAW: &str = "x-sandbox-raw";

/// Largest answer `reshape` reads back: our envelopes are a few KiB.
const MAX_RESHAPE: usize = 1024 * 1024;

/// Middleware: rewrites the envelope of provider answers into the
/// dialect's shape. The sandbox's own routes (`/_sandbox/…`) keep JSON
/// as it is.
pub(crate) async fn reshape(dialect: Dialect, req: Request, next: Next) -> Response {
    let own = req.uri().path().starts_with("/_sandbox/");
    let mut response = next.run(req).await;
    if response.headers_mut().remove(RAW).is_some() || own {
        return response;
    }
    if !reshapes(dialect) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_RESHAPE).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Ok(envelope) = serde_json::from_slice::<Envelope>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let (status, value) = shape(dialect, parts.status, envelope);
    parts.status = status;
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = serde_json::to_vec(&value).unwrap_or_default();
    Response::from_parts(parts, Body::from(body))
}

/// The dialect's status and body for one envelope answer (pure).
pub(crate) fn shape(dialect: Dialect, status: StatusCode, e: Envelope) -> (StatusCode, Value) {
    match dialect {
        Dialect::ErrorsIn200 => {
            let gateway = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            let status = if status.is_success() || gateway {
                status
            } else {
                StatusCode::OK
            };
            (status, serde_json::to_value(&e).unwrap_or_default())
        }
        Dialect::Flat => {
            let mut m = match e.data {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            if !m.contains_key("status") {
                let word = if status.is_success() {
                    crate::provider::wire::codes::SUCCESS
                } else {
                    codes::ERROR
                };
                m.insert("status".into(), Value::from(word));
            }
            m.insert("code".into(), Value::from(e.code));
            m.insert("message".into(), Value::from(e.message));
            (status, Value::Object(m))
        }
        _ => (status, serde_json::to_value(&e).unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(status: &str, code: &str, data: Option<Value>) -> Envelope {
        Envelope {
            status: status.into(),
            code: code.into(),
            message: "m".into(),
            data,
        }
    }

    #[test]
    fn errors_in_200_keeps_gateway_statuses() {
        let d = Dialect::ErrorsIn200;
        let (s, v) = shape(
            d,
            StatusCode::UNPROCESSABLE_ENTITY,
            env("error", "INSUFFICIENT_BALANCE", None),
        );
        assert_eq!(s, StatusCode::OK);
        assert_eq!(v["status"], "error");
        assert_eq!(v["code"], "INSUFFICIENT_BALANCE");
        let (s, _) = shape(
            d,
            StatusCode::TOO_MANY_REQUESTS,
            env("error", "RATE_LIMITED", None),
        );
        assert_eq!(s, StatusCode::TOO_MANY_REQUESTS);
        let (s, _) = shape(
            d,
            StatusCode::BAD_GATEWAY,
            env("error", "BAD_GATEWAY", None),
        );
        assert_eq!(s, StatusCode::BAD_GATEWAY);
        let (s, v) = shape(
            d,
            StatusCode::CREATED,
            env("success", "INITIATED", Some(json!({"a": 1}))),
        );
        assert_eq!((s, &v["status"]), (StatusCode::CREATED, &json!("success")));
    }

    #[test]
    fn flat_lifts_the_data() {
        let data = json!({"transactionId": "t", "status": "FAILED", "amount": "5"});
        let (s, v) = shape(
            Dialect::Flat,
            StatusCode::UNPROCESSABLE_ENTITY,
            env("error", "RECIPIENT_NOT_FOUND", Some(data)),
        );
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            v,
            json!({"transactionId": "t", "status": "FAILED", "amount": "5",
                             "code": "RECIPIENT_NOT_FOUND", "message": "m"})
        );
        let (_, v) = shape(
            Dialect::Flat,
            StatusCode::UNAUTHORIZED,
            env("error", "UNAUTHORIZED", None),
        );
        assert_eq!(v["status"], "ERROR");
        assert!(v.get("data").is_none());
    }

    #[test]
    fn settlement_rules() {
        let s = Settlement::default();
        assert!(!s.is_due(1, 1_000_000));
        assert!(s.is_due(2, 0));
        let t = Settlement {
            after_polls: None,
            after_ms: Some(50),
        };
        assert!(!t.is_due(100, 49));
        assert!(t.is_due(0, 50));
        assert!(
            Settlement {
                after_polls: None,
                after_ms: None
            }
            .is_due(0, 0)
        );
    }
}
