//! `payrun sandbox`: serves the provider simulator until Ctrl-C or SIGTERM,
//! printing the address, the accepted key and the seed on start.

use super::{LogFormat, Signals, Threads, init_logging, runtime};
use crate::exit::Exit;
use crate::sandbox::{
    DEFAULT_API_KEY, Dialect, Misbehaviour, Mismatch, Outage, Redirect, RedirectOn, SandboxConfig,
    Settlement, WalletChange, check_rate, edit_wallets, serve,
};
use anyhow::Context;
use rust_decimal::Decimal;
use std::io::Write;
use std::path::PathBuf;
use tokio::net::TcpListener;

/// `payrun sandbox` flags.
#[derive(Debug, clap::Args)]
#[command(after_help = super::help::SANDBOX)]
pub struct SandboxArgs {
    /// The language of the lines it prints (default: the `language` of
    /// ./payrun.toml if present, else English).
    #[arg(long, value_enum)]
    pub lang: Option<crate::lang::Language>,
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
    // --- offline wallet edits (rehearsals) ---
    /// Add AMOUNT to a wallet of the --state file and exit without serving
    /// (repeatable). The file is created if missing.
    #[arg(long = "top-up", value_name = "CUR=AMOUNT", value_parser = parse_wallet, requires = "state_file")]
    pub top_ups: Vec<(String, Decimal)>,
    /// Set a wallet of the --state file to AMOUNT and exit without serving
    /// (repeatable): rehearse a wallet that runs out.
    #[arg(long = "set-wallet", value_name = "CUR=AMOUNT", value_parser = parse_wallet, requires = "state_file")]
    pub set_wallets: Vec<(String, Decimal)>,
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
    check_rate("the rate", p).map_err(|e| e.to_string())?;
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

/// `--top-up` / `--set-wallet`: edits the state file's wallets offline and
/// prints the balances.
fn edit_state(args: &SandboxArgs) -> anyhow::Result<Exit> {
    let path = args
        .state_file
        .as_deref()
        .context("--top-up and --set-wallet need --state FILE")?;
    let changes: Vec<(String, WalletChange)> = args
        .set_wallets
        .iter()
        .map(|(c, a)| (c.clone(), WalletChange::Set(*a)))
        .chain(
            args.top_ups
                .iter()
                .map(|(c, a)| (c.clone(), WalletChange::Add(*a))),
        )
        .collect();
    let wallets = edit_wallets(path, &args.to_config(0)?.wallets, &changes)?;
    let mut out = std::io::stdout().lock();
    for (cur, balance) in wallets {
        writeln!(out, "{cur} {balance}")?;
    }
    Ok(Exit::Ok)
}

/// Runtime workers: tokio's choice (one per core), so a sandbox under load
/// from a benchmark uses the machine.
const SANDBOX_THREADS: Threads = Threads::PerCore;

pub fn command(args: SandboxArgs) -> anyhow::Result<Exit> {
    if !args.top_ups.is_empty() || !args.set_wallets.is_empty() {
        return edit_state(&args);
    }
    let seed = args.seed.unwrap_or_else(rand::random);
    let config = args.to_config(seed)?;
    // A config that does not read leaves the sandbox in English: it is
    // not the sandbox's to judge.
    let t = args
        .lang
        .unwrap_or_else(|| {
            crate::config::Config::load(None).map_or_else(|_| Default::default(), |c| c.language())
        })
        .text();
    init_logging(LogFormat::Text, "error");
    runtime(SANDBOX_THREADS)?.block_on(async move {
        let listener = TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        // Installed before the address is printed, so whoever reads the
        // address can stop the sandbox cleanly at once.
        let mut signals = Signals::install()?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", (t.sandbox_listening)(&format!("http://{addr}")))?;
        writeln!(out, "{}", (t.sandbox_key)(&config.api_key))?;
        writeln!(out, "{}", (t.sandbox_seed)(seed))?;
        out.flush()?;
        drop(out);
        serve(
            listener,
            config,
            async move { signals.stop_requested().await },
        )
        .await?;
        Ok(Exit::Ok)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
