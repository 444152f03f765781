//! Closing the books (docs/closing.md): matching the database against the
//! provider's own statement, settling the `unknown` and `processing`
//! payouts the statement settles (each with an audit line naming the
//! statement's SHA-256 and line), and writing `reconciliation.csv` with its
//! per-currency summary. Reading is [`statement`], what the statement
//! speaks about is [`scope`], comparing is the pure [`matching`], writing
//! is [`write`]; this file does the I/O around them. Running it twice with
//! the same statement changes nothing the second time: a settled payout
//! matches.

pub mod guard;
pub mod matching;
pub mod poll;
pub mod scope;
pub mod statement;
mod write;

pub use matching::{Booked, Comparison, Reach, Summary, Verdict};
pub use scope::{Asked, Scope};
pub use statement::{Statement, StatementLine, StatementSpec, StatementStatus};
pub use write::{RECONCILIATION_HEADER, SUMMARY_HEADER, money};

use crate::config::Config;
use crate::store::Store;
use anyhow::Result;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What `reconcile_statement` did.
#[derive(Debug, Clone)]
pub struct Closed {
    pub statement_sha256: String,
    /// (transaction id, run, from, to, where on the statement) of every
    /// payout settled now.
    pub settled: Vec<Settled>,
    /// (transaction id, why) of every payout the statement would settle
    /// but did not: its execute is on its way (`executing`), or another
    /// process changed it meanwhile ([`guard::NotSettled`]).
    pub not_settled: Vec<(String, guard::NotSettled)>,
    /// How many lines did not match.
    pub discrepancies: u64,
    pub summary: BTreeMap<String, Summary>,
    /// Payouts by what the statement can say about them.
    pub reach: BTreeMap<Reach, u64>,
    pub scope: Scope,
    /// Rows and sheets of the statement not read as transactions, named.
    pub skipped: Vec<String>,
    /// How the statement was read, and what looked wrong in it.
    pub notices: Vec<String>,
    /// Ids listed more than once: the note naming their lines, in the
    /// config's `language`.
    pub duplicates: Vec<(String, String)>,
    pub report: PathBuf,
    pub summary_path: PathBuf,
}

/// One settlement a statement made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    pub transaction_id: String,
    pub run_id: i64,
    pub from: crate::machine::State,
    pub to: crate::machine::State,
    /// Where on the statement: its sheet (if any) and line.
    pub sheet: Option<String>,
    pub line: u64,
}

impl Settled {
    /// Where on the statement, in `language` (`line 14`).
    pub fn place_in(&self, language: crate::lang::Language) -> String {
        statement::place_in(self.sheet.as_deref(), self.line, language)
    }
}

/// Reads the statement at `path`, decides what it speaks about, settles
/// what it settles, writes the reconciliation to `out` (and its summary
/// beside it).
pub fn reconcile_statement(
    store: &mut Store,
    path: &Path,
    sheet: Option<&str>,
    cfg: &Config,
    asked: &Asked,
    out: &Path,
) -> Result<Closed> {
    let st = statement::read(path, sheet, cfg)?;
    let runs: HashMap<i64, String> = store
        .runs()?
        .into_iter()
        .map(|r| (r.id, r.provider))
        .collect();
    let mut booked = store.booked(None)?;
    let scope = scope::decide(asked, &runs, &booked, &st.lines, st.dates)?;
    let region = cfg
        .default_phone_region
        .as_deref()
        .map(crate::validate::fields::phone_region)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let mut phones = crate::validate::phone::Phones::new(region);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut settled = Vec::new();
    let mut not_settled = Vec::new();
    // Settle first, then compare again so the file shows the states as
    // they now are (the same file a re-run would write).
    let reach = |p: &Booked| scope.reach(&runs, p);
    for line in matching::compare(&booked, reach, &st.lines, &mut phones).lines {
        if let (Some(p), Some(l)) = (line.payout, line.statement)
            && p.state == crate::machine::State::Executing
            && l.status != StatementStatus::NotFinal
            && line.verdict != Verdict::OtherProvider
            && !not_settled.iter().any(|(id, _)| *id == p.transaction_id)
        {
            not_settled.push((p.transaction_id.clone(), guard::NotSettled::InFlight));
        }
        if let (Some(p), Some(l), Some(to)) = (line.payout, line.statement, line.settles) {
            let reason = format!(
                "statement {name} (sha256 {}) {}: {}",
                st.sha256,
                l.place(),
                l.status_word
            );
            let code = match to {
                crate::machine::State::Executed => "STATEMENT_PAID",
                _ => "STATEMENT_FAILED",
            };
            match store.resolve(p.id, p.state, to, "statement", &reason, code) {
                Ok(()) => settled.push(Settled {
                    transaction_id: p.transaction_id.clone(),
                    run_id: p.run_id,
                    from: p.state,
                    to,
                    sheet: l.sheet.clone(),
                    line: l.line,
                }),
                // A re-send claimed it (or another terminal settled it)
                // since it was read: left to that, and said.
                Err(e) if crate::store::changed_meanwhile(&e) => {
                    not_settled.push((p.transaction_id.clone(), guard::NotSettled::Changed));
                }
                Err(e) => return Err(e),
            }
        }
    }
    if !settled.is_empty() || !not_settled.is_empty() {
        booked = store.booked(None)?;
    }
    let c = matching::compare(&booked, reach, &st.lines, &mut phones);
    let summary_path = crate::report::summary_path(out);
    let language = cfg.language();
    write::write(out, &summary_path, &c, language)?;
    let mut duplicates: Vec<(String, String)> = c
        .lines
        .iter()
        .filter(|l| l.verdict == Verdict::DuplicateInStatement)
        .filter_map(|l| Some((l.statement?.transaction_id.clone(), l.note_in(language))))
        .collect();
    duplicates.dedup();
    Ok(Closed {
        statement_sha256: st.sha256.clone(),
        settled,
        not_settled,
        discrepancies: c
            .lines
            .iter()
            .filter(|l| l.verdict != Verdict::Matched)
            .count() as u64,
        summary: c.summary,
        reach: c.reach,
        scope,
        skipped: st.skipped,
        notices: st.notices,
        duplicates,
        report: out.to_path_buf(),
        summary_path,
    })
}
