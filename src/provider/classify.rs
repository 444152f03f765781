//! Strict classification of one provider answer: a pure function of the
//! call, the HTTP status, two headers, the body bytes and the profile. An
//! execute counts as paid only when an explicit success or already-executed
//! rule matches; an explicit failure rule gives a refusal; a not-final
//! status gives `NotFinal`; everything else (unknown status, non-JSON,
//! unreadable or oversized body, unknown 4xx) is `Ambiguous` — never paid,
//! never failed. Redirects, wrong routes and methods stop the run.
//!
//! The body is read once for the values at the profile's pointers
//! ([`read`]), exactly as a parsed `serde_json::Value` would give them,
//! without building the whole body first.

pub(crate) mod read;

use read::Unread;

use super::outcome::{Outcome, StopKind};
use super::profile::{Class, HttpRule, Profile};
use serde_json::Value;
use std::time::{Duration, SystemTime};

/// When a 429 carries no usable `Retry-After`, wait this long.
pub const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(1);
/// Longest `Retry-After` payrun waits inside a run. Throttling windows are
/// seconds to a minute; a longer ask means a blocked account or a
/// maintenance window, better met by stopping (resumable) than by a run
/// silently idle for hours.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// Which call was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Initiate,
    Execute,
    Pay,
}

/// The payout an answer must be about, for the echo check: what its
/// initiation sent (an execute sends only the id, but its answer is about
/// the same payout). `None` fields are not checked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent<'a> {
    pub transaction_id: &'a str,
    pub amount: Option<&'a str>,
    pub currency: Option<&'a str>,
    pub account: Option<&'a str>,
}

