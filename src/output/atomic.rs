//! Every file payrun writes is written whole or not at all: into a
//! temporary file beside it (unique to the process and the call), synced,
//! then renamed over it. The temporary file never outlives a failure (a
//! full disk, a write error, a crash of the writer's closure: dropping
//! the [`AtomicFile`] removes it). A file that already exists keeps its
//! permissions across the rewrite (a report made `chmod 600` stays 600);
//! a new file gets the process's umask, as any file a program creates
//! (docs/reports.md, "Permissions").

use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file being written: `commit` renames it into place; dropped
/// uncommitted, it is removed.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    tmp: PathBuf,
    dest: PathBuf,
}

impl AtomicFile {
    /// Starts writing `dest` (which keeps the permissions it has, if it
    /// exists).
    pub fn create(dest: &Path) -> Result<AtomicFile> {
        let tmp = temp_beside(dest);
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        let pending = AtomicFile {
            file: Some(file),
            tmp,
            dest: dest.to_path_buf(),
        };
        if let Ok(existing) = std::fs::metadata(dest) {
            pending
                .file()
                .set_permissions(existing.permissions())
                .with_context(|| format!("cannot write {}", pending.tmp.display()))?;
        }
        Ok(pending)
    }

    /// The file to write into.
    pub fn file(&self) -> &File {
        self.file.as_ref().expect("an uncommitted file is open")
    }

    /// The file to write into, to hand to a writer.
    pub fn file_mut(&mut self) -> &mut File {
        self.file.as_mut().expect("an uncommitted file is open")
    }

    /// The temporary path, for messages.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    /// Syncs the file and renames it into place.
    pub fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("committed once");
        file.sync_all()
            .with_context(|| format!("cannot write {}", self.tmp.display()))?;
        drop(file);
        std::fs::rename(&self.tmp, &self.dest)
            .with_context(|| format!("cannot write {}", self.dest.display()))?;
        // Renamed: nothing left to remove.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            self.file.take();
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `path` with `f` through an [`AtomicFile`].
pub fn write_atomically(path: &Path, f: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    let mut pending = AtomicFile::create(path)?;
    let written = f(pending.file_mut()).and_then(|()| Ok(pending.file_mut().flush()?));
    written.with_context(|| format!("cannot write {}", pending.temp_path().display()))?;
    pending.commit()
}

/// A temporary file name beside `path`, unique to this process and call:
/// several workers of a shared run may write the same report at once, and
/// each must rename its own whole file, never one another wrote into.
pub fn temp_beside(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{}-{n}.tmp", std::process::id()));
    PathBuf::from(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writers_at_once_each_rename_a_whole_file_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.csv");
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_atomically(path, |f| Ok(f.write_all(&[b'a' + t; 4096])?)).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read(&path).unwrap();
        assert_eq!(text.len(), 4096);
        assert!(text.iter().all(|&b| b == text[0]));
        // No temporary file left behind.
        assert_eq!(names(dir.path()), ["report.csv"]);
    }

    /// A write that fails (a full disk, any error of the writer) leaves the
    /// old file as it was and no temporary file.
    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.csv");
        std::fs::write(&path, "old\n").unwrap();
        let err = write_atomically(&path, |f| {
            f.write_all(b"half")?;
            Err(std::io::Error::from_raw_os_error(28).into()) // ENOSPC
        })
        .unwrap_err();
        assert!(format!("{err:#}").contains("cannot write"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        assert_eq!(names(dir.path()), ["report.csv"]);
        // Dropped before commit: removed too.
        let pending = AtomicFile::create(&path).unwrap();
        assert!(pending.temp_path().exists());
        drop(pending);
        assert_eq!(names(dir.path()), ["report.csv"]);
        // A rename that cannot happen (a directory in the way) too.
        let dirpath = dir.path().join("out");
        std::fs::create_dir(&dirpath).unwrap();
        std::fs::write(dirpath.join("x"), "x").unwrap();
        assert!(write_atomically(&dirpath, |f| Ok(f.write_all(b"r")?)).is_err());
        assert_eq!(names(dir.path()), ["out", "report.csv"]);
    }

    /// An existing file keeps its mode across the rewrite; a new one gets
    /// the umask's.
    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let path = dir.path().join("report.csv");
        write_atomically(&path, |f| Ok(f.write_all(b"a")?)).unwrap();
        let probe = dir.path().join("probe");
        File::create(&probe).unwrap();
        assert_eq!(mode(&path), mode(&probe), "a new file: as File::create");
        for m in [0o600, 0o640, 0o444] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m)).unwrap();
            write_atomically(&path, |f| Ok(f.write_all(b"b")?)).unwrap();
            assert_eq!(mode(&path), m);
            assert_eq!(std::fs::read(&path).unwrap(), b"b");
        }
    }
}
