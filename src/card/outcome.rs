//! What became of one card payment, in the user's words: the provider's
//! classified answer (`provider::Outcome`) turned into a [`PayReport`] with
//! its exit code, printed as text for people or as one JSON object for
//! scripts. The report holds only the masked card number; any provider text
//! is scrubbed of card data before it gets here.

use std::time::Duration;

use serde_json::{Value, json};

use crate::exit::Exit;
use crate::provider::Outcome;
use crate::provider::wire::codes;

use super::errors::{FieldError, InvalidRequest};
use super::request::CardRequest;
use super::scrub::{Redirect, Secrets, check_redirect, scrub};

/// `data.status` the provider sets when the cardholder must authenticate.
pub const STATUS_REQUIRES_3DS: &str = "REQUIRES_3DS";
/// `data` field carrying the 3-D Secure page to open.
pub const REDIRECT_URL_FIELD: &str = "redirectUrl";

/// The issuer's refusal (the sandbox's `4000000000000002` answers it).
const CARD_DECLINED: &str = "CARD_DECLINED";
/// `data.status` values that mean the card was charged without a challenge
/// (frictionless 3-D Secure). The sandbox never answers them; a real
/// provider may.
const PAID_STATUSES: &[&str] = &["SUCCESS", "SUCCEEDED", "PAID", "APPROVED", "COMPLETED"];
/// `data.status` values that are a refusal even under a 2xx answer.
const REFUSED_STATUSES: &[&str] = &["FAILED", "DECLINED", "REJECTED"];

/// How the payment ended, from the user's point of view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayResult {
    /// The provider wants the cardholder to authenticate: open `url`.
    Redirect { url: String },
    /// Charged without a challenge.
    Paid { status: String },
    /// A definitive refusal: nothing was charged.
    Refused {
        http: u16,
        code: String,
        message: String,
    },
    /// The provider may or may not have acted on it.
    Unknown { reason: String },
    /// The request never reached the provider: nothing was charged.
    NotSent { reason: String },
    /// The provider refused the API key; the request was not processed.
    Unauthorized { http: u16, message: String },
    /// 429: the provider did not process it.
    RateLimited { retry_after: Duration },
}

impl PayResult {
    /// Short machine name, the `outcome` of the JSON output.
    pub fn name(&self) -> &'static str {
        match self {
            PayResult::Redirect { .. } => "requires_3ds",
            PayResult::Paid { .. } => "paid",
            PayResult::Refused { .. } => "refused",
            PayResult::Unknown { .. } => "unknown",
            PayResult::NotSent { .. } => "not_sent",
            PayResult::Unauthorized { .. } => "unauthorized",
            PayResult::RateLimited { .. } => "rate_limited",
        }
    }

    /// The exit code (README, "Exit codes", applied to one payment):
    /// 0 the provider took it (3-D Secure redirect issued, or paid);
    /// 1 it could not proceed and the provider did not process it (not sent,
    /// key refused, rate limited); 3 refused, or the outcome is unknown.
    pub fn exit(&self) -> Exit {
        match self {
            PayResult::Redirect { .. } | PayResult::Paid { .. } => Exit::Ok,
            PayResult::NotSent { .. }
            | PayResult::Unauthorized { .. }
            | PayResult::RateLimited { .. } => Exit::Fatal,
            PayResult::Refused { .. } | PayResult::Unknown { .. } => Exit::Incomplete,
        }
    }

    pub fn exit_code(&self) -> i32 {
        self.exit().code()
    }
}

/// One payment's report: what was asked (masked) and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayReport {
    pub transaction_id: String,
    /// First 6 and last 4 digits at most.
    pub card: String,
    pub amount: String,
    pub currency: String,
    pub result: PayResult,
}

impl PayReport {
    /// Classifies the provider's answer for `request`, with no provider
    /// host known: a redirect carrying card data is refused whatever its
    /// host. Provider text is scrubbed of this request's card data and of
    /// anything that looks like a card number.
    pub fn new(request: &CardRequest, outcome: Outcome) -> PayReport {
        PayReport::classify(request, outcome, None)
    }

    /// [`PayReport::new`] for an answer from the provider at `base_url`: a
    /// redirect to that same host has its card data masked rather than being
    /// refused.
    pub fn from_answer(request: &CardRequest, outcome: Outcome, base_url: &str) -> PayReport {
        PayReport::classify(request, outcome, Some(base_url))
    }

