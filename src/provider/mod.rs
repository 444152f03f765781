//! The typed HTTP client for the provider's three calls (`/initiates`,
//! `/executes`, `/pay`) and the one place that interprets the provider's
//! answers (README, "Rate limiting and retries"). Response bodies are undocumented by the
//! provider; our reading of them (the envelope in `wire`) stays in this
//! module, so a real provider's quirks are absorbed here and nowhere else.
//!
//! The client does not retry: retrying, pausing on 429 and the choice
//! between re-sending and holding belong to the engine, which knows whether a
//! payout is being initiated or executed. One retry layer, never two.

pub mod wire;

use anyhow::{Context, Result};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use std::time::Duration;
use wire::{Envelope, ExecuteRequest, InitiateRequest, PayRequest};

/// Upper bound on one call, send to answer. Long enough for a slow provider
/// under load; short enough that a hung connection does not stall a run.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Connecting should take milliseconds; a provider that does not accept the
/// connection in this time is treated as down (the request was never sent).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// When a 429 carries no usable `Retry-After`, wait this long.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);

/// How one provider call ended, classified for the state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The provider accepted: initiated, executed, a duplicate of an accepted
    /// initiation, or an "already executed" answer for a successful payout.
    Accepted {
        code: String,
        message: String,
        /// `data.status` when present (`INITIATED`, `SUCCESS`, `REQUIRES_3DS`...).
        status: Option<String>,
        data: Option<serde_json::Value>,
    },
    /// A definitive business refusal (4xx other than 401/403/429, or an
    /// execution answered with `status = FAILED`).
    Refused {
        http: u16,
        code: String,
        message: String,
        /// The provider reported the transaction itself as `FAILED` (a
        /// definitive record), not merely an error of this call.
        transaction_failed: bool,
    },
    /// The key was refused (401/403): the whole run must stop.
    Unauthorized { http: u16, message: String },
    /// 429: wait, then retry.
    RateLimited { retry_after: Duration },
    /// The request never left (connect error, DNS, refused): safe to retry.
    NotSent { detail: String },
    /// The request may have been carried out: 5xx, timeout after send,
    /// reset, unreadable body.
    Ambiguous { detail: String },
}

impl Outcome {
    /// The provider code (or a transport description) for the report.
    pub fn code(&self) -> &str {
        match self {
            Outcome::Accepted { code, .. } | Outcome::Refused { code, .. } => code,
            Outcome::Unauthorized { .. } => "UNAUTHORIZED",
            Outcome::RateLimited { .. } => "RATE_LIMITED",
            Outcome::NotSent { .. } => "NOT_SENT",
            Outcome::Ambiguous { .. } => "AMBIGUOUS",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Outcome::Accepted { message, .. }
            | Outcome::Refused { message, .. }
            | Outcome::Unauthorized { message, .. } => message,
            Outcome::RateLimited { .. } => "rate limited",
            Outcome::NotSent { detail } | Outcome::Ambiguous { detail } => detail,
        }
    }
}

