//! Test-only fault points: `PAYRUN_FAULT=name` (or `name:N` for the Nth
//! hit) makes the process die on the spot at that point, as a power cut
//! would, so crash tests hit each window on purpose. Points:
//! `before_send` (intent committed, request not yet sent; also a re-send's
//! claim, in the run and in `reconcile --resend`),
//! `after_answer` (answer received, outcome not committed),
//! `after_intent_commit` (execute intent committed), `before_commit`
//! (a group commit about to be committed).
//!
//! A leaf: the engine and the store both call it. Its one line on stderr is
//! the only output of the library, and it precedes an abort: the crash
//! tests read it to know the process died where they asked.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

static SPEC: OnceLock<Option<(String, u64)>> = OnceLock::new();
static HITS: AtomicU64 = AtomicU64::new(0);

pub fn hit(name: &str) {
    let spec = SPEC.get_or_init(|| {
        let v = std::env::var("PAYRUN_FAULT").ok()?;
        let (n, k) = match v.split_once(':') {
            Some((n, k)) => (n.to_string(), k.parse().unwrap_or(1)),
            None => (v, 1),
        };
        Some((n, k))
    });
    if let Some((n, k)) = spec
        && n == name
        && HITS.fetch_add(1, Ordering::SeqCst) + 1 == *k
    {
        let _ = writeln!(
            std::io::stderr(),
            "payrun: fault point {name} reached, dying"
        );
        std::process::abort();
    }
}
