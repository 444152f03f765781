//! Four eyes (README, "3. Approve"): whether a run's approval holds. The
//! judgement is a pure function ([`judge`]) over what the checkpoint
//! recorded — the latest approval or revocation, the run's payout set now,
//! its overrides, its preparer — and [`facts`] gathers those. `payrun
//! approve` records approvals (`record`); the execute step refuses or waits
//! without a valid one (`engine::gate`); the approval page, `status`, the
//! report's summary, the audit trail and the JSON log show the
//! [`Standing`].
//!
//! An approval is tied to what was approved: the figures per currency and
//! the digest of the payout set (ids, accounts, amounts, currencies). Any
//! change after it — a cancellation, a payout added or altered, an
//! override — voids it, and the refusal names what changed.

pub mod record;
mod why;

pub use why::{Why, change_in};

use crate::lang::Language;
use crate::store::{
    Action, ApprovalEvent, Change, Changes, OverrideLine, PayoutSet, Preparer, RunInfo, Store,
};
use anyhow::{Context, Result};

/// Where a run's approval stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Approved, and the run still holds exactly what was approved.
    Approved(Box<ApprovalEvent>),
    /// No approval recorded.
    NotApproved,
    /// The latest approval was withdrawn.
    Revoked {
        approval: Box<ApprovalEvent>,
        revocation: Box<ApprovalEvent>,
    },
    /// Approved, and then something changed (or the approver is the
    /// preparer): void. `why` names each difference.
    Void {
        approval: Box<ApprovalEvent>,
        why: Vec<Why>,
    },
}

impl Standing {
    pub fn is_approved(&self) -> bool {
        matches!(self, Standing::Approved(_))
    }

    /// A short word for machines: `approved`, `not_approved`, `revoked`,
    /// `void`.
    pub fn word(&self) -> &'static str {
        match self {
            Standing::Approved(_) => "approved",
            Standing::NotApproved => "not_approved",
            Standing::Revoked { .. } => "revoked",
            Standing::Void { .. } => "void",
        }
    }

    /// The approval concerned, if any.
    pub fn approval(&self) -> Option<&ApprovalEvent> {
        match self {
            Standing::Approved(a) => Some(a.as_ref()),
            Standing::NotApproved => None,
            Standing::Revoked { approval, .. } | Standing::Void { approval, .. } => {
                Some(approval.as_ref())
            }
        }
    }

    /// Why a void approval no longer holds, one sentence each, in
    /// `language` (none for another standing).
    pub fn reasons_in(&self, language: Language) -> Vec<String> {
        match self {
            Standing::Void { why, .. } => why.iter().map(|w| w.describe_in(language)).collect(),
            _ => Vec::new(),
        }
    }

    /// [`Standing::describe`] in `language`, the reasons of a void
    /// approval too.
    pub fn describe_in(&self, language: Language) -> String {
        let t = language.text();
        match self {
            Standing::Approved(a) => (t.standing_approved)(&a.by.shown(), &a.at),
            Standing::NotApproved => t.not_approved_yet.to_string(),
            Standing::Revoked {
                approval,
                revocation,
            } => (t.standing_revoked)(
                &approval.by.shown(),
                &approval.at,
                &revocation.by.shown(),
                &revocation.at,
                &revocation.reason,
            ),
            Standing::Void { approval, .. } => (t.standing_void)(
                &approval.by.shown(),
                &approval.at,
                &self.reasons_in(language).join("; "),
            ),
        }
    }

    /// One sentence for people.
    pub fn describe(&self) -> String {
        match self {
            Standing::Approved(a) => format!("approved by {} at {}", a.by.shown(), a.at),
            Standing::NotApproved => "not approved yet".to_string(),
            Standing::Revoked {
                approval,
                revocation,
            } => format!(
                "the approval by {} at {} was revoked by {} at {}{}",
                approval.by.shown(),
                approval.at,
                revocation.by.shown(),
                revocation.at,
                if revocation.reason.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", revocation.reason)
                }
            ),
            Standing::Void { approval, .. } => format!(
                "the approval by {} at {} is void: {}",
                approval.by.shown(),
                approval.at,
                self.reasons_in(Language::En).join("; ")
            ),
        }
    }
}

/// Everything the approval of a run turns on, read at one time.
#[derive(Debug, Clone)]
pub struct Facts {
    pub run: RunInfo,
    pub preparer: Option<Preparer>,
    /// The payout set now: what an approval would cover.
    pub set: PayoutSet,
    /// The run's overrides, one line each (`Store::overrides`); an
    /// approval records their English sentences.
    pub overrides: Vec<OverrideLine>,
    /// Every approval and revocation, oldest first.
    pub events: Vec<ApprovalEvent>,
    pub standing: Standing,
}

/// Reads the facts of run `run_id` and judges them (`None`: no such run).
pub fn facts(store: &Store, run_id: i64) -> Result<Option<Facts>> {
    let Some(run) = store.run(run_id)? else {
        return Ok(None);
    };
    let events = store.approval_events(run_id)?;
    let set = store.payout_set(run_id)?;
    let overrides = store.overrides(run_id)?.items();
    let preparer = store.preparer(run_id)?;
    let changes = match latest(&events) {
        Some(a) if a.action == Action::Approved && a.digest != set.digest => Some(
            store
                .approval_changes(a.id, run_id)
                .context("cannot compare the run with its approval")?,
        ),
        _ => None,
    };
    let standing = judge(
        &events,
        &set,
        &overrides,
        preparer.as_ref(),
        changes.as_ref(),
    );
    Ok(Some(Facts {
        run,
        preparer,
        set,
        overrides,
        events,
        standing,
    }))
}

