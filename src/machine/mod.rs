//! The payout state machine: the states, the named sets of states, and the
//! transitions allowed between them. Every other module asks here — by set
//! name, never by re-listing states — and every transition written to the
//! database is checked against [`allowed`] and against the state it comes
//! from. See `ARCHITECTURE.md`, "The state machine".

pub mod decide;

use serde::{Deserialize, Serialize};

/// States of a payout. Stored as their snake_case names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Imported, nothing sent.
    Pending,
    /// Intent to initiate committed; the initiate may have reached the provider.
    Initiating,
    /// The provider accepted the initiation; no money moved.
    Initiated,
    /// Intent to execute committed; money may be moving.
    Executing,
    /// The provider accepted the execution but said it is not final
    /// (pending, processing...): money may move; a status call, a statement
    /// or an operator settles it.
    Processing,
    /// Paid.
    Executed,
    /// The provider refused the initiation; no money moved.
    InitiateFailed,
    /// The provider refused the execution; no money moved.
    ExecuteFailed,
    /// The execution may or may not have happened; an operator or a
    /// statement settles it.
    Unknown,
    /// Failed validation; never sent.
    Rejected,
    /// Its attempt budget across runs is spent on initiations that never
    /// got a final answer (a row the provider always answers 5xx): parked
    /// so the rest of the run finishes. No money moved (initiation moves
    /// none); never sent again automatically; listed by `payrun reconcile`.
    SetAside,
    /// Ended by an operator (`payrun cancel`) before its execute was ever
    /// sent: from `pending` (nothing sent) or `initiated` (an initiation
    /// moves no money). Never paid, never sent again.
    Cancelled,
}

/// A state name read from storage that payrun does not know. Never coerced
/// to some other state: a database written by a newer payrun, or edited by
/// hand, must be looked at, not guessed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown payout state {0:?} in the database (written by a newer payrun?)")]
pub struct UnknownState(pub String);

impl State {
    pub const ALL: [State; 12] = [
        State::Pending,
        State::Initiating,
        State::Initiated,
        State::Executing,
        State::Processing,
        State::Executed,
        State::InitiateFailed,
        State::ExecuteFailed,
        State::Unknown,
        State::Rejected,
        State::SetAside,
        State::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Initiating => "initiating",
            State::Initiated => "initiated",
            State::Executing => "executing",
            State::Processing => "processing",
            State::Executed => "executed",
            State::InitiateFailed => "initiate_failed",
            State::ExecuteFailed => "execute_failed",
            State::Unknown => "unknown",
            State::Rejected => "rejected",
            State::SetAside => "set_aside",
            State::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Result<State, UnknownState> {
        State::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| UnknownState(s.to_string()))
    }

    /// The engine never moves a payout out of a final state; only an
    /// operator's or a statement's decision moves `unknown`.
    pub fn is_final(self) -> bool {
        FINAL.contains(&self)
    }

    /// The request for this payout may be at the provider right now, or its
    /// answer was lost: a resume must settle it before anything else.
    pub fn is_in_flight(self) -> bool {
        IN_FLIGHT.contains(&self)
    }

    /// Money may have moved for this payout: it must never be sent again
    /// under a new identity, and it counts for the repeat guard.
    pub fn may_have_paid(self) -> bool {
        MAY_HAVE_PAID.contains(&self)
    }

    /// Not final: the run still has work (or a question) for this payout.
    pub fn is_open(self) -> bool {
        OPEN.contains(&self)
    }
}

/// States the engine never leaves.
pub const FINAL: &[State] = &[
    State::Executed,
    State::InitiateFailed,
    State::ExecuteFailed,
    State::Unknown,
    State::Rejected,
    State::SetAside,
    State::Cancelled,
];

/// Intent states: committed before a request leaves, so after a crash the
/// request may or may not have reached the provider.
pub const IN_FLIGHT: &[State] = &[State::Initiating, State::Executing];

/// States in which the engine still has work to do for a payout, or is
/// waiting for the provider to finish it (`processing`): the run is not
/// finished while any remain.
pub const OPEN: &[State] = &[
    State::Pending,
    State::Initiating,
    State::Initiated,
    State::Executing,
    State::Processing,
];

/// States an operator may cancel (`payrun cancel`): no execute was ever
/// sent for them, so no money moved and none will.
pub const CANCELLABLE: &[State] = &[State::Pending, State::Initiated];

/// States in which money may have moved (or has).
pub const MAY_HAVE_PAID: &[State] = &[
    State::Executing,
    State::Processing,
    State::Executed,
    State::Unknown,
];

