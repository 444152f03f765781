//! The re-run decisions (docs/rerun.md), pure functions over data:
//! [`plan`] says what to do with a row whose transaction id an earlier run
//! already holds — pay it (new), re-pay it under a linked id (the earlier
//! payout failed), list it as already paid (skip), or hold it (still open
//! in an unfinished run). Whether a row about to be paid repeats an
//! earlier payment of the same person is `engine::guard`'s.

use crate::machine::State;
use crate::store::Earlier;
use sha2::{Digest, Sha256};

pub use crate::config::DEFAULT_REPEAT_WINDOW_DAYS;

pub use crate::machine::GUARDED;

/// Longest transaction id: the validator's limit for ids in a file, which
/// every provider profile accepts.
const MAX_ID_LEN: usize = 64;

/// What to do with one valid row, given the earlier payouts holding its id
/// and then its retry ids (`chain`, oldest first; empty: never seen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Not seen before: pay it under its id.
    New,
    /// Its last payout failed: pay it again under `id`, linked to `of`.
    Retry { id: String, of: i64 },
    /// Paid (or held as `unknown`) by an earlier run: not sent again.
    Skip(Earlier),
    /// Still open in an unfinished run: that run pays it when resumed.
    Open(Earlier),
    /// The id belongs to another payout (an explicit transaction id reused
    /// for a different account, amount, currency or method): refused.
    Conflict(Earlier),
}

/// True when the payout failed for sure: re-paying it is safe.
pub fn failed(state: State) -> bool {
    matches!(state, State::InitiateFailed | State::ExecuteFailed)
}

/// The decision for a row with transaction id `base`. `same_payout` tells
/// whether the first earlier payout is this row's payout (always, for a
/// derived id; for an id from the file, only if account key, amount,
/// currency and method agree). A row whose last attempt failed re-pays it
/// even when corrected (a fixed account or amount in `failed.csv`): that
/// payout moved no money, and the row is the payment it was meant to be.
pub fn plan(base: &str, chain: &[Earlier], same_payout: bool) -> Plan {
    let Some(last) = chain.last() else {
        return Plan::New;
    };
    if failed(last.state) {
        return Plan::Retry {
            id: retry_id(base, chain.len() as u32 + 1),
            of: last.payout_id,
        };
    }
    if !same_payout {
        return Plan::Conflict(chain[0].clone());
    }
    if last.state.is_open() && !last.run_finished {
        return Plan::Open(last.clone());
    }
    Plan::Skip(last.clone())
}

/// The id of attempt `n` (2, 3, …) of a payout whose earlier attempts
/// failed: `BASE-rN`, or a hash of the base when that would be too long.
/// A new id, because a provider may refuse (or dedupe) a failed id.
pub fn retry_id(base: &str, attempt: u32) -> String {
    let id = format!("{base}-r{attempt}");
    if id.len() <= MAX_ID_LEN {
        return id;
    }
    let hash = hex::encode(Sha256::digest(base.as_bytes()));
    format!("rt-{}-r{attempt}", &hash[..24])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn earlier(id: i64, state: State, finished: bool) -> Earlier {
        Earlier {
            payout_id: id,
            run_id: 1,
            row: 2,
            transaction_id: format!("tx-{id}"),
            state,
            account_id: "A1".into(),
            account_key: "A1".into(),
            amount: "1000".into(),
            currency: "XOF".into(),
            method: "momo".into(),
            run_file: "payroll.csv".into(),
            run_created_at: "2026-11-02T10:00:00.000Z".into(),
            run_finished: finished,
            period: "2026-11".into(),
            at: "2026-11-02T10:00:00.000Z".into(),
            origin_run: 1,
        }
    }

    #[test]
    fn plan_for_every_state_of_the_last_attempt() {
        assert_eq!(plan("b", &[], true), Plan::New);
        for state in State::ALL {
            let e = earlier(7, state, state.is_final());
            let got = plan("b", std::slice::from_ref(&e), true);
            let want = if failed(state) {
                Plan::Retry {
                    id: "b-r2".into(),
                    of: 7,
                }
            } else if state.is_open() {
                Plan::Open(e.clone())
            } else {
                Plan::Skip(e.clone())
            };
            assert_eq!(got, want, "{state}");
            // Whatever the state, a payout that may have moved money is
            // never planned to be sent again.
            if state.may_have_paid() {
                assert!(matches!(got, Plan::Skip(_) | Plan::Open(_)), "{state}");
            }
        }
    }

    #[test]
    fn retries_follow_the_chain_and_link_the_last_attempt() {
        let chain = [
            earlier(1, State::ExecuteFailed, true),
            earlier(5, State::InitiateFailed, true),
        ];
        assert_eq!(
            plan("b", &chain, true),
            Plan::Retry {
                id: "b-r3".into(),
                of: 5
            }
        );
        let chain = [
            earlier(1, State::ExecuteFailed, true),
            earlier(5, State::Executed, true),
        ];
        assert!(matches!(plan("b", &chain, true), Plan::Skip(e) if e.payout_id == 5));
    }

    #[test]
    fn an_open_payout_of_a_finished_run_is_skipped_and_a_reused_id_conflicts() {
        let e = earlier(3, State::Initiated, true);
        assert!(matches!(
            plan("b", std::slice::from_ref(&e), true),
            Plan::Skip(_)
        ));
        for state in State::ALL.into_iter().filter(|s| !failed(*s)) {
            let e = earlier(3, state, true);
            assert!(
                matches!(plan("b", &[e], false), Plan::Conflict(_)),
                "{state}"
            );
        }
    }

    /// A corrected row of `failed.csv` (its id names a failed payout, its
    /// account or amount fixed) re-pays that payout under a linked id;
    /// after a failed retry too.
    #[test]
    fn a_corrected_row_re_pays_a_failed_payout() {
        let chain = [earlier(4, State::ExecuteFailed, true)];
        assert_eq!(
            plan("b", &chain, false),
            Plan::Retry {
                id: "b-r2".into(),
                of: 4
            }
        );
        let chain = [
            earlier(4, State::ExecuteFailed, true),
            earlier(6, State::Executed, true),
        ];
        assert!(matches!(plan("b", &chain, false), Plan::Conflict(e) if e.payout_id == 4));
    }

    #[test]
    fn retry_ids_stay_within_the_id_limit() {
        assert_eq!(retry_id("pr-2026-11-abc", 2), "pr-2026-11-abc-r2");
        let long = "x".repeat(MAX_ID_LEN);
        let id = retry_id(&long, 12);
        assert!(id.len() <= MAX_ID_LEN && id.ends_with("-r12"), "{id}");
        assert_ne!(id, retry_id(&"y".repeat(MAX_ID_LEN), 12));
    }
}
