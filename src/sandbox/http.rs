//! The sandbox's HTTP face: routes, the envelope on every provider answer,
//! authentication and header checks, the order in which faults strike, and
//! the listener whose connections can be cut without an answer.
//!
//! A provider call goes: count it; wait the planned latency; a pause
//! (429); rate limit (429); an outage (5xx, cut or 401, nothing done);
//! injected failure (5xx, nothing done); misbehaviours (endless body,
//! redirect; nothing done); auth (401); headers (400/406/415); body
//! (400/413/422); business rules (the ledger, atomic, saved to the state
//! file before answering); then, if the call is to be ambiguous, answer
//! 503 or cut the connection. The dialect reshapes the answer last.

use std::collections::HashSet;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::IncomingStream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use super::SandboxConfig;
use super::card;
use super::dialect::{self, Dialect, Rules};
use super::faults::{Ambiguity, Faults};
use super::fields::{self, BodyError, FieldError};
use super::misbehave::{self, Misbehaviour, Outage, RedirectOn};
use super::peak::PeakRate;
use super::persist;
use super::state::{self, Answer, Ledger, LedgerSnapshot, RequestCounts};
use crate::provider::wire::{Envelope, codes};

/// Largest request body read. A payout body is well under 2 KiB; this
/// leaves room for long descriptions and refuses abuse early.
const MAX_BODY: usize = 64 * 1024;
/// Pause after an accept error that is not about one connection (such as
/// running out of file descriptors), so the loop does not spin while
/// closing connections free some.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// The provider calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Initiate,
    Execute,
    Pay,
    /// `GET /status/{id}`; the id travels in a `StatusId` extension.
    Status,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Initiate => "initiates",
            Call::Execute => "executes",
            Call::Pay => "pay",
            Call::Status => "status",
        }
    }
}

/// The transaction id of a status call.
#[derive(Debug, Clone)]
struct StatusId(String);

/// Everything a request handler needs.
pub(crate) struct App {
    /// The keys accepted, the main one first. Compared in constant time;
    /// never logged.
    api_keys: Vec<Vec<u8>>,
    /// Provider calls made with each key, in the same order.
    by_key: Vec<AtomicU64>,
    payout_methods: HashSet<String>,
    payment_methods: HashSet<String>,
    merchant_id: Option<String>,
    /// Where we listen: the base of redirect URLs when a request has no
    /// usable `Host` header.
    local_addr: SocketAddr,
    ledger: Mutex<Ledger>,
    /// Where the books are saved after every change.
    state_file: Option<PathBuf>,
    pub(crate) faults: Faults,
    pub(crate) dialect: Dialect,
    misbehaviour: Misbehaviour,
    pub(crate) outage: Mutex<Outage>,
    /// Until then every provider call answers 429 (`/_sandbox/pause`).
    pub(crate) paused_until: Mutex<Option<Instant>>,
    initiates: AtomicU64,
    executes: AtomicU64,
    pays: AtomicU64,
    statuses: AtomicU64,
    rate_limited: AtomicU64,
    pub(crate) redirect_hits: AtomicU64,
    /// The busiest second of provider calls.
    peak: PeakRate,
}

impl std::fmt::Debug for App {
    // The API key must never reach a log line through `{:?}`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("App { .. }")
    }
}

