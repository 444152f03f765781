//! The run lock: one `payrun run` (or `reconcile`) at a time per database,
//! however the database is reached — a symlink, a relative or an absolute
//! path, a hard link.
//!
//! The lock is an OS `flock` taken on the database file itself, so it
//! belongs to the file (device and inode), not to the name used to reach
//! it, and the OS drops it with the process however that dies. It does not
//! disturb SQLite: SQLite locks with POSIX `fcntl` locks, which on Linux
//! and the BSDs are independent of `flock`. (`fcntl` would not do here:
//! closing any descriptor of the file drops all of a process's `fcntl`
//! locks on it, and SQLite opens and closes descriptors of its own.)
//!
//! The holder's pid is found in `/proc/locks` by device and inode where the
//! OS offers it (Linux), and is also written to `<db>.lock` next to the
//! database's real path, as a note for people and other systems. That note
//! is never the lock.

use anyhow::{Context, Result, bail};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// Exclusive lock on a database for the life of a run.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Locks the database at `db`, creating the file empty if it does not
    /// exist yet (an empty file opens as a new database). Refuses at once,
    /// naming the holder's pid when it can be found, if another process
    /// holds the lock through any path to the same file.
    pub fn acquire(db: &Path) -> Result<RunLock> {
        let target = lock_target(db)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&target)
            .with_context(|| format!("cannot open {} to lock it", target.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let who = match holder_pid(&file, db) {
                    Some(pid) => format!("payrun pid {pid}"),
                    None => "another payrun process".to_string(),
                };
                bail!(
                    "the database {} is in use by {who}; one run at a time per database \
                     (wait for it to finish, or stop it, then run again)",
                    db.display()
                );
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", target.display()));
            }
        }
        // The note is for people and for systems without /proc/locks; a
        // failure to write it must not stop a run the lock allows.
        if let Some(note) = note_path(db) {
            let _ = std::fs::write(&note, std::process::id().to_string());
        }
        Ok(RunLock { _file: file })
    }
}

/// The file the lock is taken on: the database itself.
#[cfg(unix)]
fn lock_target(db: &Path) -> Result<PathBuf> {
    Ok(db.to_path_buf())
}

/// On Windows a file lock is mandatory and would stop SQLite reading the
/// database, so the lock falls back to the note, named after the real path
/// (symlinks and relative paths resolved; hard links are not told apart).
#[cfg(not(unix))]
fn lock_target(db: &Path) -> Result<PathBuf> {
    if !db.exists() {
        File::create(db).with_context(|| format!("cannot create {}", db.display()))?;
    }
    note_path(db).with_context(|| format!("cannot resolve the path {}", db.display()))
}

/// `<real path of db>.lock`: the same note whichever symlink or relative
/// path reaches the database.
fn note_path(db: &Path) -> Option<PathBuf> {
    let mut s = std::fs::canonicalize(db).ok()?.into_os_string();
    s.push(".lock");
    Some(PathBuf::from(s))
}

/// How many times to read `/proc/locks` before giving up on naming the
/// holder (see [`holder_pid`]); each read is cheap and only a refusal reads.
const PROC_LOCKS_READS: usize = 3;

/// The pid of the process holding the lock on `file`: from the OS where it
/// says (exact, whatever path the holder used), else from the note.
fn holder_pid(file: &File, db: &Path) -> Option<u32> {
    // `/proc/locks` is read in page-sized chunks, each a separate look at a
    // list other processes keep changing, so one read can miss a line.
    // Three looks make a miss unlikely; the message only loses the pid.
    for _ in 0..PROC_LOCKS_READS {
        if let Some(pid) = proc_locks_holder(file) {
            return Some(pid);
        }
    }
    let note = std::fs::read_to_string(note_path(db)?).ok()?;
    note.trim().parse().ok()
}

