//! The HTTP transport under the provider client: one HTTP/1.1 connection
//! pool (hyper, rustls with the webpki roots for https, a CONNECT tunnel
//! when `HTTPS_PROXY` names one), a request to a URI parsed once, its answer
//! read within the size cap and a deadline, and every transport failure
//! sorted into the one distinction the engine needs: the request was never
//! sent, or it may have reached the provider. Redirects are never followed:
//! nothing here follows anything.
//!
//! Built on hyper directly rather than reqwest (ARCHITECTURE.md,
//! "provider"): reqwest parsed every request's URL twice more
//! (redirect policy and response) and ran it through layers payrun turns
//! off, a seventh of the CPU of a call.

use bytes::Bytes;
use http::header::{AUTHORIZATION, HeaderName, HeaderValue, RETRY_AFTER};
use http::{Method, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client as Pool;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Asked at the last moment before a request is handed to the connection
/// (after everything that may wait: the limiter, the request's encoding,
/// the task's scheduling), with the request's whole deadline: may a request
/// that may take that long leave now? A worker of a shared run answers
/// from its lease (`engine::lease`); `false` sends nothing
/// ([`Failure::NotSent`]).
pub type Gate = std::sync::Arc<dyn Fn(Duration) -> bool + Send + Sync>;

/// What a closed [`Gate`] answers.
pub const GATE_CLOSED: &str =
    "not sent: this worker's lease no longer covers the request's deadline";

/// How long one call may take, and how many connections stay open.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Send to the last byte of the answer.
    pub request: Duration,
    /// To open a connection (TCP, and the proxy's tunnel); past it the
    /// request was never sent.
    pub connect: Duration,
    /// Largest answer body read.
    pub max_body: usize,
    pub idle_per_host: usize,
}

/// A transport failure: whether the provider may have seen the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No connection could be made: nothing left payrun.
    NotSent(String),
    /// Bytes may have reached the provider (a reset, a closed connection,
    /// no answer in time): it may have acted on them.
    MaybeSent(String),
}

/// Why an answer's body was not read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    TooLarge,
    Broken(String),
}

/// An answer as received.
#[derive(Debug)]
pub struct Reply {
    pub http: u16,
    pub retry_after: Option<String>,
    pub body: Result<Vec<u8>, BodyError>,
}

/// The connection pool, with the API key's header (none for the
/// `on_finish` hook, [`post_json`]). Cheap to clone.
#[derive(Clone)]
pub struct Http {
    pool: Pool<HttpsConnector<Dial>, Full<Bytes>>,
    auth: Option<HeaderValue>,
    limits: Limits,
    gate: Option<Gate>,
}

