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
        crate::signoff::Standing::Void { .. } => s.reasons_in(crate::lang::Language::En),
        crate::signoff::Standing::Revoked { .. } => vec![s.describe()],
        _ => Vec::new(),
    };
    json!({"state": s.word(), "approval": approval, "why": why})
}

/// Gives the result to `on_finish`: POSTs it to an http(s) URL, or runs
/// the command with `sh -c` and the JSON on its stdin, within
/// [`ON_FINISH_TIMEOUT`].
pub async fn deliver(target: &str, result: &Value) -> Result<()> {
    deliver_within(target, result, ON_FINISH_TIMEOUT).await
}

/// [`deliver`] within `limit`. The command runs in a process group of its
/// own: one that outlives `limit` is stopped with every process it started
/// (a hook's background children included), so none keeps running after
/// payrun.
async fn deliver_within(target: &str, result: &Value, limit: Duration) -> Result<()> {
    let body = serde_json::to_vec(result)?;
    if target.starts_with("http://") || target.starts_with("https://") {
        let status = crate::provider::post_json(target, body, limit)
            .await
            .map_err(|e| anyhow::anyhow!("on_finish: the URL did not answer: {e}"))?;
        if !(200..300).contains(&status) {
            bail!("on_finish: the URL answered HTTP {}", http_status(status));
        }
        return Ok(());
    }
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(target)
        .stdin(std::process::Stdio::piped())
        .env_remove("PAYRUN_API_KEY")
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .context("on_finish: cannot start the command")?;
    let group = child.id();
    let stdin = child.stdin.take();
    let ran = tokio::time::timeout(limit, async {
        if let Some(mut stdin) = stdin {
            use tokio::io::AsyncWriteExt;
            // A command that does not read its input is its own business.
            let _ = stdin.write_all(&body).await;
        }
        child.wait().await
    })
    .await;
    let status = match ran {
        Ok(status) => status?,
        Err(_) => {
            stop_group(group);
            let _ = child.wait().await;
            bail!(
                "on_finish: the command took longer than {}s; it was stopped, with every process \
                 it started",
                limit.as_secs()
            );
        }
    };
    if !status.success() {
        bail!("on_finish: the command exited with {status}");
    }
    Ok(())
}

/// `503 Service Unavailable`: a status as messages show it.
fn http_status(code: u16) -> String {
    match http::StatusCode::from_u16(code) {
        Ok(s) => s.to_string(),
        Err(_) => code.to_string(),
    }
}

/// Kills the process group `group` leads (the hook and its children).
fn stop_group(group: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill has no memory effects; a negative pid names the
        // group the hook leads (`process_group(0)` above).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = group;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `pid` is gone (or a zombie no one reaped yet: it runs no
    /// more).
    fn gone(pid: i32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return true;
        }
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true)
    }

    /// A hook that outlives its time is stopped with the child it
    /// started: the child's pid is gone once `deliver` returns.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_hook_past_its_time_is_stopped_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("child.pid");
        let hook = format!("sleep 600 & echo $! > {}; wait", pidfile.display());
        let err = deliver_within(&hook, &json!({}), Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("took longer than 3s"), "{err}");
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .expect("the hook started its child")
            .trim()
            .parse()
            .unwrap();
        // The group was killed before `deliver` returned; the kernel may
        // take a moment to finish the child. Polled, bounded.
        let mut polls = 0;
        while !gone(pid) && polls < 500 {
            polls += 1;
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(gone(pid), "the hook's child {pid} still runs");
    }

    #[tokio::test]
    async fn a_hook_gets_the_result_and_its_exit_status_counts() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("got.json");
        let hook = format!("cat > {}", out.display());
        deliver_within(&hook, &json!({"run_id": 7}), Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), r#"{"run_id":7}"#);
        let err = deliver_within("exit 3", &json!({}), Duration::from_secs(30))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("exited with"), "{err}");
    }
}
