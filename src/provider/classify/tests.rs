//! Classification rules guarded one by one (the provider-dialect tables
//! are in `provider/tests.rs`): what an ambiguous answer tells the
//! operator, the `Retry-After` cap, statuses that never read the body, the
//! `refused` HTTP rule, `/pay` answers and where a stop points.

use super::*;
use crate::provider::outcome::{Outcome, StopKind};
use crate::provider::profile::Profile;
use crate::provider::tests::{SENT, answer, profile};
use std::time::SystemTime;

fn detail(o: &Outcome) -> &str {
    match o {
        Outcome::Ambiguous { detail } | Outcome::Stop { detail, .. } => detail,
        other => panic!("not ambiguous nor a stop: {other:?}"),
    }
}

/// An ambiguous answer is held as `unknown`; its detail is what the
/// operator reads in the report to decide: the HTTP status, the status and
/// code the answer carried, its message, and why it matched no paid or
/// failed rule.
#[test]
fn ambiguous_answers_say_what_was_read_and_why() {
    let p = Profile::sandbox();
    let cases = [
        (
            503,
            r#"{"status":"error","code":"SERVICE_UNAVAILABLE","message":"down for maintenance"}"#,
            "HTTP 503 SERVICE_UNAVAILABLE: down for maintenance",
        ),
        // No message: no trailing colon.
        (
            502,
            r#"{"code":"BAD_GATEWAY","data":{"status":"PROCESSING"}}"#,
            "HTTP 502 PROCESSING BAD_GATEWAY",
        ),
        (
            200,
            r#"{"status":"success","code":"DUPLICATE_IGNORED","message":"seen"}"#,
            "HTTP 200 DUPLICATE_IGNORED: seen: a duplicate acknowledgement says nothing about payment",
        ),
        (
            200,
            r#"{"status":"success","code":"SUCCESS","data":{"status":"FAILED"}}"#,
            "HTTP 200 FAILED SUCCESS: success and failure at once",
        ),
        (
            200,
            r#"{"status":"success","data":{"status":"COMPLETED"}}"#,
            "HTTP 200 COMPLETED: status \"COMPLETED\" matches no rule of the provider profile",
        ),
        (
            200,
            r#"{"unrelated":true}"#,
            "HTTP 200: the answer matches no rule of the provider profile",
        ),
    ];
    for (http, body, want) in cases {
        let o = answer(CallKind::Execute, http, body, &p);
        assert_eq!(detail(&o), want, "{http} {body}");
    }
}

/// A `Retry-After` of exactly the cap is waited; one second more stops the
/// run.
#[test]
fn retry_after_at_the_cap_is_waited() {
    let with = |v: &str| {
        let a = Answer {
            http: 429,
            retry_after: Some(v),
            body: Body::Complete(b""),
            received: SystemTime::now(),
        };
        classify(CallKind::Execute, &SENT, &a, &Profile::sandbox())
    };
    let cap = MAX_RETRY_AFTER.as_secs();
    assert_eq!(
        with(&cap.to_string()),
        Outcome::RateLimited {
            retry_after: MAX_RETRY_AFTER
        }
    );
    assert!(matches!(
        with(&(cap + 1).to_string()),
        Outcome::Stop {
            kind: StopKind::RetryAfterTooLong,
            http: 429,
            ..
        }
    ));
}

/// 408 and 425 say the request may have been carried out: ambiguous even
/// when the body reads as an error or a failed transaction, never refused
/// (a refusal would let the payout be paid again under a new id).
#[test]
fn timeouts_and_too_early_are_ambiguous_whatever_the_body() {
    let p = Profile::sandbox();
    for http in [408, 425, 500, 504] {
        for body in [
            r#"{"status":"error","code":"REQUEST_TIMEOUT"}"#,
            r#"{"status":"error","data":{"status":"FAILED","failureCode":"TIMEOUT"}}"#,
        ] {
            let o = answer(CallKind::Execute, http, body, &p);
            assert!(
                matches!(o, Outcome::Ambiguous { .. }),
                "{http} {body}: {o:?}"
            );
        }
    }
}

