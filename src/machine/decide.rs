//! The decisions of the state machine, as pure functions: given where a
//! payout stands, what the provider answered (reduced to an [`Answer`]),
//! what is known about the attempt ([`Facts`]) and the run's options
//! ([`Policy`]), they say which state to write, what to record, whether to
//! count, halt a currency or stop the run. The engine (`pay_one`, the resume
//! queue) and `reconcile` only carry these decisions out: no state is chosen
//! anywhere else. See `ARCHITECTURE.md`, "Money invariants".

use super::State;

/// One call's end, after retries, reduced to what decides the next state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The run stopped before any final answer.
    Stopped,
    Accepted,
    /// A business refusal. `transaction_failed`: the provider recorded the
    /// transaction itself as failed. `insufficient_balance`: the wallet of
    /// the currency ran out.
    Refused {
        transaction_failed: bool,
        insufficient_balance: bool,
    },
    /// The key was refused.
    Unauthorized,
    /// Still rate limited after the retries.
    RateLimited,
    /// Never sent, after the retries.
    NotSent,
    /// May have been carried out, and retries ended.
    Ambiguous,
    /// The transaction exists and is not final (pending, processing...):
    /// money may still move.
    NotFinal,
    /// The answer echoed another transaction id, amount, currency or
    /// account than was sent: it may belong to another request.
    Mismatch,
    /// The provider is set up wrongly for payrun (a redirect, no such
    /// route, a 405, a `Retry-After` beyond the cap): stop the run.
    ConfigStop(ConfigKind),
}

/// Which configuration problem stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// A 3xx: redirects are never followed (`base_url` is wrong).
    Redirect,
    /// A 404 that is not about the payout: the route does not exist.
    NoSuchRoute,
    /// A 405, or a status the profile maps to `misconfigured`.
    Misconfigured,
    /// `Retry-After` beyond the cap: the provider asks for a long pause.
    RetryAfterTooLong,
}

/// The provider code recorded for a payout whose initiate answer did not
/// belong to its request. Such a payout is never executed by payrun, not
/// even by `reconcile --resend`.
pub const ECHO_MISMATCH: &str = "ECHO_MISMATCH";
/// The code of an answer that gave a key it is read by twice
/// (`provider::Outcome::Contradictory`): recorded `unknown` like an echo
/// mismatch, and never re-sent.
pub const DUPLICATE_KEY: &str = "DUPLICATE_KEY";

impl Answer {
    /// Every kind of answer, for tests that cover them all.
    pub const ALL: [Answer; 16] = [
        Answer::Stopped,
        Answer::Accepted,
        Answer::Refused {
            transaction_failed: false,
            insufficient_balance: false,
        },
        Answer::Refused {
            transaction_failed: true,
            insufficient_balance: false,
        },
        Answer::Refused {
            transaction_failed: false,
            insufficient_balance: true,
        },
        Answer::Refused {
            transaction_failed: true,
            insufficient_balance: true,
        },
        Answer::Unauthorized,
        Answer::RateLimited,
        Answer::NotSent,
        Answer::Ambiguous,
        Answer::NotFinal,
        Answer::Mismatch,
        Answer::ConfigStop(ConfigKind::Redirect),
        Answer::ConfigStop(ConfigKind::NoSuchRoute),
        Answer::ConfigStop(ConfigKind::Misconfigured),
        Answer::ConfigStop(ConfigKind::RetryAfterTooLong),
    ];
}

/// What is known about the attempt that produced the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Facts {
    /// The payout was found in its intent state when the run started: a
    /// request of an earlier process may have reached the provider.
    pub resumed: bool,
    /// Some attempt of this call may have been carried out.
    pub maybe_landed: bool,
    /// Requests that left (or may have left) in this call.
    pub sent: u32,
}

impl Facts {
    /// The provider may have acted on this payout already.
    pub fn uncertain(self) -> bool {
        self.resumed || self.maybe_landed
    }
}