/// States that show a run was started on the provider's side: initiated,
/// executing or paid. An edited copy of such a run's file is refused.
pub const SENT_OR_PAID: &[State] = &[
    State::Executed,
    State::Executing,
    State::Processing,
    State::Initiated,
    State::Unknown,
];

/// States a run picks up where an earlier process left them, in the order
/// it resumes them: money possibly in flight first. What each resumes to is
/// [`decide::resume_phase`].
pub const RESUMED: &[State] = &[State::Executing, State::Initiating, State::Initiated];

/// States of earlier payouts the repeat guard counts (docs/rerun.md): every
/// state in which money moved, may move or will move when its run is
/// resumed. Failed payouts moved nothing and do not count. Wider than
/// [`MAY_HAVE_PAID`]: a pending payout of an unfinished run is paid when
/// that run resumes.
pub const GUARDED: &[State] = &[
    State::Pending,
    State::Initiating,
    State::Initiated,
    State::Executing,
    State::Processing,
    State::Executed,
    State::Unknown,
];

/// States an operator must look at (`payrun reconcile` lists them): an
/// unknown outcome, and a payout the provider has not finished.
pub const NEEDS_OPERATOR: &[State] = &[State::Unknown, State::Processing];

/// States an operator (`reconcile --mark`), a statement, a status call or a
/// re-sent execute may settle. Never `executing`: a request (the run's, or
/// a re-send) may be on its way, and its answer decides.
pub const SETTLEABLE: &[State] = &[State::Unknown, State::Processing];

/// States whose payouts `payrun reconcile` lists for an operator with what
/// can be done: every state that is not done (open, unknown, set aside).
pub const NOT_DONE: &[State] = &[
    State::Pending,
    State::Initiating,
    State::Initiated,
    State::Executing,
    State::Processing,
    State::Unknown,
    State::SetAside,
];

/// Every transition payrun may write, as (from, to). A pair that is not here
/// is a bug, and the store refuses it. Self-transitions record attempts on an
/// intent that is still open.
pub const TRANSITIONS: &[(State, State)] = &[
    // Claim: the intent to initiate is committed before the request leaves.
    (State::Pending, State::Initiating),
    // A claimed payout that was never sent goes back.
    (State::Initiating, State::Pending),
    (State::Initiating, State::Initiating),
    // Accepted. The intent to execute is a separate commit made right
    // before the execute leaves (never with the initiation).
    (State::Initiating, State::Initiated),
    (State::Initiating, State::InitiateFailed),
    // The attempt budget is spent without a final answer: parked.
    (State::Initiating, State::SetAside),
    // The initiate answer did not belong to the request (echo mismatch):
    // parked for an operator, never executed.
    (State::Initiating, State::Unknown),
    // Execute of an initiated payout: intent first.
    (State::Initiated, State::Executing),
    (State::Executing, State::Executing),
    // Known for sure never carried out (connect refused, 429 to the end).
    (State::Executing, State::Initiated),
    (State::Executing, State::Executed),
    (State::Executing, State::ExecuteFailed),
    (State::Executing, State::Unknown),
    // Accepted, not final: the provider is still working on it.
    (State::Executing, State::Processing),
    // Settled by a status call, a statement, an operator or a re-sent execute.
    (State::Processing, State::Executed),
    (State::Processing, State::ExecuteFailed),
    (State::Processing, State::Unknown),
    // Settled by an operator, a statement or a re-sent execute (which may
    // also find it accepted but not final).
    (State::Unknown, State::Executed),
    (State::Unknown, State::ExecuteFailed),
    (State::Unknown, State::Processing),
    // A re-send's claim (`reconcile --resend`, the run's one re-send): the
    // execute intent committed again, only from the state the re-sender
    // read, before the request leaves. The answer then settles it, or puts
    // it back where it was (`decide::resend_end`); a crash leaves it
    // `executing`, which may have paid.
    (State::Unknown, State::Executing),
    (State::Processing, State::Executing),
    // Ended by an operator before any execute was sent (`payrun cancel`).
    (State::Pending, State::Cancelled),
    (State::Initiated, State::Cancelled),
];

