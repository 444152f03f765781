//! Several workers sharing one run (PostgreSQL only): the facade's
//! operations on the `workers` table and on leases, and the one rule that
//! says when a worker is gone. A SQLite checkpoint has a single worker (its
//! file lock sees to that): registering gives no id, nothing is ever
//! adopted, and nobody else holds a lease. See `ARCHITECTURE.md`,
//! "Several workers on one run".
//!
//! A worker is alive while its heartbeat (server clock) is younger than the
//! lease and it has not stopped. Once expired it never comes back: its
//! heartbeat refuses to refresh an expired row, so a worker judged dead
//! stays dead, and adopting its payouts cannot race with it reviving. A
//! payout it left in an intent state (`initiating`, `executing`: a request
//! may be on its way) is released a request deadline later still
//! ([`released`]): a worker sends only while its lease outlasts the
//! request's whole deadline, so by then any request it sent is over.

use super::facade::Store;
use super::types::Work;
use crate::limiter::pooled::{Pace, Reservation, Seen, Unused};
use crate::machine::{IN_FLIGHT, RESUMED, State};
use anyhow::Result;
use std::time::Duration;

/// One worker of a run, as `payrun status` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerInfo {
    pub id: i64,
    pub host: String,
    pub pid: u32,
    /// The last heartbeat, RFC 3339 UTC (server clock).
    pub heartbeat_at: String,
    /// Age of the last heartbeat on the server's clock.
    pub heartbeat_age: Duration,
    pub stopped: bool,
    /// Payouts it holds in a state where its request may be in flight
    /// (`machine::RESUMED`).
    pub held: u64,
}

impl WorkerInfo {
    /// Whether the worker still holds its lease.
    pub fn live(&self, lease: Duration) -> bool {
        !expired(self.stopped, self.heartbeat_age, lease)
    }
}

/// How long a heartbeat vouches for a worker (`lease`), and the longest
/// one provider request may take, connecting included (`deadline`): a
/// worker sends only while its lease has more than `deadline` left
/// (`engine::lease`), and a payout it left in flight is adopted only a
/// `deadline` after its lease ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTerms {
    pub lease: Duration,
    pub deadline: Duration,
}

/// The rule: a worker that stopped, or whose last heartbeat is at least a
/// lease old, is gone; it never comes back.
pub fn expired(stopped: bool, heartbeat_age: Duration, lease: Duration) -> bool {
    stopped || heartbeat_age >= lease
}

/// Whether a payout a worker left in `state` may be taken over from it: it
/// stopped (after its calls in flight ended), or its heartbeat is a lease
/// old — and, for a payout in an intent state (`machine::IN_FLIGHT`: its
/// request may have left), a request deadline older still, past the end of
/// any request it can have sent while its lease was fresh.
pub fn released(state: State, stopped: bool, heartbeat_age: Duration, terms: LeaseTerms) -> bool {
    let wait = if IN_FLIGHT.contains(&state) {
        terms.lease.saturating_add(terms.deadline)
    } else {
        terms.lease
    };
    stopped || heartbeat_age >= wait
}

/// Whether an operator's change (`payrun reconcile` settling payouts,
/// `payrun cancel`) must wait for a worker: it has not stopped, and a
/// request it sent inside its lease may not be over yet (the wait of
/// [`released`] for a payout in flight has not passed).
pub fn busy(stopped: bool, heartbeat_age: Duration, terms: LeaseTerms) -> bool {
    !released(State::Executing, stopped, heartbeat_age, terms)
}

/// An operator's change refused because workers may still send: each
/// named with its run, host, pid and lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkersBusy {
    /// (run, worker) for each worker that may still send.
    pub workers: Vec<(i64, WorkerInfo)>,
    pub terms: LeaseTerms,
}

