//! Card payments (`payrun pay`): one 3-D Secure card payment through the
//! provider's `POST /pay`, PCI-safe from end to end. This module owns
//! reading the request and sending it once (the command line is
//! `cmd::pay`); `request` owns the validated request and its
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
use std::path::Path;

use anyhow::{Context, Result};
use secrecy::zeroize::Zeroizing;

use crate::provider::Client;

pub use outcome::{PayReport, PayResult};
pub use request::{CardRequest, Defaults, FieldError, InvalidRequest, YearMonth};

/// Largest request file accepted. A card payment request is well under 2 KiB;
/// the bound keeps a wrong file (or an endless pipe) from being read whole.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;

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

/// Reads the request from `path` (`-` is standard input) into a buffer that
/// is wiped on drop. I/O failures are errors (exit 1); a file too large to be
/// a request is a validation error (exit 2).
///
/// The buffer is allocated once at its maximum size so reading never
/// reallocates (a reallocation would leave an unwiped copy of the card data
/// behind), and standard input is read through its own file descriptor,
/// bypassing the process-wide buffer of `std::io::stdin`, which is never
/// wiped.
pub fn read_request(
    path: &Path,
) -> Result<std::result::Result<Zeroizing<Vec<u8>>, InvalidRequest>> {
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
