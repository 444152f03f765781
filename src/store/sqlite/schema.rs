//! The schema: the tables of a payrun database and the append-only list of
//! migrations that builds them, keyed by `PRAGMA user_version`. A released
//! migration is never edited (a test pins its bytes); a change of schema is
//! a new entry at the end.

use anyhow::{Context, Result};
use rusqlite::Connection;

/// `PRAGMA application_id` of a payrun database ("PAYR"), so a foreign
/// SQLite file is recognised and left alone.
pub const APPLICATION_ID: i32 = 0x5041_5952;

/// Append-only: never edit a released entry, only add new ones. Entry `i`
/// moves the schema from `user_version = i` to `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    identity      TEXT NOT NULL UNIQUE,   -- sha256(file bytes [+ label])
    file_sha256   TEXT NOT NULL,
    label         TEXT NOT NULL DEFAULT '',
    file_path     TEXT NOT NULL,
    provider      TEXT NOT NULL,          -- base URL, or 'sandbox'
    sender_json   TEXT NOT NULL,          -- configured sender at import time
    rows_total    INTEGER NOT NULL,
    rows_rejected INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    finished_at   TEXT,
    -- Payouts of a run have consecutive ids: queries on one run are rowid
    -- ranges, so no (run_id, state) index has to be kept up to date on
    -- every insert and every state change.
    first_payout  INTEGER,
    last_payout   INTEGER
);
CREATE TABLE payouts (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs(id),
    row            INTEGER NOT NULL,
    transaction_id TEXT NOT NULL UNIQUE,  -- also the cross-run duplicate guard
    account_id     TEXT NOT NULL,
    amount         TEXT NOT NULL,         -- decimal as written, major unit
    wire_amount    TEXT NOT NULL,         -- digits sent to the provider
    currency       TEXT NOT NULL,
    method         TEXT NOT NULL,
    description    TEXT NOT NULL,
    b_first        TEXT NOT NULL,
    b_last         TEXT NOT NULL,
    b_phone        TEXT NOT NULL,
    b_email        TEXT NOT NULL,
    sender_json    TEXT,                  -- per-row sender override, rare
    state          TEXT NOT NULL,
    provider_code  TEXT,
    provider_msg   TEXT,
    attempts       INTEGER NOT NULL DEFAULT 0,
    initiated_at   TEXT,
    executed_at    TEXT,
    updated_at     TEXT
);
CREATE TABLE rejected_rows (
    run_id  INTEGER NOT NULL REFERENCES runs(id),
    row     INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    PRIMARY KEY (run_id, row)
);
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY,
    payout_id  INTEGER NOT NULL REFERENCES payouts(id),
    at         TEXT NOT NULL,
    action     TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    reason     TEXT NOT NULL
);
"#,
    // Report outputs: where a run's report was last written and in which
    // style, so `payrun reconcile` can write it again after a change.
    r#"
CREATE TABLE run_reports (
    run_id    INTEGER PRIMARY KEY REFERENCES runs(id),
    path      TEXT NOT NULL,
    delimiter TEXT NOT NULL,
    bom       INTEGER NOT NULL,
    language  TEXT NOT NULL
);
"#,
    // Paid once per beneficiary (docs/rerun.md): runs keep their period and
    // worksheet and the identity scheme they were imported under (1: ids
    // from the file's bytes and row numbers; 2: ids from the payout itself);
    // a re-paid failed payout points at the one it replaces; rows of a file
    // already paid by an earlier run are listed, not paid again.
    r#"
ALTER TABLE runs ADD COLUMN period TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN sheet TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN id_scheme INTEGER NOT NULL DEFAULT 1;
ALTER TABLE payouts ADD COLUMN retry_of INTEGER REFERENCES payouts(id);
CREATE TABLE skipped_rows (
    run_id    INTEGER NOT NULL REFERENCES runs(id),
    row       INTEGER NOT NULL,
    payout_id INTEGER NOT NULL REFERENCES payouts(id),  -- the earlier payout
    PRIMARY KEY (run_id, row)
);
CREATE INDEX runs_created ON runs(created_at);
"#,
    // One person, one account key (docs/rerun.md): each payout's canonical
    // account key (filled for earlier payouts by the first import after the
    // upgrade, which knows the configured phone region), the account as the
    // row gave it when the provider was sent it without spaces, and the run
    // whose import asked for it (a re-payment of a failed payout belongs to
    // the run that first asked; NULL: its own run). The guard looks a person
    // up by key and currency. `run_overrides` keeps what a run was allowed
    // to do beyond the rules (a second payment to a person, a totals row
    // used as a control total) for the approval page, the report summary
    // and the audit trail.
    r#"
ALTER TABLE payouts ADD COLUMN account_key TEXT;
ALTER TABLE payouts ADD COLUMN account_given TEXT;
ALTER TABLE payouts ADD COLUMN origin_run INTEGER REFERENCES runs(id);
CREATE INDEX payouts_account_key ON payouts(account_key, currency);
UPDATE payouts SET origin_run = (SELECT COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = payouts.retry_of) WHERE retry_of IS NOT NULL;
UPDATE payouts SET origin_run = (SELECT COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = payouts.retry_of) WHERE retry_of IS NOT NULL;
UPDATE payouts SET origin_run = (SELECT COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = payouts.retry_of) WHERE retry_of IS NOT NULL;
UPDATE payouts SET origin_run = (SELECT COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = payouts.retry_of) WHERE retry_of IS NOT NULL;
CREATE TABLE run_overrides (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs(id),
    kind        TEXT NOT NULL,     -- 'second_payment' | 'totals_row'
    row         INTEGER NOT NULL,
    payout_id   INTEGER REFERENCES payouts(id),  -- the payout allowed
    earlier_id  INTEGER REFERENCES payouts(id),  -- the payment it repeats
    currency    TEXT,                            -- the row's (or the total's)
    amount      TEXT,                            -- decimal, major unit
    detail      TEXT NOT NULL,
    at          TEXT NOT NULL
);
CREATE INDEX run_overrides_run ON run_overrides(run_id);
"#,
];

/// The schema version this payrun writes and understands.
pub(super) fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Runs the migrations after `from` (the file's `user_version`) in one
/// transaction, then stamps the new version and payrun's application id.
/// A crash part-way leaves the file at `from`, untouched.
pub(super) fn migrate(conn: &mut Connection, from: i64) -> Result<()> {
    if from >= current_version() {
        return Ok(());
    }
    let tx = conn.transaction()?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(from as usize) {
        tx.execute_batch(sql)
            .with_context(|| format!("migration {} failed", i + 1))?;
    }
    tx.execute_batch(&format!(
        "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
        MIGRATIONS.len()
    ))?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// Released migrations are append-only: databases in the field were
    /// built by these exact bytes, so editing one would make a fresh
    /// database differ from an upgraded one.
    #[test]
    fn released_migrations_are_byte_identical() {
        let pinned = ["cc800012bc0493299b0ddeb125cb0fd2dcec2d37a5a7ed4996ea15171c8cc739"];
        assert!(MIGRATIONS.len() >= pinned.len());
        for (i, want) in pinned.iter().enumerate() {
            let got = hex::encode(Sha256::digest(MIGRATIONS[i].as_bytes()));
            assert_eq!(
                &got,
                want,
                "migration {} was edited; add a new one instead",
                i + 1
            );
        }
    }

    #[test]
    fn migrating_a_new_file_stamps_version_and_application_id() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, 0).unwrap();
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        let id: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, current_version());
        assert_eq!(id, APPLICATION_ID);
        // Idempotent at the current version.
        migrate(&mut conn, v).unwrap();
    }
}
