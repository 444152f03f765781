//! How one provider call ended ([`Outcome`]), and the scrubbing every
//! provider-supplied string goes through before it can reach a log, the
//! database or a report: the API key (and any `Bearer` token) redacted,
//! control characters dropped, length capped.

use secrecy::{ExposeSecret, SecretString};
use std::time::Duration;

/// Longest provider message kept. Enough for any real error sentence; an
/// HTML error page or a stack trace echoed back is cut so it cannot bloat
/// the database or the report.
pub const MAX_MESSAGE_CHARS: usize = 500;

/// Why the run must stop, resumable, because of how the provider is set up
/// rather than because of one payout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopKind {
    /// A 3xx: `base_url` is wrong (redirects are never followed).
    Redirect,
    /// A 404 not recognised as "no such transaction": wrong path.
    NoSuchRoute,
    /// A 405, or a status the profile maps to `misconfigured`.
    Misconfigured,
    /// `Retry-After` beyond [`super::MAX_RETRY_AFTER`].
    RetryAfterTooLong,
}

/// How one provider call ended, classified for the state machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// An explicit success rule matched: initiated (or a duplicate of an
    /// accepted initiation) for `/initiates`; executed or already executed
    /// for `/executes`; a readable non-failed answer for `/pay`.
    Accepted {
        code: String,
        message: String,
        /// The transaction status when present (`INITIATED`, `SUCCESS`...).
        status: Option<String>,
        /// The answer's `data`, for `/pay` (whose caller reads a card
        /// payment's 3-D Secure page and status from it); `None` for the
        /// payout calls, which keep nothing of it.
        data: Option<serde_json::Value>,
    },
    /// An explicit failure rule matched.
    Refused {
        http: u16,
        code: String,
        message: String,
        /// The provider reported the transaction itself as failed (a
        /// definitive record), not merely an error of this call.
        transaction_failed: bool,
    },
    /// The transaction exists and is not final (pending, processing...):
    /// money may move later. The engine records it as not final (today:
    /// `unknown`).
    NotFinal {
        code: String,
        message: String,
        status: String,
    },
    /// The answer echoed a transaction id, amount, currency or account
    /// different from what was sent: it may belong to another request.
    /// The engine records the payout `unknown` and never executes it.
    Mismatch {
        field: &'static str,
        sent: String,
        got: String,
    },
    /// The answer gives a key it is read by (a pointed-at one, one on the
    /// way to it, or one inside it) twice: it says two things at once
    /// (`"status":"FAILED","status":"SUCCESS"`), and which one counts
    /// depends on who parses it. Held like a mismatch: `unknown`, never
    /// executed, never re-sent on its own.
    Contradictory {
        http: u16,
        /// The key given twice, as a JSON pointer (`/data/status`).
        key: String,
    },
    /// The key was refused (401/403): the whole run must stop.
    Unauthorized { http: u16, message: String },
    /// A configuration problem: the run must stop, resumable.
    Stop {
        kind: StopKind,
        http: u16,
        detail: String,
    },
    /// 429: wait, then retry.
    RateLimited { retry_after: Duration },
    /// The request never left (connect error, DNS, refused): safe to retry.
    NotSent { detail: String },
    /// The request may have been carried out, or the answer matched no
    /// rule: 5xx, timeout after send, unreadable or unknown answer.
    Ambiguous { detail: String },
}

impl Outcome {
    /// The provider code (or a description of the class) for the report.
    pub fn code(&self) -> &str {
        match self {
            Outcome::Accepted { code, .. }
            | Outcome::Refused { code, .. }
            | Outcome::NotFinal { code, .. } => code,
            Outcome::Mismatch { .. } => crate::machine::decide::ECHO_MISMATCH,
            Outcome::Contradictory { .. } => crate::machine::decide::DUPLICATE_KEY,
            Outcome::Unauthorized { .. } => "UNAUTHORIZED",
            Outcome::Stop { kind, .. } => match kind {
                StopKind::Redirect => "REDIRECT",
                StopKind::NoSuchRoute => "NO_SUCH_ROUTE",
                StopKind::Misconfigured => "MISCONFIGURED",
                StopKind::RetryAfterTooLong => "RETRY_AFTER_TOO_LONG",
            },
            Outcome::RateLimited { .. } => "RATE_LIMITED",
            Outcome::NotSent { .. } => "NOT_SENT",
            Outcome::Ambiguous { .. } => "AMBIGUOUS",
        }
    }

