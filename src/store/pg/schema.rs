//! The PostgreSQL schema: the same tables as the SQLite one (see
//! `sqlite/schema.rs`), in PostgreSQL's types, plus what several workers
//! sharing a run need: `workers` (who is alive, by heartbeat), the lease
//! column `payouts.lease_owner`, `rate_limits` (one provider limit
//! shared by every worker) and `rate_paces` (one adaptive pace shared by
//! every worker, `rate = "auto"`). Timestamps of payouts and runs are RFC 3339
//! text, as in SQLite, so both backends hand out the same strings;
//! heartbeats and rate reservations use the server's clock (`timestamptz`),
//! which every worker shares.
//!
//! Append-only, as in SQLite: entry `i` moves `payrun_schema.version` from
//! `i` to `i + 1`; a released entry is never edited. Migrations run under
//! an advisory lock, so workers starting together migrate once.

use anyhow::{Context, Result, bail};

/// Key of the advisory lock held while migrating.
const MIGRATE_LOCK: i64 = 0x5041_5952_0001;

/// Append-only: never edit a released entry, only add new ones.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id            BIGSERIAL PRIMARY KEY,
    identity      TEXT NOT NULL UNIQUE,
    file_sha256   TEXT NOT NULL,
    label         TEXT NOT NULL DEFAULT '',
    file_path     TEXT NOT NULL,
    provider      TEXT NOT NULL,
    sender_json   TEXT NOT NULL,
    rows_total    BIGINT NOT NULL,
    rows_rejected BIGINT NOT NULL,
    created_at    TEXT NOT NULL,
    finished_at   TEXT,
    first_payout  BIGINT,
    last_payout   BIGINT,
    period        TEXT NOT NULL DEFAULT '',
    sheet         TEXT NOT NULL DEFAULT '',
    id_scheme     BIGINT NOT NULL DEFAULT 1
);
CREATE INDEX runs_created ON runs(created_at);
CREATE TABLE workers (
    id           BIGSERIAL PRIMARY KEY,
    run_id       BIGINT NOT NULL REFERENCES runs(id),
    host         TEXT NOT NULL,
    pid          BIGINT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    stopped_at   TIMESTAMPTZ
);
CREATE TABLE payouts (
    id             BIGSERIAL PRIMARY KEY,
    run_id         BIGINT NOT NULL REFERENCES runs(id),
    row            BIGINT NOT NULL,
    transaction_id TEXT NOT NULL UNIQUE,
    account_id     TEXT NOT NULL,
    amount         TEXT NOT NULL,
    wire_amount    TEXT NOT NULL,
    currency       TEXT NOT NULL,
    method         TEXT NOT NULL,
    description    TEXT NOT NULL,
    b_first        TEXT NOT NULL,
    b_last         TEXT NOT NULL,
    b_phone        TEXT NOT NULL,
    b_email        TEXT NOT NULL,
    sender_json    TEXT,
    state          TEXT NOT NULL,
    provider_code  TEXT,
    provider_msg   TEXT,
    attempts       BIGINT NOT NULL DEFAULT 0,
    initiated_at   TEXT,
    executed_at    TEXT,
    updated_at     TEXT,
    retry_of       BIGINT REFERENCES payouts(id),
    -- The worker whose request for this payout may be in flight; another
    -- worker takes it over only once that worker's heartbeat expired.
    lease_owner    BIGINT REFERENCES workers(id)
);
CREATE INDEX payouts_run_state ON payouts(run_id, state, id);
CREATE TABLE rejected_rows (
    run_id  BIGINT NOT NULL REFERENCES runs(id),
    row     BIGINT NOT NULL,
    reasons TEXT NOT NULL,
    PRIMARY KEY (run_id, row)
);
CREATE TABLE audit (
    id         BIGSERIAL PRIMARY KEY,
    payout_id  BIGINT NOT NULL REFERENCES payouts(id),
    at         TEXT NOT NULL,
    action     TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    reason     TEXT NOT NULL
);
CREATE TABLE run_reports (
    run_id    BIGINT PRIMARY KEY REFERENCES runs(id),
    path      TEXT NOT NULL,
    delimiter TEXT NOT NULL,
    bom       BIGINT NOT NULL,
    language  TEXT NOT NULL
);
CREATE TABLE skipped_rows (
    run_id    BIGINT NOT NULL REFERENCES runs(id),
    row       BIGINT NOT NULL,
    payout_id BIGINT NOT NULL REFERENCES payouts(id),
    PRIMARY KEY (run_id, row)
);
-- One provider rate limit shared by every worker: the theoretical arrival
-- time of the next call (GCRA), in microseconds of the server's clock.
CREATE TABLE rate_limits (
    key    TEXT PRIMARY KEY,
    tat_us BIGINT NOT NULL
);
"#,
    // One person, one account key: as SQLite's migration 4 (see
    // `sqlite/schema.rs`).
    r#"
ALTER TABLE payouts ADD COLUMN account_key TEXT;
ALTER TABLE payouts ADD COLUMN account_given TEXT;
ALTER TABLE payouts ADD COLUMN origin_run BIGINT REFERENCES runs(id);
CREATE INDEX payouts_account_key ON payouts(account_key, currency);
UPDATE payouts p SET origin_run = COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = p.retry_of;
UPDATE payouts p SET origin_run = COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = p.retry_of;
UPDATE payouts p SET origin_run = COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = p.retry_of;
UPDATE payouts p SET origin_run = COALESCE(q.origin_run, q.run_id) FROM payouts q
    WHERE q.id = p.retry_of;
