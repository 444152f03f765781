//! The sandbox's own control routes under `/_sandbox/` (all need the API
//! key): top up a wallet, switch an outage, change the rate limit or the
//! latency at run time, pause with `Retry-After`, export a statement; and
//! the redirect target that counts clients following redirects. None of
//! them is a provider call: no faults, no dialect, not counted.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::http::{App, Refused, check_auth, error};
use super::misbehave::{Outage, REDIRECT_TARGET};
use super::state::LedgerSnapshot;
use crate::provider::wire::codes;

/// Longest pause accepted: an hour is already far beyond any test, and a
/// typo of a few zeros must not freeze a sandbox for days.
const MAX_PAUSE_SECS: u64 = 3600;

pub(crate) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/_sandbox/topup", post(topup))
        .route("/_sandbox/outage", post(outage))
        .route("/_sandbox/control", post(control))
        .route("/_sandbox/pause", post(pause))
        .route("/_sandbox/statement", get(statement))
        .route(REDIRECT_TARGET, any(redirected))
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        serde_json::to_vec(v).unwrap_or_default(),
    )
        .into_response()
}

fn bad(message: &str) -> Response {
    error(StatusCode::BAD_REQUEST, codes::VALIDATION_ERROR, message)
}

/// Authenticates and parses a JSON object body.
fn parse(app: &App, headers: &HeaderMap, body: &Bytes) -> Result<Value, Refused> {
    check_auth(app, headers)?;
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(Box::new(bad("the body must be a JSON object"))),
    }
}

/// A decimal given as a JSON string or number.
fn decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::String(s) => s.trim().parse().ok(),
        Value::Number(n) => n.to_string().parse().ok(),
        _ => None,
    }
}

/// `POST /_sandbox/topup {"currency":"XOF","amount":"100000"}`: adds to a
/// wallet (opening it if needed); answers the new balance.
async fn topup(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let v = match parse(&app, &headers, &body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let currency = v["currency"]
        .as_str()
        .unwrap_or("")
        .trim()
        .to_ascii_uppercase();
    if !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())) {
        return bad("currency must be a three-letter code, e.g. \"XOF\"");
    }
    let Some(amount) = decimal(&v["amount"]).filter(|a| *a > Decimal::ZERO) else {
        return bad("amount must be a positive decimal, e.g. \"100000\"");
    };
    let mut ledger = app.ledger();
    let Some(balance) = ledger.top_up(&currency, amount) else {
        return bad("the balance would overflow");
    };
    if let Err(r) = app.commit(&mut ledger) {
        return *r;
    }
    json_response(
        StatusCode::OK,
        &json!({"currency": currency, "balance": balance.to_string()}),
    )
}

/// `POST /_sandbox/outage {"mode":"503"}`: `500`, `502`, `503`, `cut`,
/// `401` or `off`.
async fn outage(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let v = match parse(&app, &headers, &body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(mode) = v["mode"].as_str().and_then(Outage::parse) else {
        return bad("mode must be one of \"500\", \"502\", \"503\", \"cut\", \"401\", \"off\"");
    };
    *app.outage.lock().unwrap_or_else(|e| e.into_inner()) = mode;
    json_response(StatusCode::OK, &json!({"mode": v["mode"]}))
}

/// `POST /_sandbox/control {"rateLimit": 100, "latencyMs": 50}`: each key
/// optional; `"rateLimit": null` removes the limit.
async fn control(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let v = match parse(&app, &headers, &body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    if let Some(obj) = v.as_object()
        && let Some(k) = obj
            .keys()
            .find(|k| !["rateLimit", "latencyMs"].contains(&k.as_str()))
    {
        return bad(&format!("unknown key {k:?}; known: rateLimit, latencyMs"));
    }
    if let Some(r) = v.get("rateLimit") {
        let limit = match r {
            Value::Null => None,
            other => match other.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) if n > 0 => Some(n),
                _ => return bad("rateLimit must be a whole number of calls/s >= 1, or null"),
            },
        };
        if let Err(e) = app.faults.set_rate_limit(limit) {
            return bad(&e.to_string());
        }
    }
    if let Some(l) = v.get("latencyMs") {
        let Some(ms) = l.as_u64() else {
            return bad("latencyMs must be a whole number of milliseconds");
        };
        app.faults.set_latency_ms(ms);
    }
    json_response(StatusCode::OK, &v)
}