/// A 405, or a status the profile maps to `misconfigured`, stops the run
/// whatever its body (JSON or not), naming the call's path.
#[test]
fn misconfigured_stops_with_or_without_a_json_body() {
    let mapped = profile("[http]\n\"400\" = \"misconfigured\"");
    let cases = [
        (CallKind::Execute, 405, "", Profile::sandbox(), "/executes"),
        (
            CallKind::Initiate,
            405,
            "<html>Method Not Allowed</html>",
            Profile::sandbox(),
            "/initiates",
        ),
        (CallKind::Pay, 400, "Bad Request", mapped.clone(), "/pay"),
        (
            CallKind::Initiate,
            400,
            r#"{"status":"error","code":"X"}"#,
            mapped,
            "/initiates",
        ),
    ];
    for (call, http, body, p, path) in cases {
        let o = answer(call, http, body, &p);
        assert!(
            matches!(o, Outcome::Stop { kind: StopKind::Misconfigured, http: h, .. } if h == http),
            "{call:?} {http} {body}: {o:?}"
        );
        assert!(
            detail(&o).starts_with(&format!("HTTP {http} on {path}: ")),
            "{o:?}"
        );
    }
}

/// A 404 that is not "no such transaction" stops the run and names the
/// path that is wrong.
#[test]
fn no_route_names_the_path() {
    for (call, path) in [
        (CallKind::Initiate, "/initiates"),
        (CallKind::Execute, "/executes"),
        (CallKind::Pay, "/pay"),
    ] {
        let o = answer(call, 404, "", &Profile::sandbox());
        assert!(
            matches!(
                o,
                Outcome::Stop {
                    kind: StopKind::NoSuchRoute,
                    http: 404,
                    ..
                }
            ),
            "{o:?}"
        );
        assert_eq!(
            detail(&o),
            format!("HTTP 404 on {path}: no such route at the provider; check base_url")
        );
    }
}

/// A status mapped to `refused` refuses the call unless the body says
/// paid, duplicate or pending; a failed transaction in it is a failure
/// (with its failure code), anything else a refusal of the call only.
#[test]
fn the_refused_rule_reads_the_body_first() {
    let p = profile("[http]\n\"400\" = \"refused\"");
    let o = answer(
        CallKind::Execute,
        400,
        r#"{"code":"AMOUNT_TOO_LARGE","message":"too big"}"#,
        &p,
    );
    assert_eq!(
        o,
        Outcome::Refused {
            http: 400,
            code: "AMOUNT_TOO_LARGE".into(),
            message: "too big".into(),
            transaction_failed: false,
        }
    );
    let o = answer(
        CallKind::Execute,
        400,
        r#"{"data":{"status":"FAILED","failureCode":"LIMIT"}}"#,
        &p,
    );
    assert_eq!(
        o,
        Outcome::Refused {
            http: 400,
            code: "LIMIT".into(),
            message: String::new(),
            transaction_failed: true,
        }
    );
    let o = answer(
        CallKind::Execute,
        400,
        r#"{"data":{"status":"PENDING"}}"#,
        &p,
    );
    assert!(matches!(o, Outcome::NotFinal { .. }), "{o:?}");
}

/// `/pay`: a readable 2xx answer that is not a failure is accepted (the
/// provider's page for the cardholder); a 4xx that names no failure is
/// ambiguous, never accepted.
#[test]
fn pay_accepts_only_a_2xx_answer() {
    let p = Profile::sandbox();
    let o = answer(
        CallKind::Pay,
        200,
        r#"{"status":"success","code":"OK","message":"open the 3-D Secure page"}"#,
        &p,
    );
    assert!(
        matches!(&o, Outcome::Accepted { code, .. } if code == "OK"),
        "{o:?}"
    );
    let o = answer(
        CallKind::Pay,
        402,
        r#"{"code":"CARD_CHECK","message":"see data"}"#,
        &p,
    );
    assert!(matches!(o, Outcome::Ambiguous { .. }), "{o:?}");
}

/// Only `/pay`'s caller reads the answer's `data`; the payout calls'
/// outcomes do not carry it (nothing of it is stored for a payout).
#[test]
fn only_pay_keeps_the_answers_data() {
    let p = Profile::sandbox();
    let body = r#"{"status":"success","code":"SUCCESS","data":{"status":"SUCCESS","transactionId":"tx-1","amount":"1500","list":[1,{"a":null}]}}"#;
    let data = serde_json::json!({
        "status": "SUCCESS", "transactionId": "tx-1", "amount": "1500", "list": [1, {"a": null}]
    });
    let o = answer(CallKind::Pay, 200, body, &p);
    assert!(
        matches!(&o, Outcome::Accepted { code, data: Some(d), .. } if code == "SUCCESS" && *d == data),
        "{o:?}"
    );
    let o = answer(CallKind::Execute, 200, body, &p);
    assert!(
        matches!(&o, Outcome::Accepted { code, status: Some(s), data: None, .. } if code == "SUCCESS" && s == "SUCCESS"),
        "{o:?}"
    );
    let body = r#"{"status":"success","code":"INITIATED","data":{"status":"INITIATED","transactionId":"tx-1"}}"#;
    let o = answer(CallKind::Initiate, 201, body, &p);
    assert!(
        matches!(&o, Outcome::Accepted { code, data: None, .. } if code == "INITIATED"),
        "{o:?}"
    );
}

