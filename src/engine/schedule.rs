//! The worker pool of a run: claims pending payouts in rounds, hands each
//! (and each resumed one) to a task under a concurrency bound, listens for
//! the shutdown signal, and puts claimed-but-unsent payouts back. The
//! shared context ([`Ctx`]) the tasks see lives here.

use super::Stop;
use super::lease::{self, Freshness, Lease, Shared};
use super::pay::pay_one;
use super::progress::{Progress, ProgressTarget};
use crate::config::Ambiguous;
use crate::limiter::shared::{SharedRate, Ticket};
use crate::limiter::{Limiter, LimiterStats, RateMode};
use crate::machine::decide::{self, Phase};
use crate::provider::Client;
use crate::shutdown::Shutdown;
use crate::store::{Transition, Work, WriteError, Writer};
use anyhow::Result;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// How often the pool looks again at the limiter's concurrency target while
/// every worker is busy: the target grows with the rate, and no task may end
/// for a while during a `Retry-After` pause.
const WORKER_RECHECK: Duration = Duration::from_millis(50);
/// Workers per call the limiter lets be in flight: a payout's task also
/// spends time committing its intent and outcome, so twice the target keeps
/// every permitted slot used without parking hundreds of idle tasks.
const WORKERS_PER_SLOT: usize = 2;
/// Workers on top of that, so a target of 1 or 2 still overlaps a commit
/// with the next call.
const EXTRA_WORKERS: usize = 4;
/// And workers for the commits: a worker waits for one commit per call, so
/// keeping the pace through commits that wait `w` takes `pace × w` more
/// workers (Little's law), twice that to spare. `w` is the longest wait of
/// the last few seconds: an fsync stalled behind other writes to the disk
/// (a build, a backup) holds every worker waiting on it for up to seconds,
/// and a pool sized for the provider's latency alone then sends below the
/// pace for as long.
const COMMIT_HEADROOM: f64 = 2.0;
/// Most payouts one claim takes on a shared run: a worker holds no more
/// than it is about to send, so the others find work too and a worker that
/// dies leaves few payouts waiting for its lease to expire.
const SHARED_CLAIM: usize = 32;

/// The run's options the engine reads.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// `rate = "auto"` or a fixed cap (rate keys).
    pub rate: RateMode,
    /// Most calls in flight, whatever Little's law suggests.
    pub max_concurrency: usize,
    pub ambiguous: Ambiguous,
    pub initiate_only: bool,
    /// Requests a payout may use across runs before an initiation that
    /// never gets a final answer is set aside (`max_attempts_total`).
    pub max_attempts_total: u32,
    /// `ambiguous = resend`: how long after an execute's outcome became
    /// unknown its one re-send waits ([`DEFAULT_RESEND_DELAY`]).
    pub resend_delay: Duration,
    /// Retry backoff timings (tests shorten them).
    pub backoff: super::retry::Backoff,
    /// How long a worker's heartbeat vouches for it on a shared run
    /// (`PAYRUN_LEASE_MS`, [`lease::DEFAULT_LEASE`]).
    pub lease: Duration,
    /// The longest one provider call may take, connecting included
    /// ([`crate::provider::REQUEST_TIMEOUT`]; the tests shorten it with
    /// `PAYRUN_REQUEST_TIMEOUT_MS`): on a shared run, a request leaves only
    /// while the lease outlasts it.
    pub request_deadline: Duration,
}

impl EngineOptions {
    /// The lease a worker keeps on a shared run, and the deadline it must
    /// outlast for a request to leave.
    pub fn lease_terms(&self) -> crate::store::LeaseTerms {
        crate::store::LeaseTerms {
            lease: self.lease,
            deadline: self.request_deadline,
        }
    }
}

/// Wait before the one re-send of an unknown execute. A provider that
/// timed out is often still working on the request; a few seconds let it
/// finish, so the re-send finds the outcome instead of racing it.
pub const DEFAULT_RESEND_DELAY: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
pub struct RunStats {
    pub stop: Option<Stop>,
    /// The limiter's figures at the end: settled rate, 429s, latency.
    pub limiter: Option<LimiterStats>,
}

/// Progress counters (display only; the database is the record).
#[derive(Default)]
pub(super) struct Counters {
    pub initiated: AtomicU64,
    pub executed: AtomicU64,
    pub failed: AtomicU64,
    pub unknown: AtomicU64,
    pub processing: AtomicU64,
    pub calls: AtomicU64,
}