/// The run's options and conditions that a decision depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// `--initiate-only`: no payout is executed.
    pub initiate_only: bool,
    /// The payout's currency ran out of balance earlier in this run.
    pub currency_halted: bool,
    /// `ambiguous = hold`: an interrupted execution is parked as unknown.
    pub hold_ambiguous: bool,
    /// The payout's attempt budget across runs (`max_attempts_total`) is
    /// spent, counting the call being decided.
    pub attempts_spent: bool,
}

/// What to record as the payout's provider code and message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// Keep the recorded ones.
    Keep,
    /// The answer's code and message.
    Answer,
    /// The answer's code and a sentence saying how the call failed.
    Failure,
    /// `NOT_EXECUTED`: the currency's wallet ran out.
    WalletRanOut,
    /// `AMBIGUOUS_HELD`: parked for an operator by `ambiguous = hold`.
    Held,
    /// The answer's code, and "outcome unknown after N request(s)".
    OutcomeUnknown,
    /// `ATTEMPTS_SPENT`: set aside, its attempt budget spent.
    SetAside,
}

/// Why the run must stop after this payout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopKind {
    Unauthorized,
    Unreachable,
    /// A configuration error: nothing more is sent until it is fixed.
    Config(ConfigKind),
}

/// Which run counter this decision adds one to (progress display).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Initiated,
    Executed,
    Failed,
    Unknown,
    Processing,
}

/// One decision. `to: None` writes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub from: State,
    pub to: Option<State>,
    pub note: Note,
    /// Add the call's requests to the payout's attempts.
    pub attempts: bool,
    pub stamp_initiated: bool,
    pub stamp_executed: bool,
    pub count: Option<Count>,
    pub stop: Option<StopKind>,
    /// Execute no more payouts of this currency in this run.
    pub halt_currency: bool,
    /// Go on to execute now (commit the intent `initiated → executing`,
    /// then send).
    pub then_execute: bool,
}

impl Decision {
    fn write(from: State, to: State) -> Decision {
        Decision {
            from,
            to: Some(to),
            note: Note::Keep,
            attempts: true,
            stamp_initiated: false,
            stamp_executed: false,
            count: None,
            stop: None,
            halt_currency: false,
            then_execute: false,
        }
    }

    fn nothing(from: State) -> Decision {
        Decision {
            to: None,
            attempts: false,
            ..Decision::write(from, from)
        }
    }
}

/// The step a payout is at when it is handed to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Send `/initiates`. `resumed`: the payout was found `initiating`.
    Initiate { resumed: bool },
    /// Send `/executes`. `resumed`: found `executing` (outcome unknown).
    Execute { resumed: bool },
}

/// Where a payout found open at the start of a run picks up, if anywhere.
/// Intent states are resumed as such (their outcome is open); `initiated`
/// and `executing` wait for a run without `--initiate-only`.
pub fn resume_phase(state: State, initiate_only: bool) -> Option<Phase> {
    match state {
        State::Initiating => Some(Phase::Initiate { resumed: true }),
        // The approval gate: `--initiate-only` sends no execute, not even
        // the re-send of an intent an earlier process left open.
        State::Executing if !initiate_only => Some(Phase::Execute { resumed: true }),
        State::Initiated if !initiate_only => Some(Phase::Execute { resumed: false }),
        _ => None,
    }
}

/// A payout claimed (`pending → initiating`) whose request never left
/// because the run stopped: back to pending. Resumed intents stay as they
/// are: their outcome is still open.
pub fn unsent_claim(phase: Phase) -> Option<(State, State)> {
    (phase == Phase::Initiate { resumed: false }).then_some((State::Initiating, State::Pending))
}

