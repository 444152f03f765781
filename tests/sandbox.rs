//! End-to-end tests of the provider sandbox: each starts one in-process on
//! 127.0.0.1:0 (or spawns `payrun sandbox`) and talks to it over HTTP with
//! reqwest, checking every rule of DESIGN.md section 6 and issue 3.

use std::collections::BTreeSet;

use payrun::sandbox::{self, LedgerSnapshot, Running, SandboxConfig, magic};
use reqwest::{Client, StatusCode};
use rust_decimal::Decimal;
use serde_json::{Value, json};

const KEY: &str = sandbox::DEFAULT_API_KEY;
/// An enrolled card, a non-enrolled one, and an expiry in the future.
const ENROLLED: &str = "4000000000003220";
const NOT_ENROLLED: &str = "4242424242424242";
const FUTURE_YY: &str = "99";

/// What one call got back: an answer, or a connection cut without one.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Answer {
        status: StatusCode,
        retry_after: Option<String>,
        www_authenticate: Option<String>,
        body: Value,
    },
    Cut,
}

impl Outcome {
    fn status(&self) -> Option<StatusCode> {
        match self {
            Outcome::Answer { status, .. } => Some(*status),
            Outcome::Cut => None,
        }
    }

    fn body(&self) -> &Value {
        match self {
            Outcome::Answer { body, .. } => body,
            Outcome::Cut => panic!("the connection was cut; no body"),
        }
    }

    fn code(&self) -> &str {
        self.body()["code"].as_str().unwrap_or_default()
    }

    /// Status, or 0 for a cut: a compact form to compare sequences.
    fn key(&self) -> u16 {
        self.status().map_or(0, |s| s.as_u16())
    }
}

struct Sandbox {
    running: Running,
    client: Client,
    base: String,
}

async fn sandbox(config: SandboxConfig) -> Sandbox {
    let running = sandbox::start(config).await.expect("sandbox starts");
    let base = running.base_url();
    Sandbox {
        running,
        client: Client::new(),
        base,
    }
}

fn default_sandbox() -> impl Future<Output = Sandbox> {
    sandbox(SandboxConfig::default())
}

fn with_wallets(wallets: &[(&str, i64)]) -> SandboxConfig {
    SandboxConfig {
        wallets: wallets
            .iter()
            .map(|(c, b)| (c.to_string(), Decimal::from(*b)))
            .collect(),
        ..SandboxConfig::default()
    }
}

fn initiate_body(id: &str, amount: &str, currency: &str, account: &str) -> Value {
    json!({
        "transactionId": id,
        "amount": amount,
        "currency": currency,
        "payoutMethodId": "momo",
        "description": "March salary",
        "accountId": account,
        "sender": {"email": "payroll@acme.example", "firstname": "Acme", "lastname": "Payroll",
                   "address": "1 Rue du Commerce", "phone": "+2250700000000"},
        "beneficiary": {"firstname": "Awa", "lastname": "Koné", "phone": "+2250700000001",
                        "email": "awa@example.com"}
    })
}

fn pay_body(id: &str, card: &str, currency: &str, amount: &str) -> Value {
    json!({
        "transaction_id": id,
        "merchant_id": "merchant-1",
        "currency": currency,
        "payment_method_id": "card",
        "amount": amount,
        "payment_details": {
            "momo_number": "+2250700000002",
            "otp": "OTP-SECRET-771",
            "customer_email": "payer@example.com",
            "customer_firstname": "Kofi",
            "customer_lastname": "Mensah",
            "description": "Order 42",
            "card_number": card,
            "card_cvv": "9876",
            "expiry_month": "12",
            "expiry_year": FUTURE_YY,
            "name_on_card": "KOFI MENSAH"
        }
    })
}

