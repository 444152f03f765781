//! Finding a run's checkpoint: the run of this file already in the
//! database (resumed, moved to a corrected provider URL if it never sent
//! anything), or a new run imported now — one process at a time among
//! workers starting together (`Store::one_start_at_a_time`).

use super::{Event, Imported, RunOutcome, Settings, identity, import};
use crate::store::{RunInfo, Store};
use anyhow::{Context, Result, bail};

/// The run of this file: the one in the database (resumed), or a new one
/// imported now. `Err` carries an outcome that ends the command: rows
/// rejected, ids already used, repeats.
pub(super) fn find_or_import(
    store: &mut Store,
    settings: &Settings,
    snapshot: &identity::Snapshot,
    batch: &identity::Batch,
    provider: &str,
    notify: &dyn Fn(Event),
) -> Result<std::result::Result<RunInfo, RunOutcome>> {
    let identity = identity::run_identity(&snapshot.sha256, batch);
    if let Some(run) = store.find_run(&identity)? {
        return Ok(Ok(resume(store, run, provider, notify)?));
    }
    // The same bytes, interrupted before the month turned.
    if !settings.period_given
        && let Some(run) = store.unfinished_run_of(&snapshot.sha256, &batch.label, &batch.sheet)?
    {
        return Ok(Ok(resume(store, run, provider, notify)?));
    }
    // A run imported under the old identity scheme (which ignored the
    // worksheet, so only without --sheet).
    if settings.sheet.is_none()
        && let Some(run) =
            store.find_run(&import::run_identity(&snapshot.sha256, &settings.label))?
        && run.id_scheme == 1
    {
        return Ok(Ok(resume(store, run, provider, notify)?));
    }
    if !settings.new_run {
        import::refuse_if_edited_copy(store, &settings.file)?;
    }
    notify(Event::Importing {
        file: settings.file.display().to_string(),
    });
    let started = std::time::Instant::now();
    let imported = import::import(
        store,
        settings,
        &snapshot.path,
        &snapshot.sha256,
        &identity,
        batch,
        provider,
        &import::sibling(&settings.report, super::outputs::REJECTED_FILE),
    )?;
    Ok(Ok(match imported {
        Imported::Run(id) => {
            notify(Event::Imported {
                payouts: store.payout_count(id)?,
                elapsed: started.elapsed(),
            });
            let skipped = store.skipped_count(id)?;
            if skipped > 0 {
                notify(Event::Skipped { rows: skipped });
            }
            store.run(id)?.context("run vanished after import")?
        }
        Imported::CopyOf(id) => {
            let run = store.run(id)?.context("run vanished")?;
            resume(store, run, provider, notify)?
        }
        Imported::Rejected(r) => return Ok(Err(RunOutcome::Rejected(r))),
        Imported::DuplicateIds(d) => return Ok(Err(RunOutcome::DuplicateIds(d))),
        Imported::Repeats(r) => return Ok(Err(RunOutcome::Repeats(r))),
        Imported::NotFailed(r) => return Ok(Err(RunOutcome::NotFailed(r))),
    }))
}

/// Resumes an earlier run of the same payouts, moving a run that never sent
/// anything to a corrected provider URL.
fn resume(
    store: &mut Store,
    run: RunInfo,
    provider: &str,
    notify: &dyn Fn(Event),
) -> Result<RunInfo> {
    // A run that never sent anything may move to a corrected URL.
    if run.provider != provider && !store.repoint_unsent_run(run.id, provider)? {
        bail!(
            "run {} of this file was made against {}, not {}; \
             resume it against the same provider, end it with `payrun cancel {}`, \
             or use --period to start a separate batch",
            run.id,
            run.provider,
            provider,
            run.id
        );
    }
    notify(Event::Resuming {
        run_id: run.id,
        file_path: run.file_path.clone(),
        created_at: run.created_at.clone(),
    });
    Ok(run)
}
