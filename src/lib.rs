//! payrun: a batch payout processor. The library owns all the work and
//! returns data; `cmd` (one file per subcommand) shows it and chooses the
//! exit code; the `payrun` binary only calls `cmd`. `ARCHITECTURE.md` maps
//! the modules and their layers.

// Leaves: import no other module of payrun.
pub mod clock;
pub mod exit;
pub mod fault;
pub mod lang;
pub mod output;
pub mod shutdown;
pub mod who;

// Domain data and rules.
pub mod config;
pub mod limiter;
pub mod machine;
pub mod payout;

// Input, validation, the provider.
pub mod card;
pub mod input;
pub mod provider;
pub mod sandbox;
pub mod validate;

// Persistence and the work.
pub mod engine;
pub mod reconcile;
pub mod report;
pub mod signoff;
pub mod store;
pub mod template;

// The command line: the only layer that prints or exits.
pub mod cmd;
