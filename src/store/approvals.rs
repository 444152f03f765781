//! Four eyes in the checkpoint (README, "3. Approve"): who imported a run
//! (`run_preparers`), and every approval of a run and its withdrawal
//! (`approvals`, append-only: a revocation is a row of its own, nothing is
//! deleted), with the payout set approved (`approved_payouts`). Here: the
//! types both backends hand out and take in, the digest of a payout set
//! (the same bytes on both), the figures' stored form, and the SQL both
//! write alike. Whether an approval still holds is judged by `signoff`.

use crate::machine::{ACCEPTED, State};
use crate::store::rows::Cols;
use crate::store::sqlite::state_list;
use crate::store::types::Tally;
use crate::who::Person;
use anyhow::{Context, Result, bail};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::str::FromStr;

/// What an `approvals` row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Action {
    #[default]
    Approved,
    /// The withdrawal of the approval it names (`revokes`).
    Revoked,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Approved => "approved",
            Action::Revoked => "revoked",
        }
    }

    pub fn parse(s: &str) -> Result<Action> {
        match s {
            "approved" => Ok(Action::Approved),
            "revoked" => Ok(Action::Revoked),
            _ => bail!("unknown approval action {s:?} in the database (a newer payrun wrote it?)"),
        }
    }
}

/// Count and total per currency.
pub type Figures = BTreeMap<String, Tally>;

/// One payout of a run's payout set (its accepted initiations), read in
/// payout-id order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub payout_id: i64,
    pub row: u64,
    pub transaction_id: String,
    pub account_id: String,
    pub amount: String,
    pub currency: String,
}

/// A run's payout set as it stands: what an approver approves, and what
/// the execute step compares with the approval.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayoutSet {
    pub figures: Figures,
    pub payouts: u64,
    /// SHA-256 (hex) of the set: ids, accounts, amounts and currencies.
    pub digest: String,
    /// Payouts still `pending` or `initiating`: nothing can be approved
    /// while any remain.
    pub not_initiated: u64,
}

/// Folds the items of a set, in payout-id order, into a [`PayoutSet`].
pub struct SetDigest {
    sha: Sha256,
    figures: Figures,
    payouts: u64,
    not_initiated: u64,
}

impl Default for SetDigest {
    fn default() -> Self {
        SetDigest::new()
    }
}

impl SetDigest {
    pub fn new() -> SetDigest {
        SetDigest {
            sha: Sha256::new(),
            figures: Figures::new(),
            payouts: 0,
            not_initiated: 0,
        }
    }

    /// A row of [`set_sql`]: an accepted initiation joins the set, a
    /// payout not initiated yet is counted.
    pub(crate) fn add_row(&mut self, (item, state): (Item, State)) -> Result<()> {
        if ACCEPTED.contains(&state) {
            self.add(&item)
        } else {
            self.not_initiated += 1;
            Ok(())
        }
    }

    pub fn add(&mut self, item: &Item) -> Result<()> {
        // Tab-separated, one line per payout: no field holds a tab or a
        // newline (ids, accounts, decimal amounts, currency codes).
        for (i, field) in [
            &item.transaction_id,
            &item.account_id,
            &item.amount,
            &item.currency,
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                self.sha.update(b"\t");
            }
            self.sha.update(field.as_bytes());
        }
        self.sha.update(b"\n");
        let amount = Decimal::from_str(&item.amount)
            .with_context(|| format!("corrupt amount {:?} in the database", item.amount))?;
        let t = self.figures.entry(item.currency.clone()).or_default();
        t.count += 1;
        t.total += amount;
        self.payouts += 1;
        Ok(())
    }

    pub fn finish(self) -> PayoutSet {
        PayoutSet {
            figures: self.figures,
            payouts: self.payouts,
            digest: hex::encode(self.sha.finalize()),
            not_initiated: self.not_initiated,
        }
    }
}

/// An approval or a revocation, as recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalEvent {
    pub id: i64,
    pub run_id: i64,
    pub action: Action,
    pub by: Person,
    pub at: String,
    pub file_sha256: String,
    pub period: String,
    /// The figures approved (a revocation repeats those it withdraws).
    pub figures: Figures,
    pub payouts: u64,
    pub digest: String,
    /// The run's overrides when approved, one sentence each.
    pub overrides: Vec<String>,
    /// The approval a revocation withdraws.
    pub revokes: Option<i64>,
    pub reason: String,
}

