//! What a run was allowed to do beyond the rules, kept as data in the
//! checkpoint (table `run_overrides`): a second payment to a person the
//! guard stopped and `--allow-repeats` let through, a totals row used as a
//! control total rather than paid, and (from `skipped_rows`) the rows left
//! out as already paid. The approval page, the report summary and the
//! audit trail show them; [`Overrides`] is the one read of them
//! (`Store::overrides`).

/// The kinds of override, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideKind {
    /// A payment to a person already paid (or being paid) in the period,
    /// or repeating a recent payment, made because of `--allow-repeats`.
    SecondPayment,
    /// A row with no payee, at the end of the data, whose amount is the
    /// sum of the rows above: used as a control total, not paid.
    TotalsRow,
}

impl OverrideKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OverrideKind::SecondPayment => "second_payment",
            OverrideKind::TotalsRow => "totals_row",
        }
    }

    /// `None` for a kind this payrun does not know (a newer one wrote it).
    pub fn parse(s: &str) -> Option<OverrideKind> {
        [OverrideKind::SecondPayment, OverrideKind::TotalsRow]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// The audit trail's action for a second payment let through.
pub const ALLOW_REPEAT_ACTION: &str = "allow_repeat";

/// An override recorded by an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOverride {
    pub kind: OverrideKind,
    pub row: u64,
    /// The payout it concerns (a second payment's own payout).
    pub payout_id: Option<i64>,
    /// The earlier payment it repeats.
    pub earlier_id: Option<i64>,
    /// The row's currency and amount (a decimal in the major unit): what
    /// was paid again, or the control total.
    pub currency: Option<String>,
    pub amount: Option<String>,
    /// The sentence shown: what was allowed, naming the earlier payment.
    pub detail: String,
}

/// An override as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub kind: OverrideKind,
    pub row: u64,
    /// The transaction id of the payout it concerns, if any.
    pub transaction_id: Option<String>,
    pub currency: Option<String>,
    pub amount: Option<String>,
    pub detail: String,
    pub at: String,
}

/// Second payments listed in full; beyond, a count.
pub const MAX_LISTED: usize = 100;

/// What a run did beyond the rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// The first [`MAX_LISTED`] second payments allowed, in row order.
    pub second_payments: Vec<Override>,
    /// How many second payments in all.
    pub second_payments_total: u64,
    /// The totals row used as a control total, if any.
    pub totals_row: Option<Override>,
    /// Rows left out as already paid (or held) by earlier runs.
    pub skipped_as_paid: u64,
}

impl Overrides {
    /// True when the run did nothing beyond the rules.
    pub fn is_empty(&self) -> bool {
        self.second_payments_total == 0 && self.totals_row.is_none() && self.skipped_as_paid == 0
    }

    /// The overrides one per line, as data: the totals row, the rows
    /// skipped as already paid, each second payment, then how many more.
    pub fn items(&self) -> Vec<OverrideLine> {
        let mut out = Vec::new();
        if let Some(t) = &self.totals_row {
            out.push(OverrideLine::TotalsRow(t.clone()));
        }
        if self.skipped_as_paid > 0 {
            out.push(OverrideLine::Skipped(self.skipped_as_paid));
        }
        for s in &self.second_payments {
            out.push(OverrideLine::SecondPayment(s.clone()));
        }
        let more = self
            .second_payments_total
            .saturating_sub(self.second_payments.len() as u64);
        if more > 0 {
            out.push(OverrideLine::More(more));
        }
        out
    }

    /// One sentence per override, in English (as approvals record them).
    pub fn lines(&self) -> Vec<String> {
        self.lines_in(crate::lang::Language::En)
    }

    /// [`Overrides::lines`] for people reading `language`.
    pub fn lines_in(&self, language: crate::lang::Language) -> Vec<String> {
        self.items()
            .iter()
            .map(|o| o.describe_in(language))
            .collect()
    }
}

/// One line of a run's overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverrideLine {
    /// The totals row used as a control total.
    TotalsRow(Override),
    /// Rows left out as already paid (or held) by earlier runs.
    Skipped(u64),
    /// A second payment let through.
    SecondPayment(Override),
    /// Second payments beyond those listed.
    More(u64),
    /// A sentence as an approval recorded it (said as is).
    Recorded(String),
}