impl App {
    pub(crate) fn new(config: &SandboxConfig, local_addr: SocketAddr) -> anyhow::Result<App> {
        let keys: Vec<Vec<u8>> = std::iter::once(&config.api_key)
            .chain(&config.more_api_keys)
            .map(|k| k.as_bytes().to_vec())
            .collect();
        if keys.iter().any(Vec::is_empty) {
            anyhow::bail!("the sandbox API key must not be empty");
        }
        for currency in config.wallets.keys() {
            if !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())) {
                anyhow::bail!("wallet currency {currency:?} is not a three-letter ISO 4217 code");
            }
        }
        if let Some((c, b)) = config.wallets.iter().find(|(_, b)| b.is_sign_negative()) {
            anyhow::bail!("wallet {c} has a negative balance {b}");
        }
        if let Some(r) = config.misbehaviour.redirect {
            r.check()?;
        }
        let rules = Rules::new(
            config.dialect,
            config.settlement,
            config.non_idempotent_execute,
        );
        let ledger = match &config.state_file {
            Some(path) => persist::open(path, &config.wallets, rules)?,
            None => Ledger::new(&config.wallets, rules)?,
        };
        Ok(App {
            by_key: keys.iter().map(|_| AtomicU64::new(0)).collect(),
            api_keys: keys,
            payout_methods: config.payout_methods.iter().cloned().collect(),
            payment_methods: config.payment_methods.iter().cloned().collect(),
            merchant_id: config.merchant_id.clone(),
            local_addr,
            ledger: Mutex::new(ledger),
            state_file: config.state_file.clone(),
            dialect: config.dialect,
            misbehaviour: config.misbehaviour.clone(),
            outage: Mutex::new(config.outage),
            paused_until: Mutex::new(None),
            statuses: AtomicU64::new(0),
            rate_limited: AtomicU64::new(0),
            redirect_hits: AtomicU64::new(0),
            peak: PeakRate::default(),
            faults: Faults::new(
                config.seed,
                config.latency_ms,
                config.jitter_ms,
                config.rate_limit,
                config.fail_rate,
                config.ambiguous_rate,
            )?,
            initiates: AtomicU64::new(0),
            executes: AtomicU64::new(0),
            pays: AtomicU64::new(0),
        })
    }

    /// The ledger lock. A panic while holding it cannot leave the books
    /// half-written (each rule mutates only after its checks), so a
    /// poisoned lock is still usable.
    pub(crate) fn ledger(&self) -> MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Saves the books if they changed, before the answer leaves (called
    /// with the ledger lock held, so saves are in the order of changes).
    /// A failed save answers 500: the change happened in memory but may
    /// not survive, which is what a provider's 500 means too.
    pub(crate) fn commit(&self, ledger: &mut Ledger) -> Result<(), Refused> {
        if !ledger.take_dirty() {
            return Ok(());
        }
        let Some(path) = &self.state_file else {
            return Ok(());
        };
        persist::save(path, ledger).map_err(|e| {
            tracing::error!("sandbox: {e:#}");
            Box::new(error(
                StatusCode::INTERNAL_SERVER_ERROR,
                codes::INTERNAL_ERROR,
                "the sandbox could not save its state",
            ))
        })
    }

    fn count(&self, call: Call, headers: &HeaderMap) {
        if let Some(i) = bearer(headers).and_then(|t| self.key_index(t)) {
            self.by_key[i].fetch_add(1, Ordering::Relaxed);
        }
        let counter = match call {
            Call::Initiate => &self.initiates,
            Call::Execute => &self.executes,
            Call::Pay => &self.pays,
            Call::Status => &self.statuses,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.peak.record();
    }

    /// The request counters alone: cheap, the books are not read.
    pub(crate) fn requests(&self) -> RequestCounts {
        let initiates = self.initiates.load(Ordering::Relaxed);
        let executes = self.executes.load(Ordering::Relaxed);
        let pay = self.pays.load(Ordering::Relaxed);
        let status = self.statuses.load(Ordering::Relaxed);
        RequestCounts {
            initiates,
            executes,
            pay,
            status,
            total: initiates + executes + pay + status,
            rate_limited: self.rate_limited.load(Ordering::Relaxed),
            redirect_hits: self.redirect_hits.load(Ordering::Relaxed),
            peak_per_second: self.peak.peak(),
        }
    }

    /// Which accepted key `token` is, compared in constant time.
    fn key_index(&self, token: &[u8]) -> Option<usize> {
        // Every key compared, so the time taken does not say which matched.
        self.api_keys
            .iter()
            .enumerate()
            .fold(None, |found, (i, k)| {
                if constant_time_eq(token, k) {
                    Some(i)
                } else {
                    found
                }
            })
    }

    pub(crate) fn snapshot(&self) -> LedgerSnapshot {
        let requests = self.requests();
        let mut ledger = self.ledger();
        let mut snapshot = ledger.snapshot(requests);
        snapshot.requests_by_key = self
            .api_keys
            .iter()
            .zip(&self.by_key)
            .map(|(k, n)| (state::key_label(k), n.load(Ordering::Relaxed)))
            .collect();
        // A look may settle pending payouts; keep the file in step.
        let _ = self.commit(&mut ledger);
        snapshot
    }

    /// Seconds left of a `/_sandbox/pause`, if one is in force.
    fn paused(&self) -> Option<u64> {
        let mut until = self.paused_until.lock().unwrap_or_else(|e| e.into_inner());
        let left = until.map(|u| u.saturating_duration_since(Instant::now()))?;
        if left.is_zero() {
            *until = None;
            return None;
        }
        Some(left.as_secs() + u64::from(left.subsec_nanos() > 0))
    }

    fn current_outage(&self) -> Outage {
        *self.outage.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The routes. Unknown paths and wrong methods answer with the envelope.
pub(crate) fn router(app: Arc<App>) -> Router {
    let dialect = app.dialect;
    let router = Router::new()
        .route(
            "/initiates",
            post(|State(app), req| provider_call(app, Call::Initiate, req)),
        )
        .route(
            "/executes",
            post(|State(app), req| provider_call(app, Call::Execute, req)),
        )
        .route(
            "/pay",
            post(|State(app), req| provider_call(app, Call::Pay, req)),
        )
        .route(
            "/status/{id}",
            get(
                |State(app), Path(id): Path<String>, mut req: Request| async move {
                    req.extensions_mut().insert(StatusId(id));
                    provider_call(app, Call::Status, req).await
                },
            ),
        )
        .route("/_sandbox/ledger", get(ledger))
        .route(
            "/_sandbox/3ds/{id}",
            get(three_ds_page).post(three_ds_submit),
        )
        .merge(super::control::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    // The reshaping layer costs a little on every call: only when a
    // dialect reshapes or a misbehaviour marks answers to pass raw.
    let m = &app.misbehaviour;
    let router = if dialect::reshapes(dialect) || m.redirect.is_some() || m.endless_body {
        router.layer(axum::middleware::from_fn(move |req, next| {
            dialect::reshape(dialect, req, next)
        }))
    } else {
        router
    };
    router.with_state(app)
}

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

fn answer_response(a: Answer) -> Response {
    envelope(a.status, a.code, &a.message, a.data)
}

pub(crate) fn error(status: StatusCode, code: &str, message: &str) -> Response {
    envelope(status, code, message, None)
}

fn server_error(status: StatusCode) -> Response {
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

fn body_error(e: BodyError) -> Refused {
    Box::new(match e {
        BodyError::Malformed(m) => error(StatusCode::BAD_REQUEST, codes::MALFORMED_JSON, &m),
        BodyError::Invalid(list) => validation_error(&list),
    })
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, codes::NOT_FOUND, "no such route")
}

async fn method_not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        codes::METHOD_NOT_ALLOWED,
        "method not allowed on this route",
    )
}

/// A refusal given before anything was done (boxed: refusals are the
/// rare path and a `Response` is large).
pub(crate) type Refused = Box<Response>;

/// Byte comparison whose time does not depend on where the inputs differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A 401 answer; with `echo_authorization` it quotes the header received,
/// as some providers do (a client must never print it).
fn unauthorized(app: &App, headers: &HeaderMap, message: &str) -> Refused {
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
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = headers.get(header::AUTHORIZATION)?.as_bytes();
    match value.split_at_checked(7) {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case(b"bearer ") => Some(token),
        _ => None,
    }
}

/// Whether a media type (parameters ignored) is JSON.
fn is_json(value: &HeaderValue) -> bool {
    value
        .to_str()
        .ok()
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether an `Accept` header admits JSON.
fn accepts_json(value: &HeaderValue) -> bool {
    let Ok(v) = value.to_str() else { return false };
    v.split(',').any(|item| {
        let t = item.split(';').next().unwrap_or("").trim();
        ["application/json", "application/*", "*/*"]
            .iter()
            .any(|ok| t.eq_ignore_ascii_case(ok))
    })
}

/// The headers `provider-api.md` names for each call.
fn check_headers(call: Call, headers: &HeaderMap) -> Result<(), Refused> {
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

async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, Refused> {
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

/// The base of URLs handed to clients: the `Host` they reached us by, or
/// our own address.
fn base_url(headers: &HeaderMap, local_addr: SocketAddr) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .map(str::to_owned)
        .unwrap_or_else(|| local_addr.to_string());
    format!("http://{host}")
}

/// Runs one provider call through faults, checks and the ledger.
async fn provider_call(app: Arc<App>, call: Call, req: Request) -> Response {
    app.count(call, req.headers());
    let plan = app.faults.plan();
    if !plan.delay.is_zero() {
        tokio::time::sleep(plan.delay).await;
    }
    if let Some(secs) = app.paused() {
        return rate_limited(&app, call, secs);
    }
    if let Err(secs) = app.faults.admit() {
        return rate_limited(&app, call, secs);
    }
    let cut = req
        .extensions()
        .get::<ConnectInfo<ConnHandle>>()
        .map(|c| c.0.clone());
    let outage = match app.current_outage() {
        Outage::Off => None,
        Outage::Status500 => Some(StatusCode::INTERNAL_SERVER_ERROR),
        Outage::Status502 => Some(StatusCode::BAD_GATEWAY),
        Outage::Status503 => Some(StatusCode::SERVICE_UNAVAILABLE),
        Outage::Unauthorized => {
            return *unauthorized(&app, req.headers(), "the API key was revoked");
        }
        Outage::Cut => {
            // The 503 is never delivered: the connection refuses writes.
            if let Some(handle) = &cut {
                handle.cut();
            }
            Some(StatusCode::SERVICE_UNAVAILABLE)
        }
    };
    if let Some(status) = outage {
        return server_error(status);
    }
    if let Some(status) = plan.fail {
        tracing::debug!(
            call = call.name(),
            status = status.as_u16(),
            "sandbox: injected failure"
        );
        return server_error(status);
    }
    if app.misbehaviour.endless_body {
        return misbehave::endless_response();
    }
    if let Some(r) = app.misbehaviour.redirect {
        let applies = matches!(
            (call, r.on),
            (Call::Execute, RedirectOn::Executes | RedirectOn::Both)
                | (Call::Initiate, RedirectOn::Initiates | RedirectOn::Both)
        );
        if applies {
            return r.response(&base_url(req.headers(), app.local_addr));
        }
    }
    let status_id = req.extensions().get::<StatusId>().map(|s| s.0.clone());
    let (parts, body) = req.into_parts();
    let answer = match answer(&app, call, &parts.headers, body, status_id).await {
        Ok(a) => a,
        Err(response) => {
            tracing::debug!(
                call = call.name(),
                status = response.status().as_u16(),
                "sandbox: refused"
            );
            return *response;
        }
    };
    let status = answer.status.as_u16();
    let code = answer.code;
    match answer.ambiguity.or(plan.ambiguous) {
        None => {
            tracing::debug!(call = call.name(), status, code, "sandbox: answered");
            answer_response(answer)
        }
        Some(Ambiguity::Unavailable) => {
            tracing::debug!(
                call = call.name(),
                status,
                code,
                "sandbox: done, answering 503"
            );
            server_error(StatusCode::SERVICE_UNAVAILABLE)
        }
        Some(Ambiguity::Cut) => {
            tracing::debug!(
                call = call.name(),
                status,
                code,
                "sandbox: done, cutting the connection"
            );
            match cut {
                Some(handle) => handle.cut(),
                // Only reachable when served without our listener.
                None => return server_error(StatusCode::SERVICE_UNAVAILABLE),
            }
            // Never delivered: the connection refuses every write from now.
            server_error(StatusCode::SERVICE_UNAVAILABLE)
        }
    }
}

/// A 429 with `Retry-After`, counted.
fn rate_limited(app: &App, call: Call, secs: u64) -> Response {
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

/// Checks and carries out one call. `Err` is a refusal that changed
/// nothing (or, for a failed state save, a 500).
async fn answer(
    app: &App,
    call: Call,
    headers: &HeaderMap,
    body: Body,
    status_id: Option<String>,
) -> Result<Answer, Refused> {
    check_auth(app, headers)?;
    check_headers(call, headers)?;
    let bytes = read_body(headers, body).await?;
    match call {
        Call::Initiate => {
            let req = fields::initiate(&bytes).map_err(body_error)?;
            if state::always_500(&req.request.account_id) {
                return Ok(Answer::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    codes::INTERNAL_ERROR,
                    "internal error (magic account ...500)",
                ));
            }
            if state::initiate_refused(&req.request.account_id) {
                return Ok(Answer::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    codes::INVALID_ACCOUNT,
                    "the recipient account is invalid",
                ));
            }
            if !app.payout_methods.contains(&req.request.payout_method_id) {
                return Ok(Answer::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    codes::INVALID_PAYOUT_METHOD,
                    "unknown payoutMethodId",
                ));
            }
            let mut ledger = app.ledger();
            let Some(wallet) = ledger.wallet(&req.request.currency) else {
                return Ok(no_wallet(&req.request.currency));
            };
            let mut a = ledger.initiate(&req, wallet);
            app.commit(&mut ledger)?;
            if let (Some(what), Some(data)) = (app.misbehaviour.initiate_mismatch, a.data.as_mut())
            {
                misbehave::mismatch(data, what);
            }
            Ok(a)
        }
        Call::Execute => {
            let req = fields::execute(&bytes).map_err(body_error)?;
            let mut ledger = app.ledger();
            let a = ledger.execute(&req.transaction_id);
            app.commit(&mut ledger)?;
            Ok(a)
        }
        Call::Status => {
            let mut ledger = app.ledger();
            let a = ledger.status(status_id.as_deref().unwrap_or_default());
            app.commit(&mut ledger)?;
            Ok(a)
        }
        Call::Pay => {
            let req = fields::pay(&bytes, card::current_year_month()).map_err(body_error)?;
            if app
                .merchant_id
                .as_ref()
                .is_some_and(|m| *m != req.merchant_id)
            {
                return Ok(Answer::new(
                    StatusCode::FORBIDDEN,
                    codes::INVALID_MERCHANT,
                    "merchant_id does not belong to this API key",
                ));
            }
            if !app.payment_methods.contains(&req.payment_method_id) {
                return Ok(Answer::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    codes::INVALID_PAYMENT_METHOD,
                    "unknown payment_method_id",
                ));
            }
            match req.enrolment {
                card::Enrolment::Enrolled => {}
                card::Enrolment::NotEnrolled => {
                    return Ok(Answer::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        codes::CARD_NOT_3DS_ENROLLED,
                        "only 3-D Secure enrolled cards are accepted",
                    ));
                }
                card::Enrolment::Declined => {
                    return Ok(Answer::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        codes::CARD_DECLINED,
                        "the issuer declined the card",
                    ));
                }
            }
            let base = base_url(headers, app.local_addr);
            let mut ledger = app.ledger();
            let Some(wallet) = ledger.wallet(&req.currency) else {
                return Ok(no_wallet(&req.currency));
            };
            let a = ledger.pay(&req, wallet, &base);
            app.commit(&mut ledger)?;
            Ok(a)
        }
    }
}