/// A key the answer is read by, given twice (a status, a code, a `data`
/// object, anything inside a value taken whole), makes it contradictory
/// for every call and every status that reads the body: `Contradictory`
/// naming the key, never paid, never failed, never refused. Statuses
/// decided without the body keep their meaning.
#[test]
fn a_key_given_twice_is_contradictory() {
    let p = Profile::sandbox();
    let refusing = profile("[http]\n\"400\" = \"refused\"");
    let bodies = [
        (
            r#"{"status":"success","code":"SUCCESS","data":{"transactionId":"tx-1","status":"FAILED","status":"SUCCESS"}}"#,
            "/data/status",
        ),
        (
            r#"{"status":"success","code":"SUCCESS","data":{"status":"FAILED","transactionId":"tx-1"},"data":{"status":"SUCCESS","transactionId":"tx-1"}}"#,
            "/data",
        ),
        (
            r#"{"status":"success","code":"FAILED","code":"SUCCESS"}"#,
            "/code",
        ),
        (
            r#"{"status":"error","status":"success","code":"SUCCESS"}"#,
            "/status",
        ),
        (
            r#"{"code":"SUCCESS","data":{"status":"SUCCESS","amount":"1500","amount":"999999"}}"#,
            "/data/amount",
        ),
        (
            r#"{"code":"SUCCESS","message":"a","message":"b"}"#,
            "/message",
        ),
    ];
    for (body, key) in bodies {
        for call in [CallKind::Initiate, CallKind::Execute, CallKind::Pay] {
            for (http, p) in [(200, &p), (201, &p), (422, &p), (404, &p), (400, &refusing)] {
                let o = answer(call, http, body, p);
                assert_eq!(
                    o,
                    Outcome::Contradictory {
                        http,
                        key: key.into()
                    },
                    "{call:?} {http} {body}"
                );
                assert_eq!(o.code(), "DUPLICATE_KEY");
                assert!(o.message().contains(key), "{}", o.message());
            }
        }
    }
    // Inside `/pay`'s data, taken whole: any key, at any depth.
    let body = r#"{"code":"OK","data":{"redirect":{"url":"a","url":"b"}}}"#;
    assert_eq!(
        answer(CallKind::Pay, 200, body, &p),
        Outcome::Contradictory {
            http: 200,
            key: "/data/redirect/url".into()
        }
    );
    assert!(matches!(
        answer(
            CallKind::Execute,
            200,
            r#"{"code":"SUCCESS","data":{"status":"SUCCESS","x":1,"x":2}}"#,
            &p
        ),
        Outcome::Accepted { .. }
    ));
    // Decided by the status alone, or by its rule before the body.
    let body = r#"{"code":"FAILED","code":"SUCCESS"}"#;
    let o = answer(CallKind::Execute, 503, body, &p);
    assert_eq!(
        detail(&o),
        "HTTP 503 with a body that gives /code twice",
        "{o:?}"
    );
    assert!(matches!(
        answer(CallKind::Execute, 401, body, &p),
        Outcome::Unauthorized { http: 401, .. }
    ));
    assert!(matches!(
        answer(CallKind::Execute, 405, body, &p),
        Outcome::Stop {
            kind: StopKind::Misconfigured,
            ..
        }
    ));
    assert!(matches!(
        answer(CallKind::Execute, 302, body, &p),
        Outcome::Stop {
            kind: StopKind::Redirect,
            ..
        }
    ));
    assert!(matches!(
        answer(CallKind::Execute, 429, body, &p),
        Outcome::RateLimited { .. }
    ));
    // A mapped 404 reads its body too.
    let mapped = profile("[http]\n\"404\" = \"refused\"");
    assert!(matches!(
        answer(CallKind::Execute, 404, body, &mapped),
        Outcome::Contradictory { .. }
    ));
    // Not JSON after the repeat: not JSON.
    let o = answer(
        CallKind::Execute,
        200,
        r#"{"code":"FAILED","code":"SUCCESS""#,
        &p,
    );
    assert_eq!(detail(&o), "HTTP 200 with a body that is not JSON");
}

