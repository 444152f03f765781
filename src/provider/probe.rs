//! `payrun probe` without its command line: asks a provider five questions
//! with calls that move no money, and says how the current profile reads
//! each answer. The calls: an initiate of a tiny test payout under a fresh
//! id, the same initiate again (is it deduplicated, and how?), a different
//! body under the same id, an execute of an id that was never initiated,
//! and a request with a wrong key (an execute of another id that was never
//! initiated). It never sends `/executes` for the payout it initiated and
//! never calls `/pay`. User documentation: `docs/provider.md`, "payrun probe".

use super::classify::{CallKind, Sent};
use super::wire::{Beneficiary, ExecuteRequest, InitiateRequest, Sender};
use super::{Client, Exchange, Outcome};
use rand::Rng;
use secrecy::SecretString;
use serde_json::Value;

/// Longest body excerpt shown per answer: enough to see its shape.
pub const BODY_EXCERPT_CHARS: usize = 300;
/// The key of the wrong-key question: plainly not a real key.
const WRONG_KEY: &str = "sk_payrun_probe_wrong_key";

/// What the probe's test payout is made of.
#[derive(Debug, Clone)]
pub struct ProbeSettings {
    pub account: String,
    pub method: String,
    pub currency: String,
    /// Digits, as sent (the smallest amount: `1`).
    pub amount: String,
    pub sender: Sender,
}

/// One question and its answer.
#[derive(Debug, Clone)]
pub struct Step {
    pub question: &'static str,
    /// The request, in short (`POST /initiates probe-… 1 XOF`).
    pub request: String,
    /// `None`: no answer (not sent, cut off).
    pub http: Option<u16>,
    /// The code at the profile's `code` pointer, if any.
    pub code: Option<String>,
    /// The body, scrubbed and cut to [`BODY_EXCERPT_CHARS`].
    pub body: String,
    /// How the current profile classifies it (`accepted`, `refused`...).
    pub class: &'static str,
    pub class_code: String,
    /// What it tells about the provider.
    pub finding: String,
    /// Whether that finding is what payrun needs.
    pub ok: bool,
}

/// Whether `ambiguous = "resend"` looks safe. Never "safe": execute
/// idempotency cannot be seen without executing, which moves money.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResendVerdict {
    /// Something seen makes re-sending unsafe.
    Unsafe(String),
    /// Nothing seen against it; the provider must still guarantee it.
    Unproven(String),
}

/// Everything the probe found.
#[derive(Debug, Clone)]
pub struct ProbeReport {
    pub transaction_id: String,
    pub steps: Vec<Step>,
    pub resend: ResendVerdict,
    /// A `[provider]` table to start from.
    pub skeleton: String,
}

/// A fresh id: never used by a payroll (`probe-` prefix, random part).
fn fresh_id(what: &str) -> String {
    format!("probe-{what}{:016x}", rand::rng().random::<u64>())
}

fn class_of(o: &Outcome) -> &'static str {
    match o {
        Outcome::Accepted { .. } => "accepted",
        Outcome::Refused { .. } => "refused",
        Outcome::NotFinal { .. } => "not final",
        Outcome::Mismatch { .. } => "mismatch",
        Outcome::Contradictory { .. } => "contradictory",
        Outcome::Unauthorized { .. } => "unauthorized",
        Outcome::Stop { .. } => "configuration stop",
        Outcome::RateLimited { .. } => "rate limited",
        Outcome::NotSent { .. } => "not sent",
        Outcome::Ambiguous { .. } => "unknown",
    }
}

impl Client {
    async fn probe_initiate(&self, req: &InitiateRequest) -> Exchange {
        let sent = Sent {
            transaction_id: &req.transaction_id,
            amount: Some(&req.amount),
            currency: Some(&req.currency),
            account: Some(&req.account_id),
        };
        self.exchange(
            &self.initiates,
            &super::JSON,
            req,
            CallKind::Initiate,
            &sent,
        )
        .await
    }

    /// An execute of an id that was never initiated: nothing to pay.
    async fn probe_execute_absent(&self, transaction_id: &str) -> Exchange {
        let req = ExecuteRequest {
            transaction_id: transaction_id.to_string(),
        };
        let sent = Sent {
            transaction_id,
            ..Sent::default()
        };
        self.exchange(&self.executes, &super::JSON, &req, CallKind::Execute, &sent)
            .await
    }