impl Sandbox {
    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Outcome {
        match req.send().await {
            Err(_) => Outcome::Cut,
            Ok(resp) => {
                let status = resp.status();
                let header = |name: &str| {
                    resp.headers()
                        .get(name)
                        .map(|v| v.to_str().unwrap().to_owned())
                };
                let retry_after = header("retry-after");
                let www_authenticate = header("www-authenticate");
                match resp.bytes().await {
                    Err(_) => Outcome::Cut,
                    Ok(bytes) => Outcome::Answer {
                        status,
                        retry_after,
                        www_authenticate,
                        body: serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                            panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&bytes))
                        }),
                    },
                }
            }
        }
    }

    /// POST with the headers provider-api.md names for the path.
    async fn post(&self, path: &str, body: &Value) -> Outcome {
        self.post_with_key(path, Some(KEY), body).await
    }

    async fn post_with_key(&self, path: &str, key: Option<&str>, body: &Value) -> Outcome {
        let mut req = self
            .client
            .post(self.url(path))
            .header("Content-Type", "application/json")
            .body(serde_json::to_vec(body).unwrap());
        req = if path == "/pay" {
            req.header("X-Requested-With", "XMLHttpRequest")
        } else {
            req.header("Accept", "application/json")
        };
        if let Some(key) = key {
            req = req.bearer_auth(key);
        }
        self.send(req).await
    }

    async fn initiate(&self, id: &str, amount: &str, account: &str) -> Outcome {
        self.post("/initiates", &initiate_body(id, amount, "XOF", account))
            .await
    }

    async fn execute(&self, id: &str) -> Outcome {
        self.post("/executes", &json!({ "transactionId": id }))
            .await
    }

    /// The ledger over HTTP, checked against the in-process view.
    async fn ledger(&self) -> LedgerSnapshot {
        let resp = self
            .client
            .get(self.url("/_sandbox/ledger"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let over_http: LedgerSnapshot = resp.json().await.unwrap();
        assert_eq!(over_http, self.running.ledger());
        over_http
    }

    /// `GET /status/{id}` with the key.
    async fn status(&self, id: &str) -> Outcome {
        let req = self
            .client
            .get(self.url(&format!("/status/{id}")))
            .header("Accept", "application/json")
            .bearer_auth(KEY);
        self.send(req).await
    }

    /// A `/_sandbox/` control call with the key.
    async fn control(&self, path: &str, body: Value) -> Outcome {
        let req = self
            .client
            .post(self.url(path))
            .bearer_auth(KEY)
            .json(&body);
        self.send(req).await
    }

    async fn ledger_text(&self) -> String {
        let resp = self
            .client
            .get(self.url("/_sandbox/ledger"))
            .send()
            .await
            .unwrap();
        resp.text().await.unwrap()
    }
}

fn assert_envelope(o: &Outcome, status: StatusCode, code: &str) {
    assert_eq!(o.status(), Some(status), "{o:?}");
    let body = o.body();
    let expected = if status.is_success() {
        "success"
    } else {
        "error"
    };
    assert_eq!(body["status"], expected, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert!(body["message"].is_string(), "{body}");
    assert!(body.get("data").is_some(), "{body}");
}

fn field_names(o: &Outcome) -> BTreeSet<String> {
    o.body()["data"]["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("no data.fields: {o:?}"))
        .iter()
        .map(|f| f["field"].as_str().unwrap().to_owned())
        .collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------- envelope

#[tokio::test]
async fn missing_or_wrong_key_is_401_with_the_envelope() {
    let sb = default_sandbox().await;
    let body = initiate_body("tx-1", "100", "XOF", "2250700000001");
    for key in [None, Some("sk_wrong"), Some("")] {
        let o = sb.post_with_key("/initiates", key, &body).await;
        assert_envelope(&o, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
        if let Outcome::Answer {
            www_authenticate, ..
        } = &o
        {
            assert_eq!(www_authenticate.as_deref(), Some("Bearer"));
        }
    }
    let o = sb
        .post_with_key("/executes", Some("nope"), &json!({"transactionId": "tx-1"}))
        .await;
    assert_envelope(&o, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    assert!(sb.ledger().await.transactions.is_empty());
}

#[tokio::test]
async fn a_custom_key_is_the_only_one_accepted() {
    let sb = sandbox(SandboxConfig {
        api_key: "sk_custom".into(),
        ..SandboxConfig::default()
    })
    .await;
    let body = initiate_body("tx-1", "100", "XOF", "2250700000001");
    let o = sb.post_with_key("/initiates", Some(KEY), &body).await;
    assert_envelope(&o, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    let o = sb
        .post_with_key("/initiates", Some("sk_custom"), &body)
        .await;
    assert_envelope(&o, StatusCode::CREATED, "INITIATED");
}

#[tokio::test]
async fn malformed_json_is_400_with_the_envelope() {
    let sb = default_sandbox().await;
    for (path, raw) in [
        ("/initiates", "{\"transactionId\": "),
        ("/executes", "not json"),
        ("/pay", ""),
    ] {
        let req = sb
            .client
            .post(sb.url(path))
            .bearer_auth(KEY)
            .header("Content-Type", "application/json")
            .header("X-Requested-With", "XMLHttpRequest")
            .body(raw);
        let o = sb.send(req).await;
        assert_envelope(&o, StatusCode::BAD_REQUEST, "MALFORMED_JSON");
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_use_the_envelope() {
    let sb = default_sandbox().await;
    let o = sb.send(sb.client.get(sb.url("/nope"))).await;
    assert_envelope(&o, StatusCode::NOT_FOUND, "NOT_FOUND");
    let o = sb.send(sb.client.post(sb.url("/initiates/extra"))).await;
    assert_envelope(&o, StatusCode::NOT_FOUND, "NOT_FOUND");
    let o = sb
        .send(sb.client.get(sb.url("/initiates")).bearer_auth(KEY))
        .await;
    assert_envelope(&o, StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED");
    let o = sb.send(sb.client.delete(sb.url("/executes"))).await;
    assert_envelope(&o, StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED");
}

#[tokio::test]
async fn wrong_headers_and_huge_bodies_use_the_envelope() {
    let sb = default_sandbox().await;
    let body = serde_json::to_vec(&initiate_body("tx-1", "1", "XOF", "1")).unwrap();
    // No Content-Type.
    let o = sb
        .send(
            sb.client
                .post(sb.url("/initiates"))
                .bearer_auth(KEY)
                .body(body.clone()),
        )
        .await;
    assert_envelope(
        &o,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
    );
    // An Accept that excludes JSON.
    let o = sb
        .send(
            sb.client
                .post(sb.url("/initiates"))
                .bearer_auth(KEY)
                .header("Content-Type", "application/json")
                .header("Accept", "text/html")
                .body(body.clone()),
        )
        .await;
    assert_envelope(&o, StatusCode::NOT_ACCEPTABLE, "NOT_ACCEPTABLE");
    // /pay without X-Requested-With.
    let o = sb
        .send(
            sb.client
                .post(sb.url("/pay"))
                .bearer_auth(KEY)
                .header("Content-Type", "application/json")
                .body(serde_json::to_vec(&pay_body("p-1", ENROLLED, "XOF", "10")).unwrap()),
        )
        .await;
    assert_envelope(&o, StatusCode::BAD_REQUEST, "MISSING_HEADER");
    // A body over 64 KiB.
    let mut big = initiate_body("tx-1", "1", "XOF", "1");
    big["description"] = json!("x".repeat(100_000));
    let o = sb.post("/initiates", &big).await;
    assert_envelope(&o, StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");
    assert!(sb.ledger().await.transactions.is_empty());
}

// --------------------------------------------------------------- initiates

#[tokio::test]
async fn initiate_422_names_every_bad_field() {
    let sb = default_sandbox().await;
    let o = sb
        .post(
            "/initiates",
            &json!({"amount": "12.5", "currency": "XOF", "payoutMethodId": "momo", "accountId": "1"}),
        )
        .await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(field_names(&o), set(&["transactionId", "amount"]));
    let message = o.body()["message"].as_str().unwrap();
    assert!(
        message.contains("transactionId") && message.contains("amount"),
        "{message}"
    );

    for (amount, why) in [
        (json!("0"), "zero"),
        (json!("-5"), "sign"),
        (json!(100), "a JSON number"),
        (json!("1e3"), "exponent"),
        (json!("0100"), "leading zero"),
        (json!(""), "empty"),
    ] {
        let mut body = initiate_body("tx-a", "1", "XOF", "1");
        body["amount"] = amount;
        let o = sb.post("/initiates", &body).await;
        assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(field_names(&o), set(&["amount"]), "{why}");
    }

    let o = sb
        .post(
            "/initiates",
            &json!({"transactionId": "t", "amount": "1", "currency": "xof",
                    "accountId": 5, "beneficiary": {"email": 7}}),
        )
        .await;
    assert_eq!(
        field_names(&o),
        set(&[
            "currency",
            "payoutMethodId",
            "accountId",
            "beneficiary.email"
        ])
    );
    assert!(sb.ledger().await.transactions.is_empty());
}

#[tokio::test]
async fn initiate_creates_then_ignores_duplicates_and_refuses_conflicts() {
    let sb = default_sandbox().await;
    let o = sb.initiate("tx-1", "1500", "2250700000001").await;
    assert_envelope(&o, StatusCode::CREATED, "INITIATED");
    let data = &o.body()["data"];
    assert_eq!(data["status"], "INITIATED");
    assert_eq!(data["transactionId"], "tx-1");
    assert_eq!(data["amount"], "1500");
    assert_eq!(data["currency"], "XOF");
    assert_eq!(data["accountId"], "2250700000001");

    // Same id, same body (in another key order): the existing record.
    let mut reordered = serde_json::Map::new();
    let original = initiate_body("tx-1", "1500", "XOF", "2250700000001");
    for (k, v) in original.as_object().unwrap().iter().rev() {
        reordered.insert(k.clone(), v.clone());
    }
    let o = sb.post("/initiates", &Value::Object(reordered)).await;
    assert_envelope(&o, StatusCode::OK, "DUPLICATE_IGNORED");
    assert_eq!(o.body()["data"]["status"], "INITIATED");
    assert_eq!(o.body()["data"]["amount"], "1500");

    // Same id, different body.
    let o = sb.initiate("tx-1", "1501", "2250700000001").await;
    assert_envelope(&o, StatusCode::CONFLICT, "DUPLICATE_TRANSACTION_ID");
    let mut other_description = initiate_body("tx-1", "1500", "XOF", "2250700000001");
    other_description["description"] = json!("April salary");
    let o = sb.post("/initiates", &other_description).await;
    assert_envelope(&o, StatusCode::CONFLICT, "DUPLICATE_TRANSACTION_ID");

    let ledger = sb.ledger().await;
    assert_eq!(ledger.transactions.len(), 1);
    let t = ledger.get("tx-1").unwrap();
    assert_eq!(t.amount, Decimal::from(1500));
    assert_eq!(t.initiate_calls, 4);
    assert_eq!((t.execute_calls, t.debits), (0, 0));
    assert_eq!(ledger.requests.initiates, 4);
}

#[tokio::test]
async fn initiate_refuses_missing_wallets_unknown_methods_and_invalid_accounts() {
    let sb = sandbox(with_wallets(&[("XOF", 1000)])).await;
    let o = sb
        .post("/initiates", &initiate_body("tx-1", "10", "GHS", "1"))
        .await;
    assert_envelope(
        &o,
        StatusCode::UNPROCESSABLE_ENTITY,
        "CURRENCY_WALLET_MISMATCH",
    );
    let mut body = initiate_body("tx-2", "10", "XOF", "1");
    body["payoutMethodId"] = json!("carrier-pigeon");
    let o = sb.post("/initiates", &body).await;
    assert_envelope(
        &o,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_PAYOUT_METHOD",
    );
    let o = sb.initiate("tx-3", "10", magic::INVALID_ACCOUNT).await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "INVALID_ACCOUNT");
    assert!(sb.ledger().await.transactions.is_empty());
    // A refused initiation leaves the id free.
    let o = sb.initiate("tx-1", "10", "2250700000001").await;
    assert_envelope(&o, StatusCode::CREATED, "INITIATED");
}

#[tokio::test]
async fn payout_methods_are_configurable() {
    let sb = sandbox(SandboxConfig {
        payout_methods: vec!["wave".into()],
        ..SandboxConfig::default()
    })
    .await;
    let o = sb.initiate("tx-1", "10", "1").await; // uses "momo"
    assert_envelope(
        &o,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_PAYOUT_METHOD",
    );
    let mut body = initiate_body("tx-1", "10", "XOF", "1");
    body["payoutMethodId"] = json!("wave");
    assert_envelope(
        &sb.post("/initiates", &body).await,
        StatusCode::CREATED,
        "INITIATED",
    );
}

#[tokio::test]
async fn fifty_concurrent_identical_initiates_create_one_record() {
    let sb = default_sandbox().await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let client = sb.client.clone();
        let url = sb.url("/initiates");
        tasks.push(tokio::spawn(async move {
            let resp = client
                .post(url)
                .bearer_auth(KEY)
                .json(&initiate_body("tx-same", "700", "XOF", "2250700000009"))
                .send()
                .await
                .unwrap();
            let status = resp.status();
            let body: Value = resp.json().await.unwrap();
            (status, body["code"].as_str().unwrap().to_owned())
        }));
    }
    let mut created = 0;
    let mut duplicates = 0;
    for t in tasks {
        match t.await.unwrap() {
            (StatusCode::CREATED, code) if code == "INITIATED" => created += 1,
            (StatusCode::OK, code) if code == "DUPLICATE_IGNORED" => duplicates += 1,
            other => panic!("unexpected answer {other:?}"),
        }
    }
    assert_eq!((created, duplicates), (1, 49));
    let ledger = sb.ledger().await;
    assert_eq!(ledger.transactions.len(), 1);
    assert_eq!(ledger.get("tx-same").unwrap().initiate_calls, 50);
}

// ---------------------------------------------------------------- executes

#[tokio::test]
async fn execute_unknown_id_is_404() {
    let sb = default_sandbox().await;
    let o = sb.execute("never-initiated").await;
    assert_envelope(&o, StatusCode::NOT_FOUND, "TRANSACTION_NOT_FOUND");
    let o = sb.post("/executes", &json!({})).await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(field_names(&o), set(&["transactionId"]));
}

#[tokio::test]
async fn execute_debits_once_and_repeats_never_debit_again() {
    let sb = sandbox(with_wallets(&[("XOF", 10_000)])).await;
    sb.initiate("tx-1", "2500", "2250700000001").await;
    let o = sb.execute("tx-1").await;
    assert_envelope(&o, StatusCode::OK, "SUCCESS");
    assert_eq!(o.body()["data"]["status"], "SUCCESS");
    for _ in 0..3 {
        let o = sb.execute("tx-1").await;
        assert_envelope(&o, StatusCode::OK, "ALREADY_EXECUTED");
        assert_eq!(o.body()["data"]["status"], "SUCCESS");
    }
    // Initiating it again is still a duplicate, now showing SUCCESS.
    let o = sb.initiate("tx-1", "2500", "2250700000001").await;
    assert_envelope(&o, StatusCode::OK, "DUPLICATE_IGNORED");
    assert_eq!(o.body()["data"]["status"], "SUCCESS");

    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], Decimal::from(7_500));
    let t = ledger.get("tx-1").unwrap();
    assert_eq!(t.status, "SUCCESS");
    assert_eq!((t.initiate_calls, t.execute_calls, t.debits), (2, 4, 1));
    assert_eq!(ledger.requests.executes, 4);
    assert_eq!(ledger.requests.total, 6);
}

#[tokio::test]
async fn fifty_concurrent_executes_debit_once() {
    let sb = sandbox(with_wallets(&[("XOF", 1_000)])).await;
    sb.initiate("tx-1", "600", "2250700000001").await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let client = sb.client.clone();
        let url = sb.url("/executes");
        tasks.push(tokio::spawn(async move {
            let resp = client
                .post(url)
                .bearer_auth(KEY)
                .json(&json!({"transactionId": "tx-1"}))
                .send()
                .await
                .unwrap();
            let body: Value = resp.json().await.unwrap();
            body["code"].as_str().unwrap().to_owned()
        }));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| *c == "SUCCESS").count(), 1);
    assert_eq!(
        codes.iter().filter(|c| *c == "ALREADY_EXECUTED").count(),
        49
    );
    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], Decimal::from(400));
    assert_eq!(ledger.get("tx-1").unwrap().debits, 1);
}

#[tokio::test]
async fn insufficient_balance_debits_nothing_and_is_final() {
    let sb = sandbox(with_wallets(&[("XOF", 1_000)])).await;
    sb.initiate("big", "1001", "2250700000001").await;
    sb.initiate("fits", "1000", "2250700000002").await;
    let o = sb.execute("big").await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "INSUFFICIENT_BALANCE");
    assert_eq!(o.body()["data"]["status"], "FAILED");
    assert_eq!(o.body()["data"]["failureCode"], "INSUFFICIENT_BALANCE");
    // A repeat replays the failure (never ALREADY_EXECUTED, never a debit).
    let o = sb.execute("big").await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "INSUFFICIENT_BALANCE");
    assert_eq!(o.body()["data"]["alreadyExecuted"], true);
    assert_eq!(sb.ledger().await.wallets["XOF"], Decimal::from(1_000));
    // The exact balance is enough.
    assert_envelope(&sb.execute("fits").await, StatusCode::OK, "SUCCESS");
    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], Decimal::ZERO);
    let big = ledger.get("big").unwrap();
    assert_eq!(big.status, "FAILED");
    assert_eq!(big.failure_code.as_deref(), Some("INSUFFICIENT_BALANCE"));
    assert_eq!((big.execute_calls, big.debits), (2, 0));
}