/// An approval or a revocation to record.
#[derive(Debug, Clone)]
pub struct NewApproval<'a> {
    pub run_id: i64,
    pub action: Action,
    pub by: &'a Person,
    pub file_sha256: &'a str,
    pub period: &'a str,
    /// The set shown to the approver: recorded only if the run still holds
    /// exactly it when the approval is committed.
    pub set: &'a PayoutSet,
    pub overrides: &'a [String],
    pub revokes: Option<i64>,
    pub reason: &'a str,
}

/// The person who imported a run, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preparer {
    pub person: Person,
    pub at: String,
}

/// How a payout of the approved set differs now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Approved, and no longer in the set (cancelled, or gone).
    Left {
        row: u64,
        transaction_id: String,
        state: Option<State>,
    },
    /// In the set now, not approved.
    Joined {
        row: u64,
        transaction_id: String,
        amount: String,
        currency: String,
    },
    /// Its id, account, amount or currency differs from the approved one:
    /// (field: `id`, `account`, `amount`, `currency`; approved; now).
    Altered {
        row: u64,
        transaction_id: String,
        differs: Vec<(&'static str, String, String)>,
    },
}

/// Changes listed in full; beyond, a count.
pub const CHANGES_LISTED: usize = 10;

/// The differences between an approved set and the run now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// The first [`CHANGES_LISTED`] of each kind, in payout order.
    pub listed: Vec<Change>,
    pub total: u64,
}

/// The figures' stored form: `CUR count total`, one currency a line.
pub fn figures_text(f: &Figures) -> String {
    f.iter()
        .map(|(cur, t)| format!("{cur} {} {}", t.count, t.total))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn parse_figures(text: &str) -> Result<Figures> {
    let mut out = Figures::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split(' ').collect();
        let [cur, count, total] = parts[..] else {
            bail!("corrupt approval figures {line:?} in the database");
        };
        out.insert(
            cur.to_string(),
            Tally {
                count: count.parse().context("corrupt approval count")?,
                total: Decimal::from_str(total).context("corrupt approval total")?,
            },
        );
    }
    Ok(out)
}

/// The columns of an `approvals` row, in [`approval_event`]'s order.
pub(crate) const EVENT_COLS: &str = "id, run_id, action, name, os_user, host, at, file_sha256, \
     period, figures, payouts, digest, overrides, COALESCE(revokes, 0), reason";

/// An `approvals` row (columns [`EVENT_COLS`]).
pub(crate) fn approval_event<R: Cols>(r: &R) -> Result<ApprovalEvent, R::Error> {
    let action = r.text(2)?;
    let figures = r.text(9)?;
    let revokes = r.int(13)?;
    Ok(ApprovalEvent {
        id: r.int(0)?,
        run_id: r.int(1)?,
        action: Action::parse(&action).map_err(|e| r.invalid(2, e.to_string()))?,
        by: Person {
            name: r.text(3)?,
            os_user: r.text(4)?,
            host: r.text(5)?,
        },
        at: r.text(6)?,
        file_sha256: r.text(7)?,
        period: r.text(8)?,
        figures: parse_figures(&figures).map_err(|e| r.invalid(9, e.to_string()))?,
        payouts: r.col(10)?,
        digest: r.text(11)?,
        overrides: r.text(12)?.lines().map(str::to_string).collect(),
        revokes: (revokes > 0).then_some(revokes),
        reason: r.text(14)?,
    })
}

/// A row of [`set_sql`]: the item and its state.
pub(crate) fn set_item<R: Cols>(r: &R) -> Result<(Item, State), R::Error> {
    Ok((
        Item {
            payout_id: r.int(0)?,
            row: r.col(1)?,
            transaction_id: r.text(2)?,
            account_id: r.text(3)?,
            amount: r.text(4)?,
            currency: r.text(5)?,
        },
        r.col(6)?,
    ))
}

