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

const REDIRECT: Answer = Answer::ConfigStop(ConfigKind::Redirect);
const CFG_REDIRECT: StopKind = StopKind::Config(ConfigKind::Redirect);

/// (answer, facts, expected to-state, expected stop)
type Row = (Answer, Facts, Option<State>, Option<StopKind>);

#[test]
fn initiation_table() {
    let table: Vec<Row> = vec![
        (Answer::Stopped, certain(), Some(Pending), None),
        (Answer::Stopped, uncertain(), None, None),
        (Answer::Accepted, certain(), Some(Initiated), None),
        (Answer::Accepted, uncertain(), Some(Initiated), None),
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
        // The answer belongs to another request: parked, never executed.
        (Answer::Mismatch, certain(), Some(Unknown), None),
        (Answer::Mismatch, uncertain(), Some(Unknown), None),
        (Answer::NotFinal, certain(), Some(Unknown), None),
        // A configuration stop keeps the intent and stops the run.
        (REDIRECT, certain(), Some(Initiating), Some(CFG_REDIRECT)),
        (REDIRECT, uncertain(), Some(Initiating), Some(CFG_REDIRECT)),
        (
            Answer::ConfigStop(ConfigKind::RetryAfterTooLong),
            certain(),
            Some(Initiating),
            Some(StopKind::Config(ConfigKind::RetryAfterTooLong)),
        ),
    ];
    for (answer, facts, to, stop) in table {
        let d = after_initiate(answer, facts, Policy::default());
        assert_eq!((d.to, d.stop), (to, stop), "{answer:?} {facts:?}");
        assert_eq!(d.then_execute, answer == Answer::Accepted, "{answer:?}");
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
        // Accepted, not final: processing, whatever came before.
        (Answer::NotFinal, certain(), Some(Processing), None),
        (Answer::NotFinal, uncertain(), Some(Processing), None),
        (Answer::Mismatch, certain(), Some(Unknown), None),
        (Answer::Mismatch, uncertain(), Some(Unknown), None),
        // A configuration stop keeps the execute intent, resumable.
        (REDIRECT, certain(), Some(Executing), Some(CFG_REDIRECT)),
        (REDIRECT, uncertain(), Some(Executing), Some(CFG_REDIRECT)),
        (
            Answer::ConfigStop(ConfigKind::NoSuchRoute),
            certain(),
            Some(Executing),
            Some(StopKind::Config(ConfigKind::NoSuchRoute)),
        ),
        (
            Answer::ConfigStop(ConfigKind::Misconfigured),
            certain(),
            Some(Executing),
            Some(StopKind::Config(ConfigKind::Misconfigured)),
        ),
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
    assert_eq!(after_execute(Answer::Stopped, idle).to, None);
    assert!(after_execute(NO_BALANCE, certain()).halt_currency);
    assert!(!after_execute(REFUSED, certain()).halt_currency);
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
        Policy {
            attempts_spent: true,
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
        resume_phase(Executing, false),
        Some(Phase::Execute { resumed: true })
    );
    // The approval gate: --initiate-only never re-sends an open execute.
    assert_eq!(resume_phase(Executing, true), None);
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
        settle_by_operator(Processing, Verdict::Executed),
        Ok((Executed, "OPERATOR_MARKED_EXECUTED"))
    );
    assert_eq!(
        settle_by_operator(Executing, Verdict::Failed),
        Err(NotUnknown(Executing))
    );
    assert_eq!(
        settle_by_resend(Unknown, Answer::Accepted),
        Resent::Settled(Executed)
    );
    assert_eq!(
        settle_by_resend(Unknown, TX_FAILED),
        Resent::Settled(ExecuteFailed)
    );
    assert_eq!(settle_by_resend(Unknown, REFUSED), Resent::StillUnknown);
    assert_eq!(
        settle_by_resend(Unknown, Answer::Ambiguous),
        Resent::StillUnknown
    );
    assert_eq!(
        settle_by_resend(Unknown, Answer::Unauthorized),
        Resent::Unauthorized
    );
    assert_eq!(
        settle_by_resend(Unknown, Answer::NotFinal),
        Resent::Settled(Processing)
    );
    assert_eq!(
        settle_by_resend(Processing, Answer::NotFinal),
        Resent::StillUnknown
    );
    assert_eq!(
        settle_by_resend(Processing, Answer::Accepted),
        Resent::Settled(Executed)
    );
    assert_eq!(
        settle_by_resend(Unknown, Answer::Mismatch),
        Resent::StillUnknown
    );
    assert_eq!(
        settle_by_resend(Unknown, REDIRECT),
        Resent::ConfigStop(ConfigKind::Redirect)
    );
    for from in [Unknown, Processing] {
        for a in Answer::ALL {
            if let Resent::Settled(to) = settle_by_resend(from, a) {
                assert!(allowed(from, to), "{from} -> {to}");
            }
        }
    }
}

