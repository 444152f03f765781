//! The money checks of the end-to-end tests, made against the sandbox's
//! ledger (what the provider did) and the payroll file (what was asked),
//! never against payrun's own word alone: every row paid exactly once (or,
//! under `ambiguous = hold`, at most once and reported accordingly), every
//! wallet lowered by exactly what was paid, and no debit the report does not
//! show. A payrun that reported success without paying, or paid twice, fails
//! these checks.

use payrun::sandbox::LedgerSnapshot;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;

/// One row of a payroll file, as the file says it.
#[derive(Debug, Clone)]
pub struct Row {
    pub account: String,
    pub amount: Decimal,
    pub currency: String,
}

/// The rows of a payroll file written by the tests (columns `account_id`,
/// `amount`, `currency`), read independently of payrun.
pub fn payroll_rows(file: &Path) -> Vec<Row> {
    let mut r = csv::Reader::from_path(file).unwrap();
    let headers = r.headers().unwrap().clone();
    let idx = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (a, m, c) = (idx("account_id"), idx("amount"), idx("currency"));
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            Row {
                account: rec[a].to_string(),
                amount: Decimal::from_str(&rec[m]).unwrap(),
                currency: rec[c].to_string(),
            }
        })
        .collect()
}

/// How the run treated payouts whose outcome became unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Re-sent under the same id: every row must end paid exactly once.
    Resend,
    /// Parked as `unknown`: every row paid at most once, never executed twice.
    Hold,
}

/// Checks the ledger both ways against the payroll and the report. `ctx`
/// (e.g. the seed) is printed with every failure.
pub fn check_books(
    payroll: &[Row],
    opening: &BTreeMap<String, Decimal>,
    ledger: &LedgerSnapshot,
    report: &[csv::StringRecord],
    policy: Policy,
    ctx: &str,
) {
    let payouts: Vec<_> = ledger
        .transactions
        .iter()
        .filter(|t| t.kind == "payout")
        .collect();
    assert_eq!(
        report.len(),
        payroll.len(),
        "{ctx}: one report line per payroll row"
    );
    // The report, by transaction id.
    let mut reported: HashMap<String, usize> = HashMap::new();
    for i in 0..report.len() {
        let tx = super::col(report, i, "transaction_id");
        assert!(
            reported.insert(tx.clone(), i).is_none(),
            "{ctx}: {tx} twice in the report"
        );
    }
    // The ledger, by account (every test payroll has distinct accounts).
    let mut by_account: HashMap<&str, Vec<_>> = HashMap::new();
    for t in &payouts {
        by_account
            .entry(t.account_id.as_str())
            .or_default()
            .push(*t);
    }
    assert_eq!(
        payouts.len(),
        payroll.len(),
        "{ctx}: one provider transaction per payroll row"
    );
    let mut executed_total: BTreeMap<String, Decimal> = BTreeMap::new();
    let mut unknown_total: BTreeMap<String, Decimal> = BTreeMap::new();
    let mut payroll_total: BTreeMap<String, Decimal> = BTreeMap::new();
    for row in payroll {
        *payroll_total.entry(row.currency.clone()).or_default() += row.amount;
        let entries = by_account
            .get(row.account.as_str())
            .unwrap_or_else(|| panic!("{ctx}: row {row:?} never reached the provider"));
        assert_eq!(entries.len(), 1, "{ctx}: {row:?} sent as {entries:?}");
        let t = entries[0];
        assert_eq!(
            (t.amount, t.currency.as_str()),
            (row.amount, row.currency.as_str()),
            "{ctx}: {t:?} is not what the row asked"
        );
        // No debit the report does not show, and no line without its debit.
        let i = *reported
            .get(&t.transaction_id)
            .unwrap_or_else(|| panic!("{ctx}: {t:?} is not in the report"));
        let state = super::col(report, i, "state");
        assert_eq!(
            super::col(report, i, "account_id"),
            row.account,
            "{ctx}: report line {i}"
        );
        if state == "executed" {
            assert_eq!(t.debits, 1, "{ctx}: reported executed, ledger {t:?}");
            assert_eq!(
                t.status, "SUCCESS",
                "{ctx}: reported executed, ledger {t:?}"
            );
            *executed_total.entry(row.currency.clone()).or_default() += row.amount;
        }
        match policy {
            Policy::Resend => {
                assert_eq!(t.debits, 1, "{ctx}: not paid exactly once: {t:?}");
                assert_eq!(t.status, "SUCCESS", "{ctx}: {t:?}");
                assert_eq!(state, "executed", "{ctx}: {t:?}");
            }
            Policy::Hold => {
                assert!(t.debits <= 1, "{ctx}: paid twice: {t:?}");
                assert!(
                    t.execute_calls <= 1,
                    "{ctx}: executed more than once under hold: {t:?}"
                );
                if t.debits == 0 {
                    // Never paid: must not say paid, nor failed (a crash
                    // hid the outcome; payrun cannot know it failed): it
                    // stays listed for an operator or the next run.
                    assert!(
                        state != "executed" && !state.ends_with("failed"),
                        "{ctx}: unpaid but {state}: {t:?}"
                    );
                } else {
                    assert!(
                        state == "executed" || state == "unknown",
                        "{ctx}: paid but {state}: {t:?}"
                    );
                }
                if state != "executed" {
                    *unknown_total.entry(row.currency.clone()).or_default() += row.amount;
                }
            }
        }
    }
    // Every wallet lowered by exactly what was paid.
    for (cur, open) in opening {
        let lowered = open - ledger.wallets.get(cur).copied().unwrap_or_default();
        let executed = executed_total.get(cur).copied().unwrap_or_default();
        match policy {
            Policy::Resend => assert_eq!(
                lowered,
                payroll_total.get(cur).copied().unwrap_or_default(),
                "{ctx}: {cur} wallet"
            ),
            Policy::Hold => {
                let unknown = unknown_total.get(cur).copied().unwrap_or_default();
                assert!(
                    executed <= lowered && lowered <= executed + unknown,
                    "{ctx}: {cur} wallet lowered by {lowered}, executed {executed}, unknown {unknown}"
                );
                if unknown.is_zero() {
                    assert_eq!(
                        lowered,
                        payroll_total.get(cur).copied().unwrap_or_default(),
                        "{ctx}: {cur} wallet"
                    );
                }
            }
        }
    }
}
