//! A clock that keeps counting while the machine sleeps: the one a
//! worker's lease is measured on (`engine::lease`). `std::time::Instant`
//! is CLOCK_MONOTONIC on Linux, which stops while the machine is
//! suspended, so a worker woken from a suspend would think its lease
//! younger than it is and send after another worker adopted its payouts.
//! CLOCK_BOOTTIME counts the suspension. Elsewhere (no such clock), the
//! monotonic clock stands in. See `ARCHITECTURE.md`, "Several workers on
//! one run".

use std::time::Duration;

/// An instant on the boot clock (time since the machine booted, suspend
/// included). Only differences mean anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Boot(Duration);

impl Boot {
    /// Now, on the boot clock.
    pub fn now() -> Boot {
        Boot(boot_time())
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Boot) -> Duration {
        self.0.saturating_sub(earlier.0)
    }

    /// Time since `self`.
    pub fn elapsed(self) -> Duration {
        Boot::now().saturating_duration_since(self)
    }

    /// `self` moved `d` later.
    pub fn after(self, d: Duration) -> Boot {
        Boot(self.0.saturating_add(d))
    }

    /// `self` moved `d` earlier (not before the boot).
    pub fn before(self, d: Duration) -> Boot {
        Boot(self.0.saturating_sub(d))
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn boot_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_BOOTTIME exists on
    // every Linux since 2.6.39 and the call only writes into `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_BOOTTIME) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn boot_time() -> Duration {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_clock_moves_forward_with_real_time() {
        let a = Boot::now();
        std::thread::sleep(Duration::from_millis(20));
        let b = Boot::now();
        assert!(b > a);
        let d = b.saturating_duration_since(a);
        assert!(d >= Duration::from_millis(20), "{d:?}");
        assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
        assert_eq!(
            a.after(d).saturating_duration_since(a),
            d,
            "after() adds exactly"
        );
        assert!(a.elapsed() >= d);
        assert_eq!(b.before(d), a);
    }
}
