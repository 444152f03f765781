//! `payrun pay`: one 3-D Secure card payment. Reads the request (a file or
//! standard input, never flags), resolves the provider, sends once through
//! [`crate::card::pay`], and prints the outcome as text or JSON.

use super::{LogFormat, Threads, init_logging, runtime};
use crate::card::{CardRequest, Defaults, InvalidRequest, YearMonth, outcome, pay, read_request};
use crate::config::Config;
use crate::exit::Exit;
use crate::provider::Client;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Sentences for people.
    #[default]
    Text,
    /// One JSON object on standard output, for scripts.
    Json,
}

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::PAY)]
pub struct PayArgs {
    /// The payment request as JSON (a file, or - for standard input). Card
    /// data is never accepted as a flag: flags land in shell history.
    #[arg(long, value_name = "FILE|-")]
    pub request: PathBuf,
    /// Config file (default: ./payrun.toml if present).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The provider's base URL (default: `base_url` from the config).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// `payrun pay`. Exit codes: 0 the provider took the payment (3-D Secure
/// redirect issued, or paid); 1 it could not proceed and nothing was charged
/// (bad config, I/O, key refused, not sent, rate limited); 2 the request
/// failed validation and nothing was sent; 3 refused, or the outcome is
/// unknown (check the transaction_id with the provider).
pub fn command(args: PayArgs) -> Result<Exit> {
    init_logging(LogFormat::Text, "warn");
    let config = Config::load(args.config.as_deref())?;
    let json = match read_request(&args.request)? {
        Ok(json) => json,
        Err(invalid) => return show_invalid(&invalid, args.format),
    };
    let defaults = Defaults {
        merchant_id: config.merchant_id.as_deref(),
        payment_method_id: config.card_payment_method_id.as_deref(),
        amount_unit: config.amount_unit(),
    };
    let parsed = CardRequest::parse(&json, &defaults, YearMonth::current());
    // The file's bytes (card data included) are wiped here, whatever the
    // outcome of parsing.
    drop(json);
    let request = match parsed {
        Ok(r) => r,
        Err(invalid) => return show_invalid(&invalid, args.format),
    };

    let base_url = args
        .base_url
        .or(config.base_url.clone())
        .filter(|u| !u.trim().is_empty())
        .context("no provider base URL: pass --base-url or set `base_url` in the config")?;
    let client = {
        let key = super::api_key(&config)?;
        Client::new(&base_url, &key)?
    };
    let report = runtime(Threads::Workers(1))?.block_on(pay(&client, request));
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => write!(out, "{}", report.to_text())?,
        Format::Json => writeln!(out, "{}", report.to_json())?,
    }
    out.flush()?;
    Ok(report.result.exit())
}

fn show_invalid(invalid: &InvalidRequest, format: Format) -> Result<Exit> {
    match format {
        Format::Text => eprint!("error: {}", outcome::invalid_text(invalid)),
        Format::Json => {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{}", outcome::invalid_json(invalid))?;
            out.flush()?;
        }
    }
    Ok(Exit::Invalid)
}
