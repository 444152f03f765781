//! The decision table, pair by pair, and a property test over random
//! sequences of answers and crashes.

use super::*;
use crate::machine::allowed;
use proptest::prelude::*;

const REFUSED: Answer = Answer::Refused {
    transaction_failed: false,
    insufficient_balance: false,
};
const TX_FAILED: Answer = Answer::Refused {
    transaction_failed: true,
    insufficient_balance: false,
};
const NO_BALANCE: Answer = Answer::Refused {
    transaction_failed: false,
    insufficient_balance: true,
};

fn certain() -> Facts {
    Facts {
        resumed: false,
        maybe_landed: false,
        sent: 1,
    }
}

fn uncertain() -> Facts {
    Facts {
        resumed: false,
        maybe_landed: true,
        sent: 2,
    }
}

use State::*;
use StopKind::{Unauthorized as Unauth, Unreachable};

/// (answer, facts, expected to-state, expected stop)
type Row = (Answer, Facts, Option<State>, Option<StopKind>);

#[test]
fn initiation_table() {
    let table: Vec<Row> = vec![
        (Answer::Stopped, certain(), Some(Pending), None),
        (Answer::Stopped, uncertain(), None, None),
        (Answer::Accepted, certain(), Some(Executing), None),
        (Answer::Accepted, uncertain(), Some(Executing), None),
        (REFUSED, certain(), Some(InitiateFailed), None),
        (TX_FAILED, uncertain(), Some(InitiateFailed), None),
        (NO_BALANCE, certain(), Some(InitiateFailed), None),
        (Answer::Unauthorized, certain(), Some(Pending), Some(Unauth)),
        (
            Answer::Unauthorized,
            uncertain(),
            Some(Initiating),
            Some(Unauth),
        ),
        (
            Answer::RateLimited,
            certain(),
            Some(Pending),
            Some(Unreachable),
        ),
        (Answer::NotSent, certain(), Some(Pending), Some(Unreachable)),
        (
            Answer::NotSent,
            uncertain(),
            Some(Initiating),
            Some(Unreachable),
        ),
        (
            Answer::Ambiguous,
            uncertain(),
            Some(Initiating),
            Some(Unreachable),
        ),
    ];
    for (answer, facts, to, stop) in table {
        let d = after_initiate(answer, facts, Policy::default());
        assert_eq!((d.to, d.stop), (to, stop), "{answer:?} {facts:?}");
        assert_eq!(d.then_execute, to == Some(Executing), "{answer:?}");
    }
}

#[test]
fn accepted_initiation_waits_when_initiate_only_or_halted() {
    let only = Policy {
        initiate_only: true,
        ..Policy::default()
    };
    let d = after_initiate(Answer::Accepted, certain(), only);
    assert_eq!(
        (d.to, d.note, d.then_execute),
        (Some(Initiated), Note::Answer, false)
    );
    let halted = Policy {
        currency_halted: true,
        ..Policy::default()
    };
    let d = after_initiate(Answer::Accepted, certain(), halted);
    assert_eq!((d.to, d.note), (Some(Initiated), Note::WalletRanOut));
}

