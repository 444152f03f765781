//! The library part of `payrun approve`: whether a person may approve a
//! run now ([`check_approvable`], pure), recording the approval of exactly
//! the set they were shown ([`approve`]), and withdrawing it ([`revoke`]).
//! The command shows the [`Facts`] and asks for confirmation between the
//! check and the record; a run that changed meanwhile is refused, never
//! approved unseen.

use super::{Facts, Standing};
use crate::store::{Action, ApprovalEvent, NewApproval, Store};
use crate::who::Person;
use anyhow::Result;

/// Why an approval (or a revocation) is refused; said in a language by
/// [`Refusal::describe_in`] (English as its `Display`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Preparer { run: i64, preparer: String },
    NotInitiated { run: i64, waiting: u64 },
    Empty { run: i64 },
    Finished { run: i64 },
    Changed { run: i64 },
    NothingToRevoke { run: i64, standing: Box<Standing> },
}

impl Refusal {
    /// The refusal for people reading `language`.
    pub fn describe_in(&self, language: crate::lang::Language) -> String {
        let t = language.text();
        match self {
            Refusal::Preparer { run, preparer } => (t.refused_preparer)(*run, preparer),
            Refusal::NotInitiated { run, waiting } => (t.refused_not_initiated)(*run, *waiting),
            Refusal::Empty { run } => (t.refused_empty)(*run),
            Refusal::Finished { run } => (t.refused_finished)(*run),
            Refusal::Changed { run } => (t.refused_changed)(*run),
            Refusal::NothingToRevoke { run, standing } => {
                (t.refused_nothing_to_revoke)(*run, &standing.describe_in(language))
            }
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe_in(crate::lang::Language::En))
    }
}

impl std::error::Error for Refusal {}

/// Whether `by` may approve the run of `facts` now: `Ok(false)` when it
/// is approved already (nothing to record).
pub fn check_approvable(facts: &Facts, by: &Person) -> Result<bool, Refusal> {
    let run = facts.run.id;
    if let Some(p) = facts.preparer.as_ref().filter(|p| p.person.same_as(by)) {
        return Err(Refusal::Preparer {
            run,
            preparer: p.person.shown(),
        });
    }
    if facts.run.finished_at.is_some() {
        return Err(Refusal::Finished { run });
    }
    if facts.set.not_initiated > 0 {
        return Err(Refusal::NotInitiated {
            run,
            waiting: facts.set.not_initiated,
        });
    }
    if facts.set.payouts == 0 {
        return Err(Refusal::Empty { run });
    }
    Ok(!facts.standing.is_approved())
}

/// Records `by`'s approval of the run as `facts` show it, if the run still
/// holds exactly that set.
pub fn approve(
    store: &mut Store,
    facts: &Facts,
    by: &Person,
) -> Result<std::result::Result<ApprovalEvent, Refusal>> {
    if let Err(r) = check_approvable(facts, by) {
        return Ok(Err(r));
    }
    let overrides: Vec<String> = facts
        .overrides
        .iter()
        .map(|o| o.describe_in(crate::lang::Language::En))
        .collect();
    let recorded = store.record_approval(&NewApproval {
        run_id: facts.run.id,
        action: Action::Approved,
        by,
        file_sha256: &facts.run.file_sha256,
        period: &facts.run.period,
        set: &facts.set,
        overrides: &overrides,
        revokes: None,
        reason: "",
    })?;
    // A crash here keeps the approval: it is committed (tests/approve.rs).
    crate::fault::hit("after_approval");
    Ok(recorded.ok_or(Refusal::Changed { run: facts.run.id }))
}

/// Records `by`'s withdrawal of the run's latest approval (valid or void),
/// with `reason`. Anyone may withdraw one, the preparer included.
pub fn revoke(
    store: &mut Store,
    facts: &Facts,
    by: &Person,
    reason: &str,
) -> Result<std::result::Result<ApprovalEvent, Refusal>> {
    let approval = match &facts.standing {
        Standing::Approved(a) => a,
        Standing::Void { approval, .. } => approval.as_ref(),
        other => {
            return Ok(Err(Refusal::NothingToRevoke {
                run: facts.run.id,
                standing: Box::new(other.clone()),
            }));
        }
    };
    let set = crate::store::PayoutSet {
        figures: approval.figures.clone(),
        payouts: approval.payouts,
        digest: approval.digest.clone(),
        not_initiated: 0,
    };
    let recorded = store.record_approval(&NewApproval {
        run_id: facts.run.id,
        action: Action::Revoked,
        by,
        file_sha256: &approval.file_sha256,
        period: &approval.period,
        set: &set,
        overrides: &approval.overrides,
        revokes: Some(approval.id),
        reason: reason.trim(),
    })?;
    Ok(recorded.ok_or(Refusal::Changed { run: facts.run.id }))
}