/// The end of an initiation (the payout is `initiating`).
pub fn after_initiate(answer: Answer, facts: Facts, policy: Policy) -> Decision {
    let from = State::Initiating;
    // Where a payout whose initiation did not settle goes: back to pending
    // if the request surely never reached the provider, else it stays an
    // intent for the next run to re-send under the same id.
    let back = if facts.uncertain() {
        State::Initiating
    } else {
        State::Pending
    };
    match answer {
        Answer::Stopped if facts.uncertain() => Decision::nothing(from),
        Answer::Stopped => Decision::write(from, State::Pending),
        // Always `initiated`. With `then_execute` the engine commits the
        // intent to execute (`initiated → executing`) in the same write,
        // before the execute is sent; without it (initiate-only, halted
        // currency) the payout rests `initiated`, surely not executed.
        Answer::Accepted => {
            let execute = !(policy.initiate_only || policy.currency_halted);
            Decision {
                note: if !execute && !policy.initiate_only {
                    Note::WalletRanOut
                } else {
                    Note::Answer
                },
                stamp_initiated: true,
                count: Some(Count::Initiated),
                then_execute: execute,
                ..Decision::write(from, State::Initiated)
            }
        }
        Answer::Unauthorized => Decision {
            stop: Some(StopKind::Unauthorized),
            ..Decision::write(from, back)
        },
        // Initiation moves no money: a refused initiation is final and safe.
        Answer::Refused { .. } => Decision {
            note: Note::Failure,
            count: Some(Count::Failed),
            ..Decision::write(from, State::InitiateFailed)
        },
        // A payout the provider keeps answering without a final answer,
        // its budget across runs spent: parked, and the run goes on.
        Answer::Ambiguous if policy.attempts_spent => Decision {
            note: Note::SetAside,
            ..Decision::write(from, State::SetAside)
        },
        // The answer may be about another request: nothing is executed
        // for this payout; an operator looks at it. A not-final status on
        // an initiation (the classifier accepts those; kept for safety)
        // means money may move without our execute: the same.
        Answer::Mismatch | Answer::NotFinal => Decision {
            note: Note::Answer,
            count: Some(Count::Unknown),
            ..Decision::write(from, State::Unknown)
        },
        // Fix the set-up, then resume: the intent stays as it is.
        Answer::ConfigStop(kind) => Decision {
            note: Note::Answer,
            stop: Some(StopKind::Config(kind)),
            ..Decision::write(from, State::Initiating)
        },
        // Retries exhausted on a transport failure: the provider is down or
        // overloaded, not refusing this payout. Stop with it resumable.
        Answer::RateLimited | Answer::NotSent | Answer::Ambiguous => Decision {
            stop: Some(StopKind::Unreachable),
            ..Decision::write(from, back)
        },
    }
}

/// What happens to a payout about to be executed, before anything is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecuteStart {
    /// Leave it as it is (its currency ran out of balance in this run).
    Skip,
    /// Commit the intent (`initiated → executing`), then send.
    Intent,
    /// The intent is committed already: send.
    Send,
    /// Park it as unknown (`ambiguous = hold`), send nothing.
    Hold(Decision),
}

/// The first step of an execution of a payout found in `state`: an
/// `initiated` payout gets its intent committed first, an `executing` one
/// (its intent committed by an earlier process, its execute maybe sent)
/// is sent again or held. Decided by the state alone, so no caller can ask
/// for a send without a committed intent: any other state is left as it
/// is and nothing is sent.
pub fn execute_start(state: State, policy: Policy) -> ExecuteStart {
    match state {
        State::Initiated if policy.currency_halted => ExecuteStart::Skip,
        State::Initiated => ExecuteStart::Intent,
        State::Executing if policy.hold_ambiguous => ExecuteStart::Hold(Decision {
            note: Note::Held,
            count: Some(Count::Unknown),
            ..Decision::write(State::Executing, State::Unknown)
        }),
        State::Executing => ExecuteStart::Send,
        _ => ExecuteStart::Skip,
    }
}

