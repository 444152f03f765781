//! Magic account numbers: an `accountId` ending with one of these makes
//! the sandbox answer deterministically, so tests can produce business
//! failures and ambiguous answers without random faults; and what each
//! one does to a call.

use super::super::faults::Ambiguity;
use super::Failure;

/// `/executes` fails: 422 `RECIPIENT_NOT_FOUND`, nothing debited.
pub const RECIPIENT_NOT_FOUND: &str = "000000000404";
/// `/executes` fails: 422 `LIMIT_EXCEEDED`, nothing debited.
pub const LIMIT_EXCEEDED: &str = "000000000429";
/// `/initiates` is refused: 422 `INVALID_ACCOUNT`, nothing recorded.
pub const INVALID_ACCOUNT: &str = "000000000422";
/// The first `/executes` is carried out (debited) and answered 503;
/// later ones answer `ALREADY_EXECUTED` as usual.
pub const EXECUTE_THEN_503: &str = "000000000503";
/// The first `/executes` is carried out (debited) and the connection is
/// cut without an answer; later ones answer `ALREADY_EXECUTED`.
pub const EXECUTE_THEN_CUT: &str = "000000000504";
/// Every `/initiates` answers 500 before anything is recorded: a poison
/// row that never gets a final answer.
pub const ALWAYS_500: &str = "000000000500";
/// The first `/executes` fails (`RECIPIENT_NOT_FOUND`, nothing debited)
/// and is answered 503: a failure the client never hears of.
pub const FAIL_THEN_503: &str = "000000000513";

fn magic_is(account: &str, magic: &str) -> bool {
    account.ends_with(magic)
}

/// The business failure a magic account's `/executes` meets, if any.
pub(in crate::sandbox) fn magic_failure(account: &str) -> Option<Failure> {
    if magic_is(account, RECIPIENT_NOT_FOUND) || magic_is(account, FAIL_THEN_503) {
        Some(Failure::RecipientNotFound)
    } else if magic_is(account, LIMIT_EXCEEDED) {
        Some(Failure::LimitExceeded)
    } else {
        None
    }
}

/// How a magic account's `/executes` is answered once carried out: 503
/// or a cut connection.
pub(super) fn magic_ambiguity(account: &str) -> Option<Ambiguity> {
    if magic_is(account, EXECUTE_THEN_503) || magic_is(account, FAIL_THEN_503) {
        Some(Ambiguity::Unavailable)
    } else if magic_is(account, EXECUTE_THEN_CUT) {
        Some(Ambiguity::Cut)
    } else {
        None
    }
}

/// Whether `/initiates` of this account always fails with a 500 (magic).
pub(crate) fn always_500(account: &str) -> bool {
    magic_is(account, ALWAYS_500)
}

/// Whether `/initiates` refuses this account outright (magic account).
pub(crate) fn initiate_refused(account: &str) -> bool {
    magic_is(account, INVALID_ACCOUNT)
}
