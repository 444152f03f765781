//! The statement's vocabulary: which headers name its columns, which words
//! mean paid, failed or not final, and which labels mark a footer or a
//! subtotal, from the `[statement]` config section over defaults that read
//! the sandbox's statement in English and French. Headers and words compare
//! like payroll headers ([`normalize`]: case, accents, spaces, `_` and `-`
//! ignored); a word given two meanings is refused.

use super::StatementStatus;
use crate::config::StatementSpec;
use crate::validate::columns::normalize;
use anyhow::{Result, bail};
use csv::StringRecord;

fn or(list: &Option<Vec<String>>, default: &[&str]) -> Vec<String> {
    list.clone()
        .unwrap_or_else(|| default.iter().map(|s| s.to_string()).collect())
}

/// The statement's columns, in the order of [`Vocabulary::columns`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    TransactionId,
    Account,
    Amount,
    Currency,
    Status,
    /// Optional: its dates bound what the statement can say is missing.
    Date,
}

impl Column {
    pub const ALL: [Column; 6] = [
        Column::TransactionId,
        Column::Account,
        Column::Amount,
        Column::Currency,
        Column::Status,
        Column::Date,
    ];

    /// The `[statement]` key that names its headers.
    pub fn key(self) -> &'static str {
        match self {
            Column::TransactionId => "transaction_id",
            Column::Account => "account",
            Column::Amount => "amount",
            Column::Currency => "currency",
            Column::Status => "status",
            Column::Date => "date",
        }
    }

    fn required(self) -> bool {
        self != Column::Date
    }
}

/// The mapping resolved against the defaults.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    /// Per [`Column::ALL`]: the headers as configured, and normalized.
    columns: [(Vec<String>, Vec<String>); 6],
    /// Normalized words of each status.
    words: [(StatementStatus, Vec<String>); 3],
    /// Normalized footer labels: a cell starting with one marks a total.
    totals: Vec<String>,
}

/// Where each column sits in the statement's rows, and its header as
/// written (messages name the column as the clerk sees it).
#[derive(Debug, Clone)]
pub struct Located {
    index: [Option<usize>; 6],
    label: [String; 6],
}

impl Located {
    pub fn index(&self, c: Column) -> Option<usize> {
        self.index[c as usize]
    }

    pub fn label(&self, c: Column) -> &str {
        &self.label[c as usize]
    }

    /// The cell of `c` in `row`, trimmed (empty when absent).
    pub fn cell<'r>(&self, row: &'r StringRecord, c: Column) -> &'r str {
        self.index(c).and_then(|i| row.get(i)).map_or("", |v| {
            v.trim_matches(|ch: char| ch.is_whitespace() || ch == '\u{feff}')
        })
    }
}

impl Vocabulary {
    pub fn of(spec: &StatementSpec) -> Result<Vocabulary> {
        let list = |c: Column| match c {
            Column::TransactionId => or(
                &spec.transaction_id,
                &["Transaction ID", "Référence", "transactionId", "Réf"],
            ),
            Column::Account => or(&spec.account, &["Account", "Compte", "account_id"]),
            Column::Amount => or(&spec.amount, &["Amount", "Montant"]),
            Column::Currency => or(&spec.currency, &["Currency", "Devise"]),
            Column::Status => or(&spec.status, &["Status", "Statut", "État"]),
            Column::Date => or(
                &spec.date,
                &[
                    "Date",
                    "Date de l'opération",
                    "Date opération",
                    "Created at",
                ],
            ),
        };
        let columns = Column::ALL.map(|c| {
            let names = list(c);
            let keys = names.iter().map(|n| normalize(n)).collect();
            (names, keys)
        });
        let words = [
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
        ]
        .map(|(s, list)| (s, list.iter().map(|w| normalize(w)).collect::<Vec<_>>()));
        for (i, (a, list)) in words.iter().enumerate() {
            for (b, other) in &words[i + 1..] {
                if let Some(w) = list.iter().find(|w| other.contains(w)) {
                    bail!(
                        "[statement]: the word {w:?} is listed both as {} and as {}; a status word must have one meaning, remove it from one list",
                        key_of(*a),
                        key_of(*b)
                    );
                }
            }
        }
        let totals = or(
            &spec.total,
            &[
                "Total",
                "Totaux",
                "Sous-total",
                "Somme",
                "Cumul",
                "Grand total",
            ],
        )
        .iter()
        .map(|w| normalize(w))
        .collect();
        Ok(Vocabulary {
            columns,
            words,
            totals,
        })
    }

