//! `payrun sandbox`: serves the provider simulator until Ctrl-C or SIGTERM,
//! printing the address, the accepted key and the seed on start.

use super::{LogFormat, Signals, init_logging, runtime};
use crate::exit::Exit;
use crate::sandbox::{DEFAULT_API_KEY, SandboxConfig, check_rate, serve};
use anyhow::Context;
use rust_decimal::Decimal;
use std::io::Write;
use tokio::net::TcpListener;

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
            ..SandboxConfig::default()
        };
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

/// Runtime workers: tokio's choice (one per core), so a sandbox under load
/// from a benchmark uses the machine.
const SANDBOX_WORKERS: Option<usize> = None;

pub fn command(args: SandboxArgs) -> anyhow::Result<Exit> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let config = args.to_config(seed)?;
    init_logging(LogFormat::Text, "error");
    runtime(SANDBOX_WORKERS)?.block_on(async move {
        let listener = TcpListener::bind(&args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        // Installed before the address is printed, so whoever reads the
        // address can stop the sandbox cleanly at once.
        let mut signals = Signals::install()?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "payrun sandbox listening on http://{addr}")?;
        writeln!(out, "api key: {}", config.api_key)?;
        writeln!(out, "seed: {seed}")?;
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
}
