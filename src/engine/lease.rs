//! The lease of a worker sharing a run with others through PostgreSQL
//! (`ARCHITECTURE.md`, "Several workers on one run"). The worker registers
//! itself, then a thread of its own, on a connection of its own, records a
//! heartbeat a few times per lease and serves the pool's lease questions
//! (adopt the payouts of workers that are gone; what do the others still
//! hold).
//!
//! A request leaves only inside the lease: [`Freshness`] says how much of
//! the lease is left, on a clock that counts the time the machine spent
//! suspended ([`crate::clock::Boot`]), from the instant the last heartbeat
//! the server recorded was *sent*; a request may leave only while that is
//! more than its whole deadline (connecting included). It is asked before
//! every attempt and once more by the transport at the last moment before
//! the request is handed to the connection (a [`crate::provider::Gate`]),
//! so a worker that was frozen anywhere before that (SIGSTOP, a suspended
//! machine, a stall) and wakes with its lease lapsed sends nothing. Another
//! worker adopts a payout it left in flight only a request deadline after
//! its lease ran out on the server's clock (`store::shared::released`), so
//! any request it sent inside its lease is over by then. What is left is a
//! host frozen in the moment between that last check and the write for
//! longer than the lease it had left plus a request deadline (at least two
//! deadlines): docs/store.md, "What the lease does not cover".
//!
//! The decisions are pure functions of durations ([`may_send`], the
//! periods); which payouts are adoptable is the store's
//! [`crate::store::shared`].

use crate::clock::Boot;
use crate::limiter::RateMode;
use crate::limiter::aimd::AUTO_MAX_RATE;
use crate::limiter::pooled::{Pace, PaceStore, Reservation, Seen, Unused};
use crate::limiter::shared::{Reserved, SharedRate};
use crate::store::{Db, LeaseTerms, Outstanding, Store, Work, WriteError};
use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How long a worker's heartbeat vouches for it (`PAYRUN_LEASE_MS`): the
/// provider's request deadline (30 s) and 15 s more, in which the worker
/// may send and beats three times (every 5 s), so one missed beat does not
/// stop it. A dead worker's payouts at rest are adopted 45 s after its last
/// heartbeat, those it had in flight 75 s after.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(45);

/// Heartbeats per lease: three in the part of the lease a worker may send
/// in (the lease less a request deadline), so one missed beat still leaves
/// it sending; never more often than every 10 ms.
pub fn beat_every(terms: LeaseTerms) -> Duration {
    (terms.lease.saturating_sub(terms.deadline) / 3).max(Duration::from_millis(10))
}

/// How often a worker looks for payouts that workers gone released: as
/// often as it beats, so a payout is adopted soon after its release.
pub fn adopt_every(terms: LeaseTerms) -> Duration {
    beat_every(terms)
}

/// How often a worker with nothing left to claim looks whether the others
/// are done.
pub fn wait_every(lease: Duration) -> Duration {
    (lease / 10).clamp(Duration::from_millis(20), Duration::from_secs(1))
}

/// The lease left `since_beat` after the sending of the last heartbeat the
/// server recorded: the server judges the worker from a later instant
/// (when it wrote the heartbeat), so the local reckoning errs on the safe
/// side.
pub fn left(since_beat: Duration, lease: Duration) -> Duration {
    lease.saturating_sub(since_beat)
}

/// Whether a request whose whole deadline is `deadline` may leave with
/// `left` of the lease: only if it is over, answered or abandoned, before
/// the lease runs out.
pub fn may_send(left: Duration, deadline: Duration) -> bool {
    left > deadline
}

/// The terms a worker can keep: a lease longer than a request deadline,
/// or no request could ever leave.
pub fn check_terms(terms: LeaseTerms) -> Result<()> {
    anyhow::ensure!(
        terms.lease > terms.deadline + Duration::from_millis(30),
        "the lease ({} ms, PAYRUN_LEASE_MS) must be longer than a provider request's deadline \
         ({} ms): a worker sends only while its lease outlasts the request",
        terms.lease.as_millis(),
        terms.deadline.as_millis()
    );
    Ok(())
}

/// What the run's stop says when the lease is lost.
pub fn lost_message(terms: LeaseTerms) -> String {
    format!(
        "this worker's lease lapsed (no heartbeat recorded in time to cover a {} ms request \
         within its {} ms lease: the database was unreachable, or the process stalled or was \
         suspended), so it stopped sending; live workers adopt its payouts. Run the same \
         command again to join the run again",
        terms.deadline.as_millis(),
        terms.lease.as_millis()
    )
}