impl std::fmt::Display for WorkersBusy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |d: Duration| format!("{:.1} s", d.as_secs_f64());
        let lease = self.terms.lease;
        let over = self.terms.lease.saturating_add(self.terms.deadline);
        let each: Vec<String> = self
            .workers
            .iter()
            .map(|(run, w)| {
                let state = if w.heartbeat_age < lease {
                    format!("live, lease {}", secs(lease))
                } else {
                    format!(
                        "lease lapsed; a request it sent may be in flight for {} more",
                        secs(over.saturating_sub(w.heartbeat_age))
                    )
                };
                format!(
                    "worker {} of run {run} on {} pid {} (last heartbeat {} ago, {state})",
                    w.id,
                    w.host,
                    w.pid,
                    secs(w.heartbeat_age)
                )
            })
            .collect();
        write!(
            f,
            "payrun run is at work on this database: {}. Nothing was changed: stop it (Ctrl-C, \
             or let it finish), or wait until its requests are over, then run this again \
             (`payrun status` lists the workers)",
            each.join("; ")
        )
    }
}

impl std::error::Error for WorkersBusy {}

/// Whether `me` may take over a payout in `state` leased by `owner`: a
/// payout a resume would pick up (`machine::RESUMED`) that its worker
/// released ([`released`], asked through `released(owner, state)`), or
/// that no worker holds (left by a process that registered none). Never
/// one of `me`'s own, never a pending or settled one.
pub fn adoptable(
    state: State,
    owner: Option<i64>,
    me: i64,
    released: impl Fn(i64, State) -> bool,
) -> bool {
    RESUMED.contains(&state)
        && match owner {
            None => true,
            Some(o) => o != me && released(o, state),
        }
}

/// Whether a worker with nothing left to claim must wait for a payout
/// before ending its pass: one another worker has in flight (it is on it,
/// or, gone, someone must adopt it), or one that is adoptable now. Not a
/// live worker's `initiated` payout: it may be resting there (a currency
/// halted, `--initiate-only`), and two workers waiting on each other's
/// would wait for ever.
pub fn waits_for(
    state: State,
    owner: Option<i64>,
    me: i64,
    released: impl Fn(i64, State) -> bool,
) -> bool {
    owner != Some(me) && (IN_FLIGHT.contains(&state) || adoptable(state, owner, me, released))
}

/// What is left to do by others before a run can end: payouts no one has
/// claimed yet, and those [`waits_for`] says to wait for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outstanding {
    pub pending: u64,
    pub held_by_others: u64,
}

impl Outstanding {
    /// Nothing left for anyone: this worker may end its pass.
    pub fn none(&self) -> bool {
        self.pending == 0 && self.held_by_others == 0
    }
}

impl Store {
    /// Whether several processes may work on this checkpoint's runs at once.
    pub fn is_shared(&self) -> bool {
        matches!(self, Store::Postgres(_))
    }

    /// Runs `f` while no other process of this checkpoint runs its own
    /// `f`: workers starting together find or import their run one after
    /// the other, so the first imports it and the others join it. SQLite
    /// needs nothing (its file lock admits one process).
    pub fn one_start_at_a_time<T>(&mut self, f: impl FnOnce(&mut Store) -> Result<T>) -> Result<T> {
        if let Store::Postgres(p) = self {
            p.lock_starts()?;
        }
        let out = f(self);
        if let Store::Postgres(p) = self {
            let unlocked = p.unlock_starts();
            let out = out?;
            unlocked?;
            return Ok(out);
        }
        out
    }

    /// Before an operator's change (`reconcile` settling payouts,
    /// `cancel`) on a shared database: refuses with [`WorkersBusy`] while a
    /// worker of `runs` (every run: `None`) may still send ([`busy`]), and
    /// otherwise keeps every new worker from joining until this store is
    /// dropped (the operators' lock; `register_worker` is refused
    /// meanwhile). SQLite needs nothing: its file lock admits one process.
    pub fn exclude_workers(&mut self, runs: Option<Vec<i64>>, terms: LeaseTerms) -> Result<()> {
        match self {
            Store::Sqlite(_) => Ok(()),
            Store::Postgres(p) => p.exclude_workers(runs, terms),
        }
    }

    /// Records this process as a worker of `run_id`; `None` on SQLite.
    pub fn register_worker(&mut self, run_id: i64, host: &str, pid: u32) -> Result<Option<i64>> {
        match self {
            Store::Sqlite(_) => Ok(None),
            Store::Postgres(p) => p.register_worker(run_id, host, pid).map(Some),
        }
    }

    /// Writes from now on under `worker`'s lease (the fence): a transition
    /// applies only to a payout this worker holds.
    pub fn set_worker(&mut self, worker: Option<i64>) {
        if let Store::Postgres(p) = self {
            p.set_worker(worker);
        }
    }

