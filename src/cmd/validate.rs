//! `payrun validate`: checks a payroll file without sending anything and
//! prints a summary (text or JSON) of what would be paid and what is wrong.

use crate::config::Config;
use crate::exit::Exit;
use crate::validate::notice::SkippedBy;
use crate::validate::{FieldError, Line, RowOutcome, ScanOptions, Summary, scan};
use anyhow::Result;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::VALIDATE)]
pub struct ValidateArgs {
    /// The payroll file: CSV (`,` or `;`, UTF-8), or a workbook (.xlsx, .xls, .ods).
    pub file: PathBuf,
    /// Config file (default: ./payrun.toml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Write the rejected rows, as they came in plus a `reasons` column, to this file.
    #[arg(long, value_name = "PATH")]
    pub rejected: Option<PathBuf>,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Worksheet to read in a workbook (default: the first).
    #[arg(long, value_name = "NAME")]
    pub sheet: Option<String>,
    /// Leave out rows hidden or filtered out in the workbook (listed as
    /// skipped) instead of refusing the file.
    #[arg(long)]
    pub skip_hidden_rows: bool,
    /// Read an .xls or .xlsb workbook, whose hidden or filtered rows payrun
    /// cannot detect, after checking that none is hidden (refused otherwise).
    #[arg(long)]
    pub assume_no_hidden_rows: bool,
    /// Language of the summary and of the reasons, on screen and in the
    /// rejected file (default: the config's `language`, else English).
    #[arg(long, value_enum, value_name = "LANG")]
    pub lang: Option<crate::lang::Language>,
}

/// Rejected rows whose errors are printed; the rest are counted. A file
/// exported with a wrong column can reject every one of a million rows, and
/// the full list belongs in `--rejected`, not the terminal.
const MAX_SHOWN_ROWS: usize = 100;

/// The JSON output: the summary plus the errors of the first rejected rows.
#[derive(Serialize)]
struct JsonOutput<'a> {
    file: String,
    #[serde(flatten)]
    summary: &'a Summary,
    errors: &'a [FieldError],
    /// Rejected rows whose errors are not in `errors`.
    rejected_rows_not_shown: u64,
    rejected_file: Option<String>,
}

pub fn command(args: ValidateArgs) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let language = args.lang.unwrap_or(cfg.language());
    if let Some(rejected) = &args.rejected {
        crate::report::guard::Files::new()
            .input("payroll", &args.file)
            .config(&cfg)
            .output("rejected rows", rejected)
            .check()?;
    }
    let opts = ScanOptions {
        sheet: args.sheet.clone(),
        rejected_path: args.rejected.clone(),
        skip_hidden_rows: args.skip_hidden_rows,
        assume_no_hidden_rows: args.assume_no_hidden_rows,
        language,
    };
    let mut shown: Vec<FieldError> = Vec::new();
    let mut shown_rows = 0usize;
    let mut not_shown = 0u64;
    let summary = scan(&args.file, &cfg, &opts, |outcome| {
        if let RowOutcome::Rejected(r) = outcome {
            if shown_rows < MAX_SHOWN_ROWS {
                shown_rows += 1;
                shown.extend(r.errors.iter().cloned());
            } else {
                not_shown += 1;
            }
        }
        Ok(())
    })?;

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match args.format {
        Format::Json => {
            let json = JsonOutput {
                file: args.file.display().to_string(),
                summary: &summary,
                errors: &shown,
                rejected_rows_not_shown: not_shown,
                rejected_file: args.rejected.as_ref().map(|p| p.display().to_string()),
            };
            serde_json::to_writer_pretty(&mut out, &json)?;
            writeln!(out)?;
        }
        Format::Text => write_text(&mut out, &args, &summary, &shown, not_shown, language)?,
    }
    out.flush()?;
    Ok(if summary.rejected > 0 {
        Exit::Invalid
    } else {
        Exit::Ok
    })
}

fn write_text(
    out: &mut impl Write,
    args: &ValidateArgs,
    summary: &Summary,
    shown: &[FieldError],
    not_shown: u64,
    language: crate::lang::Language,
) -> Result<()> {
    let t = language.text();
    writeln!(
        out,
        "{}",
        (t.validate_head)(
            &args.file.display().to_string(),
            summary.rows,
            summary.valid,
            summary.rejected
        )
    )?;
    let mut lines: Vec<Line<'_>> = summary.notices.iter().map(Line::Note).collect();
    if !summary.unused_columns.is_empty() {
        lines.push(Line::NotRead(&summary.unused_columns));
    }
    if summary.skipped > 0 {
        lines.push(Line::Skipped {
            by: match (summary.skipped_hidden, summary.skipped) {
                (0, _) => SkippedBy::Rule,
                (h, s) if h == s => SkippedBy::Hidden,
                _ => SkippedBy::Both,
            },
            count: summary.skipped,
            rows: &summary.skipped_rows,
            more: summary.skipped > summary.skipped_rows.len() as u64,
        });
    }
    if summary.repeated > 0 {
        lines.push(Line::Repeated {
            pairs: &summary.repeated_rows,
            more: summary.repeated > summary.repeated_rows.len() as u64,
        });
    }
    for line in lines {
        writeln!(out, "{}", line.shown_in(language))?;
    }
    if !summary.currencies.is_empty() {
        writeln!(out, "\n{}", t.valid_per_currency)?;
        let [currency, rows, total] = t.valid_table_header;
        writeln!(out, "  {currency:<8} {rows:>9} {total:>20}")?;
        for (code, x) in &summary.currencies {
            let total = language.amount(&x.total.to_string());
            writeln!(out, "  {:<8} {:>9} {:>20}", code, x.count, total)?;
        }
    }
    if summary.rejected == 0 {
        writeln!(out, "\n{}", t.all_valid)?;
        if let Some(p) = &args.rejected {
            writeln!(
                out,
                "{}",
                (t.no_rejected_file)(&p.display().to_string(), p.exists())
            )?;
        }
        return Ok(());
    }
    writeln!(out, "\n{}", t.rejected_heading)?;
    for e in shown {
        writeln!(out, "  {}", e.shown_in(language))?;
    }
    if not_shown > 0 {
        writeln!(
            out,
            "  {}",
            (t.more_rejected)(not_shown, args.rejected.is_some())
        )?;
    }
    match &args.rejected {
        Some(p) => writeln!(out, "\n{}", (t.rejected_in_file)(&p.display().to_string()))?,
        None => writeln!(out, "\n{}", t.rejected_no_file)?,
    }
    Ok(())
}