/// Under another provider's profile (flat bodies, its own pointers) the
/// same rule: a key its pointers read given twice is contradictory, an
/// echo of another amount is a mismatch, a look-alike word is unknown.
#[test]
fn a_flat_profile_reads_by_the_same_rules() {
    let flat = profile(
        "status = \"/state\"\ncode = \"/code\"\nresult = \"\"\n\
         echo_transaction_id = \"/id\"\necho_amount = \"/amount\"",
    );
    let o = answer(
        CallKind::Execute,
        200,
        r#"{"id":"tx-1","state":"FAILED","state":"SUCCESS"}"#,
        &flat,
    );
    assert_eq!(
        o,
        Outcome::Contradictory {
            http: 200,
            key: "/state".into()
        }
    );
    let o = answer(
        CallKind::Execute,
        200,
        r#"{"id":"tx-1","state":"SUCCESS","amount":"999999"}"#,
        &flat,
    );
    assert_eq!(o.code(), "ECHO_MISMATCH", "{o:?}");
    let o = answer(
        CallKind::Execute,
        200,
        "{\"id\":\"tx-1\",\"state\":\"\u{17f}uccess\"}",
        &flat,
    );
    assert!(matches!(o, Outcome::Ambiguous { .. }), "{o:?}");
    assert!(matches!(
        answer(
            CallKind::Execute,
            200,
            r#"{"id":"tx-1","state":"success","amount":"1500.0"}"#,
            &flat
        ),
        Outcome::Accepted { .. }
    ));
}

/// Every answer that says what became of the transaction — paid, already
/// paid, failed, refused, not final — must be about the payout asked
/// about: its echoed id, amount, currency and account, for `/executes` as
/// for `/initiates` (and `/pay`, which sends no account).
#[test]
fn every_answer_is_checked_against_the_payout() {
    let p = Profile::sandbox();
    let data = |status: &str, field: &str, value: &str| {
        let mut d = serde_json::json!({
            "transactionId": "tx-1", "amount": "1500", "currency": "XOF",
            "accountId": "+2250700000001", "status": status
        });
        d[field] = serde_json::Value::from(value);
        serde_json::json!({"status": "success", "code": status, "data": d}).to_string()
    };
    let echoed = [
        ("amount", "999999"),
        ("currency", "EUR"),
        ("accountId", "+2250700000009"),
        ("transactionId", "tx-2"),
    ];
    for (field, value) in echoed {
        let shown = if field == "accountId" {
            "account"
        } else {
            field
        };
        for (call, http, status) in [
            (CallKind::Execute, 200, "SUCCESS"),
            (CallKind::Execute, 200, "ALREADY_EXECUTED"),
            (CallKind::Execute, 422, "FAILED"),
            (CallKind::Execute, 202, "PENDING"),
            (CallKind::Initiate, 201, "INITIATED"),
            (CallKind::Initiate, 422, "FAILED"),
            (CallKind::Pay, 200, "SUCCESS"),
        ] {
            if call == CallKind::Pay && field == "accountId" {
                continue;
            }
            let body = data(status, field, value);
            let o = answer(call, http, &body, &p);
            assert!(
                matches!(&o, Outcome::Mismatch { field: f, got, .. } if *f == shown && got == value),
                "{call:?} {status} {field}: {o:?}"
            );
            assert_eq!(o.code(), "ECHO_MISMATCH");
        }
    }
    // The same answers about our payout are what they say.
    let ok = |status: &str| data(status, "amount", "1500.00");
    assert!(matches!(
        answer(CallKind::Execute, 200, &ok("SUCCESS"), &p),
        Outcome::Accepted { .. }
    ));
    assert!(matches!(
        answer(CallKind::Execute, 422, &ok("FAILED"), &p),
        Outcome::Refused {
            transaction_failed: true,
            ..
        }
    ));
    assert!(matches!(
        answer(CallKind::Execute, 202, &ok("PENDING"), &p),
        Outcome::NotFinal { .. }
    ));
    // A refusal of the call echoing another payout is not ours either.
    let body = r#"{"status":"error","code":"LIMIT","data":{"transactionId":"tx-1","amount":"7"}}"#;
    assert!(matches!(
        answer(CallKind::Execute, 400, body, &p),
        Outcome::Mismatch {
            field: "amount",
            ..
        }
    ));
    // An execute of an id alone checks the id alone.
    let body = data("SUCCESS", "amount", "999999");
    let a = Answer {
        http: 200,
        retry_after: None,
        body: Body::Complete(body.as_bytes()),
        received: SystemTime::now(),
    };
    let id_only = Sent {
        transaction_id: "tx-1",
        ..Sent::default()
    };
    assert!(matches!(
        classify(CallKind::Execute, &id_only, &a, &p),
        Outcome::Accepted { .. }
    ));
    // Unknown answers stay unknown (no echo to trust either way).
    let body = data("COMPLETED", "amount", "999999");
    assert!(matches!(
        answer(CallKind::Execute, 200, &body, &p),
        Outcome::Ambiguous { .. }
    ));
}