/// The end of an execution (the payout is `executing`: money may move).
pub fn after_execute(answer: Answer, facts: Facts) -> Decision {
    let from = State::Executing;
    let uncertain = facts.uncertain();
    match answer {
        Answer::Stopped if !uncertain => Decision::write(from, State::Initiated),
        Answer::Stopped if facts.sent > 0 => Decision::write(from, State::Executing),
        Answer::Stopped => Decision::nothing(from),
        Answer::Accepted => Decision {
            note: Note::Answer,
            stamp_executed: true,
            count: Some(Count::Executed),
            ..Decision::write(from, State::Executed)
        },
        // A refusal is final only if it is the provider's record of the
        // transaction, or if no earlier attempt may have been carried out.
        Answer::Refused {
            transaction_failed,
            insufficient_balance,
        } if transaction_failed || !uncertain => Decision {
            note: Note::Answer,
            count: Some(Count::Failed),
            halt_currency: insufficient_balance,
            ..Decision::write(from, State::ExecuteFailed)
        },
        Answer::Unauthorized => Decision {
            stop: Some(StopKind::Unauthorized),
            ..Decision::write(
                from,
                if uncertain {
                    State::Executing
                } else {
                    State::Initiated
                },
            )
        },
        // Accepted, not final: the provider is working on it.
        Answer::NotFinal => Decision {
            note: Note::Answer,
            count: Some(Count::Processing),
            ..Decision::write(from, State::Processing)
        },
        // An answer about another request says nothing about ours, which
        // may have been paid.
        Answer::Mismatch => Decision {
            note: Note::Answer,
            count: Some(Count::Unknown),
            ..Decision::write(from, State::Unknown)
        },
        // Fix the set-up, then resume: the intent stays (a resumed
        // `executing` payout is held or re-sent under the same id).
        Answer::ConfigStop(kind) => Decision {
            note: Note::Answer,
            stop: Some(StopKind::Config(kind)),
            ..Decision::write(from, State::Executing)
        },
        // Never carried out, known for sure: still only initiated. Stop the
        // run (the provider is down or throttling hard).
        Answer::NotSent | Answer::RateLimited if !uncertain => Decision {
            stop: Some(StopKind::Unreachable),
            ..Decision::write(from, State::Initiated)
        },
        // Ambiguous, or an error after an ambiguous attempt: the money may
        // have moved. Never `failed` (that invites a second payment).
        Answer::Refused { .. } | Answer::NotSent | Answer::RateLimited | Answer::Ambiguous => {
            Decision {
                note: Note::OutcomeUnknown,
                count: Some(Count::Unknown),
                ..Decision::write(from, State::Unknown)
            }
        }
    }
}

/// An operator's verdict on an unknown payout (`payrun reconcile --mark`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Executed,
    Failed,
}

/// Only an unknown or processing payout can be settled by an operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("it is {0}; only unknown or processing payouts can be marked")]
pub struct NotUnknown(pub State);

/// The state and code an operator's verdict writes.
pub fn settle_by_operator(
    state: State,
    verdict: Verdict,
) -> Result<(State, &'static str), NotUnknown> {
    if !super::SETTLEABLE.contains(&state) {
        return Err(NotUnknown(state));
    }
    Ok(match verdict {
        Verdict::Executed => (State::Executed, "OPERATOR_MARKED_EXECUTED"),
        Verdict::Failed => (State::ExecuteFailed, "OPERATOR_MARKED_FAILED"),
    })
}

/// What a re-sent execute of an unknown payout settles
/// (`payrun reconcile --resend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resent {
    Settled(State),
    /// Nothing learnt: the payout stays in the state it is in.
    StillUnknown,
    /// The key was refused: stop.
    Unauthorized,
    /// The provider is set up wrongly: stop.
    ConfigStop(ConfigKind),
}

/// What a re-sent execute of a payout in `from` (unknown or processing)
/// settles.
pub fn settle_by_resend(from: State, answer: Answer) -> Resent {
    match answer {
        Answer::Accepted => Resent::Settled(State::Executed),
        Answer::Refused {
            transaction_failed: true,
            ..
        } => Resent::Settled(State::ExecuteFailed),
        Answer::NotFinal if from == State::Unknown => Resent::Settled(State::Processing),
        Answer::Unauthorized => Resent::Unauthorized,
        Answer::ConfigStop(kind) => Resent::ConfigStop(kind),
        _ => Resent::StillUnknown,
    }
}

/// Why an execute may not be re-sent for a payout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoResend {
    #[error("it is {0}; only unknown or processing payouts are re-sent")]
    NotSettleable(State),
    #[error(
        "an answer about it did not belong to its request (ECHO_MISMATCH): the provider may not \
         hold this payout as sent; check it with the provider, then `payrun reconcile --mark`"
    )]
    EchoMismatch,
    #[error(
        "an answer about it contradicted itself (DUPLICATE_KEY: a key given twice, maybe an \
         amount or an account): check it with the provider, then `payrun reconcile --mark`"
    )]
    Contradictory,
}

