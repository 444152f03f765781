//! The English texts.

use super::Text;

pub const TEXT: Text = Text {
    report_header: [
        "row",
        "transaction_id",
        "account_id",
        "beneficiary",
        "amount",
        "currency",
        "state",
        "provider_code",
        "provider_message",
        "attempts",
        "initiated_at",
        "executed_at",
    ],
    summary_header: ["currency", "state", "count", "total"],
    approval_csv_header: ["currency", "count", "total", "note"],
    states: &[],
    html_lang: "en",
    page_title: |id| format!("payrun run {id}: approval"),
    page_heading: |id| format!("Payroll run {id}: approval"),
    run_fields: [
        "File", "SHA-256", "Period", "Label", "Provider", "Created", "Rows", "States",
    ],
    no_period: "(none recorded: a run from before periods)",
    rows_value: |rows, rejected| format!("{rows} ({rejected} rejected)"),
    totals_heading: "Totals per currency",
    totals_header: ["Currency", "Payouts", "Total", "By state"],
    notices_heading: "Notices",
    no_notices: "No notices: every row passed validation.",
    notice_rejected: |row, why| format!("row {row} rejected: {why}"),
    notice_unknown: |n| {
        format!(
            "{n} payout(s) have an unknown outcome: settle them with `payrun reconcile` before paying again"
        )
    },
    notice_same_name: |id, file, created, finished| {
        format!(
            "run {id} of a file of the same name ({file}, {created}, {}) is also in this database: check this is not the same payroll again",
            if finished { "finished" } else { "unfinished" }
        )
    },
    beneficiaries_heading: "Beneficiaries",
    beneficiaries_header: [
        "Row",
        "Beneficiary",
        "Account",
        "Transaction id",
        "Amount",
        "State",
    ],
    audit_heading: "Audit trail",
    audit_empty: "Nothing settled by a statement, a status call, an operator or a re-send, and nothing allowed beyond the rules.",
    audit_header: ["Time", "Transaction id", "Action", "From", "To", "Reason"],
    sign_off: ["Approved by", "Date", "Signature"],
    banner_approved: |by, at, n, digest| {
        format!("Approved by {by} at {at}: {n} payout(s), digest {digest}.")
    },
    banner_pending: |run, waiting| {
        format!(
            "NOT YET APPROVED. Nothing is executed while approvals are required until \
             someone other than the preparer checks these figures and records it: \
             payrun approve {run} --as NAME{}",
            match waiting {
                0 => String::new(),
                n => format!(" ({n} payout(s) are not initiated yet)"),
            }
        )
    },
    approval_heading: "Approval",
    approval_fields: ["Prepared by", "To approve"],
    preparer_unknown: "not recorded (imported before payrun recorded it)",
    by_at: |by, at| format!("{by} at {at}"),
    to_approve: |n, digest| format!("{n} initiated payout(s), digest {digest}"),
    payouts_total: |n, total, cur| format!("{n} payout(s), total {total} {cur}"),
    report_line: |p| format!("report: {p}"),
    failed_line: |p| {
        format!("failed rows: {p} (correct them and run that file: it pays those rows only)")
    },
    next: "next: ",
    all_executed: |n| format!("all {n} payout(s) executed; nothing left to do"),
    settled_by_resend: |n| {
        format!(
            "{n} of them had an unknown outcome on the way and were settled by a re-send under the same transaction id (the audit trail of `payrun summary --html` lists them)"
        )
    },
    rows_list: |count, shown, more| {
        let word = if count == 1 { "row" } else { "rows" };
        if more > 0 {
            format!("{word} {shown} and {more} more")
        } else {
            format!("{word} {shown}")
        }
    },
    waiting_top_up: |rows, cur| {
        format!(
            "{rows} wait for a top-up of the {cur} wallet: top it up, then run the same command again"
        )
    },
    may_have_paid: |rows, run| {
        format!(
            "{rows} may or may not have been paid: check them with the provider, then settle them with `payrun reconcile --run {run}`"
        )
    },
    not_finished: |rows, run| {
        format!(
            "{rows} not finished: run the same command again to resume (or `payrun cancel {run}` to end the run)"
        )
    },
    failed_for_good: |rows, report| {
        format!(
            "{rows} failed for good (the provider refused them; see {report}): correct them and pay them in a new file"
        )
    },
    initiated_only: |n| {
        format!(
            "{n} payout(s) initiated, no money moved: once approved, run again without --initiate-only"
        )
    },
    rate_settled: |rate, r429, events, rest| {
        format!(
            "rate: settled at {rate} calls/s; {r429} answer(s) 429 in {events} congestion event(s); {rest}"
        )
    },
    rate_no_limit: |peak, rest| format!("rate: no limit met; peak {peak} calls/s; {rest}"),
    latency: |p, q| {
        format!(
            "provider latency {p} (the call itself); queue wait {q} (for the rate or a place in flight)"
        )
    },
    limiter_brief: |rate, r429, l, q, paused| {
        format!("rate {rate}/s, 429s {r429}, latency {l}, queue {q}{paused}")
    },
    paused: |s| format!(", paused {s}s"),
    progress_line: |i, t, e, f, u, r| {
        format!("{i}/{t} initiated, {e}/{t} executed, {f} failed, {u} unknown, {r} calls/s")
    },
    progress_stopping: "stopping",
    bar_labels: ["initiated", "executed"],
    bar_figures: |f, u, r, clock| format!("failed {f}  unknown {u}  {r} calls/s  {clock}"),
    bar_stopping: "stopping: finishing the calls in flight (Ctrl-C again quits at once)",
    bar_no_execute: "executed  (not with --initiate-only)",
    sandbox_started: |url| format!("using the built-in sandbox at {url} (no real money moves)"),
    joined: |run, worker, lease| {
        format!(
            "working on run {run} as worker {worker} (lease {lease} ms); other workers may share it"
        )
    },
    resuming: |run, file, at| format!("resuming run {run} of {file} (started {at})"),
    importing: |file| {
        format!(
            "checking {file} and recording its rows as a new run (nothing is sent before every row is recorded)"
        )
    },
    imported: |n, secs| format!("recorded {n} payout(s) in {secs} s"),
    writing_report: |p| format!("writing the report {p}"),
    skipped: |rows| {
        format!(
            "{rows} row(s) were already paid, are in flight, or were ended by earlier runs and are not \
             sent again; the report names the run and row of each"
        )
    },
    settling: |round, asked, settled, open, waited, next| {
        let next = if next.is_empty() {
            String::new()
        } else {
            format!("; asking again in {next}")
        };
        format!(
            "status call round {round}: {asked} asked, {settled} settled, {open} still not final after {waited}{next}"
        )
    },
    approved_executing: |run, by, at, n, digest| {
        format!("run {run} approved by {by} at {at} ({n} payout(s), digest {digest}): executing")
    },
    nothing_executed: |what| format!("nothing was executed: {what}"),
    waiting_for_approval: |what| format!("{what}. Waiting for it (Ctrl-C to stop)"),
    someone_else: |name| {
        if name.is_empty() {
            "someone other than its preparer".to_string()
        } else {
            format!("someone other than its preparer, {name},")
        }
    },
    unapproved_not_initiated: |run, n, file, who, approve| {
        format!(
            "run {run} is not approved, and {n} payout(s) are not initiated yet. Run `payrun run {file} \
             --initiate-only`; then {who} approves it: {approve}"
        )
    },
    unapproved_plain: |run, who, approve| {
        format!("run {run} is not approved (require_approval = true); {who} approves it: {approve}")
    },
    unapproved_again: |run, standing, approve| {
        format!("run {run}: {standing}. It must be approved again: {approve}")
    },
    standing_approved: |by, at| format!("approved by {by} at {at}"),
    standing_revoked: |by, at, rby, rat, reason| {
        format!(
            "the approval by {by} at {at} was revoked by {rby} at {rat}{}",
            if reason.is_empty() {
                String::new()
            } else {
                format!(" ({reason})")
            }
        )
    },
    standing_void: |by, at, why| format!("the approval by {by} at {at} is void: {why}"),
    banner_void: |word, standing, run| {
        format!(
            "APPROVAL {}: {standing}. It must be approved again: payrun approve {run} --as NAME",
            word.to_uppercase()
        )
    },
    field_error: |row, col, value, msg| format!("row {row}, column {col}, value {value}: {msg}"),
    row_error: |row, msg| format!("row {row}: {msg}"),
    rejected_nothing_sent: |rejected, rows, path| {
        format!(
            "{rejected} of {rows} rows rejected; nothing was sent. Fix them (see {path}) and run again."
        )
    },
    ids_used: "transaction ids already used; nothing was imported or sent.",
    and_more: |n| format!("... and {n} more"),
    repeats_found: |n, what| {
        format!(
            "{n} row(s) pay a person already paid (or being paid) in this period, \
             repeat a recent payment of the same amount, or repeat another row of the file; \
             nothing was recorded or sent. {what}"
        )
    },
    repeats_what_to_do: |period| {
        format!(
            "A correction is a new payment of the difference (a row of the missing amount), or a \
             cancellation of the earlier payment first (`payrun cancel RUN` while it is not \
             executed); a new batch in the same month is a period of its own (this run's is \
             {period}: e.g. --period {period}-bonus). If these people really are to be paid again, \
             check the list and run again with --allow-repeats: each second payment is then \
             recorded in the audit trail and shown on the approval page."
        )
    },
    not_failed_rows: |n| {
        format!(
            "{n} row(s) of this failed.csv name payouts that did not fail (paid, held \
             or still open); nothing was recorded or sent. Remove those rows: a failed.csv \
             re-pays failed payouts only (an older failed.csv, after a later run paid them?)."
        )
    },
    import_only_done: |run, n, file| {
        format!("run {run} holds {n} payout(s) of {file}; nothing was sent (--import-only)")
    },
    note: |line| format!("note: {line}"),
    override_totals_row: |row, amount, cur| {
        format!("row {row}: a totals row ({amount} {cur}) used as a control total, not paid")
    },
    override_skipped: |n| {
        format!(
            "{n} row(s) left out as already paid (or held) by earlier runs: listed in the \
             report as skipped, not paid again"
        )
    },
    override_second_payment: |row, amount, cur, tx| {
        format!(
            "row {row}: a second payment of {amount} {cur} let through by --allow-repeats ({tx})"
        )
    },
    override_more: |n| format!("... and {n} more second payment(s) (`payrun reconcile --audit`)"),
    void_self_approved: |by, preparer| {
        format!("{by} approved a run {preparer} prepared: the approver must be someone else")
    },
    void_figures: |cur, was_n, was_total, n, total| {
        format!(
            "{cur}: {was_n} payout(s) totalling {was_total} approved, {n} totalling {total} now"
        )
    },
    void_left: |row, tx, state| format!("row {row} ({tx}) is {state} since the approval"),
    void_gone: |row, tx| format!("row {row} ({tx}) is gone since the approval"),
    void_joined: |row, tx, amount, cur| {
        format!("row {row} ({tx}, {amount} {cur}) was not approved")
    },
    void_altered: |row, tx, was, now| format!("row {row} ({tx}): {was} approved, {now} now"),
    void_field: |name, value| format!("{name} {value}"),
    void_more: |n| format!("... and {n} more change(s)"),
    void_digest: |now, approved| {
        format!("the payout set's digest is {now} now, {approved} approved")
    },
    void_override: |o| format!("an override since the approval: {o}"),
    void_dropped: |n| format!("{n} approved override(s) no longer recorded"),
    stop_unauthorized: |msg, run| {
        format!(
            "the provider refused the API key ({msg}); nothing more was sent. \
             Fix the key and run the same command again to resume \
             (or end the run with `payrun cancel {run}`)"
        )
    },
    stop_interrupted: "interrupted; in-flight calls finished and were recorded. \
                       Run the same command again to resume.",
    stop_unreachable: |msg| {
        format!(
            "the provider is not accepting requests ({msg}); progress is saved. \
             Run the same command again to resume"
        )
    },
    stop_config: |msg| format!("configuration error: {msg}"),
    stop_lease: |msg| format!("stopped: {msg}"),
    stopping_after_flight: "stopping after the calls in flight (Ctrl-C again to quit at once)",
    quitting_now: "quitting now; run the same command again to resume",
    still_in_flight: |secs| {
        format!(
            "calls still in flight after {secs}s; quitting now. Their intents are \
             recorded: run the same command again to resume"
        )
    },
    control_totals: |path| format!("control totals (accepted initiations), written to {path}:"),
    approval_page_at: |run, path| format!("approval page of run {run}: {path}"),
    initiation_done: |n, flags| {
        format!(
            "initiation done, no money moved. {n} payout(s) initiated; once approved, \
             run again without --initiate-only (add {flags} to make sure the totals still hold)."
        )
    },
    approval_needed: |standing, run| {
        format!(
            "approval: {standing}; someone other than you approves run {run}: `payrun approve {run} --as NAME`"
        )
    },
    processing_left: |n| {
        format!(
            "{n} payout(s) accepted by the provider but not final (processing): \
             money may still move. Check them with the provider, or list them with `payrun reconcile`."
        )
    },
    facts_run: |id, file, period, created| {
        format!("run {id}  {file}  period {period}  created {created}")
    },
    facts_sha: |sha| format!("  file sha256 {sha}"),
    facts_prepared: |by, at| format!("  prepared by {by} at {at}"),
    facts_prepared_unknown: "  prepared by: not recorded (imported before payrun recorded it)",
    facts_initiated: |n, digest, waiting| {
        format!(
            "  initiated payouts: {n} (digest {digest}){}",
            match waiting {
                0 => String::new(),
                w => format!("; {w} not initiated yet"),
            }
        )
    },
    facts_currency: |cur, n, total| format!("    {cur}: {n} payout(s), total {total}"),
    approval_withdrawn: |run, by, at| {
        format!(
            "run {run}: approval withdrawn by {by} at {at}; nothing of it will be executed \
             until someone approves it again"
        )
    },
    approved_already: |run| format!("run {run} is approved already; nothing recorded"),
    approved_now: |run, by, at, n, digest, file| {
        format!(
            "run {run} approved by {by} at {at}: {n} payout(s), digest {digest}. The execute step \
             (`payrun run {file}`) may now send them."
        )
    },
    nothing_recorded: "not approved; nothing was recorded",
    confirm_approve: |run, by| {
        format!("Approve run {run} as {by}? These payouts will be executed. Type yes to approve: ")
    },
    no_terminal: |run, by| {
        format!(
            "no terminal to confirm on: read the figures above, then run again with --yes to \
             approve run {run} as {by} (nothing was recorded)"
        )
    },
    status_database: |db| format!("database: {db}"),
    status_no_runs: |db| format!("no runs in {db}"),
    status_run: |id, file, created, rows, finished, period| {
        format!(
            "run {id}  {file}  {created}  {rows} rows  {}{}",
            if finished { "finished" } else { "in progress" },
            if period.is_empty() {
                String::new()
            } else {
                format!("  period {period}")
            }
        )
    },
    status_skipped: |n| format!("  already paid by earlier runs, not sent: {n}"),
    status_states: |states| format!("  states: {states}"),
    status_prepared: |by| {
        if by.is_empty() {
            "preparer not recorded".to_string()
        } else {
            format!("prepared by {by}")
        }
    },
    status_approval: |preparer, standing| format!("  {preparer}; approval: {standing}"),
    rejected_heading: "Rejected rows:",
    more_rejected: |n, file| {
        format!(
            "... and {n} more rejected rows{}",
            if file {
                " (all are in the rejected file)"
            } else {
                " (use --rejected PATH to get them all)"
            }
        )
    },
    rejected_in_file: |p| {
        format!(
            "The rejected rows and their reasons are in {p}: fix them there and validate that file again."
        )
    },
    rejected_no_file: "Nothing was sent. Add --rejected rejected.csv to get the rejected rows with their reasons in a file.",
    validate_head: |file, rows, valid, rejected| {
        format!(
            "{file}: {rows} row{}, {valid} valid, {rejected} rejected",
            if rows == 1 { "" } else { "s" }
        )
    },
    valid_per_currency: "Valid rows per currency:",
    valid_table_header: ["currency", "rows", "total"],
    all_valid: "All rows are valid.",
    no_rejected_file: |path, earlier| {
        format!(
            "No rejected rows: nothing written to {path}{}.",
            if earlier {
                " (the file there is from an earlier check)"
            } else {
                ""
            }
        )
    },
    summary_run: |id, file, sha, rows, rejected| {
        format!("run {id}  {file}  sha256 {sha}  {rows} rows ({rejected} rejected)")
    },
    summary_notice: "notice: ",
    summary_approval: "approval: ",
    not_approved_yet: "not approved yet",
    refused_preparer: |run, preparer| {
        format!(
            "run {run} was prepared (imported) by {preparer}: the approver must be someone else \
             (four eyes); ask a colleague to run `payrun approve {run}` as themselves"
        )
    },
    refused_not_initiated: |run, waiting| {
        format!(
            "{waiting} payout(s) of run {run} are not initiated yet: finish the initiation \
             (`payrun run FILE --initiate-only`), then approve the figures it prints"
        )
    },
    refused_empty: |run| format!("run {run} has no initiated payout: there is nothing to approve"),
    refused_finished: |run| format!("run {run} is finished: there is nothing left to approve"),
    refused_changed: |run| {
        format!(
            "run {run} changed while you were looking at it (a payout was initiated, cancelled or \
             altered): nothing was recorded; run `payrun approve {run}` again to see it as it is now"
        )
    },
    refused_nothing_to_revoke: |run, standing| {
        format!("run {run} has no approval to revoke ({standing})")
    },
    init_wrote: |p| format!("wrote {p}"),
    init_next: |csv| {
        format!(
            "next: fill {csv} (or the .xlsx), then `payrun validate {csv}` and \
             `payrun run {csv} --sandbox` to rehearse"
        )
    },
    init_wrote_for: |p, file| format!("wrote {p} for {file}"),
    init_exists: |p, file| {
        format!(
            "# {p} exists and is left alone: paste this table into it; then check with `payrun validate {file}`."
        )
    },
    init_table_written: |p, file| {
        format!("# The [columns] table written to {p}; next: `payrun validate {file}`.")
    },
    sandbox_listening: |url| format!("payrun sandbox listening on {url}"),
    sandbox_key: |key| format!("api key: {key}"),
    sandbox_seed: |seed| format!("seed: {seed}"),
    probe_heading: |url, tx| {
        format!("payrun probe of {url} (test payout {tx}: initiated, never executed)")
    },
    probe_labels: [
        "sent:    ",
        "answer:  ",
        "body:    ",
        "profile: ",
        "finding: ",
    ],
    probe_no_answer: "no answer",
    probe_answer: |http, code| format!("{http}, code {code}"),
    probe_marks: ["ok", "CHECK"],
    probe_resend_unsafe: |why| format!("resend: NOT safe: {why}"),
    probe_resend_unproven: |why| format!("resend: not proven: {why}"),
};
