//! The approval page's four-eyes section (`report::html`): a banner that
//! says at a glance whether the run is approved (and, when it is not,
//! what to do), who prepared it, the figures and digest to approve, and
//! every approval and revocation recorded. Every value is escaped.

use super::html::escape;
use crate::signoff::{self, Facts, Standing};
use crate::store::Action;
use std::fmt::Write as _;

/// The banner's styles, added to the page's.
pub const CSS: &str = ".banner{border:2px solid;padding:.6em .8em;margin:1em 0;font-weight:600}\
.banner.pending{border-color:#8a4b00;color:#8a4b00}.banner.void{border-color:#a00;color:#a00}\
.banner.approved{border-color:#1d6b1d;color:#1d6b1d}";

/// The section, as HTML.
pub fn section(f: &Facts) -> String {
    let mut h = String::new();
    let run = f.run.id;
    let (class, text) = match &f.standing {
        Standing::Approved(a) => (
            "approved",
            format!(
                "Approved by {} at {}: {} payout(s), digest {}.",
                a.by.shown(),
                a.at,
                a.payouts,
                signoff::short(&a.digest)
            ),
        ),
        Standing::NotApproved => (
            "pending",
            format!(
                "NOT YET APPROVED. Nothing is executed while approvals are required until \
                 someone other than the preparer checks these figures and records it: \
                 payrun approve {run} --as NAME{}",
                match f.set.not_initiated {
                    0 => String::new(),
                    n => format!(" ({n} payout(s) are not initiated yet)"),
                }
            ),
        ),
        other => (
            "void",
            format!(
                "APPROVAL {}: {}. It must be approved again: payrun approve {run} --as NAME",
                other.word().to_uppercase(),
                other.describe()
            ),
        ),
    };
    let _ = writeln!(
        h,
        "<div class=\"banner {class}\" id=\"approval\">{}</div>",
        escape(&text)
    );
    let preparer = match &f.preparer {
        Some(p) => format!("{} at {}", p.person.shown(), p.at),
        None => "not recorded (imported before payrun recorded it)".to_string(),
    };
    let _ = write!(
        h,
        "<h2>Approval</h2>\n<table><tr><th>Prepared by</th><td>{}</td></tr>\
         <tr><th>To approve</th><td>{} initiated payout(s), digest <code>{}</code></td></tr>",
        escape(&preparer),
        f.set.payouts,
        escape(&f.set.digest)
    );
    for (cur, t) in &f.set.figures {
        let _ = write!(
            h,
            "<tr><th>{c}</th><td class=\"n approve\">{} payout(s), total {} {c}</td></tr>",
            t.count,
            t.total,
            c = escape(cur)
        );
    }
    h.push_str("</table>\n");
    if !f.events.is_empty() {
        h.push_str("<ul>\n");
        for e in &f.events {
            let what = match e.action {
                Action::Approved => format!(
                    "approved by {} at {} ({} payout(s), digest {})",
                    e.by.shown(),
                    e.at,
                    e.payouts,
                    signoff::short(&e.digest)
                ),
                Action::Revoked => format!(
                    "revoked by {} at {}{}",
                    e.by.shown(),
                    e.at,
                    if e.reason.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", e.reason)
                    }
                ),
            };
            let _ = writeln!(h, "<li>{}</li>", escape(&what));
        }
        h.push_str("</ul>\n");
    }
    h
}
