//! The lease of a worker sharing a run with others through PostgreSQL
//! (`ARCHITECTURE.md`, "Several workers on one run"). The worker registers
//! itself, then a thread of its own, on a connection of its own, records a
//! heartbeat every lease/3 and serves the pool's lease questions (adopt the
//! payouts of workers that are gone; what do the others still hold). The
//! tasks read [`Freshness`] before every request: a worker whose last
//! recorded heartbeat is older than the lease minus a margin sends nothing
//! more (its lease is lost), so no request of it can leave once another
//! worker may have adopted its payouts.
//!
//! The decisions are pure functions of durations ([`fresh`], the periods);
//! which payouts are adoptable is the store's [`crate::store::shared`].

use crate::limiter::RateMode;
use crate::limiter::shared::{Reserved, SharedRate};
use crate::store::{Db, Outstanding, Store, Work, WriteError};
use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a worker's heartbeat vouches for it (`PAYRUN_LEASE_MS`): long
/// enough that a busy database or a paused VM does not cost a lease, short
/// enough that a dead worker's payouts wait little for adoption.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(15);

/// Heartbeats per lease: one missed beat still leaves the lease fresh.
pub fn beat_every(lease: Duration) -> Duration {
    lease / 3
}

/// How often a worker looks for payouts of workers that are gone.
pub fn adopt_every(lease: Duration) -> Duration {
    lease / 2
}

/// How often a worker with nothing left to claim looks whether the others
/// are done.
pub fn wait_every(lease: Duration) -> Duration {
    (lease / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
}

/// The part of the lease a worker gives up before the others may judge it
/// gone: a request allowed at the last fresh instant leaves at least this
/// long before anyone can adopt its payout.
pub fn margin(lease: Duration) -> Duration {
    lease / 4
}

/// Whether a worker whose last recorded heartbeat was sent `since_beat`
/// ago may still send: the server judges it from a later instant (when the
/// heartbeat was written), so the local clock errs on the safe side.
pub fn fresh(since_beat: Duration, lease: Duration) -> bool {
    since_beat < lease.saturating_sub(margin(lease))
}

/// What the run's stop says when the lease is lost.
pub fn lost_message(lease: Duration) -> String {
    format!(
        "this worker's lease lapsed (no heartbeat recorded within {} ms: the database was \
         unreachable or the process stalled), so it stopped sending; live workers adopt its \
         payouts. Run the same command again to join the run again",
        lease.as_millis()
    )
}

/// The lease as the tasks see it: when the last heartbeat that the server
/// recorded was sent, and whether the lease is lost for good.
#[derive(Debug)]
pub struct Freshness {
    lease: Duration,
    origin: Instant,
    /// Milliseconds from `origin` to the sending of the last recorded beat.
    last_ok_ms: AtomicU64,
    lost: AtomicBool,
}

impl Freshness {
    fn new(lease: Duration, registered: Instant) -> Freshness {
        Freshness {
            lease,
            origin: registered,
            last_ok_ms: AtomicU64::new(0),
            lost: AtomicBool::new(false),
        }
    }

    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Whether a request may leave now.
    pub fn fresh(&self) -> bool {
        if self.lost.load(Ordering::SeqCst) {
            return false;
        }
        let last = self.origin + Duration::from_millis(self.last_ok_ms.load(Ordering::SeqCst));
        let ok = fresh(last.elapsed(), self.lease);
        if !ok {
            // Once stale, stale for good: the server may already have
            // judged this worker gone, and gone is for good.
            self.lost.store(true, Ordering::SeqCst);
        }
        ok
    }

    fn record(&self, sent: Instant) {
        let ms = sent.saturating_duration_since(self.origin).as_millis() as u64;
        self.last_ok_ms.fetch_max(ms, Ordering::SeqCst);
    }

    fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
    }
}

/// A worker's answer to "is this error another worker taking my payout
/// over?": a conflict while sharing a run means the payout is not this
/// worker's any more (or moved under it), so it records nothing for it.
pub fn taken_over(err: &anyhow::Error) -> Option<i64> {
    match err.downcast_ref::<WriteError>() {
        Some(WriteError::Conflict { id, .. }) => Some(*id),
        _ => None,
    }
}