/// The lease as the tasks see it: when the last heartbeat that the server
/// recorded was sent (boot clock), and whether the lease is lost for good.
#[derive(Debug)]
pub struct Freshness {
    terms: LeaseTerms,
    origin: Boot,
    /// Microseconds from `origin` to the sending of the last recorded beat.
    last_ok_us: AtomicU64,
    lost: AtomicBool,
}

impl Freshness {
    fn new(terms: LeaseTerms, registered: Boot) -> Freshness {
        Freshness {
            terms,
            origin: registered,
            last_ok_us: AtomicU64::new(0),
            lost: AtomicBool::new(false),
        }
    }

    pub fn terms(&self) -> LeaseTerms {
        self.terms
    }

    /// The lease left now (zero once lost).
    pub fn left(&self) -> Duration {
        if self.lost.load(Ordering::SeqCst) {
            return Duration::ZERO;
        }
        let beat = self.origin.after(Duration::from_micros(
            self.last_ok_us.load(Ordering::SeqCst),
        ));
        left(beat.elapsed(), self.terms.lease)
    }

    /// Whether a request whose whole deadline is `deadline` may leave now.
    /// Once refused, refused for good: the server may judge this worker
    /// gone before another beat lands, and gone is for good.
    pub fn may_send(&self, deadline: Duration) -> bool {
        let ok = may_send(self.left(), deadline);
        if !ok {
            self.lose();
        }
        ok
    }

    /// Whether a request of the full deadline may leave now.
    pub fn fresh(&self) -> bool {
        self.may_send(self.terms.deadline)
    }

    /// The check the transport makes at the last moment ([`crate::provider::Gate`]).
    pub fn gate(self: &Arc<Self>) -> crate::provider::Gate {
        let me = self.clone();
        Arc::new(move |deadline| me.may_send(deadline))
    }

