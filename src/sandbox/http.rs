//! The sandbox's HTTP face: the routes, the state every handler shares
//! (`App`: keys, books, faults, counters), and the order in which faults
//! strike. The envelope and refusals are in `reply`, the checks before the
//! books in `checks`, each call's business in `answer`, the sandbox's own
//! pages in `pages`, and the listener whose connections can be cut without
//! an answer in `listener`.
//!
//! A provider call goes: count it; wait the planned latency; a pause
//! (429); rate limit (429); an outage (5xx, cut or 401, nothing done);
//! injected failure (5xx, nothing done); misbehaviours (endless body,
//! redirect; nothing done); auth (401); headers (400/406/415); body
//! (400/413/422); business rules (the ledger, atomic, saved to the state
//! file before answering); then, if the call is to be ambiguous, answer
//! 503 or cut the connection. The dialect reshapes the answer last.

mod answer;
mod checks;
mod listener;
mod pages;
mod reply;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::Router;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};

use super::SandboxConfig;
use super::dialect::{self, Dialect, Rules};
use super::faults::{Ambiguity, Faults};
use super::misbehave::{self, Misbehaviour, Outage, RedirectOn};
use super::peak::PeakRate;
use super::persist;
use super::state::{self, Ledger, LedgerSnapshot, RequestCounts};
use crate::provider::wire::codes;
use answer::answer;
pub(crate) use checks::check_auth;
use checks::{bearer, constant_time_eq, unauthorized};
pub(crate) use listener::{ConnHandle, SandboxListener};
use pages::{ledger, three_ds_page, three_ds_submit};
pub(crate) use reply::{Refused, error};
use reply::{answer_response, method_not_allowed, not_found, rate_limited, server_error};

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

#[cfg(test)]
mod tests {
    use super::checks::{accepts_json, is_json};
    use super::*;
    use axum::http::HeaderValue;

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