/// Whether `reconcile --resend` (or the run's one re-send) may send an
/// execute for a payout in `state` whose recorded provider code is `code`.
pub fn may_resend(state: State, code: &str) -> Result<(), NoResend> {
    if !super::SETTLEABLE.contains(&state) {
        return Err(NoResend::NotSettleable(state));
    }
    if code.eq_ignore_ascii_case(ECHO_MISMATCH) {
        return Err(NoResend::EchoMismatch);
    }
    if code.eq_ignore_ascii_case(DUPLICATE_KEY) {
        return Err(NoResend::Contradictory);
    }
    Ok(())
}

/// The claim a re-send (`reconcile --resend`, the run's one re-send)
/// commits before its execute leaves: `from → executing`, written only if
/// the payout is still in `from`, the state the re-sender read. A mark, a
/// statement or a status call that settled it meanwhile makes the claim
/// fail, and nothing is sent; once claimed, none of them settles it
/// (`executing` is not [`super::SETTLEABLE`]) until the answer is in. A
/// crash after the claim leaves `executing`: it may have paid, and a run
/// resumes it as an execute of the same id. Refused as [`may_resend`]
/// refuses.
pub fn resend_claim(state: State, code: &str) -> Result<(State, State), NoResend> {
    may_resend(state, code)?;
    Ok((state, State::Executing))
}

/// Whether a re-send's answer replaces the payout's recorded code: when it
/// settled the payout, and when it did not belong to the payout (an echo
/// mismatch, a contradiction: `Answer::Mismatch`), so that no later
/// re-send goes out for it ([`may_resend`]).
pub fn resend_records_code(resent: Resent, answer: Answer) -> bool {
    matches!(resent, Resent::Settled(_)) || answer == Answer::Mismatch
}

/// Where a claimed re-send ends (the payout is `executing`, claimed from
/// `from`): settled by what the answer settles ([`settle_by_resend`]), or
/// back in `from` when it settled nothing — nothing learnt, the key
/// refused, the provider misconfigured — or when nothing was sent at all
/// (`None`: the run was asked to stop after the claim).
pub fn resend_end(from: State, resent: Option<Resent>) -> (State, State) {
    let to = match resent {
        Some(Resent::Settled(to)) => to,
        _ => from,
    };
    (State::Executing, to)
}

/// Whether an execute that ended in `d` is re-sent once, later in the
/// same run (`ambiguous = resend`): only an execute of this process whose
/// outcome is unknown, never one resumed from an earlier process (its send
/// in this run was already the re-send), never under `hold`.
pub fn resend_later(d: &Decision, facts: Facts, policy: Policy) -> bool {
    !policy.hold_ambiguous
        && !facts.resumed
        && d.from == State::Executing
        && d.to == Some(State::Unknown)
        // Ambiguous only: an answer about another request (a mismatch)
        // is not re-sent.
        && d.note == Note::OutcomeUnknown
}

/// Whether every payout of a run reached the end the run was asked for.
/// `count` gives the number of payouts in a state.
pub fn run_complete(count: impl Fn(State) -> u64, initiate_only: bool) -> bool {
    if initiate_only {
        count(State::InitiateFailed)
            + count(State::Unknown)
            + count(State::Pending)
            + count(State::SetAside)
            // An execute intent an earlier process left: --initiate-only
            // leaves it for the approver's run, and says so.
            + count(State::Executing)
            + count(State::Cancelled)
            == 0
    } else {
        let all: u64 = State::ALL.iter().map(|&s| count(s)).sum();
        count(State::Executed) == all
    }
}

/// Whether a run has nothing left to do (no payout in an open state).
pub fn run_settled(count: impl Fn(State) -> u64) -> bool {
    super::OPEN.iter().all(|&s| count(s) == 0)
}

#[cfg(test)]
mod record_tests;
#[cfg(test)]
mod tests;
