//! `payrun init`: getting started. Writes a commented `payrun.toml` and a
//! template payroll (CSV and `.xlsx`, English or French headers) into a
//! directory, never overwriting a file; or, given an existing payroll with
//! `--from`, the `payrun.toml` that reads it (its `[columns]` table, found
//! by the readers' own header matching), and prints that table.

use crate::config::ReportLanguage;
use crate::exit::Exit;
use crate::template;
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The files `payrun init` writes, in the target directory.
const CONFIG_FILE: &str = "payrun.toml";
const TEMPLATE_CSV: &str = "payroll-template.csv";
const TEMPLATE_XLSX: &str = "payroll-template.xlsx";

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::INIT)]
pub struct InitArgs {
    /// Language of the template and of everything payrun writes for people
    /// (the config's `language`; `fr` also sets `number_format = "fr"` and
    /// `default_currency = "XOF"`).
    #[arg(long, value_enum, default_value = "en")]
    pub lang: ReportLanguage,
    /// Write the payrun.toml that reads this payroll (its `[columns]`
    /// table) instead of a template, and print the table; with a
    /// payrun.toml already there, only print the table to paste.
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Worksheet to read, with --from on a workbook.
    #[arg(long, requires = "from")]
    pub sheet: Option<String>,
    /// Where to write the files.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
}

/// Writes a new file at `path` (noted in `created` once made), synced;
/// never one that exists (`create_new`: a file that appeared since the
/// check is not replaced). New files get the umask's permissions.
fn create_new(path: &Path, bytes: &[u8], created: &mut Vec<PathBuf>) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    created.push(path.to_path_buf());
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

pub fn command(args: InitArgs) -> Result<Exit> {
    if let Some(file) = &args.from {
        return from_file(&args, file);
    }
    let files: [(&str, Vec<u8>); 3] = [
        (CONFIG_FILE, template::config_toml(args.lang).into_bytes()),
        (TEMPLATE_CSV, template::payroll_csv(args.lang)?.into_bytes()),
        (TEMPLATE_XLSX, template::payroll_xlsx(args.lang)?),
    ];
    let existing: Vec<String> = files
        .iter()
        .map(|(name, _)| args.dir.join(name))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        bail!(
            "{} already exist(s); payrun init never overwrites a file: move it or use --dir",
            existing.join(", ")
        );
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    // All three or none: a failure (a full disk) removes what this
    // command created, never a file it found.
    let mut created = Vec::new();
    for (name, bytes) in &files {
        let path = args.dir.join(name);
        if let Err(e) = create_new(&path, bytes, &mut created) {
            for p in &created {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
    }
    let t = args.lang.text();
    for path in &created {
        eprintln!("{}", (t.init_wrote)(&path.display().to_string()));
    }
    eprintln!("{}", (t.init_next)(TEMPLATE_CSV));
    Ok(Exit::Ok)
}

/// `payrun init --from FILE`: the config that reads `file` as it is.
fn from_file(args: &InitArgs, file: &Path) -> Result<Exit> {
    let source = crate::input::open(file, args.sheet.as_deref(), None)?;
    let headers: Vec<String> = source.header().fields.iter().map(String::from).collect();
    let config = template::config_for_file(args.lang, &headers);
    let path = args.dir.join(CONFIG_FILE);
    let mut out = std::io::stdout().lock();
    let t = args.lang.text();
    let (shown_path, shown_file) = (path.display().to_string(), file.display().to_string());
    if path.exists() {
        writeln!(out, "{}", (t.init_exists)(&shown_path, &shown_file))?;
    } else {
        std::fs::create_dir_all(&args.dir)
            .with_context(|| format!("cannot create {}", args.dir.display()))?;
        create_new(&path, config.as_bytes(), &mut Vec::new())?;
        eprintln!("{}", (t.init_wrote_for)(&shown_path, &shown_file));
        writeln!(out, "{}", (t.init_table_written)(&shown_path, &shown_file))?;
    }
    let table = &config[config.rfind("[columns]\n").unwrap_or(0)..];
    out.write_all(table.as_bytes())?;
    Ok(Exit::Ok)
}
