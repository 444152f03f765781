//! Scrubbing what the provider sends back before payrun prints or returns
//! it: card numbers (however they are written: `4000000000003220`,
//! `4000 0000 0000 3220`, `4000-0000-0000-3220`, `4000.0000.0000.3220`) are
//! masked to first 6 / last 4, this request's CVV and OTP, and any value
//! labelled as a CVV or OTP (`"cvv":"123"`, `otp=918273`), are replaced by
//! `[redacted]`, and the 3-D Secure `redirectUrl` is checked
//! ([`check_redirect`]) so it can never carry card data to another host. A
//! real provider should never echo card data, but what payrun prints must
//! not depend on that.

use std::borrow::Cow;
use std::sync::LazyLock;

use percent_encoding::percent_decode_str;
use regex::Regex;
use secrecy::zeroize::Zeroize;
use url::Url;

use super::pan::{PAN_DIGITS, luhn_valid, mask_pan};

/// What replaces a CVV or OTP value.
const REDACTED: &str = "[redacted]";

/// The longest gap between two digit groups still read as one number:
/// `4000 - 0000` (three characters) is how some people write a card number,
/// and a longer gap is prose between two numbers.
const MAX_GROUP_GAP: usize = 3;

/// Borrowed views of the secrets of one request.
pub(crate) struct Secrets<'a> {
    pub pan: &'a str,
    pub cvv: &'a str,
    pub otp: &'a str,
}

/// Removes card data from text the provider sent back (see the module
/// comment) and turns control characters into spaces, so nothing the
/// provider wrote can drive the terminal.
pub(crate) fn scrub(text: &str, secrets: &Secrets<'_>) -> String {
    remove_card_data(text, secrets)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// [`scrub`] without the control-character rule: the text is unchanged
/// exactly when it carried no card data.
fn remove_card_data(text: &str, secrets: &Secrets<'_>) -> String {
    let masked = mask_card_numbers(text, secrets.pan);
    let labelled = redact_labelled(&masked);
    let mut out = labelled.into_owned();
    for secret in [secrets.cvv, secrets.otp] {
        out = redact_token(&out, secret);
    }
    out
}

/// Masks every run of digit groups that may be a card number: a group-aligned
/// stretch of 12 to 19 digits that passes Luhn, or any stretch holding this
/// request's number (`pan`). Groups are digit runs joined by up to
/// [`MAX_GROUP_GAP`] spaces, dashes or dots.
fn mask_card_numbers(text: &str, pan: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for chain in digit_chains(text) {
        for (start, end) in card_spans(text, &chain, pan) {
            out.push_str(&text[done..start]);
            let mut digits: String = text[start..end]
                .chars()
                .filter(char::is_ascii_digit)
                .collect();
            out.push_str(&mask_pan(&digits));
            digits.zeroize();
            done = end;
        }
    }
    out.push_str(&text[done..]);
    out
}

/// The byte ranges of the digit runs of `text`, grouped into chains of runs
/// separated by short gaps of spaces, dashes or dots.
fn digit_chains(text: &str) -> Vec<Vec<(usize, usize)>> {
    let bytes = text.as_bytes();
    let mut chains: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let joined = chains
            .last()
            .and_then(|c| c.last())
            .is_some_and(|&(_, prev_end)| {
                let gap = &bytes[prev_end..start];
                gap.len() <= MAX_GROUP_GAP && gap.iter().all(|b| matches!(b, b' ' | b'-' | b'.'))
            });
        match chains.last_mut() {
            Some(chain) if joined => chain.push((start, i)),
            _ => chains.push(vec![(start, i)]),
        }
    }
    chains
}

/// The byte spans of `chain` to mask, left to right, not overlapping: the
/// whole chain if it holds `pan`, else each longest group-aligned stretch
/// that is Luhn-valid and of card-number length.
fn card_spans(text: &str, chain: &[(usize, usize)], pan: &str) -> Vec<(usize, usize)> {
    let digits_of = |from: usize, to: usize| -> String {
        chain[from..=to].iter().map(|&(s, e)| &text[s..e]).collect()
    };
    let last = chain.len() - 1;
    if !pan.is_empty() && digits_of(0, last).contains(pan) {
        return vec![(chain[0].0, chain[last].1)];
    }
    let mut spans = Vec::new();
    let mut i = 0;
    while i <= last {
        // Stretches starting at group `i`, longest first, no longer than a
        // card number (so the search stays linear in the chain's length).
        let mut ends = Vec::new();
        let mut len = 0;
        for (j, &(start, end)) in chain.iter().enumerate().skip(i) {
            len += end - start;
            if len > *PAN_DIGITS.end() {
                break;
            }
            ends.push((j, len));
        }
        let hit = ends
            .iter()
            .rev()
            .find(|&&(j, len)| PAN_DIGITS.contains(&len) && luhn_valid(&digits_of(i, j)));
        match hit {
            Some(&(j, _)) => {
                spans.push((chain[i].0, chain[j].1));
                i = j + 1;
            }
            None => i += 1,
        }
    }
    spans
}