#[test]
fn echo_mismatch_is_never_resent() {
    assert_eq!(may_resend(Unknown, "AMBIGUOUS"), Ok(()));
    assert_eq!(may_resend(Processing, "PENDING"), Ok(()));
    assert_eq!(
        may_resend(Unknown, ECHO_MISMATCH),
        Err(NoResend::EchoMismatch)
    );
    assert_eq!(
        may_resend(Unknown, "echo_mismatch"),
        Err(NoResend::EchoMismatch)
    );
    assert_eq!(
        may_resend(Executed, "SUCCESS"),
        Err(NoResend::NotSettleable(Executed))
    );
}

#[test]
fn only_an_ambiguous_execute_of_this_process_is_resent_later_and_never_under_hold() {
    let resend = Policy::default();
    let hold = Policy {
        hold_ambiguous: true,
        ..Policy::default()
    };
    let ambiguous = after_execute(Answer::Ambiguous, uncertain());
    assert!(resend_later(&ambiguous, uncertain(), resend));
    assert!(!resend_later(&ambiguous, uncertain(), hold));
    let resumed = Facts {
        resumed: true,
        ..uncertain()
    };
    assert!(!resend_later(
        &after_execute(Answer::Ambiguous, resumed),
        resumed,
        resend
    ));
    for a in [
        Answer::Accepted,
        TX_FAILED,
        Answer::NotFinal,
        Answer::Mismatch,
        REDIRECT,
        Answer::Stopped,
    ] {
        let d = after_execute(a, uncertain());
        assert!(!resend_later(&d, uncertain(), resend), "{a:?}");
    }
    // An initiation is never re-sent by this path.
    let d = after_initiate(Answer::Mismatch, certain(), resend);
    assert!(!resend_later(&d, certain(), resend));
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
    assert!(run_settled(counts(&[(Executed, 3), (Unknown, 1)])));
    assert!(!run_settled(counts(&[(Executed, 3), (Initiated, 1)])));
}

// ---------------------------------------------------------------------------
// Property: random answers and crashes never lead to paying twice.

/// The provider, seen from outside: whether it has paid the payout.
#[derive(Debug, Default)]
struct World {
    paid: bool,
    /// An initiate answer belonged to another request.
    mismatched: bool,
}

/// One step of the simulation: what the provider does with one call, and
/// whether the process dies before committing the answer.
#[derive(Debug, Clone, Copy)]
struct Step {
    answer: Answer,
    /// For an ambiguous answer: whether the provider carried it out.
    landed: bool,
    /// The process dies after sending, before the answer is committed.
    crash: bool,
    policy_initiate_only: bool,
    hold: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (
        0..Answer::ALL.len(),
        any::<bool>(),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(i, landed, crash, policy_initiate_only, hold)| Step {
            answer: Answer::ALL[i],
            landed,
            crash,
            policy_initiate_only,
            hold,
        })
}

/// States that would lead the engine (or an operator) to pay again.
fn invites_paying_again(s: State) -> bool {
    matches!(
        s,
        Pending | Initiating | Initiated | InitiateFailed | ExecuteFailed
    )
}

