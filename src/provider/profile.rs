//! The provider profile: where a provider's answers keep their status, code,
//! message and echoed fields (JSON pointers), which words mean initiated,
//! duplicate, executed, already executed, failed or not final, and how HTTP
//! statuses map. Rules are data, not code, so fitting payrun to a new
//! provider is a `[provider]` table in `payrun.toml` (format and examples in
//! `docs/provider.md`). The built-in default is the sandbox's contract.
//!
//! A profile is parsed (`ProfileSpec`, every key optional, unknown keys
//! refused) and then validated into a [`Profile`]; an impossible profile
//! (a word in two lists, no success rule, a bad pointer) is refused with an
//! error naming the key and the fix.

use super::classify::read::Fields;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The `[provider]` table as written. Every key is optional; an absent key
/// takes the sandbox default, a present list replaces the default list.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProfileSpec {
    /// Pointer to the transaction's status (`/data/status`).
    pub status: Option<String>,
    /// Pointer to the answer's code (`/code`).
    pub code: Option<String>,
    /// Pointer to the human message (`/message`).
    pub message: Option<String>,
    /// Pointer to the reason of a failed transaction (`/data/failureCode`).
    pub failure_code: Option<String>,
    /// Pointer to the envelope's result word (`/status`: success / error).
    pub result: Option<String>,
    pub echo_transaction_id: Option<String>,
    pub echo_amount: Option<String>,
    pub echo_currency: Option<String>,
    pub echo_account: Option<String>,
    pub initiated: Option<Vec<String>>,
    pub duplicate: Option<Vec<String>>,
    pub executed: Option<Vec<String>>,
    pub already_executed: Option<Vec<String>>,
    pub failed: Option<Vec<String>>,
    pub pending: Option<Vec<String>>,
    /// Codes of a per-payout "no such transaction" answer (a 404 carrying
    /// one of them is about the payout; any other 404 is a wrong URL).
    pub not_found: Option<Vec<String>>,
    /// Values of `result` that mean the call failed.
    pub result_error: Option<Vec<String>>,
    /// HTTP status (as a string key) to rule, overriding the defaults.
    #[serde(default)]
    pub http: BTreeMap<String, HttpRule>,
    pub status_call: Option<StatusCallSpec>,
}

/// How an HTTP status is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HttpRule {
    /// Classify by the body's status and code (default for 2xx and 4xx).
    Body,
    /// A refusal of this call, unless the body says executed, already
    /// executed, duplicate or pending.
    Refused,
    /// The call may or may not have been carried out (default 408, 5xx).
    Ambiguous,
    /// The key was refused: stop the run (default 401, 403).
    Unauthorized,
    /// A configuration error (wrong URL, method): stop the run (default 405).
    Misconfigured,
}

/// `[provider.status_call]`: how to ask for one transaction's status
/// (`payrun reconcile --poll`, and a run's `settle_wait`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StatusCallSpec {
    pub method: String,
    /// Path under `base_url` with `{transactionId}` where the id goes.
    pub path: String,
    /// Pointer to the transaction status in the answer.
    pub status: String,
}

/// What one word (a status or code value) means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Initiated,
    Duplicate,
    Executed,
    AlreadyExecuted,
    Failed,
    Pending,
    NotFound,
}

/// A validated status call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusCall {
    pub method: String,
    pub path: String,
    pub status: String,
}

/// A validated profile. Build with [`Profile::sandbox`] or
/// [`Profile::from_spec`]; fields are read by the classifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub(crate) status: Option<String>,
    pub(crate) code: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) failure_code: Option<String>,
    pub(crate) result: Option<String>,
    pub(crate) echo_transaction_id: Option<String>,
    pub(crate) echo_amount: Option<String>,
    pub(crate) echo_currency: Option<String>,
    pub(crate) echo_account: Option<String>,
    /// Upper-cased word to its meaning; each word has one meaning.
    pub(crate) words: HashMap<String, Class>,
    /// Upper-cased `result_error` values.
    pub(crate) result_error: Vec<String>,
    pub(crate) http: BTreeMap<u16, HttpRule>,
    pub status_call: Option<StatusCall>,
    /// The pointers above as the classifier reads them, in the order of
    /// [`Profile::pointers`]; `with_data` adds the answer's `data`.
    pub(crate) fields: Fields,
    pub(crate) with_data: Fields,
}

/// Why a profile was refused. Each message names the key and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error(
        "provider profile: `{key}` = {value:?} is not a JSON pointer; write it as \"/field/sub\" (or \"\" to disable it)"
    )]
    BadPointer { key: &'static str, value: String },
    #[error(
        "provider profile: {word:?} is listed in both `{first}` and `{second}`; a word must have one meaning, remove it from one list"
    )]
    Conflict {
        word: String,
        first: &'static str,
        second: &'static str,
    },
    #[error(
        "provider profile: `{key}` cannot be empty: {why}; list the word(s) your provider uses"
    )]
    EmptyRule {
        key: &'static str,
        why: &'static str,
    },
    #[error("provider profile: `{key}` has an empty word; remove it")]
    EmptyWord { key: &'static str },
    #[error(
        "provider profile: `http.{key}` is not usable: {why} (keys are HTTP statuses such as \"404\")"
    )]
    BadHttp { key: String, why: &'static str },
    #[error("provider profile: `status_call`: {0}")]
    BadStatusCall(String),
}

