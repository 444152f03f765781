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
    latency: |l| format!("latency {l} (from the call's turn to its answer)"),
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
};
