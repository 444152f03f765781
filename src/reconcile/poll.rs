//! Settling payouts by asking the provider (its status call, when the
//! profile names one; docs/closing.md, "Ask the provider"): before a run's
//! verdict (for `settle_wait`) and with `payrun reconcile --poll
//! [--until-settled]`. Every `processing` or `unknown` payout made against
//! the provider asked is asked in rounds; between rounds the pause doubles
//! (from [`FIRST_PAUSE`] to [`MAX_PAUSE`]) until every one is final or the
//! wait ends. Each question waits for a slot of the rate limiter and a 429
//! pauses it for its `Retry-After`. Only a clear paid or failed settles,
//! with an audit line. A missing status route or a refused key ends the
//! asking at once; so does the stop signal.

use super::guard::{self, same_provider};
use crate::limiter::{Limiter, RateLimited};
use crate::machine::State;
use crate::provider::Client;
use crate::provider::status::TxStatus;
use crate::shutdown::Shutdown;
use crate::store::{Booked, Store};
use anyhow::Result;
use std::time::Duration;
use tokio::time::Instant;

/// States a status answer may settle.
pub const POLLED: &[State] = &[State::Unknown, State::Processing];

/// The first pause between rounds: a provider that settles within moments
/// of the execute is caught at once.
pub const FIRST_PAUSE: Duration = Duration::from_millis(250);
/// The longest pause between rounds: a slow provider (mobile money, a bank
/// transfer) is asked about once a minute, not hammered.
pub const MAX_PAUSE: Duration = Duration::from_secs(60);

/// How long to keep asking, and who is asking.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The provider the client speaks to as runs record it (`sandbox` for
    /// the built-in sandbox, else its base URL): only payouts of runs made
    /// against it are asked about.
    pub provider: String,
    /// Only this run (`None`: every run).
    pub run: Option<i64>,
    /// Keep asking until this long has passed since the first question
    /// (zero: one round).
    pub wait: Duration,
}

/// Where the asking stands, after each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub round: u32,
    pub asked: u64,
    pub settled: u64,
    /// Still not final among those asked about.
    pub open: u64,
    pub waited: Duration,
    /// The pause before the next round (`None`: no next round).
    pub next: Option<Duration>,
}

/// What polling did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Polled {
    /// (transaction id, from, to, provider's word).
    pub settled: Vec<(String, State, State, String)>,
    /// (transaction id, why) of payouts not asked about or not settled:
    /// an execute on its way (`executing`), or changed meanwhile.
    pub skipped: Vec<(String, guard::NotSettled)>,
    /// Payouts asked about that are still not final.
    pub still_open: u64,
    /// Open payouts of runs made against another provider, not asked about.
    pub not_asked: NotAsked,
    /// Status calls made.
    pub asked: u64,
    /// Why the asking ended early.
    pub ended: Option<Ended>,
}

/// Why the asking ended before every payout was final or the wait over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The stop signal (Ctrl-C, SIGTERM).
    Stopped,
    /// The status path answers 404 without the not-found code.
    NoRoute(String),
    /// The key was refused (HTTP 401 or 403).
    Refused(u16),
}

impl Ended {
    /// Why the asking ended, for people reading `language`.
    pub fn describe_in(&self, language: crate::lang::Language) -> String {
        let c = language.closing();
        match self {
            Ended::Stopped => c.poll_stopped.to_string(),
            Ended::NoRoute(call) => (c.poll_no_route)(call),
            Ended::Refused(http) => (c.poll_refused)(*http),
        }
    }
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe_in(crate::lang::Language::En))
    }
}

/// Open payouts of another provider: (transaction id, that provider).
type NotAsked = Vec<(String, String)>;

/// The payouts `ask` may ask about, those of its provider whose execute
/// is on its way (`executing`: its answer settles it, not a status read
/// beside it), and the open ones of other providers.
#[allow(clippy::type_complexity)]
fn candidates(
    store: &Store,
    ask: &Ask,
) -> Result<(Vec<Booked>, Vec<(String, guard::NotSettled)>, NotAsked)> {
    let runs: std::collections::HashMap<i64, String> = store
        .runs()?
        .into_iter()
        .map(|r| (r.id, r.provider))
        .collect();
    let mut open = Vec::new();
    let mut in_flight = Vec::new();
    let mut not_asked = Vec::new();
    for p in store.booked(ask.run)? {
        if !POLLED.contains(&p.state) && p.state != State::Executing {
            continue;
        }
        let provider = runs.get(&p.run_id).cloned().unwrap_or_default();
        if !same_provider(&provider, &ask.provider) {
            if p.state != State::Executing {
                not_asked.push((p.transaction_id, provider));
            }
        } else if p.state == State::Executing {
            in_flight.push((p.transaction_id, guard::NotSettled::InFlight));
        } else {
            open.push(p);
        }
    }
    Ok((open, in_flight, not_asked))
}