/// The provider client. Cheap to clone (one shared connection pool).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    // Parsed once: URL parsing (with IDNA) per request was a visible share
    // of the client's CPU at thousands of calls per second.
    initiates: reqwest::Url,
    executes: reqwest::Url,
    pay: reqwest::Url,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Builds a client for `base_url` (trailing `/` ignored). The key is put
    /// in a sensitive header value once, here, and is not kept elsewhere.
    pub fn new(base_url: &str, api_key: &SecretString) -> Result<Client> {
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", api_key.expose_secret()))
            .map_err(|_| {
                anyhow::anyhow!("the API key contains characters not allowed in an HTTP header")
            })?;
        auth.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, auth);
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true)
            .build()
            .context("cannot build the HTTP client")?;
        let base_url = base_url.trim_end_matches('/').to_string();
        let url = |path: &str| {
            reqwest::Url::parse(&format!("{base_url}/{path}"))
                .with_context(|| format!("invalid provider base URL {base_url:?}"))
        };
        Ok(Client {
            initiates: url("initiates")?,
            executes: url("executes")?,
            pay: url("pay")?,
            http,
            base_url,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `POST /initiates`.
    pub async fn initiate(&self, req: &InitiateRequest) -> Outcome {
        let rb = self
            .http
            .post(self.initiates.clone())
            .header(ACCEPT, "application/json");
        self.send(rb, req, false).await
    }

    /// `POST /executes`.
    pub async fn execute(&self, transaction_id: &str) -> Outcome {
        let rb = self
            .http
            .post(self.executes.clone())
            .header(ACCEPT, "application/json");
        let req = ExecuteRequest {
            transaction_id: transaction_id.to_string(),
        };
        self.send(rb, &req, true).await
    }

    /// `POST /pay`, with the headers the provider names for it.
    pub async fn pay(&self, req: &PayRequest) -> Outcome {
        let rb = self
            .http
            .post(self.pay.clone())
            .header("X-Requested-With", "XMLHttpRequest");
        self.send(rb, req, false).await
    }

    async fn send<T: Serialize>(
        &self,
        rb: reqwest::RequestBuilder,
        body: &T,
        is_execute: bool,
    ) -> Outcome {
        let body = match serde_json::to_vec(body) {
            Ok(b) => b,
            Err(e) => {
                return Outcome::NotSent {
                    detail: format!("cannot encode request: {e}"),
                };
            }
        };
        let resp = rb
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => return classify_transport_error(&e),
        };
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let bytes = match resp.bytes().await {
            Ok(b) => b,
            Err(e) => {
                // Headers arrived but the body did not: the call may have been
                // carried out. 4xx without a body is still a clear refusal.
                if (400..500).contains(&status) && status != 429 {
                    return classify(status, None, retry_after, is_execute);
                }
                return Outcome::Ambiguous {
                    detail: format!("HTTP {status}, body unreadable: {}", error_chain(&e)),
                };
            }
        };
        let env: Option<Envelope> = serde_json::from_slice(&bytes).ok();
        if env.is_none() && (200..300).contains(&status) {
            return Outcome::Ambiguous {
                detail: format!("HTTP {status} with an unreadable body"),
            };
        }
        classify(status, env, retry_after, is_execute)
    }
}

/// Classifies an answer that arrived (README, "Rate limiting and retries").
pub fn classify(
    status: u16,
    env: Option<Envelope>,
    retry_after: Option<Duration>,
    is_execute: bool,
) -> Outcome {
    let (code, message, data) = match env {
        Some(e) => (e.code, e.message, e.data),
        None => (String::new(), String::new(), None),
    };
    let data_status = data
        .as_ref()
        .and_then(|d| d.get("status"))
        .and_then(|s| s.as_str())
        .map(str::to_string);
    let failure_code = data
        .as_ref()
        .and_then(|d| d.get("failureCode"))
        .and_then(|s| s.as_str())
        .map(str::to_string);
    let code_or = |fallback: &str| {
        if code.is_empty() {
            fallback.to_string()
        } else {
            code.clone()
        }
    };
    match status {
        200..=299 => {
            if is_execute && data_status.as_deref() == Some("FAILED") {
                Outcome::Refused {
                    http: status,
                    code: failure_code.unwrap_or_else(|| code_or("FAILED")),
                    message,
                    transaction_failed: true,
                }
            } else {
                Outcome::Accepted {
                    code: code_or("OK"),
                    message,
                    status: data_status,
                    data,
                }
            }
        }
        401 | 403 => Outcome::Unauthorized {
            http: status,
            message: if message.is_empty() {
                format!("HTTP {status}")
            } else {
                message
            },
        },
        429 => Outcome::RateLimited {
            retry_after: retry_after.unwrap_or(DEFAULT_RETRY_AFTER),
        },
        408 | 500..=599 => Outcome::Ambiguous {
            detail: if message.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status} {}: {message}", code_or(""))
            },
        },
        _ => {
            // An execution the provider reports as already done and
            // successful is a success, whatever the HTTP status.
            if is_execute && data_status.as_deref() == Some("SUCCESS") {
                return Outcome::Accepted {
                    code: code_or("OK"),
                    message,
                    status: data_status,
                    data,
                };
            }
            let transaction_failed = is_execute && data_status.as_deref() == Some("FAILED");
            let code = failure_code
                .filter(|_| transaction_failed)
                .unwrap_or_else(|| code_or(&format!("HTTP_{status}")));
            Outcome::Refused {
                http: status,
                code,
                message,
                transaction_failed,
            }
        }
    }
}