/// What a worker of a shared run brings to its pool: its lease, and the
/// provider's rate shared with the other workers (if any is set).
pub struct Shared<'a> {
    pub lease: &'a Lease,
    pub rate: Option<Arc<SharedRate>>,
}

/// The shared schedule of the provider's rate for `key` (the provider and
/// the merchant), on a connection of its own: at `rate = N`, N calls/s for
/// all workers together; with `rate = "auto"`, each worker adapts on its
/// own under `max_rate` shared the same way, and without `max_rate` only
/// the provider's 429s bound the sum (docs/rate.md, "Several workers").
pub fn shared_rate(db: &Db, key: &str, mode: RateMode) -> Option<Arc<SharedRate>> {
    let rate = match mode {
        RateMode::Fixed(n) | RateMode::Auto { ceiling: Some(n) } => n,
        RateMode::Auto { ceiling: None } => return None,
    };
    let (db, key) = (db.clone(), key.to_string());
    let mut conn: Option<Store> = None;
    let reserve = move |span_us: i64| -> anyhow::Result<Reserved> {
        let store = match &mut conn {
            Some(s) => s,
            None => conn.insert(Store::connect(&db)?),
        };
        match store.reserve_rate(&key, span_us) {
            Ok((first_us, now_us)) => Ok(Reserved { first_us, now_us }),
            Err(e) => {
                // Connect again next time (the database restarted?).
                conn = None;
                Err(e)
            }
        }
    };
    Some(Arc::new(SharedRate::start(rate, Box::new(reserve))))
}

enum Req {
    Adopt(oneshot::Sender<Result<Vec<Work>>>),
    Outstanding(oneshot::Sender<Result<Outstanding>>),
}

/// This process as a worker of a shared run: its id, its heartbeat thread
/// and the connection that thread owns. Dropping it marks the worker
/// stopped, so the others may adopt what it leaves at once.
pub struct Lease {
    pub worker: i64,
    freshness: Arc<Freshness>,
    tx: Option<mpsc::Sender<Req>>,
    join: Option<JoinHandle<()>>,
}

impl Lease {
    /// Registers this process as a worker of `run_id` through `store` (which
    /// then writes under its lease) and starts the heartbeat on a
    /// connection of its own.
    pub fn join(store: &mut Store, db: &Db, run_id: i64, lease: Duration) -> Result<Lease> {
        let registered = Instant::now();
        let worker = store
            .register_worker(run_id, &host(), std::process::id())?
            .context("this database is not shared by workers")?;
        store.set_worker(Some(worker));
        let own = Store::connect(db)?;
        let freshness = Arc::new(Freshness::new(lease, registered));
        let (tx, rx) = mpsc::channel();
        let beat = Beat {
            db: db.clone(),
            store: Some(own),
            run_id,
            worker,
            freshness: freshness.clone(),
        };
        let join = std::thread::Builder::new()
            .name("payrun-lease".into())
            .spawn(move || beat.run(rx))
            .context("cannot start the heartbeat thread")?;
        Ok(Lease {
            worker,
            freshness,
            tx: Some(tx),
            join: Some(join),
        })
    }

    pub fn freshness(&self) -> Arc<Freshness> {
        self.freshness.clone()
    }

    /// Adopts the payouts of workers that are gone (none once this
    /// worker's own lease is not fresh).
    pub async fn adopt(&self) -> Result<Vec<Work>> {
        if !self.freshness.fresh() {
            return Ok(Vec::new());
        }
        self.ask(Req::Adopt).await
    }

    /// What is still pending, and what this worker must wait for that
    /// others hold (`store::shared::waits_for`).
    pub async fn outstanding(&self) -> Result<Outstanding> {
        self.ask(Req::Outstanding).await
    }

    async fn ask<T>(&self, req: impl FnOnce(oneshot::Sender<Result<T>>) -> Req) -> Result<T> {
        let (reply, rx) = oneshot::channel();
        self.tx
            .as_ref()
            .and_then(|tx| tx.send(req(reply)).ok())
            .context("the heartbeat thread stopped")?;
        rx.await.context("the heartbeat thread stopped")?
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // Closing the channel ends the thread, which marks the worker
        // stopped on its way out.
        self.tx.take();
        if let Some(join) = self.join.take() {
            let _ = join.join();
        }
    }
}

