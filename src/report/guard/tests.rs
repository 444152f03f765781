//! The rule by every path that reaches one file, and what makes an output
//! unwritable.

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

/// Every side file of the database: the journals and the lock note beside
/// its real path (a symlinked database's note is beside the target).
#[test]
fn every_side_file_of_the_database_is_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let db = real.join("payrun.db");
    std::fs::write(&db, "").unwrap();
    let link = dir.path().join("db-link");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&db, &link).unwrap();
    #[cfg(not(unix))]
    let link = db.clone();
    let mut files = Files::new();
    files.database(&link);
    for side in [
        "payrun.db",
        "payrun.db-wal",
        "payrun.db-shm",
        "payrun.db-journal",
        "payrun.db.lock",
    ] {
        let mut f = files.clone();
        f.output("report", &real.join(side));
        let err = f.check().unwrap_err();
        assert!(
            matches!(err, Refused::Overwrite { ref input_role, .. } if input_role == "database"),
            "{side}: {err}"
        );
    }
    let mut f = files.clone();
    f.output("report", &real.join("payrun.db.csv"));
    assert!(f.check().is_ok());
}

/// Two outputs of one command are never one file, however named.
#[test]
fn two_outputs_are_never_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Files::new();
    files
        .output("report", &dir.path().join("failed.csv"))
        .output("failed rows", &dir.path().join(".").join("failed.csv"));
    let err = files.check().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "refusing to write the report and the failed rows to one file ({}); choose another \
             path for one of them (nothing was written)",
            dir.path().join(".").join("failed.csv").display()
        )
    );
    let mut files = Files::new();
    files
        .output("report", &dir.path().join("a.csv"))
        .output("summary", &dir.path().join("b.csv"));
    assert!(files.check().is_ok());
}

/// A directory, a device or a pipe, a missing folder, a folder that takes
/// no file: refused, with no file left behind.
#[test]
fn an_output_that_cannot_be_written_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let refused = |path: &Path| {
        let mut f = Files::new();
        f.output("report", path);
        match f.check() {
            Err(Refused::Unwritable { why, .. }) => why,
            other => panic!("{}: {other:?}", path.display()),
        }
    };
    assert!(refused(&out).contains("is a directory"));
    #[cfg(unix)]
    assert!(refused(Path::new("/dev/null")).contains("not a regular file"));
    assert!(refused(&dir.path().join("none").join("r.csv")).contains("does not exist"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500)).unwrap();
        // Root writes anywhere: the check is then the OS's, as it should be.
        let probe = std::fs::File::create(ro.join("p")).is_ok();
        if !probe {
            assert!(refused(&ro.join("r.csv")).contains("no new file can be made"));
        }
        let _ = std::fs::remove_file(ro.join("p"));
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "only out/ and ro/: {names:?}");
    let mut ok = Files::new();
    ok.output("report", &dir.path().join("report.csv"));
    assert!(ok.check().is_ok());
    assert!(!dir.path().join("report.csv").exists());
}

/// A run's payroll is known by its recorded path and by its bytes: a copy
/// or the same file reached from another folder is refused; a file with
/// other bytes, or one not written yet, is not.
#[test]
fn a_runs_payroll_is_known_by_its_bytes() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("may");
    std::fs::create_dir(&elsewhere).unwrap();
    let payroll = elsewhere.join("pay.csv");
    std::fs::write(&payroll, "a,b\n1,2\n").unwrap();
    let run = crate::store::RunInfo {
        id: 4,
        identity: String::new(),
        file_sha256: hex::encode(sha2::Sha256::digest(b"a,b\n1,2\n")).to_uppercase(),
        label: String::new(),
        file_path: "pay.csv".into(),
        provider: String::new(),
        rows_total: 1,
        rows_rejected: 0,
        created_at: String::new(),
        finished_at: None,
        period: String::new(),
        sheet: String::new(),
        id_scheme: 3,
    };
    let check = |out: &Path| {
        let mut f = Files::new();
        f.payroll_of(&run).output("approval page", out);
        f.check()
    };
    let err = check(&payroll).unwrap_err();
    assert!(
        matches!(&err, Refused::Overwrite { input_role, input, .. }
            if input_role == "payroll of run 4" && input == "pay.csv, the same bytes"),
        "{err}"
    );
    let copy = dir.path().join("copy.csv");
    std::fs::copy(&payroll, &copy).unwrap();
    assert!(check(&copy).is_err());
    std::fs::write(&copy, "a,b\n1,3\n").unwrap();
    assert!(check(&copy).is_ok());
    assert!(check(&dir.path().join("new.html")).is_ok());
}