#[tokio::test]
async fn magic_accounts_fail_execution_deterministically() {
    let sb = default_sandbox().await;
    let before = sb.ledger().await.wallets["XOF"];
    for (id, account, code) in [
        (
            "nf",
            magic::RECIPIENT_NOT_FOUND.to_string(),
            "RECIPIENT_NOT_FOUND",
        ),
        (
            "lim",
            format!("+225{}", magic::LIMIT_EXCEEDED),
            "LIMIT_EXCEEDED",
        ),
    ] {
        assert_envelope(
            &sb.initiate(id, "50", &account).await,
            StatusCode::CREATED,
            "INITIATED",
        );
        let o = sb.execute(id).await;
        assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, code);
        assert_eq!(o.body()["data"]["status"], "FAILED");
        assert_eq!(o.body()["data"]["failureCode"], code);
    }
    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], before);
    assert_eq!(ledger.total_debits(), 0);
}

#[tokio::test]
async fn magic_ambiguous_accounts_debit_then_answer_503_or_nothing() {
    let sb = sandbox(with_wallets(&[("XOF", 1_000)])).await;
    sb.initiate("a503", "100", magic::EXECUTE_THEN_503).await;
    sb.initiate("acut", "200", magic::EXECUTE_THEN_CUT).await;

    let o = sb.execute("a503").await;
    assert_envelope(&o, StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE");
    assert_eq!(sb.execute("acut").await, Outcome::Cut);
    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], Decimal::from(700));
    assert_eq!(ledger.get("a503").unwrap().debits, 1);
    assert_eq!(ledger.get("acut").unwrap().debits, 1);

    // Re-sending, as the engine does for an ambiguous execute.
    for id in ["a503", "acut"] {
        assert_envelope(&sb.execute(id).await, StatusCode::OK, "ALREADY_EXECUTED");
    }
    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], Decimal::from(700));
    assert_eq!(ledger.total_debits(), 2);
}

// ------------------------------------------------------------------ faults