impl<'a> Sent<'a> {
    /// The payout an initiation request describes (the wire amount, as
    /// sent).
    pub fn of(req: &'a super::wire::InitiateRequest) -> Sent<'a> {
        Sent {
            transaction_id: &req.transaction_id,
            amount: Some(&req.amount),
            currency: Some(&req.currency),
            account: Some(&req.account_id),
        }
    }
}

/// The body as read: complete, over the size cap, or broken mid-way.
#[derive(Debug, Clone, Copy)]
pub enum Body<'a> {
    Complete(&'a [u8]),
    TooLarge,
    Unreadable(&'a str),
}

/// The parts of an answer classification looks at.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub http: u16,
    pub retry_after: Option<&'a str>,
    pub body: Body<'a>,
    /// When the answer arrived, for an HTTP-date `Retry-After`.
    pub received: SystemTime,
}

/// The fields the profile points at, as strings.
#[derive(Debug, Default)]
struct Reading {
    status: Option<String>,
    code: Option<String>,
    message: String,
    failure_code: Option<String>,
    result: Option<String>,
}

/// What the body says, before HTTP and call are considered.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Is(Class),
    /// `result` is an error word and nothing more specific was said.
    ResultError,
    /// A status the profile does not know.
    UnknownStatus(String),
    /// Success and failure words at once.
    Conflict,
    Nothing,
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The values at the profile's pointers, by slot: the order of
/// [`Profile::pointers`], then the answer's `data` when it is read.
type Found = Vec<Option<Value>>;
const STATUS: usize = 0;
const CODE: usize = 1;
const MESSAGE: usize = 2;
const FAILURE_CODE: usize = 3;
const RESULT: usize = 4;
const ECHO_TRANSACTION_ID: usize = 5;
const ECHO_AMOUNT: usize = 6;
const ECHO_CURRENCY: usize = 7;
const ECHO_ACCOUNT: usize = 8;
const DATA: usize = 9;

/// The scalar at `slot` as text, taken out of what was read (the
/// reading's slots are not looked at again); blank counts as absent.
fn at(found: &mut Found, slot: usize) -> Option<String> {
    let text = match found[slot].take()? {
        Value::String(s) => s,
        other => scalar(&other)?,
    };
    Some(text).filter(|s| !s.trim_ascii().is_empty())
}

fn reading(found: &mut Found) -> Reading {
    Reading {
        status: at(found, STATUS),
        code: at(found, CODE),
        message: at(found, MESSAGE).unwrap_or_default(),
        failure_code: at(found, FAILURE_CODE),
        result: at(found, RESULT),
    }
}

fn positive(c: Class) -> bool {
    matches!(
        c,
        Class::Initiated | Class::Duplicate | Class::Executed | Class::AlreadyExecuted
    )
}

/// The transaction status decides when present; the code when not; the
/// envelope's result word last. A success word against a failure word is a
/// conflict. An error result does not contradict a duplicate or
/// already-executed code (providers send those as errors: 409).
fn verdict(r: &Reading, p: &Profile) -> Verdict {
    let by_code = r.code.as_deref().and_then(|c| p.class_of(c));
    let result_error = r.result.as_deref().is_some_and(|w| p.is_result_error(w));
    let main = match &r.status {
        Some(s) => match p.class_of(s) {
            Some(c) => c,
            None => return Verdict::UnknownStatus(s.clone()),
        },
        None => match by_code {
            Some(c) => c,
            None if result_error => return Verdict::ResultError,
            None => return Verdict::Nothing,
        },
    };
    let failed = |c: Option<Class>| c == Some(Class::Failed);
    let contradicted = (positive(main) && failed(by_code))
        || (main == Class::Failed && by_code.is_some_and(positive))
        || (matches!(main, Class::Executed | Class::Initiated) && result_error);
    if contradicted {
        return Verdict::Conflict;
    }
    Verdict::Is(main)
}

fn describe(http: u16, r: &Reading) -> String {
    let mut s = format!("HTTP {http}");
    for part in [&r.status, &r.code].into_iter().flatten() {
        s.push(' ');
        s.push_str(part);
    }
    if !r.message.is_empty() {
        s.push_str(": ");
        s.push_str(&r.message);
    }
    s
}

fn ambiguous(detail: String) -> Outcome {
    Outcome::Ambiguous { detail }
}

/// `Retry-After` as delay-seconds or an HTTP-date (a past date is zero).
pub fn parse_retry_after(v: &str, now: SystemTime) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Classifies one answer that arrived.
pub fn classify(call: CallKind, sent: &Sent<'_>, a: &Answer<'_>, p: &Profile) -> Outcome {
    if let Some(out) = by_status_alone(a) {
        return out;
    }
    let http = a.http;
    // Only `/pay`'s caller reads the answer's data (a card payment's
    // 3-D Secure page and status); the payout calls do not keep it.
    let fields = match call {
        CallKind::Pay => &p.with_data,
        CallKind::Initiate | CallKind::Execute => &p.fields,
    };
    let read = match a.body {
        Body::Complete(b) => read::read(b, fields),
        Body::TooLarge | Body::Unreadable(_) => Err(Unread::NotJson),
    };
    let rule = p.http.get(&http).copied().unwrap_or(match http {
        200..=299 => HttpRule::Body,
        401 | 403 => HttpRule::Unauthorized,
        405 => HttpRule::Misconfigured,
        408 | 425 | 500..=599 => HttpRule::Ambiguous,
        400..=499 => HttpRule::Body,
        _ => HttpRule::Ambiguous,
    });
    let mut found = match read {
        Ok(found) => found,
        Err(unread) => return unread_body(call, a, rule, unread, p),
    };
    let reading = reading(&mut found);
    let v = verdict(&reading, p);
    let out = match rule {
        HttpRule::Unauthorized => {
            return Outcome::Unauthorized {
                http,
                message: if reading.message.is_empty() {
                    format!("HTTP {http}")
                } else {
                    reading.message
                },
            };
        }
        HttpRule::Misconfigured => return misconfigured(http, call),
        HttpRule::Ambiguous => return ambiguous(describe(http, &reading)),
        HttpRule::Refused if !matches!(v, Verdict::Is(c) if c != Class::Failed) => {
            refused(http, &reading, v == Verdict::Is(Class::Failed))
        }
        // A 404 is about the payout only when the body says "no such
        // transaction"; any other 404 means the URL is wrong.
        _ if http == 404 && !p.http.contains_key(&404) && v != Verdict::Is(Class::NotFound) => {
            return no_route(http, call);
        }
        _ => by_call(call, http, v, &reading),
    };
    // Whatever it says about the transaction (paid, failed, refused, not
    // final), an answer about another one says nothing about ours.
    match out {
        Outcome::Accepted { .. } | Outcome::Refused { .. } | Outcome::NotFinal { .. } => {
            match echo_check(sent, &found) {
                Some(mismatch) => mismatch,
                None => with_data(out, &mut found),
            }
        }
        other => other,
    }
}

/// What the HTTP status alone decides, whatever the body: a redirect
/// stops the run; a 429 waits (a `Retry-After` beyond the cap stops).
fn by_status_alone(a: &Answer<'_>) -> Option<Outcome> {
    let http = a.http;
    if (300..400).contains(&http) {
        return Some(Outcome::Stop {
            kind: StopKind::Redirect,
            http,
            detail: format!(
                "HTTP {http}: the provider redirects; payrun never follows redirects. Fix base_url"
            ),
        });
    }
    if http != 429 {
        return None;
    }
    let wait = a
        .retry_after
        .and_then(|v| parse_retry_after(v, a.received))
        .unwrap_or(DEFAULT_RETRY_AFTER);
    if wait > MAX_RETRY_AFTER {
        return Some(Outcome::Stop {
            kind: StopKind::RetryAfterTooLong,
            http,
            detail: format!(
                "the provider asks to wait {}s (Retry-After), more than the {}s payrun waits within a run; run again later",
                wait.as_secs(),
                MAX_RETRY_AFTER.as_secs()
            ),
        });
    }
    Some(Outcome::RateLimited { retry_after: wait })
}

/// An answer whose body gives no values: not JSON, cut off, too large, or
/// contradictory (a pointed-at key given twice). The HTTP rule decides
/// first; then a contradictory body is `Contradictory`, never a refusal
/// nor a missing route.
fn unread_body(
    call: CallKind,
    a: &Answer<'_>,
    rule: HttpRule,
    unread: Unread,
    p: &Profile,
) -> Outcome {
    let http = a.http;
    let why = match (a.body, &unread) {
        (_, Unread::Duplicate(key)) => {
            if matches!(rule, HttpRule::Body | HttpRule::Refused) {
                return Outcome::Contradictory {
                    http,
                    key: key.clone(),
                };
            }
            format!("a body that gives {key} twice")
        }
        (Body::Complete(_), Unread::NotJson) => "a body that is not JSON".to_string(),
        (Body::TooLarge, _) => "a body over the size cap".to_string(),
        (Body::Unreadable(e), _) => format!("an unreadable body ({e})"),
    };
    match rule {
        HttpRule::Unauthorized => Outcome::Unauthorized {
            http,
            message: format!("HTTP {http}"),
        },
        HttpRule::Misconfigured => misconfigured(http, call),
        _ if http == 404 && !p.http.contains_key(&404) => no_route(http, call),
        HttpRule::Refused => refused(http, &Reading::default(), false),
        _ => ambiguous(format!("HTTP {http} with {why}")),
    }
}

/// What a readable body means for `call`.
fn by_call(call: CallKind, http: u16, v: Verdict, reading: &Reading) -> Outcome {
    match (call, v) {
        (_, Verdict::Is(Class::Failed)) => refused(http, reading, true),
        (_, Verdict::ResultError) => refused(http, reading, false),
        (CallKind::Execute, Verdict::Is(Class::NotFound)) => refused(http, reading, false),
        (CallKind::Pay, _) if (200..300).contains(&http) => accepted(reading),
        (
            CallKind::Initiate,
            Verdict::Is(
                Class::Initiated
                | Class::Duplicate
                | Class::Executed
                | Class::AlreadyExecuted
                | Class::Pending,
            ),
        ) => accepted(reading),
        (CallKind::Execute, Verdict::Is(Class::Executed | Class::AlreadyExecuted)) => {
            accepted(reading)
        }
        (CallKind::Execute, Verdict::Is(Class::Pending)) => Outcome::NotFinal {
            code: reading.code.clone().unwrap_or_default(),
            message: reading.message.clone(),
            status: reading
                .status
                .clone()
                .or(reading.code.clone())
                .unwrap_or_default(),
        },
        (CallKind::Execute, Verdict::Is(Class::Duplicate)) => ambiguous(format!(
            "{}: a duplicate acknowledgement says nothing about payment",
            describe(http, reading)
        )),
        (_, Verdict::Conflict) => ambiguous(format!(
            "{}: success and failure at once",
            describe(http, reading)
        )),
        (_, Verdict::UnknownStatus(s)) => ambiguous(format!(
            "{}: status {s:?} matches no rule of the provider profile",
            describe(http, reading)
        )),
        _ => ambiguous(format!(
            "{}: the answer matches no rule of the provider profile",
            describe(http, reading)
        )),
    }
}

/// An accepted outcome given the answer's `data` object when it was read
/// (`/pay`), moved out of what was read rather than copied.
fn with_data(out: Outcome, found: &mut Found) -> Outcome {
    match out {
        Outcome::Accepted {
            code,
            message,
            status,
            data: _,
        } => Outcome::Accepted {
            code,
            message,
            status,
            data: found.get_mut(DATA).and_then(Option::take),
        },
        other => other,
    }
}

fn accepted(r: &Reading) -> Outcome {
    Outcome::Accepted {
        code: r
            .code
            .clone()
            .or(r.status.clone())
            .unwrap_or_else(|| "OK".into()),
        message: r.message.clone(),
        status: r.status.clone(),
        // Filled in by `with_data` once the echo check passed.
        data: None,
    }
}

fn refused(http: u16, r: &Reading, transaction_failed: bool) -> Outcome {
    let code = r
        .failure_code
        .clone()
        .filter(|_| transaction_failed)
        .or(r.code.clone())
        .or(r.status.clone())
        .unwrap_or_else(|| format!("HTTP_{http}"));
    Outcome::Refused {
        http,
        code,
        message: r.message.clone(),
        transaction_failed,
    }
}

fn path_of(call: CallKind) -> &'static str {
    match call {
        CallKind::Initiate => "/initiates",
        CallKind::Execute => "/executes",
        CallKind::Pay => "/pay",
    }
}

