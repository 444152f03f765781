//! Payouts that settle later (`pending` dialect) and the status call that
//! watches them: when a pending payout reaches its outcome, and what the
//! books do then. Part of the ledger (`state`), kept apart so each file
//! holds one concern.

use axum::http::StatusCode;

use super::state::{Answer, Failure, Ledger, Status, magic_failure};
use crate::provider::wire::codes;

impl Ledger {
    /// `GET /status/{transactionId}`: the current state, counting the call
    /// as a poll (which may settle a pending payout first).
    pub(crate) fn status(&mut self, id: &str) -> Answer {
        self.settle_due(id, true);
        let Some(t) = self.txns.get(id) else {
            return Answer::new(
                StatusCode::NOT_FOUND,
                codes::TRANSACTION_NOT_FOUND,
                "no transaction under this id",
            );
        };
        // The call itself succeeded; the payout's state is in the data.
        // The code repeats it (the failure code for a failed payout) for
        // clients that read only the code.
        let code = match t.failure {
            Some(f) if t.status == Status::Failed => f.code(),
            _ => self.status_word(id, t),
        };
        let data = self.record(id, t, None);
        Answer::new(StatusCode::OK, code, "transaction status").with_data(data)
    }

    /// Settles one pending payout if its time has come; `poll` counts a
    /// status call first.
    pub(super) fn settle_due(&mut self, id: &str, poll: bool) {
        let Some(settle) = self.rules.settle else {
            return;
        };
        let now = (self.clock)();
        let Some(p) = self.pending.get_mut(id) else {
            return;
        };
        if poll {
            p.polls = p.polls.saturating_add(1);
            self.dirty = true;
        }
        if settle.is_due(p.polls, now.saturating_sub(p.accepted_ms)) {
            self.settle(id);
        }
    }

    /// Settles every pending payout whose delay has passed.
    pub(super) fn settle_due_all(&mut self) {
        let Some(settle) = self.rules.settle else {
            return;
        };
        let now = (self.clock)();
        let due: Vec<Box<str>> = self
            .pending
            .iter()
            .filter(|(_, p)| settle.is_due(p.polls, now.saturating_sub(p.accepted_ms)))
            .map(|(id, _)| id.clone())
            .collect();
        for id in due {
            self.settle(&id);
        }
    }

    /// A pending payout reaches its outcome: FAILED for a magic failing
    /// account or a balance now too low, else SUCCESS with the debit (one,
    /// plus one per queued non-idempotent execute the balance allows).
    /// Debiting at settlement means a wallet only ever lowers for a
    /// payout whose status is SUCCESS.
    fn settle(&mut self, id: &str) {
        let Some(p) = self.pending.remove(id) else {
            return;
        };
        self.dirty = true;
        let now = self.now_secs();
        let Some(t) = self.txns.get_mut(id) else {
            return;
        };
        t.at = now;
        let balance = &mut self.balances[usize::from(t.wallet)];
        let failure = magic_failure(&t.account)
            .or_else(|| (*balance < t.amount).then_some(Failure::InsufficientBalance));
        if let Some(f) = failure {
            t.status = Status::Failed;
            t.failure = Some(f);
            return;
        }
        t.status = Status::Success;
        for _ in 0..=p.queued {
            if *balance < t.amount {
                break;
            }
            *balance -= t.amount;
            t.debits = t.debits.saturating_add(1);
        }
    }
}