#[tokio::test]
async fn rate_limit_answers_429_with_retry_after() {
    let sb = sandbox(SandboxConfig {
        rate_limit: Some(1),
        ..SandboxConfig::default()
    })
    .await;
    // A limit of 1/s lets one call through at once; twenty in a row cannot
    // all pass unless they take twenty seconds.
    let mut limited = None;
    let mut passed = 0;
    for i in 0..20 {
        let o = sb.initiate(&format!("tx-{i}"), "1", "1").await;
        if o.status() == Some(StatusCode::TOO_MANY_REQUESTS) {
            limited = Some(o);
            break;
        }
        passed += 1;
    }
    let o = limited.expect("a 429 within twenty calls at 1 call/s");
    assert_envelope(&o, StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");
    let Outcome::Answer { retry_after, .. } = &o else {
        unreachable!()
    };
    let secs: u64 = retry_after
        .as_deref()
        .expect("Retry-After header")
        .parse()
        .expect("Retry-After in whole seconds");
    assert!(secs >= 1);
    // The refused call did nothing, but was counted.
    let ledger = sb.ledger().await;
    assert_eq!(ledger.transactions.len(), passed);
    assert_eq!(ledger.requests.initiates, passed as u64 + 1);
    assert_eq!(ledger.requests.rate_limited, 1);
}

#[tokio::test]
async fn fail_rate_answers_5xx_and_changes_nothing() {
    let sb = sandbox(SandboxConfig {
        fail_rate: 1.0,
        seed: 11,
        ..SandboxConfig::default()
    })
    .await;
    let before = sb.ledger().await.wallets;
    let mut statuses = BTreeSet::new();
    for i in 0..20 {
        let id = format!("tx-{i}");
        for o in [sb.initiate(&id, "10", "1").await, sb.execute(&id).await] {
            let status = o.status().expect("an answer, not a cut");
            assert!([500, 502, 503].contains(&status.as_u16()), "{status}");
            assert_eq!(o.body()["status"], "error");
            statuses.insert(status.as_u16());
        }
    }
    assert!(statuses.len() >= 2, "{statuses:?}");
    // Even a call with a wrong key or a bad body is failed before checks.
    let o = sb
        .post_with_key("/initiates", None, &json!({"nonsense": true}))
        .await;
    assert!(o.status().unwrap().is_server_error());
    let ledger = sb.ledger().await;
    assert!(ledger.transactions.is_empty());
    assert_eq!(ledger.wallets, before);
    assert_eq!(ledger.requests.total, 41);
}

#[tokio::test]
async fn ambiguous_answers_still_carry_the_call_out() {
    let sb = sandbox(SandboxConfig {
        ambiguous_rate: 1.0,
        seed: 5,
        ..with_wallets(&[("XOF", 1_000_000)])
    })
    .await;
    let mut outcomes = Vec::new();
    for i in 0..20 {
        let o = sb
            .initiate(&format!("tx-{i}"), "1000", "2250700000001")
            .await;
        outcomes.push(o);
    }
    for i in 0..20 {
        outcomes.push(sb.execute(&format!("tx-{i}")).await);
    }
    for o in &outcomes {
        match o {
            Outcome::Cut => {}
            answer => assert_envelope(
                answer,
                StatusCode::SERVICE_UNAVAILABLE,
                "SERVICE_UNAVAILABLE",
            ),
        }
    }
    // Both variants happen.
    assert!(outcomes.contains(&Outcome::Cut));
    assert!(outcomes.iter().any(|o| o.status().is_some()));
    // Yet every payout was initiated and debited exactly once.
    let ledger = sb.ledger().await;
    assert_eq!(ledger.transactions.len(), 20);
    assert!(
        ledger
            .transactions
            .iter()
            .all(|t| t.status == "SUCCESS" && t.debits == 1)
    );
    assert_eq!(ledger.wallets["XOF"], Decimal::from(980_000));
}

#[tokio::test]
async fn resending_an_ambiguous_execute_never_debits_twice() {
    let sb = sandbox(SandboxConfig {
        ambiguous_rate: 0.5,
        seed: 99,
        ..with_wallets(&[("XOF", 1_000)])
    })
    .await;
    // Initiate until one answer arrives (each attempt may be ambiguous,
    // but a duplicate answer proves the record exists).
    let mut initiated = false;
    for _ in 0..50 {
        let o = sb.initiate("tx-1", "100", "2250700000001").await;
        if matches!(o.status(), Some(StatusCode::CREATED | StatusCode::OK)) {
            initiated = true;
            break;
        }
    }
    assert!(initiated);
    // Execute until a clean answer arrives.
    let mut last = None;
    let mut attempts = 0;
    for _ in 0..50 {
        attempts += 1;
        let o = sb.execute("tx-1").await;
        if o.status() == Some(StatusCode::OK) {
            last = Some(o);
            break;
        }
    }
    let last = last.expect("a clean answer within 50 attempts");
    assert!(["SUCCESS", "ALREADY_EXECUTED"].contains(&last.code()));
    let ledger = sb.ledger().await;
    let t = ledger.get("tx-1").unwrap();
    assert_eq!(t.debits, 1);
    assert_eq!(t.execute_calls, attempts);
    assert_eq!(ledger.wallets["XOF"], Decimal::from(900));
}

/// Runs the same sequential script against a sandbox and records what
/// came back.
async fn script(config: SandboxConfig) -> (Vec<u16>, Vec<(String, String, u32)>) {
    let sb = sandbox(config).await;
    let mut seen = Vec::new();
    for i in 0..40 {
        let id = format!("tx-{i}");
        seen.push(sb.initiate(&id, "10", "2250700000001").await.key());
        seen.push(sb.execute(&id).await.key());
    }
    let ledger = sb.ledger().await;
    let books = ledger
        .transactions
        .into_iter()
        .map(|t| (t.transaction_id, t.status, t.debits))
        .collect();
    sb.running.shutdown().await.unwrap();
    (seen, books)
}

#[tokio::test]
async fn a_seed_replays_the_same_faults() {
    let config = |seed| SandboxConfig {
        seed,
        fail_rate: 0.3,
        ambiguous_rate: 0.3,
        jitter_ms: 2,
        ..SandboxConfig::default()
    };
    let (a, books_a) = script(config(42)).await;
    let (b, books_b) = script(config(42)).await;
    let (c, _) = script(config(43)).await;
    assert_eq!(a, b);
    assert_eq!(books_a, books_b);
    assert_ne!(a, c);
    // The script met every kind of answer.
    for kind in [0, 200, 201, 404] {
        assert!(a.contains(&kind), "{kind} in {a:?}");
    }
    assert!(a.iter().any(|k| [500, 502, 503].contains(k)));
}

#[tokio::test]
async fn latency_and_jitter_still_answer() {
    let sb = sandbox(SandboxConfig {
        latency_ms: 5,
        jitter_ms: 5,
        ..SandboxConfig::default()
    })
    .await;
    assert_envelope(
        &sb.initiate("tx-1", "10", "1").await,
        StatusCode::CREATED,
        "INITIATED",
    );
    assert_envelope(&sb.execute("tx-1").await, StatusCode::OK, "SUCCESS");
}

// --------------------------------------------------------------------- pay

#[tokio::test]
async fn pay_with_an_enrolled_card_requires_3ds_then_completes() {
    let sb = sandbox(with_wallets(&[("XOF", 0)])).await;
    let o = sb
        .post("/pay", &pay_body("p-1", ENROLLED, "XOF", "5000"))
        .await;
    assert_envelope(&o, StatusCode::CREATED, "REQUIRES_3DS");
    let data = &o.body()["data"];
    assert_eq!(data["status"], "REQUIRES_3DS");
    assert_eq!(data["card"], "400000******3220");
    let redirect = data["redirectUrl"].as_str().unwrap().to_owned();
    assert_eq!(redirect, format!("{}/_sandbox/3ds/p-1", sb.base));

    // The page the payer is sent to.
    let page = sb.client.get(&redirect).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("400000******3220") && html.contains("REQUIRES_3DS"));
    assert!(!html.contains(ENROLLED));

    // Nothing moved yet; a repeat is a duplicate with the same redirect.
    assert_eq!(sb.ledger().await.wallets["XOF"], Decimal::ZERO);
    let o = sb
        .post("/pay", &pay_body("p-1", ENROLLED, "XOF", "5000"))
        .await;
    assert_envelope(&o, StatusCode::OK, "DUPLICATE_IGNORED");
    assert_eq!(o.body()["data"]["redirectUrl"], redirect.as_str());

    // The payer approves: the merchant's wallet is credited, once.
    for _ in 0..2 {
        let done = sb
            .client
            .post(&redirect)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body("action=approve")
            .send()
            .await
            .unwrap();
        assert_eq!(done.status(), StatusCode::OK);
        assert!(done.text().await.unwrap().contains("SUCCESS"));
    }
    let ledger = sb.ledger().await;
    assert_eq!(ledger.wallets["XOF"], Decimal::from(5000));
    let t = ledger.get("p-1").unwrap();
    assert_eq!((t.kind.as_str(), t.status.as_str()), ("card", "SUCCESS"));
    assert_eq!(t.account_id, "400000******3220");
    assert_eq!(t.initiate_calls, 2);
    assert_eq!(ledger.requests.pay, 2);
}