    /// The headers looked for as `c`, as configured.
    pub fn names(&self, c: Column) -> &[String] {
        &self.columns[c as usize].0
    }

    /// Where the columns sit in `header`, if every required one is there.
    pub fn locate(&self, header: &StringRecord) -> Option<Located> {
        let mut index = [None; 6];
        let mut label: [String; 6] = Default::default();
        for c in Column::ALL {
            let keys = &self.columns[c as usize].1;
            let found = header.iter().position(|h| keys.contains(&normalize(h)));
            match found {
                Some(i) => {
                    index[c as usize] = Some(i);
                    label[c as usize] = header[i].trim().trim_start_matches('\u{feff}').to_owned();
                }
                None if c.required() => return None,
                None => {}
            }
        }
        Some(Located { index, label })
    }

    /// The required columns `header` lacks.
    pub fn missing(&self, header: &StringRecord) -> Vec<Column> {
        Column::ALL
            .into_iter()
            .filter(|c| c.required())
            .filter(|c| {
                let keys = &self.columns[*c as usize].1;
                !header.iter().any(|h| keys.contains(&normalize(h)))
            })
            .collect()
    }

    /// What `word` says, if it is one of the vocabulary's words.
    pub fn status(&self, word: &str) -> Option<StatementStatus> {
        let w = normalize(word);
        self.words
            .iter()
            .find(|(_, list)| list.contains(&w))
            .map(|(s, _)| *s)
    }

    /// Whether `cell` is a footer's label (`Total`, `TOTAL XOF`,
    /// `Sous-total page 1`).
    pub fn is_total_label(&self, cell: &str) -> bool {
        let k = normalize(cell);
        !k.is_empty() && self.totals.iter().any(|t| k.starts_with(t.as_str()))
    }
}

fn key_of(s: StatementStatus) -> &'static str {
    match s {
        StatementStatus::Paid => "paid",
        StatementStatus::Failed => "failed",
        StatementStatus::NotFinal => "not_final",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(cells: &[&str]) -> StringRecord {
        StringRecord::from(cells.to_vec())
    }

    #[test]
    fn defaults_read_the_sandbox_statement_and_accents_do_not_matter() {
        let v = Vocabulary::of(&StatementSpec::default()).unwrap();
        let l = v
            .locate(&record(&[
                "\u{feff}Référence",
                "Compte",
                "MONTANT",
                "Devise",
                "Statut",
                "Date",
            ]))
            .unwrap();
        assert_eq!(l.index(Column::TransactionId), Some(0));
        assert_eq!(l.label(Column::TransactionId), "Référence");
        assert_eq!(l.index(Column::Date), Some(5));
        assert_eq!(v.status("reussi"), Some(StatementStatus::Paid));
        assert_eq!(v.status(" EN ATTENTE "), Some(StatementStatus::NotFinal));
        assert_eq!(v.status("Bounced"), None);
        // The date column is optional; the others are not.
        assert!(
            v.locate(&record(&["Ref", "Compte", "Montant", "Devise", "Statut"]))
                .is_some()
        );
        assert_eq!(
            v.missing(&record(&["Ref", "Montant"])),
            vec![Column::Account, Column::Currency, Column::Status]
        );
    }

    #[test]
    fn footer_labels() {
        let v = Vocabulary::of(&StatementSpec::default()).unwrap();
        for label in [
            "Total",
            "TOTAL XOF",
            "Sous-total page 1",
            "Total général",
            "Totaux",
        ] {
            assert!(v.is_total_label(label), "{label}");
        }
        for not in ["", "tx-1", "Tot", "Salaire novembre"] {
            assert!(!v.is_total_label(not), "{not}");
        }
    }

    #[test]
    fn a_word_with_two_meanings_is_refused() {
        let spec = StatementSpec {
            paid: Some(vec!["OK".into()]),
            failed: Some(vec!["ok".into()]),
            ..Default::default()
        };
        let e = Vocabulary::of(&spec).unwrap_err().to_string();
        assert!(
            e.contains("\"ok\"") && e.contains("paid") && e.contains("failed"),
            "{e}"
        );
    }
}
