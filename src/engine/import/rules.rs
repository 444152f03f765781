//! The re-run rules applied to each row of an import, batch by batch (docs/rerun.md):
//! each valid row gets its stable id (`identity`, over its canonical
//! account key), `repeat::plan` decides whether it is paid, re-paid after a
//! failure, listed as already paid or refused, and every row about to be
//! paid is looked up by person (`Import::same_person_many`, one query per
//! batch of rows) and judged by `guard`. What they found decides the
//! import's verdict.

use super::super::guard::{self, Candidate, MAX_REPEATS_LISTED};
use super::super::identity::{self, Batch, Occurrences, PayoutKey};
use super::super::repeat::{self, Plan};
use super::{Imported, OpenElsewhere, Repeats};
use crate::payout::Payout;
use crate::store::{Earlier, Import, NewOverride, OverrideKind, PersonQuery, RetryLink};
use anyhow::{Context, Result};
use std::collections::BTreeMap;

/// Rows of a `failed.csv` that name a payout which did not fail: the first
/// [`MAX_REPEATS_LISTED`] as sentences, and how many in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotFailed {
    pub listed: Vec<String>,
    pub total: u64,
}

/// The re-run rules of one import, and what they found.
pub(super) struct Rules<'a> {
    pub(super) batch: &'a Batch,
    /// `--allow-repeats`: repeats are paid, each recorded as an override.
    pub(super) allow_repeats: bool,
    pub(super) window_days: u32,
    occurrences: Occurrences,
    pub(super) repeats: Repeats,
    /// Rows to pay (new or re-paid).
    pub(super) fresh: u64,
    /// Rows recognised as payouts of an earlier run, per run.
    matched: BTreeMap<i64, u64>,
    /// Rows still open in an unfinished run, per run: (count, first row,
    /// that run's file and start).
    open: BTreeMap<i64, (u64, u64, String, String)>,
    /// Rows recognised as an earlier payout that did not fail: refused
    /// when the file is a `failed.csv`, which holds failed rows only.
    recognised: NotFailed,
}

