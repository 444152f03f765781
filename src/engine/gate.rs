//! The gate before anything is executed (README, "3. Approve"):
//! `--expect-total`, the scripted check of the control totals, and, with
//! `require_approval`, an approval recorded by someone other than the
//! run's preparer that still covers exactly the run's payouts
//! (`signoff`). Nothing is sent — not even a resumed payout — until both
//! hold. Without a valid approval the run exits, or waits for one: it
//! reads the run's approval events every `poll` (one small indexed read,
//! never a busy loop) and judges the run again only when they change,
//! until an approval holds or the stop signal fires.

use super::{Event, RunOutcome, Settings, approval};
use crate::shutdown::Shutdown;
use crate::signoff::{self, Standing};
use crate::store::{ApprovalEvent, Preparer, RunInfo, Store};
use anyhow::{Context, Result};
use std::time::Duration;

/// How often a waiting run reads the approval events: an approver
/// typing `payrun approve` waits a few seconds at most, and a hundred
/// waiting workers make twenty small reads a second.
pub const DEFAULT_POLL: Duration = Duration::from_secs(5);

/// The gate's settings, from `payrun.toml` (`require_approval`,
/// `on_unapproved`) and the command line.
#[derive(Debug, Clone)]
pub struct Gate {
    pub required: bool,
    /// Wait for an approval rather than exit.
    pub wait: bool,
    pub poll: Duration,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            required: false,
            wait: false,
            poll: DEFAULT_POLL,
        }
    }
}

/// Why the execute step sent nothing: no valid approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unapproved {
    pub run_id: i64,
    pub file_path: String,
    pub standing: Standing,
    pub preparer: Option<Preparer>,
    /// Payouts still to initiate (`--initiate-only` first).
    pub not_initiated: u64,
    /// The stop signal ended the wait.
    pub interrupted: bool,
}

/// `Ok(approval)` (the valid approval, if one is required) when the run
/// may execute; `Err(outcome)` when nothing may be sent.
pub async fn before_execute(
    store: &Store,
    run: &RunInfo,
    settings: &Settings,
    mut stop: Shutdown,
    notify: &dyn Fn(Event),
) -> Result<std::result::Result<Option<ApprovalEvent>, RunOutcome>> {
    if settings.engine.initiate_only {
        return Ok(Ok(None));
    }
    if !settings.expect_total.is_empty()
        && let Err(refused) =
            approval::check_expected(&store.totals(run.id)?, &settings.expect_total)
    {
        return Ok(Err(RunOutcome::TotalsRefused(refused)));
    }
    let gate = &settings.gate;
    // Nothing left that could be sent (a finished run's report written
    // again): nothing to guard.
    if !gate.required || store.open_count(run.id)? == 0 {
        return Ok(Ok(None));
    }
    let mut seen = None;
    loop {
        let events = store.approval_events(run.id)?;
        let last = events.last().map(|e| e.id);
        if seen != Some(last) {
            seen = Some(last);
            let facts = signoff::facts(store, run.id)?.context("the run vanished")?;
            if let Standing::Approved(a) = facts.standing {
                notify(Event::Approved(a.clone()));
                return Ok(Ok(Some(*a)));
            }
            let unapproved = Unapproved {
                run_id: run.id,
                file_path: run.file_path.clone(),
                standing: facts.standing,
                preparer: facts.preparer,
                not_initiated: facts.set.not_initiated,
                interrupted: false,
            };
            if !gate.wait {
                return Ok(Err(RunOutcome::Unapproved(Box::new(unapproved))));
            }
            notify(Event::AwaitingApproval(Box::new(unapproved)));
        }
        tokio::select! {
            _ = tokio::time::sleep(gate.poll) => {}
            _ = stop.recv() => {
                let facts = signoff::facts(store, run.id)?.context("the run vanished")?;
                return Ok(Err(RunOutcome::Unapproved(Box::new(Unapproved {
                    run_id: run.id,
                    file_path: run.file_path.clone(),
                    standing: facts.standing,
                    preparer: facts.preparer,
                    not_initiated: facts.set.not_initiated,
                    interrupted: true,
                }))));
            }
        }
    }
}
