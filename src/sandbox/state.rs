//! The sandbox's books: every transaction it has seen, the wallet
//! balances, and the business rules of `/initiates`, `/executes`, `/pay` and
//! the 3-D Secure step. Everything here is synchronous and runs under one
//! mutex held for a few microseconds, so each call is atomic: it either
//! happened entirely (record written, wallet debited) or not at all. The
//! HTTP layer (and its faults) wraps these rules; it never touches money.
//!
//! Records are compact (about 90 bytes plus the two id strings) so a run of
//! a million payouts fits in a few hundred megabytes.

pub mod magic;
mod snapshot;

use std::collections::{BTreeMap, HashMap};

use axum::http::StatusCode;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::dialect::{Rules, codes as dialect_codes};
use super::faults::Ambiguity;
use super::fields::{Fingerprint, Initiate, Pay};
use crate::provider::wire::codes;
use magic::magic_ambiguity;
pub(super) use magic::magic_failure;
pub(crate) use magic::{always_500, initiate_refused};
pub(crate) use snapshot::key_label;
pub use snapshot::{LedgerEntry, LedgerSnapshot, RequestCounts};

/// What a transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Payout,
    Card,
}

/// Transaction states as the provider names them in `data.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Initiated,
    Success,
    Failed,
    Requires3ds,
    /// Accepted by `/executes` in the `pending` dialect, not settled yet.
    Pending,
}

impl Status {
    pub(super) const ALL: [Status; 5] = [
        Status::Initiated,
        Status::Success,
        Status::Failed,
        Status::Requires3ds,
        Status::Pending,
    ];

    pub(super) fn as_str(self) -> &'static str {
        match self {
            Status::Initiated => "INITIATED",
            Status::Success => "SUCCESS",
            Status::Failed => "FAILED",
            Status::Requires3ds => "REQUIRES_3DS",
            Status::Pending => "PENDING",
        }
    }
}

/// Why a transaction failed (`data.failureCode`, and the `code` of the
/// answer that failed it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    InsufficientBalance,
    RecipientNotFound,
    LimitExceeded,
    AuthenticationFailed,
}

impl Failure {
    pub(super) const ALL: [Failure; 4] = [
        Failure::InsufficientBalance,
        Failure::RecipientNotFound,
        Failure::LimitExceeded,
        Failure::AuthenticationFailed,
    ];

    pub(super) fn code(self) -> &'static str {
        match self {
            Failure::InsufficientBalance => codes::INSUFFICIENT_BALANCE,
            Failure::RecipientNotFound => codes::RECIPIENT_NOT_FOUND,
            Failure::LimitExceeded => codes::LIMIT_EXCEEDED,
            Failure::AuthenticationFailed => codes::AUTHENTICATION_FAILED,
        }
    }

    fn message(self) -> &'static str {
        match self {
            Failure::InsufficientBalance => "the wallet balance is lower than the amount",
            Failure::RecipientNotFound => "the recipient account does not exist",
            Failure::LimitExceeded => "the recipient's limit is exceeded",
            Failure::AuthenticationFailed => "the payer failed 3-D Secure authentication",
        }
    }
}

/// One transaction. Kept small: a million of them must fit comfortably.
#[derive(Debug)]
pub(super) struct Txn {
    pub(super) amount: Decimal,
    pub(super) fingerprint: Fingerprint,
    /// The recipient account, or for a card payment the masked card.
    pub(super) account: Box<str>,
    /// Creation order, for a stable ledger listing.
    pub(super) seq: u64,
    pub(super) initiate_calls: u32,
    pub(super) execute_calls: u32,
    pub(super) debits: u32,
    /// Unix time in seconds of the last change (the statement's date);
    /// u32 keeps the record small and lasts until 2106.
    pub(super) at: u32,
    /// Index into the wallets.
    pub(super) wallet: u16,
    pub(super) kind: Kind,
    pub(super) status: Status,
    pub(super) failure: Option<Failure>,
}

/// A payout accepted as pending (`pending` dialect), until it settles.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PendingInfo {
    /// Unix time in milliseconds of the acceptance.
    pub(super) accepted_ms: u64,
    /// `GET /status` calls seen for it.
    pub(super) polls: u32,
    /// Further `/executes` received meanwhile: with non-idempotent
    /// execution, each is one more debit at settlement.
    pub(super) queued: u32,
}

/// The outcome of one call, before it becomes an HTTP answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    pub data: Option<Value>,
    /// Set when a magic account asks for an ambiguous answer.
    pub ambiguity: Option<Ambiguity>,
}

impl Answer {
    pub(crate) fn new(
        status: StatusCode,
        code: &'static str,
        message: impl Into<String>,
    ) -> Answer {
        Answer {
            status,
            code,
            message: message.into(),
            data: None,
            ambiguity: None,
        }
    }

