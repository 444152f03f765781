//! The provider sandbox: an in-memory simulator of the provider's
//! `POST /initiates`, `POST /executes`, `POST /pay` and
//! `GET /status/{id}`, with wallets, idempotent transaction ids, magic test
//! accounts and cards, seeded fault injection (latency, rate limit, 5xx,
//! ambiguous answers), other providers' dialects, a state file and control
//! routes. This file owns the configuration and the library entry points
//! (`serve`, `start`); the `payrun sandbox` command is `cmd::sandbox`. The rules live in
//! the submodules: `state` (the books), `settle` (pending payouts),
//! `fields` (request bodies), `card`, `faults`, `dialect`, `misbehave`,
//! `peak` (the busiest second of calls), `persist` (the state file), `control` (the `/_sandbox/` routes) and
//! `http` (routes, envelope, connection cutting). User documentation:
//! `docs/sandbox.md` and the README's sandbox section.

mod card;
mod control;
mod dialect;
mod faults;
mod fields;
mod http;
mod misbehave;
mod peak;
mod persist;
mod settle;
mod state;

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rust_decimal::Decimal;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use card::{DECLINED_CARD, ENROLLED_CARDS, NOT_ENROLLED_CARD};
pub use dialect::{Dialect, Settlement, codes as dialect_codes};
pub(crate) use faults::check_rate;
pub use misbehave::{Misbehaviour, Mismatch, Outage, REDIRECT_TARGET, Redirect, RedirectOn};
pub use persist::{WalletChange, edit_wallets, read_state};
pub use state::{LedgerEntry, LedgerSnapshot, RequestCounts, magic};

/// The key the sandbox accepts unless told otherwise: `sk_` like real
/// secret keys, and plainly a test key wherever it shows up.
pub const DEFAULT_API_KEY: &str = "sk_sandbox_test";
/// Currencies of the default wallets: the West and Central African CFA
/// francs, cedi, shilling and naira of the provider's markets, plus USD/EUR.
pub const DEFAULT_CURRENCIES: [&str; 7] = ["XOF", "XAF", "GHS", "KES", "NGN", "USD", "EUR"];
/// Opening balance of each default wallet: 10^21. No test run can drain
/// it (a million payouts of 10^12 each take 10^18), and it leaves ten
/// million times as much headroom below `Decimal::MAX` (about 7.9 * 10^28)
/// for card payments credited on top.
pub const DEFAULT_BALANCE: Decimal = Decimal::from_parts(3_735_027_712, 902_409_669, 54, false, 0);
/// Payout methods known by default: the two kinds of recipient account the
/// provider describes, mobile money and bank.
pub const DEFAULT_PAYOUT_METHODS: [&str; 2] = ["momo", "bank"];
/// Card payment methods known by default: one, since `/pay` takes cards only.
pub const DEFAULT_PAYMENT_METHODS: [&str; 1] = ["card"];
/// How long `shutdown` lets open connections finish before giving up on
/// them: a client holding a connection open must not hang a test forever.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Everything a sandbox is started with.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    /// The API key accepted as `Authorization: Bearer <key>`.
    pub api_key: String,
    /// More keys accepted beside it, as a provider gives one merchant
    /// several: the ledger counts each key's requests on its own
    /// (`requestsByKey`), so a test tells which client sent what.
    pub more_api_keys: Vec<String>,
    /// Wallet balances by currency, in the unit of the wire amount.
    pub wallets: BTreeMap<String, Decimal>,
    /// Accepted `payoutMethodId`s.
    pub payout_methods: Vec<String>,
    /// Accepted `payment_method_id`s of `/pay`.
    pub payment_methods: Vec<String>,
    /// When set, `/pay` refuses any other `merchant_id` (403).
    pub merchant_id: Option<String>,
    /// Seed of every random fault.
    pub seed: u64,
    /// Added to every provider call.
    pub latency_ms: u64,
    /// Uniform extra delay in [0, jitter_ms] per call.
    pub jitter_ms: u64,
    /// Provider calls per second across all routes; beyond it, 429.
    pub rate_limit: Option<u32>,
    /// Share of calls answered 500/502/503 before anything is done.
    pub fail_rate: f64,
    /// Share of calls carried out, then answered 503 or cut off.
    pub ambiguous_rate: f64,
    /// How answers are shaped and repeats treated.
    pub dialect: Dialect,
    /// When a pending payout settles (`Dialect::Pending` only).
    pub settlement: Settlement,
    /// Every `/executes` of an initiated or paid payout debits again.
    pub non_idempotent_execute: bool,
    /// Keep the books in this file: loaded at start (its wallets win over
    /// `wallets`), rewritten atomically after every change.
    pub state_file: Option<PathBuf>,
    /// The outage in force at start (changeable via `/_sandbox/outage`).
    pub outage: Outage,
    /// Client-hardening misbehaviours.
    pub misbehaviour: Misbehaviour,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            api_key: DEFAULT_API_KEY.to_owned(),
            more_api_keys: Vec::new(),
            wallets: DEFAULT_CURRENCIES
                .iter()
                .map(|c| ((*c).to_owned(), DEFAULT_BALANCE))
                .collect(),
            payout_methods: DEFAULT_PAYOUT_METHODS.map(str::to_owned).to_vec(),
            payment_methods: DEFAULT_PAYMENT_METHODS.map(str::to_owned).to_vec(),
            merchant_id: None,
            seed: 0,
            latency_ms: 0,
            jitter_ms: 0,
            rate_limit: None,
            fail_rate: 0.0,
            ambiguous_rate: 0.0,
            dialect: Dialect::default(),
            settlement: Settlement::default(),
            non_idempotent_execute: false,
            state_file: None,
            outage: Outage::Off,
            misbehaviour: Misbehaviour::default(),
        }
    }
}