    pub fn message(&self) -> String {
        match self {
            Outcome::Accepted { message, .. }
            | Outcome::Refused { message, .. }
            | Outcome::NotFinal { message, .. }
            | Outcome::Unauthorized { message, .. } => message.clone(),
            Outcome::Mismatch { field, sent, got } => format!(
                "the answer does not belong to this request: {field} sent {sent:?}, answered {got:?}"
            ),
            Outcome::Contradictory { http, key } => format!(
                "HTTP {http}: the answer gives {key} twice, so it says two things at once; \
                 check the payout with the provider"
            ),
            Outcome::RateLimited { .. } => "rate limited".into(),
            Outcome::Stop { detail, .. }
            | Outcome::NotSent { detail }
            | Outcome::Ambiguous { detail } => detail.clone(),
        }
    }

    /// Every string scrubbed with `s` (JSON data: strings redacted, not cut).
    /// Strings with nothing to scrub (nearly every answer) are kept as
    /// they are, without a copy.
    pub fn scrubbed(self, s: &Scrubber) -> Outcome {
        let c = |t: String| s.clean_owned(t);
        match self {
            Outcome::Accepted {
                code,
                message,
                status,
                data,
            } => Outcome::Accepted {
                code: c(code),
                message: c(message),
                status: status.map(c),
                data: data.map(|d| s.redact_json(d)),
            },
            Outcome::Refused {
                http,
                code,
                message,
                transaction_failed,
            } => Outcome::Refused {
                http,
                code: c(code),
                message: c(message),
                transaction_failed,
            },
            Outcome::NotFinal {
                code,
                message,
                status,
            } => Outcome::NotFinal {
                code: c(code),
                message: c(message),
                status: c(status),
            },
            Outcome::Mismatch { field, sent, got } => Outcome::Mismatch {
                field,
                sent: c(sent),
                got: c(got),
            },
            Outcome::Contradictory { http, key } => Outcome::Contradictory { http, key: c(key) },
            Outcome::Unauthorized { http, message } => Outcome::Unauthorized {
                http,
                message: c(message),
            },
            Outcome::Stop { kind, http, detail } => Outcome::Stop {
                kind,
                http,
                detail: c(detail),
            },
            Outcome::NotSent { detail } => Outcome::NotSent { detail: c(detail) },
            Outcome::Ambiguous { detail } => Outcome::Ambiguous { detail: c(detail) },
            o @ Outcome::RateLimited { .. } => o,
        }
    }
}

/// Cleans provider-supplied text. Holds the key only to find it.
#[derive(Clone)]
pub struct Scrubber {
    key: SecretString,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scrubber(<redacted>)")
    }
}

const REDACTED: &str = "<redacted>";

impl Scrubber {
    pub fn new(key: &SecretString) -> Scrubber {
        Scrubber { key: key.clone() }
    }

    /// Whether `text` holds the key or a bearer token: what [`Self::redact`]
    /// would change. Searches without copying (the common answer has
    /// neither).
    fn has_secret(&self, text: &str) -> bool {
        let key = self.key.expose_secret();
        (!key.is_empty() && memchr::memmem::find(text.as_bytes(), key.as_bytes()).is_some())
            || find_bearer(text, 0).is_some()
    }

