//! What a statement speaks about (docs/closing.md, "What a statement speaks
//! about"): one provider account and a date range. Its provider is the one
//! named (`[statement] provider`, `--base-url`), else the one provider whose
//! payouts it lists, else the configured `base_url`; its dates are
//! `--from/--to`, else the first and last day of its date column. Each
//! payout's [`Reach`] follows, as a pure function: only a payout of that
//! provider, of the runs asked for and sent inside the dates can be
//! missing from the statement.

use super::guard::same_provider;
use super::matching::{Booked, Reach};
use super::statement::{Day, StatementLine};
use anyhow::{Result, bail};
use std::collections::{BTreeSet, HashMap};

/// What the caller knows before reading the statement.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// `[statement] provider` or `--base-url`: the statement's account.
    pub provider: Option<String>,
    /// The configured `base_url`: the account when the statement names
    /// none of payrun's payouts.
    pub fallback: Option<String>,
    /// `--run`: only this run's payouts can be missing.
    pub run: Option<i64>,
    /// `--from` / `--to`: the statement's period, over its dates.
    pub from: Option<Day>,
    pub to: Option<Day>,
}

/// The scope decided, with where each part came from (for the output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// `None`: the statement lists none of payrun's payouts and no
    /// provider was named; nothing can be missing.
    pub provider: Option<String>,
    pub provider_from: &'static str,
    pub run: Option<i64>,
    pub dates: Option<(Day, Day)>,
    pub dates_from: &'static str,
}