/// Whether payrun may move a payout from `from` to `to`.
pub fn allowed(from: State, to: State) -> bool {
    TRANSITIONS.contains(&(from, to))
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_round_trip() {
        for st in State::ALL {
            assert_eq!(State::parse(st.as_str()), Ok(st));
        }
        assert_eq!(State::parse("bogus"), Err(UnknownState("bogus".into())));
    }

    #[test]
    fn nothing_leaves_a_state_that_may_have_paid_for_one_that_invites_paying_again() {
        for &(from, to) in TRANSITIONS {
            if from.may_have_paid() {
                assert!(
                    to.may_have_paid() || to == State::ExecuteFailed || to == State::Initiated,
                    "{from} -> {to}"
                );
            }
            // Executed is never left.
            assert_ne!(from, State::Executed, "{from} -> {to}");
        }
    }

    /// Every state is exactly one of final or open: none is forgotten
    /// (neither), none both worked on and done.
    #[test]
    fn every_state_is_final_or_open_never_both() {
        for st in State::ALL {
            assert_ne!(st.is_final(), st.is_open(), "{st}");
        }
        for st in IN_FLIGHT {
            assert!(st.is_in_flight() && st.is_open(), "{st}");
        }
        assert!(!State::Pending.is_in_flight());
        assert!(State::Executed.may_have_paid() && !State::Initiated.may_have_paid());
    }

    /// `allowed` refuses what the table does not list: no way out of a
    /// paid payout, none back to an unsent state from one that may have paid.
    #[test]
    fn allowed_refuses_every_pair_not_in_the_table() {
        let mut n = 0;
        for from in State::ALL {
            for to in State::ALL {
                if allowed(from, to) {
                    n += 1;
                    assert!(TRANSITIONS.contains(&(from, to)));
                }
            }
            assert!(!allowed(State::Executed, from), "executed -> {from}");
            assert!(!allowed(State::Unknown, State::Pending));
        }
        assert_eq!(n, TRANSITIONS.len());
    }

    #[test]
    fn display_is_the_stored_name() {
        for st in State::ALL {
            assert_eq!(st.to_string(), st.as_str());
        }
    }

    #[test]
    fn processing_may_have_paid_is_open_not_final_and_listed_for_operators() {
        let p = State::Processing;
        assert!(p.may_have_paid() && p.is_open() && !p.is_final() && !p.is_in_flight());
        assert!(NEEDS_OPERATOR.contains(&p) && SENT_OR_PAID.contains(&p));
        assert!(allowed(State::Executing, p));
        for to in [State::Executed, State::ExecuteFailed, State::Unknown] {
            assert!(allowed(p, to), "{p} -> {to}");
        }
        // Never back to a state that would send it under a new request.
        for to in [State::Pending, State::Initiating, State::Initiated] {
            assert!(!allowed(p, to), "{p} -> {to}");
        }
        // Only a re-send's claim takes it to `executing` (a request of the
        // same id may be on its way), which may have paid just the same.
        assert!(allowed(p, State::Executing) && State::Executing.may_have_paid());
        assert_eq!(State::parse("processing"), Ok(p));
    }

    /// Only `unknown` is left, by a settlement or by a re-send's claim
    /// (`executing`: its execute may be on its way again).
    #[test]
    fn final_states_are_only_left_by_settling_unknown_or_re_sending_it() {
        for &(from, to) in TRANSITIONS {
            if from.is_final() {
                assert_eq!(from, State::Unknown, "{from} -> {to}");
                assert!(matches!(
                    to,
                    State::Executed | State::ExecuteFailed | State::Processing | State::Executing
                ));
            }
        }
    }

    /// A re-send claims only what may be settled, and the claim is an
    /// intent state that may have paid: never settleable itself (a mark, a
    /// statement or a status call waits for the answer), and resumed as an
    /// execute of the same id.
    #[test]
    fn a_re_send_claims_settleable_payouts_into_an_intent_nobody_settles() {
        for &from in SETTLEABLE {
            assert!(allowed(from, State::Executing), "{from}");
            // Its answer may put it back or settle it.
            assert!(allowed(State::Executing, from), "executing -> {from}");
        }
        assert!(!SETTLEABLE.contains(&State::Executing));
        assert!(State::Executing.is_in_flight() && State::Executing.may_have_paid());
        assert!(RESUMED.contains(&State::Executing));
        for &(from, to) in TRANSITIONS {
            if to == State::Executing {
                assert!(
                    matches!(from, State::Initiated | State::Executing)
                        || SETTLEABLE.contains(&from),
                    "{from} -> executing"
                );
            }
        }
    }

    #[test]
    fn only_payouts_never_executed_can_be_cancelled() {
        assert!(State::Cancelled.is_final());
        assert!(!State::Cancelled.may_have_paid());
        for &(from, to) in TRANSITIONS {
            if to == State::Cancelled {
                assert!(CANCELLABLE.contains(&from), "{from} -> {to}");
                assert!(!from.may_have_paid() && !from.is_in_flight(), "{from}");
            }
        }
        for &from in CANCELLABLE {
            assert!(allowed(from, State::Cancelled), "{from}");
        }
    }
}