    /// Key and bearer tokens redacted (no length cap).
    pub(crate) fn redact(&self, text: &str) -> String {
        if !self.has_secret(text) {
            return text.to_string();
        }
        let key = self.key.expose_secret();
        let mut out = if key.is_empty() {
            text.to_string()
        } else {
            text.replace(key, REDACTED)
        };
        // Any bearer token, even one that is not our key (a provider may
        // echo a derived or rotated token).
        let mut from = 0;
        while let Some(at) = find_bearer(&out, from) {
            let start = at + BEARER.len();
            let end = out[start..]
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',')
                .map_or(out.len(), |i| start + i);
            out.replace_range(start..end, REDACTED);
            from = start + REDACTED.len();
        }
        out
    }

    /// Redacted, control characters replaced, capped at
    /// [`MAX_MESSAGE_CHARS`] characters.
    pub fn clean(&self, text: &str) -> String {
        let red = self.redact(text);
        let mut out: String = red
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_MESSAGE_CHARS)
            .collect();
        if red.chars().count() > MAX_MESSAGE_CHARS {
            out.push('…');
        }
        out
    }

    /// [`Self::clean`] of an owned string: returned as it is when there is
    /// nothing to clean (short, no control character, no secret).
    pub fn clean_owned(&self, text: String) -> String {
        let clean = text.len() <= MAX_MESSAGE_CHARS
            && !text.chars().any(char::is_control)
            && !self.has_secret(&text);
        if clean { text } else { self.clean(&text) }
    }

    fn redact_json(&self, v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        if !self.json_has_secret(&v) {
            return v;
        }
        match v {
            Value::String(s) => Value::String(self.redact(&s)),
            Value::Array(a) => Value::Array(a.into_iter().map(|x| self.redact_json(x)).collect()),
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, x)| (k, self.redact_json(x)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Whether any string value of `v` holds a secret (keys are left as
    /// they are by [`Self::redact_json`], so they are not looked at).
    fn json_has_secret(&self, v: &serde_json::Value) -> bool {
        use serde_json::Value;
        match v {
            Value::String(s) => self.has_secret(s),
            Value::Array(a) => a.iter().any(|x| self.json_has_secret(x)),
            Value::Object(m) => m.values().any(|x| self.json_has_secret(x)),
            _ => false,
        }
    }
}

const BEARER: &str = "bearer ";

/// The byte offset of the first "bearer " (any case) in `text` at or after
/// `from`.
fn find_bearer(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(i) = memchr::memchr2(b'b', b'B', &bytes[at..]) {
        let start = at + i;
        if bytes
            .get(start..start + BEARER.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(BEARER.as_bytes()))
        {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s() -> Scrubber {
        Scrubber::new(&SecretString::from("sk_live_abc123"))
    }

    #[test]
    fn key_and_bearer_tokens_are_redacted() {
        let t = s().clean("bad header Authorization: Bearer sk_live_abc123, key sk_live_abc123");
        assert!(!t.contains("sk_live_abc123"), "{t}");
        assert!(t.contains("Bearer <redacted>"), "{t}");
        let t = s().clean("{\"auth\":\"bearer other_token\"} and BEARER x2");
        assert!(!t.contains("other_token") && !t.contains("x2"), "{t}");
    }

    #[test]
    fn messages_are_capped_and_control_free() {
        let long = "é".repeat(MAX_MESSAGE_CHARS + 50);
        let t = s().clean(&long);
        assert_eq!(t.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert_eq!(s().clean("a\nb\u{1b}c"), "a b c");
    }

    #[test]
    fn outcome_is_scrubbed_everywhere() {
        let o = Outcome::Unauthorized {
            http: 401,
            message: "got Authorization: Bearer sk_live_abc123".into(),
        }
        .scrubbed(&s());
        assert!(!o.message().contains("sk_live_abc123"));
        let o = Outcome::Accepted {
            code: "OK".into(),
            message: String::new(),
            status: None,
            data: Some(serde_json::json!({"echo":["sk_live_abc123"]})),
        }
        .scrubbed(&s());
        assert!(!format!("{o:?}").contains("sk_live_abc123"));
    }

    #[test]
    fn text_with_nothing_to_scrub_is_kept_as_it_is() {
        let t = String::from("transaction accepted");
        let ptr = t.as_ptr();
        let out = s().clean_owned(t);
        assert_eq!(out, "transaction accepted");
        assert_eq!(out.as_ptr(), ptr, "not copied");
        // Each reason to clean still cleans.
        assert_eq!(s().clean_owned("a\nb".into()), "a b");
        assert_eq!(
            s().clean_owned("key sk_live_abc123".into()),
            "key <redacted>"
        );
        assert_eq!(
            s().clean_owned("Bearer: x, bEaReR tok".into()),
            "Bearer: x, bEaReR <redacted>"
        );
        let long = "x".repeat(MAX_MESSAGE_CHARS + 1);
        assert_eq!(s().clean_owned(long).chars().count(), MAX_MESSAGE_CHARS + 1);
        // The owned and borrowed paths agree.
        for t in ["", "ok", "bearer", "bearer ", "xbearer y z", "é\u{7f}é"] {
            assert_eq!(s().clean_owned(t.into()), s().clean(t), "{t:?}");
        }
    }

    #[test]
    fn json_with_nothing_to_scrub_is_kept_and_secrets_deep_inside_are_found() {
        let v = serde_json::json!({"a":[1,{"b":"fine"}],"c":null,"sk_live_abc123":"key names are kept"});
        assert_eq!(s().redact_json(v.clone()), v);
        let v = serde_json::json!({"a":[1,{"b":"Bearer tok"}],"c":"sk_live_abc123"});
        assert_eq!(
            s().redact_json(v),
            serde_json::json!({"a":[1,{"b":"Bearer <redacted>"}],"c":"<redacted>"})
        );
    }
}