    /// Refreshes the worker's heartbeat; `false` when its lease had already
    /// expired (or it stopped): it is gone for good and must not send.
    pub fn heartbeat(&mut self, worker: i64, lease: Duration) -> Result<bool> {
        match self {
            Store::Sqlite(_) => Ok(true),
            Store::Postgres(p) => p.heartbeat(worker, lease),
        }
    }

    /// Marks the worker stopped: its payouts may be adopted at once.
    pub fn stop_worker(&mut self, worker: i64) -> Result<()> {
        match self {
            Store::Sqlite(_) => Ok(()),
            Store::Postgres(p) => p.stop_worker(worker),
        }
    }

    /// The workers of a run that are live or still hold payouts.
    pub fn workers(&self, run_id: i64) -> Result<Vec<WorkerInfo>> {
        match self {
            Store::Sqlite(_) => Ok(Vec::new()),
            Store::Postgres(p) => p.workers(run_id),
        }
    }

    /// Takes over (lease owner := `me`) the payouts of `run_id` in a
    /// resumed state that their worker released ([`released`]), and
    /// returns them in the order a resume takes them (`machine::RESUMED`,
    /// then file order). Adopts nothing unless `me` itself is live.
    pub fn adopt(&mut self, run_id: i64, me: i64, terms: LeaseTerms) -> Result<Vec<Work>> {
        match self {
            Store::Sqlite(_) => Ok(Vec::new()),
            Store::Postgres(p) => p.adopt(run_id, me, terms),
        }
    }

    /// Reserves `span_us` microseconds of the provider rate schedule `key`
    /// shared by every worker (`limiter::shared`): the start of the span
    /// and the server's now, in µs. Only a shared checkpoint has one.
    pub fn reserve_rate(&mut self, key: &str, span_us: i64) -> Result<(i64, i64)> {
        match self {
            Store::Sqlite(_) => anyhow::bail!("a SQLite checkpoint has no shared rate"),
            Store::Postgres(p) => p.reserve_rate(key, span_us),
        }
    }

    /// The adaptive pace `key` shared by every worker (`limiter::pooled`),
    /// as a worker joining finds it. Only a shared checkpoint has one.
    pub fn join_pace(&mut self, key: &str, ceiling: f64) -> Result<Pace> {
        match self {
            Store::Sqlite(_) => anyhow::bail!("a SQLite checkpoint has no shared pace"),
            Store::Postgres(p) => p.join_pace(key, ceiling),
        }
    }

    /// Reserves `n` slots of the adaptive pace `key`, giving back the
    /// `unused` ones (`Pace::reserve`).
    pub fn reserve_pace(
        &mut self,
        key: &str,
        n: u32,
        ceiling: f64,
        unused: Unused,
    ) -> Result<Reservation> {
        match self {
            Store::Sqlite(_) => anyhow::bail!("a SQLite checkpoint has no shared pace"),
            Store::Postgres(p) => p.reserve_pace(key, n, ceiling, unused),
        }
    }

    /// Applies a worker's answers to the adaptive pace `key`.
    pub fn report_pace(
        &mut self,
        key: &str,
        seen: Vec<Seen>,
        ceiling: f64,
        epoch_us: i64,
    ) -> Result<Pace> {
        match self {
            Store::Sqlite(_) => anyhow::bail!("a SQLite checkpoint has no shared pace"),
            Store::Postgres(p) => p.report_pace(key, seen, ceiling, epoch_us),
        }
    }

