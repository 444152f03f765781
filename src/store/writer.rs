//! The writer thread: one thread owns the connection during a run and
//! commits whatever claims and transitions queued up while the previous
//! commit was in flight, in one transaction (group commit: one fsync for
//! many payouts). Every command is answered only once its transaction is
//! durable, with a [`WriteError`] if it is not. The answers of one commit
//! go back to the async side in one hand-off ([`Deliveries`]): one wake-up
//! of the runtime's thread per commit, not one per command. Each handle
//! notes how long its commands waited ([`Writer::longest_wait`]).

use super::Store;
use super::errors::WriteError;
use super::types::{Transition, Work};
use super::waits::Waits;
use anyhow::Result;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Upper bound on commands folded into one transaction, so one commit never
/// holds replies back for long.
const MAX_GROUP: usize = 4096;

enum Cmd {
    Claim {
        run_id: i64,
        limit: usize,
        reply: oneshot::Sender<Result<Vec<Work>, WriteError>>,
    },
    Apply {
        ts: Vec<Transition>,
        reply: oneshot::Sender<Result<(), WriteError>>,
    },
    /// Finish the commands queued before this one, then stop.
    Stop,
}

/// Handle to the writer thread. Cloneable; every command is answered once
/// its transaction has committed.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Cmd>,
    waits: Arc<Mutex<Waits>>,
}

/// The answers of one commit, handed to the async side at once.
type Deliveries = Vec<(Cmd, Result<Vec<Work>, WriteError>)>;

/// Returns the store when the writer stops.
pub struct WriterThread {
    join: JoinHandle<Store>,
    tx: mpsc::Sender<Cmd>,
}

impl WriterThread {
    /// Stops the writer once the commands already queued are committed, and
    /// returns the store. Handles still held elsewhere (a task not yet
    /// dropped after an error) get "writer stopped" instead of keeping the
    /// thread alive.
    pub fn join(self) -> Result<Store> {
        let _ = self.tx.send(Cmd::Stop);
        self.join
            .join()
            .map_err(|_| anyhow::anyhow!("the database writer thread panicked"))
    }
}

impl Writer {
    /// Moves `store` onto a writer thread. Inside a tokio runtime, the
    /// answers of each commit are handed back through one task spawned on
    /// it (one wake-up of the runtime per commit); outside one, each is
    /// sent from the writer thread.
    pub fn spawn(store: Store) -> (Writer, WriterThread) {
        let (tx, rx) = mpsc::channel::<Cmd>();
        let hand_back = tokio::runtime::Handle::try_current().ok().map(|rt| {
            let (done, mut answers) = tokio::sync::mpsc::unbounded_channel::<Deliveries>();
            rt.spawn(async move {
                while let Some(batch) = answers.recv().await {
                    deliver(batch);
                }
            });
            done
        });
        let join = std::thread::Builder::new()
            .name("payrun-store".into())
            .spawn(move || writer_loop(store, rx, hand_back))
            .expect("cannot spawn the database writer thread");
        let waits = Arc::new(Mutex::new(Waits::new(Instant::now())));
        (
            Writer {
                tx: tx.clone(),
                waits,
            },
            WriterThread { join, tx },
        )
    }

    /// Claims up to `limit` pending payouts (intent `initiating` committed).
    pub async fn claim(&self, run_id: i64, limit: usize) -> Result<Vec<Work>, WriteError> {
        let (reply, rx) = oneshot::channel();
        let cmd = Cmd::Claim {
            run_id,
            limit,
            reply,
        };
        self.request(cmd, rx).await
    }

    /// Commits transitions; returns once they are durable.
    pub async fn apply(&self, ts: Vec<Transition>) -> Result<(), WriteError> {
        let (reply, rx) = oneshot::channel();
        self.request(Cmd::Apply { ts, reply }, rx).await
    }

