//! `payrun approve RUN`: the second pair of eyes. Prints the figures the
//! approval page shows (the run, its file's SHA-256, its period and
//! preparer, the count and total per currency of the initiated payouts,
//! the digest of that set, the run's overrides, where its approval
//! stands), asks for confirmation on a terminal (`--yes` for scripts),
//! and records the approval in the checkpoint (`signoff::record`);
//! `--revoke` withdraws it. Also the lines `payrun run` prints about an
//! approval, so both commands word it alike.

use crate::config::Config;
use crate::engine::gate::Unapproved;
use crate::exit::Exit;
use crate::signoff::{self, Facts, Standing, record};
use crate::store::ApprovalEvent;
use crate::who::Person;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::APPROVE)]
pub struct ApproveArgs {
    /// The run to approve (`payrun status` lists them).
    pub run: i64,
    /// Your name, recorded as the approver (default: your OS account). It
    /// must differ from the run's preparer's.
    #[arg(long = "as", value_name = "NAME")]
    pub as_name: Option<String>,
    /// Record without asking (for scripts); the figures are printed all
    /// the same. Without a terminal to ask on, --yes is required.
    #[arg(long)]
    pub yes: bool,
    /// Withdraw the run's approval (recorded beside it, never deleted).
    #[arg(long)]
    pub revoke: bool,
    /// Why the approval is withdrawn (recorded).
    #[arg(long, requires = "revoke")]
    pub reason: Option<String>,
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else payrun.db in the per-user
    /// data folder].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The database of `payrun run --sandbox`.
    #[arg(long, conflicts_with = "db")]
    pub sandbox: bool,
    /// Config file (default: ./payrun.toml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn command(args: ApproveArgs) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let db = super::db::resolve(args.db.as_deref(), &cfg, args.sandbox)?;
    // No run lock: approving writes its own rows only, and a run waiting
    // for the approval may hold the lock.
    let mut store = super::db::open_existing(&db, "pass --db")?;
    let facts = signoff::facts(&store, args.run)?
        .with_context(|| format!("no run {} in {db}", args.run))?;
    let by = Person::current(args.as_name.as_deref());
    let language = cfg.language();
    let t = language.text();
    let mut out = std::io::stdout().lock();
    for line in facts_lines(&facts, language) {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if args.revoke {
        let reason = args.reason.as_deref().unwrap_or("");
        return match record::revoke(&mut store, &facts, &by, reason)? {
            Ok(e) => {
                writeln!(
                    out,
                    "{}",
                    (t.approval_withdrawn)(facts.run.id, &e.by.shown(), &e.at)
                )?;
                Ok(Exit::Ok)
            }
            Err(refusal) => refuse(&refusal.describe_in(language)),
        };
    }
    match record::check_approvable(&facts, &by) {
        Err(refusal) => return refuse(&refusal.describe_in(language)),
        Ok(false) => {
            writeln!(out, "{}", (t.approved_already)(facts.run.id))?;
            return Ok(Exit::Ok);
        }
        Ok(true) => {}
    }
    if !args.yes && !confirmed(&facts, &by, t)? {
        return refuse(t.nothing_recorded);
    }
    match record::approve(&mut store, &facts, &by)? {
        Ok(e) => {
            writeln!(
                out,
                "{}",
                (t.approved_now)(
                    facts.run.id,
                    &e.by.shown(),
                    &e.at,
                    e.payouts,
                    signoff::short(&e.digest),
                    &facts.run.file_path
                )
            )?;
            Ok(Exit::Ok)
        }
        Err(refusal) => refuse(&refusal.describe_in(language)),
    }
}

fn refuse(why: &str) -> Result<Exit> {
    eprintln!("payrun: {why}");
    Ok(Exit::Fatal)
}

/// Asks on the terminal; without one, refuses (a script must say --yes).
fn confirmed(facts: &Facts, by: &Person, t: &crate::lang::Text) -> Result<bool> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        bail!("{}", (t.no_terminal)(facts.run.id, &by.shown()));
    }
    eprint!("{}", (t.confirm_approve)(facts.run.id, &by.shown()));
    std::io::stderr().flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_lowercase().as_str(),
        "yes" | "y" | "oui"
    ))
}

