//! Transitions written as fewer row updates: consecutive transitions of one
//! payout that follow on from each other (the second leaves the state the
//! first enters, as `initiating → initiated → executing` when the execute
//! intent is committed with the initiation) become one [`Step`], written
//! by one `UPDATE` from the first state to the last. Both backends write
//! steps, not transitions.
//!
//! Nothing is checked less: every transition of a step is one the state
//! machine allows ([`machine::allowed`]; a transition it refuses is never
//! folded into a step, so it is refused in its turn as before), and the
//! `UPDATE` matches only when the payout is in the first state, which is
//! exactly when the transitions one by one would all have matched (each
//! later one starts where the one before left the payout). What the row
//! holds afterwards is what the transitions one by one would leave: the
//! last state, the last code and message given, the attempts summed, the
//! stamps of any of them.

use super::errors::WriteError;
use super::types::Transition;
use crate::machine::{self, State};

/// One row update: transitions of one payout applied in one `UPDATE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step<'a> {
    pub id: i64,
    /// The state the payout must be in (the first transition's).
    pub from: State,
    /// The state it is left in (the last transition's).
    pub to: State,
    /// The first transition's target: a conflict names the first
    /// transition, the one whose check failed.
    pub first_to: State,
    /// The last code and message given; `None` keeps the recorded ones.
    pub code: Option<&'a str>,
    pub message: Option<&'a str>,
    pub attempts: i64,
    pub stamp_initiated: bool,
    pub stamp_executed: bool,
}

impl Step<'_> {
    /// The error when the payout is not in `from`.
    pub fn conflict(&self) -> WriteError {
        WriteError::Conflict {
            id: self.id,
            from: self.from,
            to: self.first_to,
        }
    }
}

/// The steps of `ts`, in order. A transition the state machine refuses
/// comes out as its `NotAllowed` error at its place in the sequence, after
/// the steps before it, so a caller writing each step as it comes reports
/// what writing the transitions one by one would have reported first.
pub(crate) fn steps(ts: &[Transition]) -> impl Iterator<Item = Result<Step<'_>, WriteError>> {
    let mut rest = ts;
    std::iter::from_fn(move || {
        let (first, more) = rest.split_first()?;
        if !machine::allowed(first.from, first.to) {
            rest = more;
            return Some(Err(WriteError::NotAllowed {
                id: Some(first.id),
                from: first.from,
                to: first.to,
            }));
        }
        let mut step = Step {
            id: first.id,
            from: first.from,
            to: first.to,
            first_to: first.to,
            code: first.code.as_deref(),
            message: first.message.as_deref(),
            attempts: i64::from(first.attempts),
            stamp_initiated: first.stamp_initiated,
            stamp_executed: first.stamp_executed,
        };
        let mut taken = 1;
        for t in more {
            let follows = t.id == step.id && t.from == step.to;
            if !follows || !machine::allowed(t.from, t.to) {
                break;
            }
            step.to = t.to;
            step.code = t.code.as_deref().or(step.code);
            step.message = t.message.as_deref().or(step.message);
            step.attempts += i64::from(t.attempts);
            step.stamp_initiated |= t.stamp_initiated;
            step.stamp_executed |= t.stamp_executed;
            taken += 1;
        }
        rest = &rest[taken..];
        Some(Ok(step))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use State::*;

    fn t(id: i64, from: State, to: State) -> Transition {
        Transition::new(id, from, to)
    }

    fn all(ts: &[Transition]) -> Vec<Result<Step<'_>, WriteError>> {
        steps(ts).collect()
    }

    #[test]
    fn the_initiation_and_its_execute_intent_are_one_step() {
        let mut a = t(7, Initiating, Initiated);
        a.code = Some("INITIATED".into());
        a.message = Some("payout initiated".into());
        a.attempts = 2;
        a.stamp_initiated = true;
        let b = t(7, Initiated, Executing);
        let ts = [a, b];
        assert_eq!(
            all(&ts),
            [Ok(Step {
                id: 7,
                from: Initiating,
                to: Executing,
                first_to: Initiated,
                code: Some("INITIATED"),
                message: Some("payout initiated"),
                attempts: 2,
                stamp_initiated: true,
                stamp_executed: false,
            })]
        );
    }

    #[test]
    fn later_codes_messages_and_stamps_win_and_attempts_add_up() {
        let mut a = t(1, Initiating, Initiated);
        a.code = Some("A".into());
        a.message = Some("first".into());
        a.attempts = u32::MAX;
        let mut b = t(1, Initiated, Executing);
        b.code = Some("B".into());
        b.attempts = 3;
        b.stamp_executed = true;
        let ts = [a, b];
        let step = all(&ts).remove(0).unwrap();
        assert_eq!(step.code, Some("B"));
        assert_eq!(step.message, Some("first"), "no message given: kept");
        assert_eq!(step.attempts, i64::from(u32::MAX) + 3);
        assert!(step.stamp_executed && !step.stamp_initiated);
    }

    #[test]
    fn transitions_that_do_not_follow_on_stay_apart() {
        // Another payout; the same payout not where the last one left it.
        let ts = [
            t(1, Initiating, Initiated),
            t(2, Initiated, Executing),
            t(2, Initiating, Initiated),
        ];
        let got: Vec<_> = all(&ts)
            .into_iter()
            .map(|s| s.map(|s| (s.id, s.from, s.to)))
            .collect();
        assert_eq!(
            got,
            [
                Ok((1, Initiating, Initiated)),
                Ok((2, Initiated, Executing)),
                Ok((2, Initiating, Initiated)),
            ]
        );
        assert!(all(&[]).is_empty());
    }

    #[test]
    fn a_refused_transition_is_refused_in_its_turn_and_never_folded() {
        assert!(!machine::allowed(Executed, Pending));
        assert!(!machine::allowed(Pending, Executed));
        let ts = [
            t(1, Initiating, Initiated),
            t(1, Initiated, Executed),
            t(1, Executed, Pending),
            t(2, Initiating, Initiated),
        ];
        if machine::allowed(Initiated, Executed) {
            unreachable!("the test needs a transition the machine refuses");
        }
        let got = all(&ts);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(
            got[0].as_ref().map(|s| (s.from, s.to)),
            Ok((Initiating, Initiated))
        );
        assert_eq!(
            got[1],
            Err(WriteError::NotAllowed {
                id: Some(1),
                from: Initiated,
                to: Executed
            })
        );
        assert!(matches!(got[2], Err(WriteError::NotAllowed { .. })));
        assert!(got[3].is_ok());
        // A refused first transition is refused alone.
        let ts = [t(3, Pending, Executed), t(3, Executed, Pending)];
        assert_eq!(all(&ts).len(), 2);
    }

    #[test]
    fn a_conflict_names_the_first_transition() {
        let ts = [t(4, Initiating, Initiated), t(4, Initiated, Executing)];
        let step = all(&ts).remove(0).unwrap();
        assert_eq!(
            step.conflict(),
            WriteError::Conflict {
                id: 4,
                from: Initiating,
                to: Initiated
            }
        );
    }
}
