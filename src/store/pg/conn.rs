//! How the operations use the connection: the blocking client must not run
//! on a thread that drives async tasks (`payrun reconcile` polls and
//! resolves inside the runtime), so every call goes through [`Pg::call`],
//! which moves it off the runtime when needed; and a stream of rows (a
//! report of a million rows) goes through [`Pg::stream`], which produces
//! the rows on that other thread and hands them to the caller's callback on
//! the caller's thread in small batches, never holding the run in memory.

use super::{Pg, off_runtime};
use anyhow::{Context, Result, anyhow};
use postgres::Client;

/// Items handed from the producing thread to the caller at a time.
const BATCH: usize = 512;

/// Batches in flight between the two threads (the memory bound).
const BATCHES_QUEUED: usize = 2;

impl Pg {
    /// Runs `f` with the connection, off the async runtime if the caller
    /// is on one.
    pub(crate) fn call<T: Send>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T> + Send,
    ) -> Result<T> {
        let mut guard = self.client.borrow_mut();
        let client: &mut Client = guard.as_mut().context(super::LOST)?;
        off_runtime(move || f(client))
    }

    /// Calls `f` for every item `produce` emits with the connection, in
    /// order; an error of `f` stops `produce` and is returned. `f` runs on
    /// the caller's thread, so it need not be `Send`.
    pub(super) fn stream<T: Send>(
        &self,
        produce: impl FnOnce(&mut Client, &mut dyn FnMut(T) -> Result<()>) -> Result<()> + Send,
        mut f: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        let mut guard = self.client.borrow_mut();
        let client: &mut Client = guard.as_mut().context(super::LOST)?;
        if tokio::runtime::Handle::try_current().is_err() {
            return produce(client, &mut f);
        }
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<T>>(BATCHES_QUEUED);
        std::thread::scope(|s| {
            let producer = s.spawn(move || {
                let mut batch = Vec::with_capacity(BATCH);
                let mut emit = |item| {
                    batch.push(item);
                    if batch.len() == BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                        tx.send(full).map_err(|_| anyhow!("the reader stopped"))?;
                    }
                    Ok(())
                };
                produce(client, &mut emit)?;
                if !batch.is_empty() {
                    tx.send(batch).map_err(|_| anyhow!("the reader stopped"))?;
                }
                Ok(())
            });
            let mut consumed = Ok(());
            'batches: for batch in rx.iter() {
                for item in batch {
                    consumed = f(item);
                    if consumed.is_err() {
                        break 'batches;
                    }
                }
            }
            // Dropping the receiver stops a producer still sending.
            drop(rx);
            let produced = producer
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            consumed.and(produced)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use crate::store::test_support::pg_target;

    /// On a runtime thread the rows are produced elsewhere and arrive in
    /// order; an error of the callback stops the stream and is returned.
    #[test]
    fn streams_from_a_runtime_thread_and_stops_on_error() {
        let Some(db) = pg_target() else {
            return;
        };
        let Store::Postgres(pg) = Store::connect(&db).unwrap() else {
            unreachable!()
        };
        let produce = |c: &mut postgres::Client,
                       emit: &mut dyn FnMut(i64) -> anyhow::Result<()>| {
            for r in c.query("SELECT generate_series(1, 2000)::BIGINT", &[])? {
                emit(r.get(0))?;
            }
            Ok(())
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut seen = Vec::new();
            pg.stream(produce, |n| {
                seen.push(n);
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, (1..=2000).collect::<Vec<_>>());
            let mut count = 0;
            let err = pg
                .stream(produce, |_| {
                    count += 1;
                    anyhow::ensure!(count < 700, "disk full");
                    Ok(())
                })
                .unwrap_err();
            assert_eq!(format!("{err}"), "disk full");
            assert_eq!(count, 700);
            // The connection is still usable afterwards.
            let one = pg.call(|c| Ok(c.query_one("SELECT 1", &[])?.get::<_, i32>(0)));
            assert_eq!(one.unwrap(), 1);
        });
    }
}
