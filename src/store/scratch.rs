//! Scratch: a private SQLite database for the work of one import that
//! grows with the file and must not grow the process — the numbering of
//! identical payouts within a file (`engine::identity::Occurrences`).
//! Whatever the checkpoint (a file or PostgreSQL), it is SQLite's anonymous
//! temporary database: kept in its page cache, written to a file in the
//! temporary folder (deleted when closed) only beyond [`CACHE_KIB`], so a
//! file of ten thousand rows never touches the disk and one of ten million
//! needs no more memory than one of a hundred thousand. Nothing in it is
//! durable or shared: it lives as long as the import.

use anyhow::{Context, Result};
use rusqlite::config::DbConfig;
use rusqlite::params;

/// The scratch database's page cache, in KiB: every distinct payout of a
/// file of up to about 150,000 rows (about 45 bytes each in the B-tree), and
/// a bounded share of a larger one (docs/PERFORMANCE.md, "A million rows").
pub const CACHE_KIB: i64 = 6 * 1024;

/// The payouts of one file seen so far, by a digest of the fields that
/// make two payouts identical, each with its first row and how many rows
/// carried it.
pub struct Occurrences {
    conn: rusqlite::Connection,
}

impl std::fmt::Debug for Occurrences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Occurrences")
    }
}

impl Occurrences {
    /// An empty table in a new scratch database.
    pub fn new() -> Result<Occurrences> {
        Occurrences::with_cache(CACHE_KIB)
    }

    fn with_cache(cache_kib: i64) -> Result<Occurrences> {
        let conn = rusqlite::Connection::open("")
            .context("cannot open a scratch database in the temporary folder")?;
        // Nothing here outlives the process: no journal, no fsync, one
        // transaction for the whole import (never committed: dropped with
        // the connection).
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
             PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -{cache_kib};
             CREATE TABLE seen (digest BLOB PRIMARY KEY, first_row INTEGER NOT NULL,
                                count INTEGER NOT NULL) WITHOUT ROWID;
             BEGIN;"
        ))
        .context("cannot set up the scratch database")?;
        // As for the checkpoint (`sqlite::open`): plans never depend on the
        // values bound, so the cached statement is never compiled again.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        Ok(Occurrences { conn })
    }

    /// Counts one more row (`row`) with `digest`: how many rows carried it
    /// so far, this one included, and the first of them.
    pub fn count(&mut self, digest: &[u8; 16], row: u64) -> Result<(u32, u64)> {
        let (count, first): (i64, i64) = self
            .conn
            .prepare_cached(
                "INSERT INTO seen (digest, first_row, count) VALUES (?1, ?2, 1)
                 ON CONFLICT (digest) DO UPDATE SET count = count + 1
                 RETURNING count, first_row",
            )?
            .query_row(params![&digest[..], row as i64], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .context("cannot number identical payouts in the scratch database")?;
        Ok((
            u32::try_from(count).unwrap_or(u32::MAX),
            u64::try_from(first).unwrap_or(0),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_digest_and_keeps_its_first_row() {
        let mut o = Occurrences::new().unwrap();
        let a = [1u8; 16];
        let b = [2u8; 16];
        assert_eq!(o.count(&a, 2).unwrap(), (1, 2));
        assert_eq!(o.count(&b, 3).unwrap(), (1, 3));
        assert_eq!(o.count(&a, 4).unwrap(), (2, 2));
        assert_eq!(o.count(&a, 9).unwrap(), (3, 2));
        assert_eq!(o.count(&b, 10).unwrap(), (2, 3));
    }

    /// More distinct digests than the page cache holds: the table spills
    /// to its file and every count and first row stays right.
    #[test]
    fn spills_beyond_its_cache_and_stays_exact() {
        let mut o = Occurrences::with_cache(64).unwrap();
        let digest = |i: u64| {
            let mut d = [0u8; 16];
            d[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
            d[8..].copy_from_slice(&i.to_le_bytes());
            d
        };
        let n = 20_000u64;
        for i in 0..n {
            assert_eq!(o.count(&digest(i), i + 2).unwrap(), (1, i + 2));
        }
        for i in (0..n).step_by(97) {
            assert_eq!(o.count(&digest(i), n + i).unwrap(), (2, i + 2));
        }
    }
}