/// The sandbox's status call, part of the built-in profile.
pub const SANDBOX_STATUS_PATH: &str = "/status/{transactionId}";

/// Where every answer keeps the data an accepted `/pay` hands back.
const DATA: &str = "/data";

/// The sandbox's words. Pending and failed also carry the words common
/// providers use (Paystack `pending`/`received`/`otp`, `REJECTED`...), so
/// that an unknown provider under the default profile is at worst
/// `unknown`, never wrongly `executed`.
mod default {
    pub const INITIATED: &[&str] = &["INITIATED"];
    pub const DUPLICATE: &[&str] = &["DUPLICATE_IGNORED"];
    pub const EXECUTED: &[&str] = &["SUCCESS"];
    pub const ALREADY_EXECUTED: &[&str] = &["ALREADY_EXECUTED"];
    pub const FAILED: &[&str] = &["FAILED", "REJECTED", "DECLINED", "CANCELLED"];
    pub const PENDING: &[&str] = &[
        "PENDING",
        "PROCESSING",
        "QUEUED",
        "RECEIVED",
        "OTP",
        "SUBMITTED",
        "IN_PROGRESS",
    ];
    pub const NOT_FOUND: &[&str] = &["TRANSACTION_NOT_FOUND"];
    pub const RESULT_ERROR: &[&str] = &["error"];
}

fn list_of(list: &Option<Vec<String>>, default: &[&str]) -> Vec<String> {
    match list {
        Some(l) => l.clone(),
        None => default.iter().map(|s| s.to_string()).collect(),
    }
}

/// `Some(pointer)`, `None` for `""` (disabled), or an error.
fn pointer(
    key: &'static str,
    value: &Option<String>,
    default: &str,
) -> Result<Option<String>, ProfileError> {
    let v = value.as_deref().unwrap_or(default);
    if v.is_empty() {
        return Ok(None);
    }
    check_pointer(key, v)?;
    Ok(Some(v.to_string()))
}

/// RFC 6901: empty, or `/` segments where `~` is followed by 0 or 1.
fn check_pointer(key: &'static str, v: &str) -> Result<(), ProfileError> {
    let bad = || ProfileError::BadPointer {
        key,
        value: v.to_string(),
    };
    if !v.starts_with('/') {
        return Err(bad());
    }
    let mut chars = v.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err(bad());
        }
    }
    Ok(())
}

impl Profile {
    /// The built-in profile: the sandbox's envelope
    /// `{"status","code","message","data":{...}}` and its status call,
    /// `GET /status/{transactionId}` (docs/provider.md). A written profile
    /// has a status call only when it names one: the sandbox's route would
    /// be a guess at another provider.
    pub fn sandbox() -> Profile {
        let spec = ProfileSpec {
            status_call: Some(StatusCallSpec {
                method: "GET".into(),
                path: SANDBOX_STATUS_PATH.into(),
                status: "/data/status".into(),
            }),
            ..ProfileSpec::default()
        };
        Profile::from_spec(&spec).expect("the default profile is valid")
    }

