//! The `[statement]` config section (docs/closing.md, "The statement's
//! columns and words"), and the duration keys' syntax (`settle_wait`,
//! `--max-wait`). Kept beside `config` so that config imports none of the
//! modules that take it.

use super::{AmountUnit, NumberFormat};
use serde::Deserialize;
use std::time::Duration;

/// How the statement writes a date whose day and month are both numbers
/// (`03/11/2026`): day first (the default, as French and most African
/// portals write it) or month first (US exports). ISO dates
/// (`2026-11-03`) read the same either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DateOrder {
    #[default]
    Dmy,
    Mdy,
}

/// The `[statement]` config section. Each column key lists the headers it
/// may have (compared like payroll headers: case, accents, spaces, `_` and
/// `-` ignored); each status key lists the provider's own words for it.
/// Absent keys take the defaults, which read the sandbox statement in
/// English and French.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StatementSpec {
    pub transaction_id: Option<Vec<String>>,
    pub account: Option<Vec<String>>,
    pub amount: Option<Vec<String>>,
    pub currency: Option<Vec<String>>,
    pub status: Option<Vec<String>>,
    /// The date column (optional in the file): its dates bound the payouts
    /// the statement can say are missing.
    pub date: Option<Vec<String>>,
    /// Status words meaning the payout was paid.
    pub paid: Option<Vec<String>>,
    /// Status words meaning the payout failed and no money moved.
    pub failed: Option<Vec<String>>,
    /// Status words meaning the provider has not settled it yet.
    pub not_final: Option<Vec<String>>,
    /// Labels of a footer or subtotal line (`Total`, `Sous-total`).
    pub total: Option<Vec<String>>,
    /// How the statement writes numbers; default: the top-level
    /// `number_format`.
    pub number_format: Option<NumberFormat>,
    /// The statement's amounts: in the currency's major unit (`1250.50`) or
    /// minor unit (`125050`); default: the top-level `amount_unit`, the
    /// unit payrun sends (a provider's export usually shows what it was
    /// sent).
    pub amount_unit: Option<AmountUnit>,
    pub date_order: Option<DateOrder>,
    /// The provider account the statement belongs to: the base URL its runs
    /// were made against (default: `--base-url`, else `base_url`, else the
    /// one provider whose payouts the statement lists).
    pub provider: Option<String>,
}

impl StatementSpec {
    /// Refuses an empty list or word: it could only be a mistake.
    pub fn check(&self) -> anyhow::Result<()> {
        let lists = [
            ("transaction_id", &self.transaction_id),
            ("account", &self.account),
            ("amount", &self.amount),
            ("currency", &self.currency),
            ("status", &self.status),
            ("date", &self.date),
            ("paid", &self.paid),
            ("failed", &self.failed),
            ("not_final", &self.not_final),
            ("total", &self.total),
        ];
        for (key, list) in lists {
            if let Some(list) = list
                && (list.is_empty() || list.iter().any(|w| w.trim().is_empty()))
            {
                anyhow::bail!(
                    "[statement] {key} is empty or holds an empty name: list the headers or words the statement uses, e.g. {key} = [\"...\"]"
                );
            }
        }
        if let Some(p) = &self.provider
            && p.trim().is_empty()
        {
            anyhow::bail!(
                "[statement] provider is empty: give the base URL the statement's runs were made against"
            );
        }
        Ok(())
    }
}

/// A duration as written in the config or on the command line: whole
/// numbers with a unit, `ms`, `s`, `m` or `h`, run together (`90s`, `2m`,
/// `1h30m`). A bare number is refused: seconds or minutes would be a guess.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad = || {
        format!(
            "`{text}` is not a duration: write a number and a unit, e.g. \"30s\", \"10m\", \"2h\" or \"1h30m\""
        )
    };
    if t.is_empty() {
        return Err(bad());
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest.len()
            - rest
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .len();
        let one = match &rest[..unit_len] {
            "ms" => Duration::from_millis(1),
            "s" => Duration::from_secs(1),
            "m" | "min" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        let part = one
            .checked_mul(u32::try_from(n).map_err(|_| bad())?)
            .ok_or_else(bad)?;
        total = total.checked_add(part).ok_or_else(bad)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration(" 2m "), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        for bad in ["", "30", "s", "3 s", "2d", "-1s", "1.5h"] {
            let e = parse_duration(bad).unwrap_err();
            assert!(e.contains("not a duration"), "{bad}: {e}");
        }
    }

    /// Every TOML example of docs/closing.md is a valid configuration.
    #[test]
    fn documented_examples_parse() {
        let doc = include_str!("../../docs/closing.md");
        let blocks: Vec<&str> = doc
            .split("```toml\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap())
            .collect();
        assert!(blocks.len() >= 4, "{}", blocks.len());
        for b in blocks {
            Config::parse(b).unwrap_or_else(|e| panic!("{e:#}\n{b}"));
        }
    }

    #[test]
    fn settle_wait_and_the_statement_section_are_checked() {
        let cfg = Config::parse("").unwrap();
        assert_eq!(cfg.settle_wait(), crate::config::DEFAULT_SETTLE_WAIT);
        let cfg = Config::parse("settle_wait = \"2m\"").unwrap();
        assert_eq!(cfg.settle_wait(), Duration::from_secs(120));
        let e = format!("{:#}", Config::parse("settle_wait = \"soon\"").unwrap_err());
        assert!(e.contains("settle_wait") && e.contains("soon"), "{e}");
        let cfg = Config::parse(
            "[statement]\nnumber_format = \"fr\"\namount_unit = \"major\"\ndate_order = \"mdy\"\n\
             provider = \"https://api.example/v1\"\ntotal = [\"Cumul\"]\n",
        )
        .unwrap();
        let st = cfg.statement.unwrap();
        assert_eq!(st.number_format, Some(NumberFormat::Fr));
        assert_eq!(st.date_order, Some(DateOrder::Mdy));
        let e = format!(
            "{:#}",
            Config::parse("[statement]\npaid = []\n").unwrap_err()
        );
        assert!(e.contains("[statement] paid"), "{e}");
        let e = format!(
            "{:#}",
            Config::parse("[statement]\nfooter = 1\n").unwrap_err()
        );
        assert!(e.contains("footer"), "{e}");
    }
}