/// Decides the scope. `runs` maps each run to the provider it was made
/// against; `booked` are all payouts; `lines` the statement's.
pub fn decide(
    asked: &Asked,
    runs: &HashMap<i64, String>,
    booked: &[Booked],
    lines: &[StatementLine],
    statement_dates: Option<(Day, Day)>,
) -> Result<Scope> {
    let (provider, provider_from) = match &asked.provider {
        Some(p) => (Some(p.clone()), "named"),
        None => {
            let ids: BTreeSet<&str> = lines.iter().map(|l| l.transaction_id.as_str()).collect();
            let mut listed: Vec<&String> = Vec::new();
            for b in booked
                .iter()
                .filter(|b| ids.contains(b.transaction_id.as_str()))
            {
                if let Some(p) = runs.get(&b.run_id)
                    && !listed.iter().any(|q| same_provider(q, p))
                {
                    listed.push(p);
                }
            }
            match (listed.as_slice(), &asked.fallback) {
                ([one], _) => (Some((*one).clone()), "the payouts it lists"),
                ([], Some(f)) => (Some(f.clone()), "base_url"),
                ([], None) => (None, ""),
                (several, Some(f)) if several.iter().any(|p| same_provider(p, f)) => {
                    (Some(f.clone()), "base_url")
                }
                (several, _) => bail!(
                    "the statement lists payouts of runs made against several providers ({}): a statement covers one account; say which with [statement] provider = \"URL\" in the config or --base-url URL",
                    several
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    };
    let dates = match (asked.from, asked.to, statement_dates) {
        (None, None, None) => None,
        (None, None, Some(d)) => Some((d, "the statement's dates")),
        (from, to, d) => {
            let lo = from.or(d.map(|d| d.0));
            let hi = to.or(d.map(|d| d.1));
            match (lo, hi) {
                (Some(lo), Some(hi)) if lo > hi => {
                    bail!(
                        "--from {lo} is after --to {hi}: give the statement's first day, then its last"
                    )
                }
                (Some(lo), Some(hi)) => Some(((lo, hi), "--from/--to")),
                // One bound without the statement's dates: open on the other side.
                (Some(lo), None) => Some(((lo, Day::MAX), "--from/--to")),
                (None, Some(hi)) => Some(((Day::MIN, hi), "--from/--to")),
                (None, None) => None,
            }
        }
    };
    Ok(Scope {
        provider,
        provider_from,
        run: asked.run,
        dates: dates.map(|d| d.0),
        dates_from: dates.map_or("", |d| d.1),
    })
}

impl Scope {
    /// The reach of one payout.
    pub fn reach(&self, runs: &HashMap<i64, String>, p: &Booked) -> Reach {
        let provider = runs.get(&p.run_id).map_or("", String::as_str);
        match &self.provider {
            Some(ours) if same_provider(ours, provider) => {}
            _ => return Reach::OtherProvider,
        }
        if self.run.is_some_and(|r| r != p.run_id) {
            return Reach::OtherRun;
        }
        match (self.dates, Day::of_timestamp(&p.sent_at)) {
            (Some((lo, hi)), Some(day)) if day < lo || day > hi => Reach::OutsideDates,
            _ => Reach::InScope,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::State;
    use crate::reconcile::statement::StatementStatus;
    use rust_decimal::Decimal;

    fn booked(run_id: i64, tx: &str, sent_at: &str) -> Booked {
        Booked {
            id: 1,
            run_id,
            row: 2,
            transaction_id: tx.into(),
            account_id: "1".into(),
            wire_amount: Decimal::ONE,
            amount: Decimal::ONE,
            currency: "XOF".into(),
            state: State::Executed,
            sent_at: sent_at.into(),
        }
    }

    fn line(tx: &str) -> StatementLine {
        StatementLine {
            sheet: None,
            line: 2,
            transaction_id: tx.into(),
            account: String::new(),
            amount: Decimal::ONE,
            amount_text: "1".into(),
            currency: "XOF".into(),
            status: StatementStatus::Paid,
            status_word: "OK".into(),
            date: None,
        }
    }

    fn day(text: &str) -> Day {
        Day::of_timestamp(text).unwrap()
    }

    fn runs() -> HashMap<i64, String> {
        HashMap::from([
            (1, "https://a.example/v1".to_string()),
            (2, "https://a.example/v1/".to_string()),
            (3, "https://b.example/v1".to_string()),
        ])
    }

    #[test]
    fn the_provider_is_the_one_of_the_payouts_it_lists() {
        let booked = vec![
            booked(1, "a1", ""),
            booked(2, "a2", ""),
            booked(3, "b3", ""),
        ];
        let asked = Asked {
            fallback: Some("https://b.example/v1".into()),
            ..Asked::default()
        };
        let s = decide(&asked, &runs(), &booked, &[line("a1"), line("a2")], None).unwrap();
        assert_eq!(s.provider.as_deref(), Some("https://a.example/v1"));
        assert_eq!(s.reach(&runs(), &booked[1]), Reach::InScope);
        assert_eq!(s.reach(&runs(), &booked[2]), Reach::OtherProvider);
        // Listing none of them: the configured base_url.
        let s = decide(&asked, &runs(), &booked, &[line("zz")], None).unwrap();
        assert_eq!(s.provider.as_deref(), Some("https://b.example/v1"));
        // Nothing named, nothing listed: nothing can be missing.
        let s = decide(&Asked::default(), &runs(), &booked, &[line("zz")], None).unwrap();
        assert_eq!(s.provider, None);
        assert_eq!(s.reach(&runs(), &booked[0]), Reach::OtherProvider);
        // Listing payouts of two providers: named, or refused.
        let both = [line("a1"), line("b3")];
        let e = decide(&Asked::default(), &runs(), &booked, &both, None).unwrap_err();
        assert!(e.to_string().contains("[statement] provider"), "{e}");
        let s = decide(&asked, &runs(), &booked, &both, None).unwrap();
        assert_eq!(s.provider.as_deref(), Some("https://b.example/v1"));
        let named = Asked {
            provider: Some("https://a.example/v1".into()),
            ..Asked::default()
        };
        let s = decide(&named, &runs(), &booked, &both, None).unwrap();
        assert_eq!(s.provider_from, "named");
    }

    #[test]
    fn runs_and_dates_bound_what_can_be_missing() {
        let booked = vec![
            booked(1, "nov", "2026-11-30T23:00:00.000Z"),
            booked(2, "dec", "2026-12-01T08:00:00.000Z"),
            booked(1, "unsent", ""),
        ];
        let nov = Some((day("2026-11-01"), day("2026-11-30")));
        let s = decide(&Asked::default(), &runs(), &booked, &[line("nov")], nov).unwrap();
        assert_eq!(s.dates_from, "the statement's dates");
        assert_eq!(s.reach(&runs(), &booked[0]), Reach::InScope);
        assert_eq!(s.reach(&runs(), &booked[1]), Reach::OutsideDates);
        assert_eq!(s.reach(&runs(), &booked[2]), Reach::InScope);
        let asked = Asked {
            run: Some(2),
            to: Some(day("2026-12-31")),
            ..Asked::default()
        };
        let s = decide(&asked, &runs(), &booked, &[line("nov")], nov).unwrap();
        assert_eq!(s.dates, Some((day("2026-11-01"), day("2026-12-31"))));
        assert_eq!(s.reach(&runs(), &booked[0]), Reach::OtherRun);
        assert_eq!(s.reach(&runs(), &booked[1]), Reach::InScope);
        let asked = Asked {
            from: Some(day("2026-12-02")),
            to: Some(day("2026-12-01")),
            ..Asked::default()
        };
        assert!(decide(&asked, &runs(), &booked, &[], None).is_err());
    }
}