#[test]
fn execution_table() {
    let table: Vec<Row> = vec![
        (Answer::Stopped, certain(), Some(Initiated), None),
        (Answer::Stopped, uncertain(), Some(Executing), None),
        (Answer::Accepted, certain(), Some(Executed), None),
        (Answer::Accepted, uncertain(), Some(Executed), None),
        (REFUSED, certain(), Some(ExecuteFailed), None),
        (REFUSED, uncertain(), Some(Unknown), None),
        (TX_FAILED, uncertain(), Some(ExecuteFailed), None),
        (NO_BALANCE, certain(), Some(ExecuteFailed), None),
        (NO_BALANCE, uncertain(), Some(Unknown), None),
        (
            Answer::Unauthorized,
            certain(),
            Some(Initiated),
            Some(Unauth),
        ),
        (
            Answer::Unauthorized,
            uncertain(),
            Some(Executing),
            Some(Unauth),
        ),
        (
            Answer::RateLimited,
            certain(),
            Some(Initiated),
            Some(Unreachable),
        ),
        (Answer::RateLimited, uncertain(), Some(Unknown), None),
        (
            Answer::NotSent,
            certain(),
            Some(Initiated),
            Some(Unreachable),
        ),
        (Answer::NotSent, uncertain(), Some(Unknown), None),
        (Answer::Ambiguous, uncertain(), Some(Unknown), None),
    ];
    for (answer, facts, to, stop) in table {
        let d = after_execute(answer, facts);
        assert_eq!((d.to, d.stop), (to, stop), "{answer:?} {facts:?}");
    }
    // A resumed execution is uncertain even if this call's attempt was not.
    let resumed = Facts {
        resumed: true,
        ..certain()
    };
    assert_eq!(after_execute(REFUSED, resumed).to, Some(Unknown));
    // Nothing sent and nothing known: nothing to write.
    let idle = Facts {
        resumed: true,
        maybe_landed: false,
        sent: 0,
    };
    // "Nothing" is the whole decision: no write, no attempts, no count.
    assert_eq!(
        after_execute(Answer::Stopped, idle),
        Decision {
            from: Executing,
            to: None,
            note: Note::Keep,
            attempts: false,
            stamp_initiated: false,
            stamp_executed: false,
            count: None,
            stop: None,
            halt_currency: false,
            then_execute: false,
        }
    );
    assert!(after_execute(NO_BALANCE, certain()).halt_currency);
    assert!(!after_execute(REFUSED, certain()).halt_currency);
}

fn halted_hold() -> Policy {
    Policy {
        currency_halted: true,
        hold_ambiguous: true,
        initiate_only: false,
    }
}

/// Besides the state, a decision says what to record and count: the
/// report's stamps, codes and the progress counters come from here.
#[test]
fn decisions_record_what_happened() {
    let p = Policy::default();
    let d = after_initiate(Answer::Accepted, certain(), p);
    assert_eq!(
        (d.note, d.stamp_initiated, d.count, d.attempts),
        (Note::Answer, true, Some(Count::Initiated), true)
    );
    assert!(!d.stamp_executed);
    let d = after_initiate(REFUSED, certain(), p);
    assert_eq!((d.note, d.count), (Note::Failure, Some(Count::Failed)));
    let d = after_initiate(Answer::NotSent, certain(), p);
    assert_eq!((d.note, d.count, d.attempts), (Note::Keep, None, true));
    let d = after_execute(Answer::Accepted, certain());
    assert_eq!(
        (d.note, d.stamp_executed, d.count, d.attempts),
        (Note::Answer, true, Some(Count::Executed), true)
    );
    assert!(!d.stamp_initiated && !d.then_execute);
    let d = after_execute(REFUSED, certain());
    assert_eq!((d.note, d.count), (Note::Answer, Some(Count::Failed)));
    let d = after_execute(Answer::Ambiguous, uncertain());
    assert_eq!(
        (d.note, d.count),
        (Note::OutcomeUnknown, Some(Count::Unknown))
    );
    let hold = Policy {
        hold_ambiguous: true,
        ..p
    };
    let ExecuteStart::Hold(d) = execute_start(Executing, true, hold) else {
        panic!("a resumed execution under hold is held");
    };
    assert_eq!(
        (d.from, d.to, d.note, d.count),
        (Executing, Some(Unknown), Note::Held, Some(Count::Unknown))
    );
    assert_eq!(execute_start(Executing, true, p), ExecuteStart::Send);
    // An intent already committed is sent, never committed again.
    assert_eq!(execute_start(Executing, false, p), ExecuteStart::Send);
    assert_eq!(
        execute_start(Executing, false, halted_hold()),
        ExecuteStart::Send
    );
    assert_eq!(execute_start(Initiated, false, hold), ExecuteStart::Intent);
    let halted = Policy {
        currency_halted: true,
        ..p
    };
    assert_eq!(execute_start(Initiated, false, halted), ExecuteStart::Skip);
}

