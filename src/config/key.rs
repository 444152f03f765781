//! The API key file (`api_key_file`), and any other secret read from a
//! file under the same rules (`database_password_file`): one line of at most
//! [`MAX_KEY_FILE_BYTES`], read from a regular file — never a device
//! (`/dev/zero` would grow memory without end), a pipe or a directory.
//! Who may write it matters as much as who may read it: a file owned by
//! another ordinary user is refused (they would choose the key payrun
//! sends); one readable by the group or others is read with a warning
//! naming the fix (`chmod 600`). Root-owned files are trusted, so the
//! secret files container platforms mount (root, 0644 or 0444) keep
//! working. Documented in README.md, "Security".

use anyhow::{Context, Result, bail};
use secrecy::SecretString;
use std::io::Read;
use std::path::Path;

/// The longest first line read from a key file: keys are tens to a few
/// hundred characters; 4 KiB leaves room for any, and no more is read.
pub const MAX_KEY_FILE_BYTES: usize = 4096;

/// A key read from a file, with what the operator should hear about it.
#[derive(Debug)]
pub struct KeyFile {
    pub key: SecretString,
    /// Set when the file is readable by the group or others.
    pub warning: Option<String>,
}

/// A secret read from a file under these rules, for its messages.
#[derive(Debug, Clone, Copy)]
pub struct Secret {
    /// What the file is called ("API key file").
    pub file: &'static str,
    /// The config key naming it (`api_key_file`).
    pub key: &'static str,
    /// What it holds ("the key").
    pub holds: &'static str,
    /// The variable to use instead (`PAYRUN_API_KEY`).
    pub env: &'static str,
}

/// The provider's API key (`api_key_file`).
pub const API_KEY: Secret = Secret {
    file: "API key file",
    key: "api_key_file",
    holds: "the key",
    env: "PAYRUN_API_KEY",
};

/// The PostgreSQL password (`database_password_file`, docs/store.md).
pub const DATABASE_PASSWORD: Secret = Secret {
    file: "database password file",
    key: "database_password_file",
    holds: "the password",
    env: "PGPASSWORD",
};

/// Reads the key from `path` (see the module's rules).
pub fn read(path: &Path) -> Result<KeyFile> {
    read_secret(path, &API_KEY)
}

/// Reads the secret `what` from `path` (see the module's rules).
pub fn read_secret(path: &Path, what: &Secret) -> Result<KeyFile> {
    let Secret {
        file: name,
        key: config_key,
        holds,
        ..
    } = *what;
    let shown = path.display();
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read the {name} {shown}"))?;
    if !meta.is_file() {
        bail!(
            "the {name} {shown} is not a regular file ({}); point `{config_key}` at a file \
             holding {holds} on its first line",
            kind(&meta)
        );
    }
    let warning = access(path, &meta, what)?;
    let file = open_no_wait(path).with_context(|| format!("cannot read the {name} {shown}"))?;
    // The file opened may not be the one looked at (replaced meanwhile).
    let opened = file
        .metadata()
        .with_context(|| format!("cannot read the {name} {shown}"))?;
    if !opened.is_file() {
        bail!(
            "the {name} {shown} is not a regular file ({})",
            kind(&opened)
        );
    }
    let mut head = Vec::with_capacity(256);
    file.take(MAX_KEY_FILE_BYTES as u64 + 1)
        .read_to_end(&mut head)
        .with_context(|| format!("cannot read the {name} {shown}"))?;
    let line = match head.iter().position(|&b| b == b'\n') {
        Some(end) => &head[..end],
        None if head.len() > MAX_KEY_FILE_BYTES => bail!(
            "the first line of the {name} {shown} is longer than {MAX_KEY_FILE_BYTES} bytes: \
             it does not hold {holds}; put {holds} alone on the first line"
        ),
        None => &head[..],
    };
    let Ok(line) = std::str::from_utf8(line) else {
        bail!("the {name} {shown} does not hold text; put {holds} alone on its first line");
    };
    let key = line.trim();
    if key.is_empty() {
        bail!("the {name} {shown} is empty");
    }
    Ok(KeyFile {
        key: SecretString::from(key.to_string()),
        warning,
    })
}

fn kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// Refuses a key file another ordinary user owns; a warning when the
/// group or others may read it.
#[cfg(unix)]
fn access(path: &Path, meta: &std::fs::Metadata, what: &Secret) -> Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let owner = meta.uid();
    if owner != me && owner != 0 {
        bail!(
            "the {} {} belongs to user {owner}, not to you (user {me}) nor to root: \
             whoever owns it chooses {} payrun sends. Make it yours (`chown`, then \
             `chmod 600`), or set {}",
            what.file,
            path.display(),
            what.holds,
            what.env
        );
    }
    let mode = meta.mode() & 0o777;
    Ok((mode & 0o077 != 0).then(|| {
        format!(
            "the {} {} can be read by {} (mode {mode:03o}): run `chmod 600 {}` \
             (for a secret mounted by a container platform, set its mode to 0400 or 0600 there)",
            what.file,
            path.display(),
            if mode & 0o007 != 0 {
                "every user of this machine"
            } else {
                "its group"
            },
            path.display()
        )
    }))
}