/// `POST /_sandbox/pause {"seconds":5}`: every provider call answers 429
/// with `Retry-After` (the seconds left) until the pause ends.
async fn pause(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let v = match parse(&app, &headers, &body) {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let Some(secs) = v["seconds"]
        .as_u64()
        .filter(|s| (1..=MAX_PAUSE_SECS).contains(s))
    else {
        return bad("seconds must be a whole number from 1 to 3600");
    };
    *app.paused_until.lock().unwrap_or_else(|e| e.into_inner()) =
        Some(Instant::now() + Duration::from_secs(secs));
    json_response(StatusCode::OK, &json!({"seconds": secs}))
}

/// Any method on the redirect target: 200 "success", counted, so a test
/// can assert that a client never followed a redirect.
async fn redirected(State(app): State<Arc<App>>, _req: Request) -> Response {
    app.redirect_hits.fetch_add(1, Ordering::Relaxed);
    json_response(
        StatusCode::OK,
        &json!({"status": "success", "code": "SUCCESS", "message": "payout executed",
                "data": {"status": "SUCCESS"}}),
    )
}

/// Headers and status words of a statement, per language.
struct Words {
    headers: [&'static str; 6],
    success: &'static str,
    failed: &'static str,
    pending: &'static str,
    initiated: &'static str,
}

const ENGLISH: Words = Words {
    headers: [
        "Transaction ID",
        "Account",
        "Amount",
        "Currency",
        "Status",
        "Date",
    ],
    success: "Successful",
    failed: "Failed",
    pending: "Pending",
    initiated: "Initiated",
};

const FRENCH: Words = Words {
    headers: ["Référence", "Compte", "Montant", "Devise", "Statut", "Date"],
    success: "Réussi",
    failed: "Échoué",
    pending: "En attente",
    initiated: "Initiée",
};

/// `GET /_sandbox/statement?format=csv[&lang=fr][&sep=;]`: every payout as
/// a provider's transaction export. French uses `;` unless `sep` says.
async fn statement(State(app): State<Arc<App>>, req: Request) -> Response {
    if let Err(r) = check_auth(&app, req.headers()) {
        return *r;
    }
    let query = req.uri().query().unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|p| p.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())
    };
    if param("format").is_some_and(|f| f != "csv") {
        return bad("format must be csv");
    }
    let french = match param("lang").as_deref() {
        None | Some("en") => false,
        Some("fr") => true,
        Some(_) => return bad("lang must be en or fr"),
    };
    let sep = match param("sep").as_deref() {
        None => {
            if french {
                b';'
            } else {
                b','
            }
        }
        Some(",") | Some("%2C") | Some("comma") => b',',
        Some(";") | Some("%3B") | Some("semicolon") => b';',
        Some(_) => return bad("sep must be comma or semicolon"),
    };
    let words = if french { &FRENCH } else { &ENGLISH };
    let snapshot = app.snapshot();
    match statement_csv(&snapshot, words, sep) {
        Ok(bytes) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/csv; charset=utf-8"),
            )],
            bytes,
        )
            .into_response(),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            "cannot write the statement",
        ),
    }
}

/// The statement of every payout (card payments are not payouts).
fn statement_csv(s: &LedgerSnapshot, words: &Words, sep: u8) -> csv::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .delimiter(sep)
        .from_writer(Vec::new());
    w.write_record(words.headers)?;
    for t in s.transactions.iter().filter(|t| t.kind == "payout") {
        let status = match t.status.as_str() {
            "SUCCESS" => words.success,
            "FAILED" => words.failed,
            "PENDING" => words.pending,
            _ => words.initiated,
        };
        w.write_record([
            t.transaction_id.as_str(),
            t.account_id.as_str(),
            &t.amount.to_string(),
            t.currency.as_str(),
            status,
            &format_date(t.at),
        ])?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of a Unix time in seconds.
fn format_date(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(format_date(0), "1970-01-01 00:00:00");
        assert_eq!(format_date(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(format_date(1795448515), "2026-11-23 15:41:55");
    }
}
