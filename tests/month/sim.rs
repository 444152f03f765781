//! The simulated month (issue 28, "The proof"): a model-based test of a
//! payroll month at the level of the engine with the real store — each
//! `payrun run` is [`payrun::engine::run`] in-process on a SQLite file; a
//! kill is that run crashed in-process at a fault point
//! ([`payrun::fault::arm`]: from the point on nothing leaves for the
//! provider, and the month goes on from what a crash keeps — the
//! database's committed state at that instant and the files as they were),
//! or, in a share of the months, the real binary dying there
//! (`PAYRUN_FAULT`); the closing tools are the library calls behind
//! `reconcile --statement`, `--mark` and `--resend` — against the sandbox in
//! its non-idempotent mode, where a second execute really pays twice.
//!
//! A month is a random sequence of steps: a payroll or a variant of it
//! (re-saved, re-typed accounts, reordered, one amount corrected, rows added
//! or removed, a totals row, a payee row without its account), with or
//! without `--allow-repeats`, `--initiate-only` then execute, a kill at a
//! random fault point then the resume, `failed.csv` run again, statements
//! with duplicate and conflicting lines, marks, re-sends racing another
//! terminal's marks, and the turn of the month (the database aged 40 days,
//! the next period's payroll). The operator's configuration is the one
//! `payrun init` writes.
//!
//! The invariant, after every step, is read from the sandbox's ledger: per
//! (canonical account, currency, period) the money debited never exceeds
//! what the operator explicitly asked for — the distinct payouts (account,
//! amount, method, occurrence) of the runs payrun accepted, where a run
//! without `--allow-repeats` asks nothing new for a person already paid or
//! being paid in the period, nor the same amount of a person whose payout
//! of another period is still open. Every row of every file run ends in
//! the report, or the run is refused with its reasons, and a totals row
//! used never names a payee. At the end of the month the operator closes
//! it (resume every file, run `failed.csv`, a clean statement, marks by the
//! ledger): then every (person, currency, period) is debited exactly what
//! was asked.

use super::common::{self, KEY, Sandbox, sandbox_statement};
use payrun::config::{Config, ReportLanguage};
use payrun::engine::{self, EngineOptions, ProgressTarget, ProviderChoice, RunOutcome, Settings};
use payrun::machine::decide::Verdict;
use payrun::provider::Client;
use payrun::reconcile::Asked;
use payrun::sandbox::SandboxConfig;
use payrun::shutdown::Shutdown;
use payrun::store::{Db, Store};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;
use secrecy::SecretString;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The people of a month: CI mobile numbers, as the payroll writes them.
const PEOPLE: [(&str, &str); 5] = [
    ("+2250701100001", "XOF"),
    ("+2250701100002", "XOF"),
    ("+2250701100003", "XOF"),
    ("+2250701100004", "GHS"),
    ("+2250701100005", "XOF"),
];
const NAMES: [&str; 5] = ["Awa", "Ali", "Eva", "Kofi", "Ama"];
const PERIODS: [&str; 2] = ["2026-11", "2026-12"];
const HEAD: &str = "account_id,amount,currency,payout_method_id,description,beneficiary_firstname,beneficiary_lastname";

/// The account key the test itself gives an account (CI region),
/// independent of payrun's: digits only, `00` and the national `0` form
/// brought to `+225…`.
fn canon(account: &str) -> String {
    let digits: String = account.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.strip_prefix("00").unwrap_or(&digits).to_string();
    if digits.len() == 10 && digits.starts_with('0') {
        format!("+225{digits}")
    } else {
        format!("+{digits}")
    }
}

/// The period a derived transaction id was paid under
/// (`pr-PERIOD-HASH20[-rN]`).
fn period_of(tx: &str) -> String {
    let mut id = tx.strip_prefix("pr-").unwrap_or(tx);
    if let Some((head, tail)) = id.rsplit_once('-')
        && tail.starts_with('r')
        && tail[1..].chars().all(|c| c.is_ascii_digit())
    {
        id = head;
    }
    id[..id.len().saturating_sub(21)].to_string()
}

/// One line of a payroll file.
#[derive(Debug, Clone, PartialEq)]
enum Line {
    Pay {
        person: usize,
        amount: i64,
        method: &'static str,
    },
    /// A totals row: no payee at all, the sum of the rows above.
    Totals(i64),
    /// A payee whose account was left empty, with the sum of the rows
    /// above as amount: never a totals row.
    NoAccount { person: usize, amount: i64 },
}

/// How the accounts are typed in a file.
#[derive(Debug, Clone, Copy)]
enum Typing {
    AsIs,
    NoPlus,
    Spaces,
    National,
    DoubleZero,
}

fn typed(account: &str, t: Typing) -> String {
    match t {
        Typing::AsIs => account.to_string(),
        Typing::NoPlus => account.replace("+225", "225"),
        Typing::Spaces => account.replace("+2250701", "+225 07 01 "),
        Typing::National => account.replace("+2250701", "07 01 "),
        Typing::DoubleZero => account.replace("+225", "00225"),
    }
}

