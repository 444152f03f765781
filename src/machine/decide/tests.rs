//! The decision table, pair by pair, and a property test over random
//! sequences of answers and crashes.

use super::*;
use crate::machine::allowed;
use proptest::prelude::*;

pub(super) const REFUSED: Answer = Answer::Refused {
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

/// One request, surely answered (shared with `record_tests.rs`).
pub(super) fn certain() -> Facts {
    Facts {
        resumed: false,
        maybe_landed: false,
        sent: 1,
    }
}

/// Two requests, one of which may have landed.
pub(super) fn uncertain() -> Facts {
    Facts {
        resumed: false,
        maybe_landed: true,
        sent: 2,
    }
}

use State::*;
use StopKind::{Unauthorized as Unauth, Unreachable};

pub(super) const REDIRECT: Answer = Answer::ConfigStop(ConfigKind::Redirect);
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
                        Phase::Execute { .. } => match execute_start(state, policy) {
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

/// Every re-send is claimed first (`unknown`/`processing → executing`,
/// refused as `may_resend` refuses), and its answer either settles it or
/// puts it back where it was; nothing sent (a stop after the claim) puts
/// it back too. Each pair is a transition the store accepts.
#[test]
fn a_re_send_is_claimed_first_and_ends_settled_or_back_where_it_was() {
    assert_eq!(resend_claim(Unknown, "AMBIGUOUS"), Ok((Unknown, Executing)));
    assert_eq!(
        resend_claim(Processing, "PENDING"),
        Ok((Processing, Executing))
    );
    assert_eq!(
        resend_claim(Unknown, ECHO_MISMATCH),
        Err(NoResend::EchoMismatch)
    );
    for s in State::ALL {
        if !crate::machine::SETTLEABLE.contains(&s) {
            assert_eq!(resend_claim(s, "X"), Err(NoResend::NotSettleable(s)), "{s}");
        }
    }
    let table = [
        (Unknown, Answer::Accepted, Executed),
        (Unknown, TX_FAILED, ExecuteFailed),
        (Unknown, REFUSED, Unknown),
        (Unknown, NO_BALANCE, Unknown),
        (Unknown, Answer::Ambiguous, Unknown),
        (Unknown, Answer::NotSent, Unknown),
        (Unknown, Answer::NotFinal, Processing),
        (Unknown, Answer::Mismatch, Unknown),
        (Unknown, Answer::Unauthorized, Unknown),
        (Unknown, REDIRECT, Unknown),
        (Processing, Answer::Accepted, Executed),
        (Processing, TX_FAILED, ExecuteFailed),
        (Processing, Answer::NotFinal, Processing),
        (Processing, Answer::Ambiguous, Processing),
    ];
    for (from, a, to) in table {
        assert_eq!(
            resend_end(from, Some(settle_by_resend(from, a))),
            (Executing, to),
            "{from} {a:?}"
        );
    }
    for from in [Unknown, Processing] {
        assert_eq!(resend_end(from, None), (Executing, from));
        let (f, t) = resend_claim(from, "").unwrap();
        assert!(allowed(f, t), "{f} -> {t}");
        for a in Answer::ALL {
            let (f, t) = resend_end(from, Some(settle_by_resend(from, a)));
            assert!(allowed(f, t), "{f} -> {t} ({a:?})");
        }
    }
}

/// A re-send's answer is recorded when it settles the payout or does not
/// belong to it (so the next `reconcile --resend` refuses); an answer that
/// taught nothing leaves the recorded code alone.
#[test]
fn a_resend_records_a_settling_or_foreign_answer() {
    for a in Answer::ALL {
        let resent = settle_by_resend(Unknown, a);
        let want = matches!(resent, Resent::Settled(_)) || a == Answer::Mismatch;
        assert_eq!(resend_records_code(resent, a), want, "{a:?}");
    }
    assert!(resend_records_code(Resent::StillUnknown, Answer::Mismatch));
    assert!(!resend_records_code(
        Resent::StillUnknown,
        Answer::Ambiguous
    ));
    assert!(resend_records_code(
        Resent::Settled(Executed),
        Answer::Accepted
    ));
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
    // An answer that contradicted itself neither.
    assert_eq!(
        may_resend(Unknown, DUPLICATE_KEY),
        Err(NoResend::Contradictory)
    );
    assert_eq!(
        may_resend(Processing, "duplicate_key"),
        Err(NoResend::Contradictory)
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
    // Under --initiate-only, one payout in any of these states leaves the
    // run incomplete, whichever it is.
    for s in [
        InitiateFailed,
        Unknown,
        Pending,
        SetAside,
        Executing,
        Cancelled,
    ] {
        assert!(!run_complete(|x| u64::from(x == s), true), "{s}");
    }
    assert!(run_settled(counts(&[(Executed, 3), (Unknown, 1)])));
    assert!(!run_settled(counts(&[(Executed, 3), (Initiated, 1)])));
}

// ---------------------------------------------------------------------------
// Property: random answers and crashes never lead to paying twice.
//
// One payout is driven through the decisions in the engine's order of
// commits (`pay_one`): a claim (`pending → initiating`), the initiation and
// its outcome (`→ initiated`), the intent to execute as its own commit
// (`initiated → executing`), the execute and its outcome, and under
// `ambiguous = resend` the run's one re-send of an unknown execute. Each
// call's answer is drawn at random, and the process dies at random points:
// before a request leaves, after it left and before its answer is
// committed, or between the initiation's commit and the intent's. Each step
// is one process's go at the payout; a crash ends that process, and the
// next step is the next run resuming it.

/// The provider, seen from outside.
#[derive(Debug, Default)]
struct World {
    /// It has paid the payout.
    paid: bool,
    /// It holds the execution as not final: it may still pay.
    processing: bool,
    /// Execute requests that reached it.
    executes: u32,
    /// Some execute may have been carried out without payrun knowing.
    maybe_landed: bool,
    /// An initiate answer belonged to another request (echo mismatch).
    init_mismatch: bool,
}

impl World {
    /// Money moved, or may still move without another request.
    fn owes(&self) -> bool {
        self.paid || self.processing
    }
}

/// Where the process dies during a step, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Crash {
    No,
    /// After the intent is committed, before the request leaves.
    BeforeSend,
    /// After the request left, before its answer is committed.
    AfterSend,
    /// After an accepted initiation is committed, before the intent to
    /// execute is.
    BeforeIntent,
}

/// One step of the simulation: what the provider does with one process's
/// calls, and whether the process dies.
#[derive(Debug, Clone, Copy)]
struct Step {
    answer: Answer,
    /// An earlier attempt of the same call (inside the retries) may have
    /// reached the provider.
    retried: bool,
    /// For a request that may have landed: whether the provider carried it
    /// out.
    landed: bool,
    crash: Crash,
    initiate_only: bool,
    currency_halted: bool,
    /// The answer to the run's one re-send, if it makes one.
    resend_answer: Answer,
    /// An operator cancels the payout (`payrun cancel`) before the run.
    cancel: bool,
    /// After the run: an operator's `reconcile --resend` racing a
    /// settlement (`--mark`, a statement, a status call) from another
    /// terminal or worker. Also how a settlement races the run's own
    /// re-send.
    race: Race,
}

/// A re-send and a settlement of the same payout, both read while it is
/// unknown (or processing), in either order of commits.
#[derive(Debug, Clone, Copy)]
struct Race {
    /// An operator re-sends after the run (`reconcile --resend`).
    resend: bool,
    /// Another terminal settles the payout (truthfully, as the provider
    /// has it when it looks) from the state it read.
    settler: bool,
    /// The settlement commits before the re-send's claim (else after it).
    settle_first: bool,
    /// The provider's answer to the re-sent execute.
    answer: Answer,
    /// The re-sender dies after its request left, before its answer is
    /// recorded.
    crash: bool,
    /// The re-sent execute, if ambiguous, was carried out.
    landed: bool,
}

fn answer() -> impl Strategy<Value = Answer> {
    (0..Answer::ALL.len()).prop_map(|i| Answer::ALL[i])
}

fn step() -> impl Strategy<Value = Step> {
    (
        (answer(), prop::bool::weighted(0.15), any::<bool>()),
        prop_oneof![
            12 => Just(Crash::No),
            1 => Just(Crash::BeforeSend),
            1 => Just(Crash::AfterSend),
            1 => Just(Crash::BeforeIntent),
        ],
        (prop::bool::weighted(0.1), prop::bool::weighted(0.1)),
        answer(),
        prop::bool::weighted(0.03),
        race(),
    )
        .prop_map(
            |(
                (answer, retried, landed),
                crash,
                (initiate_only, currency_halted),
                resend,
                cancel,
                race,
            )| {
                Step {
                    answer,
                    retried,
                    landed,
                    crash,
                    initiate_only,
                    currency_halted,
                    resend_answer: resend,
                    cancel,
                    race,
                }
            },
        )
}

fn race() -> impl Strategy<Value = Race> {
    (
        (
            prop::bool::weighted(0.3),
            prop::bool::weighted(0.4),
            any::<bool>(),
        ),
        answer(),
        (prop::bool::weighted(0.15), any::<bool>()),
    )
        .prop_map(
            |((resend, settler, settle_first), answer, (crash, landed))| Race {
                resend,
                settler,
                settle_first,
                answer,
                crash,
                landed,
            },
        )
}

/// No race: nobody re-sends or settles beside the run.
const NO_RACE: Race = Race {
    resend: false,
    settler: false,
    settle_first: false,
    answer: Answer::Accepted,
    crash: false,
    landed: false,
};

/// A healthy provider and no crash: what the next, uneventful run sees.
const CALM: Step = Step {
    answer: Answer::Accepted,
    retried: false,
    landed: true,
    crash: Crash::No,
    initiate_only: false,
    currency_halted: false,
    resend_answer: Answer::Accepted,
    cancel: false,
    race: NO_RACE,
};

/// Requests a payout may use across runs in the simulation
/// (`max_attempts_total`): small, so set-asides happen.
const MAX_ATTEMPTS: u32 = 6;

/// States that would lead the engine (or an operator) to pay again.
fn invites_paying_again(s: State) -> bool {
    matches!(
        s,
        Pending | Initiating | Initiated | InitiateFailed | ExecuteFailed | Cancelled | SetAside
    )
}

/// States in which no execute may ever have landed.
fn surely_unexecuted(s: State) -> bool {
    matches!(
        s,
        Pending | Initiating | Initiated | InitiateFailed | Cancelled | SetAside | Rejected
    )
}

/// The simulated payout as the database holds it.
#[derive(Debug, Clone, Copy)]
struct Payout {
    state: State,
    attempts: u32,
    /// Its recorded provider code is `ECHO_MISMATCH`.
    mismatch_code: bool,
}

/// The simulated run's fixed options.
#[derive(Debug, Clone, Copy)]
struct Opts {
    hold: bool,
}

/// One process's go at the payout, as the engine carries it out.
fn simulate(mut p: Payout, s: Step, o: Opts, world: &mut World) -> Payout {
    let policy = Policy {
        initiate_only: s.initiate_only,
        currency_halted: s.currency_halted,
        hold_ambiguous: o.hold,
        attempts_spent: false,
    };
    if s.cancel && crate::machine::CANCELLABLE.contains(&p.state) {
        assert!(allowed(p.state, Cancelled));
        assert!(!world.owes() && !world.maybe_landed, "cancelled {world:?}");
        p.state = Cancelled;
        return p;
    }
    // A processing payout is the provider's to finish: no run sends it.
    let (phase, claimed) = if p.state == Pending {
        // A claim: the intent to initiate, committed before the request.
        assert!(allowed(Pending, Initiating));
        p.state = Initiating;
        (Phase::Initiate { resumed: false }, true)
    } else {
        match resume_phase(p.state, policy.initiate_only) {
            None => return p,
            Some(phase) => (phase, false),
        }
    };
    assert!(
        claimed || crate::machine::RESUMED.contains(&p.state),
        "{p:?}"
    );
    let resumed = match phase {
        Phase::Initiate { resumed } => {
            if !initiate(&mut p, resumed, s, policy, world) {
                return p;
            }
            // The intent to execute: its own commit, right before the send.
            if s.crash == Crash::BeforeIntent {
                assert_eq!(p.state, Initiated);
                return p;
            }
            assert!(allowed(Initiated, Executing));
            p.state = Executing;
            false
        }
        Phase::Execute { resumed } => {
            match execute_start(p.state, policy) {
                ExecuteStart::Skip => return p,
                ExecuteStart::Hold(d) => {
                    p.state = apply(&mut p, d, Answer::Stopped, 0, world);
                    return p;
                }
                ExecuteStart::Intent => {
                    assert_eq!(p.state, Initiated);
                    assert!(allowed(Initiated, Executing));
                    p.state = Executing;
                }
                ExecuteStart::Send => assert_eq!(p.state, Executing),
            }
            resumed
        }
    };
    execute(&mut p, resumed, s, o, policy, world);
    p
}

/// The execute of a payout whose intent is committed, its outcome, and
/// the run's one re-send if the decision asks for it.
fn execute(p: &mut Payout, resumed: bool, s: Step, o: Opts, policy: Policy, world: &mut World) {
    assert_eq!(p.state, Executing);
    if s.crash == Crash::BeforeSend {
        return;
    }
    let sends = s.retried || !matches!(s.answer, Answer::Stopped | Answer::NotSent);
    let sent = u32::from(sends);
    if sends {
        send_execute(p, o, world);
        world.maybe_landed |= s.retried || s.crash == Crash::AfterSend;
        world.paid |= (s.retried || s.crash == Crash::AfterSend) && s.landed;
    }
    if s.crash == Crash::AfterSend {
        return;
    }
    // A consistent provider: once it paid, it never refuses the payout.
    let answer = match s.answer {
        Answer::Refused { .. } if world.paid => Answer::Accepted,
        a => a,
    };
    provider_answers(answer, s.landed, world);
    let facts = Facts {
        resumed,
        maybe_landed: s.retried || answer == Answer::Ambiguous,
        sent,
    };
    let d = after_execute(answer, facts);
    p.state = apply(p, d, answer, sent, world);
    if resend_later(&d, facts, policy) {
        assert!(!o.hold, "a re-send under hold");
        assert!(
            !p.mismatch_code,
            "a re-send after an answer about another request"
        );
        // The run's one re-send, after the main pass, under the same id,
        // claimed first; a terminal may settle the payout around it.
        let r = Race {
            resend: true,
            answer: s.resend_answer,
            landed: s.landed,
            crash: false,
            ..s.race
        };
        resend(p, r, o, world);
    }
}

/// A re-send of a settleable payout (the run's, or `reconcile --resend`)
/// as the code carries it out: claim (`→ executing`, only from the state
/// read), send, answer settles or puts it back; and a settlement read in
/// the same state, committed before or after the claim, only from the
/// state it read.
fn resend(p: &mut Payout, r: Race, o: Opts, world: &mut World) {
    let read = p.state;
    let code = if p.mismatch_code {
        ECHO_MISMATCH
    } else {
        "AMBIGUOUS"
    };
    // The settler's verdict, true when it looks: paid, or failed; a
    // provider still working on it settles nothing.
    let verdict = match (world.paid, world.processing) {
        (true, _) => Some(Verdict::Executed),
        (false, false) => Some(Verdict::Failed),
        (false, true) => None,
    };
    let settle = |p: &mut Payout| {
        // The store writes only from the state the settler read.
        if !r.settler || p.state != read {
            return;
        }
        if let Some(Ok((to, _))) = verdict.map(|v| settle_by_operator(p.state, v)) {
            assert!(allowed(read, to), "{read} -> {to}");
            p.state = to;
        }
    };
    if r.settle_first {
        settle(p);
    }
    let Ok((from, to)) = resend_claim(read, code) else {
        return;
    };
    // The claim: written only if the payout is still what was read.
    let claimed = p.state == from;
    if claimed {
        assert!(allowed(from, to), "{from} -> {to}");
        p.state = to;
    }
    if !r.settle_first {
        // Read before the claim, written after it: refused once claimed.
        settle(p);
        assert!(!claimed || p.state == Executing, "settled beside a re-send");
    }
    if !claimed {
        return;
    }
    send_execute(p, o, world);
    if r.crash {
        // Died before the answer was recorded: it stays `executing`,
        // which a resumed run picks up as an execute of the same id.
        world.maybe_landed = true;
        world.paid |= r.landed;
        return;
    }
    // A consistent provider: once it paid, it never refuses the payout.
    let a = match r.answer {
        Answer::Refused { .. } if world.paid => Answer::Accepted,
        a => a,
    };
    provider_answers(a, r.landed, world);
    let (f, to) = resend_end(from, Some(settle_by_resend(from, a)));
    assert_eq!(f, p.state);
    assert!(allowed(f, to), "{f} -> {to}");
    settled(to, world);
    p.state = to;
}

/// An execute request leaves for the provider.
fn send_execute(p: &Payout, o: Opts, world: &mut World) {
    // Under hold, an execute that may have been carried out is never
    // followed by another: a provider that pays twice would pay twice.
    assert!(
        !(o.hold && world.maybe_landed),
        "hold sent an execute again after {world:?}"
    );
    assert!(
        !world.init_mismatch,
        "executing after an echo mismatch on the initiation"
    );
    // Every send, re-sends included, leaves with its intent committed.
    assert_eq!(
        p.state, Executing,
        "an execute sent for a {} payout",
        p.state
    );
    world.executes += 1;
}

/// What the provider did with an execute it answered with `answer`.
fn provider_answers(answer: Answer, landed: bool, world: &mut World) {
    match answer {
        Answer::Accepted => world.paid = true,
        // The answer's request may have been carried out.
        Answer::Ambiguous | Answer::Mismatch => world.paid |= landed,
        Answer::NotFinal => world.processing = true,
        // The provider's record: this transaction failed.
        Answer::Refused {
            transaction_failed: true,
            ..
        } if !world.paid => world.processing = false,
        _ => {}
    }
    world.maybe_landed |= matches!(
        answer,
        Answer::Accepted | Answer::Ambiguous | Answer::Mismatch | Answer::NotFinal
    );
}

/// A settled state the provider's word put the payout in.
fn settled(to: State, world: &World) {
    if to == ExecuteFailed {
        assert!(!world.owes(), "failed, yet {world:?}");
    }
}

/// An initiation of a payout in `initiating`: moves no money. Returns
/// whether the engine goes on to execute it now.
fn initiate(p: &mut Payout, resumed: bool, s: Step, policy: Policy, world: &mut World) -> bool {
    assert_eq!(p.state, Initiating);
    if matches!(s.crash, Crash::BeforeSend | Crash::AfterSend) {
        return false;
    }
    let sent = u32::from(s.retried || s.answer != Answer::Stopped);
    let facts = Facts {
        resumed,
        maybe_landed: s.retried || s.answer == Answer::Ambiguous,
        sent,
    };
    let policy = Policy {
        attempts_spent: p.attempts.saturating_add(sent) >= MAX_ATTEMPTS,
        ..policy
    };
    let d = after_initiate(s.answer, facts, policy);
    if d.to.is_some() && s.answer == Answer::Mismatch {
        world.init_mismatch = true;
    }
    p.state = apply(p, d, s.answer, sent, world);
    assert!(
        !d.then_execute || p.state == Initiated,
        "executing from {p:?}"
    );
    if d.then_execute {
        assert!(!policy.initiate_only && !policy.currency_halted);
    }
    d.then_execute
}

/// Commits a decision, checking it against the table and the world.
fn apply(p: &mut Payout, d: Decision, answer: Answer, sent: u32, world: &World) -> State {
    let from = p.state;
    assert_eq!(d.from, from);
    assert!(
        !from.is_final() || from == Unknown,
        "the engine left {from}"
    );
    let Some(to) = d.to else { return from };
    assert!(allowed(from, to), "{from} -> {to}");
    if d.attempts {
        p.attempts = p.attempts.saturating_add(sent);
    }
    if d.note != Note::Keep {
        p.mismatch_code = d.note == Note::Answer && answer == Answer::Mismatch;
    }
    if d.note == Note::Held {
        p.mismatch_code = false;
    }
    if world.owes() {
        assert!(
            !invites_paying_again(to),
            "paid, yet {from} -> {to} ({d:?})"
        );
    }
    if (from, to) == (Executing, Initiated) {
        // Back to "send the execute": only if none may have landed.
        assert!(!world.maybe_landed, "{from} -> {to} after {world:?}");
    }
    if to == SetAside {
        assert!(p.attempts >= MAX_ATTEMPTS, "{p:?}");
    }
    if to == ExecuteFailed {
        settled(to, world);
    }
    to
}

/// The next run looks at it: final, or picked up (pending payouts are
/// claimed; the others resume), or processing (the provider finishes it,
/// `payrun reconcile` lists it). Nothing open is left unlisted.
fn listed(state: State) -> bool {
    state.is_final()
        || state == Pending
        || resume_phase(state, false).is_some()
        || crate::machine::NEEDS_OPERATOR.contains(&state)
}

/// What must hold after every process's go.
fn check(p: &Payout, world: &World) -> Result<(), TestCaseError> {
    prop_assert!(listed(p.state), "{p:?} is open and listed nowhere");
    if world.owes() {
        prop_assert!(p.state.may_have_paid(), "paid but {p:?} {world:?}");
    }
    if surely_unexecuted(p.state) {
        prop_assert!(!world.maybe_landed, "{p:?} after {world:?}");
    }
    if world.init_mismatch {
        // Parked for an operator (who may settle it), and `reconcile
        // --resend` refuses it by the code it recorded.
        prop_assert!(matches!(p.state, Unknown | ExecuteFailed), "{:?}", p);
    }
    if world.init_mismatch && p.state == Unknown {
        let code = if p.mismatch_code {
            ECHO_MISMATCH
        } else {
            "AMBIGUOUS"
        };
        prop_assert!(may_resend(p.state, code).is_err(), "{:?}", p);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn random_answers_and_crashes_never_pay_twice(
        steps in prop::collection::vec(step(), 1..40),
        hold in any::<bool>(),
    ) {
        let o = Opts { hold };
        let mut world = World::default();
        let mut p = Payout { state: Pending, attempts: 0, mismatch_code: false };
        for s in steps {
            p = simulate(p, s, o, &mut world);
            check(&p, &world)?;
            // An operator's `reconcile --resend` (only for a provider that
            // deduplicates, so never under hold), raced by a settlement.
            if s.race.resend && !hold && crate::machine::SETTLEABLE.contains(&p.state) {
                resend(&mut p, s.race, o, &mut world);
                check(&p, &world)?;
            }
            if p.state.is_final() && p.state != Unknown {
                break;
            }
        }
        // Then calm runs: every payout ends final within a few runs, and is
        // executed only if it was paid.
        for _ in 0..4 {
            if p.state.is_final() {
                break;
            }
            if p.state == Processing {
                // The provider finishes it; a status call, a statement or
                // an operator settles it. No run re-sends it.
                world.paid |= world.processing;
                world.processing = false;
                let verdict = if world.paid { Verdict::Executed } else { Verdict::Failed };
                let (to, _) = settle_by_operator(Processing, verdict)
                    .expect("processing is settleable");
                prop_assert!(allowed(Processing, to));
                p.state = to;
            } else {
                p = simulate(p, CALM, o, &mut world);
            }
            check(&p, &world)?;
        }
        prop_assert!(p.state.is_final(), "{p:?} never settles");
        if p.state == Executed {
            prop_assert!(world.paid);
        }
        if world.owes() {
            prop_assert!(p.state.may_have_paid(), "paid but {:?}", p.state);
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