fn no_wallet(currency: &str) -> Answer {
    Answer::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        codes::CURRENCY_WALLET_MISMATCH,
        format!("the merchant has no {currency} wallet"),
    )
}

/// `GET /_sandbox/ledger`: sandbox-only, no authentication, no faults.
async fn ledger(State(app): State<Arc<App>>) -> Response {
    let snapshot = app.snapshot();
    let bytes = serde_json::to_vec(&snapshot).unwrap_or_default();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

fn page_for(id: &str, view: Option<state::CardView>) -> Response {
    match view {
        Some(v) => Html(card::three_ds_page(&card::PageView {
            transaction_id: id,
            amount: v.amount.to_string(),
            currency: &v.currency,
            masked_card: &v.masked_card,
            status: v.status,
        }))
        .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Html("<!doctype html>\n<p>No card payment with this transaction id.</p>\n"),
        )
            .into_response(),
    }
}

/// `GET /_sandbox/3ds/{id}`: the issuer's challenge page (HTML, for a
/// browser; no authentication, as the payer holds no API key).
async fn three_ds_page(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    let view = app.ledger().card(&id);
    page_for(&id, view)
}

/// `POST /_sandbox/3ds/{id}` with form field `action=approve|decline`.
async fn three_ds_submit(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let action = std::str::from_utf8(&body).ok().and_then(|form| {
        form.split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == "action")
            .map(|(_, v)| v.to_owned())
    });
    let approve = match action.as_deref() {
        Some("approve") => true,
        Some("decline") => false,
        _ => {
            return (
                StatusCode::BAD_REQUEST,
                Html("<!doctype html>\n<p>Send action=approve or action=decline.</p>\n"),
            )
                .into_response();
        }
    };
    let view = {
        let mut ledger = app.ledger();
        let view = ledger.complete_3ds(&id, approve);
        if let Err(r) = app.commit(&mut ledger) {
            return *r;
        }
        view
    };
    page_for(&id, view)
}

