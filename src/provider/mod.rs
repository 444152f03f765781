//! The typed HTTP client for the provider's three calls (`/initiates`,
//! `/executes`, `/pay`). It sends, reads the answer within bounds (no
//! redirects, a size cap), and hands the bytes to the pure classifier
//! (`classify`) under the provider profile (`profile`); every string that
//! comes back is scrubbed (`outcome::Scrubber`). How a provider answers is
//! data (the profile), so a real provider's quirks are absorbed here and
//! nowhere else. Format and examples: `docs/provider.md`.
//!
//! The client does not retry: retrying, pausing on 429 and the choice
//! between re-sending and holding belong to the engine, which knows whether a
//! payout is being initiated or executed. One retry layer, never two.

/// Environment variable holding the provider's API key (named here, where
/// the key is used; the config reads it too).
pub const API_KEY_ENV: &str = "PAYRUN_API_KEY";

pub mod classify;
pub mod endpoint;
pub mod outcome;
pub mod probe;
pub mod profile;
pub mod status;
pub mod wire;

pub use classify::{
    Answer, Body, CallKind, DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER, Sent, classify, parse_retry_after,
};
pub use endpoint::{BaseUrl, BaseUrlError};
pub use outcome::{MAX_MESSAGE_CHARS, Outcome, Scrubber, StopKind};
pub use profile::{Profile, ProfileError, ProfileSpec};

use anyhow::{Context, Result};
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use wire::{ExecuteRequest, InitiateRequest, PayRequest};

/// Upper bound on one call, send to answer. Long enough for a slow provider
/// under load; short enough that a hung connection does not stall a run.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Connecting should take milliseconds; a provider that does not accept the
/// connection in this time is treated as down (the request was never sent).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest answer body read. A payout answer is a few hundred bytes; 64 KiB
/// leaves room for verbose providers and error pages while an endless or
/// hostile body cannot grow memory (a body over it is `Ambiguous`, never
/// buffered further).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The provider client. Cheap to clone (one shared connection pool).
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: BaseUrl,
    profile: Arc<Profile>,
    scrubber: Scrubber,
    // Built once: URL parsing (with IDNA) per request was a visible share
    // of the client's CPU at thousands of calls per second.
    initiates: reqwest::Url,
    executes: reqwest::Url,
    pay: reqwest::Url,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base.display())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client reading answers with the built-in (sandbox) profile.
    pub fn new(base_url: &str, api_key: &SecretString) -> Result<Client> {
        Client::with_profile(base_url, api_key, Profile::sandbox())
    }

    /// Builds a client for `base_url` (checked: https except loopback, no
    /// credentials, query or fragment). The key is put in a sensitive
    /// header value once, here, and kept otherwise only to redact it from
    /// answers. Redirects are never followed.
    pub fn with_profile(
        base_url: &str,
        api_key: &SecretString,
        profile: Profile,
    ) -> Result<Client> {
        let base = BaseUrl::parse(base_url)?;
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", api_key.expose_secret()))
            .map_err(|_| {
                anyhow::anyhow!("the API key contains characters not allowed in an HTTP header")
            })?;
        auth.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, auth);
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true)
            .build()
            .context("cannot build the HTTP client")?;
        Ok(Client {
            initiates: base.join("initiates"),
            executes: base.join("executes"),
            pay: base.join("pay"),
            http,
            base,
            profile: Arc::new(profile),
            scrubber: Scrubber::new(api_key),
        })
    }

    /// The base URL without any secret: safe to store and show.
    pub fn base_url(&self) -> &str {
        self.base.display()
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// `POST /initiates`.
    pub async fn initiate(&self, req: &InitiateRequest) -> Outcome {
        let rb = self
            .http
            .post(self.initiates.clone())
            .header(ACCEPT, "application/json");
        let sent = Sent {
            transaction_id: &req.transaction_id,
            amount: Some(&req.amount),
            currency: Some(&req.currency),
            account: Some(&req.account_id),
        };
        self.send(rb, req, CallKind::Initiate, &sent).await
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
        let sent = Sent {
            transaction_id,
            ..Sent::default()
        };
        self.send(rb, &req, CallKind::Execute, &sent).await
    }

    /// `POST /pay`, with the headers the provider names for it.
    pub async fn pay(&self, req: &PayRequest) -> Outcome {
        let rb = self
            .http
            .post(self.pay.clone())
            .header("X-Requested-With", "XMLHttpRequest");
        let sent = Sent {
            transaction_id: &req.transaction_id,
            amount: Some(&req.amount),
            currency: Some(&req.currency),
            account: None,
        };
        self.send(rb, req, CallKind::Pay, &sent).await
    }

    async fn send<T: Serialize>(
        &self,
        rb: reqwest::RequestBuilder,
        body: &T,
        call: CallKind,
        sent: &Sent<'_>,
    ) -> Outcome {
        self.exchange(rb, body, call, sent).await.outcome
    }

    /// One request and its classified answer, with the raw status and body
    /// kept for `probe` (the body as read, within the cap, not scrubbed).
    async fn exchange<T: Serialize>(
        &self,
        rb: reqwest::RequestBuilder,
        body: &T,
        call: CallKind,
        sent: &Sent<'_>,
    ) -> Exchange {
        let body = match serde_json::to_vec(body) {
            Ok(b) => b,
            Err(e) => {
                return Exchange::without_answer(Outcome::NotSent {
                    detail: format!("cannot encode request: {e}"),
                });
            }
        };
        let resp = rb
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await;
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                return Exchange::without_answer(
                    classify_transport_error(&e).scrubbed(&self.scrubber),
                );
            }
        };
        let http = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let received = SystemTime::now();
        let read = read_capped(resp).await;
        let body = match &read {
            Ok(bytes) => Body::Complete(bytes),
            Err(BodyError::TooLarge) => Body::TooLarge,
            Err(BodyError::Broken(e)) => Body::Unreadable(e),
        };
        let answer = Answer {
            http,
            retry_after: retry_after.as_deref(),
            body,
            received,
        };
        let outcome = classify(call, sent, &answer, &self.profile).scrubbed(&self.scrubber);
        Exchange {
            http: Some(http),
            body: read.ok(),
            outcome,
        }
    }
}

/// A request's answer as received, and how it was classified.
struct Exchange {
    http: Option<u16>,
    /// The complete body, when it was read whole within the cap.
    body: Option<Vec<u8>>,
    outcome: Outcome,
}

impl Exchange {
    fn without_answer(outcome: Outcome) -> Exchange {
        Exchange {
            http: None,
            body: None,
            outcome,
        }
    }
}

enum BodyError {
    TooLarge,
    Broken(String),
}

/// Reads the body chunk by chunk, stopping at [`MAX_BODY_BYTES`].
async fn read_capped(mut resp: reqwest::Response) -> std::result::Result<Vec<u8>, BodyError> {
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(BodyError::TooLarge);
    }
    let mut buf = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if buf.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(BodyError::TooLarge);
                }
                buf.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(buf),
            Err(e) => return Err(BodyError::Broken(error_chain(&e))),
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
mod tests;
