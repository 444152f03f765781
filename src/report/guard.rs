//! No footguns: an output path (the report, `rejected.csv`, the summary,
//! the approval page) that names an input (the payroll, the database or
//! its journal files) is refused before anything is written, whatever path
//! reaches the file: `./payroll.csv`, an absolute path, a symlink or a hard
//! link. Overwriting the payroll with its report, or the database with a
//! CSV, would destroy the only record of what was paid.

use std::path::{Path, PathBuf};

/// An output that would overwrite an input.
#[derive(Debug, thiserror::Error)]
#[error(
    "refusing to write the {output_role} to {output}: it is the {input_role} ({input}); \
     choose another path (nothing was written)"
)]
pub struct Overwrite {
    pub output_role: String,
    pub output: String,
    pub input_role: String,
    pub input: String,
}

/// SQLite's files beside a database: overwriting them corrupts it too.
const DB_SIDECARS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Refuses the first output that is the same file as an input. `inputs`
/// are (role, path); a database role gets its journal files checked too.
pub fn refuse_overwrite(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<(), Overwrite> {
    let mut files: Vec<(&str, &Path, PathBuf)> = Vec::new();
    for &(role, path) in inputs {
        files.push((role, path, path.to_path_buf()));
        if role == "database" {
            for suffix in DB_SIDECARS {
                let mut s = path.as_os_str().to_owned();
                s.push(suffix);
                files.push((role, path, PathBuf::from(s)));
            }
        }
    }
    for &(out_role, out) in outputs {
        for (in_role, shown, candidate) in &files {
            if same_file(out, candidate) {
                return Err(Overwrite {
                    output_role: out_role.to_string(),
                    output: out.display().to_string(),
                    input_role: in_role.to_string(),
                    input: shown.display().to_string(),
                });
            }
        }
    }
    Ok(())
}

/// Whether two paths name one file: the same inode when both exist (hard
/// links, symlinks), else the same canonical location (a path not yet
/// written is resolved through its parent directory).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (resolve(a), resolve(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The canonical path of `p`, or of its parent joined with its name when
/// `p` does not exist yet.
fn resolve(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Some(c);
    }
    let name = p.file_name()?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(parent.canonicalize().ok()?.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let payroll = dir.path().join("payroll.csv");
        std::fs::write(&payroll, "a\n").unwrap();
        let db = dir.path().join("payrun.db");
        let dotted = dir.path().join(".").join("payroll.csv");
        let inputs = [("payroll", payroll.as_path()), ("database", db.as_path())];
        assert!(refuse_overwrite(&[("report", dotted.as_path())], &inputs).is_err());
        // The database need not exist yet; its WAL counts too.
        let wal = dir.path().join("payrun.db-wal");
        let err = refuse_overwrite(&[("report", wal.as_path())], &inputs).unwrap_err();
        assert!(err.to_string().contains("database"), "{err}");
        #[cfg(unix)]
        {
            let link = dir.path().join("link.csv");
            std::os::unix::fs::symlink(&payroll, &link).unwrap();
            let err = refuse_overwrite(&[("report", link.as_path())], &inputs).unwrap_err();
            assert!(err.to_string().contains("payroll"), "{err}");
            let hard = dir.path().join("hard.csv");
            std::fs::hard_link(&payroll, &hard).unwrap();
            assert!(refuse_overwrite(&[("report", hard.as_path())], &inputs).is_err());
        }
        let other = dir.path().join("report.csv");
        assert!(refuse_overwrite(&[("report", other.as_path())], &inputs).is_ok());
    }
}
