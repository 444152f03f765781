//! Misbehaviours for hardening a client: answers a careless client would
//! misread — redirects on the money calls, an endless body, a 401 that
//! quotes the key, an initiate answer that does not match the request —
//! and the outage switch. Each is off by default and tiny; `http` decides
//! when they strike, this file only builds them.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_decimal::Decimal;
use serde_json::Value;

use super::dialect::RAW;

/// Where redirected calls are sent: answers 200 success to any method
/// and counts the hits (`requests.redirectHits`).
pub const REDIRECT_TARGET: &str = "/_sandbox/redirected";

/// Client-hardening misbehaviours, all off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Misbehaviour {
    /// Answer the chosen calls with this redirect, before doing anything.
    pub redirect: Option<Redirect>,
    /// Answer every provider call 200 with a JSON body that never ends,
    /// before doing anything.
    pub endless_body: bool,
    /// A 401 answer's message quotes the `Authorization` header received.
    pub echo_authorization: bool,
    /// `/initiates` answers (201 and duplicate 200) echo this field with a
    /// value other than the one sent; the books keep the true one.
    pub initiate_mismatch: Option<Mismatch>,
}

/// A redirect answer on the money calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redirect {
    /// 301, 302, 303, 307 or 308.
    pub status: u16,
    pub on: RedirectOn,
}

/// Which calls are redirected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RedirectOn {
    #[default]
    Executes,
    Initiates,
    Both,
}

/// Which echoed field of an initiate answer differs from the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mismatch {
    /// The amount plus one.
    Amount,
    /// Another currency (`XAF` for `XOF`, else `XOF`).
    Currency,
    /// The account with `9` appended.
    Account,
    /// The transaction id with `-other` appended.
    TransactionId,
}

/// A provider-wide outage, switched by `--outage` or `/_sandbox/outage`:
/// every provider call gets this answer before anything is done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Outage {
    #[default]
    Off,
    #[value(name = "500")]
    Status500,
    #[value(name = "502")]
    Status502,
    #[value(name = "503")]
    Status503,
    /// The connection is closed without an answer.
    Cut,
    /// 401 as if the key had been revoked (quoting it with
    /// `echo_authorization`).
    #[value(name = "401")]
    Unauthorized,
}

impl Outage {
    /// Parses the `mode` of `/_sandbox/outage` (the flag's names).
    pub(crate) fn parse(s: &str) -> Option<Outage> {
        <Outage as clap::ValueEnum>::from_str(s, true).ok()
    }
}

impl Redirect {
    pub(crate) fn check(self) -> anyhow::Result<()> {
        if ![301, 302, 303, 307, 308].contains(&self.status) {
            anyhow::bail!(
                "redirect status {} is not one of 301, 302, 303, 307, 308",
                self.status
            );
        }
        Ok(())
    }

    /// The redirect answer, pointing at `REDIRECT_TARGET` on `base`.
    pub(crate) fn response(self, base: &str) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::FOUND);
        let location = format!("{base}{REDIRECT_TARGET}");
        let mut r = (status, "").into_response();
        if let Ok(v) = HeaderValue::from_str(&location) {
            r.headers_mut().insert(header::LOCATION, v);
        }
        r.headers_mut().insert(RAW, HeaderValue::from_static("1"));
        r
    }
}

/// Alters the echoed field of an initiate answer's data.
pub(crate) fn mismatch(data: &mut Value, what: Mismatch) {
    let Some(m) = data.as_object_mut() else {
        return;
    };
    let text = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let (key, value) = match what {
        Mismatch::Amount => {
            let a: Decimal = text("amount").parse().unwrap_or_default();
            ("amount", (a + Decimal::ONE).to_string())
        }
        Mismatch::Currency => {
            let c = if text("currency") == "XOF" {
                "XAF"
            } else {
                "XOF"
            };
            ("currency", c.to_owned())
        }
        Mismatch::Account => ("accountId", format!("{}9", text("accountId"))),
        Mismatch::TransactionId => ("transactionId", format!("{}-other", text("transactionId"))),
    };
    m.insert(key.into(), Value::from(value));
}

/// One chunk of the endless body: 64 KiB of spaces (valid JSON whitespace,
/// so only a size cap stops a reader).
static CHUNK: [u8; 64 * 1024] = [b' '; 64 * 1024];

/// A body that starts like an envelope and never ends.
struct Endless {
    started: bool,
}

impl futures_core::Stream for Endless {
    type Item = Result<Bytes, std::convert::Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if !self.started {
            self.started = true;
            return Poll::Ready(Some(Ok(Bytes::from_static(
                b"{\"status\":\"success\",\"data\":",
            ))));
        }
        Poll::Ready(Some(Ok(Bytes::from_static(&CHUNK))))
    }
}

/// 200 with a JSON body that never ends.
pub(crate) fn endless_response() -> Response {
    let mut r = Response::new(Body::from_stream(Endless { started: false }));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut().insert(RAW, HeaderValue::from_static("1"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mismatches_change_one_field() {
        let base =
            json!({"transactionId": "t", "amount": "10", "currency": "XOF", "accountId": "22501"});
        let cases = [
            (Mismatch::Amount, "amount", "11"),
            (Mismatch::Currency, "currency", "XAF"),
            (Mismatch::Account, "accountId", "225019"),
            (Mismatch::TransactionId, "transactionId", "t-other"),
        ];
        for (what, key, value) in cases {
            let mut d = base.clone();
            mismatch(&mut d, what);
            assert_eq!(d[key], value);
            let changed = ["transactionId", "amount", "currency", "accountId"]
                .iter()
                .filter(|k| d[**k] != base[**k])
                .count();
            assert_eq!(changed, 1);
        }
    }

    #[test]
    fn outage_modes_parse() {
        assert_eq!(Outage::parse("503"), Some(Outage::Status503));
        assert_eq!(Outage::parse("off"), Some(Outage::Off));
        assert_eq!(Outage::parse("cut"), Some(Outage::Cut));
        assert_eq!(Outage::parse("401"), Some(Outage::Unauthorized));
        assert_eq!(Outage::parse("418"), None);
    }

    #[test]
    fn only_redirect_statuses() {
        assert!(
            Redirect {
                status: 307,
                on: RedirectOn::Both
            }
            .check()
            .is_ok()
        );
        assert!(
            Redirect {
                status: 200,
                on: RedirectOn::Both
            }
            .check()
            .is_err()
        );
    }
}
