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
//!
//! A test that runs the engine inside its own process (the simulated month,
//! `tests/month/sim.rs`) crashes it there instead with [`arm`]: the threads
//! of one scope (named `SCOPE` or `SCOPE-…`) reaching a point for the Nth
//! time are the process dying there. From that instant nothing leaves
//! those threads for the provider ([`severed`]: the transport answers
//! "not sent", as a connection that cannot be made), and the test's
//! closure, run on the spot, keeps what a crash keeps — the database's
//! committed state and the files as they are. Whatever the run still does
//! afterwards is thrown away by the test.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
    if ARMED_COUNT.load(Ordering::SeqCst) > 0 {
        in_process_hit(name);
    }
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

/// What a [`severed`] transport answers.
pub const SEVERED: &str = "not sent: the process crashed here (an in-process test crash)";

/// The crash of one scope's threads, armed by a test.
struct InProcess {
    scope: String,
    name: String,
    nth: u64,
    hits: AtomicU64,
    crashed: AtomicBool,
    at_crash: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl InProcess {
    fn owns(&self, thread: &str) -> bool {
        thread == self.scope
            || thread
                .strip_prefix(self.scope.as_str())
                .is_some_and(|rest| rest.starts_with('-'))
    }
}

static ARMED: Mutex<Vec<Arc<InProcess>>> = Mutex::new(Vec::new());
/// How many crashes are armed: the one read a process without tests does.
static ARMED_COUNT: AtomicUsize = AtomicUsize::new(0);

/// An armed in-process crash; disarmed when dropped.
pub struct Armed(Arc<InProcess>);

impl Armed {
    /// Whether the scope's threads reached the point (and the closure ran).
    pub fn crashed(&self) -> bool {
        self.0.crashed.load(Ordering::SeqCst)
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let mut armed = ARMED.lock().unwrap_or_else(|e| e.into_inner());
        armed.retain(|a| !Arc::ptr_eq(a, &self.0));
        ARMED_COUNT.store(armed.len(), Ordering::SeqCst);
    }
}

/// Crashes the threads of `scope` (a thread named `scope`, or `scope-…`)
/// at their `nth` hit of the point `name`: from then on [`severed`] holds
/// on those threads, then `at_crash` runs on the thread that hit the point,
/// before that thread goes on. For tests that run the engine in-process.
pub fn arm(scope: &str, name: &str, nth: u64, at_crash: impl FnOnce() + Send + 'static) -> Armed {
    let one = Arc::new(InProcess {
        scope: scope.to_string(),
        name: name.to_string(),
        nth,
        hits: AtomicU64::new(0),
        crashed: AtomicBool::new(false),
        at_crash: Mutex::new(Some(Box::new(at_crash))),
    });
    let mut armed = ARMED.lock().unwrap_or_else(|e| e.into_inner());
    armed.push(one.clone());
    ARMED_COUNT.store(armed.len(), Ordering::SeqCst);
    Armed(one)
}

/// The armed crash of the calling thread's scope, if any.
fn mine() -> Option<Arc<InProcess>> {
    let thread = std::thread::current();
    let name = thread.name()?;
    let armed = ARMED.lock().unwrap_or_else(|e| e.into_inner());
    armed.iter().find(|a| a.owns(name)).cloned()
}

fn in_process_hit(name: &str) {
    let Some(a) = mine() else {
        return;
    };
    if a.name != name || a.crashed.load(Ordering::SeqCst) {
        return;
    }
    if a.hits.fetch_add(1, Ordering::SeqCst) + 1 != a.nth {
        return;
    }
    a.crashed.store(true, Ordering::SeqCst);
    let at_crash = a.at_crash.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(f) = at_crash {
        f();
    }
}

/// Whether the calling thread belongs to a scope whose in-process crash
/// happened: nothing may leave it any more (the transport asks before
/// every request).
pub fn severed() -> bool {
    ARMED_COUNT.load(Ordering::SeqCst) > 0
        && mine().is_some_and(|a| a.crashed.load(Ordering::SeqCst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_armed_crash_fires_once_at_the_nth_hit_of_its_scope_only() {
        let fired = Arc::new(AtomicU64::new(0));
        let seen = fired.clone();
        let armed = arm("fault-test", "before_send", 2, move || {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        let inside = |f: fn() -> bool| {
            std::thread::Builder::new()
                .name("fault-test-rt".into())
                .spawn(f)
                .unwrap()
                .join()
                .unwrap()
        };
        let outside = std::thread::Builder::new()
            .name("fault-test2".into())
            .spawn(|| {
                hit("before_send");
                hit("before_send");
                severed()
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(!outside, "another scope's threads are not counted");
        assert!(!inside(|| {
            hit("after_answer");
            hit("before_send");
            severed()
        }));
        assert!(!armed.crashed());
        assert!(inside(|| {
            hit("before_send");
            severed()
        }));
        assert!(armed.crashed());
        inside(|| {
            hit("before_send");
            true
        });
        assert_eq!(fired.load(Ordering::SeqCst), 1);
        drop(armed);
        assert!(!inside(severed), "disarmed");
    }

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