impl Http {
    /// A pool for `base`'s host. `proxies` decides whether an https
    /// provider is reached through a proxy's tunnel (`Matcher::from_env`
    /// in production: `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`); a plain-http
    /// provider is only ever on loopback (`endpoint`), never proxied.
    pub fn new(auth: Option<HeaderValue>, base: &Uri, proxies: &Matcher, limits: Limits) -> Http {
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(limits.connect));
        let dial = match proxy_for(proxies, base) {
            Some((proxy, auth)) => {
                let tunnel = Tunnel::new(proxy, tcp);
                Dial::Tunnel(match auth {
                    Some(a) => tunnel.with_auth(a),
                    None => tunnel,
                })
            }
            None => Dial::Direct(tcp),
        };
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(dial);
        let pool = Pool::builder(TokioExecutor::new())
            .pool_max_idle_per_host(limits.idle_per_host)
            .build(https);
        Http {
            pool,
            auth,
            limits,
            gate: None,
        }
    }

    /// Every request from now on asks `gate` first.
    pub fn set_gate(&mut self, gate: Gate) {
        self.gate = Some(gate);
    }

    /// The deadline of every request: from the call to the last byte of
    /// its answer, connecting included.
    pub fn set_request_deadline(&mut self, d: Duration) {
        self.limits.request = d;
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Sends one request and reads its answer. `body` is JSON when given.
    pub async fn call(
        &self,
        method: Method,
        uri: &Uri,
        headers: &[(HeaderName, &'static str)],
        body: Option<Vec<u8>>,
    ) -> Result<Reply, Failure> {
        let deadline = Instant::now() + self.limits.request;
        let mut req = Request::builder().method(method).uri(uri.clone());
        let h = req.headers_mut().expect("a request under construction");
        if let Some(auth) = &self.auth {
            h.insert(AUTHORIZATION, auth.clone());
        }
        for (name, value) in headers {
            h.insert(name.clone(), HeaderValue::from_static(value));
        }
        if body.is_some() {
            h.insert(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
        }
        let req = req
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| Failure::NotSent(format!("cannot build the request: {e}")))?;
        // The last moment before the request is handed to the connection:
        // the deadline is already running, so the gate answers for the
        // whole of it. Polling `sending` below hands it over at once.
        if let Some(gate) = &self.gate
            && !gate(deadline.saturating_duration_since(Instant::now()))
        {
            return Err(Failure::NotSent(GATE_CLOSED.to_string()));
        }
        if crate::fault::severed() {
            return Err(Failure::NotSent(crate::fault::SEVERED.to_string()));
        }
        let sending = self.pool.request(req);
        let resp = match tokio::time::timeout_at(deadline, sending).await {
            Ok(Ok(resp)) => resp,
            Ok(Err(e)) if e.is_connect() => return Err(Failure::NotSent(failed(uri, &e))),
            Ok(Err(e)) => return Err(Failure::MaybeSent(failed(uri, &e))),
            Err(_) => return Err(Failure::MaybeSent(late(uri, self.limits.request))),
        };
        let http = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = match tokio::time::timeout_at(
            deadline,
            read_capped(resp.into_body(), self.limits.max_body),
        )
        .await
        {
            Ok(read) => read,
            Err(_) => Err(BodyError::Broken(late(uri, self.limits.request))),
        };
        Ok(Reply {
            http,
            retry_after,
            body,
        })
    }
}

/// One JSON POST to `url` with no API key, within `limit` from the call to
/// the answer's status (the `on_finish` hook): the same transport as the
/// provider's calls — rustls, the `HTTPS_PROXY` tunnel for https, no
/// redirects followed. Returns the answer's HTTP status; its body is read
/// up to 64 KiB and dropped.
pub async fn post_json(url: &str, body: Vec<u8>, limit: Duration) -> Result<u16, String> {
    let uri: Uri = url::Url::parse(url)
        .map_err(|e| format!("{e}"))?
        .as_str()
        .parse()
        .map_err(|e: http::uri::InvalidUri| e.to_string())?;
    let limits = Limits {
        request: limit,
        connect: limit,
        max_body: 64 * 1024,
        idle_per_host: 0,
    };
    let http = Http::new(None, &uri, &Matcher::from_env(), limits);
    match http.call(Method::POST, &uri, &[], Some(body)).await {
        Ok(reply) => Ok(reply.http),
        Err(Failure::NotSent(e) | Failure::MaybeSent(e)) => Err(e),
    }
}

/// The proxy an https `base` is reached through, with its credentials.
fn proxy_for(proxies: &Matcher, base: &Uri) -> Option<(Uri, Option<HeaderValue>)> {
    if base.scheme() != Some(&http::uri::Scheme::HTTPS) {
        return None;
    }
    let hit = proxies.intercept(base)?;
    Some((hit.uri().clone(), hit.basic_auth().cloned()))
}

/// Reads the body frame by frame, stopping at `max` bytes: an endless or
/// hostile body cannot grow memory.
async fn read_capped(mut body: hyper::body::Incoming, max: usize) -> Result<Vec<u8>, BodyError> {
    if body.size_hint().lower() > max as u64 {
        return Err(BodyError::TooLarge);
    }
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| BodyError::Broken(error_chain(&e)))?;
        if let Some(data) = frame.data_ref() {
            if buf.len() + data.len() > max {
                return Err(BodyError::TooLarge);
            }
            buf.extend_from_slice(data);
        }
    }
    Ok(buf)
}

fn failed(uri: &Uri, e: &dyn std::error::Error) -> String {
    format!("error sending request for url ({uri}): {}", error_chain(e))
}

fn late(uri: &Uri, limit: Duration) -> String {
    format!(
        "error sending request for url ({uri}): no complete answer within {} s",
        limit.as_secs()
    )
}

/// An error and its causes, one line.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(cause) = src {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        src = cause.source();
    }
    s
}

/// How a connection is opened: straight to the provider, or through a
/// proxy's CONNECT tunnel (TLS then runs inside it, end to end).
#[derive(Clone)]
pub enum Dial {
    Direct(HttpConnector),
    Tunnel(Tunnel<HttpConnector>),
}

type Dialing = Pin<Box<dyn Future<Output = Result<TokioIo<TcpStream>, BoxError>> + Send>>;

impl tower_service::Service<Uri> for Dial {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = Dialing;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        match self {
            Dial::Direct(c) => c.poll_ready(cx).map_err(Into::into),
            Dial::Tunnel(t) => t.poll_ready(cx).map_err(Into::into),
        }
    }

    fn call(&mut self, dst: Uri) -> Dialing {
        match self {
            Dial::Direct(c) => {
                let f = c.call(dst);
                Box::pin(async move { f.await.map_err(Into::into) })
            }
            Dial::Tunnel(t) => {
                let f = t.call(dst);
                Box::pin(async move { f.await.map_err(Into::into) })
            }
        }
    }
}

#[cfg(test)]
mod tests;
