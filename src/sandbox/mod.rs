//! The provider sandbox: an in-memory simulator of the provider's
//! `POST /initiates`, `POST /executes`, `POST /pay` and
//! `GET /status/{id}`, with wallets, idempotent transaction ids, magic test
//! accounts and cards, seeded fault injection (latency, rate limit, 5xx,
//! ambiguous answers), other providers' dialects, a state file and control
//! routes. This file owns the configuration, the library entry points
//! (`serve`, `start`) and the `payrun sandbox` command; the rules live in
//! the submodules: `state` (the books), `settle` (pending payouts),
//! `fields` (request bodies), `card`, `faults`, `dialect`, `misbehave`,
//! `persist` (the state file), `control` (the `/_sandbox/` routes) and
//! `http` (routes, envelope, connection cutting). User documentation:
//! `docs/sandbox.md` and the README's sandbox section.

mod card;
mod control;
mod dialect;
mod faults;
mod fields;
mod http;
mod misbehave;
mod persist;
mod settle;
mod state;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write;
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
pub use misbehave::{Misbehaviour, Mismatch, Outage, REDIRECT_TARGET, Redirect, RedirectOn};
pub use persist::read_state;
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
    /// The one API key accepted as `Authorization: Bearer <key>`.
    pub api_key: String,
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

    /// Stops accepting, lets open requests finish, and waits for the server.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(());
        self.task.await.context("the sandbox task panicked")?
    }
}

/// `payrun sandbox` flags.
#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// The API key accepted as `Authorization: Bearer <key>`.
    #[arg(long, env = "PAYRUN_SANDBOX_API_KEY", default_value = DEFAULT_API_KEY, hide_env_values = true)]
    pub api_key: String,
    /// A wallet and its balance, `CUR=AMOUNT` (repeatable). When given, only
    /// these wallets exist; otherwise XOF, XAF, GHS, KES, NGN, USD and EUR
    /// with 10^21 each.
    #[arg(long = "wallet", value_name = "CUR=AMOUNT", value_parser = parse_wallet)]
    pub wallets: Vec<(String, Decimal)>,
    /// An accepted payout method id (repeatable; default `momo` and `bank`).
    #[arg(long = "payout-method", value_name = "ID")]
    pub payout_methods: Vec<String>,
    /// An accepted card payment method id (repeatable; default `card`).
    #[arg(long = "payment-method", value_name = "ID")]
    pub payment_methods: Vec<String>,
    /// Only this `merchant_id` may use `/pay` (default: any).
    #[arg(long)]
    pub merchant_id: Option<String>,
    /// Seed of the random faults (default: random, printed at start).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Delay added to every provider call, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Extra random delay in [0, N] milliseconds per call.
    #[arg(long, default_value_t = 0)]
    pub jitter_ms: u64,
    /// Provider calls per second across all routes; beyond it, 429.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,
    /// Share (0 to 1) of calls answered 500/502/503 before anything is done.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    pub fail_rate: f64,
    /// Share (0 to 1) of calls carried out, then answered 503 or cut off.
    #[arg(long, default_value_t = 0.0, value_parser = parse_rate)]
    pub ambiguous_rate: f64,
    // --- dialects, state, control ---
    /// How the sandbox talks: envelope (default), errors-in-200, flat,
    /// conflict-on-repeat, pending.
    #[arg(long, value_enum, default_value_t = Dialect::Envelope, value_name = "NAME")]
    pub dialect: Dialect,
    /// `pending` dialect: a payout settles at the Nth status poll
    /// (default 2; 0 = not by polls).
    #[arg(long, value_name = "N")]
    pub settle_after_polls: Option<u32>,
    /// `pending` dialect: a payout settles this long after it was accepted.
    #[arg(long, value_name = "MS")]
    pub settle_after_ms: Option<u64>,
    /// Every /executes of an initiated or paid payout debits again
    /// (paying twice becomes visible in the ledger).
    #[arg(long)]
    pub non_idempotent_execute: bool,
    /// Keep transactions and wallets in FILE across restarts.
    #[arg(long = "state", value_name = "FILE")]
    pub state_file: Option<PathBuf>,
    /// Start in an outage: 500, 502, 503, cut, 401 (default off).
    #[arg(long, value_enum, default_value_t = Outage::Off, value_name = "MODE")]
    pub outage: Outage,
    /// Answer the money calls with this redirect (301/302/303/307/308)
    /// to /_sandbox/redirected.
    #[arg(long, value_name = "STATUS")]
    pub redirect: Option<u16>,
    /// Which calls --redirect applies to.
    #[arg(long, value_enum, default_value_t = RedirectOn::Executes, value_name = "CALLS")]
    pub redirect_on: RedirectOn,
    /// Answer every provider call with an endless JSON body.
    #[arg(long)]
    pub endless_body: bool,
    /// 401 answers quote the Authorization header received.
    #[arg(long)]
    pub echo_authorization: bool,
    /// /initiates answers echo a different value of this field.
    #[arg(long, value_enum, value_name = "FIELD")]
    pub initiate_mismatch: Option<Mismatch>,
}