/// Asks the status of every payout `ask` covers, settles what is clear,
/// and asks again after a growing pause until none is open or `ask.wait`
/// has passed. `progress` hears of each round; `stop` ends the asking.
pub async fn poll(
    store: &mut Store,
    client: &Client,
    limiter: &Limiter,
    ask: &Ask,
    mut stop: Option<Shutdown>,
    mut progress: impl FnMut(&Progress),
) -> Result<Polled> {
    let mut out = Polled::default();
    if !client.has_status_call() {
        return Ok(out);
    }
    let (mut open, in_flight, not_asked) = candidates(store, ask)?;
    out.skipped = in_flight;
    out.not_asked = not_asked;
    let start = Instant::now();
    let deadline = start + ask.wait;
    let mut pause = FIRST_PAUSE;
    let mut round = 0;
    while !open.is_empty() {
        round += 1;
        let mut next = Vec::new();
        let mut queue = open.into_iter();
        while let Some(p) = queue.next() {
            let slot = match &mut stop {
                Some(s) => tokio::select! {
                    slot = limiter.acquire() => slot,
                    _ = s.recv() => None,
                },
                None => limiter.acquire().await,
            };
            // None: stopping; what is not asked stays open.
            let Some(slot) = slot else {
                out.ended = Some(Ended::Stopped);
                next.push(p);
                next.extend(queue.by_ref());
                break;
            };
            out.asked += 1;
            let (to, word, code) = match client.status(&p.transaction_id).await {
                Some(TxStatus::Paid(w)) => {
                    slot.success();
                    (State::Executed, w, "STATUS_PAID")
                }
                Some(TxStatus::Failed(w)) => {
                    slot.success();
                    (State::ExecuteFailed, w, "STATUS_FAILED")
                }
                Some(TxStatus::RateLimited(wait)) => {
                    if let RateLimited::TooLong { asked, .. } = slot.rate_limited(wait) {
                        // The limiter caps its pause; the asking honours it
                        // in full, within the wait.
                        let left = deadline.saturating_duration_since(Instant::now());
                        pause_for(asked.min(left), &mut stop).await;
                    }
                    next.push(p);
                    continue;
                }
                Some(TxStatus::NoRoute(call)) => {
                    slot.other();
                    out.ended = Some(Ended::NoRoute(call));
                    (State::Unknown, String::new(), "")
                }
                Some(TxStatus::Refused(http)) => {
                    slot.other();
                    out.ended = Some(Ended::Refused(http));
                    (State::Unknown, String::new(), "")
                }
                Some(TxStatus::NotFinal(_) | TxStatus::NotFound) => {
                    slot.success();
                    next.push(p);
                    continue;
                }
                Some(TxStatus::Unreadable(_)) | None => {
                    slot.other();
                    next.push(p);
                    continue;
                }
            };
            if out.ended.is_some() {
                next.push(p);
                next.extend(queue.by_ref());
                break;
            }
            let reason = format!("status call: the provider answered {word}");
            match store.resolve(p.id, p.state, to, "poll", &reason, code) {
                Ok(()) => out
                    .settled
                    .push((p.transaction_id.clone(), p.state, to, word)),
                // A re-send claimed it (or a terminal settled it) since it
                // was read: left to that, and said.
                Err(e) if crate::store::changed_meanwhile(&e) => {
                    out.skipped
                        .push((p.transaction_id.clone(), guard::NotSettled::Changed));
                }
                Err(e) => return Err(e),
            }
        }
        open = next;
        let now = Instant::now();
        let wait = if open.is_empty() || out.ended.is_some() || now >= deadline {
            None
        } else {
            Some(pause.min(deadline - now))
        };
        progress(&Progress {
            round,
            asked: out.asked,
            settled: out.settled.len() as u64,
            open: open.len() as u64,
            waited: now - start,
            next: wait,
        });
        let Some(wait) = wait else {
            break;
        };
        if !pause_for(wait, &mut stop).await {
            out.ended = Some(Ended::Stopped);
            break;
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
    out.still_open = open.len() as u64;
    Ok(out)
}

/// Sleeps `d`, or less when `stop` fires: `false` then.
async fn pause_for(d: Duration, stop: &mut Option<Shutdown>) -> bool {
    match stop {
        Some(s) => tokio::select! {
            _ = tokio::time::sleep(d) => true,
            _ = s.recv() => false,
        },
        None => {
            tokio::time::sleep(d).await;
            true
        }
    }
}
