//! A PostgreSQL cluster of the test's own, for tests that kill the database
//! server (never the shared one of `PAYRUN_TEST_POSTGRES`): made with
//! `initdb` in a temporary folder, served on a Unix socket in that folder
//! only (no TCP port, so nothing to collide with), killed like a crashed
//! machine and started again. As root, PostgreSQL's programs run as the
//! `postgres` OS user (`runuser`), since the server refuses to run as root.
//! Without `initdb`, [`Cluster::start`] prints why the test is skipped.
//! [`Cluster::start_tcp`] also listens on 127.0.0.1 at a free port, with
//! settings, `pg_hba.conf` and files (a TLS certificate) of the test's.
#![allow(dead_code)]

use super::pg::skipped;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a stop, a start or a death may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(60);
/// How often a death is looked for.
const POLL: Duration = Duration::from_millis(5);

pub struct Cluster {
    /// Holds `data/` (the cluster), the socket and the server log.
    dir: tempfile::TempDir,
    /// PostgreSQL's programs (`initdb`, `pg_ctl`).
    bin: PathBuf,
    /// Run them as `postgres` (we are root).
    as_postgres: bool,
    /// The postmaster's pid while the server is up.
    postmaster: std::cell::Cell<Option<i32>>,
    /// The TCP port on 127.0.0.1, if it listens there ([`Cluster::start_tcp`]).
    port: Option<u16>,
}

/// What a cluster listening on TCP adds to the defaults.
pub struct Tcp {
    /// Lines added to `postgresql.conf` (`ssl = on`, …).
    pub conf: String,
    /// The whole `pg_hba.conf`.
    pub hba: String,
    /// Files written in the data folder, the server's and mode 0600 (a
    /// server key must be): (name, contents).
    pub files: Vec<(String, String)>,
}

impl Cluster {
    /// A new cluster, started, with trust authentication for `postgres`;
    /// `None` (printed) when PostgreSQL's programs are not installed.
    pub fn start(test: &str) -> Option<Cluster> {
        Self::start_with(test, None)
    }

    /// A new cluster that also listens on 127.0.0.1, on a port free when
    /// it starts, set up as `tcp` says.
    pub fn start_tcp(test: &str, tcp: Tcp) -> Option<Cluster> {
        Self::start_with(test, Some(tcp))
    }