    fn record(&self, sent: Boot) {
        let us = sent.saturating_duration_since(self.origin).as_micros() as u64;
        self.last_ok_us.fetch_max(us, Ordering::SeqCst);
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
/// all workers together; with `rate = "auto"`, one adaptive pace for all
/// workers (`limiter::pooled`), under `max_rate` if set (docs/rate.md,
/// "Several workers").
pub fn shared_rate(db: &Db, key: &str, mode: RateMode) -> Option<Arc<SharedRate>> {
    let rate = match mode {
        RateMode::Fixed(n) => n,
        RateMode::Auto { ceiling } => {
            let ceiling = ceiling.map_or(AUTO_MAX_RATE, f64::from);
            let store = PgPace {
                db: db.clone(),
                key: key.to_string(),
                ceiling,
                conn: None,
            };
            let joined = Pace::new(ceiling, 0);
            return Some(Arc::new(SharedRate::adaptive(Box::new(store), joined)));
        }
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

/// The adaptive pace's database side: a connection of its own, joined
/// (`Store::join_pace`) when made, made again after an error.
struct PgPace {
    db: Db,
    key: String,
    ceiling: f64,
    conn: Option<Store>,
}

impl PgPace {
    fn with<T>(&mut self, f: impl FnOnce(&mut Store, &str, f64) -> Result<T>) -> Result<T> {
        if self.conn.is_none() {
            let mut store = Store::connect(&self.db)?;
            store.join_pace(&self.key, self.ceiling)?;
            self.conn = Some(store);
        }
        let store = self.conn.as_mut().expect("connected above");
        let got = f(store, &self.key, self.ceiling);
        if got.is_err() {
            self.conn = None;
        }
        got
    }
}

impl PaceStore for PgPace {
    fn reserve(&mut self, n: u32, unused: Unused) -> Result<Reservation> {
        self.with(|s, key, ceiling| s.reserve_pace(key, n, ceiling, unused))
    }

    fn report(&mut self, seen: Vec<Seen>, epoch_us: i64) -> Result<Pace> {
        self.with(|s, key, ceiling| s.report_pace(key, seen, ceiling, epoch_us))
    }
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
    pub fn join(store: &mut Store, db: &Db, run_id: i64, terms: LeaseTerms) -> Result<Lease> {
        check_terms(terms)?;
        let registered = Boot::now();
        let worker = store
            .register_worker(run_id, &crate::who::host(), std::process::id())?
            .context("this database is not shared by workers")?;
        store.set_worker(Some(worker));
        let own = Store::connect(db)?;
        let freshness = Arc::new(Freshness::new(terms, registered));
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

    /// Adopts the payouts that workers gone released (none once this
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
        let terms = self.freshness.terms;
        let mut next = Instant::now() + beat_every(terms);
        loop {
            match rx.recv_timeout(next.saturating_duration_since(Instant::now())) {
                Ok(Req::Adopt(reply)) => {
                    let r = self.with_store(|s, run, me| s.adopt(run, me, terms));
                    let _ = reply.send(r);
                }
                Ok(Req::Outstanding(reply)) => {
                    let r = self.with_store(|s, run, me| s.outstanding(run, me, terms));
                    let _ = reply.send(r);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let sent = Boot::now();
                    next = Instant::now() + beat_every(terms);
                    match self.with_store(|s, _, me| s.heartbeat(me, terms.lease)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    const TERMS: LeaseTerms = LeaseTerms {
        lease: Duration::from_secs(45),
        deadline: Duration::from_secs(30),
    };

    #[test]
    fn a_request_leaves_only_while_the_lease_outlasts_its_deadline() {
        let s = Duration::from_secs;
        assert_eq!(left(s(0), TERMS.lease), s(45));
        assert_eq!(left(s(14), TERMS.lease), s(31));
        assert_eq!(left(s(50), TERMS.lease), Duration::ZERO);
        assert!(may_send(s(31), TERMS.deadline));
        assert!(!may_send(s(30), TERMS.deadline));
        assert!(!may_send(Duration::ZERO, TERMS.deadline));
        // A shorter request (less of its deadline left) may leave later.
        assert!(may_send(s(30), s(29)));
    }

    #[test]
    fn periods_fit_in_the_lease() {
        // One missed beat still leaves time to send.
        assert_eq!(beat_every(TERMS), Duration::from_secs(5));
        assert!(beat_every(TERMS) * 2 < TERMS.lease - TERMS.deadline);
        assert_eq!(adopt_every(TERMS), beat_every(TERMS));
        let tight = LeaseTerms {
            lease: Duration::from_millis(40),
            deadline: Duration::from_millis(35),
        };
        assert_eq!(beat_every(tight), Duration::from_millis(10));
        assert_eq!(wait_every(TERMS.lease), Duration::from_secs(1));
        assert_eq!(
            wait_every(Duration::from_millis(100)),
            Duration::from_millis(20)
        );
    }

    #[test]
    fn a_lease_no_longer_than_a_request_is_refused() {
        assert!(check_terms(TERMS).is_ok());
        let short = LeaseTerms {
            lease: Duration::from_secs(30),
            deadline: Duration::from_secs(30),
        };
        let err = check_terms(short).unwrap_err().to_string();
        assert!(
            err.contains("30000 ms") && err.contains("PAYRUN_LEASE_MS"),
            "{err}"
        );
    }

    #[test]
    fn freshness_is_lost_for_good() {
        let terms = LeaseTerms {
            lease: Duration::from_millis(400),
            deadline: Duration::from_millis(100),
        };
        let f = Freshness::new(terms, Boot::now());
        assert!(f.fresh());
        f.record(Boot::now());
        assert!(f.fresh());
        assert!(f.left() > Duration::from_millis(300));
        f.lose();
        assert!(!f.fresh());
        assert_eq!(f.left(), Duration::ZERO);
        f.record(Boot::now());
        assert!(!f.fresh(), "a lost lease never comes back");
    }

    #[test]
    fn a_lease_too_short_for_the_request_refuses_it_and_is_lost() {
        let terms = LeaseTerms {
            lease: Duration::from_millis(400),
            deadline: Duration::from_millis(100),
        };
        // The last beat was sent 310 ms before now: 90 ms left, under the
        // deadline. (`origin` is set back rather than waiting.)
        let origin = Boot::now();
        let f = Freshness::new(terms, origin);
        let late = Freshness {
            origin: origin.before(Duration::from_millis(310)),
            ..f
        };
        assert!(!late.may_send(Duration::from_millis(100)));
        // Lost: not even a short request goes.
        assert!(!late.may_send(Duration::from_millis(1)));
        // The gate asks the same.
        let late = Arc::new(late);
        assert!(!(late.gate())(Duration::from_millis(1)));
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