    /// Sends `cmd` and waits for its answer on `rx`, noting how long.
    async fn request<T>(
        &self,
        cmd: Cmd,
        rx: oneshot::Receiver<Result<T, WriteError>>,
    ) -> Result<T, WriteError> {
        let asked = Instant::now();
        self.tx.send(cmd).map_err(|_| WriteError::Stopped)?;
        let answer = rx.await.map_err(|_| WriteError::Stopped)?;
        self.waited(asked);
        answer
    }

    /// The longest any command of this writer waited for its commit in
    /// the last few seconds ([`super::waits`]).
    pub fn longest_wait(&self) -> Duration {
        self.lock_waits().longest(Instant::now())
    }

    fn waited(&self, asked: Instant) {
        let now = Instant::now();
        self.lock_waits().record(now - asked, now);
    }

    fn lock_waits(&self) -> std::sync::MutexGuard<'_, Waits> {
        self.waits.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Sends each command's answer to whoever waits for it.
fn deliver(batch: Deliveries) {
    for (cmd, result) in batch {
        match cmd {
            Cmd::Claim { reply, .. } => {
                let _ = reply.send(result);
            }
            Cmd::Apply { reply, .. } => {
                let _ = reply.send(result.map(|_| ()));
            }
            Cmd::Stop => {}
        }
    }
}

fn writer_loop(
    mut store: Store,
    rx: mpsc::Receiver<Cmd>,
    hand_back: Option<tokio::sync::mpsc::UnboundedSender<Deliveries>>,
) -> Store {
    let (mut groups, mut commands) = (0u64, 0u64);
    let started = std::time::Instant::now();
    let mut busy = std::time::Duration::ZERO;
    let mut stopping = false;
    while !stopping {
        let Ok(first) = rx.recv() else { break };
        if matches!(first, Cmd::Stop) {
            break;
        }
        let t0 = std::time::Instant::now();
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(Cmd::Stop) => {
                    stopping = true;
                    break;
                }
                Ok(c) => group.push(c),
                Err(_) => break,
            }
        }
        groups += 1;
        commands += group.len() as u64;
        let results = commit(&mut store, &group);
        busy += t0.elapsed();
        let batch: Deliveries = group.into_iter().zip(results).collect();
        match &hand_back {
            // The runtime gone (its task ended): nobody waits any more.
            Some(hand_back) => {
                let _ = hand_back.send(batch);
            }
            None => deliver(batch),
        }
    }
    tracing::debug!(
        groups,
        commands,
        busy_ms = busy.as_millis() as u64,
        total_ms = started.elapsed().as_millis() as u64,
        "database writer done"
    );
    store
}

/// One reply per command of the group (a claim's payouts; nothing for
/// transitions). A conflict fails the whole transaction, so nothing of the
/// group is committed; the commands are then committed one by one, so only
/// the command whose payout moved gets the conflict — with several workers
/// sharing a run, that is a payout another worker took over, and the rest
/// of the group is innocent (`ARCHITECTURE.md`, "Several workers on one
/// run"). Any other error is every command's.
fn commit(store: &mut Store, group: &[Cmd]) -> Vec<Result<Vec<Work>, WriteError>> {
    let ops = ops(group);
    match store.commit_group(&ops) {
        Ok(claimed) => {
            let mut claimed = claimed.into_iter();
            ops.iter()
                .map(|op| match op {
                    GroupOp::Claim { .. } => Ok(claimed.next().unwrap_or_default()),
                    GroupOp::Apply(_) => Ok(Vec::new()),
                })
                .collect()
        }
        Err(WriteError::Conflict { .. }) if ops.len() > 1 => ops
            .iter()
            .map(|op| {
                store
                    .commit_group(std::slice::from_ref(op))
                    .map(|mut claimed| claimed.pop().unwrap_or_default())
            })
            .collect(),
        Err(e) => ops.iter().map(|_| Err(e.clone())).collect(),
    }
}

/// One command of a group, as the backend sees it: the claim (pending
/// payouts of a run become the intent `initiating`) or transitions.
pub(crate) enum GroupOp<'a> {
    Claim { run_id: i64, limit: usize },
    Apply(&'a [Transition]),
}