    fn start_with(test: &str, tcp: Option<Tcp>) -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            skipped(&format!(
                "{test}: initdb not found in /usr/lib/postgresql/*/bin or PATH \
                 (apt-get install postgresql)"
            ));
            return None;
        };
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::Builder::new().prefix("pgc").tempdir().unwrap();
        if as_postgres {
            let Some((uid, gid)) = postgres_user() else {
                skipped(&format!(
                    "{test}: running as root and no `postgres` OS user"
                ));
                return None;
            };
            chown(dir.path(), uid, gid);
        }
        // A port free now (PostgreSQL cannot be given port 0).
        let port = tcp.as_ref().map(|_| {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        });
        let c = Cluster {
            dir,
            bin,
            as_postgres,
            postmaster: std::cell::Cell::new(None),
            port,
        };
        let data = c.data();
        c.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        // The socket only, in our folder: the port number is only its file
        // name there, so the default cannot collide with another server.
        let mut conf = format!(
            "\nunix_socket_directories = '{}'\n\
             max_connections = 60\nshared_buffers = 16MB\n",
            c.dir.path().display()
        );
        match (&tcp, port) {
            (Some(tcp), Some(port)) => {
                conf.push_str(&format!(
                    "listen_addresses = '127.0.0.1'\nport = {port}\n{}\n",
                    tcp.conf
                ));
                std::fs::write(data.join("pg_hba.conf"), &tcp.hba).unwrap();
                for (name, text) in &tcp.files {
                    c.own_file(&data.join(name), text);
                }
            }
            _ => conf.push_str("listen_addresses = ''\n"),
        }
        let path = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&conf);
        std::fs::write(&path, text).unwrap();
        c.pg_start();
        Some(c)
    }

    /// The connection string of database `db` (`postgres` always exists):
    /// the socket folder as the host, percent-encoded.
    pub fn url(&self, db: &str) -> String {
        let host = self.dir.path().to_str().unwrap().replace('/', "%2F");
        match self.port {
            Some(port) => format!("postgres://postgres@{host}:{port}/{db}"),
            None => format!("postgres://postgres@{host}/{db}"),
        }
    }

    /// The TCP port on 127.0.0.1 ([`Cluster::start_tcp`] only).
    pub fn port(&self) -> u16 {
        self.port.expect("a cluster started with start_tcp")
    }

    /// Writes a file the server reads and nobody else may (mode 0600).
    fn own_file(&self, path: &Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        if self.as_postgres {
            let (uid, gid) = postgres_user().unwrap();
            chown(path, uid, gid);
        }
    }

    /// Creates database `db`.
    pub fn create_db(&self, db: &str) {
        super::pg::connect(&self.url("postgres"))
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .unwrap();
    }

    /// The server dies at once, as on a power cut: the postmaster is
    /// stopped (so it forks nothing more), then it and every process it
    /// started get SIGKILL. Returns when all of them are gone.
    pub fn kill(&self) {
        let pids = self.kill_all();
        let Some(&postmaster) = pids.last() else {
            return;
        };
        let started = Instant::now();
        // The postmaster gone for good (reaped: its pid file is checked on
        // the next start), its children dead (zombies hold no memory).
        while pids.iter().any(|&p| alive(p)) || exists(postmaster) {
            assert!(
                started.elapsed() < DEADLINE,
                "cluster processes {pids:?} did not die"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Signals the server's processes, postmaster last in the list; empty
    /// when the server is not up.
    fn kill_all(&self) -> Vec<i32> {
        let Some(pid) = self.postmaster.take() else {
            return Vec::new();
        };
        // A postmaster that died on its own may have left its pid to
        // another program: signal only a `postgres`.
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim() != "postgres" {
            return Vec::new();
        }
        // SAFETY: plain signals to the processes of our own cluster.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let mut pids = children(pid);
        pids.push(pid);
        for &p in &pids {
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        pids
    }

    /// Starts the server again (crash recovery replays its WAL); returns
    /// once it accepts connections.
    pub fn restart(&self) {
        self.pg_start();
    }

    /// The server's log so far, for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn postmaster_pid(&self) -> i32 {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).unwrap();
        text.lines().next().unwrap().trim().parse().unwrap()
    }

    /// `pg_ctl start -w`: pg_ctl itself waits until the server is ready.
    fn pg_start(&self) {
        assert!(self.postmaster.get().is_none(), "the cluster is already up");
        let data = self.data();
        let log = self.dir.path().join("server.log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                &DEADLINE.as_secs().to_string(),
                "start",
            ],
        );
        self.postmaster.set(Some(self.postmaster_pid()));
    }

    /// Runs one of PostgreSQL's programs (as `postgres` when we are root);
    /// a failure fails the test with its output and the server log.
    fn run(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
        assert!(
            out.status.success(),
            "{program} {args:?}: {}\n{}\nserver log:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
    }
}

impl Drop for Cluster {
    /// Kills the server if it is up (never panics: it may run during a
    /// failing test's unwinding); the folder goes with the `TempDir`.
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// The newest `/usr/lib/postgresql/N/bin` (Debian's layout), or the folder
/// of an `initdb` on `PATH`.
fn bin_dir() -> Option<PathBuf> {
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .max_by_key(|(v, _)| *v)
        .map(|(_, bin)| bin);
    debian.or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .find(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
    })
}

/// The uid and gid of the `postgres` OS user.
fn postgres_user() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam with a valid C string; the record is read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

fn chown(path: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
}

/// The processes whose parent is `pid`.
fn children(pid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let child: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`; comm may hold spaces or parens.
            let after = &stat[stat.rfind(')')? + 2..];
            let ppid: i32 = after.split(' ').nth(1)?.parse().ok()?;
            (ppid == pid).then_some(child)
        })
        .collect()
}

/// The process exists, zombie or not.
fn exists(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The process exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat.get(i + 2..i + 3))
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
