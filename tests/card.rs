//! End-to-end tests of `payrun pay`: the real binary against the in-process
//! sandbox (on 127.0.0.1:0), with its test cards: `4000000000003220` is
//! enrolled in 3-D Secure, `4242424242424242` is not. Each test works in its
//! own temporary folder, which is also the binary's working directory and
//! home, so anything payrun could write lands there and can be inspected.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use payrun::sandbox::{self, Running, SandboxConfig};
use serde_json::{Value, json};

const ENROLLED: &str = "4000000000003220";
const ENROLLED_MASKED: &str = "400000******3220";
const NOT_ENROLLED: &str = "4242424242424242";
/// Leading zeros: Rust never prints an integer (a port, a count, a duration)
/// with one, so these can only appear in the output if payrun leaked them.
const CVV: &str = "0478";
const OTP: &str = "052718";
/// A CVV of the wrong length, in the invalid request.
const BAD_CVV: &str = "04780";

struct Env {
    rt: tokio::runtime::Runtime,
    /// `None` only while dropping.
    sandbox: Option<Running>,
    dir: tempfile::TempDir,
}

impl Env {
    fn new(config: SandboxConfig) -> Env {
        // A multi-threaded runtime keeps serving while the test thread
        // waits for the binary.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let sandbox = rt.block_on(sandbox::start(config)).unwrap();
        Env {
            rt,
            sandbox: Some(sandbox),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn default() -> Env {
        Env::new(SandboxConfig::default())
    }

    fn sandbox(&self) -> &Running {
        self.sandbox.as_ref().unwrap()
    }

    fn base_url(&self) -> String {
        self.sandbox().base_url()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A `payrun pay` command in the temp folder with the sandbox's key;
    /// every place a program might write to by default points inside it.
    fn pay(&self) -> Command {
        let home = self.dir.path();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
        cmd.arg("pay")
            .current_dir(home)
            .env("PAYRUN_API_KEY", sandbox::DEFAULT_API_KEY)
            .env("HOME", home)
            .env("TMPDIR", home)
            .env("XDG_CONFIG_HOME", home)
            .env("XDG_CACHE_HOME", home)
            .env("XDG_DATA_HOME", home)
            .env("XDG_STATE_HOME", home)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `payrun pay --base-url <sandbox> --request <file>` on `request`.
    fn pay_file(&self, request: &Value, extra: &[&str]) -> Output {
        let file = self.path("request.json");
        std::fs::write(&file, request.to_string()).unwrap();
        self.pay()
            .arg("--base-url")
            .arg(self.base_url())
            .arg("--request")
            .arg(&file)
            .args(extra)
            .output()
            .unwrap()
    }

    fn ledger(&self) -> sandbox::LedgerSnapshot {
        self.sandbox().ledger()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // Stop the server before the runtime goes.
        if let Some(sandbox) = self.sandbox.take() {
            let _ = self.rt.block_on(sandbox.shutdown());
        }
    }
}

fn request(card: &str, transaction_id: &str) -> Value {
    json!({
        "transaction_id": transaction_id,
        "merchant_id": "merchant-1",
        "currency": "XOF",
        "payment_method_id": "card",
        "amount": "25000",
        "payment_details": {
            "momo_number": "+2250700000000",
            "otp": OTP,
            "customer_email": "ama.mensah@example.com",
            "customer_firstname": "Ama",
            "customer_lastname": "Mensah",
            "description": "Order 42",
            "card_number": card,
            "card_cvv": CVV,
            "expiry_month": "12",
            "expiry_year": "39",
            "name_on_card": "AMA MENSAH"
        }
    })
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
fn json_out(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", stdout(o)))
}

#[test]
fn enrolled_card_gets_a_3ds_redirect() {
    let env = Env::default();
    let out = env.pay_file(&request(ENROLLED, "PAY-1"), &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.contains("3-D SECURE REQUIRED"), "{text}");
    let url = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("http"))
        .unwrap_or_else(|| panic!("no URL in {text}"));
    assert!(url.contains("PAY-1"), "{url}");
    assert!(text.contains(ENROLLED_MASKED), "{text}");
    let ledger = env.ledger();
    let entry = ledger.get("PAY-1").expect("the sandbox has the payment");
    assert_eq!(entry.status, "REQUIRES_3DS");
    assert_eq!(entry.initiate_calls, 1);
    assert_eq!(ledger.requests.pay, 1);
}

#[test]
fn json_format_from_standard_input() {
    let env = Env::default();
    let mut child = env
        .pay()
        .args(["--base-url", &env.base_url()])
        .args(["--request", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(request(ENROLLED, "PAY-STDIN").to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "requires_3ds");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["transaction_id"], "PAY-STDIN");
    assert_eq!(v["card"], ENROLLED_MASKED);
    assert_eq!(v["amount"], "25000");
    assert_eq!(v["currency"], "XOF");
    let url = v["redirect_url"].as_str().unwrap();
    assert!(
        url.starts_with("http") && url.contains("PAY-STDIN"),
        "{url}"
    );
    assert!(env.ledger().get("PAY-STDIN").is_some());
}

#[test]
fn card_not_enrolled_is_refused_in_plain_words() {
    let env = Env::default();
    let out = env.pay_file(&request(NOT_ENROLLED, "PAY-2"), &[]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}{}", stderr(&out));
    assert!(text.starts_with("REFUSED"), "{text}");
    assert!(text.contains("not enrolled in 3-D Secure"), "{text}");
    assert!(text.contains("424242******4242"), "{text}");
    assert!(text.contains("Nothing was charged"), "{text}");

    let out = env.pay_file(&request(NOT_ENROLLED, "PAY-3"), &["--format", "json"]);
    assert_eq!(out.status.code(), Some(3));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["code"], "CARD_NOT_3DS_ENROLLED");
    assert_eq!(v["http_status"], 422);
    assert_eq!(v["charged"], false);
}

#[test]
fn invalid_request_exits_2_and_sends_nothing() {
    let env = Env::default();
    let mut bad = request("4000000000003221", "PAY-4");
    bad["payment_details"]["card_cvv"] = json!("12");
    bad["amount"] = json!("10.50");
    let out = env.pay_file(&bad, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("nothing was sent"), "{err}");
    assert!(
        err.contains("payment_details.card_number = 400000******3221"),
        "{err}"
    );
    assert!(err.contains("Luhn"), "{err}");
    assert!(
        err.contains("payment_details.card_cvv = (hidden, 2 characters)"),
        "{err}"
    );
    assert!(err.contains("amount = \"10.50\""), "{err}");
    assert!(!err.contains("4000000000003221"), "{err}");
    assert_eq!(stdout(&out), "");

    // An expired card, in JSON.
    let mut expired = request(ENROLLED, "PAY-5");
    expired["payment_details"]["expiry_year"] = json!("20");
    let out = env.pay_file(&expired, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    let v = json_out(&out);
    assert_eq!(v["outcome"], "invalid");
    let fields: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["payment_details.expiry_month/expiry_year"]);

    let ledger = env.ledger();
    assert_eq!(ledger.requests.pay, 0, "nothing may reach the provider");
    assert!(ledger.transactions.is_empty());
}

/// `80.000` XOF reads 80 with a decimal point and 80 000 the French way:
/// refused before anything is sent, naming the value and both readings,
/// never charged as 80.
#[test]
fn locale_ambiguous_amount_is_refused_and_not_sent() {
    let env = Env::default();
    let mut req = request(ENROLLED, "PAY-80");
    req["amount"] = json!("80.000");
    let out = env.pay_file(&req, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("amount = \"80.000\""), "{err}");
    assert!(err.contains("reads 80 "), "{err}");
    assert!(err.contains("\"80000\" if 80000 is meant"), "{err}");
    assert!(env.ledger().get("PAY-80").is_none());
}

#[test]
fn ambiguous_answer_is_unknown_and_never_resent() {
    for config in [
        // Carried out, then answered 503 or cut off.
        SandboxConfig {
            ambiguous_rate: 1.0,
            ..SandboxConfig::default()
        },
        // A 5xx before anything is done: payrun cannot tell the difference.
        SandboxConfig {
            fail_rate: 1.0,
            ..SandboxConfig::default()
        },
    ] {
        let env = Env::new(config.clone());
        let out = env.pay_file(&request(ENROLLED, "PAY-6"), &[]);
        let text = stdout(&out);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{config:?}: {text}{}",
            stderr(&out)
        );
        assert!(text.starts_with("UNKNOWN"), "{text}");
        assert!(
            text.contains("check transaction_id PAY-6 with the provider"),
            "{text}"
        );
        assert_eq!(
            env.ledger().requests.pay,
            1,
            "sent exactly once: {config:?}"
        );

        let out = env.pay_file(&request(ENROLLED, "PAY-7"), &["--format", "json"]);
        assert_eq!(out.status.code(), Some(3));
        let v = json_out(&out);
        assert_eq!(v["outcome"], "unknown");
        assert_eq!(v["transaction_id"], "PAY-7");
        assert_eq!(env.ledger().requests.pay, 2);
    }
}

#[test]
fn provider_down_is_not_sent() {
    let env = Env::default();
    // A port that was free a moment ago and has no listener now.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let file = env.path("request.json");
    std::fs::write(&file, request(ENROLLED, "PAY-8").to_string()).unwrap();
    let out = env
        .pay()
        .args(["--base-url", &url, "--request"])
        .arg(&file)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.starts_with("NOT SENT"), "{text}");
    assert!(text.contains("Nothing was charged"), "{text}");
}

#[test]
fn wrong_or_missing_api_key_exits_1() {
    let env = Env::default();
    let file = env.path("request.json");
    std::fs::write(&file, request(ENROLLED, "PAY-9").to_string()).unwrap();
    let out = env
        .pay()
        .env("PAYRUN_API_KEY", "sk_wrong")
        .args(["--base-url", &env.base_url(), "--request"])
        .arg(&file)
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("refused the API key"), "{text}");
    assert!(!text.contains("sk_wrong") && !stderr(&out).contains("sk_wrong"));

    let out = env
        .pay()
        .env_remove("PAYRUN_API_KEY")
        .args(["--base-url", &env.base_url(), "--request"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("PAYRUN_API_KEY"), "{}", stderr(&out));
    assert!(env.ledger().get("PAY-9").is_none());
}

#[test]
fn merchant_payment_method_and_base_url_come_from_the_config() {
    let env = Env::default();
    let mut req = request(ENROLLED, "PAY-10");
    let obj = req.as_object_mut().unwrap();
    obj.remove("merchant_id");
    obj.remove("payment_method_id");
    let file = env.path("request.json");
    std::fs::write(&file, req.to_string()).unwrap();

    // Without them anywhere: a validation error naming the config keys.
    let out = env.pay().arg("--request").arg(&file).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`merchant_id` in payrun.toml"), "{err}");
    assert!(err.contains("`card_payment_method_id`"), "{err}");

    let config = env.path("pay.toml");
    std::fs::write(
        &config,
        format!(
            "base_url = \"{}\"\nmerchant_id = \"merchant-1\"\ncard_payment_method_id = \"card\"\n",
            env.base_url()
        ),
    )
    .unwrap();
    let out = env
        .pay()
        .arg("--config")
        .arg(&config)
        .arg("--request")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(env.ledger().get("PAY-10").unwrap().status, "REQUIRES_3DS");
}

#[test]
fn missing_base_url_or_request_file_exits_1() {
    let env = Env::default();
    let file = env.path("request.json");
    std::fs::write(&file, request(ENROLLED, "PAY-11").to_string()).unwrap();
    let out = env.pay().arg("--request").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--base-url"), "{}", stderr(&out));

    let out = env
        .pay()
        .args(["--base-url", &env.base_url()])
        .arg("--request")
        .arg(env.path("nope.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("nope.json"), "{}", stderr(&out));
    assert_eq!(env.ledger().requests.pay, 0);
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// Digit runs of `text` not preceded by `.` (a fraction such as `1.0478ms`
/// may legitimately start with zeros; nothing else payrun prints does).
fn digit_tokens(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if start == 0 || bytes[start - 1] != b'.' {
                tokens.push(&text[start..i]);
            }
        } else {
            i += 1;
        }
    }
    tokens
}

/// Asserts `text` (from `origin`) holds no card number, CVV or OTP.
fn assert_no_card_data(origin: &str, text: &str) {
    for pan in [ENROLLED, NOT_ENROLLED, "4000000000003221"] {
        assert!(!text.contains(pan), "{origin} shows a card number:\n{text}");
        let spaced: Vec<&str> = (0..4).map(|i| &pan[i * 4..i * 4 + 4]).collect();
        assert!(
            !text.contains(&spaced.join(" ")),
            "{origin} shows a card number:\n{text}"
        );
    }
    for secret in [CVV, OTP, BAD_CVV] {
        assert!(
            !text.contains(&format!("\"{secret}\"")),
            "{origin} shows {secret}:\n{text}"
        );
        assert!(
            !digit_tokens(text).contains(&secret),
            "{origin} shows {secret}:\n{text}"
        );
    }
}

#[test]
fn no_card_data_in_any_output_or_file() {
    let mut invalid = request("4000000000003221", "PAY-L4");
    invalid["payment_details"]["card_cvv"] = json!(BAD_CVV);
    let cases = [
        (SandboxConfig::default(), request(ENROLLED, "PAY-L1"), 0),
        (SandboxConfig::default(), request(NOT_ENROLLED, "PAY-L2"), 3),
        (
            SandboxConfig {
                ambiguous_rate: 1.0,
                ..SandboxConfig::default()
            },
            request(ENROLLED, "PAY-L3"),
            3,
        ),
        (SandboxConfig::default(), invalid, 2),
    ];
    for (config, req, code) in cases {
        let env = Env::new(config);
        for format in ["text", "json"] {
            // The request arrives on standard input, so every file in the
            // folder is one payrun wrote.
            let mut child = env
                .pay()
                .env("RUST_LOG", "trace")
                .env("RUST_BACKTRACE", "1")
                .args(["--base-url", &env.base_url()])
                .args(["--request", "-", "--format", format])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(req.to_string().as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            let all = format!("{}\n{}", stdout(&out), stderr(&out));
            assert_eq!(out.status.code(), Some(code), "{all}");
            assert_no_card_data(&format!("payrun pay ({format}, exit {code})"), &all);
            if code != 2 {
                // The logs were captured (so they were scanned too).
                assert!(stderr(&out).contains("sending card payment"), "{all}");
                // The masked number is what the user sees instead.
                let masked = if req["payment_details"]["card_number"] == ENROLLED {
                    ENROLLED_MASKED
                } else {
                    "424242******4242"
                };
                assert!(all.contains(masked), "{all}");
            }
            for file in files_under(env.dir.path()) {
                let bytes = std::fs::read(&file).unwrap();
                assert_no_card_data(
                    &file.display().to_string(),
                    &String::from_utf8_lossy(&bytes),
                );
            }
        }
        assert!(
            files_under(env.dir.path()).is_empty(),
            "payrun pay writes no file"
        );
    }
}
