//! The one rule for every file a command writes (docs/reports.md, "No
//! output overwrites an input"): it is never a file the command reads or
//! keeps — the payroll, the statement, the database and its side files
//! (`-wal`, `-shm`, `-journal`, the lock note), the config, the API key
//! file, the provider profile — nor another output of the same command,
//! and it can be written: not a directory or another non-file, in a folder
//! that exists and takes a new file. Checked as a whole, before anything
//! is written or sent: a command builds its [`Files`], then `check`s.
//!
//! Two paths are one file when they reach the same device and inode
//! (whatever the spelling: `./payroll.csv`, an absolute path, a symlink, a
//! hard link); a path not written yet is compared by its canonical place
//! (its folder resolved, its name joined). A run's payroll is also known
//! by its bytes: its path is recorded as it was given, relative to where
//! the run started, so a later command started elsewhere recognises it by
//! the SHA-256 the run recorded (`Files::payroll_of`).

use std::path::{Path, PathBuf};

/// Why a command refuses its outputs.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(
        "refusing to write the {output_role} to {output}: it is the {input_role} ({input}); \
         choose another path (nothing was written)"
    )]
    Overwrite {
        output_role: String,
        output: String,
        input_role: String,
        input: String,
    },
    #[error(
        "refusing to write the {first} and the {second} to one file ({path}); \
         choose another path for one of them (nothing was written)"
    )]
    Twice {
        first: String,
        second: String,
        path: String,
    },
    #[error("cannot write the {role} to {path}: {why} (nothing was written)")]
    Unwritable {
        role: String,
        path: String,
        why: String,
    },
}

/// An output that would overwrite an input (the name callers know).
pub type Overwrite = Refused;

/// SQLite's files beside a database: overwriting them corrupts it too.
const DB_SIDECARS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// The files of one command: what it reads or keeps, what it writes.
#[derive(Debug, Default, Clone)]
pub struct Files {
    /// (role, path as given, path compared)
    inputs: Vec<(String, PathBuf, PathBuf)>,
    outputs: Vec<(String, PathBuf)>,
    /// (role, path as recorded, SHA-256 in hex): inputs known by content.
    digests: Vec<(String, String, String)>,
}

impl Files {
    pub fn new() -> Files {
        Files::default()
    }

    /// A file the command reads or keeps.
    pub fn input(&mut self, role: &str, path: &Path) -> &mut Files {
        self.inputs
            .push((role.to_string(), path.to_path_buf(), path.to_path_buf()));
        self
    }

    /// The SQLite database and its side files: the journals (beside the
    /// path given and beside the real file) and the lock note (`<real
    /// path>.lock`, `store::RunLock`).
    pub fn database(&mut self, path: &Path) -> &mut Files {
        self.input("database", path);
        // Beside the path given and beside the real file (SQLite follows
        // a symlinked database to its target for its journals).
        let real = path.canonicalize().ok();
        let mut sides: Vec<PathBuf> = Vec::new();
        for base in std::iter::once(path).chain(real.as_deref()) {
            sides.extend(DB_SIDECARS.iter().map(|suffix| with_suffix(base, suffix)));
        }
        if let Some(real) = &real {
            sides.push(with_suffix(real, ".lock"));
        }
        for side in sides {
            self.inputs
                .push(("database".into(), path.to_path_buf(), side));
        }
        self
    }

    /// The config file the command read, and the files it names that
    /// payrun reads: the API key file and the provider profile.
    pub fn config(&mut self, cfg: &crate::config::Config) -> &mut Files {
        let named = [
            ("config", &cfg.source),
            ("API key file", &cfg.api_key_file),
            ("provider profile", &cfg.provider_profile),
        ];
        for (role, path) in named {
            if let Some(p) = path {
                self.input(role, p);
            }
        }
        self
    }

    /// The checkpoint, when it is a file (a PostgreSQL database has none).
    pub fn checkpoint(&mut self, db: &crate::store::Db) -> &mut Files {
        if let Some(path) = db.file() {
            self.database(path);
        }
        self
    }

    /// The payroll of a recorded run: by its path as recorded (relative
    /// to where the run started) and by its bytes, wherever it is now, so
    /// a command started from another folder still knows it.
    pub fn payroll_of(&mut self, run: &crate::store::RunInfo) -> &mut Files {
        let role = format!("payroll of run {}", run.id);
        self.input(&role, Path::new(&run.file_path));
        self.digests.push((
            role,
            run.file_path.clone(),
            run.file_sha256.to_ascii_lowercase(),
        ));
        self
    }

    /// A file the command writes.
    pub fn output(&mut self, role: &str, path: &Path) -> &mut Files {
        self.outputs.push((role.to_string(), path.to_path_buf()));
        self
    }

    /// Refuses the first output that can not be written, is an input, or
    /// is another output.
    pub fn check(&self) -> Result<(), Refused> {
        for (role, out) in &self.outputs {
            writable(role, out)?;
        }
        for (out_role, out) in &self.outputs {
            for (in_role, shown, candidate) in &self.inputs {
                if same_file(out, candidate) {
                    return Err(Refused::Overwrite {
                        output_role: out_role.clone(),
                        output: out.display().to_string(),
                        input_role: in_role.clone(),
                        input: shown.display().to_string(),
                    });
                }
            }
        }
        if !self.digests.is_empty() {
            for (out_role, out) in &self.outputs {
                let Some(digest) = sha256_of_file(out) else {
                    continue;
                };
                if let Some((role, shown, _)) = self.digests.iter().find(|d| d.2 == digest) {
                    return Err(Refused::Overwrite {
                        output_role: out_role.clone(),
                        output: out.display().to_string(),
                        input_role: role.clone(),
                        input: format!("{shown}, the same bytes"),
                    });
                }
            }
        }
        for (i, (first, a)) in self.outputs.iter().enumerate() {
            for (second, b) in &self.outputs[i + 1..] {
                if same_file(a, b) {
                    return Err(Refused::Twice {
                        first: first.clone(),
                        second: second.clone(),
                        path: b.display().to_string(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The SHA-256 (hex) of the regular file at `path`, or `None` when there
/// is none to read (a file not written yet).
fn sha256_of_file(path: &Path) -> Option<String> {
    use sha2::Digest;
    let mut file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut file, &mut hasher).ok()?;
    Some(hex::encode(hasher.finalize()))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Whether `path` can take the output: not a directory nor any other
/// non-file (a pipe, a device), in a folder that exists and takes a new
/// file (tried with a temporary file, removed at once).
fn writable(role: &str, path: &Path) -> Result<(), Refused> {
    let refuse = |why: String| Refused::Unwritable {
        role: role.to_string(),
        path: path.display().to_string(),
        why,
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => return Err(refuse("it is a directory; name a file".into())),
        Ok(m) if !m.is_file() => {
            return Err(refuse(
                "it is not a regular file (a pipe or a device); name a file".into(),
            ));
        }
        _ => {}
    }
    let folder = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(refuse(format!(
            "the folder {} does not exist; create it first",
            folder.display()
        )));
    }
    let probe = crate::output::temp_beside(path);
    match std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(refuse(format!(
            "no new file can be made in {} ({e})",
            folder.display()
        ))),
    }
}

/// Refuses the first output that is the same file as an input. `inputs`
/// are (role, path); a database role gets its side files checked too.
pub fn refuse_overwrite(
    outputs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<(), Refused> {
    let mut files = Files::new();
    for &(role, path) in inputs {
        if role == "database" {
            files.database(path);
        } else {
            files.input(role, path);
        }
    }
    for &(role, path) in outputs {
        files.output(role, path);
    }
    files.check()
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
mod tests;
