//! `Client::status`: asking the provider for one transaction's status with
//! the profile's status call (`[provider.status_call]`), its word classified
//! with the profile's own vocabulary. Without a status call it is never
//! asked. A status that is not clearly paid or failed settles nothing. A
//! 429 carries its `Retry-After` for the rate limiter; a 404 that is not
//! the profile's "no such transaction" (a wrong path) and a refused key say
//! that asking again is pointless.

use super::Client;
use super::profile::Class;
use super::transport::Failure;
use http::Method;

/// What the provider says about one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxStatus {
    Paid(String),
    Failed(String),
    /// Not settled yet (pending, processing, initiated) or a word the
    /// profile does not know: ask again later.
    NotFinal(String),
    NotFound,
    /// 429: ask again after this pause (the answer's `Retry-After`, or the
    /// default).
    RateLimited(std::time::Duration),
    /// A 404 without the profile's not-found code: the status path does
    /// not exist at this provider; asking again cannot help.
    NoRoute(String),
    /// 401 or 403: the key was refused.
    Refused(u16),
    /// The call failed or the answer could not be read: settles nothing.
    Unreadable(String),
}

/// Percent-encodes everything but RFC 3986 unreserved characters, so an
/// id can never change the path it is put in.
fn encode_segment(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Pure: a status word read from the answer, by the profile's classes.
pub fn status_of(class: Option<Class>, word: &str) -> TxStatus {
    match class {
        Some(Class::Executed | Class::AlreadyExecuted) => TxStatus::Paid(word.to_string()),
        Some(Class::Failed) => TxStatus::Failed(word.to_string()),
        Some(Class::NotFound) => TxStatus::NotFound,
        _ => TxStatus::NotFinal(word.to_string()),
    }
}

impl Client {
    /// Whether the profile names a status call.
    pub fn has_status_call(&self) -> bool {
        self.profile.status_call.is_some()
    }

    /// Asks the status of `transaction_id`; `None` without a status call.
    pub async fn status(&self, transaction_id: &str) -> Option<TxStatus> {
        let call = self.profile.status_call.as_ref()?;
        let id = encode_segment(transaction_id);
        let path = call.path.replace("{transactionId}", &id);
        let url = match self.base.join_uri(path.trim_start_matches('/')) {
            Ok(u) => u,
            Err(e) => return Some(TxStatus::Unreadable(e.to_string())),
        };
        let (method, body) = if call.method == "POST" {
            let body = serde_json::json!({ "transactionId": transaction_id }).to_string();
            (Method::POST, Some(body.into_bytes()))
        } else {
            (Method::GET, None)
        };
        let reply = match self.http.call(method, &url, &super::JSON, body).await {
            Ok(r) => r,
            Err(Failure::NotSent(e) | Failure::MaybeSent(e)) => {
                return Some(TxStatus::Unreadable(self.scrubber.redact(&e)));
            }
        };
        let http = reply.http;
        if http == 429 {
            let wait = reply
                .retry_after
                .as_deref()
                .and_then(|v| super::parse_retry_after(v, std::time::SystemTime::now()))
                .unwrap_or(super::DEFAULT_RETRY_AFTER);
            return Some(TxStatus::RateLimited(wait));
        }
        if http == 401 || http == 403 {
            return Some(TxStatus::Refused(http));
        }
        let bytes = match reply.body {
            Ok(b) => b,
            Err(super::transport::BodyError::TooLarge) => {
                return Some(TxStatus::Unreadable("answer too large".into()));
            }
            Err(super::transport::BodyError::Broken(e)) => {
                return Some(TxStatus::Unreadable(self.scrubber.redact(&e)));
            }
        };
        let json: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
        if http == 404 {
            // About the payout only when it carries the not-found code.
            let code = json
                .as_ref()
                .zip(self.profile.code.as_deref())
                .and_then(|(j, p)| j.pointer(p))
                .and_then(|v| v.as_str());
            return Some(match code.map(|c| self.profile.class_of(c)) {
                Some(Some(super::profile::Class::NotFound)) => TxStatus::NotFound,
                _ => TxStatus::NoRoute(format!("{} {}", call.method, call.path)),
            });
        }
        if !(200..300).contains(&http) {
            return Some(TxStatus::Unreadable(format!("HTTP {http}")));
        }
        let Some(json) = json else {
            return Some(TxStatus::Unreadable("answer is not JSON".into()));
        };
        let Some(word) = json.pointer(&call.status).and_then(|v| v.as_str()) else {
            return Some(TxStatus::Unreadable(format!(
                "no status at {} in the answer",
                call.status
            )));
        };
        Some(status_of(self.profile.class_of(word), word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_cannot_escape_their_path_segment() {
        assert_eq!(encode_segment("tx-1_a.b~"), "tx-1_a.b~");
        assert_eq!(encode_segment("../x?y"), "..%2Fx%3Fy");
    }

    #[test]
    fn only_clear_words_settle() {
        assert_eq!(
            status_of(Some(Class::Executed), "SUCCESS"),
            TxStatus::Paid("SUCCESS".into())
        );
        assert_eq!(
            status_of(Some(Class::Failed), "FAILED"),
            TxStatus::Failed("FAILED".into())
        );
        assert_eq!(
            status_of(Some(Class::Pending), "PROCESSING"),
            TxStatus::NotFinal("PROCESSING".into())
        );
        assert_eq!(status_of(None, "WEIRD"), TxStatus::NotFinal("WEIRD".into()));
    }
}
