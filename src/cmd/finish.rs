//! How a run's end reaches people and machines: the messages of `payrun
//! run` as text or as JSON lines (`--log-format json`), the run-result
//! object (also the last JSON line), and its delivery to the `on_finish`
//! command or URL. The result carries row numbers, counts, totals and file
//! paths, never the API key or the provider URL (which may hold
//! credentials).

use crate::engine::{Ran, Stop};
use crate::exit::Exit;
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// How long `on_finish` may take: a hook that hangs must not keep a cron
/// job (and its run lock) alive, yet a chat webhook answers in seconds.
const ON_FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// The messages of a run on stderr, as text or one JSON object per line.
#[derive(Debug, Clone, Copy)]
pub struct Say {
    pub json: bool,
}

impl Say {
    pub fn line(&self, level: &str, message: &str) {
        if self.json {
            eprintln!(
                "{}",
                json!({"level": level, "target": "payrun", "fields": {"message": message}})
            );
        } else {
            eprintln!("payrun: {message}");
        }
    }
    pub fn info(&self, message: &str) {
        self.line("INFO", message)
    }
    pub fn warn(&self, message: &str) {
        self.line("WARN", message)
    }
}

/// A writer that turns every line written to it into a JSON object on
/// stderr (the plain progress lines under `--log-format json`).
pub struct JsonLines {
    buf: Vec<u8>,
}

impl JsonLines {
    pub fn new() -> JsonLines {
        JsonLines { buf: Vec::new() }
    }
}

impl Default for JsonLines {
    fn default() -> Self {
        JsonLines::new()
    }
}

impl Write for JsonLines {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        while let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..i]);
            let text = text.strip_prefix("payrun: ").unwrap_or(&text);
            let obj = json!({"level": "INFO", "target": "payrun", "fields": {"progress": text}});
            writeln!(std::io::stderr(), "{obj}")?;
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn stop_json(stop: &Option<Stop>) -> Value {
    match stop {
        None => Value::Null,
        Some(Stop::Interrupted) => json!({"kind": "interrupted"}),
        Some(Stop::Unauthorized(m)) => json!({"kind": "unauthorized", "message": m}),
        Some(Stop::Unreachable(m)) => json!({"kind": "unreachable", "message": m}),
        Some(Stop::Config(m)) => json!({"kind": "configuration", "message": m}),
        Some(Stop::LeaseLost(m)) => json!({"kind": "lease_lost", "message": m}),
    }
}

/// The run-result object: what `--log-format json` prints last and what
/// `on_finish` receives.
pub fn result_json(ran: &Ran, file: &Path, exit: Exit) -> Value {
    let counts: serde_json::Map<String, Value> = ran
        .counts
        .iter()
        .map(|(s, n)| (s.as_str().to_string(), json!(n)))
        .collect();
    let totals: serde_json::Map<String, Value> = ran
        .totals
        .iter()
        .map(|(cur, states)| {
            let per: serde_json::Map<String, Value> = states
                .iter()
                .map(|(s, t)| {
                    (
                        s.as_str().to_string(),
                        json!({"count": t.count, "total": t.total.to_string()}),
                    )
                })
                .collect();
            (cur.clone(), Value::Object(per))
        })
        .collect();
    let report = ran.report.display().to_string();
    json!({
        "type": "run_result",
        "run_id": ran.run_id,
        "file": file.display().to_string(),
        "exit_code": exit.code(),
        "complete": ran.complete(),
        "initiate_only": ran.initiate_only,
        "stop": stop_json(&ran.stop),
        "counts": counts,
        "totals": totals,
        "report": report,
        "verdict": ran.verdict,
        "advice": ran.verdict.advice(ran.run_id, &report),
        "approval": ran.signoff.as_ref().map(approval_json),
    })
}

/// Where the run's approval stands, for machines: `state` (`approved`,
/// `not_approved`, `revoked`, `void`), the approval concerned and why it
/// does not hold.
pub fn approval_json(s: &crate::signoff::Standing) -> Value {
    let approval = s.approval().map(|a| {
        json!({
            "by": a.by.name, "os_user": a.by.os_user, "host": a.by.host, "at": a.at,
            "payouts": a.payouts, "digest": a.digest,
            "figures": a.figures.iter().map(|(cur, t)| {
                (cur.clone(), json!({"count": t.count, "total": t.total.to_string()}))
            }).collect::<serde_json::Map<_, _>>(),
        })
    });
    let why = match s {
        crate::signoff::Standing::Void { why, .. } => why.clone(),
        crate::signoff::Standing::Revoked { .. } => vec![s.describe()],
        _ => Vec::new(),
    };
    json!({"state": s.word(), "approval": approval, "why": why})
}

/// Gives the result to `on_finish`: POSTs it to an http(s) URL, or runs
/// the command with `sh -c` and the JSON on its stdin.
pub async fn deliver(target: &str, result: &Value) -> Result<()> {
    let body = serde_json::to_vec(result)?;
    if target.starts_with("http://") || target.starts_with("https://") {
        let answer = reqwest::Client::builder()
            .timeout(ON_FINISH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()?
            .post(target)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .context("on_finish: the URL did not answer")?;
        if !answer.status().is_success() {
            bail!("on_finish: the URL answered HTTP {}", answer.status());
        }
        return Ok(());
    }
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(target)
        .stdin(std::process::Stdio::piped())
        .env_remove("PAYRUN_API_KEY")
        .kill_on_drop(true)
        .spawn()
        .context("on_finish: cannot start the command")?;
    if let Some(mut stdin) = child.stdin.take() {
        use tokio::io::AsyncWriteExt;
        // A command that does not read its input is its own business.
        let _ = stdin.write_all(&body).await;
    }
    let status = tokio::time::timeout(ON_FINISH_TIMEOUT, child.wait())
        .await
        .context("on_finish: the command took too long")??;
    if !status.success() {
        bail!("on_finish: the command exited with {status}");
    }
    Ok(())
}