impl OverrideLine {
    /// The sentence for people reading `language`. In English, a totals
    /// row and a second payment are their recorded sentences; in another
    /// language, made from the recorded figures (row, amount grouped,
    /// currency, id).
    pub fn describe_in(&self, language: crate::lang::Language) -> String {
        let t = language.text();
        let english = language == crate::lang::Language::En;
        let amount = |o: &Override| language.amount(o.amount.as_deref().unwrap_or(""));
        let cur = |o: &Override| o.currency.clone().unwrap_or_default();
        match self {
            OverrideLine::TotalsRow(o) | OverrideLine::SecondPayment(o) if english => {
                o.detail.clone()
            }
            OverrideLine::TotalsRow(o) => (t.override_totals_row)(o.row, &amount(o), &cur(o)),
            OverrideLine::SecondPayment(o) => (t.override_second_payment)(
                o.row,
                &amount(o),
                &cur(o),
                o.transaction_id.as_deref().unwrap_or("-"),
            ),
            OverrideLine::Skipped(n) => (t.override_skipped)(*n),
            OverrideLine::More(n) => (t.override_more)(*n),
            OverrideLine::Recorded(s) => s.clone(),
        }
    }
}

/// One recorded override as read: kind, row, transaction id, currency,
/// amount, detail, time.
pub(crate) type Read = (
    String,
    u64,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    String,
);

/// Reads recorded overrides from rows of [`Read`], in order, plus the two
/// counts: shared by both backends.
pub(crate) fn assemble(
    rows: impl IntoIterator<Item = Read>,
    second_payments_total: u64,
    skipped_as_paid: u64,
) -> Overrides {
    let mut out = Overrides {
        second_payments_total,
        skipped_as_paid,
        ..Overrides::default()
    };
    for (kind, row, transaction_id, currency, amount, detail, at) in rows {
        let Some(kind) = OverrideKind::parse(&kind) else {
            continue;
        };
        let o = Override {
            kind,
            row,
            transaction_id,
            currency,
            amount,
            detail,
            at,
        };
        match kind {
            OverrideKind::TotalsRow => out.totals_row = Some(o),
            OverrideKind::SecondPayment => out.second_payments.push(o),
        }
    }
    out
}

/// The read of a run's listed overrides: the totals row and the first
/// [`MAX_LISTED`] second payments (`?1`/`$1`: the run), as both backends
/// write it with their own placeholder.
pub(crate) fn listed_sql(param: &str) -> String {
    format!(
        "SELECT o.kind, o.row, p.transaction_id, o.currency, o.amount, o.detail, o.at
         FROM run_overrides o
         LEFT JOIN payouts p ON p.id = o.payout_id
         WHERE o.run_id = {param} AND (o.kind <> '{second}' OR o.id IN (
             SELECT id FROM run_overrides WHERE run_id = {param} AND kind = '{second}'
             ORDER BY id LIMIT {MAX_LISTED}))
         ORDER BY o.id",
        second = OverrideKind::SecondPayment.as_str()
    )
}

/// Second payments of a run, counted.
pub(crate) fn count_sql(param: &str) -> String {
    format!(
        "SELECT count(*) FROM run_overrides WHERE run_id = {param} AND kind = '{}'",
        OverrideKind::SecondPayment.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_lines_say_everything() {
        for k in [OverrideKind::SecondPayment, OverrideKind::TotalsRow] {
            assert_eq!(OverrideKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(OverrideKind::parse("later"), None);
        let read = |kind: &str, row, tx: Option<&str>, detail: &str| -> Read {
            let (cur, amount) = (Some("XOF".to_string()), Some("5".to_string()));
            let tx = tx.map(str::to_string);
            (kind.into(), row, tx, cur, amount, detail.into(), "t".into())
        };
        let rows = vec![
            read("totals_row", 9, None, "row 9: totals"),
            read("second_payment", 3, Some("pr-x"), "row 3: second"),
            read("later", 4, None, "unknown kind"),
        ];
        let o = assemble(rows, 3, 2);
        assert!(!o.is_empty());
        assert_eq!(o.totals_row.as_ref().unwrap().row, 9);
        assert_eq!(o.second_payments.len(), 1);
        let lines = o.lines();
        assert_eq!(lines[0], "row 9: totals");
        assert!(lines[1].starts_with("2 row(s) left out as already paid"));
        assert_eq!(lines[2], "row 3: second");
        assert!(lines[3].contains("2 more second payment"), "{lines:?}");
        assert!(Overrides::default().is_empty());
        assert!(Overrides::default().lines().is_empty());
    }
}
