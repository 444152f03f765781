//! The operator's flows of the README, end to end with the real binary:
//! the in-process sandbox keeps its books between commands (rehearsal),
//! a wallet runs out and is topped up, runs are cancelled or pointed at a
//! corrected URL, SIGTERM stops a run cleanly, and every run ends with a
//! verdict (also as JSON and through `on_finish`).

mod common;

use common::{code, read_csv, text};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The README's sample payroll, copied into a fresh folder.
struct Rehearsal {
    dir: tempfile::TempDir,
}

impl Rehearsal {
    fn new() -> Rehearsal {
        let dir = tempfile::tempdir().unwrap();
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/payroll.csv");
        std::fs::copy(sample, dir.path().join("payroll.csv")).unwrap();
        Rehearsal { dir }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_payrun"));
        c.current_dir(self.dir.path())
            // The per-user data folder (where the databases live) is the
            // test's own.
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env_remove("PAYRUN_API_KEY")
            .env_remove("RUST_LOG")
            .args(args);
        c
    }
    fn payrun(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
    /// Report rows per state.
    fn states(&self) -> std::collections::BTreeMap<String, usize> {
        let mut m = std::collections::BTreeMap::new();
        for r in read_csv(&self.path("report.csv")) {
            *m.entry(common::col(&[r], 0, "state")).or_insert(0) += 1;
        }
        m
    }
}

/// The in-process sandbox's books, beside its database in the data folder.
const SANDBOX_STATE: &str = "data/payrun/payrun-sandbox.db.sandbox.json";

#[test]
fn quick_start_pays_all_fifty_and_a_second_run_sends_nothing() {
    let r = Rehearsal::new();
    let out = r.payrun(&["run", "payroll.csv", "--sandbox", "--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(r.states().get("executed"), Some(&50));
    let before = payrun::sandbox::read_state(&r.path(SANDBOX_STATE)).unwrap();
    assert_eq!(before.transactions.len(), 50);
    let out = r.payrun(&["run", "payroll.csv", "--sandbox", "--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let after = payrun::sandbox::read_state(&r.path(SANDBOX_STATE)).unwrap();
    assert_eq!(
        before, after,
        "the second run made no call that changed the books"
    );
}

#[test]
fn initiate_only_then_run_executes_all_fifty() {
    let r = Rehearsal::new();
    let out = r.payrun(&[
        "run",
        "payroll.csv",
        "--sandbox",
        "--rate",
        "1000",
        "--initiate-only",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(r.states().get("initiated"), Some(&50));
    let out = r.payrun(&["run", "payroll.csv", "--sandbox", "--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(r.states().get("executed"), Some(&50), "{}", text(&out));
    let ledger = payrun::sandbox::read_state(&r.path(SANDBOX_STATE)).unwrap();
    assert!(ledger.transactions.iter().all(|t| t.debits == 1));
}

#[test]
fn a_wallet_runs_out_is_topped_up_and_the_run_finishes() {
    let r = Rehearsal::new();
    // 12 XOF rows of about 200,000 each: 500,000 pays two or so.
    let out = r.payrun(&[
        "sandbox",
        "--state",
        SANDBOX_STATE,
        "--set-wallet",
        "XOF=500000",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("XOF 500000"));
    // One call at a time, so the first refusal halts XOF before another
    // XOF execute is sent.
    let one = [
        "run",
        "payroll.csv",
        "--sandbox",
        "--rate",
        "1000",
        "--concurrency",
        "1",
    ];
    let out = r.payrun(&one);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let states = r.states();
    let waiting = states.get("initiated").copied().unwrap_or(0);
    let failed = states.get("execute_failed").copied().unwrap_or(0);
    assert!(waiting > 0, "{states:?}");
    assert!(failed <= 1, "{states:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("top"), "the verdict says to top up: {err}");

    let out = r.payrun(&[
        "sandbox",
        "--state",
        SANDBOX_STATE,
        "--top-up",
        "XOF=100000000",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = r.payrun(&one);
    let states = r.states();
    assert_eq!(states.get("initiated"), None, "{states:?}");
    assert_eq!(
        states.get("executed").copied().unwrap_or(0) + failed,
        50,
        "{states:?}"
    );
    assert_eq!(
        code(&out),
        if failed == 0 { 0 } else { 3 },
        "{}",
        text(&out)
    );
}

/// The process status a stopped, resumable run exits with (README "Exit
/// codes": 1, "stopped early and can be resumed").
const STOPPED: i32 = 1;

#[test]
fn sigterm_stops_cleanly_reports_and_leaves_nothing_executing() {
    use payrun::sandbox::SandboxConfig;
    let sb = common::Sandbox::start(SandboxConfig {
        latency_ms: 50,
        ..SandboxConfig::default()
    });
    let w = common::Work::new();
    let file = w.write(
        "payroll.csv",
        &common::payroll(400, |i| format!("22507{i:08}")),
    );
    let child = w
        .run_cmd(
            &file,
            &sb.base_url(),
            &["--rate", "1000", "--concurrency", "4"],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until money is moving (a condition, not a fixed delay).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while sb
        .ledger()
        .transactions
        .iter()
        .filter(|t| t.debits > 0)
        .count()
        < 5
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: sends a signal to our own child, whose pid we hold.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), STOPPED, "{}", text(&out));
    let rows = w.report_rows();
    assert_eq!(rows.len(), 400, "the report is written");
    let state = |id: &str| {
        rows.iter()
            .find(|r| common::col(std::slice::from_ref(*r), 0, "transaction_id") == id)
            .map(|r| common::col(std::slice::from_ref(r), 0, "state"))
    };
    let states: Vec<String> = rows
        .iter()
        .map(|r| common::col(std::slice::from_ref(r), 0, "state"))
        .collect();
    assert!(states.iter().any(|s| s == "pending"), "it stopped early");
    assert!(!states.iter().any(|s| s == "executing" || s == "initiating"));
    for t in sb.ledger().transactions {
        if t.debits > 0 {
            assert_eq!(state(&t.transaction_id).as_deref(), Some("executed"));
        }
    }
    // And the same command resumes and finishes.
    let out = w.run(&file, &sb.base_url(), &["--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
}

/// A loopback port with nothing listening: every call is refused, never sent.
fn dead_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

#[test]
fn a_run_against_a_wrong_url_resumes_against_the_right_one() {
    let sb = common::Sandbox::start(payrun::sandbox::SandboxConfig::default());
    let r = Rehearsal::new();
    let file = r.path("payroll.csv");
    let w = common::Work { dir: r.dir };
    let out = w.run(&file, &dead_url(), &["--concurrency", "1"]);
    assert_eq!(code(&out), STOPPED, "{}", text(&out));
    let out = w.run(&file, &sb.base_url(), &["--rate", "1000"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().transactions.len(), 50);
    // Once something was sent, the run stays with its provider.
    let out = w.run(&file, &dead_url(), &[]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("payrun cancel"), "{}", text(&out));
}

#[test]
fn cancel_ends_an_unsent_run_and_frees_its_ids() {
    let sb = common::Sandbox::start(payrun::sandbox::SandboxConfig::default());
    let r = Rehearsal::new();
    let file = r.path("payroll.csv");
    let w = common::Work { dir: r.dir };
    let out = w.run(&file, &dead_url(), &["--concurrency", "1"]);
    assert_eq!(code(&out), STOPPED, "{}", text(&out));
    let cancel = |run: &str| {
        Command::new(env!("CARGO_BIN_EXE_payrun"))
            .args(["cancel", run, "--db"])
            .arg(w.db())
            .output()
            .unwrap()
    };
    let out = cancel("1");
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("50 payout(s) cancelled before sending"));
    assert_eq!(code(&cancel("9")), 1, "no such run");
    // The same ids pay in a new run of the corrected setup.
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--label", "again", "--rate", "1000"],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let ids: Vec<String> = sb
        .ledger()
        .transactions
        .iter()
        .map(|t| t.transaction_id.clone())
        .collect();
    assert!(ids.contains(&"PAY-2025-03-001".to_string()), "{ids:?}");
}

#[test]
fn cancel_after_initiation_keeps_ids_used() {
    let r = Rehearsal::new();
    let base = ["run", "payroll.csv", "--sandbox", "--rate", "1000"];
    let out = r.payrun(&[&base[..], &["--initiate-only"]].concat());
    assert_eq!(code(&out), 0, "{}", text(&out));
    let out = r.payrun(&["cancel", "1", "--sandbox"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("50 cancelled after initiation"));
    // Running it again executes nothing.
    let out = r.payrun(&base);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(r.states().get("cancelled"), Some(&50));
    let ledger = payrun::sandbox::read_state(&r.path(SANDBOX_STATE)).unwrap();
    assert!(ledger.transactions.iter().all(|t| t.debits == 0));
    // A new run of the same ids sends nothing: the provider saw them, and
    // the history lists each row with the run that holds it.
    let out = r.payrun(&[&base[..], &["--label", "again"]].concat());
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        text(&out).contains("50 row(s) were already"),
        "{}",
        text(&out)
    );
    let ledger = payrun::sandbox::read_state(&r.path(SANDBOX_STATE)).unwrap();
    assert!(ledger.transactions.iter().all(|t| t.execute_calls == 0));
}

#[test]
fn json_logs_are_json_on_every_line_and_end_with_the_result() {
    let r = Rehearsal::new();
    let out = r.payrun(&[
        "run",
        "payroll.csv",
        "--sandbox",
        "--rate",
        "1000",
        "--log-format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "run_result", "{last}");
    assert_eq!(last["counts"]["executed"], 50);
    assert_eq!(last["exit_code"], 0);
    assert!(
        last["advice"][0]
            .as_str()
            .unwrap()
            .contains("nothing left to do")
    );
    assert!(!err.contains('\u{1b}'), "no colours when piped");
}

#[test]
fn quiet_still_says_what_to_do_next() {
    let r = Rehearsal::new();
    let out = r.payrun(&[
        "run",
        "payroll.csv",
        "--sandbox",
        "--rate",
        "1000",
        "--quiet",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("next: all 50 payout(s) executed"), "{err}");
}

#[test]
fn on_finish_command_receives_the_result_without_secrets() {
    let r = Rehearsal::new();
    std::fs::write(r.path("payrun.toml"), "on_finish = \"cat > result.json\"\n").unwrap();
    let out = r
        .cmd(&[
            "run",
            "payroll.csv",
            "--sandbox",
            "--rate",
            "1000",
            "--quiet",
        ])
        .env("PAYRUN_API_KEY", "sk_live_secret_never_shown")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", text(&out));
    let body = std::fs::read_to_string(r.path("result.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["type"], "run_result");
    assert_eq!(v["counts"]["executed"], 50);
    assert!(!body.contains("sk_"), "{body}");
}

#[test]
fn on_finish_url_receives_the_result() {
    use std::sync::{Arc, Mutex};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let got: Arc<Mutex<Option<String>>> = Arc::default();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let sink = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: String| {
            let sink = sink.clone();
            async move {
                *sink.lock().unwrap() = Some(body);
                "ok"
            }
        }),
    );
    rt.spawn(async move { axum::serve(listener, app).await });
    let r = Rehearsal::new();
    std::fs::write(
        r.path("payrun.toml"),
        format!("on_finish = \"http://{addr}/hook\"\n"),
    )
    .unwrap();
    let out = r.payrun(&[
        "run",
        "payroll.csv",
        "--sandbox",
        "--rate",
        "1000",
        "--quiet",
    ]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let body = got.lock().unwrap().clone().expect("the hook was called");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["counts"]["executed"], 50);
    assert_eq!(v["exit_code"], 0);
}