fn no_route(http: u16, call: CallKind) -> Outcome {
    Outcome::Stop {
        kind: StopKind::NoSuchRoute,
        http,
        detail: format!(
            "HTTP {http} on {}: no such route at the provider; check base_url",
            path_of(call)
        ),
    }
}

fn misconfigured(http: u16, call: CallKind) -> Outcome {
    Outcome::Stop {
        kind: StopKind::Misconfigured,
        http,
        detail: format!(
            "HTTP {http} on {}: the provider does not accept this call as configured; check base_url and the provider profile",
            path_of(call)
        ),
    }
}

/// One echoed field: its name, the value sent, its slot, equality.
type EchoCheck<'s> = (&'static str, Option<&'s str>, usize, fn(&str, &str) -> bool);

/// Equal as decimals (`"1500"`, `1500`, `"1500.00"`), else as text.
fn same_amount(sent: &str, got: &str) -> bool {
    use rust_decimal::Decimal;
    match (
        sent.trim_ascii().parse::<Decimal>(),
        got.trim_ascii().parse::<Decimal>(),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => sent.trim_ascii() == got.trim_ascii(),
    }
}

/// A `Mismatch` when an echoed field differs from what was sent, for
/// every call: the transaction id, amount (as a number), currency (any
/// ASCII case) and account. Fields the answer does not carry, or that were
/// not sent, are not checked.
fn echo_check(sent: &Sent<'_>, found: &Found) -> Option<Outcome> {
    let checks: [EchoCheck<'_>; 4] = [
        (
            "transactionId",
            Some(sent.transaction_id),
            ECHO_TRANSACTION_ID,
            |a, b| a == b,
        ),
        ("amount", sent.amount, ECHO_AMOUNT, same_amount),
        ("currency", sent.currency, ECHO_CURRENCY, |a, b| {
            a.trim_ascii().eq_ignore_ascii_case(b.trim_ascii())
        }),
        ("account", sent.account, ECHO_ACCOUNT, |a, b| {
            a.trim_ascii() == b.trim_ascii()
        }),
    ];
    for (field, want, slot, same) in checks {
        let (Some(want), Some(v)) = (want, found[slot].as_ref()) else {
            continue;
        };
        if v.is_null() {
            continue;
        }
        let text = scalar(v).unwrap_or_else(|| v.to_string());
        if scalar(v).is_none() || !same(want, &text) {
            return Some(Outcome::Mismatch {
                field,
                sent: want.to_string(),
                got: text,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests;
