//! Rules over a file's rows as a whole rather than one row: a totals row
//! at the bottom of a sheet (a control total, never a payout) and the
//! config's `[skip]` rule for rows marked not to be paid.

use super::{ControlTotal, SkipRule, Summary, amount, columns, fields};
use crate::config::Config;
use crate::input::RawRow;
use anyhow::Result;
use rust_decimal::Decimal;

pub(super) enum Totals {
    Row,
    Matches(ControlTotal),
    Differs(String),
}

/// Whether `raw` is a totals row: no account, and a cell labelled total
/// (`TOTAL`, `Total général`) or an amount equal to the sum of the valid
/// rows above (one currency). Such a row is a control total, not a payout.
pub(super) fn totals_row(
    raw: &RawRow,
    cols: &columns::Columns,
    summary: &Summary,
    cfg: &Config,
) -> Totals {
    use columns::Col;
    let cell = |c: Col| {
        cols.index(c)
            .and_then(|i| raw.fields.get(i))
            .map_or("", fields::clean)
    };
    if !cell(Col::AccountId).is_empty() || summary.valid == 0 {
        return Totals::Row;
    }
    let labelled = raw.fields.iter().any(|f| {
        let k = columns::normalize(f);
        k.starts_with("total") || k == "somme" || k == "grandtotal"
    });
    let single = (summary.currencies.len() == 1)
        .then(|| summary.currencies.iter().next())
        .flatten();
    let parsed = single.and_then(|(code, sum)| {
        let (code, exp) = fields::currency(code).ok()?;
        let a = amount::parse_amount_with(
            cell(Col::Amount),
            code,
            exp,
            crate::config::AmountUnit::Minor,
            cfg.number_format,
            Some(Decimal::MAX),
        )
        .ok()?;
        Some((code, a.value, sum.total))
    });
    match (parsed, labelled) {
        (Some((code, value, sum)), _) if value == sum => Totals::Matches(ControlTotal {
            row: raw.row,
            currency: code.to_owned(),
            total: value,
        }),
        (Some((code, value, sum)), true) => Totals::Differs(format!(
            "this is a totals row of {value} {code}, but the valid rows above add up to {sum} {code}: a row may be missing, changed or rejected; correct the rows or the total"
        )),
        (None, true) => Totals::Differs(
            "this looks like a totals row, but its amount cannot be compared with the rows above (several currencies, or no amount): remove the row from the file".to_owned(),
        ),
        _ => Totals::Row,
    }
}

/// The `[skip]` rule's column index in `header` and its values, folded.
pub(super) fn skip_rule(rule: &SkipRule, header: &RawRow) -> Result<(usize, Vec<String>)> {
    let wanted = columns::normalize(&rule.column);
    let Some(i) = header
        .fields
        .iter()
        .position(|h| columns::normalize(h) == wanted)
    else {
        anyhow::bail!(
            "the config's [skip] rule names the column {}, which is not a header of the file: write the header as it appears in the file's first row",
            columns::excerpt(&rule.column)
        );
    };
    if rule.values.is_empty() {
        anyhow::bail!(
            "the config's [skip] rule has no values: list the values that mark a row as not to be paid, e.g. values = [\"annulé\", \"non\"]"
        );
    }
    Ok((
        i,
        rule.values.iter().map(|v| columns::normalize(v)).collect(),
    ))
}