fn render(lines: &[Line], typing: Typing, crlf: bool) -> String {
    let mut s = format!("{HEAD}\n");
    for l in lines {
        match l {
            Line::Pay {
                person,
                amount,
                method,
            } => {
                let (acc, cur) = PEOPLE[*person];
                s.push_str(&format!(
                    "{},{amount},{cur},{method},Salaire,{},Koné\n",
                    typed(acc, typing),
                    NAMES[*person]
                ));
            }
            Line::Totals(sum) => s.push_str(&format!(",{sum},XOF,,,TOTAL,\n")),
            Line::NoAccount { person, amount } => s.push_str(&format!(
                ",{amount},XOF,momo,Salaire,{},Koné\n",
                NAMES[*person]
            )),
        }
    }
    if crlf { s.replace('\n', "\r\n") } else { s }
}

/// A payout as the operator asked for it: person, period, amount, method,
/// occurrence among identical payouts of its file.
type Ident = (usize, String, i64, &'static str, u32);

fn idents(lines: &[Line], period: &str) -> Vec<Ident> {
    let mut seen: BTreeMap<(usize, i64, &str), u32> = BTreeMap::new();
    let mut out = Vec::new();
    for l in lines {
        if let Line::Pay {
            person,
            amount,
            method,
        } = l
        {
            let n = seen.entry((*person, *amount, *method)).or_default();
            *n += 1;
            out.push((*person, period.to_string(), *amount, *method, *n));
        }
    }
    out
}

/// A payout of the database, as the test reads it.
struct DbPayout {
    tx: String,
    person: Option<usize>,
    amount: i64,
    state: String,
}

/// A run payrun accepted, to resume when the month closes.
#[derive(Clone)]
struct Accepted {
    file: PathBuf,
    period: String,
    allow: bool,
}

pub struct Month {
    rng: StdRng,
    /// The name of the month's threads (the test's, its runtime's
    /// `SCOPE-rt`): an in-process crash is theirs alone.
    scope: String,
    /// Kills are the real binary dying (else in-process crashes).
    real_kills: bool,
    sb: Sandbox,
    w: common::Work,
    cfg: Config,
    /// The payroll of the period, as the clerk keeps it.
    base: Vec<Line>,
    period: usize,
    asked: BTreeSet<Ident>,
    accepted: Vec<Accepted>,
    files: u32,
    pub log: Vec<String>,
    /// Rows dropped silently, or a payee taken for a totals row.
    broken: Vec<String>,
}

/// The configuration `payrun init` writes, with its four eyes off (one
/// operator here; approvals have their own tests) and no status call
/// before the verdict (what an ambiguous answer parks stays for the
/// closing tools).
fn init_config() -> String {
    let text = payrun::template::config_toml(ReportLanguage::En);
    let off = text.replace("require_approval = true", "require_approval = false");
    assert_ne!(off, text, "init's config asks for four eyes");
    format!("settle_wait = \"0s\"\n{off}")
}

impl Month {
    /// A month of `seed`, played on threads named `scope` (the calling
    /// thread) and `scope-rt` (its runtime's); its kills are the real
    /// binary with probability `real_kills`.
    pub fn new(seed: u64, scope: &str, real_kills: f64) -> Month {
        let mut rng = StdRng::seed_from_u64(seed);
        let ambiguous = [0.0, 0.15, 0.3][rng.random_range(0..3)];
        // Answers lost before anything was done: an execute then stays
        // unknown though nothing was paid, as after a kill before the send.
        let fail = [0.0, 0.1, 0.2][rng.random_range(0..3)];
        let real_kills = rng.random_bool(real_kills);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(format!("{scope}-rt"))
            .enable_all()
            .build()
            .unwrap();
        let running = rt
            .block_on(payrun::sandbox::start(SandboxConfig {
                non_idempotent_execute: true,
                ambiguous_rate: ambiguous,
                fail_rate: fail,
                seed,
                ..SandboxConfig::default()
            }))
            .unwrap();
        let sb = Sandbox {
            rt,
            running: Some(running),
        };
        // In memory where the machine has it: a month's fsyncs are not
        // what it tests (tests/crash.rs kills runs on a real disk).
        let w = match Path::new("/dev/shm").is_dir() {
            true => common::Work {
                dir: tempfile::tempdir_in("/dev/shm").unwrap(),
            },
            false => common::Work::new(),
        };
        std::fs::copy(empty_db(), w.db()).unwrap();
        let config_text = init_config();
        w.write("payrun.toml", &config_text);
        let cfg = Config::parse(&config_text).unwrap();
        let mut base = Vec::new();
        // The GHS payee in some months only: a file of one currency can
        // carry a totals row.
        let ghs = rng.random_bool(0.3);
        for person in (0..4).filter(|&p| p != 3 || ghs) {
            let amount = rng.random_range(10..200) * 1000;
            base.push(Line::Pay {
                person,
                amount,
                method: "momo",
            });
            if person == 1 && rng.random_bool(0.5) {
                base.push(Line::Pay {
                    person,
                    amount,
                    method: "bank",
                });
            }
            if person == 2 && rng.random_bool(0.5) {
                base.push(Line::Pay {
                    person,
                    amount,
                    method: "momo",
                });
            }
        }
        Month {
            rng,
            scope: scope.to_string(),
            real_kills,
            sb,
            w,
            cfg,
            base,
            period: 0,
            asked: BTreeSet::new(),
            accepted: Vec::new(),
            files: 0,
            log: vec![format!(
                "ambiguous_rate {ambiguous} fail_rate {fail} real kills {real_kills}"
            )],
            broken: Vec::new(),
        }
    }

    fn period(&self) -> String {
        PERIODS[self.period].to_string()
    }

    fn write_file(&mut self, text: &str) -> PathBuf {
        self.files += 1;
        self.w.write(&format!("payroll-{}.csv", self.files), text)
    }

    fn settings(&self, file: &Path, period: &str, allow: bool, initiate_only: bool) -> Settings {
        let cfg = self.cfg.clone();
        Settings {
            gate: Default::default(),
            period: period.to_string(),
            period_given: true,
            allow_repeats: allow,
            repeat_window_days: cfg.repeat_window_days(),
            file: file.to_path_buf(),
            provider: ProviderChoice::Remote {
                base_url: self.sb.base_url(),
                api_key: SecretString::from(KEY.to_string()),
            },
            db: Db::File(self.w.db()),
            report: self.w.report(),
            label: String::new(),
            new_run: false,
            sheet: None,
            skip_hidden_rows: false,
            assume_no_hidden_rows: false,
            import_only: false,
            expect_total: Vec::new(),
            preparer: payrun::who::Person::current(Some("ama")),
            engine: EngineOptions {
                // A rate the loopback sandbox takes at once: no waits.
                rate: payrun::limiter::RateMode::Fixed(100_000),
                max_concurrency: 4,
                ambiguous: cfg.ambiguous(),
                initiate_only,
                max_attempts_total: cfg.max_attempts_total(),
                resend_delay: std::time::Duration::from_millis(1),
                backoff: payrun::engine::retry::Backoff::from_base_ms(1),
                lease: payrun::engine::lease::DEFAULT_LEASE,
                request_deadline: payrun::provider::REQUEST_TIMEOUT,
            },
            config: cfg,
        }
    }

    fn payouts(&self) -> Vec<DbPayout> {
        if !self.w.db().exists() {
            return Vec::new();
        }
        let conn = rusqlite::Connection::open(self.w.db()).unwrap();
        let mut st = conn
            .prepare("SELECT transaction_id, account_id, amount, state FROM payouts")
            .unwrap();
        st.query_map([], |r| {
            let account: String = r.get(1)?;
            let amount: String = r.get(2)?;
            Ok(DbPayout {
                tx: r.get(0)?,
                person: PEOPLE.iter().position(|(a, _)| canon(a) == canon(&account)),
                amount: amount.parse::<Decimal>().unwrap().try_into().unwrap(),
                state: r.get(3)?,
            })
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    }

    /// What the operator explicitly asks for by running `lines` in
    /// `period`, if payrun accepts the run: every payout with
    /// `--allow-repeats`; without it, a new payout only for a person with
    /// nothing paid or being paid in the period, and no open payout of the
    /// same amount in another.
    fn would_ask(&self, lines: &[Line], period: &str, allow: bool) -> Vec<Ident> {
        let ids = idents(lines, period);
        if allow {
            return ids;
        }
        let ledger = self.sb.ledger();
        let debited = |tx: &str| ledger.get(tx).is_some_and(|t| t.debits > 0);
        let payouts = self.payouts();
        let guarded = |s: &str| payrun::machine::GUARDED.iter().any(|g| g.to_string() == s);
        // Open: money that has not moved yet but will when its run resumes
        // (an `unknown` one of another period is compared only within the
        // window, as the guard does).
        let open = |s: &str| payrun::machine::OPEN.iter().any(|o| o.to_string() == s);
        ids.into_iter()
            .filter(|id| {
                if self.asked.contains(id) {
                    return true;
                }
                !payouts.iter().any(|p| {
                    p.person == Some(id.0)
                        && if period_of(&p.tx) == period {
                            guarded(&p.state) || debited(&p.tx)
                        } else {
                            p.amount == id.2 && open(&p.state)
                        }
                })
            })
            .collect()
    }

    /// Runs `file` in-process; returns whether payrun accepted it.
    fn run(&mut self, file: &Path, lines: Option<&[Line]>, allow: bool, initiate: bool) -> bool {
        self.run_or_crash(file, lines, allow, initiate, None)
    }

    /// Runs `file` in-process, crashed at the `nth` hit of fault point
    /// `crash` if given (one payout at a time, so the point is the same on
    /// a replay); returns whether payrun accepted it — a crashed run was
    /// (its resume is a later step).
    fn run_or_crash(
        &mut self,
        file: &Path,
        lines: Option<&[Line]>,
        allow: bool,
        initiate: bool,
        crash: Option<(&'static str, u64)>,
    ) -> bool {
        let period = self.period();
        let ask = lines.map(|l| self.would_ask(l, &period, allow));
        let mut settings = self.settings(file, &period, allow, initiate);
        let mut stop = Shutdown::never();
        let kept = std::sync::Arc::new(std::sync::Mutex::new(None));
        let armed = crash.map(|(point, nth)| {
            settings.engine.max_concurrency = 1;
            let (trigger, listen) = payrun::shutdown::channel();
            stop = listen;
            let (dir, db, kept) = (self.w.dir.path().to_path_buf(), self.w.db(), kept.clone());
            // On the spot, on the thread that reached the point (every
            // request of the month's threads already refused): what the
            // crash keeps; then the run is stopped, its remains thrown
            // away below.
            payrun::fault::arm(&self.scope, point, nth, move || {
                *kept.lock().unwrap() = Some(Kept::take(&dir, &db));
                trigger.fire();
            })
        });
        // A copy of an unfinished run's file resumes that run: its report
        // is that file's.
        let resumed_other = std::sync::Mutex::new(None);
        let outcome =
            self.sb
                .rt
                .block_on(engine::run(&settings, ProgressTarget::Hidden, stop, &|e| {
                    if let engine::Event::Resuming { file_path, .. } = e
                        && Path::new(&file_path) != file
                    {
                        *resumed_other.lock().unwrap() = Some(file_path);
                    }
                }));
        let resumed_other = resumed_other.into_inner().unwrap();
        if let Some(armed) = armed
            && armed.crashed()
        {
            drop(armed);
            let kept = kept.lock().unwrap().take().expect("kept at the crash");
            kept.restore(self.w.dir.path(), &self.w.db());
            let (point, nth) = crash.unwrap();
            self.log.push(format!(
                "crash {} at {point}:{nth} period {period} allow {allow} (in-process)",
                file.display()
            ));
            self.accept(file, &period, allow, ask);
            return true;
        }
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let accepted = match &outcome {
            Ok(RunOutcome::Ran(ran)) => {
                match (lines, &resumed_other) {
                    (Some(lines), None) => self.rows_accounted(lines, ran),
                    (_, Some(other)) => self.log.push(format!("resumes the run of {other}")),
                    _ => {}
                }
                true
            }
            Ok(RunOutcome::Imported { .. }) => true,
            Ok(RunOutcome::Repeats(r)) => {
                assert!(
                    r.total > 0 && !r.listed.is_empty(),
                    "{name}: refused, no rows named"
                );
                false
            }
            Ok(RunOutcome::Rejected(r)) => {
                assert!(!r.first_errors.is_empty(), "{name}: rejected, no reason");
                false
            }
            Ok(RunOutcome::NotFailed(_) | RunOutcome::DuplicateIds(_)) => false,
            Ok(o) => panic!("{name}: unexpected outcome {o:?}"),
            Err(e) => {
                let why = format!("{e:#}");
                assert!(!why.is_empty());
                false
            }
        };
        self.log.push(format!(
            "run {name} period {period} allow {allow} initiate-only {initiate}: {}",
            match &outcome {
                Ok(RunOutcome::Ran(r)) => format!("ran {:?}", r.counts),
                Ok(o) => format!("{o:?}").chars().take(300).collect(),
                Err(e) => format!("error {e:#}").chars().take(300).collect(),
            }
        ));
        if accepted {
            self.accept(file, &period, allow, ask);
        }
        accepted
    }

    fn accept(&mut self, file: &Path, period: &str, allow: bool, ask: Option<Vec<Ident>>) {
        self.asked.extend(ask.unwrap_or_default());
        let again = Accepted {
            file: file.to_path_buf(),
            period: period.to_string(),
            allow,
        };
        if !self.accepted.iter().any(|a| a.file == again.file) {
            self.accepted.push(again);
        }
    }

    /// Every row of the file is in the report, or is the totals row the
    /// run used — which names no payee.
    fn rows_accounted(&mut self, lines: &[Line], ran: &payrun::engine::Ran) {
        let report = self.w.report_rows();
        let reported: BTreeSet<u64> = (0..report.len())
            .map(|i| common::col(&report, i, "row").parse().unwrap())
            .collect();
        let totals = ran.overrides.totals_row.as_ref().map(|o| o.row);
        for (i, l) in lines.iter().enumerate() {
            let row = i as u64 + 2;
            if Some(row) == totals {
                if !matches!(l, Line::Totals(_)) {
                    self.broken.push(format!(
                        "row {row} ({l:?}) names a payee, yet was used as a totals row"
                    ));
                }
            } else if !reported.contains(&row) {
                self.broken.push(format!(
                    "row {row} ({l:?}) silently dropped (totals row: {totals:?})"
                ));
            }
        }
    }

    /// A kill at a random fault point: in-process, or in the months of
    /// real kills the real binary dying there (concurrency 1, so the point
    /// is the same on a replay); the resume is a later step. A run that
    /// ends before the point is a run like any other.
    fn killed_run(&mut self, file: &Path, lines: &[Line], allow: bool) {
        let point =
            ["before_send", "after_answer", "after_intent_commit"][self.rng.random_range(0..3)];
        let n = self.rng.random_range(1..=2 * lines.len() + 1);
        if !self.real_kills {
            self.run_or_crash(file, Some(lines), allow, false, Some((point, n as u64)));
            return;
        }
        let period = self.period();
        let ask = self.would_ask(lines, &period, allow);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_payrun"));
        cmd.current_dir(self.w.dir.path())
            .env("PAYRUN_API_KEY", KEY)
            .env("XDG_DATA_HOME", self.w.path("data"))
            .env("PAYRUN_BACKOFF_MS", "1")
            .env("PAYRUN_FAULT", format!("{point}:{n}"))
            .env_remove("RUST_LOG")
            .args([
                "run",
                "--quiet",
                "--concurrency",
                "1",
                "--rate",
                "100000",
                "--period",
                &period,
            ])
            .arg(file)
            .arg("--base-url")
            .arg(self.sb.base_url())
            .arg("--db")
            .arg(self.w.db())
            .arg("--report")
            .arg(self.w.report());
        if allow {
            cmd.arg("--allow-repeats");
        }
        let out = cmd.output().unwrap();
        let code = out.status.code();
        self.log.push(format!(
            "kill {} at {point}:{n} period {period} allow {allow}: exit {code:?}",
            file.display()
        ));
        match code {
            Some(0 | 3) | None => self.accept(file, &period, allow, Some(ask)),
            Some(_) => {}
        }
    }

    /// A variant of the payroll of the period: one or two of the clerk's
    /// changes.
    fn variant(&mut self) -> (Vec<Line>, Typing, bool, String) {
        let mut lines = self.base.clone();
        let mut typing = Typing::AsIs;
        let mut crlf = false;
        let mut what = Vec::new();
        for _ in 0..self.rng.random_range(1..=2) {
            match self.rng.random_range(0..9) {
                0 => {
                    crlf = true;
                    what.push("re-saved");
                }
                1 => {
                    typing = [
                        Typing::NoPlus,
                        Typing::Spaces,
                        Typing::National,
                        Typing::DoubleZero,
                    ][self.rng.random_range(0..4)];
                    what.push("re-typed");
                }
                2 => {
                    lines.shuffle(&mut self.rng);
                    what.push("reordered");
                }
                3 => {
                    let i = self.rng.random_range(0..lines.len());
                    if let Line::Pay { amount, .. } = &mut lines[i] {
                        *amount += self.rng.random_range(1..20) * 1000;
                    }
                    what.push("one amount corrected");
                }
                4 => {
                    lines.push(Line::Pay {
                        person: 4,
                        amount: self.rng.random_range(10..200) * 1000,
                        method: "momo",
                    });
                    what.push("a row added");
                }
                5 if lines.len() > 1 => {
                    let i = self.rng.random_range(0..lines.len());
                    lines.remove(i);
                    what.push("a row removed");
                }
                6 => {
                    let person = self.rng.random_range(0..3);
                    let amount = self.rng.random_range(1..50) * 1000;
                    lines.push(Line::Pay {
                        person,
                        amount,
                        method: "momo",
                    });
                    what.push("a second payment to one person");
                }
                7 => {
                    let sum = xof_sum(&lines);
                    lines.push(Line::Totals(sum));
                    what.push("a totals row");
                }
                _ => {
                    let sum = xof_sum(&lines);
                    let person = self.rng.random_range(0..3);
                    lines.push(Line::NoAccount {
                        person,
                        amount: sum,
                    });
                    what.push("a payee row without account, amount the sum above");
                }
            }
        }
        (lines, typing, crlf, what.join(", "))
    }

    /// One random step of the month.
    pub fn step(&mut self) {
        match self.rng.random_range(0..20) {
            0..=7 => {
                let (lines, typing, crlf, what) = if self.rng.random_bool(0.4) {
                    (self.base.clone(), Typing::AsIs, false, "the payroll".into())
                } else {
                    self.variant()
                };
                let text = render(&lines, typing, crlf);
                let file = self.write_file(&text);
                let allow = self.rng.random_bool(0.3);
                self.log.push(format!("file {}: {what}", file.display()));
                // A kill: one file in four.
                match self.rng.random_range(0..12) {
                    // --initiate-only, executed at once or left for a
                    // later step (an approval that waits, past the turn of
                    // the month maybe).
                    0 | 1 => {
                        if self.run(&file, Some(&lines), allow, true) && self.rng.random_bool(0.5) {
                            self.run(&file, None, allow, false);
                        }
                    }
                    2..=4 => self.killed_run(&file, &lines, allow),
                    _ => {
                        self.run(&file, Some(&lines), allow, false);
                    }
                }
            }
            8..=9 => self.resume_some(),
            10..=11 => self.failed_csv(false),
            12..=13 => self.statement(true),
            14 => self.mark(),
            15..=16 => self.resend(),
            17 if self.period == 0 => self.turn_of_the_month(),
            _ => self.statement(false),
        }
    }

    /// A file run earlier, run again as it is (the resume of a kill, or of
    /// an `--initiate-only`).
    fn resume_some(&mut self) {
        if self.accepted.is_empty() {
            return;
        }
        let a = self.accepted[self.rng.random_range(0..self.accepted.len())].clone();
        let now = std::mem::replace(
            &mut self.period,
            PERIODS.iter().position(|p| *p == a.period).unwrap(),
        );
        self.run(&a.file, None, a.allow, false);
        self.period = now;
    }

    /// `failed.csv`, renamed and run (the period of the run that wrote it
    /// is the clerk's current one).
    fn failed_csv(&mut self, closing: bool) {
        let failed = self.w.path("failed.csv");
        let Ok(text) = std::fs::read_to_string(&failed) else {
            return;
        };
        self.files += 1;
        let retry = self.w.write(&format!("retry-{}.csv", self.files), &text);
        self.log.push(format!("failed.csv as {}", retry.display()));
        // Its rows re-pay payouts already asked for: nothing new is asked.
        // Stopped by the guard (the person was paid the same amount in
        // another period since), the operator who closes the month checks
        // and re-pays with --allow-repeats.
        if !self.run(&retry, None, false, false) && closing {
            // Rows naming payouts paid meanwhile (re-paid by another file)
            // are refused with the reason: the operator deletes them.
            let refused = self.not_failed_rows(&retry);
            let mut kept = String::new();
            for (i, l) in text.lines().enumerate() {
                if !refused.contains(&(i as u64 + 1)) {
                    kept.push_str(l);
                    kept.push('\n');
                }
            }
            if kept.lines().count() > 1 {
                self.files += 1;
                let retry = self.w.write(&format!("retry-{}.csv", self.files), &kept);
                if !self.run(&retry, None, false, false) {
                    self.run(&retry, None, true, false);
                }
            }
        }
    }

    /// The rows of a `failed.csv` payrun refuses as "did not fail".
    fn not_failed_rows(&self, file: &Path) -> BTreeSet<u64> {
        let settings = self.settings(file, &self.period(), false, false);
        let outcome = self.sb.rt.block_on(engine::run(
            &settings,
            ProgressTarget::Hidden,
            Shutdown::never(),
            &|_| {},
        ));
        match outcome {
            Ok(RunOutcome::NotFailed(n)) => n
                .listed
                .iter()
                .filter_map(|l| l.strip_prefix("row ")?.split(':').next()?.parse().ok())
                .collect(),
            _ => BTreeSet::new(),
        }
    }

    /// The provider's statement, reconciled; with `twisted`, a payout the
    /// books still hold open is listed twice with conflicting statuses.
    fn statement(&mut self, twisted: bool) {
        let text = sandbox_statement(&self.sb, "");
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        if twisted {
            let open: BTreeSet<String> = self
                .payouts()
                .into_iter()
                .filter(|p| p.state == "unknown" || p.state == "processing")
                .map(|p| p.tx)
                .collect();
            let mut extra = Vec::new();
            for l in lines.iter().skip(1) {
                let cells: Vec<&str> = l.split(',').collect();
                if open.contains(cells[0]) && self.rng.random_bool(0.7) {
                    let mut other = cells.clone();
                    let status = cells.iter().position(|c| {
                        ["Successful", "Failed", "Pending", "Initiated"].contains(c)
                            || c.eq_ignore_ascii_case("success")
                    });
                    if let Some(i) = status {
                        other[i] = if cells[i] == "Failed" {
                            "Successful"
                        } else {
                            "Failed"
                        };
                        extra.push((self.rng.random_bool(0.5), l.clone(), other.join(",")));
                    }
                }
            }
            for (before, line, other) in extra {
                let at = lines.iter().position(|x| *x == line).unwrap();
                lines.insert(if before { at } else { at + 1 }, other);
            }
        }
        self.files += 1;
        let path = self.w.write(
            &format!("statement-{}.csv", self.files),
            &(lines.join("\n") + "\n"),
        );
        let mut store = Store::connect(&Db::File(self.w.db())).unwrap();
        let asked = Asked {
            fallback: Some(self.sb.base_url()),
            ..Asked::default()
        };
        let out = self.w.path("reconciliation.csv");
        let r = payrun::reconcile::reconcile_statement(
            &mut store, &path, None, &self.cfg, &asked, &out,
        );
        self.log.push(format!(
            "statement {} twisted {twisted}: {}",
            path.display(),
            match r {
                Ok(c) => format!(
                    "settled {:?}",
                    c.settled
                        .iter()
                        .map(|s| (&s.transaction_id, s.to))
                        .collect::<Vec<_>>()
                ),
                Err(e) => format!("error {e:#}"),
            }
        ));
    }

    /// The operator settles what is unknown from the provider's books:
    /// debited → executed, not debited → failed.
    fn mark(&mut self) {
        let ledger = self.sb.ledger();
        let mut store = Store::connect(&Db::File(self.w.db())).unwrap();
        for u in store.unresolved(None).unwrap() {
            let paid = ledger.get(&u.transaction_id).is_some_and(|t| t.debits > 0);
            let verdict = if paid {
                Verdict::Executed
            } else {
                Verdict::Failed
            };
            let r = payrun::engine::reconcile::mark(
                &mut store,
                std::slice::from_ref(&u.transaction_id),
                verdict,
                "the provider's books",
                |_, _| {},
            );
            self.log.push(format!(
                "mark {} {verdict:?}: {:?}",
                u.transaction_id,
                r.err()
            ));
        }
    }

    /// `reconcile --resend` of the unknown payouts the books show unpaid,
    /// while another terminal marks some of them failed after the list was
    /// read.
    fn resend(&mut self) {
        let ledger = self.sb.ledger();
        let mut store = Store::connect(&Db::File(self.w.db())).unwrap();
        let list: Vec<_> = store
            .unresolved(None)
            .unwrap()
            .into_iter()
            .filter(|u| ledger.get(&u.transaction_id).is_none_or(|t| t.debits == 0))
            .collect();
        if list.is_empty() {
            return;
        }
        let mut other = Store::connect(&Db::File(self.w.db())).unwrap();
        for u in &list {
            if self.rng.random_bool(0.4) {
                let r = payrun::engine::reconcile::mark(
                    &mut other,
                    std::slice::from_ref(&u.transaction_id),
                    Verdict::Failed,
                    "another terminal: not on the provider's books",
                    |_, _| {},
                );
                self.log.push(format!(
                    "meanwhile mark {} failed: {:?}",
                    u.transaction_id,
                    r.err()
                ));
            }
        }
        let client =
            Client::new(&self.sb.base_url(), &SecretString::from(KEY.to_string())).unwrap();
        let mut lines = Vec::new();
        let r = self.sb.rt.block_on(payrun::engine::reconcile::resend(
            &mut store,
            &client,
            list,
            &Shutdown::never(),
            |l| {
                lines.push(format!(
                    "{} {:?} {:?}",
                    l.transaction_id, l.settled, l.refused
                ))
            },
        ));
        self.log.push(format!("resend: {lines:?} {:?}", r.err()));
    }

    /// The month turns: everything recorded is 40 days older, and the
    /// next period's payroll is the clerk's.
    fn turn_of_the_month(&mut self) {
        let conn = rusqlite::Connection::open(self.w.db()).unwrap();
        conn.execute_batch(
            "UPDATE runs SET created_at = strftime('%Y-%m-%dT%H:%M:%fZ', created_at, '-40 days');
             UPDATE payouts SET updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', updated_at, '-40 days');",
        )
        .unwrap();
        self.period = 1;
        self.log
            .push("the month turns: 40 days later, period 2026-12".into());
    }

    /// The invariant, on the ledger: per (person, currency, period), what
    /// was debited never exceeds what was asked; with `exact`, equals it.
    pub fn check(&self, exact: bool) -> Result<(), String> {
        if let Some(b) = self.broken.first() {
            return Err(b.clone());
        }
        let mut asked: BTreeMap<(usize, String), i64> = BTreeMap::new();
        for (person, period, amount, _, _) in &self.asked {
            *asked.entry((*person, period.clone())).or_default() += amount;
        }
        let mut paid: BTreeMap<(usize, String), i64> = BTreeMap::new();
        for t in self
            .sb
            .ledger()
            .transactions
            .iter()
            .filter(|t| t.kind == "payout")
        {
            if t.debits == 0 {
                continue;
            }
            let person = PEOPLE
                .iter()
                .position(|(a, c)| canon(a) == canon(&t.account_id) && *c == t.currency)
                .ok_or_else(|| format!("{t:?}: nobody's account"))?;
            let amount: i64 = t.amount.try_into().unwrap();
            *paid
                .entry((person, period_of(&t.transaction_id)))
                .or_default() += amount * i64::from(t.debits);
        }
        for (key, &got) in &paid {
            let want = asked.get(key).copied().unwrap_or_default();
            if got > want {
                return Err(format!(
                    "{} {} in period {}: debited {got}, asked {want}",
                    PEOPLE[key.0].0, PEOPLE[key.0].1, key.1
                ));
            }
        }
        if exact {
            for (key, &want) in &asked {
                let got = paid.get(key).copied().unwrap_or_default();
                if got != want {
                    return Err(format!(
                        "after closing, {} {} in period {}: debited {got}, asked {want}",
                        PEOPLE[key.0].0, PEOPLE[key.0].1, key.1
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every payout executed, or failed and paid again under a linked id
    /// (itself executed, or failed and paid again...).
    fn settled(&self) -> bool {
        self.open_runs().is_empty()
    }

    /// The files (by hash) of the runs with a payout open: not executed,
    /// nor failed and paid again under a linked id (the chain of re-pays
    /// followed to its end).
    fn open_runs(&self) -> BTreeSet<String> {
        let conn = rusqlite::Connection::open(self.w.db()).unwrap();
        let mut st = conn
            .prepare(
                "WITH RECURSIVE paid(id) AS ( \
                   SELECT id FROM payouts WHERE state = 'executed' \
                   UNION SELECT q.retry_of FROM payouts q JOIN paid ON q.id = paid.id \
                   WHERE q.retry_of IS NOT NULL) \
                 SELECT DISTINCT r.file_sha256 FROM payouts p JOIN runs r ON r.id = p.run_id \
                 WHERE p.id NOT IN (SELECT id FROM paid)",
            )
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// The operator closes the month: every file whose run has anything
    /// open run again as it is, its `failed.csv` run, a clean statement,
    /// marks by the ledger; until nothing is open.
    pub fn close(&mut self) {
        self.log.push("closing".into());
        for _ in 0..6 {
            let open = self.open_runs();
            for a in self.accepted.clone() {
                let sha = payrun::engine::import::file_sha256(&a.file).unwrap();
                if !open.contains(&sha) {
                    continue;
                }
                let now = std::mem::replace(
                    &mut self.period,
                    PERIODS.iter().position(|p| *p == a.period).unwrap(),
                );
                self.run(&a.file, None, a.allow, false);
                self.failed_csv(true);
                self.period = now;
            }
            self.statement(false);
            self.mark();
            if self.settled() {
                break;
            }
        }
    }
}

/// A database with every migration applied, made once and copied into
/// each month (creating one costs more than the rest of a month's first
/// run).
fn empty_db() -> &'static Path {
    static DB: std::sync::OnceLock<(tempfile::TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, path) = DB.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.db");
        // (made on disk once; each month copies it)
        drop(Store::connect(&Db::File(path.clone())).unwrap());
        (dir, path)
    });
    path
}

fn xof_sum(lines: &[Line]) -> i64 {
    lines
        .iter()
        .map(|l| match l {
            Line::Pay { person, amount, .. } if PEOPLE[*person].1 == "XOF" => *amount,
            _ => 0,
        })
        .sum()
}

/// What a crash keeps: the database's committed state at that instant
/// (copied by SQLite, which reads only what was committed) and the other
/// files of the folder as they were (report, `failed.csv`, approval pages).
struct Kept {
    db: PathBuf,
    files: BTreeMap<std::ffi::OsString, Vec<u8>>,
}

impl Kept {
    fn is_db(name: &std::ffi::OsStr, db: &Path) -> bool {
        name.to_string_lossy()
            .starts_with(&*db.file_name().unwrap().to_string_lossy())
    }

    fn files(dir: &Path, db: &Path) -> Vec<(std::ffi::OsString, PathBuf)> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(Result::unwrap)
            .filter(|e| e.file_type().unwrap().is_file() && !Self::is_db(&e.file_name(), db))
            .map(|e| (e.file_name(), e.path()))
            .collect()
    }

    fn take(dir: &Path, db: &Path) -> Kept {
        let copy = db.with_file_name(format!(
            "{}.kept",
            db.file_name().unwrap().to_string_lossy()
        ));
        let _ = std::fs::remove_file(&copy);
        let conn = rusqlite::Connection::open(db).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        conn.execute("VACUUM INTO ?1", [copy.to_str().unwrap()])
            .unwrap();
        let files = Self::files(dir, db)
            .into_iter()
            .map(|(name, path)| (name, std::fs::read(path).unwrap()))
            .collect();
        Kept { db: copy, files }
    }

    /// The folder as the crash left it; called once the run is over.
    fn restore(self, dir: &Path, db: &Path) {
        for (name, path) in Self::files(dir, db) {
            match self.files.get(&name) {
                Some(bytes) if *bytes == std::fs::read(&path).unwrap() => {}
                Some(bytes) => std::fs::write(&path, bytes).unwrap(),
                None => std::fs::remove_file(&path).unwrap(),
            }
        }
        for name in self.files.keys() {
            let path = dir.join(name);
            if !path.exists() {
                std::fs::write(&path, &self.files[name]).unwrap();
            }
        }
        for ext in ["-wal", "-shm"] {
            let side = db.with_file_name(format!(
                "{}{ext}",
                db.file_name().unwrap().to_string_lossy()
            ));
            let _ = std::fs::remove_file(side);
        }
        std::fs::rename(&self.db, db).unwrap();
    }
}

/// One whole month of `steps` random steps, checked after each and closed,
/// played on threads named `scope` (this one) and `scope-rt`; a month of
/// real kills with probability `real_kills`.
pub fn month(
    seed: u64,
    steps: usize,
    scope: &str,
    real_kills: f64,
) -> Result<(), (String, Vec<String>)> {
    let mut m = Month::new(seed, scope, real_kills);
    for _ in 0..steps {
        let t = std::time::Instant::now();
        m.step();
        if std::env::var("PAYRUN_MONTH_TIMES").is_ok() {
            eprintln!(
                "{:>6} ms {}",
                t.elapsed().as_millis(),
                m.log.last().unwrap()
            );
        }
        if let Err(e) = m.check(false) {
            return Err((e, m.log));
        }
    }
    let t = std::time::Instant::now();
    let before = m.log.len();
    m.close();
    if std::env::var("PAYRUN_MONTH_TIMES").is_ok() {
        let runs = m.log[before..]
            .iter()
            .filter(|l| l.starts_with("run "))
            .count();
        eprintln!(
            "{:>6} ms closing: {runs} runs, {} steps",
            t.elapsed().as_millis(),
            m.log.len() - before
        );
        for l in &m.log[before..] {
            eprintln!("         {}", l.chars().take(200).collect::<String>());
        }
    }
    m.check(true).map_err(|e| (e, m.log))
}
