//! Test-only fault points: `PAYRUN_FAULT=name` (or `name:N` for the Nth
//! hit) makes the process die on the spot at that point, as a power cut
//! would, so crash tests hit each window on purpose; `name:N:stop` freezes
//! it there instead (SIGSTOP to itself, every thread at once, as a stalled
//! host or a paused VM would), until the test sends SIGCONT. Points:
//! `before_send` (intent committed, request not yet sent; also a re-send's
//! claim, in the run and in `reconcile --resend`),
//! `checked_execute` (an execute about to leave, the lease just checked:
//! before every attempt), `after_answer` (answer received, outcome not
//! committed), `after_intent_commit` (execute intent committed),
//! `before_commit` (a group commit about to be committed).
//!
//! A leaf: the engine and the store both call it. Its one line on stderr is
//! the only output of the library, and it precedes an abort (or a stop):
//! the crash tests read it to know the process got where they asked.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a fault point does when reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Die,
    Stop,
}

struct Spec {
    name: String,
    nth: u64,
    action: Action,
}

static SPEC: OnceLock<Option<Spec>> = OnceLock::new();
static HITS: AtomicU64 = AtomicU64::new(0);

fn parse(v: &str) -> Spec {
    let mut parts = v.split(':');
    let name = parts.next().unwrap_or_default().to_string();
    let nth = parts.next().and_then(|k| k.parse().ok()).unwrap_or(1);
    let action = match parts.next() {
        Some("stop") => Action::Stop,
        _ => Action::Die,
    };
    Spec { name, nth, action }
}

pub fn hit(name: &str) {
    let spec = SPEC.get_or_init(|| std::env::var("PAYRUN_FAULT").ok().map(|v| parse(&v)));
    let Some(spec) = spec else {
        return;
    };
    if spec.name != name || HITS.fetch_add(1, Ordering::SeqCst) + 1 != spec.nth {
        return;
    }
    match spec.action {
        Action::Die => {
            let _ = writeln!(
                std::io::stderr(),
                "payrun: fault point {name} reached, dying"
            );
            std::process::abort();
        }
        Action::Stop => {
            let _ = writeln!(
                std::io::stderr(),
                "payrun: fault point {name} reached, stopping"
            );
            // SAFETY: raise() with a valid signal number; SIGSTOP stops
            // every thread of the process until a SIGCONT.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_the_point_the_hit_and_the_action() {
        let s = parse("after_answer");
        assert_eq!(
            (s.name.as_str(), s.nth, s.action),
            ("after_answer", 1, Action::Die)
        );
        let s = parse("checked_execute:5:stop");
        assert_eq!(
            (s.name.as_str(), s.nth, s.action),
            ("checked_execute", 5, Action::Stop)
        );
        assert_eq!(parse("before_send:3").action, Action::Die);
    }
}
