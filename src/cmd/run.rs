//! `payrun run`: resolves the flags and `payrun.toml` into
//! [`engine::Settings`], watches for Ctrl-C and SIGTERM, runs the engine,
//! and shows its outcome: messages on stderr, the summary, the exit code.

use super::finish::{JsonLines, Say, deliver, result_json};
use super::{LogFormat, Signals, Threads, init_logging, runtime};
use crate::config::{Ambiguous, Config, DEFAULT_REPORT, RateSetting, parse_concurrency_flag};
use crate::engine::retry::Backoff;
use crate::engine::{
    self, ApiKey, EngineOptions, Event, ProgressTarget, ProviderChoice, RunOutcome, Settings, Stop,
};
use crate::exit::Exit;
use crate::machine::State;
use crate::shutdown::{self, Shutdown};
use anyhow::{Context, Result};
use serde_json::Value;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Every async task on the main thread (tokio's current-thread runtime):
/// the engine's async side is I/O and JSON, which one core drives at tens
/// of thousands of calls/s, and validation and the database writer have
/// threads of their own. A worker thread beside the main one only added
/// wake-ups between the two: a quarter more CPU per call, and in the
/// limit-drop benchmark it followed the new limit no more closely
/// (docs/PERFORMANCE.md, "Cost per call").
const RUN_THREADS: Threads = Threads::Caller;

/// Test hook: the retry backoff base in milliseconds (cap 50 × base). Read
/// once here, at the edge, into [`EngineOptions::backoff`]; the library
/// never reads the environment. The end-to-end tests set it so that no
/// test waits on real backoff. Not a user setting: real runs keep the
/// defaults, chosen for real providers.
const BACKOFF_ENV: &str = "PAYRUN_BACKOFF_MS";

/// How long a worker's heartbeat vouches for it on a run shared through
/// PostgreSQL, in milliseconds (default `engine::lease::DEFAULT_LEASE`).
/// Read once here, at the edge, into [`EngineOptions::lease`]; the tests
/// shorten it so that a killed worker's payouts are adopted quickly.
const LEASE_ENV: &str = "PAYRUN_LEASE_MS";

/// `PAYRUN_LEASE_MS`, for `run` and `status`.
pub fn lease_from_env() -> Result<std::time::Duration> {
    match std::env::var(LEASE_ENV) {
        Err(_) => Ok(engine::lease::DEFAULT_LEASE),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if ms >= 30 => Ok(std::time::Duration::from_millis(ms)),
            _ => anyhow::bail!(
                "{LEASE_ENV}={v:?} is not a whole number of milliseconds of at least 30"
            ),
        },
    }
}

/// Test hook: the deadline of one provider call in milliseconds (default
/// `provider::REQUEST_TIMEOUT`). The tests shorten it together with the
/// lease, which must outlast it; real runs keep the default.
const REQUEST_TIMEOUT_ENV: &str = "PAYRUN_REQUEST_TIMEOUT_MS";

/// The lease terms of this machine's workers (`PAYRUN_LEASE_MS`, the
/// request deadline), for the commands that must wait for them.
pub fn lease_terms_from_env() -> Result<crate::store::LeaseTerms> {
    Ok(crate::store::LeaseTerms {
        lease: lease_from_env()?,
        deadline: request_deadline_from_env()?,
    })
}

fn request_deadline_from_env() -> Result<std::time::Duration> {
    match std::env::var(REQUEST_TIMEOUT_ENV) {
        Err(_) => Ok(crate::provider::REQUEST_TIMEOUT),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if ms >= 1 => Ok(std::time::Duration::from_millis(ms)),
            _ => anyhow::bail!(
                "{REQUEST_TIMEOUT_ENV}={v:?} is not a whole number of milliseconds of at least 1"
            ),
        },
    }
}