fn ops(group: &[Cmd]) -> Vec<GroupOp<'_>> {
    group
        .iter()
        .filter_map(|c| match c {
            Cmd::Claim { run_id, limit, .. } => Some(GroupOp::Claim {
                run_id: *run_id,
                limit: *limit,
            }),
            Cmd::Apply { ts, .. } => Some(GroupOp::Apply(ts)),
            Cmd::Stop => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::State;
    use crate::provider::wire::Sender;
    use crate::store::test_support::{new_run, payout};

    #[tokio::test]
    async fn a_writer_notes_how_long_its_commands_waited() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        let run_id = imp.commit().unwrap();
        let (writer, thread) = Writer::spawn(store);
        assert_eq!(writer.longest_wait(), Duration::ZERO);
        let t0 = Instant::now();
        let claimed = writer.claim(run_id, 10).await.unwrap();
        let claim_took = t0.elapsed();
        let waited = writer.longest_wait();
        assert!(!waited.is_zero() && waited <= claim_took, "{waited:?}");
        // Clones share what they noted.
        let other = writer.clone();
        let t0 = Instant::now();
        other
            .apply(vec![Transition::new(
                claimed[0].id,
                State::Initiating,
                State::Initiated,
            )])
            .await
            .unwrap();
        let longest = waited.max(t0.elapsed());
        assert!(writer.longest_wait() <= longest);
        assert!(writer.longest_wait() >= waited);
        drop((writer, other));
        thread.join().unwrap();
    }

    #[tokio::test]
    async fn writer_replies_are_typed_and_a_stopped_writer_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        imp.add(&payout(2, "1000"), "tx-2").unwrap();
        imp.add(&payout(3, "1000"), "tx-3").unwrap();
        let run_id = imp.commit().unwrap();
        let (writer, thread) = Writer::spawn(store);
        let claimed = writer.claim(run_id, 10).await.unwrap();
        assert_eq!(claimed.iter().map(|w| w.row).collect::<Vec<_>>(), [2, 3]);
        assert!(claimed.iter().all(|w| w.state == State::Initiating));
        // Claimed already: a second claim of the same payout is a conflict.
        let id = claimed[0].id;
        let err = writer
            .apply(vec![Transition::new(id, State::Pending, State::Initiating)])
            .await
            .unwrap_err();
        assert!(
            matches!(err, WriteError::Conflict { id: i, .. } if i == id),
            "{err}"
        );
        assert!(writer.claim(run_id, 10).await.unwrap().is_empty());
        let store = thread.join().unwrap();
        assert_eq!(
            store
                .works_in_state(run_id, State::Initiating)
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            writer.claim(run_id, 10).await.unwrap_err(),
            WriteError::Stopped
        );
    }

    #[test]
    fn a_conflict_in_a_group_fails_only_its_own_command() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("p.db")).unwrap();
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r", &sender)).unwrap();
        for row in 2..5 {
            imp.add(&payout(row, "1000"), &format!("tx-{row}")).unwrap();
        }
        let run_id = imp.commit().unwrap();
        let ids: Vec<i64> = store
            .works_in_state(run_id, State::Pending)
            .unwrap()
            .iter()
            .map(|w| w.id)
            .collect();
        let apply = |id: i64, from: State, to: State| Cmd::Apply {
            ts: vec![Transition::new(id, from, to)],
            reply: oneshot::channel().0,
        };
        // The second payout is not where its command thinks it is.
        let group = [
            apply(ids[0], State::Pending, State::Initiating),
            apply(ids[1], State::Initiating, State::Pending),
            apply(ids[2], State::Pending, State::Initiating),
        ];
        let results = commit(&mut store, &group);
        assert!(results[0].is_ok() && results[2].is_ok(), "{results:?}");
        assert!(
            matches!(results[1], Err(WriteError::Conflict { id, .. }) if id == ids[1]),
            "{results:?}"
        );
        let moved = store.works_in_state(run_id, State::Initiating).unwrap();
        assert_eq!(
            moved.iter().map(|w| w.id).collect::<Vec<_>>(),
            [ids[0], ids[2]]
        );
    }
}
