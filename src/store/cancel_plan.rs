//! What an operator's cancel (`payrun cancel`) changes, decided the same
//! way by both backends from the payouts they read: every payout whose
//! execute was never sent ([`CANCELLABLE`]) becomes `cancelled` through a
//! checked transition, with a code and a message saying what happened to
//! it; one never sent at all (`pending`) also gives its transaction id back
//! (renamed with [`RELEASED_ID_MARK`]); open payouts that may be at the
//! provider are left alone and counted. Also whether a run ever sent
//! anything, which decides if it may be pointed at another provider.

use super::types::{CancelOutcome, Transition};
use crate::machine::{CANCELLABLE, OPEN, State};
use std::collections::BTreeMap;

/// The transitions and renames of one cancel, and what the caller reports.
#[derive(Debug, Default)]
pub(crate) struct CancelPlan {
    pub transitions: Vec<Transition>,
    /// Payouts whose transaction id is freed (they were never sent).
    pub released: Vec<i64>,
    pub outcome: CancelOutcome,
}

/// The provider code a cancelled payout carries.
pub(crate) const CANCEL_CODE: &str = "CANCELLED";

/// The message a payout cancelled from `state` carries; `None` when a
/// payout in `state` is not cancelled.
pub(crate) fn cancel_message(state: State) -> Option<&'static str> {
    match state {
        _ if !CANCELLABLE.contains(&state) => None,
        State::Pending => {
            Some("cancelled by the operator; never sent, its transaction id is free again")
        }
        _ => Some("cancelled by the operator after initiation; never executed, no money moved"),
    }
}

/// Counts `n` payouts found in `state` into what the cancel reports.
pub(crate) fn tally(outcome: &mut CancelOutcome, state: State, n: u64) {
    if CANCELLABLE.contains(&state) {
        if state == State::Pending {
            outcome.never_sent += n;
        } else {
            outcome.initiated += n;
        }
    } else if OPEN.contains(&state) {
        *outcome.left_open.entry(state).or_default() += n;
    }
}

impl CancelPlan {
    /// Plans the fate of payout `id`, now in `state` (called in id order).
    pub(crate) fn add(&mut self, id: i64, state: State) {
        tally(&mut self.outcome, state, 1);
        if let Some(message) = cancel_message(state) {
            let mut t = Transition::new(id, state, State::Cancelled);
            t.code = Some(CANCEL_CODE.into());
            t.message = Some(message.into());
            self.transitions.push(t);
            if state == State::Pending {
                self.released.push(id);
            }
        }
    }

    /// Nothing is left open: the run is finished.
    pub(crate) fn finishes_the_run(&self) -> bool {
        self.outcome.left_open.is_empty()
    }
}

/// Whether any payout of a run was ever sent, from its counts per state
/// and the number of `cancelled` payouts that kept their transaction id
/// (cancelled after initiation, so sent).
pub(crate) fn ever_sent(counts: &BTreeMap<State, u64>, cancelled_after_sending: u64) -> bool {
    cancelled_after_sending > 0
        || counts
            .iter()
            .any(|(s, n)| *n > 0 && *s != State::Pending && *s != State::Cancelled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_each_state_by_the_named_sets() {
        let mut plan = CancelPlan::default();
        plan.add(1, State::Pending);
        plan.add(2, State::Initiated);
        plan.add(3, State::Executing);
        plan.add(4, State::Executed);
        assert_eq!(plan.released, vec![1]);
        let moved: Vec<_> = plan.transitions.iter().map(|t| (t.id, t.from)).collect();
        assert_eq!(moved, vec![(1, State::Pending), (2, State::Initiated)]);
        assert_eq!((plan.outcome.never_sent, plan.outcome.initiated), (1, 1));
        assert_eq!(plan.outcome.left_open[&State::Executing], 1);
        assert!(!plan.finishes_the_run());
    }

    #[test]
    fn a_run_was_sent_once_anything_left_pending() {
        let mut counts = BTreeMap::from([(State::Pending, 3), (State::Cancelled, 1)]);
        assert!(!ever_sent(&counts, 0));
        assert!(ever_sent(&counts, 1));
        counts.insert(State::Initiating, 1);
        assert!(ever_sent(&counts, 0));
    }
}