fn backoff_from_env() -> Result<Backoff> {
    match std::env::var(BACKOFF_ENV) {
        Err(_) => Ok(Backoff::default()),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(Backoff::from_base_ms)
            .with_context(|| format!("{BACKOFF_ENV}={v:?} is not a whole number of milliseconds")),
    }
}

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::RUN)]
pub struct RunArgs {
    /// The payroll file (CSV, or a workbook where supported).
    pub file: PathBuf,
    /// Config file (default: ./payrun.toml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The provider's base URL (overrides `base_url` in the config).
    #[arg(long)]
    pub base_url: Option<String>,
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else
    /// payrun.db (payrun-sandbox.db with --sandbox) in the per-user data
    /// folder, e.g. ~/.local/share/payrun/].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Where to write the report; `rejected.csv` and `PATH.summary.csv` go beside it.
    #[arg(long, default_value = DEFAULT_REPORT)]
    pub report: PathBuf,
    /// Provider calls per second: `auto` (find the provider's limit) or a
    /// fixed cap such as 40 (overrides `rate`).
    #[arg(long, value_name = "auto|N")]
    pub rate: Option<RateSetting>,
    /// Most calls in flight, however slow the provider (overrides
    /// `max_concurrency`).
    #[arg(long, value_name = "N", value_parser = parse_concurrency_flag)]
    pub max_concurrency: Option<usize>,
    /// Older name of `--max-concurrency` (overrides `concurrency`).
    #[arg(long, value_name = "N", value_parser = parse_concurrency_flag)]
    pub concurrency: Option<usize>,
    /// What to do with payouts whose execution outcome is unknown (overrides `ambiguous`).
    #[arg(long, value_enum)]
    pub ambiguous: Option<Ambiguous>,
    /// With `--ambiguous resend`: milliseconds between an execute's unknown
    /// outcome and its one re-send (tests shorten it).
    #[arg(long, hide = true)]
    pub resend_delay_ms: Option<u64>,
    /// Stop after initiation (no money moves) and print the totals for approval.
    #[arg(long)]
    pub initiate_only: bool,
    /// Execute only if the initiated payouts add up to CUR=AMOUNT (as
    /// approved from `approval-run-N.csv`); repeat per currency. Nothing is sent
    /// otherwise.
    #[arg(long, value_name = "CUR=AMOUNT", value_parser = engine::approval::parse_expected, conflicts_with = "initiate_only")]
    pub expect_total: Vec<(String, rust_decimal::Decimal)>,
    /// Validate and record the file in the database, send nothing.
    #[arg(long, conflicts_with = "initiate_only")]
    pub import_only: bool,
    /// Run against the built-in provider simulator, started in-process.
    #[arg(long)]
    pub sandbox: bool,
    /// A label distinguishing two batches of the same period (part of every
    /// derived transaction id, like --period).
    #[arg(long, default_value = "")]
    pub label: String,
    /// The batch/period reference rows are paid under (overrides `period`;
    /// default: the current month, YYYY-MM). A new period pays the same
    /// rows again; the same period recognises rows already paid.
    #[arg(long)]
    pub period: Option<String>,
    /// Pay rows the repeat guard stopped — a person already paid (or being
    /// paid) in the period, the same amount paid recently, an identical row
    /// of the file — after a human has checked them. Each such second
    /// payment is recorded in the audit trail and shown on the approval page.
    #[arg(long)]
    pub allow_repeats: bool,
    /// Go ahead although rows of the file are payouts still open in an
    /// unfinished run (they are left to that run), or although an
    /// unfinished run of the old identity scheme has a file of this name.
    #[arg(long)]
    pub new_run: bool,
    /// Worksheet to read, for workbook input.
    #[arg(long)]
    pub sheet: Option<String>,
    /// Leave out rows hidden or filtered out in the workbook (listed as
    /// skipped) instead of refusing the file.
    #[arg(long)]
    pub skip_hidden_rows: bool,
    /// Read an .xls or .xlsb workbook, whose hidden or filtered rows payrun
    /// cannot detect, after checking that none is hidden (refused otherwise).
    #[arg(long)]
    pub assume_no_hidden_rows: bool,
    /// Your name, recorded as the preparer of a run this command imports
    /// (default: your OS account); the preparer may not approve it.
    #[arg(long = "as", value_name = "NAME")]
    pub as_name: Option<String>,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// Log line format on stderr.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// Flags over `payrun.toml` over defaults, once.
pub fn settings(args: &RunArgs, cfg: Config) -> Result<Settings> {
    let provider = if args.sandbox {
        ProviderChoice::Sandbox
    } else {
        let base_url = args.base_url.clone().or(cfg.base_url.clone()).context(
            "no provider URL: pass --base-url, set base_url in payrun.toml, or use --sandbox",
        )?;
        // Read when the run has a call to make: `--import-only`, or a
        // finished run run again, sends nothing and needs no key.
        let key_cfg = cfg.clone();
        let say = Say {
            json: args.log_format == LogFormat::Json,
        };
        let api_key = ApiKey::later(move || super::api_key_warning_with(&key_cfg, |w| say.warn(w)));
        ProviderChoice::Remote { base_url, api_key }
    };
    let db = super::db::resolve(args.db.as_deref(), &cfg, args.sandbox)?;
    if args.sandbox && matches!(db, crate::store::Db::Postgres(_)) {
        anyhow::bail!(engine::SANDBOX_NEEDS_A_FILE);
    }
    let (period, period_given) = match args.period.as_ref().or(cfg.period.as_ref()) {
        Some(p) => (engine::identity::check_period(p)?, true),
        None => (
            engine::identity::default_period(std::time::SystemTime::now()),
            false,
        ),
    };
    let gate = super::approve::gate(&cfg, &db)?;
    Ok(Settings {
        gate,
        period,
        period_given,
        allow_repeats: args.allow_repeats,
        repeat_window_days: cfg.repeat_window_days(),
        file: args.file.clone(),
        provider,
        db,
        report: args.report.clone(),
        label: args.label.clone(),
        new_run: args.new_run,
        sheet: args.sheet.clone(),
        skip_hidden_rows: args.skip_hidden_rows,
        assume_no_hidden_rows: args.assume_no_hidden_rows,
        import_only: args.import_only,
        expect_total: args.expect_total.clone(),
        preparer: crate::who::Person::current(args.as_name.as_deref()),
        engine: EngineOptions {
            rate: match args.rate {
                None => cfg.rate_mode(),
                Some(RateSetting::Fixed(n)) => crate::limiter::RateMode::Fixed(n),
                Some(RateSetting::Auto) => crate::limiter::RateMode::Auto {
                    ceiling: cfg.max_rate,
                },
            },
            max_concurrency: args
                .max_concurrency
                .or(args.concurrency)
                .unwrap_or(cfg.max_concurrency()),
            ambiguous: args.ambiguous.unwrap_or(cfg.ambiguous()),
            initiate_only: args.initiate_only,
            max_attempts_total: cfg.max_attempts_total(),
            resend_delay: args.resend_delay_ms.map_or(
                engine::DEFAULT_RESEND_DELAY,
                std::time::Duration::from_millis,
            ),
            backoff: backoff_from_env()?,
            lease: lease_from_env()?,
            request_deadline: request_deadline_from_env()?,
            language: cfg.language(),
        },
        config: cfg,
    })
}

pub fn command(args: RunArgs) -> Result<Exit> {
    init_logging(args.log_format, "warn");
    let cfg = Config::load(args.config.as_deref())?;
    let on_finish = cfg.on_finish.clone();
    let rt = runtime(RUN_THREADS)?;
    let say = Say {
        json: args.log_format == LogFormat::Json,
    };
    rt.block_on(async {
        let settings = settings(&args, cfg)?;
        let bars = !args.quiet && !say.json && std::io::stderr().is_terminal();
        // With bars, the bars' last line shows the stop notice (a line
        // printed under them would be painted over).
        let language = settings.config.language();
        let shutdown = watch_signals(args.quiet || bars, say, language)?;
        let progress = if args.quiet {
            ProgressTarget::Hidden
        } else if say.json {
            ProgressTarget::Lines(Box::new(JsonLines::new()))
        } else if std::io::stderr().is_terminal() {
            ProgressTarget::Bars(indicatif::ProgressDrawTarget::stderr())
        } else {
            ProgressTarget::Lines(Box::new(std::io::stderr()))
        };
        let quiet = args.quiet;
        let notify = move |e: Event| {
            // Waiting for an approval is said even with --quiet: a cron
            // mail must tell why nothing moves.
            if !quiet || matches!(e, Event::AwaitingApproval(_)) {
                show_event(&e, say, language)
            }
        };
        let outcome = engine::run(&settings, progress, shutdown, &notify).await?;
        let (exit, result) = show_outcome(
            outcome,
            args.quiet,
            say,
            &args.file,
            language,
            &settings.period,
        );
        if let Some(result) = result {
            if say.json {
                eprintln!("{result}");
            }
            if let Some(target) = &on_finish
                && let Err(e) = deliver(target, &result).await
            {
                say.warn(&format!("{e:#}"));
            }
        }
        Ok(exit)
    })
}

/// How long a stopping run may finish its calls in flight before the
/// process quits anyway: under systemd's default 90 s before SIGKILL (give
/// `docker stop` `-t 40`: its default is 10 s), yet long enough for a
/// provider call with its retries to end. Quitting then is as safe as a
/// crash (every intent is committed before its request leaves).
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// The first Ctrl-C (or SIGTERM) asks the engine to stop after the calls in
/// flight; a second Ctrl-C quits at once. That is as safe as a crash: every
/// intent is committed before its request leaves, and the next run resumes.
fn watch_signals(quiet: bool, say: Say, language: crate::lang::Language) -> Result<Shutdown> {
    let t = language.text();
    let (trigger, shutdown) = shutdown::channel();
    let mut signals = Signals::install()?;
    tokio::spawn(async move {
        signals.stop_requested().await;
        if !quiet {
            say.info(t.stopping_after_flight);
        }
        trigger.fire();
        tokio::select! {
            _ = signals.interrupted() => {
                say.warn(t.quitting_now);
            }
            _ = tokio::time::sleep(STOP_GRACE) => {
                say.warn(&(t.still_in_flight)(STOP_GRACE.as_secs()));
            }
        }
        std::process::exit(Exit::Fatal.code());
    });
    Ok(shutdown)
}

fn show_event(e: &Event, say: Say, language: crate::lang::Language) {
    let t = language.text();
    match e {
        Event::SandboxStarted(url) => say.info(&(t.sandbox_started)(url)),
        Event::Joined {
            run_id,
            worker,
            lease,
        } => say.info(&(t.joined)(*run_id, *worker, lease.as_millis())),
        Event::Resuming {
            run_id,
            file_path,
            created_at,
        } => say.info(&(t.resuming)(*run_id, file_path, created_at)),
        Event::Approved(a) => say.info(&super::approve::approved_line(a, language)),
        Event::AwaitingApproval(u) => say.warn(&(t.waiting_for_approval)(
            &super::approve::unapproved_what(u, language),
        )),
        Event::Settling(p) => say.info(&super::reconcile::settling_line_in(p, language)),
        Event::Importing { file } => say.info(&(t.importing)(file)),
        Event::Imported { payouts, elapsed } => {
            let secs = format!("{:.1}", elapsed.as_secs_f64());
            let secs = match language {
                crate::lang::Language::Fr => secs.replace('.', ","),
                crate::lang::Language::En => secs,
            };
            say.info(&(t.imported)(*payouts, &secs))
        }
        Event::WritingReport { path } => say.info(&(t.writing_report)(&path.display().to_string())),
        Event::Skipped { rows } => say.info(&(t.skipped)(*rows)),
    }
}

/// The rate payrun settled on, the 429s and the latency, in whole numbers,
/// so an operator can choose a fixed rate for next time. Without a single
/// 429 the run never met a limit: it says so, with the peak it reached,
/// rather than a "settled" rate that is only where it stopped climbing.
fn show_rate(s: &crate::limiter::LimiterStats, language: crate::lang::Language) {
    let t = language.text();
    eprintln!("{}", rate_line(s, t));
}

/// [`show_rate`]'s line: the provider's latency (the HTTP call itself)
/// and the queue wait (for the rate, a place in flight, a shared slot)
/// apart, so a tight rate is not read as a slow provider.
fn rate_line(s: &crate::limiter::LimiterStats, t: &crate::lang::Text) -> String {
    use crate::limiter::millis;
    let latency = (t.latency)(&millis(s.provider_latency), &millis(s.queue_wait));
    if s.rate_limited == 0 {
        let peak = s.peak.or(s.delivered).unwrap_or(s.rate);
        return (t.rate_no_limit)(peak.round() as u64, &latency);
    }
    (t.rate_settled)(
        s.rate.round() as u64,
        s.rate_limited,
        s.congestion_events,
        &latency,
    )
}

/// Shows how the run ended and chooses the exit code; returns the
/// run-result object when the run sent requests. The verdict is shown even
/// with `--quiet` (which hides progress only): a cron mail must say what
/// to do.
fn show_outcome(
    outcome: RunOutcome,
    quiet: bool,
    say: Say,
    file: &Path,
    language: crate::lang::Language,
    period: &str,
) -> (Exit, Option<Value>) {
    let t = language.text();
    let ran = match outcome {
        RunOutcome::Rejected(r) => {
            for e in r.first_errors.iter() {
                say.warn(&format!("  {e}"));
            }
            say.warn(&(t.rejected_nothing_sent)(
                r.rejected,
                r.rows,
                &r.rejected_path.display().to_string(),
            ));
            return (Exit::Invalid, None);
        }
        RunOutcome::DuplicateIds(lines) => {
            for line in &lines {
                say.warn(&format!("  {line}"));
            }
            say.warn(t.ids_used);
            return (Exit::Invalid, None);
        }
        RunOutcome::Repeats(r) => {
            for line in &r.listed {
                eprintln!("  {line}");
            }
            if r.total > r.listed.len() as u64 {
                eprintln!("  {}", (t.and_more)(r.total - r.listed.len() as u64));
            }
            eprintln!(
                "payrun: {}",
                (t.repeats_found)(r.total, &(t.repeats_what_to_do)(period))
            );
            return (Exit::Invalid, None);
        }
        RunOutcome::NotFailed(r) => {
            for line in &r.listed {
                eprintln!("  {line}");
            }
            if r.total > r.listed.len() as u64 {
                eprintln!("  {}", (t.and_more)(r.total - r.listed.len() as u64));
            }
            eprintln!("payrun: {}", (t.not_failed_rows)(r.total));
            return (Exit::Invalid, None);
        }
        RunOutcome::Imported {
            run_id,
            payouts,
            file_path,
        } => {
            say.info(&(t.import_only_done)(run_id, payouts, &file_path));
            return (Exit::Ok, None);
        }
        RunOutcome::TotalsRefused(why) => {
            say.warn(&(t.nothing_executed)(&why.to_string()));
            return (Exit::Fatal, None);
        }
        RunOutcome::Unapproved(u) => {
            say.warn(&super::approve::unapproved_line(&u, language));
            return (Exit::Fatal, None);
        }
        RunOutcome::Ran(ran) => ran,
    };
    // What the run was allowed beyond the rules: shown even with --quiet.
    for line in ran.overrides.lines_in(language) {
        say.info(&(t.note)(&line));
    }
    if !quiet && !say.json {
        super::report::show_summary(&ran.totals, language);
        if let Some(stats) = &ran.limiter {
            show_rate(stats, language);
        }
        eprintln!("{}", (t.report_line)(&ran.report.display().to_string()));
        if let Some(f) = &ran.failed {
            eprintln!("{}", (t.failed_line)(&f.display().to_string()));
        }
    }
    let exit = match &ran.stop {
        Some(Stop::Unauthorized(msg)) => {
            say.warn(&(t.stop_unauthorized)(msg, ran.run_id));
            Exit::Fatal
        }
        Some(Stop::Interrupted) => {
            say.warn(t.stop_interrupted);
            Exit::Fatal
        }
        Some(Stop::Unreachable(msg)) => {
            say.warn(&(t.stop_unreachable)(msg));
            Exit::Fatal
        }
        Some(Stop::Config(msg)) => {
            say.warn(&(t.stop_config)(msg));
            Exit::Fatal
        }
        Some(Stop::LeaseLost(msg)) => {
            say.warn(&(t.stop_lease)(msg));
            Exit::Fatal
        }
        None => Exit::complete_if(ran.complete()),
    };
    if let (true, Some((path, control))) = (ran.initiate_only, &ran.approval) {
        // The control totals are the point of --initiate-only: shown even
        // with --quiet.
        say.info(&(t.control_totals)(&path.display().to_string()));
        let mut flags = Vec::new();
        for (cur, x) in control {
            let total = language.amount(&x.total.to_string());
            let line = (t.payouts_total)(x.count, &total, "");
            say.info(&format!("  {cur}: {}", line.trim_end()));
            flags.push(format!("--expect-total {cur}={}", x.total));
        }
        say.info(&(t.approval_page_at)(
            ran.run_id,
            &engine::outputs::approval_page(&ran.report, ran.run_id)
                .display()
                .to_string(),
        ));
        say.info(&(t.initiation_done)(
            ran.count(State::Initiated),
            &flags.join(" "),
        ));
        if let Some(s) = ran.signoff.as_ref().filter(|s| !s.is_approved()) {
            say.info(&(t.approval_needed)(&s.describe_in(language), ran.run_id));
        }
    }
    let processing = ran.count(State::Processing);
    if processing > 0 {
        say.info(&(t.processing_left)(processing));
    }
    let report = ran.report.display().to_string();
    for line in ran.verdict.advice_in(ran.run_id, &report, language) {
        say.info(&format!("{}{line}", t.next));
    }
    let result = result_json(&ran, file, exit);
    (exit, Some(result))
}
