//! Benchmark of `payrun validate` on a generated 1,000,000-row payroll:
//! prints rows per second and the child's peak resident memory. Ignored by
//! default (it takes a while and times nothing it asserts); run it as
//!
//! ```text
//! cargo test --release --test bench_validate -- --ignored --nocapture
//! ```
//!
//! Every row carries a transaction id, a phone number and an e-mail, so
//! every rule runs, including the uniqueness set that grows with the file.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// The size the issue sets for the speed and memory targets
/// (`PAYRUN_BENCH_ROWS` overrides it for a quick try).
const ROWS: u64 = 1_000_000;

fn rows() -> u64 {
    std::env::var("PAYRUN_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROWS)
}

fn generate(path: &Path, rows: u64, bad_every: u64) {
    let mut w = BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(w, "transaction_id,account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname,beneficiary_phone,beneficiary_email").unwrap();
    let people = [
        ("Aïcha", "N'Guessan", "XOF", "+2250701", "momo"),
        ("Kwame", "Mensah", "GHS", "+233241", "momo"),
        ("Wanjiru", "Kamau", "KES", "+254712", "momo"),
        ("Chukwuemeka", "Okafor", "NGN", "+2348031", "bank"),
        ("Zoë", "Lefèvre", "EUR", "+336123", "bank"),
        ("Michael", "O'Brien", "USD", "+1202555", "bank"),
    ];
    for i in 0..rows {
        let (first, last, cur, prefix, method) = people[(i % 6) as usize];
        let digits = match cur {
            "EUR" => 5,
            "USD" => 4,
            _ => 6,
        };
        let n = (i * 7919) % 10u64.pow(digits);
        let phone = format!("{prefix}{n:0width$}", width = digits as usize);
        let amount = if bad_every > 0 && i % bad_every == 0 {
            "12,500".to_owned()
        } else {
            (1000 + (i * 37) % 900_000).to_string()
        };
        writeln!(
            w,
            "PAY-{i:09},{},{amount},{cur},{method},\"Salaire mars 2025, prime incluse\",{first},{last},{phone},{}.{}{i}@example.com",
            phone.trim_start_matches('+'),
            first.to_lowercase(),
            last.to_lowercase().replace('\'', ""),
        )
        .unwrap();
    }
    w.flush().unwrap();
}

/// Runs the release binary and returns (seconds, peak RSS in KiB, exit code).
fn run(file: &Path, rejected: &Path) -> (f64, u64, Option<i32>) {
    let start = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .arg("validate")
        .arg(file)
        .arg("--rejected")
        .arg(rejected)
        .current_dir(file.parent().unwrap())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let secs = start.elapsed().as_secs_f64();
    // ru_maxrss of RUSAGE_CHILDREN: the largest peak RSS of any waited-for
    // child, in KiB on Linux. This test's only children are the runs
    // measured, and the clean run goes first, so each reading is exact for
    // the first run and an upper bound after it.
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a plain C struct into the pointer it gets.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: initialised by the successful call above (and zeroed before).
    let peak_kib = unsafe { usage.assume_init() }.ru_maxrss as u64;
    (secs, peak_kib, status.code())
}

#[test]
#[ignore = "benchmark: cargo test --release --test bench_validate -- --ignored --nocapture"]
fn validate_one_million_rows() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows();
    let file = dir.path().join("payroll-1m.csv");
    let t = Instant::now();
    generate(&file, rows, 0);
    let size = std::fs::metadata(&file).unwrap().len();
    println!(
        "generated {rows} rows ({:.1} MiB) in {:.1}s",
        size as f64 / 1048576.0,
        t.elapsed().as_secs_f64()
    );

    let (secs, peak, code) = run(&file, &dir.path().join("rejected.csv"));
    if code != Some(0) {
        let rejected = std::fs::read_to_string(dir.path().join("rejected.csv")).unwrap();
        panic!(
            "generated rows were rejected:\n{}",
            &rejected[..rejected.len().min(3000)]
        );
    }
    println!(
        "all valid:      {rows} rows in {secs:.2}s = {:.0} rows/s, peak RSS {:.1} MiB",
        rows as f64 / secs,
        peak as f64 / 1024.0
    );

    // One row in a hundred rejected: the rejected file is written too.
    let file = dir.path().join("payroll-1m-bad.csv");
    generate(&file, rows, 100);
    let (secs, peak, code) = run(&file, &dir.path().join("rejected-bad.csv"));
    assert_eq!(code, Some(2));
    println!(
        "1% rejected:    {rows} rows in {secs:.2}s = {:.0} rows/s, peak RSS <= {:.1} MiB",
        rows as f64 / secs,
        peak as f64 / 1024.0
    );
}
