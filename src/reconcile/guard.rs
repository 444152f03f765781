//! What `payrun reconcile` may do for a payout that is not final, as pure
//! functions: the advice it lists for each state, and the refusal of an
//! action that could pay twice (re-sending a payout of a run made against
//! another provider, or against the built-in sandbox).

use crate::machine::State;

/// What an operator can do about a payout in `state` (empty: nothing to do).
pub fn advice(state: State) -> &'static str {
    match state {
        State::Pending => "not sent yet: run the same file again",
        State::Initiating => {
            "initiation may have reached the provider: run the same file again \
             (re-sent under the same id; no money moves)"
        }
        State::Initiated => {
            "initiated, not executed: after approval, run the same file again without --initiate-only"
        }
        State::Executing => {
            "execute may have reached the provider: run the same file again (same id, the \
             provider deduplicates), or settle it with --statement FILE"
        }
        State::Unknown => {
            "outcome unknown: --statement FILE, --poll, --resend, \
             or --mark executed|failed ID --reason TEXT"
        }
        State::Processing => {
            "accepted by the provider, not final yet: --poll (when the provider has a status \
             call), --statement FILE, or --mark executed|failed ID --reason TEXT"
        }
        State::SetAside => {
            "set aside: its attempt budget ran out without a final answer; check it with the \
             provider (no money moved: it was never executed) and pay it in a new run if due"
        }
        _ => "",
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