fn classify_transport_error(e: &reqwest::Error) -> Outcome {
    let detail = error_chain(e);
    if e.is_connect() || e.is_builder() {
        Outcome::NotSent { detail }
    } else {
        // Timeout after send, reset, or anything else once bytes may have
        // left: the provider may have acted on it.
        Outcome::Ambiguous { detail }
    }
}

/// `Retry-After` as delay-seconds; an HTTP-date is not worth a date parser
/// here, the default wait covers it.
fn parse_retry_after(v: &str) -> Option<Duration> {
    let secs: f64 = v.trim().parse().ok()?;
    if secs.is_finite() && secs >= 0.0 {
        Some(Duration::from_millis((secs * 1000.0) as u64))
    } else {
        None
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(cause) = src {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        src = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(status: &str, code: &str, data: serde_json::Value) -> Option<Envelope> {
        Some(Envelope {
            status: status.into(),
            code: code.into(),
            message: "m".into(),
            data: if data.is_null() { None } else { Some(data) },
        })
    }

    #[test]
    fn success_and_duplicates_are_accepted() {
        let o = classify(
            201,
            env("success", "", json!({"status":"INITIATED"})),
            None,
            false,
        );
        assert!(
            matches!(o, Outcome::Accepted { ref status, .. } if status.as_deref() == Some("INITIATED"))
        );
        let o = classify(
            200,
            env(
                "success",
                "DUPLICATE_IGNORED",
                json!({"status":"INITIATED"}),
            ),
            None,
            false,
        );
        assert_eq!(o.code(), "DUPLICATE_IGNORED");
        let o = classify(
            200,
            env("success", "ALREADY_EXECUTED", json!({"status":"SUCCESS"})),
            None,
            true,
        );
        assert!(matches!(o, Outcome::Accepted { .. }));
    }

    #[test]
    fn failed_execution_is_refused_with_failure_code() {
        let data = json!({"status":"FAILED","failureCode":"RECIPIENT_NOT_FOUND"});
        for http in [200, 422] {
            let o = classify(
                http,
                env("error", "EXECUTION_FAILED", data.clone()),
                None,
                true,
            );
            assert_eq!(
                o,
                Outcome::Refused {
                    http,
                    code: "RECIPIENT_NOT_FOUND".into(),
                    message: "m".into(),
                    transaction_failed: true,
                }
            );
        }
    }

    #[test]
    fn already_executed_success_under_4xx_is_accepted() {
        let o = classify(
            409,
            env("error", "ALREADY_EXECUTED", json!({"status":"SUCCESS"})),
            None,
            true,
        );
        assert!(matches!(o, Outcome::Accepted { .. }));
    }

    #[test]
    fn transport_classes() {
        assert!(matches!(
            classify(401, None, None, false),
            Outcome::Unauthorized { http: 401, .. }
        ));
        assert!(matches!(
            classify(403, None, None, true),
            Outcome::Unauthorized { http: 403, .. }
        ));
        assert_eq!(
            classify(429, None, Some(Duration::from_secs(3)), false),
            Outcome::RateLimited {
                retry_after: Duration::from_secs(3)
            }
        );
        assert_eq!(
            classify(429, None, None, false),
            Outcome::RateLimited {
                retry_after: DEFAULT_RETRY_AFTER
            }
        );
        for s in [500, 502, 503, 504] {
            assert!(matches!(
                classify(s, None, None, true),
                Outcome::Ambiguous { .. }
            ));
        }
        let o = classify(
            422,
            env("error", "CURRENCY_WALLET_MISMATCH", serde_json::Value::Null),
            None,
            false,
        );
        assert_eq!(o.code(), "CURRENCY_WALLET_MISMATCH");
        assert!(matches!(o, Outcome::Refused { http: 422, .. }));
        assert_eq!(classify(404, None, None, true).code(), "HTTP_404");
    }

    #[test]
    fn retry_after_parsing() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after(" 0.5 "), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn client_debug_hides_key() {
        let c = Client::new("http://127.0.0.1:1", &SecretString::from("sk_live_secret")).unwrap();
        assert!(!format!("{c:?}").contains("sk_live_secret"));
    }
}