/// A row of [`left_or_altered_sql`].
pub(crate) fn left_change<R: Cols>(r: &R) -> Result<Change, R::Error> {
    let row: u64 = r.col(0)?;
    let approved = [r.text(1)?, r.text(2)?, r.text(3)?, r.text(4)?];
    let now = [
        r.opt_text(5)?,
        r.opt_text(6)?,
        r.opt_text(7)?,
        r.opt_text(8)?,
    ];
    let state = match r.opt_text(9)? {
        Some(s) => Some(State::parse(&s).map_err(|e| r.invalid(9, e.to_string()))?),
        None => None,
    };
    let now = match now {
        [Some(a), Some(b), Some(c), Some(d)] => Some([a, b, c, d]),
        _ => None,
    };
    Ok(change_of(row, approved, now, state))
}

/// A row of [`joined_sql`].
pub(crate) fn joined_change<R: Cols>(r: &R) -> Result<Change, R::Error> {
    Ok(Change::Joined {
        row: r.col(0)?,
        transaction_id: r.text(1)?,
        amount: r.text(2)?,
        currency: r.text(3)?,
    })
}

/// The insert of an `approvals` row (`{p}` numbers the backend's
/// placeholders: `?` or `$`), `now` the backend's timestamp expression.
pub(crate) fn insert_sql(p: char, now: &str) -> String {
    format!(
        "INSERT INTO approvals (run_id, action, name, os_user, host, at, file_sha256, period,
            figures, payouts, digest, overrides, revokes, reason)
         VALUES ({p}1, {p}2, {p}3, {p}4, {p}5, {now}, {p}6, {p}7, {p}8, {p}9, {p}10, {p}11,
            {p}12, {p}13) RETURNING id"
    )
}

/// Copies the run's payout set into `approved_payouts` for approval
/// `{p}1`; `run` selects the run's payouts (alias `p`).
pub(crate) fn copy_set_sql(p: char, run: &str) -> String {
    format!(
        "INSERT INTO approved_payouts (approval_id, payout_id, row, transaction_id, account_id,
            amount, currency)
         SELECT {p}1, p.id, p.row, p.transaction_id, p.account_id, p.amount, p.currency
         FROM payouts p WHERE {run} AND p.state IN ({}) ORDER BY p.id",
        state_list(ACCEPTED)
    )
}

/// The run's payout set (alias `p`, `run` selects the run), in id order:
/// payout id, row, id, account, amount, currency, state.
pub(crate) fn set_sql(run: &str) -> String {
    format!(
        "SELECT p.id, p.row, p.transaction_id, p.account_id, p.amount, p.currency, p.state
         FROM payouts p WHERE {run} AND p.state IN ({}, {}) ORDER BY p.id",
        state_list(ACCEPTED),
        state_list(crate::machine::NOT_INITIATED)
    )
}

/// Approved payouts of approval `{p}1` that left the set or changed:
/// (row, id, account, amount, currency) approved, then the same now and
/// the state (NULL when the payout is gone). `what` is `count(*)` or the
/// columns with `ORDER BY`/`LIMIT`.
pub(crate) fn left_or_altered_sql(p: char, count: bool) -> String {
    let (select, tail) = if count {
        ("count(*)".to_string(), String::new())
    } else {
        (
            "a.row, a.transaction_id, a.account_id, a.amount, a.currency, p.transaction_id, \
             p.account_id, p.amount, p.currency, p.state"
                .to_string(),
            format!(" ORDER BY a.payout_id LIMIT {CHANGES_LISTED}"),
        )
    };
    format!(
        "SELECT {select} FROM approved_payouts a LEFT JOIN payouts p ON p.id = a.payout_id
         WHERE a.approval_id = {p}1 AND (p.id IS NULL OR p.state NOT IN ({})
            OR p.transaction_id <> a.transaction_id OR p.account_id <> a.account_id
            OR p.amount <> a.amount OR p.currency <> a.currency){tail}",
        state_list(ACCEPTED)
    )
}

