//! Classification tables, one per provider dialect, and client tests
//! against tiny loopback servers (redirects, body cap, redaction).

use super::*;
use std::time::SystemTime;

/// The request the tables' answers reply to (shared with
/// `classify/tests.rs`).
pub(super) const SENT: Sent<'static> = Sent {
    transaction_id: "tx-1",
    amount: Some("1500"),
    currency: Some("XOF"),
    account: Some("+2250700000001"),
};

pub(super) fn profile(text: &str) -> Profile {
    Profile::from_spec(&toml::from_str(text).unwrap()).unwrap()
}

pub(super) fn answer(call: CallKind, http: u16, body: &str, p: &Profile) -> Outcome {
    let a = Answer {
        http,
        retry_after: None,
        body: Body::Complete(body.as_bytes()),
        received: SystemTime::now(),
    };
    classify(call, &SENT, &a, p)
}

/// A short name of the outcome's class, for tables.
fn kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Accepted { .. } => "accepted",
        Outcome::Refused {
            transaction_failed: true,
            ..
        } => "failed",
        Outcome::Refused { .. } => "refused",
        Outcome::NotFinal { .. } => "not_final",
        Outcome::Mismatch { .. } => "mismatch",
        Outcome::Contradictory { .. } => "contradictory",
        Outcome::Unauthorized { .. } => "unauthorized",
        Outcome::Stop {
            kind: StopKind::Redirect,
            ..
        } => "redirect",
        Outcome::Stop {
            kind: StopKind::NoSuchRoute,
            ..
        } => "no_route",
        Outcome::Stop { .. } => "stop",
        Outcome::RateLimited { .. } => "rate_limited",
        Outcome::NotSent { .. } => "not_sent",
        Outcome::Ambiguous { .. } => "ambiguous",
    }
}

use CallKind::{Execute as E, Initiate as I};

fn table(p: &Profile, rows: &[(CallKind, u16, &str, &str)]) {
    for (call, http, body, want) in rows {
        let o = answer(*call, *http, body, p);
        assert_eq!(kind(&o), *want, "{call:?} HTTP {http} {body}: {o:?}");
    }
}

#[test]
fn sandbox_envelope() {
    let p = Profile::sandbox();
    let data =
        r#""transactionId":"tx-1","amount":"1500","currency":"XOF","accountId":"+2250700000001""#;
    table(
        &p,
        &[
            (
                I,
                201,
                &format!(
                    r#"{{"status":"success","code":"INITIATED","message":"m","data":{{{data},"status":"INITIATED"}}}}"#
                ),
                "accepted",
            ),
            (
                I,
                200,
                &format!(
                    r#"{{"status":"success","code":"DUPLICATE_IGNORED","data":{{{data},"status":"INITIATED"}}}}"#
                ),
                "accepted",
            ),
            (
                I,
                200,
                &format!(
                    r#"{{"status":"success","code":"DUPLICATE_IGNORED","data":{{{data},"status":"SUCCESS"}}}}"#
                ),
                "accepted",
            ),
            (
                I,
                409,
                r#"{"status":"error","code":"DUPLICATE_TRANSACTION_ID","message":"used"}"#,
                "refused",
            ),
            (
                I,
                422,
                r#"{"status":"error","code":"VALIDATION_ERROR","message":"amount"}"#,
                "refused",
            ),
            (
                E,
                200,
                r#"{"status":"success","code":"SUCCESS","data":{"transactionId":"tx-1","status":"SUCCESS"}}"#,
                "accepted",
            ),
            (
                E,
                200,
                r#"{"status":"success","code":"ALREADY_EXECUTED","data":{"status":"SUCCESS","alreadyExecuted":true}}"#,
                "accepted",
            ),
            (
                E,
                422,
                r#"{"status":"error","code":"INSUFFICIENT_BALANCE","data":{"status":"FAILED","failureCode":"INSUFFICIENT_BALANCE"}}"#,
                "failed",
            ),
            (
                E,
                404,
                r#"{"status":"error","code":"TRANSACTION_NOT_FOUND","message":"no payout"}"#,
                "refused",
            ),
            (
                E,
                404,
                r#"{"status":"error","code":"NOT_FOUND","message":"no such route"}"#,
                "no_route",
            ),
            (E, 404, "", "no_route"),
            (
                E,
                405,
                r#"{"status":"error","code":"METHOD_NOT_ALLOWED"}"#,
                "stop",
            ),
            (
                E,
                401,
                r#"{"status":"error","code":"UNAUTHORIZED","message":"bad key"}"#,
                "unauthorized",
            ),
            (I, 403, "", "unauthorized"),
            (
                E,
                503,
                r#"{"status":"error","code":"SERVICE_UNAVAILABLE"}"#,
                "ambiguous",
            ),
            (
                E,
                500,
                r#"{"status":"error","data":{"status":"FAILED"}}"#,
                "ambiguous",
            ),
            (E, 429, "", "rate_limited"),
        ],
    );
    let o = answer(
        E,
        422,
        r#"{"status":"error","code":"LIMIT_EXCEEDED","data":{"status":"FAILED","failureCode":"LIMIT_EXCEEDED"}}"#,
        &p,
    );
    assert_eq!(o.code(), "LIMIT_EXCEEDED");
    let o = answer(
        I,
        200,
        r#"{"status":"success","code":"DUPLICATE_IGNORED","data":{"status":"INITIATED"}}"#,
        &p,
    );
    assert_eq!(o.code(), "DUPLICATE_IGNORED");
}