impl<'a> Rules<'a> {
    pub(super) fn new(
        batch: &'a Batch,
        allow_repeats: bool,
        window_days: u32,
    ) -> Result<Rules<'a>> {
        Ok(Rules {
            batch,
            allow_repeats,
            window_days,
            occurrences: Occurrences::new()?,
            repeats: Repeats {
                listed: Vec::new(),
                total: 0,
            },
            fresh: 0,
            matched: BTreeMap::new(),
            open: BTreeMap::new(),
            recognised: NotFailed::default(),
        })
    }

    /// Records a batch of valid payouts, in file order: each paid,
    /// re-paid, skipped or refused. The database is asked once per batch
    /// (the earlier payouts holding the rows' ids, then the guard's
    /// look-ups of the rows to pay), not once per row: on PostgreSQL each
    /// question is a round trip. The rows' look-ups never see this
    /// import's own payouts, so asking them together decides each row as
    /// asking them one by one would.
    pub(super) fn add_batch(&mut self, imp: &mut Import<'_>, ps: &[Payout]) -> Result<()> {
        let mut rows = Vec::with_capacity(ps.len());
        for p in ps {
            rows.push(self.identify(p)?);
        }
        chains(imp, &mut rows)?;
        let planned: Vec<Planned> = rows.into_iter().map(|r| self.plan(r)).collect();
        let queries: Vec<PersonQuery<'_>> = planned
            .iter()
            .filter_map(|r| r.pay.as_ref().map(|pay| r.query(pay, self.window_days)))
            .collect();
        let mut found = imp.same_person_many(&queries)?.into_iter();
        for r in planned {
            match r.pay {
                Some(_) => {
                    let earlier = found.next().context("a look-up missing from the batch")?;
                    self.pay(imp, r, earlier)?;
                }
                None => self.hold(imp, r)?,
            }
        }
        Ok(())
    }

    /// A row's stable id: its occurrence in the file numbers it among
    /// identical payouts (and names the first of them).
    fn identify<'p>(&mut self, p: &'p Payout) -> Result<Identified<'p>> {
        let amount = p.amount.normalize().to_string();
        let key = PayoutKey {
            account: &p.account_key,
            amount: &amount,
            currency: &p.currency,
            method: &p.payout_method_id,
        };
        let (occurrence, same_file) = self.occurrences.next(&key, p.row)?;
        let base = match &p.transaction_id {
            Some(t) => t.clone(),
            None => identity::derived_id(&key, self.batch, occurrence),
        };
        Ok(Identified {
            p,
            amount,
            same_file,
            base,
            chain: Vec::new(),
        })
    }

    /// What `repeat::plan` decides for a row, and for a row to pay, its id,
    /// link and the period the guard compares it in.
    fn plan<'p>(&self, r: Identified<'p>) -> Planned<'p> {
        let p = r.p;
        let same_payout = r.chain.first().is_none_or(|e| {
            e.account_key == p.account_key
                && e.amount == r.amount
                && e.currency == p.currency
                && e.method == p.payout_method_id
        });
        let plan = repeat::plan(&r.base, &r.chain, same_payout);
        let pay = match &plan {
            Plan::New => Some(Pay {
                id: r.base.clone(),
                link: None,
                period: self.batch.period.clone(),
            }),
            // A re-payment belongs to the period and the request of the
            // payout it re-pays: that request's other rows are not
            // repeats of it.
            Plan::Retry { id, of } => Some(Pay {
                id: id.clone(),
                link: Some(RetryLink {
                    of: *of,
                    origin_run: r.chain[0].origin_run,
                }),
                period: r.chain[0].period.clone(),
            }),
            Plan::Skip(_) | Plan::Open(_) | Plan::Conflict(_) => None,
        };
        Planned { row: r, plan, pay }
    }

    /// A row not paid: recorded as skipped (paid or open elsewhere) or
    /// refused (its id holds another payout).
    fn hold(&mut self, imp: &mut Import<'_>, r: Planned<'_>) -> Result<()> {
        let (p, base) = (r.row.p, &r.row.base);
        match r.plan {
            Plan::Skip(e) => {
                self.recognise(p.row, base, &e);
                *self.matched.entry(e.run_id).or_default() += 1;
                imp.add_skipped(p.row, e.payout_id)
            }
            Plan::Open(e) => {
                self.recognise(p.row, base, &e);
                *self.matched.entry(e.run_id).or_default() += 1;
                let slot = self.open.entry(e.run_id).or_insert((
                    0,
                    p.row,
                    e.run_file.clone(),
                    e.run_created_at.clone(),
                ));
                slot.0 += 1;
                imp.add_skipped(p.row, e.payout_id)
            }
            Plan::Conflict(e) => {
                imp.conflict(format!(
                    "row {}: transaction_id {base:?} is already used by run {} ({}, row {}) for \
                     another payout (account {}, {} {}); a transaction id pays once, ever: give \
                     this row a new transaction_id",
                    p.row, e.run_id, e.run_file, e.row, e.account_id, e.amount, e.currency
                ));
                Ok(())
            }
            Plan::New | Plan::Retry { .. } => unreachable!("a row to pay is not held"),
        }
    }

    /// A row to pay (new or re-paid): judged by the guard against the
    /// earlier payouts to its person (`found`), then recorded.
    fn pay(&mut self, imp: &mut Import<'_>, r: Planned<'_>, found: Vec<Earlier>) -> Result<()> {
        let (p, amount) = (r.row.p, &r.row.amount);
        let Pay { id, link, period } = r.pay.expect("a row to pay");
        self.fresh += 1;
        let candidate = Candidate {
            row: p.row,
            account: p.account_given.as_deref().unwrap_or(&p.account_id),
            amount,
            currency: &p.currency,
            period: &period,
        };
        let same_file = r.row.same_file.filter(|_| link.is_none());
        let repeats = guard::judge(&candidate, found, same_file);
        let payout_id = match link {
            None => imp.add(p, &id)?,
            Some(link) => imp.add_retry(p, &id, link)?,
        };
        let Some(first) = repeats.first() else {
            return Ok(());
        };
        if self.allow_repeats {
            if let Some(payout_id) = payout_id {
                imp.add_override(NewOverride {
                    kind: OverrideKind::SecondPayment,
                    row: p.row,
                    payout_id: Some(payout_id),
                    earlier_id: first.of.earlier().map(|e| e.payout_id),
                    currency: Some(p.currency.clone()),
                    amount: Some(amount.clone()),
                    detail: guard::allowed(first),
                })?;
            }
            return Ok(());
        }
        self.repeats.total += repeats.len() as u64;
        let room = MAX_REPEATS_LISTED.saturating_sub(self.repeats.listed.len());
        self.repeats.listed.extend(repeats.into_iter().take(room));
        Ok(())
    }

    /// Notes a row (transaction id `base`) recognised as earlier payout
    /// `e` (paid, held or open): itself, or its re-payment.
    fn recognise(&mut self, row: u64, base: &str, e: &Earlier) {
        self.recognised.total += 1;
        if self.recognised.listed.len() < MAX_REPEATS_LISTED {
            let how = if e.transaction_id == base {
                format!("it is {}", e.state)
            } else {
                format!("it was paid again as {}, now {}", e.transaction_id, e.state)
            };
            self.recognised.listed.push(format!(
                "row {row}: transaction {base} did not fail: {how} (run {}, {}, row {})",
                e.run_id, e.run_file, e.row
            ));
        }
    }

    /// After every row: `Some` when the import must not be committed.
    /// `failed_file`: the file is a `failed.csv` (it has the column payrun
    /// adds to one), whose every row must re-pay a failed payout.
    pub(super) fn verdict(
        &self,
        imp: &Import<'_>,
        new_run: bool,
        given: &str,
        failed_file: bool,
    ) -> Result<Option<Result<Imported>>> {
        if failed_file && self.recognised.total > 0 {
            return Ok(Some(Ok(Imported::NotFailed(self.recognised.clone()))));
        }
        if self.fresh == 0 && self.matched.len() == 1 && self.open.len() == 1 {
            let (&run_id, &rows) = self.matched.iter().next().expect("one run");
            if self.open.contains_key(&run_id) && imp.payouts_of(run_id)? == rows {
                return Ok(Some(Ok(Imported::CopyOf(run_id))));
            }
        }
        if !self.open.is_empty() && !new_run {
            let (&run_id, (rows, first_row, file_path, created_at)) =
                self.open.iter().next().expect("one run");
            return Ok(Some(Err(OpenElsewhere {
                run_id,
                file_path: file_path.clone(),
                created_at: created_at.clone(),
                rows: *rows,
                first_row: *first_row,
                given: given.to_string(),
            }
            .into())));
        }
        if self.repeats.total > 0 {
            return Ok(Some(Ok(Imported::Repeats(self.repeats.clone()))));
        }
        Ok(None)
    }
}

