//! What each decision records besides the state it writes: the code and
//! message the report shows (`note`), the initiated and executed stamps,
//! whether the call's requests add to the payout's attempts, and the
//! progress counter it moves. The states are in `tests.rs`.

use super::tests::{REDIRECT, REFUSED, certain, uncertain};
use super::*;

/// (note, counter, stamp initiated, stamp executed, add the attempts)
type Record = (Note, Option<Count>, bool, bool, bool);

fn record(d: &Decision) -> Record {
    (
        d.note,
        d.count,
        d.stamp_initiated,
        d.stamp_executed,
        d.attempts,
    )
}

/// A call that wrote a state records its requests as attempts, and keeps
/// the recorded code unless the answer says something about the payout.
const KEPT: Record = (Note::Keep, None, false, false, true);
/// A decision that writes nothing records nothing.
const NOTHING: Record = (Note::Keep, None, false, false, false);

#[test]
fn an_initiation_records_what_its_answer_says() {
    use Count::*;
    let p = Policy::default();
    let halted = Policy {
        currency_halted: true,
        ..p
    };
    let spent = Policy {
        attempts_spent: true,
        ..p
    };
    let cases = [
        (
            Answer::Accepted,
            certain(),
            p,
            (Note::Answer, Some(Initiated), true, false, true),
        ),
        (
            Answer::Accepted,
            certain(),
            halted,
            (Note::WalletRanOut, Some(Initiated), true, false, true),
        ),
        (
            REFUSED,
            certain(),
            p,
            (Note::Failure, Some(Failed), false, false, true),
        ),
        (
            Answer::Mismatch,
            certain(),
            p,
            (Note::Answer, Some(Unknown), false, false, true),
        ),
        (
            Answer::NotFinal,
            certain(),
            p,
            (Note::Answer, Some(Unknown), false, false, true),
        ),
        // A configuration stop records the provider's answer (why it stopped).
        (
            REDIRECT,
            certain(),
            p,
            (Note::Answer, None, false, false, true),
        ),
        (
            Answer::Ambiguous,
            uncertain(),
            spent,
            (Note::SetAside, None, false, false, true),
        ),
        (Answer::Unauthorized, certain(), p, KEPT),
        (Answer::NotSent, certain(), p, KEPT),
        (Answer::Stopped, certain(), p, KEPT),
        (Answer::Stopped, uncertain(), p, NOTHING),
    ];
    for (answer, facts, policy, want) in cases {
        let d = after_initiate(answer, facts, policy);
        assert_eq!(record(&d), want, "{answer:?} {facts:?} {policy:?}");
    }
}

#[test]
fn an_execution_records_what_its_answer_says() {
    use Count::*;
    let idle = Facts {
        resumed: true,
        maybe_landed: false,
        sent: 0,
    };
    let cases = [
        (
            Answer::Accepted,
            certain(),
            (Note::Answer, Some(Executed), false, true, true),
        ),
        (
            REFUSED,
            certain(),
            (Note::Answer, Some(Failed), false, false, true),
        ),
        (
            Answer::NotFinal,
            certain(),
            (Note::Answer, Some(Processing), false, false, true),
        ),
        (
            Answer::Mismatch,
            certain(),
            (Note::Answer, Some(Unknown), false, false, true),
        ),
        (
            REDIRECT,
            certain(),
            (Note::Answer, None, false, false, true),
        ),
        (
            Answer::Ambiguous,
            uncertain(),
            (Note::OutcomeUnknown, Some(Unknown), false, false, true),
        ),
        (
            REFUSED,
            uncertain(),
            (Note::OutcomeUnknown, Some(Unknown), false, false, true),
        ),
        (Answer::Unauthorized, certain(), KEPT),
        (Answer::NotSent, certain(), KEPT),
        (Answer::Stopped, certain(), KEPT),
        (Answer::Stopped, idle, NOTHING),
    ];
    for (answer, facts, want) in cases {
        let d = after_execute(answer, facts);
        assert_eq!(record(&d), want, "{answer:?} {facts:?}");
    }
}

/// A resumed execution (its intent committed by an earlier process) is
/// parked by `ambiguous = hold`, recorded as held and counted unknown;
/// under `resend` it is sent again.
#[test]
fn a_resumed_execution_is_held_under_hold_and_sent_under_resend() {
    assert_eq!(
        execute_start(State::Executing, Policy::default()),
        ExecuteStart::Send
    );
    let hold = Policy {
        hold_ambiguous: true,
        ..Policy::default()
    };
    let ExecuteStart::Hold(d) = execute_start(State::Executing, hold) else {
        panic!("a resumed execution under hold is held");
    };
    assert_eq!((d.from, d.to), (State::Executing, Some(State::Unknown)));
    assert_eq!(
        record(&d),
        (Note::Held, Some(Count::Unknown), false, false, true)
    );
}

/// An `initiated` payout gets its intent committed before anything is
/// sent (or is left alone when its currency ran out); an `executing` one
/// is sent again; no other state is ever sent, whatever the caller
/// believes about it.
#[test]
fn an_execution_starts_from_the_state_alone() {
    let halted = Policy {
        currency_halted: true,
        ..Policy::default()
    };
    let hold = Policy {
        hold_ambiguous: true,
        ..Policy::default()
    };
    assert_eq!(
        execute_start(State::Initiated, Policy::default()),
        ExecuteStart::Intent
    );
    assert_eq!(execute_start(State::Initiated, hold), ExecuteStart::Intent);
    assert_eq!(execute_start(State::Initiated, halted), ExecuteStart::Skip);
    assert_eq!(execute_start(State::Executing, halted), ExecuteStart::Send);
    for state in State::ALL {
        if matches!(state, State::Initiated | State::Executing) {
            continue;
        }
        for policy in [Policy::default(), halted, hold] {
            assert_eq!(
                execute_start(state, policy),
                ExecuteStart::Skip,
                "{state:?}"
            );
        }
    }
}