    /// Payouts of `run_id` still pending, and those held by others that
    /// `me` must wait for ([`waits_for`]), in one snapshot.
    pub fn outstanding(&self, run_id: i64, me: i64, terms: LeaseTerms) -> Result<Outstanding> {
        match self {
            Store::Sqlite(_) => Ok(Outstanding::default()),
            Store::Postgres(p) => p.outstanding(run_id, me, terms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_is_gone_once_stopped_or_a_lease_old() {
        let lease = Duration::from_secs(15);
        assert!(!expired(false, Duration::ZERO, lease));
        assert!(!expired(false, Duration::from_millis(14_999), lease));
        assert!(expired(false, lease, lease));
        assert!(expired(false, Duration::from_secs(600), lease));
        assert!(expired(true, Duration::ZERO, lease));
    }

    #[test]
    fn an_operator_waits_for_a_worker_until_its_requests_are_over() {
        let terms = LeaseTerms {
            lease: Duration::from_secs(45),
            deadline: Duration::from_secs(30),
        };
        let s = Duration::from_secs;
        assert!(busy(false, s(1), terms));
        assert!(
            busy(false, s(50), terms),
            "lapsed, a request may be in flight"
        );
        assert!(!busy(false, s(75), terms));
        assert!(!busy(true, s(1), terms), "stopped after its calls ended");
        let w = |id, age| WorkerInfo {
            id,
            host: "box-b".into(),
            pid: 812,
            heartbeat_at: String::new(),
            heartbeat_age: s(age),
            stopped: false,
            held: 0,
        };
        let text = WorkersBusy {
            workers: vec![(1, w(2, 3)), (1, w(3, 50))],
            terms,
        }
        .to_string();
        assert!(
            text.contains(
                "worker 2 of run 1 on box-b pid 812 (last heartbeat 3.0 s ago, live, lease 45.0 s)"
            ),
            "{text}"
        );
        assert!(text.contains("in flight for 25.0 s more"), "{text}");
        assert!(text.contains("Nothing was changed"), "{text}");
    }

    #[test]
    fn a_payout_left_in_flight_is_released_a_request_deadline_after_the_lease() {
        let terms = LeaseTerms {
            lease: Duration::from_secs(45),
            deadline: Duration::from_secs(30),
        };
        let s = Duration::from_secs;
        for state in [State::Initiating, State::Executing] {
            assert!(!released(state, false, s(45), terms), "{state}");
            assert!(!released(state, false, s(74), terms), "{state}");
            assert!(released(state, false, s(75), terms), "{state}");
            // A worker that stopped ended its calls first.
            assert!(released(state, true, Duration::ZERO, terms), "{state}");
        }
        // Nothing can be on its way for an initiated payout: the lease.
        assert!(!released(State::Initiated, false, s(44), terms));
        assert!(released(State::Initiated, false, s(45), terms));
    }

    #[test]
    fn only_resumable_payouts_of_gone_workers_are_adopted() {
        let gone = |w: i64, _: State| w == 7;
        for s in [State::Initiating, State::Initiated, State::Executing] {
            assert!(adoptable(s, Some(7), 1, gone), "{s}");
            assert!(adoptable(s, None, 1, gone), "{s}");
            // A live worker's, and one's own, stay where they are.
            assert!(!adoptable(s, Some(8), 1, gone), "{s}");
            assert!(!adoptable(s, Some(1), 1, |_, _| true), "{s}");
        }
        for s in [
            State::Pending,
            State::Processing,
            State::Executed,
            State::Unknown,
            State::Cancelled,
        ] {
            assert!(!adoptable(s, Some(7), 1, gone), "{s}");
        }
    }

    #[test]
    fn a_worker_waits_for_payouts_in_flight_and_adoptable_ones_only() {
        let gone = |w: i64, _: State| w == 7;
        for s in [State::Initiating, State::Executing] {
            assert!(waits_for(s, Some(8), 1, gone), "{s}: a live worker's");
            assert!(waits_for(s, Some(7), 1, gone), "{s}: to adopt");
            assert!(!waits_for(s, Some(1), 1, gone), "{s}: its own");
        }
        // A live worker's initiated payout may rest there: not waited for.
        assert!(!waits_for(State::Initiated, Some(8), 1, gone));
        assert!(waits_for(State::Initiated, Some(7), 1, gone));
        assert!(waits_for(State::Initiated, None, 1, gone));
        for s in [
            State::Pending,
            State::Processing,
            State::Unknown,
            State::Executed,
        ] {
            assert!(!waits_for(s, Some(7), 1, gone), "{s}");
        }
    }

    #[test]
    fn nothing_outstanding_only_when_nothing_pending_nor_held() {
        assert!(Outstanding::default().none());
        let pending = Outstanding {
            pending: 1,
            held_by_others: 0,
        };
        let held = Outstanding {
            pending: 0,
            held_by_others: 3,
        };
        assert!(!pending.none() && !held.none());
    }
}