/// Every (state, answer) pair: a decision only ever writes an allowed
/// transition, from the state the payout is in.
#[test]
fn every_state_and_answer_gives_an_allowed_transition() {
    let policies = [
        Policy::default(),
        Policy {
            initiate_only: true,
            ..Policy::default()
        },
        Policy {
            currency_halted: true,
            hold_ambiguous: true,
            ..Policy::default()
        },
    ];
    let facts = [certain(), uncertain(), Facts::default()];
    for state in State::ALL {
        for answer in Answer::ALL {
            for policy in policies {
                for f in facts {
                    let Some(phase) = resume_phase(state, policy.initiate_only) else {
                        continue;
                    };
                    let d = match phase {
                        Phase::Initiate { .. } => after_initiate(answer, f, policy),
                        Phase::Execute { resumed } => match execute_start(state, resumed, policy) {
                            ExecuteStart::Hold(d) => d,
                            ExecuteStart::Skip => continue,
                            ExecuteStart::Intent => {
                                assert!(allowed(state, Executing));
                                after_execute(answer, f)
                            }
                            ExecuteStart::Send => {
                                assert_eq!(state, Executing);
                                after_execute(answer, f)
                            }
                        },
                    };
                    if let Some(to) = d.to {
                        assert!(
                            allowed(d.from, to),
                            "{state}/{answer:?}: {} -> {to}",
                            d.from
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn resume_and_claims() {
    assert_eq!(
        resume_phase(Initiating, false),
        Some(Phase::Initiate { resumed: true })
    );
    assert_eq!(
        resume_phase(Executing, true),
        Some(Phase::Execute { resumed: true })
    );
    assert_eq!(
        resume_phase(Initiated, false),
        Some(Phase::Execute { resumed: false })
    );
    assert_eq!(resume_phase(Initiated, true), None);
    for s in crate::machine::FINAL {
        assert_eq!(resume_phase(*s, false), None);
    }
    assert_eq!(
        unsent_claim(Phase::Initiate { resumed: false }),
        Some((Initiating, Pending))
    );
    assert_eq!(unsent_claim(Phase::Initiate { resumed: true }), None);
    assert_eq!(unsent_claim(Phase::Execute { resumed: false }), None);
}

#[test]
fn operator_and_resend_settle_only_unknown() {
    assert_eq!(
        settle_by_operator(Unknown, Verdict::Executed),
        Ok((Executed, "OPERATOR_MARKED_EXECUTED"))
    );
    assert_eq!(
        settle_by_operator(Unknown, Verdict::Failed),
        Ok((ExecuteFailed, "OPERATOR_MARKED_FAILED"))
    );
    assert_eq!(
        settle_by_operator(Executed, Verdict::Failed),
        Err(NotUnknown(Executed))
    );
    assert_eq!(
        settle_by_resend(Answer::Accepted),
        Resent::Settled(Executed)
    );
    assert_eq!(settle_by_resend(TX_FAILED), Resent::Settled(ExecuteFailed));
    assert_eq!(settle_by_resend(REFUSED), Resent::StillUnknown);
    assert_eq!(settle_by_resend(Answer::Ambiguous), Resent::StillUnknown);
    assert_eq!(settle_by_resend(Answer::Unauthorized), Resent::Unauthorized);
    for a in Answer::ALL {
        if let Resent::Settled(to) = settle_by_resend(a) {
            assert!(allowed(Unknown, to));
        }
    }
}

#[test]
fn run_completion() {
    let counts = |pairs: &'static [(State, u64)]| {
        move |s: State| pairs.iter().find(|p| p.0 == s).map_or(0, |p| p.1)
    };
    assert!(run_complete(counts(&[(Executed, 3)]), false));
    assert!(!run_complete(counts(&[(Executed, 3), (Unknown, 1)]), false));
    assert!(run_complete(
        counts(&[(Initiated, 3), (ExecuteFailed, 1)]),
        true
    ));
    assert!(!run_complete(counts(&[(Initiated, 3), (Pending, 1)]), true));
    // Under --initiate-only, any refused, unknown or unsent payout, alone
    // or together, leaves the run incomplete.
    for open in [
        &[(Initiated, 3), (InitiateFailed, 1)][..],
        &[(InitiateFailed, 1), (Unknown, 1)],
        &[(Unknown, 1), (Pending, 1)],
        &[(InitiateFailed, 2), (Pending, 1)],
    ] {
        let c = |s: State| open.iter().find(|p| p.0 == s).map_or(0, |p| p.1);
        assert!(!run_complete(c, true), "{open:?}");
    }
    assert!(run_settled(counts(&[(Executed, 3), (Unknown, 1)])));
    assert!(!run_settled(counts(&[(Executed, 3), (Initiated, 1)])));
}

// ---------------------------------------------------------------------------
// Property: random answers and crashes never lead to paying twice.
//
// One payout is driven through the decisions as the engine drives it: a
// claim, an initiation, the intent to execute, the execute, each call's
// answer drawn at random, and the process dying at random points (before a
// request leaves, or after it left and before its answer is committed).
// Each step is one process's go at the payout; a crash ends that process,
// and the next step is the next run resuming it.

/// The provider, seen from outside.
#[derive(Debug, Default)]
struct World {
    /// It has paid the payout.
    paid: bool,
    /// Execute requests that reached it.
    executes: u32,
    /// Some execute may have been carried out without payrun knowing.
    maybe_landed: bool,
}

/// Where the process dies during a step's call, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crash {
    No,
    /// After the intent is committed, before the request leaves.
    BeforeSend,
    /// After the request left, before its answer is committed.
    AfterSend,
}

/// One step of the simulation: what the provider does with one call, and
/// whether the process dies.
#[derive(Debug, Clone, Copy)]
struct Step {
    answer: Answer,
    /// For an ambiguous answer or a crash after sending: whether the
    /// provider carried the call out.
    landed: bool,
    crash: Crash,
    initiate_only: bool,
    currency_halted: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (
        0..Answer::ALL.len(),
        any::<bool>(),
        prop_oneof![
            8 => Just(Crash::No),
            1 => Just(Crash::BeforeSend),
            1 => Just(Crash::AfterSend),
        ],
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(i, landed, crash, initiate_only, currency_halted)| Step {
            answer: Answer::ALL[i],
            landed,
            crash,
            initiate_only,
            currency_halted,
        })
}

/// A healthy provider and no crash: what the next, uneventful run sees.
const CALM: Step = Step {
    answer: Answer::Accepted,
    landed: true,
    crash: Crash::No,
    initiate_only: false,
    currency_halted: false,
};

/// States that would lead the engine (or an operator) to pay again.
fn invites_paying_again(s: State) -> bool {
    matches!(
        s,
        Pending | Initiating | Initiated | InitiateFailed | ExecuteFailed
    )
}

/// The simulated payout: its state, and whether the process that holds it
/// is about to send its execute (an accepted initiation goes straight on,
/// without the resume logic).
#[derive(Debug, Clone, Copy)]
struct Payout {
    state: State,
    fresh_execute: bool,
}

/// One process's go at the payout, as the engine carries it out.
fn simulate(p: Payout, s: Step, hold: bool, world: &mut World) -> Payout {
    let policy = Policy {
        initiate_only: s.initiate_only,
        currency_halted: s.currency_halted,
        hold_ambiguous: hold,
    };
    let stay = |state| Payout {
        state,
        fresh_execute: false,
    };
    let mut state = p.state;
    if state == Pending {
        // A claim: the intent to initiate, committed before the request.
        assert!(allowed(Pending, Initiating));
        state = Initiating;
        return initiate(state, false, s, policy, world);
    }
    // A consistent provider: once it paid, it never refuses the payout.
    let answer = match s.answer {
        Answer::Refused { .. } if world.paid => Answer::Accepted,
        a => a,
    };
    let resumed = if p.fresh_execute {
        assert_eq!(state, Executing);
        false
    } else {
        match resume_phase(state, policy.initiate_only) {
            None => return stay(state),
            Some(Phase::Initiate { resumed }) => {
                return initiate(state, resumed, s, policy, world);
            }
            Some(Phase::Execute { resumed }) => {
                match execute_start(state, resumed, policy) {
                    ExecuteStart::Skip => return stay(state),
                    ExecuteStart::Hold(d) => return stay(apply(state, d, world)),
                    ExecuteStart::Intent => {
                        assert!(allowed(state, Executing));
                        state = Executing;
                    }
                    ExecuteStart::Send => assert_eq!(state, Executing),
                }
                resumed
            }
        }
    };
    if s.crash == Crash::BeforeSend {
        return stay(state);
    }
    let sends = !matches!(answer, Answer::Stopped | Answer::NotSent);
    if sends {
        // Under hold, an execute that may have been carried out is never
        // followed by another: a provider that pays twice would pay twice.
        assert!(
            !(hold && world.maybe_landed),
            "hold sent an execute again after {world:?}"
        );
        world.executes += 1;
    }
    let carried = match (s.crash, answer) {
        (Crash::AfterSend, _) => sends && s.landed,
        (_, Answer::Accepted) => true,
        (_, Answer::Ambiguous) => s.landed,
        _ => false,
    };
    world.paid |= carried;
    world.maybe_landed |= sends && (s.crash == Crash::AfterSend || answer == Answer::Ambiguous);
    if s.crash == Crash::AfterSend {
        return stay(state);
    }
    let facts = Facts {
        resumed,
        maybe_landed: answer == Answer::Ambiguous,
        sent: u32::from(sends),
    };
    stay(apply(Executing, after_execute(answer, facts), world))
}

/// An initiation of a payout in `initiating`: moves no money.
fn initiate(state: State, resumed: bool, s: Step, policy: Policy, world: &World) -> Payout {
    assert_eq!(state, Initiating);
    if s.crash != Crash::No {
        return Payout {
            state,
            fresh_execute: false,
        };
    }
    let facts = Facts {
        resumed,
        maybe_landed: s.answer == Answer::Ambiguous,
        sent: u32::from(s.answer != Answer::Stopped),
    };
    let d = after_initiate(s.answer, facts, policy);
    let state = apply(Initiating, d, world);
    assert_eq!(d.then_execute, state == Executing && d.to.is_some());
    Payout {
        state,
        fresh_execute: d.then_execute,
    }
}

fn apply(from: State, d: Decision, world: &World) -> State {
    assert_eq!(d.from, from);
    assert!(
        !from.is_final() || from == Unknown,
        "the engine left {from}"
    );
    let Some(to) = d.to else { return from };
    assert!(allowed(from, to), "{from} -> {to}");
    if world.paid {
        assert!(
            !invites_paying_again(to),
            "paid, yet {from} -> {to} ({d:?})"
        );
    }
    if from.may_have_paid() && invites_paying_again(to) {
        // Only when nothing was paid (failed: on the provider's word).
        assert!(!world.paid, "{from} -> {to} after {world:?}");
    }
    if (from, to) == (Executing, Initiated) {
        // Back to "send the execute": only if none may have landed.
        assert!(!world.maybe_landed, "{from} -> {to} after {world:?}");
    }
    to
}

/// The next run looks at it: final, or picked up (pending payouts are
/// claimed; the others resume). Nothing open is left unlisted.
fn listed(state: State) -> bool {
    state.is_final() || state == Pending || resume_phase(state, false).is_some()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn random_answers_and_crashes_never_pay_twice(
        steps in prop::collection::vec(step(), 1..40),
        hold in any::<bool>(),
    ) {
        let mut world = World::default();
        let mut p = Payout { state: Pending, fresh_execute: false };
        for s in steps {
            p = simulate(p, s, hold, &mut world);
            prop_assert!(listed(p.state), "{p:?} is open and listed nowhere");
            if p.state.is_final() {
                break;
            }
        }
        if world.paid {
            prop_assert!(p.state.may_have_paid(), "paid but {:?}", p.state);
        }
        // Then calm runs: every payout ends final, within a few runs, and
        // is executed only if it was paid.
        for _ in 0..4 {
            if p.state.is_final() {
                break;
            }
            p = simulate(p, CALM, hold, &mut world);
        }
        prop_assert!(p.state.is_final(), "{p:?} never settles");
        if p.state == Executed {
            prop_assert!(world.paid);
        }
        if world.paid {
            prop_assert!(p.state.may_have_paid(), "paid but {:?}", p.state);
        }
    }
}