/// What the approver reads: the run, the set to approve, the overrides,
/// where the approval stands, in `language`.
pub fn facts_lines(f: &Facts, language: crate::lang::Language) -> Vec<String> {
    let t = language.text();
    let run = &f.run;
    let period = if run.period.is_empty() {
        "-"
    } else {
        &run.period
    };
    let mut out = vec![(t.facts_run)(
        run.id,
        &run.file_path,
        period,
        &run.created_at,
    )];
    out.push((t.facts_sha)(&run.file_sha256));
    out.push(match &f.preparer {
        Some(p) => (t.facts_prepared)(&p.person.shown(), &p.at),
        None => t.facts_prepared_unknown.to_string(),
    });
    out.push((t.facts_initiated)(
        f.set.payouts,
        signoff::short(&f.set.digest),
        f.set.not_initiated,
    ));
    for (cur, x) in &f.set.figures {
        out.push((t.facts_currency)(
            cur,
            x.count,
            &language.amount(&x.total.to_string()),
        ));
    }
    for o in &f.overrides {
        out.push(format!("  {}", (t.note)(&o.describe_in(language))));
    }
    out.push(format!(
        "  {}{}",
        t.summary_approval,
        f.standing.describe_in(language)
    ));
    out
}

/// `payrun run`'s line when the approval holds.
pub fn approved_line(a: &ApprovalEvent, language: crate::lang::Language) -> String {
    (language.text().approved_executing)(
        a.run_id,
        &a.by.shown(),
        &a.at,
        a.payouts,
        signoff::short(&a.digest),
    )
}

/// `payrun run`'s explanation when no approval holds: what is missing
/// and what to do.
pub fn unapproved_line(u: &Unapproved, language: crate::lang::Language) -> String {
    (language.text().nothing_executed)(&unapproved_what(u, language))
}

/// [`unapproved_line`] without its "nothing was executed" (a run that
/// waits for the approval says it waits instead).
pub fn unapproved_what(u: &Unapproved, language: crate::lang::Language) -> String {
    let t = language.text();
    let who = (t.someone_else)(
        &u.preparer
            .as_ref()
            .map(|p| p.person.shown())
            .unwrap_or_default(),
    );
    let approve = format!("`payrun approve {} --as NAME`", u.run_id);
    match &u.standing {
        Standing::NotApproved if u.not_initiated > 0 => {
            (t.unapproved_not_initiated)(u.run_id, u.not_initiated, &u.file_path, &who, &approve)
        }
        Standing::NotApproved => (t.unapproved_plain)(u.run_id, &who, &approve),
        other => (t.unapproved_again)(u.run_id, &other.describe_in(language), &approve),
    }
}

/// Test hook: how often a waiting run checks for an approval, in
/// milliseconds (default `engine::gate::DEFAULT_POLL`). The tests shorten
/// it; real runs keep the default.
const POLL_ENV: &str = "PAYRUN_APPROVAL_POLL_MS";

/// The gate of `payrun run`: `require_approval`, `on_unapproved` (by
/// default: wait on PostgreSQL, where the approver works from another
/// desk while workers wait; exit on a file), and the poll interval.
pub fn gate(cfg: &Config, db: &crate::store::Db) -> Result<crate::engine::gate::Gate> {
    use crate::config::OnUnapproved;
    let wait = match cfg.on_unapproved {
        Some(OnUnapproved::Wait) => true,
        Some(OnUnapproved::Exit) => false,
        None => matches!(db, crate::store::Db::Postgres(_)),
    };
    let poll = match std::env::var(POLL_ENV) {
        Err(_) => crate::engine::gate::DEFAULT_POLL,
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(ms) if ms >= 1 => std::time::Duration::from_millis(ms),
            _ => bail!("{POLL_ENV}={v:?} is not a whole number of milliseconds of at least 1"),
        },
    };
    Ok(crate::engine::gate::Gate {
        required: cfg.require_approval(),
        wait,
        poll,
    })
}
