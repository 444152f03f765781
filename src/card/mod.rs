//! Card payments (`payrun pay`): one 3-D Secure card payment through the
//! provider's `POST /pay`, PCI-safe from end to end. This module owns the
//! command (reading the request, choosing the provider, sending once,
//! printing the outcome); `request` owns the validated request and its
//! secret types (read by `json`, checked by `check` and `check_card`, refused
//! with `errors`); `outcome` owns what the answer means and how it is shown,
//! `scrub` what of the provider's answer may be shown. `pan` (Luhn, masking)
//! and `date` (expiry months) are leaves shared with the sandbox.
//!
//! The PCI rules it keeps: card data arrives only in a JSON file or on
//! standard input (never as flags, which land in shell history); the card
//! number, CVV and OTP live in secret types from parsing until the request is
//! built, and the wire body is wiped right after the call; only the masked
//! card number (`400000******3220`) is ever printed or logged; nothing is
//! written to disk; and a payment whose outcome is unknown is reported with
//! its transaction_id, never re-sent.

mod check;
mod check_card;
pub mod date;
mod errors;
mod json;
pub mod outcome;
pub mod pan;
pub mod request;
mod scrub;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use secrecy::zeroize::Zeroizing;

use crate::config::Config;
use crate::exit;
use crate::provider::Client;

pub use outcome::{PayReport, PayResult};
pub use request::{CardRequest, Defaults, FieldError, InvalidRequest, YearMonth};

/// Largest request file accepted. A card payment request is well under 2 KiB;
/// the bound keeps a wrong file (or an endless pipe) from being read whole.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Sentences for people.
    #[default]
    Text,
    /// One JSON object on standard output, for scripts.
    Json,
}

#[derive(Debug, clap::Args)]
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
pub fn command(args: PayArgs) -> Result<i32> {
    init_logging();
    let config = Config::load(args.config.as_deref())?;
    let json = match read_request(&args.request)? {
        Ok(json) => json,
        Err(invalid) => return Ok(print_invalid(&invalid, args.format)),
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
        Err(invalid) => return Ok(print_invalid(&invalid, args.format)),
    };

    let base_url = args
        .base_url
        .or(config.base_url.clone())
        .filter(|u| !u.trim().is_empty())
        .context("no provider base URL: pass --base-url or set `base_url` in the config")?;
    let client = {
        let key = config.api_key()?;
        Client::new(&base_url, &key)?
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(pay(&client, request));
    match args.format {
        Format::Text => print!("{}", report.to_text()),
        Format::Json => println!("{}", report.to_json()),
    }
    Ok(report.exit_code())
}

/// Sends one card payment, once, and classifies the answer. The request is
/// consumed: its secrets are wiped when this returns. Whatever the answer,
/// this never re-sends: a card payment re-sent after an ambiguous answer can
/// charge the card twice.
pub async fn pay(client: &Client, request: CardRequest) -> PayReport {
    tracing::info!(
        transaction_id = %request.transaction_id,
        card = %request.card.masked(),
        amount = %request.wire_amount(),
        currency = %request.currency.code(),
        "sending card payment"
    );
    let outcome = {
        let wire = request.to_wire();
        client.pay(wire.body()).await
        // `wire` dropped (and wiped) here, right after the call.
    };
    let report = PayReport::from_answer(&request, outcome, client.base_url());
    tracing::info!(
        transaction_id = %report.transaction_id,
        outcome = report.result.name(),
        "card payment answered"
    );
    report
}

/// Logs go to standard error, filtered by `RUST_LOG` (default: warnings).
/// Nothing payrun logs for a card payment carries more than the masked
/// number; the end-to-end tests check this at `RUST_LOG=trace`.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn print_invalid(invalid: &InvalidRequest, format: Format) -> i32 {
    match format {
        Format::Text => eprint!("error: {}", outcome::invalid_text(invalid)),
        Format::Json => println!("{}", outcome::invalid_json(invalid)),
    }
    exit::INVALID
}

/// Reads the request from `path` (`-` is standard input) into a buffer that
/// is wiped on drop. I/O failures are errors (exit 1); a file too large to be
/// a request is a validation error (exit 2).
///
/// The buffer is allocated once at its maximum size so reading never
/// reallocates (a reallocation would leave an unwiped copy of the card data
/// behind), and standard input is read through its own file descriptor,
/// bypassing the process-wide buffer of `std::io::stdin`, which is never
/// wiped.
fn read_request(path: &Path) -> Result<std::result::Result<Zeroizing<Vec<u8>>, InvalidRequest>> {
    let mut buf = Zeroizing::new(Vec::with_capacity(MAX_REQUEST_BYTES + 1));
    let limit = MAX_REQUEST_BYTES as u64 + 1;
    if path.as_os_str() == "-" {
        read_stdin(&mut buf, limit).context("cannot read the request from standard input")?;
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot open the request file {}", path.display()))?;
        file.take(limit)
            .read_to_end(&mut buf)
            .with_context(|| format!("cannot read the request file {}", path.display()))?;
    }
    if buf.len() > MAX_REQUEST_BYTES {
        return Ok(Err(InvalidRequest::one(FieldError {
            field: "request".into(),
            value: format!("(more than {MAX_REQUEST_BYTES} bytes)"),
            problem: "is far larger than a card payment request".into(),
            fix: "check that --request names the payment request file".into(),
        })));
    }
    Ok(Ok(buf))
}

#[cfg(unix)]
fn read_stdin(buf: &mut Vec<u8>, limit: u64) -> std::io::Result<()> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned()?;
    std::fs::File::from(fd).take(limit).read_to_end(buf)?;
    Ok(())
}

#[cfg(not(unix))]
fn read_stdin(buf: &mut Vec<u8>, limit: u64) -> std::io::Result<()> {
    std::io::stdin().lock().take(limit).read_to_end(buf)?;
    Ok(())
}