/// `{"status":"error"}` with HTTP 200: refused, never executed, under the
/// default profile and under one written for such a provider.
#[test]
fn errors_in_200() {
    let written = profile(
        r#"
status = "/data/status"
result = "/status"
result_error = ["error", "failed"]
executed = ["SUCCESS", "SUCCESSFUL"]
"#,
    );
    for p in [Profile::sandbox(), written] {
        table(
            &p,
            &[
                (
                    E,
                    200,
                    r#"{"status":"error","code":"INSUFFICIENT_BALANCE","message":"low"}"#,
                    "refused",
                ),
                (
                    I,
                    200,
                    r#"{"status":"ERROR","code":"INVALID_ACCOUNT"}"#,
                    "refused",
                ),
                (E, 200, r#"{"status":"success"}"#, "ambiguous"),
                (
                    E,
                    200,
                    r#"{"status":"success","data":{"status":"SUCCESS"}}"#,
                    "accepted",
                ),
                (
                    E,
                    200,
                    r#"{"status":"error","code":"ALREADY_EXECUTED"}"#,
                    "accepted",
                ),
                // An error result with an executed status: contradiction.
                (
                    E,
                    200,
                    r#"{"status":"error","data":{"status":"SUCCESS"}}"#,
                    "ambiguous",
                ),
            ],
        );
        let o = answer(
            E,
            200,
            r#"{"status":"error","code":"INSUFFICIENT_BALANCE"}"#,
            &p,
        );
        assert_eq!(o.code(), "INSUFFICIENT_BALANCE");
    }
}

#[test]
fn flat_bodies() {
    let flat = profile(
        r#"
status = "/status"
code = "/code"
result = ""
failure_code = "/reason"
echo_transaction_id = "/transactionId"
"#,
    );
    table(
        &flat,
        &[
            (
                E,
                200,
                r#"{"status":"FAILED","reason":"RECIPIENT_NOT_FOUND"}"#,
                "failed",
            ),
            (
                E,
                200,
                r#"{"status":"success","transactionId":"tx-1"}"#,
                "accepted",
            ),
            (
                E,
                200,
                r#"{"status":"SUCCESS","transactionId":"tx-2"}"#,
                "mismatch",
            ),
            (E, 200, r#"{"status":"pending"}"#, "not_final"),
            (E, 200, r#"{"status":"WEIRD"}"#, "ambiguous"),
            (
                I,
                201,
                r#"{"status":"INITIATED","transactionId":"tx-1"}"#,
                "accepted",
            ),
        ],
    );
    assert_eq!(
        answer(
            E,
            200,
            r#"{"status":"FAILED","reason":"RECIPIENT_NOT_FOUND"}"#,
            &flat
        )
        .code(),
        "RECIPIENT_NOT_FOUND"
    );
    // The default profile does not know this shape: unknown, never paid.
    table(
        &Profile::sandbox(),
        &[
            (E, 200, r#"{"status":"FAILED"}"#, "ambiguous"),
            (E, 200, r#"{"status":"SUCCESS"}"#, "ambiguous"),
        ],
    );
}

/// MTN MoMo / CinetPay style: 409 on a repeated id.
#[test]
fn conflict_409_on_repeat() {
    let p = profile(r#"duplicate = ["DUPLICATE_IGNORED", "RESOURCE_ALREADY_EXIST"]"#);
    table(
        &p,
        &[
            (
                I,
                409,
                r#"{"code":"RESOURCE_ALREADY_EXIST","message":"Duplicated reference id"}"#,
                "accepted",
            ),
            // On an execute a duplicate says nothing about payment: unknown, not refused.
            (E, 409, r#"{"code":"RESOURCE_ALREADY_EXIST"}"#, "ambiguous"),
            (
                E,
                409,
                r#"{"status":"error","code":"ALREADY_EXECUTED"}"#,
                "accepted",
            ),
            (E, 409, r#"{"code":"SOMETHING_ELSE"}"#, "ambiguous"),
            (E, 409, "<html>conflict</html>", "ambiguous"),
        ],
    );
    // The failure of the issue: a 409 ALREADY_EXECUTED on a first execute
    // is paid, under the default profile too.
    let o = answer(
        E,
        409,
        r#"{"status":"error","code":"ALREADY_EXECUTED","message":"done"}"#,
        &Profile::sandbox(),
    );
    assert_eq!(kind(&o), "accepted");
    assert_eq!(o.code(), "ALREADY_EXECUTED");
}

#[test]
fn not_final_statuses() {
    let p = Profile::sandbox();
    for st in ["PENDING", "processing", "Queued", "received", "otp"] {
        let body = format!(r#"{{"status":"success","code":"OK","data":{{"status":"{st}"}}}}"#);
        let o = answer(E, 200, &body, &p);
        assert!(
            matches!(&o, Outcome::NotFinal { status, .. } if status == st),
            "{st}: {o:?}"
        );
        // On an initiate, a pending transaction is an accepted one.
        assert_eq!(kind(&answer(I, 202, &body, &p)), "accepted", "{st}");
    }
    // The transaction status decides over a generic success code.
    let o = answer(
        E,
        202,
        r#"{"code":"SUCCESS","data":{"status":"PENDING"}}"#,
        &p,
    );
    assert_eq!(kind(&o), "not_final");
}

#[test]
fn failed_and_rejected_transaction_status() {
    let p = Profile::sandbox();
    table(
        &p,
        &[
            (
                E,
                200,
                r#"{"status":"success","code":"OK","data":{"status":"failed"}}"#,
                "failed",
            ),
            (
                E,
                200,
                r#"{"status":"success","code":"OK","data":{"status":"REJECTED","failureCode":"LIMIT"}}"#,
                "failed",
            ),
            // A success code against a failed status: contradiction, unknown.
            (
                E,
                200,
                r#"{"status":"success","code":"SUCCESS","data":{"status":"FAILED"}}"#,
                "ambiguous",
            ),
        ],
    );
}

#[test]
fn redirects_stop_on_both_calls() {
    for http in [301, 302, 303, 307, 308] {
        for call in [I, E, CallKind::Pay] {
            let o = answer(
                call,
                http,
                r#"{"status":"success","data":{"status":"SUCCESS"}}"#,
                &Profile::sandbox(),
            );
            assert_eq!(kind(&o), "redirect", "{call:?} {http}");
        }
    }
}

#[test]
fn unreadable_answers_are_unknown() {
    let p = Profile::sandbox();
    table(
        &p,
        &[
            (E, 200, "OK", "ambiguous"),
            (E, 200, "", "ambiguous"),
            (E, 200, "<html><body>Paid!</body></html>", "ambiguous"),
            (E, 400, "Bad Request", "ambiguous"),
            (E, 422, "[1,2]", "ambiguous"),
            (
                E,
                200,
                r#"{"status":"success","code":"SUCCESS","data":{"status":"COMPLETED"}}"#,
                "ambiguous",
            ),
            (
                E,
                200,
                r#"{"status":"success","code":"SUCCESS"}"#,
                "accepted",
            ),
            (E, 200, r#"{"unrelated":true}"#, "ambiguous"),
            (E, 102, "", "ambiguous"),
        ],
    );
    for body in [Body::TooLarge, Body::Unreadable("reset")] {
        let a = Answer {
            http: 200,
            retry_after: None,
            body,
            received: SystemTime::now(),
        };
        assert_eq!(kind(&classify(E, &SENT, &a, &p)), "ambiguous");
    }
    // A status mapped to `refused` is a refusal even without a body.
    let p = profile("[http]\n\"400\" = \"refused\"");
    assert_eq!(kind(&answer(E, 400, "Bad Request", &p)), "refused");
    assert_eq!(
        kind(&answer(E, 400, r#"{"code":"ALREADY_EXECUTED"}"#, &p)),
        "accepted"
    );
}

#[test]
fn echo_must_match_what_was_sent() {
    let p = Profile::sandbox();
    let body = |id: &str, amount: &str, currency: &str, account: &str| {
        format!(
            r#"{{"status":"success","code":"INITIATED","data":{{"status":"INITIATED","transactionId":"{id}","amount":{amount},"currency":"{currency}","accountId":"{account}"}}}}"#
        )
    };
    let ok = "+2250700000001";
    for (b, want) in [
        (body("tx-1", "\"1500\"", "XOF", ok), None),
        (body("tx-1", "1500", "xof", ok), None),
        (body("tx-1", "\"1500.00\"", "XOF", ok), None),
        (body("tx-9", "\"1500\"", "XOF", ok), Some("transactionId")),
        (body("tx-1", "\"15000\"", "XOF", ok), Some("amount")),
        // Not a number at all: compared as text, so it differs.
        (body("tx-1", "\"1,500\"", "XOF", ok), Some("amount")),
        (body("tx-1", "\"1500\"", "GHS", ok), Some("currency")),
        (
            body("tx-1", "\"1500\"", "XOF", "+2250700000002"),
            Some("account"),
        ),
    ] {
        let o = answer(I, 201, &b, &p);
        match want {
            None => assert_eq!(kind(&o), "accepted", "{b}"),
            Some(f) => assert!(
                matches!(&o, Outcome::Mismatch { field, .. } if *field == f),
                "{b}: {o:?}"
            ),
        }
    }
    let o = answer(
        E,
        200,
        r#"{"code":"SUCCESS","data":{"status":"SUCCESS","transactionId":"tx-2"}}"#,
        &p,
    );
    assert_eq!(kind(&o), "mismatch");
    assert_eq!(o.code(), "ECHO_MISMATCH");
}

#[test]
fn retry_after_seconds_dates_and_cap() {
    let now = SystemTime::now();
    assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
    assert_eq!(
        parse_retry_after(" 0.5 ", now),
        Some(Duration::from_millis(500))
    );
    assert_eq!(parse_retry_after("-1", now), None);
    let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
    let d = parse_retry_after(&later, now).unwrap();
    assert!(
        d <= Duration::from_secs(30) && d >= Duration::from_secs(29),
        "{d:?}"
    );
    assert_eq!(
        parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
        Some(Duration::ZERO)
    );
    let with = |v: &str| {
        classify(
            E,
            &SENT,
            &Answer {
                http: 429,
                retry_after: Some(v),
                body: Body::Complete(b""),
                received: now,
            },
            &Profile::sandbox(),
        )
    };
    assert_eq!(
        with("3"),
        Outcome::RateLimited {
            retry_after: Duration::from_secs(3)
        }
    );
    assert_eq!(
        with("soon"),
        Outcome::RateLimited {
            retry_after: DEFAULT_RETRY_AFTER
        }
    );
    assert!(matches!(
        with("3600"),
        Outcome::Stop {
            kind: StopKind::RetryAfterTooLong,
            ..
        }
    ));
    let far = httpdate::fmt_http_date(now + Duration::from_secs(3600));
    assert!(matches!(
        with(&far),
        Outcome::Stop {
            kind: StopKind::RetryAfterTooLong,
            ..
        }
    ));
}

// ---- client against loopback servers ----

use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Default)]
struct Hits {
    initiates: AtomicUsize,
    executes: AtomicUsize,
    landing: AtomicUsize,
}

/// Serves `/initiates` and `/executes` answering `status` with a Location
/// to `/landing`, which would answer a paid-looking 200 to any method.
async fn redirecting(status: u16, hits: Arc<Hits>) -> String {
    use axum::http::{StatusCode, header::LOCATION};
    use axum::routing::{any, post};
    let code = StatusCode::from_u16(status).unwrap();
    let h1 = hits.clone();
    let h2 = hits.clone();
    let h3 = hits.clone();
    let app = axum::Router::new()
        .route(
            "/initiates",
            post(move || async move {
                h1.initiates.fetch_add(1, Ordering::SeqCst);
                (code, [(LOCATION, "/landing")], "")
            }),
        )
        .route(
            "/executes",
            post(move || async move {
                h2.executes.fetch_add(1, Ordering::SeqCst);
                (code, [(LOCATION, "/landing")], "")
            }),
        )
        .route(
            "/landing",
            any(move || async move {
                h3.landing.fetch_add(1, Ordering::SeqCst);
                r#"{"status":"success","code":"SUCCESS","data":{"status":"SUCCESS"}}"#
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

fn key() -> SecretString {
    SecretString::from("sk_test_secret_123")
}

#[tokio::test]
async fn redirects_are_never_followed() {
    for status in [301, 302, 307, 308] {
        let hits = Arc::new(Hits::default());
        let url = redirecting(status, hits.clone()).await;
        let client = Client::new(&url, &key()).unwrap();
        let o = client
            .execute(&Sent {
                transaction_id: "tx-1",
                ..Sent::default()
            })
            .await;
        assert!(
            matches!(o, Outcome::Stop { kind: StopKind::Redirect, http, .. } if http == status),
            "{status}: {o:?}"
        );
        let req = wire::InitiateRequest {
            transaction_id: "tx-1".into(),
            ..Default::default()
        };
        let o = client.initiate(&req).await;
        assert_eq!(o.code(), "REDIRECT", "{status}");
        assert_eq!(
            hits.executes.load(Ordering::SeqCst),
            1,
            "{status}: one POST"
        );
        assert_eq!(
            hits.initiates.load(Ordering::SeqCst),
            1,
            "{status}: one POST"
        );
        assert_eq!(
            hits.landing.load(Ordering::SeqCst),
            0,
            "{status}: no follow-up"
        );
    }
}

/// A raw HTTP/1.1 server answering every request with `status_line` and
/// `body` (JSON), or with an endless chunked body when `endless`.
async fn raw_server(status_line: &'static str, body: &'static str, endless: bool) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let head = if endless {
                    format!(
                        "{status_line}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                    )
                } else {
                    format!(
                        "{status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    )
                };
                if sock.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                if !endless {
                    let _ = sock.write_all(body.as_bytes()).await;
                    return;
                }
                let chunk = format!("400\r\n{}\r\n", "x".repeat(1024));
                // Stops when the client hangs up (it must, at the cap).
                while sock.write_all(chunk.as_bytes()).await.is_ok() {}
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn endless_body_is_cut_at_the_cap() {
    let url = raw_server("HTTP/1.1 200 OK", "", true).await;
    let o = Client::new(&url, &key())
        .unwrap()
        .execute(&Sent {
            transaction_id: "tx-1",
            ..Sent::default()
        })
        .await;
    assert!(
        matches!(&o, Outcome::Ambiguous { detail } if detail.contains("size cap")),
        "{o:?}"
    );
}

#[tokio::test]
async fn echoed_key_is_redacted() {
    let url = raw_server(
        "HTTP/1.1 401 Unauthorized",
        r#"{"status":"error","message":"rejected header Authorization: Bearer sk_test_secret_123"}"#,
        false,
    )
    .await;
    let o = Client::new(&url, &key())
        .unwrap()
        .execute(&Sent {
            transaction_id: "tx-1",
            ..Sent::default()
        })
        .await;
    assert!(
        matches!(o, Outcome::Unauthorized { http: 401, .. }),
        "{o:?}"
    );
    assert!(!format!("{o:?}").contains("sk_test_secret_123"), "{o:?}");
    assert!(o.message().contains("<redacted>"), "{o:?}");
}

#[test]
fn client_checks_base_url_and_hides_key() {
    let c = Client::new("http://127.0.0.1:1/", &SecretString::from("sk_live_secret")).unwrap();
    assert!(!format!("{c:?}").contains("sk_live_secret"));
    assert_eq!(c.base_url(), "http://127.0.0.1:1");
    let e = Client::new("http://api.example", &key()).unwrap_err();
    assert!(format!("{e:#}").contains("https"), "{e:#}");
    let e = Client::new("https://u:pw@api.example", &key()).unwrap_err();
    assert!(!format!("{e:#}").contains("pw@"), "{e:#}");
}

/// Every TOML example of `docs/provider.md` is a valid configuration, and
/// worked example 2 classifies its sample answers as the page says.
#[test]
fn documented_examples_hold() {
    let doc = include_str!("../../docs/provider.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(blocks.len() >= 5);
    let mut profiles = Vec::new();
    for b in &blocks {
        let cfg = crate::config::Config::parse(b).unwrap_or_else(|e| panic!("{e:#}\n{b}"));
        if cfg.provider.is_some() {
            profiles.push(cfg.profile().unwrap_or_else(|e| panic!("{e:#}\n{b}")));
        }
    }
    assert!(
        profiles.contains(&Profile::sandbox()),
        "worked example 1 must be the built-in profile written out"
    );
    let ex2 = profiles
        .iter()
        .find(|p| p.status.as_deref() == Some("/data/state"))
        .unwrap();
    let sent = Sent {
        transaction_id: "pay-001",
        ..SENT
    };
    let run = |call, body: &str| {
        let a = Answer {
            http: 200,
            retry_after: None,
            body: Body::Complete(body.as_bytes()),
            received: SystemTime::now(),
        };
        kind(&classify(call, &sent, &a, ex2))
    };
    assert_eq!(
        run(
            E,
            r#"{"status":"error","code":"INSUFFICIENT_BALANCE","message":"x"}"#
        ),
        "refused"
    );
    assert_eq!(
        run(
            E,
            r#"{"status":"success","code":"00","data":{"reference":"pay-001","state":"SUCCESSFUL"}}"#
        ),
        "accepted"
    );
    assert_eq!(
        run(
            E,
            r#"{"status":"success","code":"00","data":{"reference":"pay-001","state":"PROCESSING"}}"#
        ),
        "not_final"
    );
    assert_eq!(
        run(I, r#"{"status":"error","code":"DUPLICATE_REFERENCE"}"#),
        "accepted"
    );
    assert_eq!(
        run(E, r#"{"status":"error","code":"DUPLICATE_REFERENCE"}"#),
        "ambiguous"
    );
    assert_eq!(
        run(
            E,
            r#"{"status":"success","code":"00","data":{"reference":"pay-001"}}"#
        ),
        "ambiguous"
    );
    assert_eq!(
        run(
            E,
            r#"{"status":"success","code":"00","data":{"reference":"pay-002","state":"SUCCESSFUL"}}"#
        ),
        "mismatch"
    );
}

/// Some providers answer booleans (`"success": false`): they are read as
/// the words `true` and `false`, like strings and numbers.
#[test]
fn boolean_fields_are_read_as_words() {
    let p = profile(
        r#"
status = "/data/status"
code = "/code"
result = "/success"
result_error = ["false"]
"#,
    );
    table(
        &p,
        &[(
            E,
            200,
            r#"{"success":false,"code":"SOMETHING_ELSE"}"#,
            "refused",
        )],
    );
}

/// A failure status with a failure code is a failure, not a conflict: only
/// a success word against a failure word conflicts.
#[test]
fn failure_words_in_both_fields_agree() {
    let flat = profile(
        r#"
status = "/status"
code = "/code"
result = ""
failure_code = "/reason"
"#,
    );
    table(
        &flat,
        &[
            (E, 200, r#"{"status":"FAILED","code":"DECLINED"}"#, "failed"),
            (
                E,
                200,
                r#"{"status":"SUCCESS","code":"DECLINED"}"#,
                "ambiguous",
            ),
        ],
    );
}
