//! The sentence a configuration stop shows: what the provider answered,
//! what it means, and what to fix before running the same command again.
//! The decision to stop is the state machine's (`decide::StopKind::Config`);
//! this file only words it.

use crate::machine::decide::ConfigKind;

/// The message of a run stopped by a configuration problem. `detail` is
/// the provider client's (scrubbed) description of the answer.
pub fn config_stop(kind: ConfigKind, detail: &str) -> String {
    let (cause, fix) = match kind {
        ConfigKind::Redirect => (
            "the provider answered with a redirect, which payrun never follows \
             (following it could send a payout twice or to another host)",
            "set base_url to the address the provider documents (https, exact path, \
             no trailing redirect)",
        ),
        ConfigKind::NoSuchRoute => (
            "the provider answered 404 for the route itself: there is no such endpoint \
             at this base_url",
            "check base_url (a missing or extra path part such as /v1); if your provider \
             answers 404 with its own \"no such transaction\" code, add that code to \
             `not_found` in the provider profile",
        ),
        ConfigKind::Misconfigured => (
            "the provider answered that the request is not acceptable at this address \
             (405, or a status the provider profile maps to `misconfigured`)",
            "check base_url and the `[provider.http]` table of the provider profile",
        ),
        ConfigKind::RetryAfterTooLong => (
            "the provider asked to wait longer than payrun waits within a run",
            "wait, then run the same command again (or ask the provider about the pause)",
        ),
    };
    format!(
        "{cause} ({detail}). Nothing more was sent; the payout's intent is kept, so \
         progress is saved. Fix: {fix}; then run the same command again to resume"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_names_its_cause_and_fix_and_says_resumable() {
        for (kind, word) in [
            (ConfigKind::Redirect, "redirect"),
            (ConfigKind::NoSuchRoute, "404"),
            (ConfigKind::Misconfigured, "405"),
            (ConfigKind::RetryAfterTooLong, "wait"),
        ] {
            let m = config_stop(kind, "HTTP 302 to /elsewhere");
            assert!(m.contains(word), "{m}");
            assert!(
                m.contains("Fix:") && m.contains("base_url")
                    || kind == ConfigKind::RetryAfterTooLong,
                "{m}"
            );
            assert!(m.contains("run the same command again"), "{m}");
            assert!(m.contains("HTTP 302 to /elsewhere"), "{m}");
        }
    }
}
