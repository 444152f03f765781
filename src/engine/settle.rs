//! The built-in sandbox started on the books kept beside a database (for
//! `run --sandbox` and `reconcile --sandbox --poll`), and a run's wait
//! before its verdict (`settle_wait`, docs/closing.md): its
//! `processing` and `unknown` payouts are asked about with the provider's
//! status call (`reconcile::poll`) for up to `settle_wait`, under a rate
//! limiter of the run's settings, each round reported as an
//! [`Event::Settling`]. The stop signal ends the wait; what is still open
//! then goes into the verdict as it is.

use super::{Event, Settings};
use crate::provider::Client;
use crate::reconcile::poll::{self, Ask};
use crate::shutdown::Shutdown;
use crate::store::Store;
use anyhow::Result;

/// Starts the built-in sandbox on the books kept beside the database file
/// `db` (`sandbox_state_file`), with a fresh key, and a client of it (the
/// built-in profile, status call included).
pub async fn builtin_sandbox(db: &std::path::Path) -> Result<(crate::sandbox::Running, Client)> {
    use anyhow::Context;
    use rand::Rng;
    let key = format!("sk_sandbox_{:016x}", rand::rng().random::<u64>());
    let config = crate::sandbox::SandboxConfig {
        api_key: key.clone(),
        state_file: Some(super::sandbox_state_file(db)),
        ..Default::default()
    };
    let running = crate::sandbox::start(config)
        .await
        .context("cannot start the built-in sandbox")?;
    let client = Client::new(&running.base_url(), &secrecy::SecretString::from(key))?;
    Ok((running, client))
}

pub(super) async fn before_verdict(
    store: &mut Store,
    client: &Client,
    provider: &str,
    settings: &Settings,
    run_id: i64,
    stop: Shutdown,
    notify: &dyn Fn(Event),
) -> Result<()> {
    let wait = settings.config.settle_wait();
    if wait.is_zero() || !client.has_status_call() {
        return Ok(());
    }
    let limiter = crate::limiter::Limiter::new(crate::limiter::Settings::new(
        settings.engine.rate,
        settings.engine.max_concurrency,
    ));
    let ask = Ask {
        provider: provider.to_string(),
        run: Some(run_id),
        wait,
    };
    poll::poll(store, client, &limiter, &ask, Some(stop), |p| {
        notify(Event::Settling(*p))
    })
    .await?;
    Ok(())
}
