//! A compact set of strings seen so far in a file (transaction ids, and
//! payees for the repeated-payee note), each remembered with the row it was
//! first seen on.

use std::hash::{BuildHasher, RandomState};

/// The transaction ids seen so far, held compactly: a fingerprint of each
/// id (two independently keyed SipHashes: 96 bits stored, 8 more choose the
/// shard) and the row it was first seen on, 16 bytes an entry instead of
/// the id's string. Two distinct ids share a fingerprint with probability
/// about n^2 / 2^105 (below 1e-19 for a million ids), and the keys are
/// random per process, so no file can be crafted to collide.
///
/// Each shard is a small open-addressing table that grows by half when it
/// is [`MAX_LOAD_PERCENT`] full. A general-purpose hash map doubles instead
/// and, sized in powers of two, holds a million entries in ~36 MB, briefly
/// ~53 MB while it doubles; this holds them in ~23 MB, and as shards grow
/// one at a time the peak stays there.
pub struct IdSet {
    keys: (RandomState, RandomState),
    shards: Vec<Shard>,
}

/// Shards of [`IdSet`]: enough that one shard's growth is a rounding error
/// in the memory budget, few enough that an empty set costs nothing.
const ID_SHARDS: usize = 256;
/// Load at which a shard grows. Linear probing stays at a few probes per
/// lookup up to about 85 %; growing by half from there keeps the load
/// between 57 % and 85 %.
const MAX_LOAD_PERCENT: usize = 85;

/// Slots `[fingerprint; 3], row`; an all-zero fingerprint marks a free slot
/// (a real all-zero fingerprint is stored as 1).
#[derive(Default)]
struct Shard {
    slots: Vec<[u32; 4]>,
    len: usize,
}

impl Shard {
    fn home(fp: &[u32; 3], slots: usize) -> usize {
        // Multiply-shift maps the fingerprint onto any table length, so the
        // table need not be a power of two.
        let h = u64::from(fp[0]) << 32 | u64::from(fp[1]);
        ((u128::from(h) * slots as u128) >> 64) as usize
    }

    /// Inserts, or returns the row stored with an equal fingerprint.
    fn insert(&mut self, fp: [u32; 3], row: u32) -> Result<(), u32> {
        if (self.len + 1) * 100 > self.slots.len() * MAX_LOAD_PERCENT {
            self.grow();
        }
        let n = self.slots.len();
        let mut i = Self::home(&fp, n);
        loop {
            let slot = &mut self.slots[i];
            if slot[..3] == [0, 0, 0] {
                *slot = [fp[0], fp[1], fp[2], row];
                self.len += 1;
                return Ok(());
            }
            if slot[..3] == fp {
                return Err(slot[3]);
            }
            i = if i + 1 == n { 0 } else { i + 1 };
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 3 / 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![[0; 4]; size]);
        self.len = 0;
        for s in old.into_iter().filter(|s| s[..3] != [0, 0, 0]) {
            // Fingerprints in the table are distinct.
            let _ = self.insert([s[0], s[1], s[2]], s[3]);
        }
    }
}

impl Default for IdSet {
    fn default() -> IdSet {
        IdSet {
            keys: Default::default(),
            shards: (0..ID_SHARDS).map(|_| Shard::default()).collect(),
        }
    }
}

impl IdSet {
    /// Records `id` first seen on `row`; `Err(first_row)` if seen before.
    pub fn insert(&mut self, id: &str, row: u64) -> Result<(), u64> {
        let a = self.keys.0.hash_one(id);
        let b = self.keys.1.hash_one(id);
        let mut fp = [(a >> 32) as u32, a as u32, b as u32];
        if fp == [0, 0, 0] {
            fp[2] = 1;
        }
        let row = u32::try_from(row).unwrap_or(u32::MAX);
        let shard = (b >> 56) as usize % ID_SHARDS;
        self.shards[shard].insert(fp, row).map_err(u64::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_set_remembers_first_row() {
        let mut ids = IdSet::default();
        assert_eq!(ids.insert("a", 2), Ok(()));
        assert_eq!(ids.insert("b", 3), Ok(()));
        assert_eq!(ids.insert("a", 4), Err(2));
        assert_eq!(ids.insert("A", 5), Ok(()));
    }

    /// Many ids: every shard grows several times, nothing is lost and every
    /// repeat names its first row.
    #[test]
    fn id_set_survives_growth() {
        let mut ids = IdSet::default();
        for i in 0..200_000u64 {
            assert_eq!(ids.insert(&format!("PAY-{i}"), i + 2), Ok(()));
        }
        for i in (0..200_000u64).step_by(997) {
            assert_eq!(ids.insert(&format!("PAY-{i}"), 1_000_000), Err(i + 2));
        }
        let stored: usize = ids.shards.iter().map(|s| s.len).sum();
        assert_eq!(stored, 200_000);
        for s in &ids.shards {
            assert!(s.len * 100 <= s.slots.len() * MAX_LOAD_PERCENT);
        }
    }

    #[test]
    fn shard_handles_wraparound_and_zero() {
        let mut s = Shard::default();
        // Fingerprints whose home is the last slot wrap to the start.
        let high = [u32::MAX, u32::MAX, 7];
        assert_eq!(s.insert(high, 1), Ok(()));
        assert_eq!(s.insert([u32::MAX, u32::MAX, 8], 2), Ok(()));
        assert_eq!(s.insert([u32::MAX, u32::MAX, 9], 3), Ok(()));
        assert_eq!(s.insert(high, 4), Err(1));
        assert_eq!(s.insert([u32::MAX, u32::MAX, 9], 5), Err(3));
    }
}