/// The heartbeat thread's state.
struct Beat {
    db: Db,
    store: Option<Store>,
    run_id: i64,
    worker: i64,
    freshness: Arc<Freshness>,
}

impl Beat {
    fn run(mut self, rx: mpsc::Receiver<Req>) {
        let lease = self.freshness.lease;
        let mut next = Instant::now() + beat_every(lease);
        loop {
            match rx.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(Req::Adopt(reply)) => {
                    let r = self.with_store(|s, run, me| s.adopt(run, me, lease));
                    let _ = reply.send(r);
                }
                Ok(Req::Outstanding(reply)) => {
                    let r = self.with_store(|s, run, me| s.outstanding(run, me, lease));
                    let _ = reply.send(r);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let sent = Instant::now();
                    next = sent + beat_every(lease);
                    match self.with_store(|s, _, me| s.heartbeat(me, lease)) {
                        Ok(true) => self.freshness.record(sent),
                        Ok(false) => {
                            tracing::warn!(worker = self.worker, "the lease expired");
                            self.freshness.lose();
                        }
                        Err(e) => tracing::warn!("heartbeat not recorded: {e:#}"),
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        if let Err(e) = self.with_store(|s, _, me| s.stop_worker(me)) {
            tracing::warn!("cannot mark this worker stopped: {e:#}");
        }
    }

    /// Runs `f` on the thread's connection, connecting again after an
    /// error (the database restarted): the next call gets a new one.
    fn with_store<T>(&mut self, f: impl FnOnce(&mut Store, i64, i64) -> Result<T>) -> Result<T> {
        let store = match &mut self.store {
            Some(s) => s,
            None => self.store.insert(Store::connect(&self.db)?),
        };
        let r = f(store, self.run_id, self.worker);
        if r.is_err() {
            self.store = None;
        }
        r
    }
}

/// This machine's name, for `payrun status` (`?` when the system does not
/// say).
fn host() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "?".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_until_the_lease_minus_the_margin() {
        let lease = Duration::from_millis(15_000);
        assert!(fresh(Duration::ZERO, lease));
        // One missed heartbeat (two periods) is still fresh.
        assert!(fresh(beat_every(lease) * 2, lease));
        assert!(fresh(Duration::from_millis(11_249), lease));
        assert!(!fresh(Duration::from_millis(11_250), lease));
        assert!(!fresh(lease, lease));
    }

    #[test]
    fn periods_fit_in_the_lease() {
        let lease = DEFAULT_LEASE;
        assert!(beat_every(lease) * 2 < lease - margin(lease));
        assert!(adopt_every(lease) < lease);
        assert_eq!(wait_every(lease), Duration::from_secs(1));
        assert_eq!(
            wait_every(Duration::from_millis(100)),
            Duration::from_millis(20)
        );
    }

    #[test]
    fn freshness_is_lost_for_good() {
        let f = Freshness::new(Duration::from_millis(400), Instant::now());
        assert!(f.fresh());
        f.record(Instant::now());
        assert!(f.fresh());
        f.lose();
        assert!(!f.fresh());
        f.record(Instant::now());
        assert!(!f.fresh(), "a lost lease never comes back");
        let long_ago = Instant::now() - Duration::from_millis(31);
        let stale = Freshness::new(Duration::from_millis(40), long_ago);
        assert!(!stale.fresh());
        stale.record(Instant::now());
        assert!(!stale.fresh(), "a lease once stale stays lost");
    }

    #[test]
    fn only_a_conflict_is_a_takeover() {
        let conflict = anyhow::Error::from(WriteError::Conflict {
            id: 7,
            from: crate::machine::State::Executing,
            to: crate::machine::State::Executed,
        });
        assert_eq!(taken_over(&conflict), Some(7));
        assert_eq!(taken_over(&anyhow::Error::from(WriteError::Stopped)), None);
        assert_eq!(taken_over(&anyhow::anyhow!("disk")), None);
    }
}