/// What every payout task of a run shares.
pub(super) struct Ctx {
    pub client: Client,
    pub writer: Writer,
    pub limiter: Limiter,
    /// The provider's rate shared with the other workers of the run.
    pub shared_rate: Option<Arc<SharedRate>>,
    /// This worker's lease on a shared run: nothing is sent unless fresh.
    pub freshness: Option<Arc<Freshness>>,
    pub opts: EngineOptions,
    stopping: AtomicBool,
    stop: Mutex<Option<Stop>>,
    halted: Mutex<HashSet<String>>,
    /// Executes to re-send once at the end of the main pass.
    resend: Mutex<Vec<super::resend::Due>>,
    pub counters: Counters,
}

impl Ctx {
    pub fn request_stop(&self, why: Stop) {
        let mut s = self.stop.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(why);
        }
        self.stopping.store(true, Ordering::SeqCst);
        // Ends every wait for a send slot at once, a `Retry-After` pause too.
        self.limiter.stop();
        if let Some(shared) = &self.shared_rate {
            shared.stop();
        }
    }
    /// Whether a request may leave: always on a run of one's own; on a
    /// shared run, only while this worker's lease is fresh. A lost lease
    /// stops the run.
    pub fn may_send(&self) -> bool {
        match &self.freshness {
            Some(f) if !f.fresh() => {
                self.request_stop(Stop::LeaseLost(lease::lost_message(f.terms())));
                false
            }
            _ => true,
        }
    }
    /// Waits for a slot of the shared provider rate, if the run has one
    /// (`Some(None)` if not). `None` once the run is stopping. On the
    /// adaptive pace, this worker's own limiter follows it.
    pub async fn shared_slot(&self) -> Option<Option<Ticket>> {
        let Some(shared) = &self.shared_rate else {
            return Some(None);
        };
        let ticket = shared.acquire().await?;
        if shared.is_adaptive() {
            self.limiter.follow(ticket.rate);
        }
        Some(Some(ticket))
    }
    /// Tells the shared pace the answer to the call that left in `ticket`
    /// (`Some(wait)`: a 429).
    pub fn shared_answer(&self, ticket: Option<Ticket>, retry_after: Option<Duration>) {
        if let (Some(shared), Some(ticket)) = (&self.shared_rate, ticket) {
            let latency = self.limiter.latency().unwrap_or_default();
            shared.answer(ticket, retry_after, latency);
        }
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
    pub fn resend_later(&self, work: &Work) {
        self.resend
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(super::resend::Due {
                work: work.clone(),
                since: Instant::now(),
            });
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
    shared: Option<Shared<'_>>,
) -> Result<RunStats> {
    let (lease, shared_rate) = match shared {
        Some(s) => (Some(s.lease), s.rate),
        None => (None, None),
    };
    let freshness = lease.map(Lease::freshness);
    // On a shared run the transport asks the lease once more at the last
    // moment before each request leaves.
    let client = match &freshness {
        Some(f) => client.clone().with_gate(f.gate()),
        None => client.clone(),
    };
    let ctx = Arc::new(Ctx {
        client,
        writer: writer.clone(),
        limiter: Limiter::new(crate::limiter::Settings::new(
            local_mode(opts.rate, shared_rate.as_deref()),
            opts.max_concurrency,
        )),
        shared_rate,
        freshness,
        opts: opts.clone(),
        stopping: AtomicBool::new(false),
        stop: Mutex::new(None),
        halted: Mutex::new(HashSet::new()),
        resend: Mutex::new(Vec::new()),
        counters: Counters::default(),
    });
    // Resumed payouts past initiation start on the "initiated" bar.
    let already = resume
        .iter()
        .filter(|w| w.state != crate::machine::State::Initiating)
        .count() as u64;
    let progress = Progress::start(ctx.clone(), total_open, already, progress);
    let for_resend = shutdown.clone();
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
        tasks: JoinSet::new(),
        error: None,
        lease,
        next_adopt: Instant::now() + lease::adopt_every(opts.lease_terms()),
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
    tracing::debug!(tasks = pool.tasks.len(), "waiting for the payout tasks");
    while let Some(res) = pool.tasks.join_next().await {
        pool.note_task(res);
    }
    tracing::debug!("payout tasks done");
    let held = put_back(writer, held, lease.is_some()).await;
    let due = std::mem::take(&mut *ctx.resend.lock().unwrap_or_else(|e| e.into_inner()));
    let resent = if pool.error.is_none() && held.is_ok() && !due.is_empty() {
        super::resend::resend_once(&ctx, due, for_resend).await
    } else {
        Ok(())
    };
    drop(listener);
    progress.finish().await;
    if let Some(e) = pool.error {
        return Err(e);
    }
    held?;
    resent?;
    let stop = ctx.stop.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut limiter = ctx.limiter.stats();
    if let Some(shared) = ctx.shared_rate.as_ref().filter(|s| s.is_adaptive()) {
        // The pace all workers settled on, not this worker's follower's.
        limiter.rate = shared.rate();
    }
    Ok(RunStats {
        stop,
        limiter: Some(limiter),
    })
}

/// This worker's own limiter: the configured mode, but on the adaptive
/// pace shared with other workers a fixed one that follows that pace
/// ([`Limiter::follow`]), so that the adaptive decisions are made once,
/// on the shared state (`limiter::pooled`).
fn local_mode(mode: RateMode, shared: Option<&SharedRate>) -> RateMode {
    match (mode, shared) {
        (RateMode::Auto { ceiling }, Some(s)) if s.is_adaptive() => {
            RateMode::Fixed(ceiling.unwrap_or(crate::limiter::aimd::AUTO_START_RATE as u32))
        }
        _ => mode,
    }
}

/// Puts claimed-but-unsent payouts back to pending. On a shared run each
/// goes alone: one another worker took over meanwhile is its, and the
/// conflict only says so.
async fn put_back(writer: &Writer, held: Vec<Transition>, shared: bool) -> Result<(), WriteError> {
    if held.is_empty() {
        return Ok(());
    }
    if !shared {
        return writer.apply(held).await;
    }
    let mut puts = JoinSet::new();
    for t in held {
        let writer = writer.clone();
        puts.spawn(async move { writer.apply(vec![t]).await });
    }
    let mut result = Ok(());
    while let Some(r) = puts.join_next().await {
        match r {
            Ok(Ok(())) | Ok(Err(WriteError::Conflict { .. })) => {}
            Ok(Err(e)) => result = Err(e),
            Err(_) => result = Err(WriteError::Stopped),
        }
    }
    result
}

/// The running payout tasks and the first error among them.
struct Pool<'a> {
    ctx: Arc<Ctx>,
    tasks: JoinSet<Result<()>>,
    error: Option<anyhow::Error>,
    /// This worker's lease, on a shared run.
    lease: Option<&'a Lease>,
    /// When to look next for payouts of workers that are gone.
    next_adopt: Instant,
}

