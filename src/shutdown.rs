//! The shutdown signal, passed into the library as a value (as mini-redis
//! does): the command layer decides what triggers it (Ctrl-C, SIGTERM) and
//! what a second signal does; the engine only listens. A leaf.

use tokio::sync::watch;

/// Fires the signal. Held by the command layer.
#[derive(Debug)]
pub struct Trigger(watch::Sender<bool>);

/// Listens for the signal. Cheap to clone; handed to the engine.
#[derive(Debug, Clone)]
pub struct Shutdown(watch::Receiver<bool>);

/// A new signal, not yet fired.
pub fn channel() -> (Trigger, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (Trigger(tx), Shutdown(rx))
}

impl Trigger {
    pub fn fire(&self) {
        let _ = self.0.send(true);
    }
}

impl Shutdown {
    /// A listener that never fires: for callers without a stop signal.
    pub fn never() -> Shutdown {
        let (tx, rx) = watch::channel(false);
        // The sender is dropped: `recv` pends for ever, `fired` says no.
        drop(tx);
        Shutdown(rx)
    }

    /// Whether the signal has fired, without waiting: checked before each
    /// request that a loop is about to send.
    pub fn fired(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the signal has fired. Pends for ever if the trigger is
    /// dropped without firing.
    pub async fn recv(&mut self) {
        if self.0.wait_for(|fired| *fired).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fires_once_for_every_listener() {
        let (trigger, shutdown) = channel();
        let mut a = shutdown.clone();
        let mut b = shutdown;
        assert!(!a.fired());
        trigger.fire();
        a.recv().await;
        b.recv().await;
        assert!(a.fired() && b.fired());
        assert!(!Shutdown::never().fired());
    }
}