/// Lets a handler cut its own connection: once cut, every read and write
/// on it fails, so hyper drops it without sending a byte of the answer.
#[derive(Debug, Clone)]
pub(crate) struct ConnHandle(Arc<AtomicBool>);

impl ConnHandle {
    fn cut(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Connected<IncomingStream<'_, SandboxListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, SandboxListener>) -> Self {
        ConnHandle(stream.io().cut.clone())
    }
}

/// A TCP stream the sandbox can cut from inside a handler.
pub(crate) struct CuttableStream {
    inner: TcpStream,
    cut: Arc<AtomicBool>,
}

impl CuttableStream {
    fn is_cut(&self) -> bool {
        self.cut.load(Ordering::Acquire)
    }
}

fn cut_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection cut by sandbox fault",
    )
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The TCP listener behind `serve`, handing out cuttable streams.
pub(crate) struct SandboxListener(pub(crate) TcpListener);

impl axum::serve::Listener for SandboxListener {
    type Io = CuttableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    // Small answers should leave at once, not wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    let io = CuttableStream {
                        inner: stream,
                        cut: Arc::new(AtomicBool::new(false)),
                    };
                    return (io, addr);
                }
                Err(e) => {
                    let per_connection = matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                    );
                    if !per_connection {
                        tracing::error!("sandbox: accept failed: {e}");
                        tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    }
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn media_types() {
        assert!(is_json(&HeaderValue::from_static("application/json")));
        assert!(is_json(&HeaderValue::from_static(
            "Application/JSON; charset=utf-8"
        )));
        assert!(!is_json(&HeaderValue::from_static("text/plain")));
        assert!(accepts_json(&HeaderValue::from_static("application/json")));
        assert!(accepts_json(&HeaderValue::from_static(
            "text/html, */*;q=0.1"
        )));
        assert!(!accepts_json(&HeaderValue::from_static("text/html")));
    }

    #[test]
    fn every_key_is_accepted_and_counted_on_its_own() {
        let config = SandboxConfig {
            more_api_keys: vec!["sk_worker_b002".into()],
            ..SandboxConfig::default()
        };
        let app = App::new(&config, ([127, 0, 0, 1], 1).into()).unwrap();
        let with = |key: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, HeaderValue::from_static(key));
            h
        };
        for h in [
            with("Bearer sk_sandbox_test"),
            with("Bearer sk_worker_b002"),
        ] {
            assert!(check_auth(&app, &h).is_ok());
        }
        assert!(check_auth(&app, &with("Bearer sk_worker_b003")).is_err());
        app.count(Call::Initiate, &with("Bearer sk_worker_b002"));
        app.count(Call::Execute, &with("Bearer sk_worker_b002"));
        app.count(Call::Execute, &with("Bearer sk_sandbox_test"));
        app.count(Call::Execute, &with("Bearer nobody"));
        let ledger = app.snapshot();
        assert_eq!(ledger.requests_with_key("sk_worker_b002"), 2);
        assert_eq!(ledger.requests_with_key("sk_sandbox_test"), 1);
        assert_eq!(ledger.requests.total, 4);
        // Keys are shown by their last four characters only.
        assert!(
            ledger
                .requests_by_key
                .keys()
                .all(|k| k.chars().count() == 5)
        );
    }

    #[test]
    fn auth_header_forms() {
        let app = App::new(&SandboxConfig::default(), ([127, 0, 0, 1], 1).into()).unwrap();
        let mut h = HeaderMap::new();
        assert!(check_auth(&app, &h).is_err());
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk_sandbox_test"),
        );
        assert!(check_auth(&app, &h).is_ok());
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer sk_sandbox_test"),
        );
        assert!(check_auth(&app, &h).is_ok());
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Basic sk_sandbox_test"),
        );
        assert!(check_auth(&app, &h).is_err());
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk_sandbox_tesT"),
        );
        assert!(check_auth(&app, &h).is_err());
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer"));
        assert!(check_auth(&app, &h).is_err());
    }

    #[test]
    fn base_url_comes_from_a_sane_host() {
        let local: SocketAddr = ([127, 0, 0, 1], 9).into();
        let mut h = HeaderMap::new();
        assert_eq!(base_url(&h, local), "http://127.0.0.1:9");
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:4567"));
        assert_eq!(base_url(&h, local), "http://127.0.0.1:4567");
        h.insert(header::HOST, HeaderValue::from_static("evil/path?x"));
        assert_eq!(base_url(&h, local), "http://127.0.0.1:9");
    }
}