    fn step(&self, question: &'static str, request: String, x: &Exchange) -> Step {
        let json: Option<Value> = x
            .body
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok());
        let code = json.as_ref().and_then(|v| {
            let p = self.profile.code.as_deref()?;
            match v.pointer(p)? {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            }
        });
        let text = x
            .body
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_else(|| "(no complete body)".into());
        let mut body: String = self
            .scrubber
            .clean(&text)
            .chars()
            .take(BODY_EXCERPT_CHARS)
            .collect();
        if text.chars().count() > BODY_EXCERPT_CHARS {
            body.push('…');
        }
        Step {
            question,
            request,
            http: x.http,
            code,
            body,
            class: class_of(&x.outcome),
            class_code: x.outcome.code().to_string(),
            finding: String::new(),
            ok: false,
        }
    }
}

/// Asks the five questions. `client` carries the real key and the current
/// profile; the wrong-key question uses the same URL and profile.
pub async fn probe(client: &Client, s: &ProbeSettings) -> anyhow::Result<ProbeReport> {
    let wrong = Client::with_profile(
        client.base_url(),
        &SecretString::from(WRONG_KEY),
        (*client.profile).clone(),
    )?;
    let id = fresh_id("");
    let req = InitiateRequest {
        transaction_id: id.clone(),
        amount: s.amount.clone(),
        currency: s.currency.clone(),
        payout_method_id: s.method.clone(),
        description: "payrun probe: test payout, never executed".into(),
        account_id: s.account.clone(),
        sender: s.sender.clone(),
        beneficiary: Beneficiary {
            firstname: "Payrun".into(),
            lastname: "Probe".into(),
            phone: s.account.clone(),
            email: String::new(),
        },
    };
    let show = |r: &InitiateRequest| {
        format!(
            "POST /initiates {} amount {} {} to {}",
            r.transaction_id, r.amount, r.currency, r.account_id
        )
    };
    let first = client.probe_initiate(&req).await;
    if let Outcome::NotSent { detail } = &first.outcome {
        anyhow::bail!(
            "cannot reach the provider at {} ({detail}); check base_url and the network",
            client.base_url()
        );
    }
    let again = client.probe_initiate(&req).await;
    let mut other = req.clone();
    other.amount = bump(&req.amount);
    let conflict = client.probe_initiate(&other).await;
    let absent = fresh_id("absent-");
    let missing = client.probe_execute_absent(&absent).await;
    let absent2 = fresh_id("absent-");
    let badkey = wrong.probe_execute_absent(&absent2).await;

    let mut steps = vec![
        client.step("initiate a test payout", show(&req), &first),
        client.step("the same initiate again", show(&req), &again),
        client.step("another body under the same id", show(&other), &conflict),
        client.step(
            "execute an id that does not exist",
            format!("POST /executes {absent}"),
            &missing,
        ),
        wrong.step(
            "a wrong API key",
            format!("POST /executes {absent2} with a wrong key"),
            &badkey,
        ),
    ];
    judge(&mut steps);
    let resend = resend_verdict(&steps);
    let skeleton = skeleton(&first, &again, &missing);
    Ok(ProbeReport {
        transaction_id: id,
        steps,
        resend,
        skeleton,
    })
}

/// The amount plus one (digits in, digits out).
fn bump(amount: &str) -> String {
    amount
        .parse::<u128>()
        .map_or_else(|_| format!("{amount}1"), |n| (n + 1).to_string())
}

