//! TLS and passwords to PostgreSQL (issue 31): a cluster of the test's own
//! (`common::cluster`) listening on 127.0.0.1 with `ssl = on`, a CA and a
//! server certificate the test makes, and a `pg_hba.conf` that takes only
//! TLS connections with a password (`hostssl … scram-sha-256`). The real
//! `payrun status` connects to it as an operator would: `sslmode` with
//! libpq's meanings, the password from `PGPASSWORD`, `~/.pgpass` or
//! `database_password_file`, and never a password in what it prints.

mod common;

use common::cluster::{Cluster, Tcp};
use common::{code, text};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The server's name in its certificate (reached at 127.0.0.1 through
/// `hostaddr`, as a managed server is reached by its name).
const NAME: &str = "db.payrun.test";
const PASSWORD: &str = "S3cret-pw-31";

/// A CA called `ca_name`, and a server certificate and key it signed for
/// `name`.
fn certificates(ca_name: &str, name: &str) -> (String, String, String) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, ca_name);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec![name.to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.pem(), server.pem(), key.serialize_pem())
}

struct Setup {
    cluster: Cluster,
    dir: tempfile::TempDir,
}

impl Setup {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The connection string to database `payrun` as user `payrun`, by
    /// `host` (at 127.0.0.1), with `query` added.
    fn url(&self, host: &str, query: &str) -> String {
        format!(
            "postgres://payrun@{host}:{}/payrun?hostaddr=127.0.0.1&{query}",
            self.cluster.port()
        )
    }

    /// `payrun status --db URL` in the test's folder, whose `HOME` it is
    /// (no `~/.pgpass`, no `~/.postgresql/root.crt` unless a test puts one).
    fn status(&self, db: &str, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
        cmd.args(["status", "--db", db])
            .current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env_remove("PGPASSWORD")
            .env_remove("PGPASSFILE")
            .env_remove("RUST_LOG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }
}

fn start(test: &str) -> Option<Setup> {
    let (ca, cert, key) = certificates("payrun test CA", NAME);
    let cluster = Cluster::start_tcp(
        test,
        Tcp {
            conf: "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n\
                   log_connections = on\n"
                .into(),
            hba: "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n".into(),
            files: vec![("server.crt".into(), cert), ("server.key".into(), key)],
        },
    )?;
    let mut admin = common::pg::connect(&cluster.url("postgres"));
    admin
        .batch_execute(&format!("CREATE ROLE payrun LOGIN PASSWORD '{PASSWORD}'"))
        .unwrap();
    admin
        .batch_execute("CREATE DATABASE payrun OWNER payrun")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), ca).unwrap();
    let (other_ca, _, _) = certificates("someone else's CA", NAME);
    std::fs::write(dir.path().join("other-ca.pem"), other_ca).unwrap();
    Some(Setup { cluster, dir })
}

fn write(path: &Path, text: &str, mode: u32) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Fails unless the command failed, said `needles`, and showed no password.
fn refused(out: &Output, needles: &[&str], secrets: &[&str]) {
    let all = text(out);
    eprintln!("{all}");
    assert_eq!(code(out), 1, "{all}");
    for n in needles {
        assert!(all.contains(n), "{n:?} not in: {all}");
    }
    for s in secrets {
        assert!(!all.contains(s), "a password was shown: {all}");
    }
    assert!(!all.contains("panicked"), "{all}");
}