/// Looks the file up in `/proc/locks` (Linux): lines such as
/// `1: FLOCK  ADVISORY  WRITE 4521 fe:00:5652877 0 EOF`, the file named by
/// device (hex major:minor) and inode. Some filesystems (btrfs) report a
/// different device to `stat` than to `/proc/locks`, so a lone match on
/// the inode is accepted when the device does not match.
#[cfg(target_os = "linux")]
fn proc_locks_holder(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    let (dev, ino) = (meta.dev(), meta.ino());
    let major = ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0x0000_0fff);
    let minor = ((dev >> 12) & 0xffff_ff00) | (dev & 0x0000_00ff);
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let mut exact = None;
    let mut by_inode = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // Waiters are listed with "->"; only the holder counts.
        if fields.get(1) != Some(&"FLOCK") {
            continue;
        }
        let (Some(pid), Some(id)) = (fields.get(4), fields.get(5)) else {
            continue;
        };
        let mut parts = id.split(':');
        let (Some(ma), Some(mi), Some(i)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if i.parse::<u64>().ok() != Some(ino) {
            continue;
        }
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let same_dev = u64::from_str_radix(ma, 16).ok() == Some(major)
            && u64::from_str_radix(mi, 16).ok() == Some(minor);
        if same_dev {
            exact = Some(pid);
        } else {
            by_inode.push(pid);
        }
    }
    exact.or(match by_inode.as_slice() {
        [pid] => Some(*pid),
        _ => None,
    })
}

#[cfg(not(target_os = "linux"))]
fn proc_locks_holder(_file: &File) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_our_pid(err: &anyhow::Error) -> bool {
        format!("{err:#}").contains(&format!("pid {}", std::process::id()))
    }

    #[test]
    fn run_lock_is_exclusive_and_names_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        let lock = RunLock::acquire(&db).unwrap();
        let err = RunLock::acquire(&db).unwrap_err();
        assert!(
            format!("{err:#}").contains(&format!("pid {}", std::process::id())),
            "{err:#}"
        );
        drop(lock);
        RunLock::acquire(&db).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_a_locked_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let lock = RunLock::acquire(&db).unwrap();
        let err = RunLock::acquire(&link).unwrap_err();
        assert!(names_our_pid(&err), "{err:#}");
        drop(lock);
        // And the other way round.
        let lock = RunLock::acquire(&link).unwrap();
        assert!(RunLock::acquire(&db).is_err());
        drop(lock);
        RunLock::acquire(&db).unwrap();
    }

    #[test]
    fn relative_and_absolute_paths_to_one_database_share_the_lock() {
        // A directory under the current one, so it has a relative name.
        let dir = tempfile::Builder::new().tempdir_in(".").unwrap();
        let relative = Path::new(dir.path().file_name().unwrap()).join("p.db");
        assert!(relative.is_relative(), "{}", relative.display());
        let lock = RunLock::acquire(&relative).unwrap();
        let absolute = std::fs::canonicalize(&relative).unwrap();
        let err = RunLock::acquire(&absolute).unwrap_err();
        assert!(names_our_pid(&err), "{err:#}");
        drop(lock);
        let lock = RunLock::acquire(&absolute).unwrap();
        assert!(RunLock::acquire(&relative).is_err());
        drop(lock);
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_link_to_a_locked_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        let lock = RunLock::acquire(&db).unwrap();
        let other = dir.path().join("other-name.db");
        std::fs::hard_link(&db, &other).unwrap();
        let err = RunLock::acquire(&other).unwrap_err();
        // Only the OS knows who holds a file reached by another name.
        if cfg!(target_os = "linux") {
            assert!(names_our_pid(&err), "{err:#}");
        }
        drop(lock);
        RunLock::acquire(&other).unwrap();
    }

    #[test]
    fn two_databases_do_not_share_a_lock() {
        let dir = tempfile::tempdir().unwrap();
        let _a = RunLock::acquire(&dir.path().join("a.db")).unwrap();
        let _b = RunLock::acquire(&dir.path().join("b.db")).unwrap();
    }

    #[test]
    fn the_lock_leaves_an_openable_database_and_a_pid_note() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("p.db");
        let _lock = RunLock::acquire(&db).unwrap();
        crate::store::Store::open(&db).unwrap();
        let note = std::fs::read_to_string(dir.path().join("p.db.lock")).unwrap();
        assert_eq!(note, std::process::id().to_string());
    }
}