/// A valid row with its stable id, and the earlier payouts holding that id
/// and then its retry ids (oldest first: the chain `repeat::plan` reads).
struct Identified<'p> {
    p: &'p Payout,
    /// Normalised decimal.
    amount: String,
    /// The first row of the file with the same payout, if not this one.
    same_file: Option<u64>,
    base: String,
    chain: Vec<Earlier>,
}

/// A row and what `repeat::plan` decided for it.
struct Planned<'p> {
    row: Identified<'p>,
    plan: Plan,
    /// Set for a row to pay.
    pay: Option<Pay>,
}

/// How a row is paid: its id, the failed payout it re-pays, the period
/// the guard compares it in.
struct Pay {
    id: String,
    link: Option<RetryLink>,
    period: String,
}

impl Planned<'_> {
    /// The guard's look-up of a row to pay.
    fn query<'q>(&'q self, pay: &'q Pay, window_days: u32) -> PersonQuery<'q> {
        let p = self.row.p;
        PersonQuery {
            account_key: &p.account_key,
            currency: &p.currency,
            period: &pay.period,
            amount: &self.row.amount,
            window_days,
            origin_run: pay.link.map(|l| l.origin_run),
        }
    }
}

/// Fills each row's chain: the earlier payout holding its id, and while
/// that one failed, the one holding its next retry id. One look-up per
/// round for the whole batch; a round asks only the rows whose chain goes
/// on (a chain is as long as a payout's failed attempts).
fn chains(imp: &Import<'_>, rows: &mut [Identified<'_>]) -> Result<()> {
    let mut asking: Vec<usize> = (0..rows.len()).collect();
    while !asking.is_empty() {
        let ids: Vec<String> = asking
            .iter()
            .map(|&i| match rows[i].chain.len() {
                0 => rows[i].base.clone(),
                n => repeat::retry_id(&rows[i].base, n as u32 + 1),
            })
            .collect();
        let found = imp.earlier_many(&ids)?;
        let mut next = Vec::new();
        for (&i, id) in asking.iter().zip(&ids) {
            if let Some(e) = found.get(id) {
                let failed = repeat::failed(e.state);
                rows[i].chain.push(e.clone());
                if failed {
                    next.push(i);
                }
            }
        }
        asking = next;
    }
    Ok(())
}
