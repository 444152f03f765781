//! What `payrun reconcile` may do for a payout that is not final, as pure
//! functions: the advice it lists for each state, and the refusal of an
//! action that could pay twice (re-sending a payout of a run made against
//! another provider, or against the built-in sandbox; settling one whose
//! execute is on its way).

use crate::machine::State;

/// What an operator can do about a payout in `state` (empty: nothing to
/// do), in English (`lang::Closing::advice` in each language).
pub fn advice(state: State) -> &'static str {
    (crate::lang::Language::En.closing().advice)(state.as_str())
}

/// Why an operator's verdict (`--mark`) on the payout `id`, found in
/// `state`, is refused. An `executing` payout may have a request on its
/// way (a run's execute, or a `reconcile --resend`): its answer decides,
/// never a verdict written beside it.
pub fn mark_refusal(id: &str, state: State) -> String {
    if state == State::Executing {
        return format!(
            "payout {id} is executing: its execute (a run's, or a `payrun reconcile --resend`) may \
             be on its way, and its answer decides; nothing was marked. Let that command finish; if \
             it was interrupted, run its file again to resume it (held as unknown under \
             ambiguous = hold), then mark it"
        );
    }
    format!("payout {id} is {state}; only unknown or processing payouts can be marked")
}

/// Why a statement line or a status answer that would settle a payout
/// did not: its execute is on its way (`executing`), or another process
/// changed it between the read and the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotSettled {
    InFlight,
    Changed,
}

impl NotSettled {
    /// The sentence for people, in `language`.
    pub fn describe_in(self, language: crate::lang::Language) -> &'static str {
        let c = language.closing();
        match self {
            NotSettled::InFlight => c.in_flight,
            NotSettled::Changed => c.changed,
        }
    }
}

/// Why re-sending a payout of a run recorded against `run_provider` to
/// `target` (the client's base URL) is refused, if it is: the same
/// transactionId at another provider is a new payment there.
pub fn resend_refusal(run_provider: &str, target: &str) -> Option<String> {
    if run_provider == "sandbox" {
        return Some(
            "its run was made against the built-in sandbox (no real money moved); \
             re-sending it to a real provider would pay it for the first time"
                .into(),
        );
    }
    if !same_provider(run_provider, target) {
        return Some(format!(
            "its run was made against {run_provider}, not {target}; the same id at \
             another provider is a new payment (pass --base-url {run_provider})"
        ));
    }
    None
}

/// Whether two providers recorded or given (base URLs, or `sandbox`) are
/// the same: a trailing `/` and the case do not matter.
pub fn same_provider(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().trim_end_matches('/').to_ascii_lowercase();
    norm(a) == norm(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resend_is_refused_to_another_provider_or_from_the_sandbox() {
        assert!(resend_refusal("sandbox", "https://api.example/v1").is_some());
        let e = resend_refusal("https://a.example/v1", "https://b.example/v1").unwrap();
        assert!(e.contains("https://a.example/v1"), "{e}");
        assert_eq!(
            resend_refusal("https://a.example/v1/", "https://a.example/v1"),
            None
        );
    }

    #[test]
    fn every_open_state_has_advice_and_final_ones_none() {
        for s in State::ALL {
            assert_eq!(
                advice(s).is_empty(),
                !crate::machine::NOT_DONE.contains(&s),
                "{s}"
            );
        }
    }
}