fn parse_wallet(s: &str) -> Result<(String, Decimal), String> {
    let (cur, amount) = s
        .split_once('=')
        .ok_or_else(|| format!("expected CUR=AMOUNT, got {s:?}"))?;
    let cur = cur.trim().to_ascii_uppercase();
    if !(cur.len() == 3 && cur.bytes().all(|b| b.is_ascii_uppercase())) {
        return Err(format!("{cur:?} is not a three-letter currency code"));
    }
    let amount: Decimal = amount
        .trim()
        .parse()
        .map_err(|_| format!("{amount:?} is not a decimal amount"))?;
    if amount.is_sign_negative() {
        return Err(format!("the balance of {cur} must not be negative"));
    }
    Ok((cur, amount))
}

fn parse_rate(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("{s:?} is not a number"))?;
    faults::check_rate("the rate", p).map_err(|e| e.to_string())?;
    Ok(p)
}

impl SandboxArgs {
    /// The configuration these flags describe, with the seed chosen.
    pub fn to_config(&self, seed: u64) -> anyhow::Result<SandboxConfig> {
        let mut config = SandboxConfig {
            api_key: self.api_key.clone(),
            merchant_id: self.merchant_id.clone(),
            seed,
            latency_ms: self.latency_ms,
            jitter_ms: self.jitter_ms,
            rate_limit: self.rate_limit,
            fail_rate: self.fail_rate,
            ambiguous_rate: self.ambiguous_rate,
            dialect: self.dialect,
            non_idempotent_execute: self.non_idempotent_execute,
            state_file: self.state_file.clone(),
            outage: self.outage,
            misbehaviour: Misbehaviour {
                redirect: self.redirect.map(|status| Redirect {
                    status,
                    on: self.redirect_on,
                }),
                endless_body: self.endless_body,
                echo_authorization: self.echo_authorization,
                initiate_mismatch: self.initiate_mismatch,
            },
            ..SandboxConfig::default()
        };
        if self.settle_after_polls.is_some() || self.settle_after_ms.is_some() {
            config.settlement = Settlement {
                after_polls: self.settle_after_polls.filter(|&n| n > 0),
                after_ms: self.settle_after_ms,
            };
        }
        if !self.wallets.is_empty() {
            config.wallets.clear();
            for (cur, amount) in &self.wallets {
                if config.wallets.insert(cur.clone(), *amount).is_some() {
                    anyhow::bail!("--wallet {cur} is given twice");
                }
            }
        }
        if !self.payout_methods.is_empty() {
            config.payout_methods = self.payout_methods.clone();
        }
        if !self.payment_methods.is_empty() {
            config.payment_methods = self.payment_methods.clone();
        }
        Ok(config)
    }
}

/// `payrun sandbox`: serves until Ctrl-C (or SIGTERM), printing the
/// address, the accepted key and the seed on start.
pub fn command(args: SandboxArgs) -> anyhow::Result<i32> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let config = args.to_config(seed)?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        let stop = stop_signal()?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "payrun sandbox listening on http://{addr}")?;
        writeln!(out, "api key: {}", config.api_key)?;
        writeln!(out, "seed: {seed}")?;
        out.flush()?;
        drop(out);
        serve(listener, config, stop).await?;
        Ok(crate::exit::OK)
    })
}