/// Carries out one call on `state` as the engine does; returns the new
/// state (unchanged on a crash).
fn simulate(state: State, s: Step, world: &mut World) -> State {
    let policy = Policy {
        initiate_only: s.policy_initiate_only,
        currency_halted: false,
        hold_ambiguous: s.hold,
        attempts_spent: false,
    };
    let Some(phase) = resume_phase(state, policy.initiate_only) else {
        return state;
    };
    // A consistent provider: once it paid, it never refuses the payout.
    let answer = match s.answer {
        Answer::Refused { .. } if world.paid => Answer::Accepted,
        a => a,
    };
    let (from, d) = match phase {
        Phase::Initiate { resumed } => {
            if s.crash {
                return state;
            }
            world.mismatched |= answer == Answer::Mismatch;
            let facts = Facts {
                resumed,
                maybe_landed: answer == Answer::Ambiguous,
                sent: 1,
            };
            (Initiating, after_initiate(answer, facts, policy))
        }
        Phase::Execute { resumed } => {
            // A payout whose initiate answer was about another request is
            // never executed.
            assert!(!world.mismatched, "executing after an echo mismatch");
            let mut from = state;
            match execute_start(state, resumed, policy) {
                ExecuteStart::Skip => return state,
                ExecuteStart::Hold(d) => return apply(from, d, world),
                ExecuteStart::Intent => from = Executing,
                ExecuteStart::Send => {}
            }
            let carried = match answer {
                Answer::Accepted => true,
                // Accepted, not final: it may still be paid.
                Answer::Ambiguous | Answer::NotFinal | Answer::Mismatch => s.landed,
                _ => false,
            };
            world.paid |= carried || (s.crash && s.landed);
            if s.crash {
                return from;
            }
            let facts = Facts {
                resumed,
                maybe_landed: matches!(
                    answer,
                    Answer::Ambiguous | Answer::NotFinal | Answer::Mismatch
                ),
                sent: u32::from(answer != Answer::Stopped),
            };
            (from, after_execute(answer, facts))
        }
    };
    // An accepted initiation goes straight on to execute in the engine; the
    // simulation picks it up on the next step instead (same decisions).
    apply(from, d, world)
}

fn apply(from: State, d: Decision, world: &World) -> State {
    assert_eq!(d.from, from);
    let Some(to) = d.to else { return from };
    assert!(allowed(from, to), "{from} -> {to}");
    if world.paid {
        assert!(
            !invites_paying_again(to),
            "paid, yet {from} -> {to} ({d:?})"
        );
    }
    if from.may_have_paid() && invites_paying_again(to) {
        // Only allowed when no execute may have been carried out.
        assert!(!world.paid, "{from} -> {to}");
    }
    to
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn random_answers_and_crashes_never_pay_twice(steps in prop::collection::vec(step(), 1..40)) {
        let mut world = World::default();
        let mut state = Pending;
        for s in steps {
            if state == Pending {
                // A claim.
                assert!(allowed(Pending, Initiating));
                state = Initiating;
            }
            state = simulate(state, s, &mut world);
            if state.is_final() {
                break;
            }
        }
        // Ends final, or open: open payouts are listed by `status` and
        // picked up by the next run.
        prop_assert!(state.is_final() || state.is_open(), "{state}");
        if state == Executed {
            prop_assert!(world.paid);
        }
        if world.paid {
            prop_assert!(state.may_have_paid(), "paid but {state}");
        }

    }
}

#[test]
fn a_spent_attempt_budget_sets_an_unanswered_initiation_aside_and_the_run_goes_on() {
    let spent = Policy {
        attempts_spent: true,
        ..Policy::default()
    };
    let d = after_initiate(Answer::Ambiguous, uncertain(), spent);
    assert_eq!(
        (d.to, d.stop, d.note),
        (Some(SetAside), None, Note::SetAside)
    );
    // A provider that is down or throttling still stops the run.
    for a in [Answer::NotSent, Answer::RateLimited] {
        assert_eq!(after_initiate(a, certain(), spent).stop, Some(Unreachable));
    }
    // Within budget: the run stops with the payout resumable, as before.
    let d = after_initiate(Answer::Ambiguous, uncertain(), Policy::default());
    assert_eq!((d.to, d.stop), (Some(Initiating), Some(Unreachable)));
    assert!(!run_complete(|s| u64::from(s == SetAside), true));
    assert!(!run_complete(|s| u64::from(s == Executing), true));
}
