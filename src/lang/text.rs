//! The texts of one language, as one struct: adding a text is a field
//! here and a line in `en` and in `fr`, and the compiler names a language
//! that misses it. Texts with figures in them are functions; amounts in
//! them come already written by `Language::amount`.

/// Every human-facing text payrun writes, in one language.
#[derive(Debug)]
pub struct Text {
    /// The report's header. The English names are the fixed machine names
    /// reconciliation scripts key on.
    pub report_header: [&'static str; 12],
    /// The report summary's header (currency, state, count, total); also
    /// the printed summary table's.
    pub summary_header: [&'static str; 4],
    /// `approval-run-N.csv`'s header (currency, count, total, note).
    pub approval_csv_header: [&'static str; 4],
    /// A payout state's name for people (`executed`), from its machine
    /// name; pairs (machine, shown); a state not listed is shown as is.
    pub states: &'static [(&'static str, &'static str)],
    /// `<html lang>` of the approval page.
    pub html_lang: &'static str,
    /// The approval page's title and heading, for a run id.
    pub page_title: fn(i64) -> String,
    pub page_heading: fn(i64) -> String,
    /// The run table's row names: file, SHA-256, period, label, provider,
    /// created, rows, states.
    pub run_fields: [&'static str; 8],
    pub no_period: &'static str,
    /// `12 (1 rejected)`: rows and rejected rows.
    pub rows_value: fn(u64, u64) -> String,
    pub totals_heading: &'static str,
    /// Currency, payouts, total, by state.
    pub totals_header: [&'static str; 4],
    pub notices_heading: &'static str,
    pub no_notices: &'static str,
    /// Row, reason.
    pub notice_rejected: fn(u64, &str) -> String,
    pub notice_unknown: fn(u64) -> String,
    /// Other run id, its file, created, finished.
    pub notice_same_name: fn(i64, &str, &str, bool) -> String,
    pub beneficiaries_heading: &'static str,
    /// Row, beneficiary, account, transaction id, amount, state.
    pub beneficiaries_header: [&'static str; 6],
    pub audit_heading: &'static str,
    pub audit_empty: &'static str,
    /// Time, transaction id, action, from, to, reason.
    pub audit_header: [&'static str; 6],
    /// Approved by, date, signature.
    pub sign_off: [&'static str; 3],
    /// The four-eyes banner: approved (by, at, payouts, digest).
    pub banner_approved: fn(&str, &str, u64, &str) -> String,
    /// Not approved (run id, payouts not initiated yet).
    pub banner_pending: fn(i64, u64) -> String,
    pub approval_heading: &'static str,
    /// Prepared by, to approve.
    pub approval_fields: [&'static str; 2],
    /// Preparer not recorded.
    pub preparer_unknown: &'static str,
    /// `{name} at {time}`.
    pub by_at: fn(&str, &str) -> String,
    /// Initiated payouts to approve and their digest.
    pub to_approve: fn(u64, &str) -> String,
    /// `3 payout(s), total 6,091,999 XOF`: count, total, currency.
    pub payouts_total: fn(u64, &str, &str) -> String,
    /// Terminal: `report: PATH`.
    pub report_line: fn(&str) -> String,
    pub failed_line: fn(&str) -> String,
    /// Before each verdict line.
    pub next: &'static str,
    /// The verdict: all executed (count), settled by a re-send (count).
    pub all_executed: fn(u64) -> String,
    pub settled_by_resend: fn(u64) -> String,
    /// `rows 3, 7 and 2 more` from the rows shown and the count not shown.
    pub rows_list: fn(u64, &str, u64) -> String,
    pub waiting_top_up: fn(&str, &str) -> String,
    pub may_have_paid: fn(&str, i64) -> String,
    pub not_finished: fn(&str, i64) -> String,
    pub failed_for_good: fn(&str, &str) -> String,
    pub initiated_only: fn(u64) -> String,
    /// The rate line: settled rate, 429s, congestion events, provider
    /// latency, queue wait, peak.
    pub rate_settled: fn(u64, u64, u64, &str) -> String,
    pub rate_no_limit: fn(u64, &str) -> String,
    /// `latency 8 ms` with what it spans.
    pub latency: fn(&str) -> String,
    /// `payrun validate`: file, rows, valid, rejected.
    pub validate_head: fn(&str, u64, u64, u64) -> String,
    pub valid_per_currency: &'static str,
    /// Currency, rows, total.
    pub valid_table_header: [&'static str; 3],
    pub all_valid: &'static str,
    /// `--rejected PATH` with every row valid: the path, whether a file
    /// from an earlier check is there.
    pub no_rejected_file: fn(&str, bool) -> String,
    /// `payrun summary`: run id, file, sha, rows, rejected.
    pub summary_run: fn(i64, &str, &str, u64, u64) -> String,
    pub summary_notice: &'static str,
    pub summary_approval: &'static str,
    pub not_approved_yet: &'static str,
}

impl Text {
    /// The name people read for a payout state.
    pub fn state<'a>(&self, machine: &'a str) -> &'a str {
        self.states
            .iter()
            .find(|(m, _)| *m == machine)
            .map_or(machine, |(_, shown)| shown)
    }
}