/// Resolves on Ctrl-C or SIGTERM. The handlers are installed here, before
/// the address is printed, so whoever reads the address can stop the
/// sandbox cleanly at once.
#[cfg(unix)]
fn stop_signal() -> anyhow::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> anyhow::Result<impl Future<Output = ()> + Send + 'static> {
    Ok(async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
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

    #[test]
    fn wallet_flags() {
        assert_eq!(
            parse_wallet("xof=1500"),
            Ok(("XOF".to_string(), Decimal::from(1500)))
        );
        assert!(parse_wallet("XOF").is_err());
        assert!(parse_wallet("XO=1").is_err());
        assert!(parse_wallet("XOF=-1").is_err());
        assert!(parse_wallet("XOF=abc").is_err());
        assert!(parse_rate("0.5").is_ok());
        assert!(parse_rate("1.5").is_err());
        assert!(parse_rate("NaN").is_err());
    }

    #[test]
    fn flags_build_a_config() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: SandboxArgs,
        }
        let cli = Cli::try_parse_from([
            "x",
            "--wallet",
            "XOF=100",
            "--wallet",
            "GHS=5",
            "--payout-method",
            "wave",
            "--rate-limit",
            "7",
            "--fail-rate",
            "0.1",
        ])
        .unwrap();
        let c = cli.args.to_config(3).unwrap();
        assert_eq!(c.wallets.len(), 2);
        assert_eq!(c.wallets["GHS"], Decimal::from(5));
        assert_eq!(c.payout_methods, ["wave"]);
        assert_eq!(c.rate_limit, Some(7));
        assert_eq!(c.seed, 3);
        let twice = Cli::try_parse_from(["x", "--wallet", "XOF=1", "--wallet", "xof=2"]).unwrap();
        assert!(twice.args.to_config(0).is_err());
        assert!(Cli::try_parse_from(["x", "--rate-limit", "0"]).is_err());
    }

    #[test]
    fn dialect_state_and_misbehaviour_flags_build_a_config() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: SandboxArgs,
        }
        let cli = Cli::try_parse_from([
            "x",
            "--dialect",
            "errors-in-200",
            "--non-idempotent-execute",
            "--state",
            "s.json",
            "--settle-after-ms",
            "250",
            "--outage",
            "503",
            "--redirect",
            "308",
            "--redirect-on",
            "both",
            "--endless-body",
            "--echo-authorization",
            "--initiate-mismatch",
            "transaction-id",
        ])
        .unwrap();
        let c = cli.args.to_config(0).unwrap();
        assert_eq!(c.dialect, Dialect::ErrorsIn200);
        assert!(c.non_idempotent_execute);
        assert_eq!(
            c.state_file.as_deref(),
            Some(std::path::Path::new("s.json"))
        );
        assert_eq!(
            c.settlement,
            Settlement {
                after_polls: None,
                after_ms: Some(250)
            }
        );
        assert_eq!(c.outage, Outage::Status503);
        assert_eq!(
            c.misbehaviour,
            Misbehaviour {
                redirect: Some(Redirect {
                    status: 308,
                    on: RedirectOn::Both
                }),
                endless_body: true,
                echo_authorization: true,
                initiate_mismatch: Some(Mismatch::TransactionId),
            }
        );
        for name in ["envelope", "flat", "conflict-on-repeat", "pending"] {
            assert!(
                Cli::try_parse_from(["x", "--dialect", name]).is_ok(),
                "{name}"
            );
        }
        assert!(Cli::try_parse_from(["x", "--dialect", "soap"]).is_err());
        let defaults = Cli::try_parse_from(["x"])
            .unwrap()
            .args
            .to_config(0)
            .unwrap();
        assert_eq!(defaults.dialect, Dialect::Envelope);
        assert_eq!(defaults.settlement, Settlement::default());
        assert_eq!(defaults.misbehaviour, Misbehaviour::default());
    }
}