/// Payouts of the set now (alias `p`, `run` selects the run) that approval
/// `{p}1` did not cover: (row, id, amount, currency).
pub(crate) fn joined_sql(p: char, run: &str, count: bool) -> String {
    let (select, tail) = if count {
        ("count(*)".to_string(), String::new())
    } else {
        (
            "p.row, p.transaction_id, p.amount, p.currency".to_string(),
            format!(" ORDER BY p.id LIMIT {CHANGES_LISTED}"),
        )
    };
    format!(
        "SELECT {select} FROM payouts p WHERE {run} AND p.state IN ({}) AND NOT EXISTS (
            SELECT 1 FROM approved_payouts a WHERE a.approval_id = {p}1 AND a.payout_id = p.id){tail}",
        state_list(ACCEPTED)
    )
}

/// The change of an approved payout (`approved`: id, account, amount,
/// currency) that is `now` that (absent: gone) in `state`.
fn change_of(
    row: u64,
    approved: [String; 4],
    now: Option<[String; 4]>,
    state: Option<State>,
) -> Change {
    let [tx, account, amount, currency] = approved;
    let Some([tx2, account2, amount2, currency2]) =
        now.filter(|_| state.is_some_and(|s| ACCEPTED.contains(&s)))
    else {
        return Change::Left {
            row,
            transaction_id: tx,
            state,
        };
    };
    let mut differs = Vec::new();
    for (name, a, b) in [
        ("id", &tx, &tx2),
        ("account", &account, &account2),
        ("amount", &amount, &amount2),
        ("currency", &currency, &currency2),
    ] {
        if a != b {
            differs.push((name, a.clone(), b.clone()));
        }
    }
    Change::Altered {
        row,
        transaction_id: tx,
        differs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64, amount: &str) -> Item {
        Item {
            payout_id: id,
            row: id as u64 + 1,
            transaction_id: format!("tx-{id}"),
            account_id: format!("acc{id}"),
            amount: amount.into(),
            currency: "XOF".into(),
        }
    }

    fn set(items: &[Item]) -> PayoutSet {
        let mut d = SetDigest::new();
        for i in items {
            d.add(i).unwrap();
        }
        d.finish()
    }

    #[test]
    fn the_digest_sees_every_field_and_the_figures_add_up() {
        let base = set(&[item(1, "100"), item(2, "250.5")]);
        assert_eq!(base.payouts, 2);
        assert_eq!(
            base.figures["XOF"].total,
            Decimal::from_str("350.5").unwrap()
        );
        assert_eq!(base.digest.len(), 64);
        let mut other = item(2, "250.5");
        other.account_id = "acc9".into();
        assert_ne!(set(&[item(1, "100"), other]).digest, base.digest);
        assert_ne!(set(&[item(1, "100"), item(2, "250.6")]).digest, base.digest);
        assert_ne!(set(&[item(1, "100")]).digest, base.digest);
        assert_eq!(set(&[item(1, "100"), item(2, "250.5")]), base);
        assert!(SetDigest::new().add(&item(3, "x")).is_err());
    }

    #[test]
    fn figures_round_trip() {
        let f = set(&[item(1, "100"), item(2, "2.25")]).figures;
        assert_eq!(figures_text(&f), "XOF 2 102.25");
        assert_eq!(parse_figures(&figures_text(&f)).unwrap(), f);
        assert!(parse_figures("XOF two 3").is_err());
    }

    #[test]
    fn a_change_names_what_differs() {
        let approved =
            || -> [String; 4] { ["tx-1".into(), "acc1".into(), "100".into(), "XOF".into()] };
        let gone = change_of(2, approved(), None, None);
        assert_eq!(
            gone,
            Change::Left {
                row: 2,
                transaction_id: "tx-1".into(),
                state: None
            }
        );
        let cancelled = change_of(2, approved(), Some(approved()), Some(State::Cancelled));
        assert!(matches!(
            cancelled,
            Change::Left {
                state: Some(State::Cancelled),
                ..
            }
        ));
        let mut now = approved();
        now[2] = "120".into();
        let altered = change_of(2, approved(), Some(now), Some(State::Initiated));
        assert_eq!(
            altered,
            Change::Altered {
                row: 2,
                transaction_id: "tx-1".into(),
                differs: vec![("amount", "100".into(), "120".into())]
            }
        );
    }
}