    /// Validates a written profile.
    pub fn from_spec(spec: &ProfileSpec) -> Result<Profile, ProfileError> {
        let lists: [(&'static str, Vec<String>, Class); 7] = [
            (
                "initiated",
                list_of(&spec.initiated, default::INITIATED),
                Class::Initiated,
            ),
            (
                "duplicate",
                list_of(&spec.duplicate, default::DUPLICATE),
                Class::Duplicate,
            ),
            (
                "executed",
                list_of(&spec.executed, default::EXECUTED),
                Class::Executed,
            ),
            (
                "already_executed",
                list_of(&spec.already_executed, default::ALREADY_EXECUTED),
                Class::AlreadyExecuted,
            ),
            (
                "failed",
                list_of(&spec.failed, default::FAILED),
                Class::Failed,
            ),
            (
                "pending",
                list_of(&spec.pending, default::PENDING),
                Class::Pending,
            ),
            (
                "not_found",
                list_of(&spec.not_found, default::NOT_FOUND),
                Class::NotFound,
            ),
        ];
        if lists[2].1.is_empty() && lists[3].1.is_empty() {
            return Err(ProfileError::EmptyRule {
                key: "executed",
                why: "with `executed` and `already_executed` both empty no answer could ever count as paid",
            });
        }
        if lists[0].1.is_empty() && lists[1].1.is_empty() {
            return Err(ProfileError::EmptyRule {
                key: "initiated",
                why: "with `initiated` and `duplicate` both empty no initiation could ever succeed",
            });
        }
        let mut words: HashMap<String, Class> = HashMap::new();
        let mut owner: HashMap<String, &'static str> = HashMap::new();
        for (key, list, class) in &lists {
            for w in list {
                let up = word_key(w);
                if up.is_empty() {
                    return Err(ProfileError::EmptyWord { key });
                }
                if let Some(first) = owner.get(&up)
                    && first != key
                {
                    return Err(ProfileError::Conflict {
                        word: w.clone(),
                        first,
                        second: key,
                    });
                }
                owner.insert(up.clone(), key);
                words.insert(up, *class);
            }
        }
        let result_error: Vec<String> = list_of(&spec.result_error, default::RESULT_ERROR)
            .into_iter()
            .map(|w| word_key(&w))
            .collect();
        for w in &result_error {
            if w.is_empty() {
                return Err(ProfileError::EmptyWord {
                    key: "result_error",
                });
            }
            if let Some(first) = owner.get(w)
                && *first != "failed"
                && *first != "not_found"
            {
                return Err(ProfileError::Conflict {
                    word: w.clone(),
                    first,
                    second: "result_error",
                });
            }
        }
        let mut http = BTreeMap::new();
        for (key, rule) in &spec.http {
            let code: u16 = key.trim().parse().map_err(|_| ProfileError::BadHttp {
                key: key.clone(),
                why: "not a number",
            })?;
            let why = match code {
                200..=299 | 400..=428 | 430..=599 => None,
                300..=399 => Some("redirects are never followed and always stop the run"),
                429 => Some("429 always means: slow down and retry"),
                _ => Some("not an HTTP status payrun can receive"),
            };
            if let Some(why) = why {
                return Err(ProfileError::BadHttp {
                    key: key.clone(),
                    why,
                });
            }
            http.insert(code, *rule);
        }
        let status_call = spec.status_call.as_ref().map(status_call).transpose()?;
        let mut p = Profile {
            status: pointer("status", &spec.status, "/data/status")?,
            code: pointer("code", &spec.code, "/code")?,
            message: pointer("message", &spec.message, "/message")?,
            failure_code: pointer("failure_code", &spec.failure_code, "/data/failureCode")?,
            result: pointer("result", &spec.result, "/status")?,
            echo_transaction_id: pointer(
                "echo_transaction_id",
                &spec.echo_transaction_id,
                "/data/transactionId",
            )?,
            echo_amount: pointer("echo_amount", &spec.echo_amount, "/data/amount")?,
            echo_currency: pointer("echo_currency", &spec.echo_currency, "/data/currency")?,
            echo_account: pointer("echo_account", &spec.echo_account, "/data/accountId")?,
            words,
            result_error,
            http,
            status_call,
            fields: Fields::default(),
            with_data: Fields::default(),
        };
        let mut pointers = p.pointers().to_vec();
        let fields = Fields::new(&pointers);
        pointers.push(Some(DATA));
        let with_data = Fields::new(&pointers);
        (p.fields, p.with_data) = (fields, with_data);
        Ok(p)
    }

    /// The profile's pointers in the classifier's order (`classify`'s
    /// slots: status, code, message, failure code, result, then the echoed
    /// transaction id, amount, currency and account).
    pub(crate) fn pointers(&self) -> [Option<&str>; 9] {
        [
            &self.status,
            &self.code,
            &self.message,
            &self.failure_code,
            &self.result,
            &self.echo_transaction_id,
            &self.echo_amount,
            &self.echo_currency,
            &self.echo_account,
        ]
        .map(Option::as_deref)
    }

    /// Reads a profile file: the same keys as `[provider]`, at top level.
    pub fn from_file(path: &Path) -> anyhow::Result<Profile> {
        use anyhow::Context;
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the provider profile {}", path.display()))?;
        let spec: ProfileSpec = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("invalid provider profile {}: {e}", path.display()))?;
        Profile::from_spec(&spec)
            .with_context(|| format!("invalid provider profile {}", path.display()))
    }

    /// The meaning of a status or code value (see [`word_key`]).
    pub fn class_of(&self, word: &str) -> Option<Class> {
        self.words.get(&word_key(word)).copied()
    }

    pub(crate) fn is_result_error(&self, word: &str) -> bool {
        self.result_error.contains(&word_key(word))
    }
}

/// How a word (of the profile or of an answer) is looked up: ASCII
/// letters in any case, every other character exactly, ASCII spaces around
/// it ignored. No Unicode case folding: `"ſuccess"` (long s) or
/// `"SUCCESS\u{200b}"` is not `SUCCESS`, so a word that only looks like a
/// known one matches no rule (the answer is `unknown`).
pub(crate) fn word_key(word: &str) -> String {
    word.trim_ascii().to_ascii_uppercase()
}

fn status_call(s: &StatusCallSpec) -> Result<StatusCall, ProfileError> {
    let method = s.method.trim_ascii().to_ascii_uppercase();
    if method != "GET" && method != "POST" {
        return Err(ProfileError::BadStatusCall(format!(
            "method {:?} must be GET or POST",
            s.method
        )));
    }
    if !s.path.starts_with('/') || !s.path.contains("{transactionId}") {
        return Err(ProfileError::BadStatusCall(format!(
            "path {:?} must start with / and contain {{transactionId}}",
            s.path
        )));
    }
    check_pointer("status_call.status", &s.status)?;
    Ok(StatusCall {
        method,
        path: s.path.clone(),
        status: s.status.clone(),
    })
}

#[cfg(test)]
mod tests;
