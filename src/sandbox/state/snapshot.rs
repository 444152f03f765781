//! What the sandbox's books show: `GET /_sandbox/ledger` and
//! `Running::ledger` (every transaction in creation order, the wallets, the
//! requests counted, per API key by its last four characters).

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{Kind, Ledger, Txn};

/// One transaction as `GET /_sandbox/ledger` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    pub transaction_id: String,
    /// `"payout"` or `"card"`.
    pub kind: String,
    /// `INITIATED`, `SUCCESS`, `FAILED`, `REQUIRES_3DS` or (`pending`
    /// dialect) `PENDING`.
    pub status: String,
    pub amount: Decimal,
    pub currency: String,
    /// The recipient account; for a card payment, the masked card number.
    pub account_id: String,
    #[serde(default)]
    pub failure_code: Option<String>,
    /// `/initiates` calls naming this id (for a card payment: `/pay` calls),
    /// including duplicates and conflicting ones.
    pub initiate_calls: u32,
    /// `/executes` calls naming this id that were processed.
    pub execute_calls: u32,
    /// Times the wallet was debited for it: 0 or 1, except with
    /// non-idempotent execution, where every execute debits again.
    pub debits: u32,
    /// Unix time in seconds of the last change (creation, execution,
    /// settlement): the statement's date.
    #[serde(default)]
    pub at: u64,
}

/// Requests that reached a provider route, faulted or not (401, 429 and
/// injected 5xx included). The sandbox's own routes are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestCounts {
    pub initiates: u64,
    pub executes: u64,
    pub pay: u64,
    /// `GET /status/{id}` calls.
    #[serde(default)]
    pub status: u64,
    /// All provider calls (initiates + executes + pay + status).
    pub total: u64,
    /// Calls answered 429 (rate limit or a `/_sandbox/pause`).
    #[serde(default)]
    pub rate_limited: u64,
    /// Requests that reached the redirect target
    /// (`/_sandbox/redirected`): a client that follows redirects.
    #[serde(default)]
    pub redirect_hits: u64,
    /// The most provider calls that arrived within any one second (all
    /// calls, 429s included): the combined rate of every client.
    #[serde(default)]
    pub peak_per_second: u64,
}

/// The whole of `GET /_sandbox/ledger`; also returned in-process by
/// `Running::ledger`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerSnapshot {
    /// In creation order.
    pub transactions: Vec<LedgerEntry>,
    /// Balance per currency.
    pub wallets: BTreeMap<String, Decimal>,
    pub requests: RequestCounts,
    /// Provider calls per API key, by the key's last four characters
    /// (`…abcd`), whatever they were answered.
    #[serde(default, rename = "requestsByKey")]
    pub requests_by_key: BTreeMap<String, u64>,
}

impl LedgerSnapshot {
    /// The entry of one transaction id.
    pub fn get(&self, transaction_id: &str) -> Option<&LedgerEntry> {
        self.transactions
            .iter()
            .find(|t| t.transaction_id == transaction_id)
    }

    /// Provider calls made with `key` (any answer).
    pub fn requests_with_key(&self, key: &str) -> u64 {
        self.requests_by_key
            .get(&key_label(key.as_bytes()))
            .copied()
            .unwrap_or(0)
    }

    /// Total debits over all transactions.
    pub fn total_debits(&self) -> u64 {
        self.transactions.iter().map(|t| u64::from(t.debits)).sum()
    }
}

/// How the ledger names an API key: its last four characters.
pub(crate) fn key_label(key: &[u8]) -> String {
    let tail = &key[key.len().saturating_sub(4)..];
    format!("…{}", String::from_utf8_lossy(tail))
}

impl Ledger {
    /// The whole ledger, in creation order.
    pub(crate) fn snapshot(&mut self, requests: RequestCounts) -> LedgerSnapshot {
        self.settle_due_all();
        let mut entries: Vec<(&str, &Txn)> = self.txns.iter().map(|(k, t)| (&**k, t)).collect();
        entries.sort_unstable_by_key(|(_, t)| t.seq);
        let transactions = entries
            .into_iter()
            .map(|(id, t)| LedgerEntry {
                transaction_id: id.to_owned(),
                kind: match t.kind {
                    Kind::Payout => "payout".into(),
                    Kind::Card => "card".into(),
                },
                status: t.status.as_str().into(),
                amount: t.amount,
                currency: self.currencies[usize::from(t.wallet)].to_string(),
                account_id: t.account.to_string(),
                failure_code: t.failure.map(|f| f.code().to_owned()),
                initiate_calls: t.initiate_calls,
                execute_calls: t.execute_calls,
                debits: t.debits,
                at: u64::from(t.at),
            })
            .collect();
        let wallets = self
            .currencies
            .iter()
            .zip(&self.balances)
            .map(|(c, b)| (c.to_string(), *b))
            .collect();
        LedgerSnapshot {
            transactions,
            wallets,
            requests,
            requests_by_key: BTreeMap::new(),
        }
    }
}
