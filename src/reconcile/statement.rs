//! Reading a provider's statement (its back-office export of transactions)
//! into [`StatementLine`]s: the same readers and header matching as payroll
//! files ([`crate::input`], [`crate::validate::columns::normalize`]), a
//! column mapping and status vocabulary from the `[statement]` config
//! section ([`StatementSpec`]), with defaults that read the sandbox's
//! statement in English and French. Bad input is an error naming the line,
//! the column, the value and the fix.

use crate::validate::columns::normalize;
use anyhow::{Context, Result, bail};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::str::FromStr;

pub use crate::config::StatementSpec;

fn or(list: &Option<Vec<String>>, default: &[&str]) -> Vec<String> {
    list.clone()
        .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
}

/// What a statement says about a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatementStatus {
    Paid,
    Failed,
    NotFinal,
}

impl StatementStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StatementStatus::Paid => "paid",
            StatementStatus::Failed => "failed",
            StatementStatus::NotFinal => "not_final",
        }
    }
}

/// One transaction line of a statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementLine {
    /// The line (row) number as a spreadsheet program shows it.
    pub line: u64,
    pub transaction_id: String,
    pub account: String,
    /// The amount the provider moved (the wire amount).
    pub amount: Decimal,
    pub currency: String,
    pub status: StatementStatus,
    /// The status as the provider wrote it.
    pub status_word: String,
}

/// A statement read whole: its lines and the file's SHA-256, which every
/// settlement made from it records.
#[derive(Debug, Clone)]
pub struct Statement {
    pub sha256: String,
    pub lines: Vec<StatementLine>,
}

