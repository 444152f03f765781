//! Identity (docs/rerun.md): the batch/period reference, the run's
//! identity, the stable transaction id of a row without one, and the
//! snapshot that makes "what was parsed is what was hashed" hold.
//!
//! A derived id is fixed by the payout itself (the canonical account key
//! of `validate::account`, amount as a normalised decimal, currency,
//! payout method), the batch (period, label, worksheet named with
//! `--sheet`) and the row's occurrence among identical payouts of the file
//! — identical in every one of those payout fields, so reordering rows
//! never swaps two ids. Never by the file's bytes, name or row number, nor
//! by how the account is typed: a re-saved, re-encoded, renamed, moved,
//! converted, reordered or re-typed file gives the same ids, so the rows an
//! earlier run paid are recognised.

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest period reference: room for `2026-11-bonus-2` and the like while
/// keeping derived ids (prefix, period, 20 hex digits, retry suffix) under
/// the 64 characters a transaction id may have.
pub const MAX_PERIOD_LEN: usize = 24;

/// Hex digits of the hash kept in a derived id: 80 bits, so two payouts of
/// one period colliding is out of reach even across millions of rows.
const ID_HASH_HEX: usize = 20;

/// The batch a file's rows are paid under: a row's id depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub period: String,
    pub label: String,
    /// The worksheet named with `--sheet` (empty when none was named, so a
    /// CSV and the same rows saved as a workbook give the same ids).
    pub sheet: String,
}

/// The default period: the current calendar month, `YYYY-MM`, in UTC (the
/// same on every machine, whatever its time zone).
pub fn default_period(now: SystemTime) -> String {
    let days = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() / 86_400;
    let (y, m) = year_month(days as i64);
    format!("{y:04}-{m:02}")
}

/// Civil year and month of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn year_month(days: i64) -> (i64, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m)
}

/// Checks a period given with `--period` or the `period` key: it becomes
/// part of transaction ids, so only letters, digits, `-`, `_` and `.`.
pub fn check_period(period: &str) -> Result<String> {
    let p = period.trim();
    if p.is_empty() || p.len() > MAX_PERIOD_LEN {
        bail!(
            "period {period:?} must be 1 to {MAX_PERIOD_LEN} characters, e.g. 2026-11 or 2026-11-bonus"
        );
    }
    if !p
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        bail!(
            "period {period:?} may hold only letters, digits, '-', '_' and '.', e.g. 2026-11 or 2026-11-bonus"
        );
    }
    Ok(p.to_string())
}