/// The standing of run `run_id`, or `None` when it has no approval event
/// at all (the cheap answer for runs that never used four eyes).
pub fn standing_if_any(store: &Store, run_id: i64) -> Result<Option<Standing>> {
    if store.approval_events(run_id)?.is_empty() {
        return Ok(None);
    }
    Ok(facts(store, run_id)?.map(|f| f.standing))
}

/// The run's audit trail: its payouts' lines (`Store::audit`) with its
/// four-eyes lines among them in time order (one time format: a stable
/// sort keeps each source's order) — for `reconcile --audit` and the
/// approval page.
pub fn audit_trail(store: &Store, run_id: i64) -> Result<Vec<[String; 6]>> {
    let mut lines = store.audit(run_id)?;
    lines.extend(audit_lines(store, run_id)?);
    lines.sort_by(|a, b| a[1].cmp(&b[1]));
    Ok(lines)
}

/// The run's four-eyes lines of the audit trail (`reconcile --audit`):
/// who prepared it, each approval with its figures and digest, each
/// revocation with its reason — as (transaction id, time, action, from,
/// to, reason), the transaction id and states empty: they are the run's.
pub fn audit_lines(store: &Store, run_id: i64) -> Result<Vec<[String; 6]>> {
    let mut out = Vec::new();
    let line = |at: &str, action: &str, reason: String| {
        let empty = String::new;
        [
            empty(),
            at.to_string(),
            action.to_string(),
            empty(),
            empty(),
            reason,
        ]
    };
    if let Some(p) = store.preparer(run_id)? {
        out.push(line(
            &p.at,
            "prepared",
            format!("imported by {}", p.person.shown()),
        ));
    }
    for e in store.approval_events(run_id)? {
        let figures: Vec<String> = e
            .figures
            .iter()
            .map(|(cur, t)| format!("{cur} {} payout(s) {}", t.count, t.total))
            .collect();
        let reason = match e.action {
            Action::Approved => format!(
                "by {}: {}; digest {}",
                e.by.shown(),
                figures.join(", "),
                e.digest
            ),
            Action::Revoked => format!(
                "by {}{}",
                e.by.shown(),
                if e.reason.is_empty() {
                    String::new()
                } else {
                    format!(": {}", e.reason)
                }
            ),
        };
        out.push(line(&e.at, e.action.as_str(), reason));
    }
    Ok(out)
}

fn latest(events: &[ApprovalEvent]) -> Option<&ApprovalEvent> {
    events.last()
}

/// Whether the latest approval holds over the run's payout set `set` and
/// `overrides` now. `changes`: the differences with the approved set,
/// read when the digests differ.
pub fn judge(
    events: &[ApprovalEvent],
    set: &PayoutSet,
    overrides: &[OverrideLine],
    preparer: Option<&Preparer>,
    changes: Option<&Changes>,
) -> Standing {
    let Some(last) = latest(events) else {
        return Standing::NotApproved;
    };
    if last.action == Action::Revoked {
        let approval = last
            .revokes
            .and_then(|id| events.iter().find(|e| e.id == id))
            .unwrap_or(last);
        return Standing::Revoked {
            approval: Box::new(approval.clone()),
            revocation: Box::new(last.clone()),
        };
    }
    let mut why = Vec::new();
    if let Some(p) = preparer.filter(|p| p.person.same_as(&last.by)) {
        why.push(Why::SelfApproved {
            approver: last.by.shown(),
            preparer: p.person.shown(),
        });
    }
    why.extend(figure_changes(last, set));
    if last.digest != set.digest {
        match changes {
            Some(c) if c.total > 0 => {
                why.extend(c.listed.iter().cloned().map(Why::Changed));
                let more = c.total.saturating_sub(c.listed.len() as u64);
                if more > 0 {
                    why.push(Why::MoreChanges(more));
                }
            }
            _ => why.push(Why::Digest {
                now: short(&set.digest).to_string(),
                approved: short(&last.digest).to_string(),
            }),
        }
    }
    // Approvals record the English sentences: compared as such.
    let english: Vec<String> = overrides
        .iter()
        .map(|o| o.describe_in(Language::En))
        .collect();
    let dropped = last
        .overrides
        .iter()
        .filter(|o| !english.contains(o))
        .count();
    for (o, said) in overrides.iter().zip(&english) {
        if !last.overrides.contains(said) {
            why.push(Why::OverrideAdded(o.clone()));
        }
    }
    if dropped > 0 {
        why.push(Why::OverridesDropped(dropped as u64));
    }
    if why.is_empty() {
        Standing::Approved(Box::new(last.clone()))
    } else {
        Standing::Void {
            approval: Box::new(last.clone()),
            why,
        }
    }
}

/// The first 16 hex digits of a digest, as shown to people.
pub fn short(digest: &str) -> &str {
    &digest[..16.min(digest.len())]
}

/// Per currency, how the figures now differ from those approved.
fn figure_changes(approved: &ApprovalEvent, set: &PayoutSet) -> Vec<Why> {
    let mut out = Vec::new();
    let currencies: std::collections::BTreeSet<&String> =
        approved.figures.keys().chain(set.figures.keys()).collect();
    for cur in currencies {
        let was = approved.figures.get(cur).cloned().unwrap_or_default();
        let now = set.figures.get(cur).cloned().unwrap_or_default();
        if was != now {
            out.push(Why::Figures {
                currency: cur.clone(),
                was,
                now,
            });
        }
    }
    out
}

/// One change, for people, in English.
pub fn change_line(c: &Change) -> String {
    change_in(c, Language::En)
}

#[cfg(test)]
mod tests;
