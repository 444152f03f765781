//! Where an import's database calls run. The blocking client must not be
//! called on a thread that drives async tasks, and an import makes one
//! call per row it looks up: rather than a thread per call, an import
//! started on such a thread hands the connection to one plain thread for
//! its whole life and sends it the calls; anywhere else it calls directly.

use anyhow::{Result, anyhow};
use postgres::Client;
use std::cell::RefCell;
use std::sync::mpsc;
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// The connection of an import, and the thread it lives on if any.
pub(super) enum Driver {
    Direct(Box<RefCell<Client>>),
    Thread {
        jobs: mpsc::Sender<Job>,
        join: JoinHandle<Client>,
    },
}

impl Driver {
    /// Takes the connection: onto a thread of its own when the caller is
    /// on an async runtime.
    pub(super) fn new(client: Client) -> Driver {
        if tokio::runtime::Handle::try_current().is_err() {
            return Driver::Direct(Box::new(RefCell::new(client)));
        }
        let (jobs, rx) = mpsc::channel::<Job>();
        let join = std::thread::Builder::new()
            .name("payrun-pg-import".into())
            .spawn(move || {
                let mut client = client;
                for job in rx {
                    job(&mut client);
                }
                client
            })
            .expect("cannot spawn the database import thread");
        Driver::Thread { jobs, join }
    }

    /// Runs `f` on the connection and returns what it returns.
    pub(super) fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> T + Send + 'static,
    ) -> Result<T> {
        match self {
            Driver::Direct(client) => Ok(f(&mut client.borrow_mut())),
            Driver::Thread { jobs, .. } => {
                let (tx, rx) = mpsc::sync_channel(1);
                jobs.send(Box::new(move |c: &mut Client| {
                    let _ = tx.send(f(c));
                }))
                .map_err(|_| stopped())?;
                rx.recv().map_err(|_| stopped())
            }
        }
    }

    /// Gives the connection back (`None` if its thread died with it).
    pub(super) fn finish(self) -> Option<Client> {
        match self {
            Driver::Direct(client) => Some(client.into_inner()),
            Driver::Thread { jobs, join } => {
                drop(jobs);
                join.join().ok()
            }
        }
    }
}

fn stopped() -> anyhow::Error {
    anyhow!("the database import thread stopped")
}
