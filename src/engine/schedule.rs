//! The worker pool of a run: claims pending payouts in rounds, hands each
//! (and each resumed one) to a task under a concurrency bound, listens for
//! the shutdown signal, and puts claimed-but-unsent payouts back. The
//! shared context ([`Ctx`]) the tasks see lives here.

use super::Stop;
use super::limiter::Limiter;
use super::pay::pay_one;
use super::progress::{Progress, ProgressTarget};
use crate::config::Ambiguous;
use crate::machine::decide::{self, Phase};
use crate::provider::Client;
use crate::shutdown::Shutdown;
use crate::store::{Transition, Work, Writer};
use anyhow::Result;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// The run's options the engine reads.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    pub rate: u32,
    pub concurrency: usize,
    pub ambiguous: Ambiguous,
    pub initiate_only: bool,
    /// Retry backoff timings (tests shorten them).
    pub backoff: super::retry::Backoff,
}

#[derive(Debug, Default)]
pub struct RunStats {
    pub stop: Option<Stop>,
}

/// Progress counters (display only; the database is the record).
#[derive(Default)]
pub(super) struct Counters {
    pub initiated: AtomicU64,
    pub executed: AtomicU64,
    pub failed: AtomicU64,
    pub unknown: AtomicU64,
    pub calls: AtomicU64,
}

/// What every payout task of a run shares.
pub(super) struct Ctx {
    pub client: Client,
    pub writer: Writer,
    pub limiter: Limiter,
    pub opts: EngineOptions,
    stopping: AtomicBool,
    stop: Mutex<Option<Stop>>,
    halted: Mutex<HashSet<String>>,
    pub counters: Counters,
}

impl Ctx {
    pub fn request_stop(&self, why: Stop) {
        let mut s = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(why);
        }
        self.stopping.store(true, Ordering::SeqCst);
    }
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
    pub fn halted(&self, currency: &str) -> bool {
        self.halted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(currency)
    }
    pub fn halt(&self, currency: &str) {
        self.halted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(currency.to_string());
    }
}

/// Moves every open payout of a run to a final state (or to `initiated`
/// with `initiate_only`). Returns when done, stopped or shut down.
#[allow(clippy::too_many_arguments)]
pub async fn execute_run(
    client: &Client,
    writer: &Writer,
    run_id: i64,
    resume: Vec<Work>,
    total_open: u64,
    opts: &EngineOptions,
    progress: ProgressTarget,
    mut shutdown: Shutdown,
) -> Result<RunStats> {
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        writer: writer.clone(),
        limiter: Limiter::new(opts.rate),
        opts: opts.clone(),
        stopping: AtomicBool::new(false),
        stop: Mutex::new(None),
        halted: Mutex::new(HashSet::new()),
        counters: Counters::default(),
    });
    let progress = Progress::start(ctx.clone(), total_open, progress);
    let listener = {
        let ctx = ctx.clone();
        AbortOnDrop(tokio::spawn(async move {
            shutdown.recv().await;
            ctx.request_stop(Stop::Interrupted);
        }))
    };
    let queue: VecDeque<(Work, Phase)> = resume
        .into_iter()
        .filter_map(|w| decide::resume_phase(w.state, opts.initiate_only).map(|p| (w, p)))
        .collect();
    let mut pool = Pool {
        ctx: ctx.clone(),
        sem: Arc::new(Semaphore::new(opts.concurrency)),
        tasks: JoinSet::new(),
        error: None,
    };
    let left = pool.drive(writer, run_id, queue).await;
    // Payouts claimed but never sent go back to pending. Resumed intents
    // stay as they are: their outcome is still open.
    let held: Vec<Transition> = left
        .into_iter()
        .filter_map(|(w, phase)| {
            decide::unsent_claim(phase).map(|(f, t)| Transition::new(w.id, f, t))
        })
        .collect();
    while let Some(res) = pool.tasks.join_next().await {
        pool.note_task(res);
    }
    let held = if held.is_empty() {
        Ok(())
    } else {
        writer.apply(held).await
    };
    drop(listener);
    progress.finish();
    if let Some(e) = pool.error {
        return Err(e);
    }
    held?;
    let stop = ctx.stop.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(RunStats { stop })
}

/// The running payout tasks and the first error among them.
struct Pool {
    ctx: Arc<Ctx>,
    sem: Arc<Semaphore>,
    tasks: JoinSet<Result<()>>,
    error: Option<anyhow::Error>,
}

impl Pool {
    /// Claims and spawns until nothing is left or the run stops; returns
    /// the payouts taken from the queue but never started.
    async fn drive(
        &mut self,
        writer: &Writer,
        run_id: i64,
        mut queue: VecDeque<(Work, Phase)>,
    ) -> VecDeque<(Work, Phase)> {
        // Claim as many as can be in flight, so the claimed-but-unsent
        // window stays one round deep.
        let claim_size = self.ctx.opts.concurrency.clamp(8, 512);
        loop {
            if self.ctx.stopping() {
                break;
            }
            if queue.is_empty() {
                match writer.claim(run_id, claim_size).await {
                    Ok(batch) if batch.is_empty() => break,
                    Ok(batch) => queue.extend(
                        batch
                            .into_iter()
                            .map(|w| (w, Phase::Initiate { resumed: false })),
                    ),
                    Err(e) => {
                        self.error = Some(e.into());
                        self.ctx.request_stop(Stop::Interrupted);
                        break;
                    }
                }
            }
            self.spawn_queue(&mut queue).await;
            // Reap finished tasks without waiting.
            while let Some(res) = self.tasks.try_join_next() {
                self.note_task(res);
            }
        }
        queue
    }

    /// Starts a task per queued payout as permits free up.
    async fn spawn_queue(&mut self, queue: &mut VecDeque<(Work, Phase)>) {
        while let Some((work, phase)) = queue.pop_front() {
            let permit = tokio::select! {
                p = self.sem.clone().acquire_owned() => p.expect("semaphore closed"),
                Some(res) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    self.note_task(res);
                    queue.push_front((work, phase));
                    continue;
                }
            };
            if self.ctx.stopping() {
                queue.push_front((work, phase));
                break;
            }
            let ctx = self.ctx.clone();
            self.tasks.spawn(async move {
                let _permit = permit;
                pay_one(&ctx, work, phase).await
            });
        }
    }

    fn note_task(&mut self, res: std::result::Result<Result<()>, tokio::task::JoinError>) {
        let err = match res {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(e) => anyhow::anyhow!("a payout task failed: {e}"),
        };
        self.ctx.request_stop(Stop::Interrupted);
        if self.error.is_none() {
            self.error = Some(err);
        }
    }
}

/// Aborts a background task however the function that owns it returns.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