/// The run's identity: the bytes read, the label, the worksheet and the
/// period. The same bytes with the same batch resume the same run.
pub fn run_identity(file_sha256: &str, batch: &Batch) -> String {
    let mut h = Sha256::new();
    for part in [
        "run-v2",
        file_sha256,
        &batch.label,
        &batch.sheet,
        &batch.period,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// The tag of the derived-id scheme, hashed first. `payout-v2` hashed the
/// account as typed; `payout-v3` hashes its canonical key and numbers
/// occurrences over every field of the id. A file paid under v2 and run
/// again gets v3 ids: the per-person guard (`engine::guard`) stops it,
/// since the earlier payouts are the same person's in the same period.
const ID_SCHEME_TAG: &str = "payout-v3";

/// What a payout is, for its identity and the repeat guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayoutKey<'a> {
    /// The canonical account key (`validate::account::account_key`).
    pub account: &'a str,
    /// Normalised decimal: `1000.00` and `1000` are one amount.
    pub amount: &'a str,
    pub currency: &'a str,
    pub method: &'a str,
}

/// The stable transaction id of a row without one. `occurrence` is 1 for
/// the first row of the file with this payout (account key, currency,
/// amount and method), 2 for the next, and so on.
pub fn derived_id(key: &PayoutKey<'_>, batch: &Batch, occurrence: u32) -> String {
    let mut h = Sha256::new();
    let occ = occurrence.to_string();
    for part in [
        ID_SCHEME_TAG,
        key.account,
        key.amount,
        key.currency,
        key.method,
        &batch.label,
        &batch.sheet,
        &batch.period,
        &occ,
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let hash = hex::encode(h.finalize());
    format!("pr-{}-{}", batch.period, &hash[..ID_HASH_HEX])
}

/// Numbers identical payouts within one file (every field of the derived
/// id: account key, currency, amount, method) and remembers the first row
/// of each. Keyed by a 16-byte digest of those fields, counted in the
/// store's scratch database (`store::scratch`): memory stays bounded
/// whatever the number of distinct payouts in the file.
#[derive(Debug)]
pub struct Occurrences {
    seen: crate::store::scratch::Occurrences,
}

impl Occurrences {
    pub fn new() -> Result<Occurrences> {
        Ok(Occurrences {
            seen: crate::store::scratch::Occurrences::new()?,
        })
    }

    /// The occurrence number of this row (1 for the first), and the first
    /// row with the same payout when this one repeats it.
    pub fn next(&mut self, key: &PayoutKey<'_>, row: u64) -> Result<(u32, Option<u64>)> {
        let mut h = Sha256::new();
        for part in [key.account, key.currency, key.amount, key.method] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let digest: [u8; 16] = h.finalize()[..16].try_into().expect("16 bytes");
        let (count, first) = self.seen.count(&digest, row)?;
        Ok((count, (count > 1).then_some(first)))
    }
}

/// A private copy of the input, taken while hashing it: the rows parsed are
/// exactly the bytes hashed, even if the original is rewritten meanwhile,
/// and a named pipe (`<(…)`) is read once. Deleted when dropped.
#[derive(Debug)]
pub struct Snapshot {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub sha256: String,
}

/// Copies `path` into a private temporary folder under its own file name
/// (so the format is still told by the extension, and messages name the
/// file the user gave), streaming, and hashes the bytes on the way.
pub fn snapshot(path: &Path) -> Result<Snapshot> {
    let mut src =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let dir = tempfile::Builder::new()
        .prefix("payrun-input-")
        .tempdir()
        .context("cannot create a private copy of the input")?;
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "input".into());
    let copy = dir.path().join(name);
    let mut dst =
        std::fs::File::create(&copy).context("cannot create a private copy of the input")?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = src
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        dst.write_all(&buf[..n])
            .context("cannot write the private copy of the input")?;
    }
    dst.flush()?;
    Ok(Snapshot {
        _dir: dir,
        path: copy,
        sha256: hex::encode(h.finalize()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn batch(period: &str) -> Batch {
        Batch {
            period: period.into(),
            label: String::new(),
            sheet: String::new(),
        }
    }

    fn key<'a>(account: &'a str, amount: &'a str) -> PayoutKey<'a> {
        PayoutKey {
            account,
            amount,
            currency: "XOF",
            method: "momo",
        }
    }

    #[test]
    fn default_period_is_the_utc_calendar_month() {
        let at = |secs: u64| default_period(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01");
        // 2026-11-30T23:59:59Z and one second later.
        assert_eq!(at(1_796_083_199), "2026-11");
        assert_eq!(at(1_796_083_200), "2026-12");
        // 2024-02-29 (leap day).
        assert_eq!(at(1_709_164_800), "2024-02");
    }

    /// Every day from 1970 to 2400 (two leap centuries, 2000 and 2400,
    /// and the common ones between) falls in the month a plain count of
    /// month lengths gives.
    #[test]
    fn every_day_falls_in_its_calendar_month() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let (mut y, mut m, mut d) = (1970_i64, 1_u32, 1_u32);
        for days in 0..157_420_i64 {
            assert_eq!(year_month(days), (y, m), "day {days}");
            let length = match m {
                2 if leap(y) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > length {
                (d, m) = (1, m + 1);
                if m > 12 {
                    (m, y) = (1, y + 1);
                }
            }
        }
        assert_eq!((y, m, d), (2401, 1, 1));
        // Through the public function, at the edges of a day.
        let at = |secs: u64| default_period(UNIX_EPOCH + Duration::from_secs(secs));
        // 2000-02-29T23:59:59Z, then 2000-03-01.
        assert_eq!(at(951_868_799), "2000-02");
        assert_eq!(at(951_868_800), "2000-03");
        // 2025-12-31T23:59:59Z, then 2026-01-01.
        assert_eq!(at(1_767_225_599), "2025-12");
        assert_eq!(at(1_767_225_600), "2026-01");
    }

    #[test]
    fn periods_are_checked() {
        assert_eq!(check_period(" 2026-11 ").unwrap(), "2026-11");
        assert!(check_period("2026-11-bonus").is_ok());
        assert_eq!(check_period("2026_11.b").unwrap(), "2026_11.b");
        assert!(check_period("").is_err());
        assert!(check_period("   ").is_err());
        assert!(check_period("nov 2026").is_err());
        assert!(check_period("2026/11").is_err());
        let longest = "x".repeat(MAX_PERIOD_LEN);
        assert_eq!(check_period(&longest).unwrap(), longest);
        assert!(check_period(&"x".repeat(MAX_PERIOD_LEN + 1)).is_err());
    }

    #[test]
    fn derived_ids_depend_on_the_payout_and_the_batch_only() {
        let b = batch("2026-11");
        let id = derived_id(&key("A1", "1000"), &b, 1);
        assert!(
            id.starts_with("pr-2026-11-") && id.len() == 11 + ID_HASH_HEX,
            "{id}"
        );
        assert_eq!(id, derived_id(&key("A1", "1000"), &b, 1));
        assert_ne!(id, derived_id(&key("A2", "1000"), &b, 1));
        assert_ne!(id, derived_id(&key("A1", "1001"), &b, 1));
        assert_ne!(id, derived_id(&key("A1", "1000"), &b, 2));
        assert_ne!(id, derived_id(&key("A1", "1000"), &batch("2026-12"), 1));
        let mut other = key("A1", "1000");
        other.method = "bank";
        assert_ne!(id, derived_id(&other, &b, 1));
        let sheet = Batch {
            sheet: "Avril".into(),
            ..b.clone()
        };
        assert_ne!(id, derived_id(&key("A1", "1000"), &sheet, 1));
        // The longest period and a retry suffix stay within 64 characters.
        let long = batch(&"p".repeat(MAX_PERIOD_LEN));
        assert!(derived_id(&key("A", "1"), &long, 1).len() + 4 <= 64);
    }

    #[test]
    fn occurrences_number_identical_payouts() {
        let mut o = Occurrences::new().unwrap();
        let k = |account, currency, amount, method| PayoutKey {
            account,
            amount,
            currency,
            method,
        };
        assert_eq!(o.next(&k("A", "XOF", "10", "momo"), 2).unwrap(), (1, None));
        assert_eq!(o.next(&k("B", "XOF", "10", "momo"), 3).unwrap(), (1, None));
        assert_eq!(
            o.next(&k("A", "XOF", "10", "momo"), 4).unwrap(),
            (2, Some(2))
        );
        assert_eq!(
            o.next(&k("A", "XOF", "10", "momo"), 5).unwrap(),
            (3, Some(2))
        );
        assert_eq!(o.next(&k("A", "GHS", "10", "momo"), 6).unwrap(), (1, None));
        assert_eq!(o.next(&k("A", "XOF", "11", "momo"), 7).unwrap(), (1, None));
        // The method is part of the id, so of the numbering too: two rows
        // of one payee that differ only in method keep their ids when
        // swapped.
        assert_eq!(o.next(&k("A", "XOF", "10", "bank"), 8).unwrap(), (1, None));
    }

    /// Two rows of one payee differing only in method, in either order,
    /// get the same two ids.
    #[test]
    fn reordering_rows_that_differ_in_method_keeps_their_ids() {
        let b = batch("2026-11");
        let ids = |methods: [&'static str; 2]| {
            let mut o = Occurrences::new().unwrap();
            let mut out = std::collections::BTreeMap::new();
            for (row, method) in methods.into_iter().enumerate() {
                let k = PayoutKey {
                    method,
                    ..key("+2250701100001", "1000")
                };
                let (occ, _) = o.next(&k, row as u64 + 2).unwrap();
                out.insert(method, derived_id(&k, &b, occ));
            }
            out
        };
        assert_eq!(ids(["momo", "bank"]), ids(["bank", "momo"]));
    }

    /// The scheme's tag is part of every id: an id of scheme v2 (the
    /// account as typed) never equals one of v3 for the same fields.
    #[test]
    fn the_id_scheme_is_versioned() {
        let b = batch("2026-11");
        let k = key("A1", "1000");
        let mut h = Sha256::new();
        for part in [
            "payout-v2",
            "A1",
            "1000",
            "XOF",
            "momo",
            "",
            "",
            "2026-11",
            "1",
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let v2 = format!("pr-2026-11-{}", &hex::encode(h.finalize())[..ID_HASH_HEX]);
        assert_ne!(derived_id(&k, &b, 1), v2);
    }

    #[test]
    fn run_identity_covers_bytes_label_sheet_and_period() {
        let b = batch("2026-11");
        let id = run_identity("abc", &b);
        assert_eq!(id, run_identity("abc", &b));
        assert_ne!(id, run_identity("abd", &b));
        assert_ne!(id, run_identity("abc", &batch("2026-12")));
        let s = Batch {
            sheet: "Mars".into(),
            ..b.clone()
        };
        assert_ne!(id, run_identity("abc", &s));
    }

    #[test]
    fn snapshot_hashes_what_it_copies() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pay roll.csv");
        std::fs::write(&p, b"a,b\n1,2\n").unwrap();
        let s = snapshot(&p).unwrap();
        assert_eq!(std::fs::read(&s.path).unwrap(), b"a,b\n1,2\n");
        assert_eq!(s.path.file_name().unwrap(), "pay roll.csv");
        assert_eq!(s.sha256, hex::encode(Sha256::digest(b"a,b\n1,2\n")));
        // Rewriting the original changes nothing in the snapshot.
        std::fs::write(&p, b"x").unwrap();
        assert_eq!(std::fs::read(&s.path).unwrap(), b"a,b\n1,2\n");
        let copy = s.path.clone();
        drop(s);
        assert!(!copy.exists());
    }
}