/// Serves until `shutdown` resolves. Takes an already-bound listener so
/// tests use `127.0.0.1:0`.
pub async fn serve(
    listener: TcpListener,
    config: SandboxConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let addr = listener
        .local_addr()
        .context("sandbox listener has no address")?;
    let app = Arc::new(http::App::new(&config, addr)?);
    serve_app(listener, app, shutdown).await
}

async fn serve_app(
    listener: TcpListener,
    app: Arc<http::App>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (stopping_tx, stopping_rx) = oneshot::channel::<()>();
    let signal = async move {
        shutdown.await;
        let _ = stopping_tx.send(());
    };
    let service = http::router(app).into_make_service_with_connect_info::<http::ConnHandle>();
    let server =
        axum::serve(http::SandboxListener(listener), service).with_graceful_shutdown(signal);
    let grace = async move {
        if stopping_rx.await.is_ok() {
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result.context("sandbox server failed"),
        () = grace => {
            tracing::warn!("sandbox: connections still open after the shutdown grace period");
            Ok(())
        }
    }
}

/// A sandbox started in-process by `start`.
#[derive(Debug)]
pub struct Running {
    pub addr: SocketAddr,
    shutdown: oneshot::Sender<()>,
    task: JoinHandle<anyhow::Result<()>>,
    app: Arc<http::App>,
}

/// Binds 127.0.0.1:0, spawns `serve` on the current tokio runtime, returns
/// once it accepts connections. (A bound socket already completes TCP
/// handshakes into its backlog, so callers may connect at once.)
pub async fn start(config: SandboxConfig) -> anyhow::Result<Running> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("cannot bind 127.0.0.1:0 for the sandbox")?;
    let addr = listener.local_addr()?;
    let app = Arc::new(http::App::new(&config, addr)?);
    let (tx, rx) = oneshot::channel::<()>();
    // Dropping `Running` without `shutdown` leaves the server running until
    // the runtime ends, instead of stopping it behind the caller's back.
    let signal = async move {
        if rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let task = tokio::spawn(serve_app(listener, app.clone(), signal));
    Ok(Running {
        addr,
        shutdown: tx,
        task,
        app,
    })
}

impl Running {
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The ledger, read in-process: the same content as
    /// `GET /_sandbox/ledger`.
    pub fn ledger(&self) -> LedgerSnapshot {
        self.app.snapshot()
    }

    /// The ledger's `requests` alone, without copying the books: for
    /// watching a run's progress often.
    pub fn requests(&self) -> RequestCounts {
        self.app.requests()
    }

    /// Stops accepting, lets open requests finish, and waits for the server.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(());
        self.task.await.context("the sandbox task panicked")?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_balance_is_ten_to_the_21() {
        assert_eq!(
            DEFAULT_BALANCE,
            Decimal::from_i128_with_scale(10i128.pow(21), 0)
        );
        assert_eq!(DEFAULT_BALANCE.to_string(), "1000000000000000000000");
    }

    #[test]
    fn defaults() {
        let c = SandboxConfig::default();
        assert_eq!(c.api_key, "sk_sandbox_test");
        assert_eq!(c.wallets.len(), 7);
        assert_eq!(c.payout_methods, ["momo", "bank"]);
        assert_eq!(c.fail_rate, 0.0);
        assert!(c.rate_limit.is_none());
    }
}