#[tokio::test]
async fn a_declined_3ds_check_fails_the_payment() {
    let sb = sandbox(with_wallets(&[("XOF", 0)])).await;
    let o = sb
        .post("/pay", &pay_body("p-1", ENROLLED, "XOF", "10"))
        .await;
    let redirect = o.body()["data"]["redirectUrl"].as_str().unwrap().to_owned();
    let done = sb
        .client
        .post(&redirect)
        .body("action=decline")
        .send()
        .await
        .unwrap();
    assert!(done.text().await.unwrap().contains("FAILED"));
    let ledger = sb.ledger().await;
    let t = ledger.get("p-1").unwrap();
    assert_eq!(t.status, "FAILED");
    assert_eq!(t.failure_code.as_deref(), Some("AUTHENTICATION_FAILED"));
    assert_eq!(ledger.wallets["XOF"], Decimal::ZERO);
    let missing = sb
        .client
        .get(sb.url("/_sandbox/3ds/unknown"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pay_refuses_cards_not_enrolled_or_declined() {
    let sb = default_sandbox().await;
    let o = sb
        .post("/pay", &pay_body("p-1", NOT_ENROLLED, "XOF", "10"))
        .await;
    assert_envelope(
        &o,
        StatusCode::UNPROCESSABLE_ENTITY,
        "CARD_NOT_3DS_ENROLLED",
    );
    let o = sb
        .post(
            "/pay",
            &pay_body("p-2", sandbox::DECLINED_CARD, "XOF", "10"),
        )
        .await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "CARD_DECLINED");
    assert!(sb.ledger().await.transactions.is_empty());
}

#[tokio::test]
async fn pay_422_names_card_fields_without_echoing_them() {
    let sb = default_sandbox().await;
    let mut body = pay_body("p-1", "4000000000003221", "XOF", "10");
    let details = body["payment_details"].as_object_mut().unwrap();
    details.insert("card_cvv".into(), json!("12"));
    details.insert("expiry_month".into(), json!("01"));
    details.insert("expiry_year".into(), json!("20"));
    details.remove("otp");
    let o = sb.post("/pay", &body).await;
    assert_envelope(&o, StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        field_names(&o),
        set(&[
            "payment_details.card_number",
            "payment_details.card_cvv",
            "payment_details.expiry_year",
            "payment_details.otp",
        ])
    );
    let text = o.body().to_string();
    assert!(!text.contains("4000000000003221"));

    let mut body = pay_body("p-1", ENROLLED, "XOF", "12.50");
    body["payment_details"]["expiry_month"] = json!("13");
    let o = sb.post("/pay", &body).await;
    assert_eq!(
        field_names(&o),
        set(&["amount", "payment_details.expiry_month"])
    );
    let o = sb.post("/pay", &json!({"transaction_id": "p-1"})).await;
    assert_eq!(
        field_names(&o),
        set(&[
            "merchant_id",
            "currency",
            "payment_method_id",
            "amount",
            "payment_details"
        ])
    );
}

#[tokio::test]
async fn pay_applies_the_wallet_duplicate_and_method_rules() {
    let sb = sandbox(SandboxConfig {
        merchant_id: Some("merchant-1".into()),
        ..with_wallets(&[("XOF", 0)])
    })
    .await;
    let o = sb
        .post("/pay", &pay_body("p-1", ENROLLED, "GHS", "10"))
        .await;
    assert_envelope(
        &o,
        StatusCode::UNPROCESSABLE_ENTITY,
        "CURRENCY_WALLET_MISMATCH",
    );
    let mut body = pay_body("p-1", ENROLLED, "XOF", "10");
    body["payment_method_id"] = json!("cheque");
    assert_envelope(
        &sb.post("/pay", &body).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "INVALID_PAYMENT_METHOD",
    );
    let mut body = pay_body("p-1", ENROLLED, "XOF", "10");
    body["merchant_id"] = json!("someone-else");
    assert_envelope(
        &sb.post("/pay", &body).await,
        StatusCode::FORBIDDEN,
        "INVALID_MERCHANT",
    );
    assert_envelope(
        &sb.post("/pay", &pay_body("p-1", ENROLLED, "XOF", "10"))
            .await,
        StatusCode::CREATED,
        "REQUIRES_3DS",
    );
    // Same id, other amount: conflict. Same id used by a payout: conflict.
    assert_envelope(
        &sb.post("/pay", &pay_body("p-1", ENROLLED, "XOF", "11"))
            .await,
        StatusCode::CONFLICT,
        "DUPLICATE_TRANSACTION_ID",
    );
    assert_envelope(
        &sb.initiate("p-1", "10", "1").await,
        StatusCode::CONFLICT,
        "DUPLICATE_TRANSACTION_ID",
    );
    // A card payment is not a payout to execute.
    assert_envelope(
        &sb.execute("p-1").await,
        StatusCode::NOT_FOUND,
        "TRANSACTION_NOT_FOUND",
    );
}

#[tokio::test]
async fn the_ledger_never_holds_card_secrets() {
    let sb = default_sandbox().await;
    sb.post("/pay", &pay_body("p-1", ENROLLED, "XOF", "10"))
        .await;
    sb.post("/pay", &pay_body("p-2", NOT_ENROLLED, "XOF", "10"))
        .await;
    let text = sb.ledger_text().await;
    for secret in [ENROLLED, NOT_ENROLLED, "9876", "OTP-SECRET-771"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    assert!(text.contains("400000******3220"));
}

// ------------------------------------------------------------ ledger, life

#[tokio::test]
async fn ledger_has_the_documented_shape() {
    let sb = sandbox(with_wallets(&[("XOF", 100), ("GHS", 5)])).await;
    sb.initiate("tx-1", "40", "2250700000001").await;
    sb.execute("tx-1").await;
    sb.execute("nope").await;
    let mut raw: Value = serde_json::from_str(&sb.ledger_text().await).unwrap();
    // `at` is the time of the last change: check it, then compare the rest.
    let at = raw["transactions"][0]
        .as_object_mut()
        .unwrap()
        .remove("at")
        .unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(at.as_u64().unwrap().abs_diff(now) < 60, "{at}");
    assert_eq!(
        raw["transactions"],
        json!([{
            "transactionId": "tx-1", "kind": "payout", "status": "SUCCESS", "amount": "40",
            "currency": "XOF", "accountId": "2250700000001", "failureCode": null,
            "initiateCalls": 1, "executeCalls": 1, "debits": 1
        }])
    );
    assert_eq!(raw["wallets"], json!({"GHS": "5", "XOF": "60"}));
    // Three calls: within one second of each other unless the machine stalled.
    let peak = raw["requests"]
        .as_object_mut()
        .unwrap()
        .remove("peakPerSecond")
        .unwrap();
    assert!((1..=3).contains(&peak.as_u64().unwrap()), "{peak}");
    assert_eq!(
        raw["requests"],
        json!({"initiates": 1, "executes": 2, "pay": 0, "status": 0, "total": 3,
               "rateLimited": 0, "redirectHits": 0})
    );
}

#[tokio::test]
async fn shutdown_stops_the_server() {
    let sb = default_sandbox().await;
    assert_envelope(
        &sb.initiate("tx-1", "1", "1").await,
        StatusCode::CREATED,
        "INITIATED",
    );
    let base = sb.base.clone();
    sb.running.shutdown().await.unwrap();
    let fresh = Client::new();
    assert!(
        fresh
            .get(format!("{base}/_sandbox/ledger"))
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn serve_takes_a_bound_listener_and_stops_on_its_signal() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(sandbox::serve(
        listener,
        SandboxConfig::default(),
        async move {
            let _ = rx.await;
        },
    ));
    let resp = Client::new()
        .get(format!("http://{addr}/_sandbox/ledger"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    tx.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn bad_configs_are_refused() {
    for config in [
        SandboxConfig {
            fail_rate: 2.0,
            ..SandboxConfig::default()
        },
        SandboxConfig {
            rate_limit: Some(0),
            ..SandboxConfig::default()
        },
        SandboxConfig {
            api_key: String::new(),
            ..SandboxConfig::default()
        },
        with_wallets(&[("XOF", -1)]),
        with_wallets(&[("xof", 1)]),
    ] {
        assert!(sandbox::start(config).await.is_err());
    }
}

#[tokio::test]
async fn the_cli_prints_its_address_and_serves() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args([
            "sandbox",
            "--listen",
            "127.0.0.1:0",
            "--api-key",
            "sk_cli_test",
            "--wallet",
            "XOF=1000",
            "--seed",
            "7",
        ])
        .env_remove("PAYRUN_SANDBOX_API_KEY")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().expect("a first line");
    let base = first
        .strip_prefix("payrun sandbox listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    assert_eq!(
        lines.next_line().await.unwrap().as_deref(),
        Some("api key: sk_cli_test")
    );
    assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("seed: 7"));

    let client = Client::new();
    let resp = client
        .post(format!("{base}/initiates"))
        .bearer_auth("sk_cli_test")
        .json(&initiate_body("cli-1", "300", "XOF", "2250700000001"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let resp = client
        .post(format!("{base}/executes"))
        .bearer_auth("sk_cli_test")
        .json(&json!({"transactionId": "cli-1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let ledger: LedgerSnapshot = client
        .get(format!("{base}/_sandbox/ledger"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ledger.wallets.len(), 1);
    assert_eq!(ledger.wallets["XOF"], Decimal::from(700));
    stop(&mut child).await;
}

/// Stops the spawned sandbox: SIGTERM must end it cleanly (exit 0).
#[cfg(unix)]
async fn stop(child: &mut tokio::process::Child) {
    let pid = child.id().expect("still running").to_string();
    let sent = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .unwrap();
    assert!(sent.success());
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[cfg(not(unix))]
async fn stop(child: &mut tokio::process::Child) {
    child.kill().await.unwrap();
}

/// Measures requests per second: `cargo test --release --test sandbox --
/// --ignored throughput --nocapture`. Client and server share this
/// process (and its cores), so the sandbox alone is faster than shown.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement, not a check; run it in release"]
async fn throughput() {
    const PAYOUTS: usize = 20_000;
    const CONCURRENCY: usize = 64;
    let sb = default_sandbox().await;
    let started = std::time::Instant::now();
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let client = sb.client.clone();
        let base = sb.base.clone();
        let next = next.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= PAYOUTS {
                    break;
                }
                let id = format!("bench-{i}");
                for (path, body) in [
                    (
                        "/initiates",
                        initiate_body(&id, "10", "XOF", "2250700000001"),
                    ),
                    ("/executes", json!({ "transactionId": id })),
                ] {
                    let resp = client
                        .post(format!("{base}{path}"))
                        .bearer_auth(KEY)
                        .json(&body)
                        .send()
                        .await
                        .unwrap();
                    assert!(resp.status().is_success());
                    resp.bytes().await.unwrap();
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let elapsed = started.elapsed();
    let requests = 2 * PAYOUTS;
    println!(
        "{requests} requests with {CONCURRENCY} in flight in {:.2?}: {:.0} requests/s",
        elapsed,
        requests as f64 / elapsed.as_secs_f64()
    );
    let ledger = sb.ledger().await;
    assert_eq!(ledger.transactions.len(), PAYOUTS);
    assert_eq!(ledger.total_debits(), PAYOUTS as u64);
}

// ------------------------------------------------------ dialects (issue 12)

fn dialect(d: sandbox::Dialect) -> SandboxConfig {
    SandboxConfig {
        dialect: d,
        ..with_wallets(&[("XOF", 1000)])
    }
}

#[tokio::test]
async fn errors_in_200_dialect_answers_errors_with_http_200() {
    let sb = sandbox(dialect(sandbox::Dialect::ErrorsIn200)).await;
    let ok = sb.initiate("ok", "10", "2250700000001").await;
    assert_eq!(ok.status(), Some(StatusCode::CREATED));
    assert_eq!(ok.body()["status"], "success");
    sb.initiate("big", "5000", "2250700000001").await;
    let e = sb.execute("big").await;
    assert_eq!(e.status(), Some(StatusCode::OK), "{e:?}");
    assert_eq!(e.body()["status"], "error");
    assert_eq!(e.code(), "INSUFFICIENT_BALANCE");
    assert!(e.body()["message"].is_string());
    let unauthorized = sb
        .post_with_key(
            "/executes",
            Some("sk_wrong"),
            &json!({"transactionId": "ok"}),
        )
        .await;
    assert_eq!(unauthorized.status(), Some(StatusCode::OK));
    assert_eq!(unauthorized.code(), "UNAUTHORIZED");
    let nf = sb.execute("nope").await;
    assert_eq!(
        (nf.status(), nf.code()),
        (Some(StatusCode::OK), "TRANSACTION_NOT_FOUND")
    );
    assert_eq!(sb.ledger().await.wallets["XOF"], Decimal::from(1000));
}

#[tokio::test]
async fn flat_dialect_answers_without_an_envelope() {
    let sb = sandbox(dialect(sandbox::Dialect::Flat)).await;
    let i = sb.initiate("f-1", "10", "2250700000001").await;
    assert_eq!(i.status(), Some(StatusCode::CREATED));
    let b = i.body();
    assert!(b.get("data").is_none(), "{b}");
    assert_eq!(
        (&b["transactionId"], &b["status"], &b["code"], &b["amount"]),
        (
            &json!("f-1"),
            &json!("INITIATED"),
            &json!("INITIATED"),
            &json!("10")
        )
    );
    let e = sb.execute("f-1").await;
    assert_eq!(
        (&e.body()["status"], e.code()),
        (&json!("SUCCESS"), "SUCCESS")
    );
    sb.initiate("f-2", "10", magic::RECIPIENT_NOT_FOUND).await;
    let f = sb.execute("f-2").await;
    assert_eq!(f.status(), Some(StatusCode::UNPROCESSABLE_ENTITY));
    assert_eq!(
        (&f.body()["status"], f.code()),
        (&json!("FAILED"), "RECIPIENT_NOT_FOUND")
    );
    let s = sb.status("f-1").await;
    assert_eq!(s.body()["status"], "SUCCESS");
    let refused = sb
        .post_with_key("/executes", None, &json!({"transactionId": "f-1"}))
        .await;
    assert_eq!(refused.status(), Some(StatusCode::UNAUTHORIZED));
    assert_eq!(refused.body()["status"], "ERROR");
}

#[tokio::test]
async fn conflict_on_repeat_dialect_answers_409_to_repeats() {
    let sb = sandbox(dialect(sandbox::Dialect::ConflictOnRepeat)).await;
    assert_eq!(
        sb.initiate("c-1", "10", "2250700000001").await.status(),
        Some(StatusCode::CREATED)
    );
    let again = sb.initiate("c-1", "10", "2250700000001").await;
    assert_envelope(&again, StatusCode::CONFLICT, "RESOURCE_ALREADY_EXIST");
    assert_eq!(sb.execute("c-1").await.code(), "SUCCESS");
    let repeat = sb.execute("c-1").await;
    assert_envelope(&repeat, StatusCode::CONFLICT, "ALREADY_EXECUTED");
    let l = sb.ledger().await;
    let t = l.get("c-1").unwrap();
    assert_eq!((t.debits, t.execute_calls, t.initiate_calls), (1, 2, 2));
    assert_eq!(l.wallets["XOF"], Decimal::from(990));
}

#[tokio::test]
async fn pending_dialect_settles_after_status_polls() {
    let sb = sandbox(dialect(sandbox::Dialect::Pending)).await;
    sb.initiate("p-1", "100", "2250700000001").await;
    sb.initiate("p-2", "100", magic::RECIPIENT_NOT_FOUND).await;
    for id in ["p-1", "p-2"] {
        let e = sb.execute(id).await;
        assert_envelope(&e, StatusCode::ACCEPTED, "PENDING");
        assert_eq!(e.body()["data"]["status"], "PENDING");
    }
    // Nothing moved yet.
    let l = sb.ledger().await;
    assert_eq!(l.wallets["XOF"], Decimal::from(1000));
    assert_eq!(l.get("p-1").unwrap().status, "PENDING");
    let first = sb.status("p-1").await;
    assert_envelope(&first, StatusCode::OK, "PROCESSING");
    assert_eq!(first.body()["data"]["status"], "PROCESSING");
    let second = sb.status("p-1").await;
    assert_eq!(second.body()["data"]["status"], "SUCCESS");
    sb.status("p-2").await;
    let failed = sb.status("p-2").await;
    assert_eq!(failed.code(), "RECIPIENT_NOT_FOUND");
    assert_eq!(failed.body()["data"]["status"], "FAILED");
    let l = sb.ledger().await;
    assert_eq!(l.wallets["XOF"], Decimal::from(900));
    assert_eq!(
        (l.get("p-1").unwrap().debits, l.get("p-2").unwrap().debits),
        (1, 0)
    );
    assert_eq!(l.requests.status, 4);
}

#[tokio::test]
async fn pending_dialect_settles_after_a_delay() {
    let sb = sandbox(SandboxConfig {
        settlement: sandbox::Settlement {
            after_polls: None,
            after_ms: Some(100),
        },
        ..dialect(sandbox::Dialect::Pending)
    })
    .await;
    sb.initiate("d-1", "100", "2250700000001").await;
    assert_eq!(sb.execute("d-1").await.code(), "PENDING");
    assert_eq!(
        sb.status("d-1").await.body()["data"]["status"],
        "PROCESSING"
    );
    // The settlement delay itself is what is tested here.
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let l = sb.ledger().await;
    assert_eq!(l.get("d-1").unwrap().status, "SUCCESS");
    assert_eq!(l.wallets["XOF"], Decimal::from(900));
}

#[tokio::test]
async fn the_statement_shows_pending_payouts() {
    let sb = sandbox(dialect(sandbox::Dialect::Pending)).await;
    sb.initiate("sp-1", "100", "2250700000001").await;
    sb.execute("sp-1").await;
    for (q, word) in [("", ",Pending,"), ("&lang=fr", ";En attente;")] {
        let text = sb
            .client
            .get(sb.url(&format!("/_sandbox/statement?format=csv{q}")))
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(text.lines().nth(1).unwrap().contains(word), "{text}");
    }
}

#[tokio::test]
async fn non_idempotent_execute_debits_on_every_call() {
    for d in [sandbox::Dialect::Envelope, sandbox::Dialect::Flat] {
        let sb = sandbox(SandboxConfig {
            non_idempotent_execute: true,
            ..dialect(d)
        })
        .await;
        sb.initiate("n-1", "100", "2250700000001").await;
        for _ in 0..3 {
            assert_eq!(sb.execute("n-1").await.code(), "SUCCESS");
        }
        let l = sb.ledger().await;
        let t = l.get("n-1").unwrap();
        assert_eq!((t.debits, t.execute_calls), (3, 3), "{d:?}");
        assert_eq!(l.wallets["XOF"], Decimal::from(700), "{d:?}");
        assert_eq!(l.total_debits(), 3);
    }
}

#[tokio::test]
async fn status_call_needs_the_key_and_names_unknown_ids() {
    let sb = default_sandbox().await;
    sb.initiate("s-1", "10", "2250700000001").await;
    let s = sb.status("s-1").await;
    assert_envelope(&s, StatusCode::OK, "INITIATED");
    assert_eq!(s.body()["data"]["transactionId"], "s-1");
    let nf = sb.status("nope").await;
    assert_envelope(&nf, StatusCode::NOT_FOUND, "TRANSACTION_NOT_FOUND");
    let anon = sb.send(sb.client.get(sb.url("/status/s-1"))).await;
    assert_envelope(&anon, StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    assert_eq!(sb.ledger().await.requests.status, 3);
}

// ------------------------------------------------ statement (issue 13)

#[tokio::test]
async fn statement_lists_every_payout_in_english_or_french() {
    let sb = default_sandbox().await;
    sb.initiate("st-1", "1500", "2250700000001").await;
    sb.execute("st-1").await;
    sb.initiate("st-2", "10", magic::RECIPIENT_NOT_FOUND).await;
    sb.execute("st-2").await;
    sb.initiate("st-3", "7", "2250700000003").await;
    let get = |q: &str| {
        let req = sb
            .client
            .get(sb.url(&format!("/_sandbox/statement?{q}")))
            .bearer_auth(KEY);
        async move { req.send().await.unwrap().text().await.unwrap() }
    };
    let en = get("format=csv").await;
    let lines: Vec<&str> = en.lines().collect();
    assert_eq!(
        lines[0],
        "Transaction ID,Account,Amount,Currency,Status,Date"
    );
    assert_eq!(lines.len(), 4, "{en}");
    assert!(
        lines[1].starts_with("st-1,2250700000001,1500,XOF,Successful,20"),
        "{en}"
    );
    assert!(lines[2].contains(",Failed,"), "{en}");
    assert!(lines[3].contains(",Initiated,"), "{en}");
    let fr = get("format=csv&lang=fr").await;
    let lines: Vec<&str> = fr.lines().collect();
    assert_eq!(lines[0], "Référence;Compte;Montant;Devise;Statut;Date");
    assert!(lines[1].contains(";Réussi;"), "{fr}");
    assert!(lines[2].contains(";Échoué;"), "{fr}");
    let anon = sb
        .client
        .get(sb.url("/_sandbox/statement?format=csv"))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status(), StatusCode::UNAUTHORIZED);
}

// ------------------------------------------------ state file (issue 18)

#[tokio::test]
async fn state_file_keeps_the_books_across_restarts() {
    let dir = std::env::temp_dir().join(format!("payrun-sbx-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.json");
    let _ = std::fs::remove_file(&path);
    let config = || SandboxConfig {
        state_file: Some(path.clone()),
        ..with_wallets(&[("XOF", 1000)])
    };
    let sb = sandbox(config()).await;
    sb.initiate("k-1", "100", "2250700000001").await;
    // Written before the answer: a kill now would lose nothing.
    assert_eq!(sandbox::read_state(&path).unwrap().transactions.len(), 1);
    sb.initiate("k-2", "100", "2250700000002").await;
    sb.execute("k-1").await;
    let topped = sb
        .control(
            "/_sandbox/topup",
            json!({"currency": "XOF", "amount": "500"}),
        )
        .await;
    assert_eq!(topped.body()["balance"], "1400");
    let on_disk = sandbox::read_state(&path).unwrap();
    assert_eq!(on_disk.wallets["XOF"], Decimal::from(1400));
    assert_eq!(on_disk.get("k-1").unwrap().status, "SUCCESS");
    sb.running.shutdown().await.unwrap();

    // A new sandbox (other configured wallets: the file wins).
    let sb = sandbox(SandboxConfig {
        wallets: [("GHS".to_string(), Decimal::ONE)].into(),
        ..config()
    })
    .await;
    let l = sb.ledger().await;
    assert_eq!(l.wallets.get("XOF"), Some(&Decimal::from(1400)));
    assert_eq!(l.transactions.len(), 2);
    assert_eq!(sb.execute("k-1").await.code(), "ALREADY_EXECUTED");
    assert_eq!(sb.execute("k-2").await.code(), "SUCCESS");
    let dup = sb.initiate("k-2", "100", "2250700000002").await;
    assert_eq!(dup.code(), "DUPLICATE_IGNORED");
    assert_eq!(sb.ledger().await.wallets["XOF"], Decimal::from(1300));
    sb.running.shutdown().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------- control routes (issues 15, 18)

#[tokio::test]
async fn control_routes_need_the_key() {
    let sb = default_sandbox().await;
    for path in [
        "/_sandbox/topup",
        "/_sandbox/outage",
        "/_sandbox/control",
        "/_sandbox/pause",
    ] {
        let o = sb.send(sb.client.post(sb.url(path)).json(&json!({}))).await;
        assert_eq!(o.status(), Some(StatusCode::UNAUTHORIZED), "{path}");
    }
    let bad = sb
        .control(
            "/_sandbox/topup",
            json!({"currency": "XOF", "amount": "-5"}),
        )
        .await;
    assert_eq!(bad.status(), Some(StatusCode::BAD_REQUEST));
}

#[tokio::test]
async fn a_top_up_lets_a_short_wallet_pay() {
    let sb = sandbox(with_wallets(&[("XOF", 50)])).await;
    sb.initiate("t-1", "100", "2250700000001").await;
    sb.initiate("t-2", "100", "2250700000002").await;
    assert_eq!(sb.execute("t-1").await.code(), "INSUFFICIENT_BALANCE");
    sb.control("/_sandbox/topup", json!({"currency": "XOF", "amount": 100}))
        .await;
    assert_eq!(sb.execute("t-2").await.code(), "SUCCESS");
    let usd = sb
        .control(
            "/_sandbox/topup",
            json!({"currency": "usd", "amount": "7.5"}),
        )
        .await;
    assert_eq!(usd.body()["balance"], "7.5");
    let l = sb.ledger().await;
    assert_eq!(l.wallets["XOF"], Decimal::from(50));
    assert_eq!(l.wallets["USD"], Decimal::new(75, 1));
}

#[tokio::test]
async fn the_outage_switch_refuses_every_call_until_off() {
    let sb = default_sandbox().await;
    let on = sb.control("/_sandbox/outage", json!({"mode": "503"})).await;
    assert_eq!(on.status(), Some(StatusCode::OK));
    let o = sb.initiate("o-1", "10", "2250700000001").await;
    assert_envelope(&o, StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE");
    sb.control("/_sandbox/outage", json!({"mode": "cut"})).await;
    assert_eq!(
        sb.initiate("o-1", "10", "2250700000001").await,
        Outcome::Cut
    );
    assert!(sb.ledger().await.transactions.is_empty());
    sb.control("/_sandbox/outage", json!({"mode": "off"})).await;
    assert_eq!(
        sb.initiate("o-1", "10", "2250700000001").await.status(),
        Some(StatusCode::CREATED)
    );
    let bad = sb.control("/_sandbox/outage", json!({"mode": "418"})).await;
    assert_eq!(bad.status(), Some(StatusCode::BAD_REQUEST));
}

#[tokio::test]
async fn the_rate_limit_changes_at_run_time_and_429s_are_counted() {
    let sb = default_sandbox().await;
    for i in 0..5 {
        assert_eq!(
            sb.initiate(&format!("r-{i}"), "1", "1").await.status(),
            Some(StatusCode::CREATED)
        );
    }
    sb.control("/_sandbox/control", json!({"rateLimit": 1}))
        .await;
    let codes: Vec<u16> = {
        let mut v = Vec::new();
        for i in 5..10 {
            v.push(sb.initiate(&format!("r-{i}"), "1", "1").await.key());
        }
        v
    };
    let limited = codes.iter().filter(|&&c| c == 429).count() as u64;
    assert!(limited >= 3, "{codes:?}");
    assert_eq!(sb.ledger().await.requests.rate_limited, limited);
    sb.control("/_sandbox/control", json!({"rateLimit": null}))
        .await;
    assert_eq!(
        sb.initiate("r-10", "1", "1").await.status(),
        Some(StatusCode::CREATED)
    );
    let bad = sb
        .control("/_sandbox/control", json!({"rateLimit": 0}))
        .await;
    assert_eq!(bad.status(), Some(StatusCode::BAD_REQUEST));
}

#[tokio::test]
async fn a_pause_answers_429_with_retry_after_until_it_ends() {
    let sb = default_sandbox().await;
    sb.control("/_sandbox/pause", json!({"seconds": 5})).await;
    for _ in 0..3 {
        let o = sb.initiate("pz-1", "1", "1").await;
        assert_envelope(&o, StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");
        let Outcome::Answer { retry_after, .. } = &o else {
            unreachable!()
        };
        let secs: u64 = retry_after.as_deref().unwrap().parse().unwrap();
        assert!((4..=5).contains(&secs), "{secs}");
    }
    let l = sb.ledger().await;
    assert!(l.transactions.is_empty());
    assert_eq!(l.requests.rate_limited, 3);
}

// ------------------------------------------- misbehaviours (issue 12)

#[tokio::test]
async fn redirects_point_at_a_target_that_counts_followers() {
    let sb = sandbox(SandboxConfig {
        misbehaviour: sandbox::Misbehaviour {
            redirect: Some(sandbox::Redirect {
                status: 307,
                on: sandbox::RedirectOn::Executes,
            }),
            ..Default::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    sb.initiate("rd-1", "10", "2250700000001").await;
    let strict = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = strict
        .post(sb.url("/executes"))
        .bearer_auth(KEY)
        .json(&json!({"transactionId": "rd-1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::TEMPORARY_REDIRECT);
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.ends_with(sandbox::REDIRECT_TARGET), "{location}");
    assert_eq!(sb.ledger().await.requests.redirect_hits, 0);
    // A client that follows lands on a 200 "success" and is counted.
    let followed = sb.execute("rd-1").await;
    assert_eq!(followed.status(), Some(StatusCode::OK));
    assert_eq!(followed.body()["status"], "success");
    let l = sb.ledger().await;
    assert_eq!(l.requests.redirect_hits, 1);
    assert_eq!(l.get("rd-1").unwrap().debits, 0);
}

#[tokio::test]
async fn every_redirect_status_applies_to_both_money_calls() {
    let strict = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for status in [301u16, 302, 307, 308] {
        let sb = sandbox(SandboxConfig {
            misbehaviour: sandbox::Misbehaviour {
                redirect: Some(sandbox::Redirect {
                    status,
                    on: sandbox::RedirectOn::Both,
                }),
                ..Default::default()
            },
            ..SandboxConfig::default()
        })
        .await;
        for (path, body) in [
            (
                "/initiates",
                initiate_body("rb-1", "10", "XOF", "2250700000001"),
            ),
            ("/executes", json!({"transactionId": "rb-1"})),
        ] {
            let resp = strict
                .post(sb.url(path))
                .bearer_auth(KEY)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), status, "{path}");
            assert!(resp.headers().get("x-sandbox-raw").is_none());
        }
        let l = sb.ledger().await;
        assert!(l.transactions.is_empty());
        assert_eq!(l.requests.redirect_hits, 0);
    }
}

#[tokio::test]
async fn an_endless_body_keeps_coming() {
    let sb = sandbox(SandboxConfig {
        misbehaviour: sandbox::Misbehaviour {
            endless_body: true,
            ..Default::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let mut resp = sb
        .client
        .post(sb.url("/initiates"))
        .bearer_auth(KEY)
        .json(&initiate_body("e-1", "1", "XOF", "1"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let mut read = 0usize;
    while read < 4 * 1024 * 1024 {
        let chunk = resp.chunk().await.unwrap().expect("the body never ends");
        read += chunk.len();
    }
    drop(resp);
    assert!(sb.running.ledger().transactions.is_empty());
}

#[tokio::test]
async fn a_401_can_quote_the_authorization_header() {
    let config = |echo| SandboxConfig {
        misbehaviour: sandbox::Misbehaviour {
            echo_authorization: echo,
            ..Default::default()
        },
        ..SandboxConfig::default()
    };
    let sb = sandbox(config(true)).await;
    let o = sb
        .post_with_key("/initiates", Some("sk_live_SECRET"), &json!({}))
        .await;
    assert_eq!(o.status(), Some(StatusCode::UNAUTHORIZED));
    assert!(
        o.body()["message"]
            .as_str()
            .unwrap()
            .contains("Bearer sk_live_SECRET")
    );
    let plain = sandbox(config(false)).await;
    let o = plain
        .post_with_key("/initiates", Some("sk_live_SECRET"), &json!({}))
        .await;
    assert!(!o.body()["message"].as_str().unwrap().contains("SECRET"));
}

#[tokio::test]
async fn an_initiate_answer_can_echo_another_amount() {
    let sb = sandbox(SandboxConfig {
        misbehaviour: sandbox::Misbehaviour {
            initiate_mismatch: Some(sandbox::Mismatch::Amount),
            ..Default::default()
        },
        ..SandboxConfig::default()
    })
    .await;
    let o = sb.initiate("m-1", "10", "2250700000001").await;
    assert_eq!(o.body()["data"]["amount"], "11");
    assert_eq!(o.body()["data"]["accountId"], "2250700000001");
    assert_eq!(
        sb.ledger().await.get("m-1").unwrap().amount,
        Decimal::from(10)
    );
}

/// Starts `payrun sandbox` with `args` on a free port; returns the child
/// and its base URL.
async fn spawn_cli(args: &[&str]) -> (tokio::process::Child, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_payrun"))
        .args(["sandbox", "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("PAYRUN_SANDBOX_API_KEY")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next_line().await.unwrap().expect("a first line");
    let base = first
        .strip_prefix("payrun sandbox listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
        .to_owned();
    // Read the key and seed lines too: closing the pipe earlier would fail
    // the sandbox's own printing.
    for _ in 0..2 {
        lines
            .next_line()
            .await
            .unwrap()
            .expect("key and seed lines");
    }
    (child, base)
}

#[tokio::test]
async fn the_cli_state_file_survives_kill_9() {
    let dir = std::env::temp_dir().join(format!("payrun-sbx-kill-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sandbox-state.json");
    let _ = std::fs::remove_file(&path);
    let state = path.to_str().unwrap();
    let args = [
        "--state",
        state,
        "--wallet",
        "XOF=1000",
        "--dialect",
        "flat",
        "--non-idempotent-execute",
    ];
    let client = Client::new();
    let (mut child, base) = spawn_cli(&args).await;
    let post = |base: &str, path: &str, body: Value| {
        client
            .post(format!("{base}{path}"))
            .bearer_auth(KEY)
            .json(&body)
            .send()
    };
    let i = post(
        &base,
        "/initiates",
        initiate_body("cli-k", "100", "XOF", "2250700000001"),
    )
    .await
    .unwrap();
    assert_eq!(i.status(), StatusCode::CREATED);
    let body: Value = i.json().await.unwrap();
    assert_eq!(body["status"], "INITIATED");
    let e = post(&base, "/executes", json!({"transactionId": "cli-k"}))
        .await
        .unwrap();
    assert_eq!(e.status(), StatusCode::OK);
    // No graceful stop: the answered calls must already be on disk.
    child.kill().await.unwrap();
    let kept = sandbox::read_state(&path).unwrap();
    assert_eq!(kept.wallets["XOF"], Decimal::from(900));

    let (mut child, base) = spawn_cli(&args).await;
    let e = post(&base, "/executes", json!({"transactionId": "cli-k"}))
        .await
        .unwrap();
    assert_eq!(e.status(), StatusCode::OK);
    let ledger: LedgerSnapshot = client
        .get(format!("{base}/_sandbox/ledger"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let t = ledger.get("cli-k").unwrap();
    assert_eq!((t.debits, t.execute_calls), (2, 2));
    assert_eq!(ledger.wallets["XOF"], Decimal::from(800));
    stop(&mut child).await;
    std::fs::remove_dir_all(&dir).unwrap();
}