/// Names under which a provider may echo a CVV or an OTP.
static LABELLED_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\b((?:card_?)?(?:cvv2?|cvc2?|csc)|otp|one_?time_?password|security_?code)(["']?\s*[:=]\s*["']?)([^"'\s,;&}\]]+)"#,
    )
    .expect("the pattern is valid")
});

/// Replaces the value of every `cvv: …`, `"otp":"…"`, `card_cvv=…` (and
/// similar) in `text`, whatever the value: a CVV or OTP the provider echoes
/// may be written differently from what was sent.
fn redact_labelled(text: &str) -> Cow<'_, str> {
    LABELLED_SECRET.replace_all(text, format!("${{1}}${{2}}{REDACTED}"))
}

/// Whether a query parameter's name labels a CVV or an OTP.
fn is_secret_label(name: &str) -> bool {
    LABELLED_SECRET.is_match(&format!("{name}=x"))
}

/// Replaces each occurrence of `secret` in `text` that stands on its own
/// (no letter or digit right before or after it) by [`REDACTED`]. Letters
/// and digits around it mean another value that merely contains it.
fn redact_token(text: &str, secret: &str) -> String {
    if secret.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(secret) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + secret.len()..].chars().next();
        let alone =
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..at]);
        if alone {
            out.push_str(REDACTED);
        } else {
            out.push_str(secret);
        }
        rest = &rest[at + secret.len()..];
    }
    out.push_str(rest);
    out
}

/// What may be shown of the provider's 3-D Secure redirect URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// Safe to show and open as it is.
    Clean(String),
    /// It carried card data and goes to the provider's own host: shown with
    /// the card data masked.
    Masked(String),
    /// Not a URL a browser should open (not absolute http(s)).
    Unusable,
    /// It carries card data to a host other than the provider's. Refused,
    /// not stripped: an answer that hands card data to another site is
    /// either a misconfiguration or an attack, and a stripped URL would still
    /// send the payer's browser there; so no URL is shown.
    CardDataToOtherHost { host: String },
}

/// Checks the redirect URL the provider gave. `provider` is the configured
/// base URL (`None`: unknown, so every host counts as another host). Card
/// data is looked for in the decoded path segments, query names and values,
/// fragment, user name and password, and host.
pub(crate) fn check_redirect(url: &str, provider: Option<&str>, secrets: &Secrets<'_>) -> Redirect {
    let Ok(parsed) = Url::parse(url.trim()) else {
        return Redirect::Unusable;
    };
    let Some(host) = parsed.host_str() else {
        return Redirect::Unusable;
    };
    if !matches!(parsed.scheme(), "https" | "http") {
        return Redirect::Unusable;
    }
    let host_clean = remove_card_data(host, secrets) == host;
    let masked = mask_url(&parsed, secrets);
    if host_clean && masked.is_none() {
        // Parsing re-serialises it, so control characters come out
        // percent-encoded and cannot reach the terminal raw.
        return Redirect::Clean(parsed.to_string());
    }
    let same_host = provider
        .and_then(|p| Url::parse(p.trim()).ok())
        .is_some_and(|p| {
            p.host_str().is_some_and(|h| h.eq_ignore_ascii_case(host))
                && p.port_or_known_default() == parsed.port_or_known_default()
        });
    match masked {
        Some(masked) if host_clean && same_host => Redirect::Masked(masked.to_string()),
        _ => Redirect::CardDataToOtherHost {
            host: scrub(host, secrets),
        },
    }
}

