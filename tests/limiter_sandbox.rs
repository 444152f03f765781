//! The limiter in auto mode against the real in-process sandbox with a rate
//! limit it does not know: a measurement in real time (about 30 s per case),
//! so it is ignored by default. Run with
//! `cargo test --release --test limiter_sandbox -- --ignored --nocapture`.
//! The decision tests with a simulated clock live beside the limiter.

use payrun::limiter::{Limiter, RateMode, Settings};
use payrun::sandbox::{self, SandboxConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;

const SECS: u64 = 30;
const WARM_UP: u64 = 10;

async fn measure(limit: u32, latency_ms: u64, jitter_ms: u64) -> (f64, f64) {
    let running = sandbox::start(SandboxConfig {
        rate_limit: Some(limit),
        latency_ms,
        jitter_ms,
        ..SandboxConfig::default()
    })
    .await
    .expect("sandbox starts");
    let url = format!("{}/initiates", running.base_url());
    let limiter = Arc::new(Limiter::new(Settings::new(
        RateMode::Auto { ceiling: None },
        256,
    )));
    let client = reqwest::Client::new();
    let ok = Arc::new(AtomicU64::new(0));
    let ok_at_warm_up = Arc::new(AtomicU64::new(0));
    let limited = Arc::new(AtomicU64::new(0));
    let other = Arc::new(AtomicU64::new(0));
    let warm = Arc::new(AtomicBool::new(false));
    let next_id = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::new();
    for _ in 0..256 {
        let (limiter, client, url) = (limiter.clone(), client.clone(), url.clone());
        let (ok, limited, other, warm, next_id) = (
            ok.clone(),
            limited.clone(),
            other.clone(),
            warm.clone(),
            next_id.clone(),
        );
        workers.push(tokio::spawn(async move {
            while let Some(slot) = limiter.acquire().await {
                let id = next_id.fetch_add(1, Ordering::Relaxed);
                let body = serde_json::json!({
                    "transactionId": format!("lim-{id}"), "amount": "1000", "currency": "XOF",
                    "payoutMethodId": "momo", "description": "Salary", "accountId": "2250000000001",
                    "sender": {"email": "", "firstname": "", "lastname": "", "address": "", "phone": ""},
                    "beneficiary": {"firstname": "Ama", "lastname": "Mensah", "phone": "", "email": "ama@example.com"}
                });
                let resp = client
                    .post(&url)
                    .bearer_auth(sandbox::DEFAULT_API_KEY)
                    .json(&body)
                    .send()
                    .await;
                match resp.map(|r| (r.status().as_u16(), r.headers().get("retry-after").cloned())) {
                    Ok((429, retry)) => {
                        if warm.load(Ordering::Relaxed) {
                            limited.fetch_add(1, Ordering::Relaxed);
                        }
                        let secs = retry
                            .and_then(|v| v.to_str().ok()?.parse().ok())
                            .unwrap_or(1);
                        slot.rate_limited(Duration::from_secs(secs));
                    }
                    Ok((s, _)) if (200..300).contains(&s) => {
                        ok.fetch_add(1, Ordering::Relaxed);
                        slot.success();
                    }
                    _ => {
                        other.fetch_add(1, Ordering::Relaxed);
                        slot.other();
                    }
                }
            }
        }));
    }
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_secs(WARM_UP)).await;
    ok_at_warm_up.store(ok.load(Ordering::Relaxed), Ordering::Relaxed);
    warm.store(true, Ordering::Relaxed);
    tokio::time::sleep_until(t0 + Duration::from_secs(SECS)).await;
    let accepted = ok.load(Ordering::Relaxed) - ok_at_warm_up.load(Ordering::Relaxed);
    let refused = limited.load(Ordering::Relaxed);
    let stats = limiter.stats();
    limiter.stop();
    for w in workers {
        w.await.unwrap();
    }
    let rate = accepted as f64 / (SECS - WARM_UP) as f64;
    let share = refused as f64 / (accepted + refused).max(1) as f64;
    eprintln!(
        "L={limit} latency {latency_ms}+{jitter_ms} ms: {rate:.1} calls/s ({:.3} L), 429 share {share:.4}, other {}, {stats:?}",
        rate / f64::from(limit),
        other.load(Ordering::Relaxed),
    );
    (rate, share)
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "a 3-minute real-time measurement; see the file's header"]
async fn auto_mode_finds_the_sandbox_limit() {
    let mut failures = Vec::new();
    for limit in [20, 100, 400] {
        for (latency, jitter) in [(50, 0), (100, 400)] {
            let (rate, share) = measure(limit, latency, jitter).await;
            if rate < 0.95 * f64::from(limit) || share > 0.02 {
                failures.push(format!(
                    "L={limit} latency {latency}+{jitter}: {rate:.1} calls/s, 429 share {share:.4}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
