//! The re-run decisions (docs/rerun.md), pure functions over data:
//! - [`plan`]: what to do with a row whose transaction id an earlier run
//!   already holds — pay it (new), re-pay it under a linked id (the earlier
//!   payout failed), list it as already paid (skip), or hold it (still open
//!   in an unfinished run);
//! - [`Guard`]: the repeat guard — a row not recognised by id whose
//!   account, currency and amount match a recent payout that may have moved
//!   money, or another row of the same file, stops the run before any call.

use crate::machine::State;
use crate::store::Earlier;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

pub use crate::config::DEFAULT_REPEAT_WINDOW_DAYS;

/// Repeats listed in full; beyond, a count (the operator looks at the
/// pattern, and the list can be long when a whole payroll is repeated).
pub const MAX_REPEATS_LISTED: usize = 50;

/// Earlier payouts the repeat guard counts: every state in which money
/// moved, may move or will move when its run is resumed. Failed payouts
/// moved nothing and do not count. Wider than `machine::MAY_HAVE_PAID`:
/// a pending payout of an unfinished run is paid when that run resumes.
pub const GUARDED: &[State] = &[
    State::Pending,
    State::Initiating,
    State::Initiated,
    State::Executing,
    State::Processing,
    State::Executed,
    State::Unknown,
];

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
/// derived id; for an id from the file, only if account, amount, currency
/// and method agree).
pub fn plan(base: &str, chain: &[Earlier], same_payout: bool) -> Plan {
    let Some(last) = chain.last() else {
        return Plan::New;
    };
    if !same_payout {
        return Plan::Conflict(chain[0].clone());
    }
    if failed(last.state) {
        return Plan::Retry {
            id: retry_id(base, chain.len() as u32 + 1),
            of: last.payout_id,
        };
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

/// One row that repeats an earlier payout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    pub row: u64,
    pub account: String,
    pub amount: String,
    pub currency: String,
    pub of: RepeatOf,
}

/// What a row repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepeatOf {
    /// A payout of an earlier run.
    Run(Earlier),
    /// An earlier row of the same file.
    Row(u64),
}

impl std::fmt::Display for Repeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "row {}: account {}, {} {} ",
            self.row, self.account, self.amount, self.currency
        )?;
        match &self.of {
            RepeatOf::Run(e) => write!(
                f,
                "was already paid by run {} ({}, started {}), row {}, now {}",
                e.run_id, e.run_file, e.run_created_at, e.row, e.state
            ),
            RepeatOf::Row(r) => write!(f, "repeats row {r} of this file"),
        }
    }
}

/// The recent payouts that may have moved money, by account, currency and
/// amount.
#[derive(Debug, Default)]
pub struct Guard {
    by_key: HashMap<(String, String, String), Vec<Earlier>>,
}

impl Guard {
    /// `recent`: payouts of the runs inside the window; those not in
    /// [`GUARDED`] are ignored.
    pub fn new(recent: Vec<Earlier>) -> Guard {
        let mut by_key: HashMap<_, Vec<Earlier>> = HashMap::new();
        for e in recent.into_iter().filter(|e| GUARDED.contains(&e.state)) {
            let key = (e.account_id.clone(), e.currency.clone(), e.amount.clone());
            by_key.entry(key).or_default().push(e);
        }
        Guard { by_key }
    }

    /// The repeats of a row about to be paid (new or re-paid): earlier
    /// payouts with its account, currency and amount (other than the one it
    /// re-pays, `retry_of`), and the first identical row of the file
    /// (`same_file`).
    pub fn check(
        &self,
        row: u64,
        account: &str,
        currency: &str,
        amount: &str,
        retry_of: Option<i64>,
        same_file: Option<u64>,
    ) -> Vec<Repeat> {
        let repeat = |of| Repeat {
            row,
            account: account.to_string(),
            amount: amount.to_string(),
            currency: currency.to_string(),
            of,
        };
        let key = (
            account.to_string(),
            currency.to_string(),
            amount.to_string(),
        );
        let mut out: Vec<Repeat> = self
            .by_key
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|e| Some(e.payout_id) != retry_of)
            .map(|e| repeat(RepeatOf::Run(e.clone())))
            .collect();
        if let Some(first) = same_file {
            out.push(repeat(RepeatOf::Row(first)));
        }
        out
    }
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
            amount: "1000".into(),
            currency: "XOF".into(),
            method: "momo".into(),
            run_file: "payroll.csv".into(),
            run_created_at: "2026-11-02T10:00:00.000Z".into(),
            run_finished: finished,
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
        assert!(matches!(plan("b", &[e], false), Plan::Conflict(_)));
    }

    #[test]
    fn retry_ids_stay_within_the_id_limit() {
        assert_eq!(retry_id("pr-2026-11-abc", 2), "pr-2026-11-abc-r2");
        let long = "x".repeat(MAX_ID_LEN);
        let id = retry_id(&long, 12);
        assert!(id.len() <= MAX_ID_LEN && id.ends_with("-r12"), "{id}");
        assert_ne!(id, retry_id(&"y".repeat(MAX_ID_LEN), 12));
    }

    #[test]
    fn the_guard_counts_what_may_have_moved_money_only() {
        let guard = Guard::new(vec![
            earlier(1, State::Executed, true),
            earlier(2, State::ExecuteFailed, true),
            earlier(3, State::InitiateFailed, true),
            earlier(4, State::Unknown, true),
            earlier(5, State::Pending, false),
        ]);
        let hits = guard.check(9, "A1", "XOF", "1000", None, None);
        let ids: Vec<i64> = hits
            .iter()
            .map(|r| match &r.of {
                RepeatOf::Run(e) => e.payout_id,
                RepeatOf::Row(_) => 0,
            })
            .collect();
        assert_eq!(ids, [1, 4, 5]);
        assert!(hits[0].to_string().contains("run 1") && hits[0].to_string().contains("row 9"));
        // Another amount, currency or account is not a repeat.
        assert!(guard.check(9, "A1", "XOF", "1001", None, None).is_empty());
        assert!(guard.check(9, "A1", "GHS", "1000", None, None).is_empty());
        assert!(guard.check(9, "A2", "XOF", "1000", None, None).is_empty());
        // The payout a retry replaces is not a repeat of it.
        assert_eq!(guard.check(9, "A1", "XOF", "1000", Some(5), None).len(), 2);
        // Identical rows of one file are reported the same way.
        let same = guard.check(9, "A9", "XOF", "1", None, Some(4));
        assert_eq!(same.len(), 1);
        assert_eq!(same[0].of, RepeatOf::Row(4));
        assert!(same[0].to_string().contains("repeats row 4"));
    }
}
