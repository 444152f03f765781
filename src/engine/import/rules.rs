//! The re-run rules applied row by row during an import (docs/rerun.md):
//! each valid row gets its stable id (`identity`, over its canonical
//! account key), `repeat::plan` decides whether it is paid, re-paid after a
//! failure, listed as already paid or refused, and every row about to be
//! paid is looked up by person (`Import::same_person`, one indexed query)
//! and judged by `guard`. What they found decides the import's verdict.

use super::super::guard::{self, Candidate, MAX_REPEATS_LISTED};
use super::super::identity::{self, Batch, Occurrences, PayoutKey};
use super::super::repeat::{self, Plan};
use super::{Imported, OpenElsewhere, Repeats};
use crate::payout::Payout;
use crate::store::{Earlier, Import, NewOverride, OverrideKind, PersonQuery, RetryLink};
use anyhow::Result;
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

    /// Records one valid payout: paid, re-paid, skipped or refused.
    pub(super) fn add(&mut self, imp: &mut Import<'_>, p: &Payout) -> Result<()> {
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
        let mut chain = Vec::new();
        let mut id = base.clone();
        while let Some(e) = imp.earlier(&id)? {
            let failed = repeat::failed(e.state);
            chain.push(e);
            if !failed {
                break;
            }
            id = repeat::retry_id(&base, chain.len() as u32 + 1);
        }
        let same_payout = chain.first().is_none_or(|e| {
            e.account_key == p.account_key
                && e.amount == amount
                && e.currency == p.currency
                && e.method == p.payout_method_id
        });
        let (id, link) = match repeat::plan(&base, &chain, same_payout) {
            Plan::New => (base, None),
            Plan::Retry { id, of } => (
                id,
                Some(RetryLink {
                    of,
                    origin_run: chain[0].origin_run,
                }),
            ),
            Plan::Skip(e) => {
                self.recognise(p.row, &base, &e);
                *self.matched.entry(e.run_id).or_default() += 1;
                return imp.add_skipped(p.row, e.payout_id);
            }
            Plan::Open(e) => {
                self.recognise(p.row, &base, &e);
                *self.matched.entry(e.run_id).or_default() += 1;
                let slot = self.open.entry(e.run_id).or_insert((
                    0,
                    p.row,
                    e.run_file.clone(),
                    e.run_created_at.clone(),
                ));
                slot.0 += 1;
                return imp.add_skipped(p.row, e.payout_id);
            }
            Plan::Conflict(e) => {
                imp.conflict(format!(
                    "row {}: transaction_id {base:?} is already used by run {} ({}, row {}) for \
                     another payout (account {}, {} {}); a transaction id pays once, ever: give \
                     this row a new transaction_id",
                    p.row, e.run_id, e.run_file, e.row, e.account_id, e.amount, e.currency
                ));
                return Ok(());
            }
        };
        self.fresh += 1;
        // A re-payment belongs to the period and the request of the payout
        // it re-pays: that request's other rows are not repeats of it.
        let period = match link {
            Some(_) => chain[0].period.clone(),
            None => self.batch.period.clone(),
        };
        let found = imp.same_person(&PersonQuery {
            account_key: &p.account_key,
            currency: &p.currency,
            period: &period,
            amount: &amount,
            window_days: self.window_days,
            origin_run: link.map(|l| l.origin_run),
        })?;
        let candidate = Candidate {
            row: p.row,
            account: p.account_given.as_deref().unwrap_or(&p.account_id),
            amount: &amount,
            currency: &p.currency,
            period: &period,
        };
        let repeats = guard::judge(&candidate, found, same_file.filter(|_| link.is_none()));
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