    fn classify(request: &CardRequest, outcome: Outcome, base_url: Option<&str>) -> PayReport {
        let secrets = request.secrets();
        PayReport {
            transaction_id: request.transaction_id.clone(),
            card: request.card.masked(),
            amount: request.wire_amount().to_string(),
            currency: request.currency.code().to_string(),
            result: classify(outcome, base_url, &secrets),
        }
    }

    pub fn exit_code(&self) -> i32 {
        self.result.exit_code()
    }

    /// The report for people.
    pub fn to_text(&self) -> String {
        let id = &self.transaction_id;
        let mut out = String::new();
        match &self.result {
            PayResult::Redirect { url } => {
                out.push_str("3-D SECURE REQUIRED: the cardholder must authenticate the payment by opening:\n");
                out.push_str(&format!("  {url}\n"));
                out.push_str("The payment completes only once the cardholder has authenticated; the provider holds its final state.\n");
            }
            PayResult::Paid { status } => {
                out.push_str(&format!(
                    "PAID: the provider accepted the payment without a 3-D Secure challenge (status {status}).\n"
                ));
            }
            PayResult::Refused {
                http,
                code,
                message,
            } => {
                out.push_str(&format!(
                    "REFUSED: {}\n",
                    refusal_words(code, &self.card, &self.currency)
                ));
                out.push_str("Nothing was charged by this request.\n");
                out.push_str(&format!("provider answer: HTTP {http} {code}"));
                if !message.is_empty() {
                    out.push_str(&format!(": {message}"));
                }
                out.push('\n');
            }
            PayResult::Unknown { reason } => {
                out.push_str(&format!(
                    "UNKNOWN: the outcome of this payment is unknown ({reason}).\n"
                ));
                out.push_str(&format!(
                    "The provider may have received and processed it. payrun does not re-send card payments: check transaction_id {id} with the provider before trying again (sending it again, above all under a new transaction_id, could charge the card twice).\n"
                ));
            }
            PayResult::NotSent { reason } => {
                out.push_str(&format!(
                    "NOT SENT: the request could not reach the provider ({reason}).\nNothing was charged; it is safe to run the same request again.\n"
                ));
            }
            PayResult::Unauthorized { http, message } => {
                out.push_str(&format!(
                    "NOT PROCESSED: the provider refused the API key (HTTP {http}: {message}).\nNothing was charged. Check {} or `api_key_file` in the config.\n",
                    crate::config::API_KEY_ENV
                ));
            }
            PayResult::RateLimited { retry_after } => {
                out.push_str(&format!(
                    "NOT PROCESSED: the provider is rate limiting requests (HTTP 429); try again in {} s.\nNothing was charged; it is safe to run the same request again.\n",
                    retry_after.as_secs_f64().ceil()
                ));
            }
        }
        out.push_str(&format!("transaction_id: {id}\n"));
        out.push_str(&format!("card:           {}\n", self.card));
        out.push_str(&format!(
            "amount:         {} {}\n",
            self.amount, self.currency
        ));
        out
    }

    /// The report for scripts: one JSON object.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "outcome": self.result.name(),
            "exit_code": self.exit_code(),
            "transaction_id": self.transaction_id,
            "card": self.card,
            "amount": self.amount,
            "currency": self.currency,
        });
        let extra = match &self.result {
            PayResult::Redirect { url } => json!({ "redirect_url": url }),
            PayResult::Paid { status } => json!({ "status": status }),
            PayResult::Refused {
                http,
                code,
                message,
            } => json!({
                "http_status": http,
                "code": code,
                "message": message,
                "explanation": refusal_words(code, &self.card, &self.currency),
                "charged": false,
            }),
            PayResult::Unknown { reason } => json!({
                "reason": reason,
                "explanation": format!("the provider may have processed it; check transaction_id {} with the provider; payrun does not re-send card payments", self.transaction_id),
            }),
            PayResult::NotSent { reason } => json!({ "reason": reason, "charged": false }),
            PayResult::Unauthorized { http, message } => {
                json!({ "http_status": http, "message": message, "charged": false })
            }
            PayResult::RateLimited { retry_after } => {
                json!({ "retry_after_secs": retry_after.as_secs_f64(), "charged": false })
            }
        };
        if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
            v.extend(extra);
        }
        v
    }
}

/// The validation errors as one JSON object for `--format json`.
pub fn invalid_json(invalid: &InvalidRequest) -> Value {
    json!({
        "outcome": "invalid",
        "exit_code": Exit::Invalid.code(),
        "message": "the request failed validation; nothing was sent",
        "errors": invalid.errors.iter().map(|e: &FieldError| json!({
            "field": e.field,
            "value": e.value,
            "problem": e.problem,
            "fix": e.fix,
        })).collect::<Vec<_>>(),
    })
}

