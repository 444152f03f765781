//! Helpers shared by the end-to-end tests: an in-process sandbox on a free
//! loopback port, payroll files generated in a temporary folder, and the
//! real `payrun` binary run against them.
#![allow(dead_code)]

pub mod browser;
pub mod cluster;
pub mod money;
pub mod pg;

use payrun::sandbox::{LedgerSnapshot, Running, SandboxConfig};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const KEY: &str = "sk_sandbox_test";

/// The config line that keeps runs from asking the status call before
/// their verdict (see [`Work::parked`]).
pub const NO_SETTLE_WAIT: &str = "settle_wait = \"0s\"\n";

/// Retry backoff base for every run the tests start (`PAYRUN_BACKOFF_MS`):
/// the real retry policy, with waits short enough that no test sleeps on
/// backoff meant for a real provider.
pub const TEST_BACKOFF_MS: &str = "5";

/// The sandbox account of payroll row `i`.
pub fn account(i: usize) -> String {
    format!("22507{:08}", i)
}

/// A fresh random seed per test run, printed with the command that replays
/// it, or the one set in the environment variable `var`.
pub fn seed(var: &str, test: &str) -> u64 {
    let seed = std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("{test} seed {seed}: replay with {var}={seed} cargo test --test {test}");
    seed
}

/// A sandbox running on its own runtime for the life of the test.
pub struct Sandbox {
    pub rt: tokio::runtime::Runtime,
    pub running: Option<Running>,
}

impl Sandbox {
    pub fn start(config: SandboxConfig) -> Sandbox {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let running = rt.block_on(payrun::sandbox::start(config)).unwrap();
        Sandbox {
            rt,
            running: Some(running),
        }
    }

    pub fn base_url(&self) -> String {
        self.running.as_ref().unwrap().base_url()
    }

    pub fn ledger(&self) -> LedgerSnapshot {
        self.running.as_ref().unwrap().ledger()
    }

    /// The request counters alone (cheap enough to poll often).
    pub fn requests(&self) -> payrun::sandbox::RequestCounts {
        self.running.as_ref().unwrap().requests()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = self.rt.block_on(r.shutdown());
        }
    }
}

/// A temporary working folder with a payroll file.
pub struct Work {
    pub dir: tempfile::TempDir,
}

impl Work {
    pub fn new() -> Work {
        Work {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }
    /// A `payrun.toml` with `settle_wait = "0s"`: runs do not ask the
    /// sandbox's status call before their verdict, so what an ambiguous
    /// answer parks (`unknown`, `processing`) stays parked for the test.
    pub fn parked(&self) -> &Work {
        self.write("payrun.toml", NO_SETTLE_WAIT);
        self
    }
    pub fn db(&self) -> PathBuf {
        self.path("payrun.db")
    }
    pub fn report(&self) -> PathBuf {
        self.path("report.csv")
    }
    /// `payrun run FILE` against `base_url` with the test key.
    pub fn run_cmd(&self, file: &Path, base_url: &str, extra: &[&str]) -> Command {
        self.run_cmd_to(file, base_url, &self.report(), extra)
    }
    /// [`Work::run_cmd`] with the report written to `report`.
    pub fn run_cmd_to(
        &self,
        file: &Path,
        base_url: &str,
        report: &Path,
        extra: &[&str],
    ) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
        cmd.current_dir(self.dir.path())
            .env("PAYRUN_API_KEY", KEY)
            // Never the real per-user data folder, whatever a test forgets.
            .env("XDG_DATA_HOME", self.path("data"))
            .env("PAYRUN_BACKOFF_MS", TEST_BACKOFF_MS)
            .env_remove("RUST_LOG")
            .arg("run")
            .arg(file)
            .arg("--base-url")
            .arg(base_url)
            .arg("--db")
            .arg(self.db())
            .arg("--report")
            .arg(report)
            .arg("--quiet")
            .args(extra);
        cmd
    }
    pub fn run(&self, file: &Path, base_url: &str, extra: &[&str]) -> Output {
        self.run_cmd(file, base_url, extra).output().unwrap()
    }
    /// `payrun reconcile --resend` on the test database against `base_url`.
    pub fn reconcile_resend(&self, base_url: &str) -> Output {
        Command::new(env!("CARGO_BIN_EXE_payrun"))
            .current_dir(self.dir.path())
            .env("PAYRUN_API_KEY", KEY)
            .env("XDG_DATA_HOME", self.path("data"))
            .args(["reconcile", "--resend", "--base-url", base_url, "--db"])
            .arg(self.db())
            .output()
            .unwrap()
    }
    /// Re-sends the executes left unknown until none is (the sandbox here
    /// is idempotent), then rewrites the report, as an operator would.
    pub fn settle_by_resend(&self, base_url: &str) {
        for _ in 0..20 {
            if code(&self.reconcile_resend(base_url)) == 0 {
                break;
            }
        }
        let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
            .current_dir(self.dir.path())
            .env("XDG_DATA_HOME", self.path("data"))
            .args(["report", "--db"])
            .arg(self.db())
            .arg("--out")
            .arg(self.report())
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "{}", text(&out));
    }
    /// The approval file (`html` or `csv`) of the latest run that wrote
    /// one here: `approval-run-N.EXT` with the largest N.
    pub fn latest_approval(&self, ext: &str) -> PathBuf {
        let suffix = format!(".{ext}");
        let n = std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_prefix("approval-run-")?
                    .strip_suffix(suffix.as_str())?
                    .parse::<u64>()
                    .ok()
            })
            .max()
            .expect("an approval file");
        self.path(&format!("approval-run-{n}{suffix}"))
    }
    pub fn report_rows(&self) -> Vec<csv::StringRecord> {
        read_csv(&self.report())
    }
}

/// `payrun reconcile --db DB ARGS` in the work folder.
pub fn reconcile(w: &Work, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .env_remove("RUST_LOG")
        .arg("reconcile")
        .arg("--db")
        .arg(w.db())
        .args(args)
        .output()
        .unwrap()
}

/// The sandbox's statement as its back office exports it
/// (`/_sandbox/statement?format=csv` and `query`, e.g. `&lang=fr`).
pub fn sandbox_statement(sb: &Sandbox, query: &str) -> String {
    let url = format!("{}/_sandbox/statement?format=csv{query}", sb.base_url());
    sb.rt.block_on(async {
        reqwest::Client::new()
            .get(url)
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    })
}

pub fn read_csv(path: &Path) -> Vec<csv::StringRecord> {
    let mut r = csv::Reader::from_path(path).unwrap();
    r.records().map(|r| r.unwrap()).collect()
}

pub const HEADER: &str = "account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname";

/// A payroll of `n` valid rows; `account(i)` gives row i's account.
pub fn payroll(n: usize, account: impl Fn(usize) -> String) -> String {
    let mut s = String::from(HEADER);
    s.push('\n');
    let currencies = ["XOF", "GHS", "KES", "NGN", "USD", "EUR"];
    for i in 0..n {
        s.push_str(&format!(
            "{},{},{},momo,Salary {i},Ama,Mensah{i}\n",
            account(i),
            1000 + i,
            currencies[i % currencies.len()]
        ));
    }
    s
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn col(rows: &[csv::StringRecord], i: usize, name: &str) -> String {
    let idx = payrun::report::REPORT_HEADER
        .iter()
        .position(|h| *h == name)
        .unwrap();
    rows[i][idx].to_string()
}
