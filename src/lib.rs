//! payrun: a batch payout processor. The library owns all the work; the
//! `payrun` binary only parses the command line and maps the outcome to an exit
//! code. One module per concern, as `DESIGN.md` section 1 lays out.

pub mod card;
pub mod cli;
pub mod config;
pub mod engine;
pub mod input;
pub mod limiter;
pub mod payout;
pub mod provider;
pub mod report;
pub mod sandbox;
pub mod store;
pub mod validate;

/// Process exit codes (DESIGN.md section 10). Scripts and cron jobs branch on
/// these, so they are part of the interface and never change meaning.
pub mod exit {
    /// Every payout executed (or, for `validate`, every row valid).
    pub const OK: i32 = 0;
    /// The run could not proceed: bad config, I/O, authentication.
    pub const FATAL: i32 = 1;
    /// Validation found bad rows and nothing was sent.
    pub const INVALID: i32 = 2;
    /// The run finished with failed or unknown payouts.
    pub const INCOMPLETE: i32 = 3;
}