#[cfg(not(unix))]
fn access(_: &Path, _: &std::fs::Metadata, _: &Secret) -> Result<Option<String>> {
    Ok(None)
}

/// Opens `path` for reading without ever waiting: if a named pipe was put
/// in the file's place between the check above and this open, a plain open
/// would block until a writer appears (forever, for an unattended run). With
/// `O_NONBLOCK` the open returns at once and the check of what was opened
/// refuses it; on a regular file the flag changes nothing.
#[cfg(unix)]
fn open_no_wait(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_wait(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    fn write(dir: &Path, name: &str, text: &[u8], mode: u32) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        p
    }

    #[test]
    fn one_line_is_read_and_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "k", b"  sk_live_1 \nsecond line\n", 0o600);
        let k = read(&p).unwrap();
        assert_eq!(k.key.expose_secret(), "sk_live_1");
        assert!(k.warning.is_none());
        let p = write(dir.path(), "crlf", b"sk_2\r\n", 0o600);
        assert_eq!(read(&p).unwrap().key.expose_secret(), "sk_2");
        let p = write(dir.path(), "bare", b"sk_3", 0o600);
        assert_eq!(read(&p).unwrap().key.expose_secret(), "sk_3");
        // A first line at the cap is read; one byte longer is refused,
        // whatever follows; a long file with a short first line is fine.
        let at_cap = [b'k'; MAX_KEY_FILE_BYTES];
        let p = write(dir.path(), "cap", &at_cap, 0o600);
        assert_eq!(
            read(&p).unwrap().key.expose_secret().len(),
            MAX_KEY_FILE_BYTES
        );
        let p = write(dir.path(), "long", &[b'k'; MAX_KEY_FILE_BYTES + 1], 0o600);
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("longer than 4096 bytes"), "{e}");
        let mut big = b"sk_4\n".to_vec();
        big.extend(std::iter::repeat_n(b'x', 1 << 20));
        let p = write(dir.path(), "big", &big, 0o600);
        assert_eq!(read(&p).unwrap().key.expose_secret(), "sk_4");
        for (name, text) in [("empty", &b""[..]), ("blank", b"  \n"), ("nl", b"\nsk")] {
            let p = write(dir.path(), name, text, 0o600);
            assert!(
                read(&p).unwrap_err().to_string().contains("is empty"),
                "{name}"
            );
        }
        let p = write(dir.path(), "bin", b"\xff\xfe\n", 0o600);
        assert!(
            read(&p)
                .unwrap_err()
                .to_string()
                .contains("does not hold text")
        );
    }

    /// A device, a pipe or a directory is refused before a byte is read
    /// (`/dev/zero` never ends, a pipe may never answer).
    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        for (path, what) in [
            (Path::new("/dev/zero"), "a device"),
            (dir.path(), "a directory"),
        ] {
            let e = read(path).unwrap_err().to_string();
            assert!(e.contains(&format!("not a regular file ({what})")), "{e}");
        }
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read(&fifo).unwrap_err().to_string();
        assert!(e.contains("a named pipe"), "{e}");
        // A pipe swapped in after the check: the open itself must not wait
        // for a writer (a plain open would hang here, with no writer).
        let opened = open_no_wait(&fifo).expect("opened without waiting");
        assert!(!opened.metadata().unwrap().is_file());
        // A symlink to a regular file is the file.
        let real = write(dir.path(), "real", b"sk_5\n", 0o600);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read(&link).unwrap().key.expose_secret(), "sk_5");
    }

    /// Group- or world-readable: read, with a warning naming `chmod 600`;
    /// owned by root (a container platform's secret mount, 0644 or 0444):
    /// read; owned by another ordinary user: refused.
    #[cfg(unix)]
    #[test]
    fn who_may_read_and_who_owns_it() {
        use std::os::unix::fs::chown;
        let dir = tempfile::tempdir().unwrap();
        for (mode, who) in [
            (0o640, "its group"),
            (0o644, "every user"),
            (0o604, "every user"),
        ] {
            let p = write(dir.path(), "k", b"sk\n", mode);
            let w = read(&p).unwrap().warning.expect("a warning");
            assert!(w.contains(&format!("chmod 600 {}", p.display())), "{w}");
            assert!(w.contains(who) && w.contains(&format!("{mode:03o}")), "{w}");
        }
        for mode in [0o600, 0o400] {
            let p = write(dir.path(), "k", b"sk\n", mode);
            assert!(read(&p).unwrap().warning.is_none(), "{mode:o}");
        }
        // SAFETY: no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 {
            // Only root can give a file away; the rest needs it.
            return;
        }
        for mode in [0o644, 0o444] {
            let p = write(dir.path(), "mounted", b"sk_mounted\n", mode);
            assert_eq!(read(&p).unwrap().key.expose_secret(), "sk_mounted");
        }
        let p = write(dir.path(), "theirs", b"sk_theirs\n", 0o600);
        chown(&p, Some(4242), None).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("belongs to user 4242"), "{e}");
        assert!(!e.contains("sk_theirs"), "{e}");
    }
}
