//! `payrun summary`: a run at a glance for whoever approves it — counts and
//! totals per currency on standard output, and with `--html FILE` the
//! printable approval page (`report::html`).

use crate::config::Config;
use crate::exit::Exit;
use crate::report::{guard, html};
use crate::store::Store;
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::SUMMARY)]
pub struct SummaryArgs {
    /// The run (default: the latest).
    pub run: Option<i64>,
    /// Write the approval page (self-contained HTML, printable) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else
    /// payrun.db (payrun-sandbox.db with --sandbox) in the per-user data folder].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// The database of `payrun run --sandbox`.
    #[arg(long, conflicts_with = "db")]
    pub sandbox: bool,
}

pub fn command(args: SummaryArgs) -> Result<Exit> {
    let cfg = Config::load(None)?;
    let db = super::db::resolve(args.db.as_deref(), &cfg, args.sandbox)?;
    if let Some(path) = db.file()
        && !path.exists()
    {
        bail!("no database at {}; pass --db", path.display());
    }
    let mut files = guard::Files::new();
    files.config(&cfg).checkpoint(&db);
    if let Some(page) = &args.html {
        files.output("approval page", page).check()?;
    }
    let store = Store::connect(&db)?;
    let run = match args.run {
        Some(id) => id,
        None => {
            store
                .latest_run()?
                .with_context(|| format!("no runs in {db}"))?
                .id
        }
    };
    let language = cfg.language();
    let t = language.text();
    let page =
        html::gather(&store, run, language)?.with_context(|| format!("no run {run} in {db}"))?;
    // The run's payroll too, now that the run is known (by its path as
    // recorded, and by its bytes from any folder).
    if args.html.is_some() {
        files.payroll_of(&page.run).check()?;
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}",
        (t.summary_run)(
            page.run.id,
            &page.run.file_path,
            &page.run.file_sha256,
            page.run.rows_total,
            page.run.rows_rejected
        )
    )?;
    for (currency, states) in &page.totals {
        let count: u64 = states.values().map(|t| t.count).sum();
        let total: rust_decimal::Decimal = states.values().map(|t| t.total).sum();
        let total = language.amount(&total.to_string());
        // `XOF: 3 payout(s), total 6,091,999 XOF` without the last code.
        let line = (t.payouts_total)(count, &total, "");
        writeln!(out, "  {currency}: {}", line.trim_end())?;
    }
    for n in &page.notices {
        writeln!(out, "  {}{n}", t.summary_notice)?;
    }
    if let Some(f) = &page.approval {
        let standing = f.standing.describe_in(language);
        writeln!(out, "  {}{standing}", t.summary_approval)?;
    }
    out.flush()?;
    if let Some(path) = &args.html {
        html::write_approval(&store, run, path, language)?;
        eprintln!("{}", (t.approval_page_at)(run, &path.display().to_string()));
    }
    Ok(Exit::Ok)
}
