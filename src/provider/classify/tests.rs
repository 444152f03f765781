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

/// A key given twice counts with its last value, whole, as a parsed
/// `Value` has it: the first `data` says nothing any more.
#[test]
fn a_repeated_key_counts_with_its_last_value() {
    let p = Profile::sandbox();
    let body = r#"{"code":"SUCCESS","data":{"status":"FAILED","failureCode":"LIMIT"},"data":{"status":"SUCCESS","transactionId":"tx-1"}}"#;
    let o = answer(CallKind::Execute, 200, body, &p);
    assert!(matches!(&o, Outcome::Accepted { .. }), "{o:?}");
    let o = answer(CallKind::Pay, 200, body, &p);
    assert!(
        matches!(&o, Outcome::Accepted { data: Some(d), .. }
            if *d == serde_json::json!({"status": "SUCCESS", "transactionId": "tx-1"})),
        "{o:?}"
    );
    let body = r#"{"code":"SUCCESS","data":{"status":"SUCCESS"},"data":"gone"}"#;
    let o = answer(CallKind::Execute, 200, body, &p);
    assert!(
        matches!(&o, Outcome::Accepted { status: None, .. }),
        "{o:?}"
    );
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