    pub(super) fn with_data(mut self, data: Value) -> Answer {
        self.data = Some(data);
        self
    }
}

/// What the 3-D Secure page needs to know about a card payment.
pub(crate) struct CardView {
    pub amount: Decimal,
    pub currency: String,
    pub masked_card: String,
    pub status: &'static str,
}

/// All transactions and wallets.
pub(crate) struct Ledger {
    pub(super) txns: HashMap<Box<str>, Txn>,
    pub(super) currencies: Vec<Box<str>>,
    pub(super) balances: Vec<Decimal>,
    pub(super) next_seq: u64,
    /// Payouts accepted as pending, until they settle.
    pub(super) pending: HashMap<Box<str>, PendingInfo>,
    pub(super) rules: Rules,
    /// Set by every change, cleared once the state file is written.
    pub(super) dirty: bool,
    /// Unix time in milliseconds; replaceable in tests.
    pub(super) clock: fn() -> u64,
}

/// Unix time in milliseconds from the system clock.
pub(super) fn system_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl Ledger {
    /// `wallets` are (currency, opening balance); at most 65 535 of them.
    pub(crate) fn new(wallets: &BTreeMap<String, Decimal>, rules: Rules) -> anyhow::Result<Ledger> {
        if wallets.len() > usize::from(u16::MAX) {
            anyhow::bail!("too many wallets ({})", wallets.len());
        }
        Ok(Ledger {
            txns: HashMap::new(),
            currencies: wallets.keys().map(|c| c.as_str().into()).collect(),
            balances: wallets.values().copied().collect(),
            next_seq: 0,
            pending: HashMap::new(),
            rules,
            dirty: false,
            clock: system_ms,
        })
    }

    /// Whether something changed since the last `take_dirty`.
    pub(crate) fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    pub(super) fn now_secs(&self) -> u32 {
        u32::try_from((self.clock)() / 1000).unwrap_or(u32::MAX)
    }

    /// `POST /_sandbox/topup`: adds to a wallet, opening it if needed.
    /// Returns the new balance, or `None` if it would overflow.
    pub(crate) fn top_up(&mut self, currency: &str, amount: Decimal) -> Option<Decimal> {
        let i = match self.wallet(currency) {
            Some(i) => usize::from(i),
            None => {
                if self.currencies.len() >= usize::from(u16::MAX) {
                    return None;
                }
                self.currencies.push(currency.into());
                self.balances.push(Decimal::ZERO);
                self.currencies.len() - 1
            }
        };
        let new = self.balances[i].checked_add(amount)?;
        self.balances[i] = new;
        self.dirty = true;
        Some(new)
    }

    /// The wallet index of a currency, if the merchant has that wallet.
    pub(crate) fn wallet(&self, currency: &str) -> Option<u16> {
        self.currencies
            .iter()
            .position(|c| &**c == currency)
            .and_then(|i| u16::try_from(i).ok())
    }

    pub(super) fn record(&self, id: &str, t: &Txn, redirect_base: Option<&str>) -> Value {
        let mut m = Map::new();
        m.insert("transactionId".into(), json!(id));
        m.insert("amount".into(), json!(t.amount.to_string()));
        m.insert(
            "currency".into(),
            json!(&*self.currencies[usize::from(t.wallet)]),
        );
        match t.kind {
            Kind::Payout => m.insert("accountId".into(), json!(&*t.account)),
            Kind::Card => m.insert("card".into(), json!(&*t.account)),
        };
        m.insert("status".into(), json!(self.status_word(id, t)));
        if let Some(f) = t.failure {
            m.insert("failureCode".into(), json!(f.code()));
        }
        if t.kind == Kind::Card
            && t.status == Status::Requires3ds
            && let Some(base) = redirect_base
        {
            m.insert("redirectUrl".into(), json!(redirect_url(base, id)));
        }
        Value::Object(m)
    }

    /// The status as answered: a pending payout that was polled at least
    /// once says `PROCESSING`, so clients meet both not-final words.
    pub(super) fn status_word(&self, id: &str, t: &Txn) -> &'static str {
        match self.pending.get(id) {
            Some(p) if t.status == Status::Pending && p.polls > 0 => dialect_codes::PROCESSING,
            _ => t.status.as_str(),
        }
    }

    /// Adds a new transaction (the caller checked the id is free) and
    /// returns its record.
    fn insert(&mut self, id: &str, mut txn: Txn, redirect_base: Option<&str>) -> Value {
        txn.seq = self.next_seq;
        txn.at = self.now_secs();
        self.dirty = true;
        self.next_seq += 1;
        self.txns.insert(id.into(), txn);
        self.record(id, &self.txns[id], redirect_base)
    }

    /// `POST /initiates`, once the body is valid, its currency has a wallet
    /// and its payout method exists.
    pub(crate) fn initiate(&mut self, req: &Initiate, wallet: u16) -> Answer {
        let id = req.request.transaction_id.as_str();
        if let Some(t) = self.txns.get_mut(id) {
            t.initiate_calls = t.initiate_calls.saturating_add(1);
            self.dirty = true;
            if self.rules.repeat_conflicts {
                // MTN MoMo style: any reuse of a reference id is refused,
                // same body or not, and nothing tells the two apart.
                return Answer::new(
                    StatusCode::CONFLICT,
                    dialect_codes::RESOURCE_ALREADY_EXIST,
                    "a resource with this transactionId already exists",
                );
            }
            let same = t.kind == Kind::Payout && t.fingerprint == req.fingerprint;
            let t = &self.txns[id];
            return if same {
                Answer::new(
                    StatusCode::OK,
                    codes::DUPLICATE_IGNORED,
                    "a payout with this transactionId and this body exists; nothing was changed",
                )
                .with_data(self.record(id, t, None))
            } else {
                Answer::new(
                    StatusCode::CONFLICT,
                    codes::DUPLICATE_TRANSACTION_ID,
                    "this transactionId is already used by a different request",
                )
            };
        }
        let txn = Txn {
            amount: req.amount,
            fingerprint: req.fingerprint,
            account: req.request.account_id.as_str().into(),
            seq: 0,
            initiate_calls: 1,
            execute_calls: 0,
            debits: 0,
            at: 0,
            wallet,
            kind: Kind::Payout,
            status: Status::Initiated,
            failure: None,
        };
        let data = self.insert(id, txn, None);
        Answer::new(
            StatusCode::CREATED,
            codes::INITIATED,
            "payout initiated; call /executes to complete it",
        )
        .with_data(data)
    }

    /// `POST /executes`. By default the first call settles the payout for
    /// good: SUCCESS (debited once) or FAILED (nothing debited); a repeated
    /// call never debits and replays the outcome. The dialect rules change
    /// this: `pending` accepts first and settles later (`settle`),
    /// `conflict-on-repeat` answers a repeat of a paid payout 409, and
    /// non-idempotent execution debits on every call.
    pub(crate) fn execute(&mut self, id: &str) -> Answer {
        self.settle_due(id, false);
        let now = self.now_secs();
        let rules = self.rules;
        let Some(t) = self.txns.get_mut(id) else {
            return Answer::new(
                StatusCode::NOT_FOUND,
                codes::TRANSACTION_NOT_FOUND,
                "no payout was initiated under this transactionId",
            );
        };
        if t.kind != Kind::Payout {
            return Answer::new(
                StatusCode::NOT_FOUND,
                codes::TRANSACTION_NOT_FOUND,
                "this transactionId is a card payment, not a payout",
            );
        }
        self.dirty = true;
        t.execute_calls = t.execute_calls.saturating_add(1);
        let first = t.execute_calls == 1;
        let mut ambiguity = None;
        let mut with_data = true;
        let (status, code, message) = match t.status {
            Status::Success if rules.non_idempotent => {
                let balance = &mut self.balances[usize::from(t.wallet)];
                if *balance < t.amount {
                    let f = Failure::InsufficientBalance;
                    (StatusCode::UNPROCESSABLE_ENTITY, f.code(), f.message())
                } else {
                    *balance -= t.amount;
                    t.debits = t.debits.saturating_add(1);
                    t.at = now;
                    (StatusCode::OK, codes::SUCCESS, "payout executed")
                }
            }
            Status::Success if rules.repeat_conflicts => {
                with_data = false;
                (
                    StatusCode::CONFLICT,
                    codes::ALREADY_EXECUTED,
                    "this payout was already executed",
                )
            }
            Status::Success => (
                StatusCode::OK,
                codes::ALREADY_EXECUTED,
                "this payout was already executed; nothing was debited again",
            ),
            Status::Failed | Status::Requires3ds => {
                // Replays the failure, with the failure's code: never
                // ALREADY_EXECUTED, which a client may read as "paid".
                let f = t.failure.unwrap_or(Failure::RecipientNotFound);
                (StatusCode::UNPROCESSABLE_ENTITY, f.code(), f.message())
            }
            Status::Pending => {
                let p = self.pending.entry(id.into()).or_default();
                if rules.non_idempotent {
                    p.queued = p.queued.saturating_add(1);
                }
                (
                    StatusCode::ACCEPTED,
                    dialect_codes::PENDING,
                    "the payout is being processed",
                )
            }
            Status::Initiated => {
                let balance = &mut self.balances[usize::from(t.wallet)];
                let magic = magic_failure(&t.account);
                let short = (*balance < t.amount).then_some(Failure::InsufficientBalance);
                // A pending provider checks the balance at once but hears
                // about the recipient from the network later.
                let failure = if rules.settle.is_some() {
                    short
                } else {
                    magic.or(short)
                };
                t.at = now;
                match failure {
                    Some(f) => {
                        t.status = Status::Failed;
                        t.failure = Some(f);
                        if first {
                            ambiguity = magic_ambiguity(&t.account);
                        }
                        (StatusCode::UNPROCESSABLE_ENTITY, f.code(), f.message())
                    }
                    None if rules.settle.is_some() => {
                        t.status = Status::Pending;
                        self.pending.insert(
                            id.into(),
                            PendingInfo {
                                accepted_ms: (self.clock)(),
                                polls: 0,
                                queued: 0,
                            },
                        );
                        if first {
                            ambiguity = magic_ambiguity(&t.account);
                        }
                        (
                            StatusCode::ACCEPTED,
                            dialect_codes::PENDING,
                            "payout accepted; poll GET /status/{transactionId} for the outcome",
                        )
                    }
                    None => {
                        *balance -= t.amount;
                        t.debits += 1;
                        t.status = Status::Success;
                        if first {
                            ambiguity = magic_ambiguity(&t.account);
                        }
                        (StatusCode::OK, codes::SUCCESS, "payout executed")
                    }
                }
            }
        };
        let mut answer = Answer::new(status, code, message);
        if with_data {
            let t = &self.txns[id];
            let mut data = self.record(id, t, None);
            if code == codes::ALREADY_EXECUTED || (t.status == Status::Failed && !first) {
                data["alreadyExecuted"] = json!(true);
            }
            answer = answer.with_data(data);
        }
        answer.ambiguity = ambiguity;
        answer
    }

    /// `POST /pay`, once the body is valid and its currency has a wallet.
    /// An enrolled card waits for 3-D Secure; nothing moves until then.
    pub(crate) fn pay(&mut self, req: &Pay, wallet: u16, redirect_base: &str) -> Answer {
        let id = req.transaction_id.as_str();
        if let Some(t) = self.txns.get_mut(id) {
            t.initiate_calls = t.initiate_calls.saturating_add(1);
            self.dirty = true;
            let same = t.kind == Kind::Card && t.fingerprint == req.fingerprint;
            let t = &self.txns[id];
            return if same {
                Answer::new(
                    StatusCode::OK,
                    codes::DUPLICATE_IGNORED,
                    "a payment with this transaction_id and this body exists; nothing was changed",
                )
                .with_data(self.record(id, t, Some(redirect_base)))
            } else {
                Answer::new(
                    StatusCode::CONFLICT,
                    codes::DUPLICATE_TRANSACTION_ID,
                    "this transaction_id is already used by a different request",
                )
            };
        }
        let txn = Txn {
            amount: req.amount,
            fingerprint: req.fingerprint,
            account: req.masked_card.as_str().into(),
            seq: 0,
            initiate_calls: 1,
            execute_calls: 0,
            debits: 0,
            at: 0,
            wallet,
            kind: Kind::Card,
            status: Status::Requires3ds,
            failure: None,
        };
        let data = self.insert(id, txn, Some(redirect_base));
        Answer::new(
            StatusCode::CREATED,
            codes::REQUIRES_3DS,
            "redirect the payer to data.redirectUrl to complete 3-D Secure",
        )
        .with_data(data)
    }

    /// A card payment, for the 3-D Secure page.
    pub(crate) fn card(&self, id: &str) -> Option<CardView> {
        let t = self.txns.get(id).filter(|t| t.kind == Kind::Card)?;
        Some(CardView {
            amount: t.amount,
            currency: self.currencies[usize::from(t.wallet)].to_string(),
            masked_card: t.account.to_string(),
            status: t.status.as_str(),
        })
    }

    /// The payer's 3-D Secure answer. Approval credits the merchant's
    /// wallet once; a payment no longer waiting is left as it is.
    pub(crate) fn complete_3ds(&mut self, id: &str, approve: bool) -> Option<CardView> {
        let t = self
            .txns
            .get_mut(id)
            .filter(|t| t.kind == Kind::Card && t.status == Status::Requires3ds);
        if let Some(t) = t {
            let balance = &mut self.balances[usize::from(t.wallet)];
            t.at = u32::try_from((self.clock)() / 1000).unwrap_or(u32::MAX);
            self.dirty = true;
            match balance.checked_add(t.amount).filter(|_| approve) {
                Some(credited) => {
                    *balance = credited;
                    t.status = Status::Success;
                }
                None => {
                    t.status = Status::Failed;
                    t.failure = Some(Failure::AuthenticationFailed);
                }
            }
        }
        self.card(id)
    }
}

/// Where a payer completes 3-D Secure for a payment.
pub(crate) fn redirect_url(base: &str, id: &str) -> String {
    format!("{base}/_sandbox/3ds/{}", super::card::encode_segment(id))
}

#[cfg(test)]
mod tests;