/// `url` with the card data of its path, query, fragment and user info
/// masked, or `None` when it carries none.
fn mask_url(url: &Url, secrets: &Secrets<'_>) -> Option<Url> {
    let clean = |s: &str| remove_card_data(s, secrets);
    let mut out = url.clone();
    let mut changed = false;

    let segments: Vec<String> = url
        .path_segments()
        .map(|segs| {
            segs.map(|s| percent_decode_str(s).decode_utf8_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let cleaned: Vec<String> = segments.iter().map(|s| clean(s)).collect();
    if cleaned != segments {
        changed = true;
        if let Ok(mut path) = out.path_segments_mut() {
            path.clear().extend(cleaned.iter());
        }
    }

    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let cleaned: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| {
            let v = if is_secret_label(k) {
                REDACTED.to_string()
            } else {
                clean(v)
            };
            (clean(k), v)
        })
        .collect();
    if cleaned != pairs {
        changed = true;
        out.query_pairs_mut().clear().extend_pairs(&cleaned);
    }

    if let Some(fragment) = url.fragment() {
        let decoded = percent_decode_str(fragment).decode_utf8_lossy();
        let cleaned = clean(&decoded);
        if cleaned != decoded {
            changed = true;
            out.set_fragment(Some(&cleaned));
        }
    }

    let user = percent_decode_str(url.username()).decode_utf8_lossy();
    let password = url
        .password()
        .map(|p| percent_decode_str(p).decode_utf8_lossy());
    if clean(&user) != user || password.is_some_and(|p| clean(&p) != p) {
        changed = true;
        // User info has no place in a 3-D Secure URL: dropped whole.
        let _ = out.set_username("");
        let _ = out.set_password(None);
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAN: &str = "4000000000003220";
    const CVV: &str = "737";
    const OTP: &str = "918273";
    const SECRETS: Secrets<'static> = Secrets {
        pan: PAN,
        cvv: CVV,
        otp: OTP,
    };

    /// Moved from `request`, where `scrub` lived.
    #[test]
    fn scrub_masks_card_numbers_and_secrets() {
        let out = scrub(
            "pan 4000000000003220 x4000000000003220y cvv 737 otp 918273 ok 7370 id 123\u{1b}[2J",
            &SECRETS,
        );
        assert!(
            !out.contains(PAN) && !out.contains(" 737 ") && !out.contains(OTP),
            "{out}"
        );
        assert!(out.contains("400000******3220"), "{out}");
        assert!(out.contains("ok 7370 id 123"), "{out}");
        assert!(!out.contains('\u{1b}'), "{out}");
    }

    /// The digits of a card number, in order, with any separators between
    /// them: what a reader could still piece together.
    fn shows_number(text: &str, number: &str) -> bool {
        let digits: String = text.chars().filter(char::is_ascii_digit).collect();
        digits.contains(number)
    }

    #[test]
    fn card_numbers_with_spaces_dashes_or_dots_are_masked() {
        for written in [
            "4000 0000 0000 3220",
            "4000-0000-0000-3220",
            "4000.0000.0000.3220",
            "4000 - 0000 - 0000 - 3220",
        ] {
            let out = scrub(&format!("card {written} refused"), &SECRETS);
            assert!(!shows_number(&out, PAN), "{written} -> {out}");
            assert_eq!(out, "card 400000******3220 refused", "{written}");
        }
        // Another card than this request's, found by its Luhn checksum.
        for written in [
            "5555 5555 5555 4444",
            "5555-5555-5555-4444",
            "5555.5555.5555.4444",
        ] {
            let out = scrub(&format!("ref 12 card {written}, amount 1000.00"), &SECRETS);
            assert!(!shows_number(&out, "5555555555554444"), "{out}");
            assert!(out.contains("555555******4444"), "{out}");
            assert!(
                out.contains("amount 1000.00") && out.contains("ref 12"),
                "{out}"
            );
        }
    }

    #[test]
    fn ordinary_numbers_stay_readable() {
        for text in [
            "amount 25000 XOF on 2026-03-01 12:00:00",
            "amount 25000 XOF on 2026-03-01",
            "ids 1234 5678 9012",
            "version 1.2.3",
        ] {
            assert_eq!(scrub(text, &SECRETS), text);
        }
    }

    #[test]
    fn cvv_and_otp_are_hidden_however_they_are_echoed() {
        let secrets = Secrets {
            pan: PAN,
            cvv: CVV,
            otp: "ab-12",
        };
        // The OTP holds a dash: word splitting alone would miss it.
        let out = scrub("your otp ab-12 was wrong", &secrets);
        assert_eq!(out, "your otp [redacted] was wrong");
        // The example of docs/card.md, to the letter.
        assert_eq!(
            scrub(r#"{"card_cvv":"123","otp":"918273"} otp=55-66"#, &SECRETS),
            r#"{"card_cvv":"[redacted]","otp":"[redacted]"} otp=[redacted]"#
        );
        // A labelled value, even one other than what was sent.
        for (text, hidden) in [
            (r#"{"card_cvv":"123","otp":"555111"}"#, ["123", "555111"]),
            ("CVV=4321&OTP=77", ["4321", "77"]),
            ("cvc2: 999; one_time_password: 31337", ["999", "31337"]),
        ] {
            let out = scrub(text, &secrets);
            for value in hidden {
                assert!(!out.contains(value), "{text} -> {out}");
            }
            assert!(out.contains(REDACTED), "{out}");
        }
    }

    const PROVIDER: Option<&str> = Some("https://api.provider.example");

    #[test]
    fn clean_redirects_pass_unchanged() {
        for url in [
            "https://api.provider.example/3ds/T-1",
            "https://acs.issuer.example/challenge?session=abc123&ref=T-1",
        ] {
            assert_eq!(
                check_redirect(url, PROVIDER, &SECRETS),
                Redirect::Clean(url.to_string())
            );
        }
        assert_eq!(
            check_redirect("javascript:alert(1)", PROVIDER, &SECRETS),
            Redirect::Unusable
        );
    }

    #[test]
    fn card_data_in_a_provider_redirect_is_masked() {
        let cases = [
            (
                "https://api.provider.example/3ds?pan=4000000000003220&t=1",
                "https://api.provider.example/3ds?pan=400000******3220&t=1",
            ),
            (
                "https://api.provider.example/3ds/4000%200000%200000%203220/go",
                "https://api.provider.example/3ds/400000******3220/go",
            ),
            (
                "https://api.provider.example/3ds?card=4000-0000-0000-3220&cvv=737&otp=918273",
                "https://api.provider.example/3ds?card=400000******3220&cvv=%5Bredacted%5D&otp=%5Bredacted%5D",
            ),
            (
                "https://api.provider.example/3ds#pan=4000.0000.0000.3220",
                "https://api.provider.example/3ds#pan=400000******3220",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(
                check_redirect(url, PROVIDER, &SECRETS),
                Redirect::Masked(want.to_string()),
                "{url}"
            );
        }
        // A CVV under a label: hidden even when it is not this request's.
        let r = check_redirect(
            "https://api.provider.example/3ds?cvc=000",
            PROVIDER,
            &SECRETS,
        );
        assert!(matches!(r, Redirect::Masked(u) if !u.contains("000")));
    }

    #[test]
    fn card_data_never_goes_to_another_host() {
        for url in [
            "https://acs.elsewhere.example/3ds?pan=4000000000003220",
            "https://acs.elsewhere.example/3ds/4000%200000%200000%203220",
            "https://acs.elsewhere.example/3ds?otp=918273",
            // Same name, other port: another server.
            "https://api.provider.example:8443/3ds?pan=4000000000003220",
            // The provider's host name written into another host.
            "https://api.provider.example.evil.example/3ds?cvv=737",
            "https://4000000000003220:737@api.provider.example/3ds",
        ] {
            let r = check_redirect(url, PROVIDER, &SECRETS);
            if url.contains('@') {
                // User info on the provider's own host is dropped.
                assert_eq!(
                    r,
                    Redirect::Masked("https://api.provider.example/3ds".into()),
                    "{url}"
                );
            } else {
                assert!(
                    matches!(r, Redirect::CardDataToOtherHost { .. }),
                    "{url}: {r:?}"
                );
            }
        }
        // Without a known provider every host is another host.
        let r = check_redirect(
            "https://api.provider.example/3ds?pan=4000000000003220",
            None,
            &SECRETS,
        );
        assert!(matches!(r, Redirect::CardDataToOtherHost { .. }), "{r:?}");
        // Card data in the host name itself cannot be masked: refused.
        let r = check_redirect(
            "https://4000000000003220.provider.example/",
            PROVIDER,
            &SECRETS,
        );
        match r {
            Redirect::CardDataToOtherHost { host } => assert!(!host.contains(PAN), "{host}"),
            other => panic!("{other:?}"),
        }
    }
}
