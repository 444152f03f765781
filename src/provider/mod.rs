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
mod transport;
pub mod wire;

pub use classify::{
    Answer, Body, CallKind, DEFAULT_RETRY_AFTER, MAX_RETRY_AFTER, Sent, classify, parse_retry_after,
};
pub use endpoint::{BaseUrl, BaseUrlError};
pub use outcome::{MAX_MESSAGE_CHARS, Outcome, Scrubber, StopKind};
pub use profile::{Profile, ProfileError, ProfileSpec};
pub use transport::{GATE_CLOSED, Gate, post_json};

use anyhow::Result;
use http::header::{ACCEPT, HeaderName, HeaderValue};
use http::{Method, Uri};
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use transport::{BodyError, Failure, Http, Limits};
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
/// Idle connections kept open to the provider: as many as calls in flight
/// at the highest concurrency, so a busy run does not reconnect.
const IDLE_CONNECTIONS: usize = 256;

/// JSON in, JSON out: the headers of the payout calls.
const JSON: [(HeaderName, &str); 1] = [(ACCEPT, "application/json")];

/// The provider client. Cheap to clone (one shared connection pool).
#[derive(Clone)]
pub struct Client {
    http: Http,
    base: BaseUrl,
    profile: Arc<Profile>,
    scrubber: Scrubber,
    // Parsed once: URL parsing per request was a visible share of the
    // client's CPU at thousands of calls per second.
    initiates: Uri,
    executes: Uri,
    pay: Uri,
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
    /// answers. Redirects are never followed. An https provider is reached
    /// through the proxy `HTTPS_PROXY` (or `ALL_PROXY`) names, unless
    /// `NO_PROXY` lists its host.
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
        let limits = Limits {
            request: REQUEST_TIMEOUT,
            connect: CONNECT_TIMEOUT,
            max_body: MAX_BODY_BYTES,
            idle_per_host: IDLE_CONNECTIONS,
        };
        let proxies = hyper_util::client::proxy::matcher::Matcher::from_env();
        let http = Http::new(Some(auth), &base.join_uri("")?, &proxies, limits);
        Ok(Client {
            initiates: base.join_uri("initiates")?,
            executes: base.join_uri("executes")?,
            pay: base.join_uri("pay")?,
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

    /// The longest one call may take, from the moment it is handed to the
    /// transport to the last byte of its answer, connecting included
    /// ([`REQUEST_TIMEOUT`] unless changed): the deadline a worker's lease
    /// must outlast for the call to leave (`engine::lease`).
    pub fn request_deadline(&self) -> Duration {
        self.http.limits().request
    }

    /// This client with every call's deadline `d` (the tests shorten it).
    pub fn with_request_deadline(mut self, d: Duration) -> Client {
        self.http.set_request_deadline(d);
        self
    }

    /// This client asking `gate` at the last moment before each request
    /// leaves ([`Gate`]); a closed gate sends nothing (`Outcome::NotSent`).
    pub fn with_gate(mut self, gate: Gate) -> Client {
        self.http.set_gate(gate);
        self
    }

    /// `POST /initiates`.
    pub async fn initiate(&self, req: &InitiateRequest) -> Outcome {
        self.exchange(
            &self.initiates,
            &JSON,
            req,
            CallKind::Initiate,
            &Sent::of(req),
        )
        .await
        .outcome
    }

    /// `POST /executes` of the payout `about` describes: only its id is
    /// sent; the answer must be about that payout (its echoed id, amount,
    /// currency and account are checked against `about`).
    pub async fn execute(&self, about: &Sent<'_>) -> Outcome {
        let req = ExecuteRequest {
            transaction_id: about.transaction_id.to_string(),
        };
        self.exchange(&self.executes, &JSON, &req, CallKind::Execute, about)
            .await
            .outcome
    }

    /// `POST /pay`, with the headers the provider names for it.
    pub async fn pay(&self, req: &PayRequest) -> Outcome {
        let headers = [(
            HeaderName::from_static("x-requested-with"),
            "XMLHttpRequest",
        )];
        let sent = Sent {
            transaction_id: &req.transaction_id,
            amount: Some(&req.amount),
            currency: Some(&req.currency),
            account: None,
        };
        self.exchange(&self.pay, &headers, req, CallKind::Pay, &sent)
            .await
            .outcome
    }

    /// One POST of `body` as JSON and its classified answer, with the raw
    /// status and body kept for `probe` (the body as read, within the cap,
    /// not scrubbed).
    async fn exchange<T: Serialize>(
        &self,
        to: &Uri,
        headers: &[(HeaderName, &'static str)],
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
        let reply = match self.http.call(Method::POST, to, headers, Some(body)).await {
            Ok(r) => r,
            Err(failure) => {
                let outcome = match failure {
                    Failure::NotSent(detail) => Outcome::NotSent { detail },
                    // Once bytes may have left, the provider may have acted.
                    Failure::MaybeSent(detail) => Outcome::Ambiguous { detail },
                };
                return Exchange::without_answer(outcome.scrubbed(&self.scrubber));
            }
        };
        let received = SystemTime::now();
        let body = match &reply.body {
            Ok(bytes) => Body::Complete(bytes),
            Err(BodyError::TooLarge) => Body::TooLarge,
            Err(BodyError::Broken(e)) => Body::Unreadable(e),
        };
        let answer = Answer {
            http: reply.http,
            retry_after: reply.retry_after.as_deref(),
            body,
            received,
        };
        let outcome = classify(call, sent, &answer, &self.profile).scrubbed(&self.scrubber);
        Exchange {
            http: Some(reply.http),
            body: reply.body.ok(),
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

#[cfg(test)]
mod tests;