#[test]
fn verify_full_connects_and_plain_wrong_names_and_unknown_cas_are_refused() {
    let test = "verify_full_connects_and_plain_wrong_names_and_unknown_cas_are_refused";
    let Some(s) = start(test) else {
        return;
    };
    let ca = s.path("ca.pem");
    let ca = ca.to_str().unwrap();
    let pw = [("PGPASSWORD", PASSWORD)];

    // verify-full, the CA given: connects (over TLS, says the server).
    let full = s.url(NAME, &format!("sslmode=verify-full&sslrootcert={ca}"));
    let out = s.status(&full, &pw);
    assert_eq!(code(&out), 0, "{}\n{}", text(&out), s.cluster.log());
    assert!(
        s.cluster
            .log()
            .lines()
            .any(|l| l.contains("user=payrun database=payrun") && l.contains("SSL enabled")),
        "{}",
        s.cluster.log()
    );

    // Plain: the server's rules refuse it, and payrun says what to do.
    let out = s.status(&s.url(NAME, "sslmode=disable"), &pw);
    refused(&out, &["no encryption", "sslmode=verify-full"], &[PASSWORD]);

    // verify-full by another name than the certificate's: refused.
    let other = s.url(
        "other.payrun.test",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    let out = s.status(&other, &pw);
    refused(&out, &["not issued for the host name"], &[PASSWORD]);
    // verify-ca checks the CA only: the same connection works.
    let out = s.status(&other.replace("verify-full", "verify-ca"), &pw);
    assert_eq!(code(&out), 0, "{}", text(&out));

    // A CA that did not sign the server's certificate: refused, naming it.
    let unknown = s.path("other-ca.pem");
    let wrong_ca = s.url(
        NAME,
        &format!("sslmode=verify-full&sslrootcert={}", unknown.display()),
    );
    let out = s.status(&wrong_ca, &pw);
    refused(
        &out,
        &["not signed by a CA in", "other-ca.pem"],
        &[PASSWORD],
    );
    // `require` with that CA given checks the chain too (libpq's rule);
    // without a CA it only encrypts.
    let out = s.status(&wrong_ca.replace("verify-full", "require"), &pw);
    refused(&out, &["not signed by a CA in"], &[PASSWORD]);
    let out = s.status(&s.url(NAME, "sslmode=require"), &pw);
    assert_eq!(code(&out), 0, "{}", text(&out));
    // No CA given: ~/.postgresql/root.crt, as libpq.
    std::fs::create_dir(s.path(".postgresql")).unwrap();
    std::fs::copy(&unknown, s.path(".postgresql/root.crt")).unwrap();
    let out = s.status(&s.url(NAME, "sslmode=verify-full"), &pw);
    refused(&out, &["root.crt"], &[PASSWORD]);
    std::fs::copy(ca, s.path(".postgresql/root.crt")).unwrap();
    let out = s.status(&s.url(NAME, "sslmode=verify-full"), &pw);
    assert_eq!(code(&out), 0, "{}", text(&out));
}

#[test]
fn the_password_comes_from_pgpassword_pgpass_or_a_file_and_is_never_shown() {
    let test = "the_password_comes_from_pgpassword_pgpass_or_a_file_and_is_never_shown";
    let Some(s) = start(test) else {
        return;
    };
    let ca = s.path("ca.pem");
    let db = s.url(
        NAME,
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    );
    // None anywhere: the server asks, and payrun says so.
    let out = s.status(&db, &[]);
    refused(
        &out,
        &["asks for a password and none was found"],
        &[PASSWORD],
    );
    // A wrong one, from each source: refused, never shown.
    let wrong = "Wr0ng-pw-31";
    let out = s.status(&db, &[("PGPASSWORD", wrong)]);
    refused(&out, &["refused the password from PGPASSWORD"], &[wrong]);
    let in_url = db.replace("payrun@", &format!("payrun:{wrong}@"));
    let out = s.status(&in_url, &[]);
    refused(
        &out,
        &["from the connection string", "payrun:***@"],
        &[wrong],
    );

    // ~/.pgpass, libpq's format; open to others, it is not read.
    let pgpass = s.path(".pgpass");
    let line = format!("{NAME}:{}:payrun:payrun:{PASSWORD}\n", s.cluster.port());
    write(
        &pgpass,
        &format!("# payrun\nother:*:*:*:{wrong}\n{line}"),
        0o600,
    );
    let out = s.status(&db, &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = s.status(&db, &[]);
    refused(
        &out,
        &["group or world access", "chmod 600", "none was found"],
        &[PASSWORD],
    );
    // PGPASSFILE names another.
    let elsewhere = s.path("pgpass-elsewhere");
    write(&elsewhere, &line, 0o600);
    let out = s.status(&db, &[("PGPASSFILE", elsewhere.to_str().unwrap())]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    std::fs::remove_file(&pgpass).unwrap();

    // database_password_file in payrun.toml, under the API key file's rules.
    let file = s.path("db-password");
    write(&file, &format!("{PASSWORD}\n"), 0o640);
    write(
        &s.path("payrun.toml"),
        &format!("database_password_file = \"{}\"\n", file.display()),
        0o600,
    );
    let out = s.status(&db, &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("database password file") && all.contains("chmod 600"),
        "{all}"
    );
    assert!(!all.contains(PASSWORD), "{all}");
    // PGPASSWORD comes first.
    let out = s.status(&db, &[("PGPASSWORD", wrong)]);
    refused(
        &out,
        &["password authentication failed"],
        &[wrong, PASSWORD],
    );
    write(&file, &format!("{wrong}\n"), 0o600);
    let out = s.status(&db, &[]);
    refused(
        &out,
        &["refused the password from database_password_file"],
        &[wrong],
    );
}