/// Status words compare in any ASCII case and otherwise exactly: a word
/// that only folds to a known one under Unicode rules (long s, dotless i,
/// a zero-width space, a non-ASCII space around it) is unknown, never paid.
#[test]
fn status_words_match_in_ascii_case_only() {
    let p = Profile::sandbox();
    let with = |status: &str, code: &str| {
        let body = serde_json::json!({
            "status": "success", "code": code,
            "data": {"transactionId": "tx-1", "status": status}
        });
        answer(CallKind::Execute, 200, &body.to_string(), &p)
    };
    for paid in ["SUCCESS", "success", "SuCcEsS", " success "] {
        assert!(
            matches!(with(paid, "X"), Outcome::Accepted { .. }),
            "{paid:?}"
        );
    }
    for word in [
        "\u{17f}uccess",
        "\u{17f}UCCESS",
        "SUCCESS\u{200b}",
        "\u{a0}SUCCESS",
        "SUCCESS\u{3000}",
        "\u{ff33}UCCESS",
    ] {
        let o = with(word, "X");
        assert!(
            matches!(&o, Outcome::Ambiguous { detail } if detail.contains("matches no rule")),
            "{word:?}: {o:?}"
        );
    }
    // The code alone, and the failure words, follow the same rule.
    let body = r#"{"status":"success","code":"already_executed"}"#;
    assert!(matches!(
        answer(CallKind::Execute, 200, body, &p),
        Outcome::Accepted { .. }
    ));
    let body = "{\"status\":\"success\",\"code\":\"\u{17f}uccess\"}";
    assert!(matches!(
        answer(CallKind::Execute, 200, body, &p),
        Outcome::Ambiguous { .. }
    ));
    let body = "{\"data\":{\"status\":\"\u{131}n\u{131}t\u{131}ated\"}}";
    assert!(matches!(
        answer(CallKind::Initiate, 201, body, &p),
        Outcome::Ambiguous { .. }
    ));
    assert!(matches!(
        with("Failed", "X"),
        Outcome::Refused {
            transaction_failed: true,
            ..
        }
    ));
    assert!(matches!(with("FAİLED", "X"), Outcome::Ambiguous { .. }));
    // A result word too: "ERROR" in any ASCII case refuses, "\u{212a}" (Kelvin) is no K.
    let body = r#"{"status":"Error","code":"LIMIT"}"#;
    assert!(matches!(
        answer(CallKind::Execute, 400, body, &p),
        Outcome::Refused { .. }
    ));
    let body = "{\"status\":\"\u{212a}O\"}";
    let pk = profile("result_error = [\"KO\"]");
    assert!(matches!(
        answer(CallKind::Execute, 200, body, &pk),
        Outcome::Ambiguous { .. }
    ));
    assert!(matches!(
        answer(CallKind::Execute, 200, r#"{"status":"ko"}"#, &pk),
        Outcome::Refused { .. }
    ));
}

/// Two fields of the profile may point at the same place; each reads it.
#[test]
fn two_fields_at_one_pointer_both_read_it() {
    let p = profile("code = \"/data/status\"\nmessage = \"/data/status\"\n");
    let o = answer(
        CallKind::Execute,
        200,
        r#"{"code":"IGNORED","data":{"status":"SUCCESS"}}"#,
        &p,
    );
    assert!(
        matches!(&o, Outcome::Accepted { code, message, status: Some(s), .. }
            if code == "SUCCESS" && message == "SUCCESS" && s == "SUCCESS"),
        "{o:?}"
    );
}
