//! Process exit codes. Scripts and cron jobs branch on these, so they are
//! part of the interface and never change meaning (README, "Exit codes").
//! The library returns data; `cmd` maps each outcome to one of these, and
//! `main` turns it into the process's status. A leaf.

/// How a command ended, as the shell sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every payout executed (or, for `validate`, every row valid).
    Ok,
    /// The run could not proceed: bad config, I/O, authentication.
    Fatal,
    /// Validation found bad rows and nothing was sent.
    Invalid,
    /// The run finished with failed or unknown payouts.
    Incomplete,
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Ok => 0,
            Exit::Fatal => 1,
            Exit::Invalid => 2,
            Exit::Incomplete => 3,
        }
    }

    /// `Ok` when `complete`, else `Incomplete`.
    pub fn complete_if(complete: bool) -> Exit {
        if complete { Exit::Ok } else { Exit::Incomplete }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_never_change() {
        let codes = [Exit::Ok, Exit::Fatal, Exit::Invalid, Exit::Incomplete].map(Exit::code);
        assert_eq!(codes, [0, 1, 2, 3]);
    }
}
