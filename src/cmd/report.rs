//! `payrun report`: writes the report of a run again from the database,
//! and the per-currency summary shown at the end of `run` and `report`.

use crate::config::Config;
use crate::exit::Exit;
use crate::report::write_report_styled;
use crate::store::Totals;
use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::REPORT)]
pub struct ReportArgs {
    /// The checkpoint database, a file or a postgres:// connection string
    /// [default: `database` in payrun.toml, else
    /// payrun.db in the per-user data folder, e.g. ~/.local/share/payrun/].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Use the built-in sandbox's database (payrun-sandbox.db) by default.
    #[arg(long)]
    pub sandbox: bool,
    /// The run (default: the latest).
    #[arg(long)]
    pub run: Option<i64>,
    /// Where to write the report (`PATH.summary.csv` goes beside it).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn command(args: ReportArgs) -> Result<Exit> {
    let cfg = Config::load(None)?;
    let db = super::db::resolve(args.db.as_deref(), &cfg, args.sandbox)?;
    let summary = crate::report::summary_path(&args.out);
    let mut files = crate::report::guard::Files::new();
    files
        .config(&cfg)
        .checkpoint(&db)
        .output("report", &args.out)
        .output("summary", &summary);
    files.check()?;
    let store = super::db::open_existing(&db, "pass --db")?;
    let run = match args.run {
        Some(id) => store
            .run(id)?
            .with_context(|| format!("no run {id} in {db}"))?,
        None => store
            .latest_run()?
            .with_context(|| format!("no runs in {db}"))?,
    };
    // The run's payroll too, now that the run is known (by its path as
    // recorded, and by its bytes from any folder).
    files.payroll_of(&run).check()?;
    // The run's recorded conventions (delimiter, BOM, language), if any.
    let style = match store.report_target(run.id)? {
        Some(t) => crate::report::ReportStyle {
            delimiter: t.delimiter,
            bom: t.bom,
            language: crate::report::style::language_from_name(&t.language),
        },
        None => crate::report::ReportStyle::default(),
    };
    let totals = write_report_styled(&store, run.id, &args.out, &style)?;
    show_summary(&totals, style.language);
    eprintln!("report of run {}: {}", run.id, args.out.display());
    Ok(Exit::Ok)
}

/// The per-currency summary, on stderr (stdout stays free for scripts).
pub fn show_summary(totals: &Totals, language: crate::lang::Language) {
    if totals.is_empty() {
        return;
    }
    let t = language.text();
    let [currency, state, count, total] = t.summary_header;
    eprintln!("{currency:<8} {state:<20} {count:>8} {total:>20}");
    for (currency, states) in totals {
        for (state, x) in states {
            eprintln!(
                "{:<8} {:<20} {:>8} {:>20}",
                currency,
                t.state(state.as_str()),
                x.count,
                language.amount(&x.total.to_string())
            );
        }
    }
}
