//! The errors of the store that callers branch on, the same whichever
//! backend (SQLite or PostgreSQL) raised them.

use crate::machine::State;

/// Why a write was not committed. Every command of the failed group gets
/// the same answer, so it is `Clone`; nothing of the group is committed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The payout was not in the state the transition comes from: another
    /// process, or a bug, moved it since it was read.
    #[error(
        "payout {id} was not in state {from} any more (moving it to {to}); another process changed it"
    )]
    Conflict { id: i64, from: State, to: State },
    /// The state machine has no such transition: a bug in the caller.
    #[error(
        "refused to move {} from {from} to {to}: not a transition payrun makes",
        id.map_or("payouts".to_string(), |id| format!("payout {id}"))
    )]
    NotAllowed {
        id: Option<i64>,
        from: State,
        to: State,
    },
    /// The database could not commit: disk full, an I/O error, a damaged
    /// file, a PostgreSQL server gone. What was committed before stays safe.
    #[error(
        "cannot record progress in the database ({0}). Everything committed before is safe; \
         fix the cause (a full disk or a damaged database file; for PostgreSQL, a server that \
         stopped or cannot be reached), then run the same command again to resume"
    )]
    Disk(String),
    /// The writer thread is gone (the run is shutting down).
    #[error("the database writer stopped")]
    Stopped,
}

impl From<anyhow::Error> for WriteError {
    fn from(e: anyhow::Error) -> Self {
        WriteError::Disk(format!("{e:#}"))
    }
}

/// Transaction ids already used, one line per row (at most
/// [`MAX_DUPLICATES_LISTED`], then a count of the rest).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.join("\n"))]
pub struct DuplicateIds(pub Vec<String>);

/// Why [`Import::commit`] refused. The caller branches on it: duplicates
/// are the user's to fix (listed, exit as bad input); anything else is the
/// database failing.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    DuplicateIds(DuplicateIds),
    #[error(transparent)]
    Database(#[from] anyhow::Error),
}

/// How many duplicate transaction ids to name before summarising: enough
/// to see the pattern, not a wall of text.
pub(crate) const MAX_DUPLICATES_LISTED: usize = 20;

/// An operator's decision (`payrun reconcile`) the state machine lacks.
pub(crate) fn check_decision(id: i64, from: State, to: State) -> anyhow::Result<()> {
    if !crate::machine::allowed(from, to) {
        anyhow::bail!(
            "refused to move payout {id} from {from} to {to}: not a decision payrun records"
        );
    }
    Ok(())
}

/// An operator's decision (or a re-send's claim) on a payout that is no
/// longer in the state it was read in: another process, terminal or
/// worker changed it meanwhile. Nothing was written; callers that go on
/// with other payouts (`--statement`, `--poll`, `--resend`) tell it apart
/// with `downcast_ref` and skip that payout, saying so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the payout changed state meanwhile (another process or terminal settled or claimed it); list it again"
)]
pub struct ChangedMeanwhile;

/// Whether `e` is (or wraps) a [`ChangedMeanwhile`].
pub fn changed_meanwhile(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.downcast_ref::<ChangedMeanwhile>().is_some())
}