/// The mapping resolved against defaults.
struct Vocabulary {
    columns: [(&'static str, Vec<String>); 5],
    words: [(StatementStatus, Vec<String>); 3],
}

impl Vocabulary {
    fn of(spec: &StatementSpec) -> Vocabulary {
        Vocabulary {
            columns: [
                (
                    "transaction_id",
                    or(
                        &spec.transaction_id,
                        &["Transaction ID", "Référence", "transactionId"],
                    ),
                ),
                (
                    "account",
                    or(&spec.account, &["Account", "Compte", "account_id"]),
                ),
                ("amount", or(&spec.amount, &["Amount", "Montant"])),
                ("currency", or(&spec.currency, &["Currency", "Devise"])),
                ("status", or(&spec.status, &["Status", "Statut"])),
            ],
            words: [
                (
                    StatementStatus::Paid,
                    or(&spec.paid, &["Successful", "Réussi", "SUCCESS"]),
                ),
                (
                    StatementStatus::Failed,
                    or(&spec.failed, &["Failed", "Échoué", "FAILED"]),
                ),
                (
                    StatementStatus::NotFinal,
                    or(
                        &spec.not_final,
                        &[
                            "Pending",
                            "Initiated",
                            "En attente",
                            "Initiée",
                            "PENDING",
                            "PROCESSING",
                        ],
                    ),
                ),
            ],
        }
    }

    fn status(&self, word: &str) -> Option<StatementStatus> {
        let w = word.trim().to_lowercase();
        self.words
            .iter()
            .find(|(_, list)| list.iter().any(|x| x.trim().to_lowercase() == w))
            .map(|(s, _)| *s)
    }
}

/// Reads the statement at `path` (CSV, or a workbook by its extension).
pub fn read(path: &Path, sheet: Option<&str>, spec: &StatementSpec) -> Result<Statement> {
    let bytes =
        std::fs::read(path).with_context(|| format!("cannot read statement {}", path.display()))?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let voc = Vocabulary::of(spec);
    let mut source = crate::input::open(path, sheet, None)?;
    let header: Vec<String> = source.header().fields.iter().map(str::to_string).collect();
    let mut index = [0usize; 5];
    for (k, (key, names)) in voc.columns.iter().enumerate() {
        let wanted: Vec<String> = names.iter().map(|n| normalize(n)).collect();
        index[k] = header
            .iter()
            .position(|h| wanted.contains(&normalize(h)))
            .with_context(|| {
                format!(
                    "statement {}: no {key} column (looked for {}; found {}); \
                     name its header in [statement] {key} = [\"...\"] in the config",
                    path.display(),
                    names.join(", "),
                    header.join(", ")
                )
            })?;
    }
    let mut lines = Vec::new();
    let mut raw = crate::input::RawRow::default();
    while source.next_row(&mut raw)? {
        let cell = |k: usize| raw.fields.get(index[k]).unwrap_or("").trim().to_string();
        let label = |k: usize| header[index[k]].clone();
        let transaction_id = cell(0);
        if transaction_id.is_empty() {
            bail!(
                "statement line {}: column {:?} is empty; every line needs a transaction id",
                raw.row,
                label(0)
            );
        }
        let amount_text = cell(2);
        let amount = Decimal::from_str(&amount_text.replace(',', ".")).map_err(|_| {
            anyhow::anyhow!(
                "statement line {}: column {:?} holds {amount_text:?}, not an amount; \
                 expected a number such as 2500 or 10.50",
                raw.row,
                label(2)
            )
        })?;
        let word = cell(4);
        let status = voc.status(&word).with_context(|| {
            format!(
                "statement line {}: column {:?} holds the status {word:?}, which is not in the \
                 vocabulary; add it to [statement] paid, failed or not_final in the config",
                raw.row,
                label(4)
            )
        })?;
        lines.push(StatementLine {
            line: raw.row,
            transaction_id,
            account: cell(1),
            amount,
            currency: cell(3).to_uppercase(),
            status,
            status_word: word,
        });
    }
    Ok(Statement { sha256, lines })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("statement.csv");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn reads_the_french_sandbox_statement_with_the_defaults() {
        let (_d, p) = write(
            "Référence;Compte;Montant;Devise;Statut;Date\n\
             tx-1;2250700000001;2500;XOF;Réussi;2026-11-23 16:03:57\n\
             tx-2;2250700000002;10.50;eur;En attente;2026-11-23 16:03:57\n",
        );
        let s = read(&p, None, &StatementSpec::default()).unwrap();
        assert_eq!(s.sha256.len(), 64);
        assert_eq!(s.lines.len(), 2);
        assert_eq!(s.lines[0].status, StatementStatus::Paid);
        assert_eq!(s.lines[0].line, 2);
        assert_eq!(s.lines[1].amount, Decimal::new(1050, 2));
        assert_eq!(s.lines[1].currency, "EUR");
        assert_eq!(s.lines[1].status, StatementStatus::NotFinal);
    }

    #[test]
    fn the_providers_own_words_come_from_the_config() {
        let (_d, p) = write("Ref,Acct,Amt,Ccy,State\ntx-1,1,5,XOF,DONE\ntx-2,1,5,XOF,KO\n");
        let spec: StatementSpec = toml::from_str(
            "transaction_id = [\"Ref\"]\naccount = [\"Acct\"]\namount = [\"Amt\"]\n\
             currency = [\"Ccy\"]\nstatus = [\"State\"]\npaid = [\"done\"]\nfailed = [\"KO\"]\n",
        )
        .unwrap();
        let s = read(&p, None, &spec).unwrap();
        assert_eq!(s.lines[0].status, StatementStatus::Paid);
        assert_eq!(s.lines[1].status, StatementStatus::Failed);
    }

    #[test]
    fn an_unknown_status_word_names_line_column_value_and_fix() {
        let (_d, p) =
            write("Transaction ID,Account,Amount,Currency,Status\ntx-1,1,5,XOF,Bounced\n");
        let e = format!(
            "{:#}",
            read(&p, None, &StatementSpec::default()).unwrap_err()
        );
        assert!(e.contains("line 2") && e.contains("Status") && e.contains("Bounced"));
        assert!(e.contains("[statement]"), "{e}");
    }

    #[test]
    fn a_missing_column_is_named() {
        let (_d, p) = write("Transaction ID,Account,Amount,Status\ntx-1,1,5,Failed\n");
        let e = format!(
            "{:#}",
            read(&p, None, &StatementSpec::default()).unwrap_err()
        );
        assert!(e.contains("no currency column"), "{e}");
    }
}