CREATE TABLE run_overrides (
    id          BIGSERIAL PRIMARY KEY,
    run_id      BIGINT NOT NULL REFERENCES runs(id),
    kind        TEXT NOT NULL,
    row         BIGINT NOT NULL,
    payout_id   BIGINT REFERENCES payouts(id),
    earlier_id  BIGINT REFERENCES payouts(id),
    currency    TEXT,
    amount      TEXT,
    detail      TEXT NOT NULL,
    at          TEXT NOT NULL
);
CREATE INDEX run_overrides_run ON run_overrides(run_id);
"#,
    // Four eyes: as SQLite's migration 5 (see `sqlite/schema.rs`).
    r#"
CREATE TABLE run_preparers (
    run_id   BIGINT PRIMARY KEY REFERENCES runs(id),
    name     TEXT NOT NULL,
    os_user  TEXT NOT NULL,
    host     TEXT NOT NULL,
    at       TEXT NOT NULL
);
CREATE TABLE approvals (
    id          BIGSERIAL PRIMARY KEY,
    run_id      BIGINT NOT NULL REFERENCES runs(id),
    action      TEXT NOT NULL,
    name        TEXT NOT NULL,
    os_user     TEXT NOT NULL,
    host        TEXT NOT NULL,
    at          TEXT NOT NULL,
    file_sha256 TEXT NOT NULL,
    period      TEXT NOT NULL,
    figures     TEXT NOT NULL,
    payouts     BIGINT NOT NULL,
    digest      TEXT NOT NULL,
    overrides   TEXT NOT NULL,
    revokes     BIGINT REFERENCES approvals(id),
    reason      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX approvals_run ON approvals(run_id);
CREATE TABLE approved_payouts (
    approval_id    BIGINT NOT NULL REFERENCES approvals(id),
    payout_id      BIGINT NOT NULL REFERENCES payouts(id),
    row            BIGINT NOT NULL,
    transaction_id TEXT NOT NULL,
    account_id     TEXT NOT NULL,
    amount         TEXT NOT NULL,
    currency       TEXT NOT NULL,
    PRIMARY KEY (approval_id, payout_id)
);
"#,
    // `rate = "auto"` shared by the workers of a run (`limiter::pooled`):
    // one adaptive pace per provider account, with its GCRA schedule.
    r#"
CREATE TABLE rate_paces (
    key              TEXT PRIMARY KEY,
    tat_us           BIGINT NOT NULL,
    rate             DOUBLE PRECISION NOT NULL,
    loss_rate        DOUBLE PRECISION,
    hold_limit       DOUBLE PRECISION,
    hold_until_us    BIGINT,
    last_decrease_us BIGINT,
    paused_until_us  BIGINT NOT NULL,
    epoch_start_us   BIGINT NOT NULL,
    epoch_sent       BIGINT NOT NULL,
    events           BIGINT NOT NULL,
    rate_limited     BIGINT NOT NULL,
    drain_from_us    BIGINT,
    onset            DOUBLE PRECISION NOT NULL,
    before_rate      DOUBLE PRECISION NOT NULL,
    before_loss_rate DOUBLE PRECISION,
    repeated         BOOLEAN NOT NULL,
    drain_accepted   BIGINT NOT NULL,
    drain_refused    BIGINT NOT NULL,
    updated_us       BIGINT NOT NULL
);
"#,
];

/// The SQL expression for "now" as RFC 3339 UTC text with milliseconds,
/// the format SQLite's rows carry.
#[allow(dead_code)] // used by the operations being ported
pub(crate) const NOW: &str =
    r#"to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#;

/// The schema version this payrun writes and understands.
pub(crate) fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Creates or migrates the schema in one transaction under an advisory
/// lock; refuses a database written by a newer payrun, or one whose
/// tables belong to another program.
pub(crate) fn migrate(client: &mut postgres::Client) -> Result<()> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS payrun_schema (version BIGINT NOT NULL)")?;
    let version: i64 = match tx.query_opt("SELECT version FROM payrun_schema", &[])? {
        Some(row) => row.get(0),
        None => {
            let foreign: i64 = tx
                .query_one(
                    "SELECT count(*) FROM information_schema.tables
                     WHERE table_schema = current_schema() AND table_name IN ('runs', 'payouts')",
                    &[],
                )?
                .get(0);
            if foreign > 0 {
                bail!(
                    "this PostgreSQL schema has tables named runs or payouts that payrun did not \
                     make; point --db at another database, or add options=-csearch_path=SCHEMA"
                );
            }
            tx.execute("INSERT INTO payrun_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    if version > current_version() {
        bail!(
            "this database was written by a newer payrun (schema {version}, this payrun knows {}); \
             upgrade payrun to use it",
            current_version()
        );
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.batch_execute(sql)
            .with_context(|| format!("migration {} failed", i + 1))?;
    }
    tx.execute(
        "UPDATE payrun_schema SET version = $1",
        &[&current_version()],
    )?;
    tx.commit()?;
    Ok(())
}