/// The validation errors for people.
pub fn invalid_text(invalid: &InvalidRequest) -> String {
    let mut out = format!("{invalid}:\n");
    for e in &invalid.errors {
        out.push_str(&format!("  - {e}\n"));
    }
    out
}

/// A refusal in plain words. Codes payrun knows get a sentence; others fall
/// back to the provider's code.
fn refusal_words(code: &str, card: &str, currency: &str) -> String {
    match code {
        codes::CARD_NOT_3DS_ENROLLED => format!(
            "the card {card} is not enrolled in 3-D Secure, and the provider accepts only 3-D Secure cards. Ask the customer for another card, or to enable 3-D Secure with their bank."
        ),
        codes::CURRENCY_WALLET_MISMATCH => format!(
            "the merchant account has no {currency} wallet. Create one with the provider, or charge in a currency the account has a wallet in."
        ),
        CARD_DECLINED => "the card issuer declined the payment. Ask the customer to contact their bank, or to pay with another card.".to_string(),
        codes::DUPLICATE_TRANSACTION_ID => "this transaction_id was already used for another payment. Check that payment with the provider; use a new transaction_id only if this is a different payment.".to_string(),
        codes::VALIDATION_ERROR => "the provider found the request invalid (see its message below).".to_string(),
        _ => format!("the provider refused the payment (code {code})."),
    }
}