impl Pool<'_> {
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
        loop {
            let claim_size = match self.lease {
                Some(_) => self.workers().clamp(8, SHARED_CLAIM),
                None => self.workers().clamp(8, 512),
            };
            if self.ctx.stopping() || !self.ctx.may_send() {
                break;
            }
            if let Err(e) = self.adopt_if_due(&mut queue, false).await {
                self.fail(e);
                break;
            }
            if queue.is_empty() {
                match writer.claim(run_id, claim_size).await {
                    Ok(batch) if batch.is_empty() => {
                        match self.nothing_to_claim(&mut queue).await {
                            Ok(true) => {}
                            Ok(false) => break,
                            Err(e) => {
                                self.fail(e);
                                break;
                            }
                        }
                    }
                    Ok(batch) => queue.extend(
                        batch
                            .into_iter()
                            .map(|w| (w, Phase::Initiate { resumed: false })),
                    ),
                    Err(e) => {
                        self.fail(e.into());
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

    fn fail(&mut self, e: anyhow::Error) {
        self.error.get_or_insert(e);
        self.ctx.request_stop(Stop::Interrupted);
    }

    /// On a shared run, every lease/2 (or `now`): takes over what workers
    /// that are gone left in flight, into the queue, to go through the
    /// same recovery as a resumed run's.
    async fn adopt_if_due(&mut self, queue: &mut VecDeque<(Work, Phase)>, now: bool) -> Result<()> {
        let Some(lease) = self.lease else {
            return Ok(());
        };
        if !now && Instant::now() < self.next_adopt {
            return Ok(());
        }
        self.next_adopt = Instant::now() + lease::adopt_every(self.ctx.opts.lease_terms());
        let adopted = lease.adopt().await?;
        if !adopted.is_empty() {
            tracing::info!(
                payouts = adopted.len(),
                "adopted the payouts of a worker that is gone"
            );
        }
        queue.extend(adopted.into_iter().filter_map(|w| {
            decide::resume_phase(w.state, self.ctx.opts.initiate_only).map(|p| (w, p))
        }));
        Ok(())
    }

    /// Nothing left to claim. Alone on the run: done. On a shared run:
    /// done once nothing is pending nor held by another worker; until then
    /// (`true`) wait a little, adopting what a worker that dies leaves.
    async fn nothing_to_claim(&mut self, queue: &mut VecDeque<(Work, Phase)>) -> Result<bool> {
        let Some(lease) = self.lease else {
            return Ok(false);
        };
        self.adopt_if_due(queue, true).await?;
        if !queue.is_empty() {
            return Ok(true);
        }
        let outstanding = lease.outstanding().await?;
        tracing::debug!(?outstanding, "nothing left to claim");
        if outstanding.none() {
            return Ok(false);
        }
        // Others are on it: look again soon, reaping our own tasks.
        let wait = tokio::time::sleep(lease::wait_every(self.ctx.opts.lease));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                Some(res) = self.tasks.join_next() => self.note_task(res),
                _ = &mut wait => break,
            }
        }
        Ok(true)
    }

    /// Workers allowed now ([`pool_size`]).
    fn workers(&self) -> usize {
        pool_size(
            self.ctx.limiter.target_concurrency(),
            f64::from(self.ctx.limiter.current_rate()),
            self.ctx.writer.longest_wait(),
            self.ctx.opts.max_concurrency,
        )
    }

    /// Starts a task per queued payout while fewer than [`Pool::workers`]
    /// are running.
    async fn spawn_queue(&mut self, queue: &mut VecDeque<(Work, Phase)>) {
        while let Some((work, phase)) = queue.pop_front() {
            if self.tasks.len() >= self.workers() {
                tokio::select! {
                    Some(res) = self.tasks.join_next() => self.note_task(res),
                    _ = tokio::time::sleep(WORKER_RECHECK) => {}
                }
                queue.push_front((work, phase));
                if self.ctx.stopping() {
                    break;
                }
                continue;
            }
            if self.ctx.stopping() {
                queue.push_front((work, phase));
                break;
            }
            let ctx = self.ctx.clone();
            let shared = self.lease.is_some();
            self.tasks.spawn(async move {
                match pay_one(&ctx, work, phase).await {
                    // Another worker took the payout over (this worker's
                    // lease lapsed): it records nothing more for it.
                    Err(e) if shared && let Some(id) = lease::taken_over(&e) => {
                        tracing::warn!(payout = id, "taken over by another worker; left to it");
                        Ok(())
                    }
                    r => r,
                }
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

/// Workers for a concurrency target (calls in flight: pace × latency), a
/// pace in calls/s and the longest recent commit wait: enough to keep
/// `target` calls in flight while others commit ([`WORKERS_PER_SLOT`],
/// [`EXTRA_WORKERS`]) and the pace through slow commits
/// ([`COMMIT_HEADROOM`]), within `max` (`max_concurrency`).
fn pool_size(target: usize, pace: f64, commit_wait: Duration, max: usize) -> usize {
    let committing = (pace * commit_wait.as_secs_f64() * COMMIT_HEADROOM).ceil();
    // A float cast saturates: a huge pace or wait is capped by `max`.
    let committing = committing as usize;
    (target * WORKERS_PER_SLOT + EXTRA_WORKERS)
        .saturating_add(committing)
        .min(max.max(1))
}

/// Aborts a background task however the function that owns it returns.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn quick_commits_leave_the_pool_to_the_concurrency_target() {
        // 100 calls/s at 50 ms: a target of 8 calls in flight; commits of
        // 2 ms add one worker.
        assert_eq!(pool_size(8, 100.0, 2 * MS, 256), 8 * 2 + 4 + 1);
        assert_eq!(pool_size(8, 100.0, Duration::ZERO, 256), 8 * 2 + 4);
    }

    #[test]
    fn slow_commits_add_the_workers_that_keep_the_pace() {
        // An fsync stalled 800 ms at 100 calls/s: 80 calls' worth of
        // workers wait on it, twice that to spare.
        assert_eq!(pool_size(8, 100.0, 800 * MS, 256), 20 + 160);
        // Never more than max_concurrency, never fewer than one.
        assert_eq!(pool_size(8, 100.0, 5000 * MS, 256), 256);
        assert_eq!(pool_size(8, f64::MAX, 5000 * MS, 256), 256);
        assert_eq!(pool_size(8, 100.0, 800 * MS, 0), 1);
    }
}
