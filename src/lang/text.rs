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
    /// The provider's latency (the HTTP call alone) and the queue wait
    /// (from wanting to send to the call leaving: the rate, a place in
    /// flight, a shared slot), each `8 ms` or `-`.
    pub latency: fn(&str, &str) -> String,
    /// The limiter in brief, in progress lines: rate, 429s, provider
    /// latency, queue wait, a pause (`paused`, or empty).
    pub limiter_brief: fn(u64, u64, &str, &str, &str) -> String,
    pub paused: fn(u64) -> String,
    /// The plain progress line: initiated, total, executed, failed,
    /// unknown, calls/s.
    pub progress_line: fn(u64, u64, u64, u64, u64, u64) -> String,
    pub progress_stopping: &'static str,
    /// The bars' labels (initiated, executed), their figures (failed,
    /// unknown, calls/s, clock), the stop notice, the execution bar of
    /// `--initiate-only`.
    pub bar_labels: [&'static str; 2],
    pub bar_figures: fn(u64, u64, u64, &str) -> String,
    pub bar_stopping: &'static str,
    pub bar_no_execute: &'static str,
    /// Events of a run: sandbox URL; run, worker, lease ms; run, file,
    /// started; file; payouts, seconds; report path; rows skipped.
    pub sandbox_started: fn(&str) -> String,
    pub joined: fn(i64, i64, u128) -> String,
    pub resuming: fn(i64, &str, &str) -> String,
    pub importing: fn(&str) -> String,
    pub imported: fn(u64, &str) -> String,
    pub writing_report: fn(&str) -> String,
    pub skipped: fn(u64) -> String,
    /// The status-call wait before the verdict: round, asked, settled,
    /// still open, waited, next ask (or empty).
    pub settling: fn(u64, u64, u64, u64, &str, &str) -> String,
    /// Run, approver, at, payouts, digest.
    pub approved_executing: fn(i64, &str, &str, u64, &str) -> String,
    pub nothing_executed: fn(&str) -> String,
    pub waiting_for_approval: fn(&str) -> String,
    /// Someone other than the preparer (named, or empty when unknown).
    pub someone_else: fn(&str) -> String,
    /// Run, not initiated, file, who, the approve command.
    pub unapproved_not_initiated: fn(i64, u64, &str, &str, &str) -> String,
    /// Run, who, the approve command.
    pub unapproved_plain: fn(i64, &str, &str) -> String,
    /// Run, where the approval stands, the approve command.
    pub unapproved_again: fn(i64, &str, &str) -> String,
    /// Where an approval stands: by, at; approval by, at, revoked by, at,
    /// reason; approval by, at, why.
    pub standing_approved: fn(&str, &str) -> String,
    pub standing_revoked: fn(&str, &str, &str, &str, &str) -> String,
    pub standing_void: fn(&str, &str, &str) -> String,
    /// The approval page's banner of a revoked or void approval: standing
    /// word (`revoked`, `void`), where it stands, run.
    pub banner_void: fn(&str, &str, i64) -> String,
    /// A field error: row, column, value, message; a row error: row,
    /// message.
    pub field_error: fn(u64, &str, &str, &str) -> String,
    pub row_error: fn(u64, &str) -> String,
    /// Rejected, rows, rejected.csv.
    pub rejected_nothing_sent: fn(u64, u64, &str) -> String,
    pub ids_used: &'static str,
    /// `... and N more` under a list.
    pub and_more: fn(u64) -> String,
    /// Rows repeating payments, what to do.
    pub repeats_found: fn(u64, &str) -> String,
    /// What to do about repeats, for this run's period.
    pub repeats_what_to_do: fn(&str) -> String,
    pub not_failed_rows: fn(u64) -> String,
    /// Run, payouts, file.
    pub import_only_done: fn(i64, u64, &str) -> String,
    pub note: fn(&str) -> String,
    /// Overrides: totals row (row, amount, currency); rows skipped as
    /// paid; a second payment (row, amount, currency, transaction id);
    /// more second payments.
    pub override_totals_row: fn(u64, &str, &str) -> String,
    pub override_skipped: fn(u64) -> String,
    pub override_second_payment: fn(u64, &str, &str, &str) -> String,
    pub override_more: fn(u64) -> String,
    /// Why an approval is void: the approver prepared it (approver,
    /// preparer); a currency's figures (currency, approved count and
    /// total, count and total now: plain, the text writes them); a payout
    /// left in a state (row, id, state shown), gone (row, id), not
    /// approved (row, id, amount plain, currency), altered (row, id, what
    /// was approved, what is now, each from `void_field`: field's machine
    /// name, value); more changes; the digest (now, approved); an override
    /// since (its sentence); approved overrides dropped.
    pub void_self_approved: fn(&str, &str) -> String,
    pub void_figures: fn(&str, u64, &str, u64, &str) -> String,
    pub void_left: fn(u64, &str, &str) -> String,
    pub void_gone: fn(u64, &str) -> String,
    pub void_joined: fn(u64, &str, &str, &str) -> String,
    pub void_altered: fn(u64, &str, &str, &str) -> String,
    pub void_field: fn(&str, &str) -> String,
    pub void_more: fn(u64) -> String,
    pub void_digest: fn(&str, &str) -> String,
    pub void_override: fn(&str) -> String,
    pub void_dropped: fn(u64) -> String,
    /// Why a run stopped: the key refused (message, run), interrupted,
    /// the provider unreachable, a configuration error, the lease lost.
    pub stop_unauthorized: fn(&str, i64) -> String,
    pub stop_interrupted: &'static str,
    pub stop_unreachable: fn(&str) -> String,
    pub stop_config: fn(&str) -> String,
    pub stop_lease: fn(&str) -> String,
    /// Ctrl-C: the first, the second, calls still in flight after N s.
    pub stopping_after_flight: &'static str,
    pub quitting_now: &'static str,
    pub still_in_flight: fn(u64) -> String,
    /// `--initiate-only`: control totals written to (path); approval page
    /// of (run, path); done (initiated, flags); approval (standing, run).
    pub control_totals: fn(&str) -> String,
    pub approval_page_at: fn(i64, &str) -> String,
    pub initiation_done: fn(u64, &str) -> String,
    pub approval_needed: fn(&str, i64) -> String,
    pub processing_left: fn(u64) -> String,
    /// `payrun approve`: the run (id, file, period, created), file sha,
    /// prepared by (name, at), preparer unknown, initiated payouts
    /// (count, digest, not initiated), per currency (currency, count,
    /// total), approval withdrawn (run, by, at), already approved (run),
    /// approved now (run, by, at, payouts, digest, file), refused with
    /// nothing recorded, the question (run, name), no terminal (run,
    /// name).
    pub facts_run: fn(i64, &str, &str, &str) -> String,
    pub facts_sha: fn(&str) -> String,
    pub facts_prepared: fn(&str, &str) -> String,
    pub facts_prepared_unknown: &'static str,
    pub facts_initiated: fn(u64, &str, u64) -> String,
    pub facts_currency: fn(&str, u64, &str) -> String,
    pub approval_withdrawn: fn(i64, &str, &str) -> String,
    pub approved_already: fn(i64) -> String,
    pub approved_now: fn(i64, &str, &str, u64, &str, &str) -> String,
    pub nothing_recorded: &'static str,
    pub confirm_approve: fn(i64, &str) -> String,
    pub no_terminal: fn(i64, &str) -> String,
    /// `payrun status`: database, no runs (db), a run (id, file, created,
    /// rows, finished, period), skipped, states, a currency (currency,
    /// cells), prepared by (name or empty), approval (preparer part,
    /// standing).
    pub status_database: fn(&str) -> String,
    pub status_no_runs: fn(&str) -> String,
    pub status_run: fn(i64, &str, &str, u64, bool, &str) -> String,
    pub status_skipped: fn(u64) -> String,
    pub status_states: fn(&str) -> String,
    pub status_prepared: fn(&str) -> String,
    pub status_approval: fn(&str, &str) -> String,
    /// `payrun validate`'s rejected rows: heading, more (count, whether
    /// a rejected file is written), where they are (path), none written.
    pub rejected_heading: &'static str,
    pub more_rejected: fn(u64, bool) -> String,
    pub rejected_in_file: fn(&str) -> String,
    pub rejected_no_file: &'static str,
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
    /// `payrun init`: a file written (path); what to do next (the
    /// template's name); the config written for a payroll (config, file);
    /// the `[columns]` table's heading when the config exists (config,
    /// file) and when it was written (config, file).
    /// `payrun approve` refused: the preparer (run, preparer); payouts
    /// not initiated (run, count); nothing initiated (run); finished
    /// (run); changed meanwhile (run); nothing to revoke (run, where the
    /// approval stands).
    pub refused_preparer: fn(i64, &str) -> String,
    pub refused_not_initiated: fn(i64, u64) -> String,
    pub refused_empty: fn(i64) -> String,
    pub refused_finished: fn(i64) -> String,
    pub refused_changed: fn(i64) -> String,
    pub refused_nothing_to_revoke: fn(i64, &str) -> String,
    pub init_wrote: fn(&str) -> String,
    pub init_next: fn(&str) -> String,
    pub init_wrote_for: fn(&str, &str) -> String,
    pub init_exists: fn(&str, &str) -> String,
    pub init_table_written: fn(&str, &str) -> String,
    /// `payrun sandbox`'s first lines: the URL (last on its line: scripts
    /// take it), the API key, the seed.
    pub sandbox_listening: fn(&str) -> String,
    pub sandbox_key: fn(&str) -> String,
    pub sandbox_seed: fn(u64) -> String,
    /// `payrun probe`'s frame: the heading (URL, test payout id); the
    /// labels of a step's lines (sent, answer, body, profile, finding);
    /// no answer; an answer (HTTP part, code); a finding's mark (ok,
    /// check); resend not safe (why), not proven (why).
    pub probe_heading: fn(&str, &str) -> String,
    pub probe_labels: [&'static str; 5],
    pub probe_no_answer: &'static str,
    pub probe_answer: fn(&str, &str) -> String,
    pub probe_marks: [&'static str; 2],
    pub probe_resend_unsafe: fn(&str) -> String,
    pub probe_resend_unproven: fn(&str) -> String,
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