/// Says what each answer tells, and whether it is what payrun needs.
fn judge(steps: &mut [Step]) {
    let same_answer = steps[1].http == steps[2].http && steps[1].code == steps[2].code;
    let fit = |code: &Option<String>, key: &str| match code {
        Some(c) => format!("add {c:?} to `{key}` in the profile"),
        None => format!("fit `{key}` (and the `code`/`status` pointers) to this answer"),
    };
    let s = &mut steps[0];
    (s.ok, s.finding) = match s.class {
        "accepted" => (true, "the initiation is recognised as accepted".into()),
        _ => (
            false,
            format!("not read as accepted: {}", fit(&s.code, "initiated")),
        ),
    };
    let s = &mut steps[1];
    (s.ok, s.finding) = match s.class {
        "accepted" => (
            true,
            format!(
                "deduplicated: a repeated initiate is recognised (code {})",
                s.code.as_deref().unwrap_or("none")
            ),
        ),
        _ => (
            false,
            format!(
                "a repeat is not read as a duplicate; payrun re-sends initiates after a crash, \
                 so {}",
                fit(&s.code, "duplicate")
            ),
        ),
    };
    let s = &mut steps[2];
    (s.ok, s.finding) = match s.class {
        "refused" if same_answer => (
            true,
            "refused, but answered exactly like the repeat: the provider does not tell a \
             duplicate from a conflict"
                .into(),
        ),
        "refused" => (true, "a different body under a used id is refused".into()),
        "accepted" if same_answer => (
            false,
            "accepted like the repeat: the provider does not compare bodies, so a changed row \
             under an old id would not be noticed"
                .into(),
        ),
        "accepted" => (
            false,
            "accepted: the provider does not guard ids against reuse".into(),
        ),
        other => (false, format!("read as {other}")),
    };
    let s = &mut steps[3];
    (s.ok, s.finding) = match s.class {
        "refused" => (true, "an unknown id is refused as such".into()),
        "configuration stop" if s.http == Some(404) => (
            false,
            format!(
                "a 404 payrun takes for a wrong URL: {}",
                fit(&s.code, "not_found")
            ),
        ),
        other => (
            false,
            format!("read as {other}: {}", fit(&s.code, "not_found")),
        ),
    };
    let s = &mut steps[4];
    (s.ok, s.finding) = match s.class {
        "unauthorized" => (true, "a wrong key stops the run".into()),
        other => (
            false,
            format!(
                "read as {other}, not as a refused key: map this status to \"unauthorized\" in \
                 `[provider.http]`"
            ),
        ),
    };
}

fn resend_verdict(steps: &[Step]) -> ResendVerdict {
    if !steps[1].ok {
        return ResendVerdict::Unsafe(
            "the provider does not visibly deduplicate a repeated request by transaction id; \
             keep ambiguous = \"hold\""
                .into(),
        );
    }
    if steps[2].class == "accepted" {
        return ResendVerdict::Unsafe(
            "the provider accepts a different request under a used id; keep ambiguous = \"hold\""
                .into(),
        );
    }
    ResendVerdict::Unproven(
        "initiates are deduplicated by id, which suggests but does not prove that executes are: \
         the probe never executes (that would move money). Use ambiguous = \"resend\" only if \
         the provider guarantees in writing that a repeated /executes never pays twice; \
         otherwise keep \"hold\""
            .into(),
    )
}

/// A `[provider]` table built from what was seen: pointers guessed from
/// the shape of the first answer, observed words filled in, the rest left
/// for the user to complete from the provider's documentation.
fn skeleton(first: &Exchange, again: &Exchange, missing: &Exchange) -> String {
    let json = |x: &Exchange| -> Option<Value> {
        x.body
            .as_deref()
            .and_then(|b| serde_json::from_slice(b).ok())
    };
    let word = |v: &Option<Value>, p: &str| -> Option<String> {
        match v.as_ref()?.pointer(p)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    };
    let j1 = json(first);
    let enveloped = j1
        .as_ref()
        .and_then(|v| v.pointer("/data"))
        .is_some_and(Value::is_object);
    let (status, result, prefix) = if enveloped {
        ("/data/status", "/status", "/data")
    } else {
        ("/status", "", "")
    };
    let quote = |w: Option<String>, default: &str| {
        let w = w.unwrap_or_else(|| default.to_string());
        format!("[{}]", toml_str(&w))
    };
    let initiated = quote(
        word(&j1, status).or_else(|| word(&j1, "/code")),
        "INITIATED",
    );
    let duplicate = quote(word(&json(again), "/code"), "DUPLICATE_IGNORED");
    let not_found = quote(word(&json(missing), "/code"), "TRANSACTION_NOT_FOUND");
    format!(
        r#"# payrun provider profile, from `payrun probe`. Check every line against the
# provider's documentation; words marked TODO were not seen by the probe.
[provider]
status = "{status}"
code = "/code"
message = "/message"
result = "{result}"
failure_code = "{prefix}/failureCode"
echo_transaction_id = "{prefix}/transactionId"
echo_amount = "{prefix}/amount"
echo_currency = "{prefix}/currency"
echo_account = "{prefix}/accountId"
initiated = {initiated}
duplicate = {duplicate}
not_found = {not_found}
executed = ["SUCCESS"]              # TODO: the provider's word for paid
already_executed = ["ALREADY_EXECUTED"]  # TODO: its answer to a repeated execute
failed = ["FAILED", "REJECTED"]     # TODO: its words for a failed transfer
pending = ["PENDING", "PROCESSING"] # TODO: its not-final words
"#
    )
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_adds_one() {
        assert_eq!(bump("1"), "2");
        assert_eq!(bump("999"), "1000");
    }
}