/// Classifies the provider's answer. Every string taken from it is scrubbed.
fn classify(outcome: Outcome, base_url: Option<&str>, secrets: &Secrets<'_>) -> PayResult {
    let s = |t: &str| scrub(t, secrets);
    match outcome {
        Outcome::Accepted {
            code,
            message,
            status,
            data,
        } => {
            let status_up = status.as_deref().map(str::to_ascii_uppercase);
            match status_up.as_deref() {
                Some(STATUS_REQUIRES_3DS) => {
                    let url = data
                        .as_ref()
                        .and_then(|d| d.get(REDIRECT_URL_FIELD))
                        .and_then(Value::as_str);
                    redirect(url, base_url, secrets)
                }
                Some(st) if PAID_STATUSES.contains(&st) => PayResult::Paid { status: s(st) },
                Some(st) if REFUSED_STATUSES.contains(&st) => {
                    let failure = data
                        .as_ref()
                        .and_then(|d| d.get("failureCode"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    PayResult::Refused {
                        http: 200,
                        code: s(&failure.unwrap_or(code)),
                        message: s(&message),
                    }
                }
                other => PayResult::Unknown {
                    reason: format!(
                        "the provider accepted the request with status {} ({}), which payrun does not know",
                        s(other.unwrap_or("(none)")),
                        s(&code)
                    ),
                },
            }
        }
        Outcome::Refused {
            http,
            code,
            message,
            ..
        } => PayResult::Refused {
            http,
            code: s(&code),
            message: s(&message),
        },
        Outcome::Unauthorized { http, message } => PayResult::Unauthorized {
            http,
            message: s(&message),
        },
        Outcome::RateLimited { retry_after } => PayResult::RateLimited { retry_after },
        Outcome::NotSent { detail } => PayResult::NotSent { reason: s(&detail) },
        Outcome::Ambiguous { detail } => PayResult::Unknown { reason: s(&detail) },
        // Not final, an answer for another request or contradicting
        // itself, or a configuration stop: the payment's outcome is not
        // known.
        other @ (Outcome::NotFinal { .. }
        | Outcome::Mismatch { .. }
        | Outcome::Contradictory { .. }
        | Outcome::Stop { .. }) => PayResult::Unknown {
            reason: s(&other.message()),
        },
    }
}

/// The 3-D Secure redirect as shown to the user: the URL (card data masked
/// when it goes back to the provider's own host), or an unknown outcome when
/// there is none a browser should open or it would carry card data to
/// another host.
fn redirect(url: Option<&str>, base_url: Option<&str>, secrets: &Secrets<'_>) -> PayResult {
    let unusable = || PayResult::Unknown {
        reason: "the provider asks for 3-D Secure authentication but gave no usable redirect URL"
            .to_string(),
    };
    let Some(url) = url else {
        return unusable();
    };
    match check_redirect(url, base_url, secrets) {
        Redirect::Clean(url) | Redirect::Masked(url) => PayResult::Redirect { url },
        Redirect::Unusable => unusable(),
        Redirect::CardDataToOtherHost { host } => PayResult::Unknown {
            reason: format!(
                "the provider asks for 3-D Secure authentication through a URL on another host ({host}) that carries card data; payrun does not show it, so that no card data is sent there"
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::request::{CardRequest, Defaults, YearMonth};
    use serde_json::json;

    const TODAY: YearMonth = YearMonth {
        year: 2026,
        month: 3,
    };

    fn request(card: &str) -> CardRequest {
        let body = json!({
            "transaction_id": "T-1",
            "merchant_id": "m",
            "payment_method_id": "pm",
            "currency": "XOF",
            "amount": "1000",
            "payment_details": {
                "card_number": card,
                "card_cvv": "737",
                "expiry_month": "12",
                "expiry_year": "29",
                "otp": "918273",
                "customer_email": "a@example.com",
            }
        });
        CardRequest::parse(body.to_string().as_bytes(), &Defaults::default(), TODAY).unwrap()
    }

    fn accepted(status: &str, data: Value) -> Outcome {
        Outcome::Accepted {
            code: "OK".into(),
            message: "m".into(),
            status: Some(status.into()),
            data: Some(data),
        }
    }

    #[test]
    fn redirect_is_exit_0_with_url() {
        let req = request("4000000000003220");
        let r = PayReport::new(
            &req,
            accepted(
                "REQUIRES_3DS",
                json!({"status":"REQUIRES_3DS","redirectUrl":"https://acs.example/3ds/abc"}),
            ),
        );
        assert_eq!(
            r.result,
            PayResult::Redirect {
                url: "https://acs.example/3ds/abc".into()
            }
        );
        assert_eq!(r.exit_code(), 0);
        assert_eq!(r.card, "400000******3220");
        let text = r.to_text();
        assert!(text.contains("https://acs.example/3ds/abc"), "{text}");
        let j = r.to_json();
        assert_eq!(j["outcome"], "requires_3ds");
        assert_eq!(j["redirect_url"], "https://acs.example/3ds/abc");
        assert_eq!(j["exit_code"], 0);
    }

    #[test]
    fn redirect_without_usable_url_is_unknown() {
        let req = request("4000000000003220");
        for data in [
            json!({"status":"REQUIRES_3DS"}),
            json!({"status":"REQUIRES_3DS","redirectUrl":"javascript:alert(1)"}),
            json!({"status":"REQUIRES_3DS","redirectUrl":"not a url"}),
            json!({"status":"REQUIRES_3DS","redirectUrl":"https://x.example/?pan=4000000000003220"}),
        ] {
            let r = PayReport::new(&req, accepted("REQUIRES_3DS", data.clone()));
            assert!(matches!(r.result, PayResult::Unknown { .. }), "{data}");
            assert_eq!(r.exit_code(), 3);
        }
    }

    #[test]
    fn not_enrolled_refusal_in_plain_words() {
        let req = request("4242424242424242");
        let r = PayReport::new(
            &req,
            Outcome::Refused {
                http: 422,
                code: "CARD_NOT_3DS_ENROLLED".into(),
                message: "card is not enrolled".into(),
                transaction_failed: false,
            },
        );
        assert_eq!(r.exit_code(), 3);
        let text = r.to_text();
        assert!(text.contains("not enrolled in 3-D Secure"), "{text}");
        assert!(text.contains("424242******4242"), "{text}");
        assert!(text.contains("Nothing was charged"), "{text}");
        let j = r.to_json();
        assert_eq!(j["outcome"], "refused");
        assert_eq!(j["code"], "CARD_NOT_3DS_ENROLLED");
        assert_eq!(j["charged"], false);
    }

    #[test]
    fn ambiguous_is_unknown_with_transaction_id() {
        let req = request("4000000000003220");
        let r = PayReport::new(
            &req,
            Outcome::Ambiguous {
                detail: "HTTP 503".into(),
            },
        );
        assert_eq!(r.exit_code(), 3);
        let text = r.to_text();
        assert!(text.starts_with("UNKNOWN"), "{text}");
        assert!(
            text.contains("check transaction_id T-1 with the provider"),
            "{text}"
        );
        assert_eq!(r.to_json()["outcome"], "unknown");
    }

    #[test]
    fn exit_codes_per_outcome() {
        let req = request("4000000000003220");
        let cases = [
            (
                Outcome::NotSent {
                    detail: "connection refused".into(),
                },
                1,
                "not_sent",
            ),
            (
                Outcome::Unauthorized {
                    http: 401,
                    message: "bad key".into(),
                },
                1,
                "unauthorized",
            ),
            (
                Outcome::RateLimited {
                    retry_after: Duration::from_secs(2),
                },
                1,
                "rate_limited",
            ),
            (accepted("SUCCESS", json!({"status":"SUCCESS"})), 0, "paid"),
            (
                accepted("DECLINED", json!({"status":"DECLINED"})),
                3,
                "refused",
            ),
            (accepted("WEIRD", json!({"status":"WEIRD"})), 3, "unknown"),
        ];
        for (outcome, code, name) in cases {
            let r = PayReport::new(&req, outcome);
            assert_eq!(r.exit_code(), code, "{name}");
            assert_eq!(r.result.name(), name);
        }
    }

    #[test]
    fn provider_text_is_scrubbed() {
        let req = request("4000000000003220");
        let r = PayReport::new(
            &req,
            Outcome::Refused {
                http: 422,
                code: "X".into(),
                message:
                    "card 4000000000003220 cvv 737 otp 918273 other 5555555555554444 amount 1000"
                        .into(),
                transaction_failed: false,
            },
        );
        let text = r.to_text() + &r.to_json().to_string();
        for secret in ["4000000000003220", "737", "918273", "5555555555554444"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("amount 1000"), "{text}");
    }

    /// The digits of `text` in order: what a reader could piece together
    /// from a number written with separators.
    fn digits(text: &str) -> String {
        text.chars().filter(char::is_ascii_digit).collect()
    }

    #[test]
    fn echoed_card_numbers_with_separators_are_masked() {
        let req = request("4000000000003220");
        for written in [
            "4000 0000 0000 3220",
            "4000-0000-0000-3220",
            "4000.0000.0000.3220",
        ] {
            let r = PayReport::new(
                &req,
                Outcome::Refused {
                    http: 422,
                    code: "CARD_DECLINED".into(),
                    message: format!("card {written} declined"),
                    transaction_failed: false,
                },
            );
            let shown = r.to_text() + &r.to_json().to_string();
            assert!(!digits(&shown).contains("4000000000003220"), "{shown}");
            assert!(shown.contains("card 400000******3220 declined"), "{shown}");
        }
    }

    #[test]
    fn echoed_cvv_and_otp_values_are_hidden() {
        let req = request("4000000000003220");
        let r = PayReport::new(
            &req,
            Outcome::Refused {
                http: 422,
                code: "VALIDATION_ERROR".into(),
                // A labelled CVV other than the one sent is hidden too.
                message: r#"{"card_cvv":"123","otp":"918273"} otp=55-66"#.into(),
                transaction_failed: false,
            },
        );
        let shown = r.to_text() + &r.to_json().to_string();
        for secret in ["123", "918273", "55-66"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    #[test]
    fn card_data_in_a_provider_redirect_is_masked() {
        let req = request("4000000000003220");
        let r = PayReport::from_answer(
            &req,
            accepted(
                "REQUIRES_3DS",
                json!({"redirectUrl":"https://pay.example/3ds/4000%200000%200000%203220?otp=918273&t=T-1"}),
            ),
            "https://pay.example",
        );
        assert_eq!(
            r.result,
            PayResult::Redirect {
                url: "https://pay.example/3ds/400000******3220?otp=%5Bredacted%5D&t=T-1".into()
            }
        );
    }

    #[test]
    fn card_data_in_a_redirect_to_another_host_is_refused() {
        let req = request("4000000000003220");
        for url in [
            "https://acs.other.example/3ds/4000%200000%200000%203220",
            "https://acs.other.example/3ds?card=4000-0000-0000-3220",
            "https://acs.other.example/3ds?cvv=737",
        ] {
            let r = PayReport::from_answer(
                &req,
                accepted("REQUIRES_3DS", json!({ "redirectUrl": url })),
                "https://pay.example",
            );
            assert!(matches!(r.result, PayResult::Unknown { .. }), "{url}");
            let shown = r.to_text() + &r.to_json().to_string();
            assert!(!digits(&shown).contains("4000000000003220"), "{shown}");
            assert!(
                !shown.contains("737") && !shown.contains("acs.other.example/3ds"),
                "{shown}"
            );
            assert!(
                shown.contains("another host (acs.other.example)"),
                "{shown}"
            );
        }
        // A clean URL to another host (the issuer's ACS) is shown as it is.
        let r = PayReport::from_answer(
            &req,
            accepted(
                "REQUIRES_3DS",
                json!({"redirectUrl":"https://acs.other.example/3ds/abc"}),
            ),
            "https://pay.example",
        );
        assert_eq!(
            r.result,
            PayResult::Redirect {
                url: "https://acs.other.example/3ds/abc".into()
            }
        );
    }
}
