//! The approval page's four-eyes section (`report::html`): a banner that
//! says at a glance whether the run is approved (and, when it is not,
//! what to do), who prepared it, the figures and digest to approve, and
//! every approval and revocation recorded. Every value is escaped.

use super::html::escape;
use crate::lang::Language;
use crate::signoff::{self, Facts, Standing};
use crate::store::Action;
use std::fmt::Write as _;

/// The banner's styles, added to the page's.
pub const CSS: &str = ".banner{border:2px solid;padding:.6em .8em;margin:1em 0;font-weight:600}\
.banner.pending{border-color:#8a4b00;color:#8a4b00}.banner.void{border-color:#a00;color:#a00}\
.banner.approved{border-color:#1d6b1d;color:#1d6b1d}";

/// The section, as HTML, in `language`.
pub fn section(f: &Facts, language: Language) -> String {
    let mut h = String::new();
    let t = language.text();
    let run = f.run.id;
    let (class, text) = match &f.standing {
        Standing::Approved(a) => (
            "approved",
            (t.banner_approved)(&a.by.shown(), &a.at, a.payouts, signoff::short(&a.digest)),
        ),
        Standing::NotApproved => ("pending", (t.banner_pending)(run, f.set.not_initiated)),
        other => (
            "void",
            (t.banner_void)(other.word(), &other.describe_in(language), run),
        ),
    };
    let _ = writeln!(
        h,
        "<div class=\"banner {class}\" id=\"approval\">{}</div>",
        escape(&text)
    );
    let preparer = match &f.preparer {
        Some(p) => (t.by_at)(&p.person.shown(), &p.at),
        None => t.preparer_unknown.to_string(),
    };
    let _ = write!(
        h,
        "<h2>{}</h2>\n<table><tr><th>{}</th><td>{}</td></tr>\
         <tr><th>{}</th><td>{}</td></tr>",
        escape(t.approval_heading),
        escape(t.approval_fields[0]),
        escape(&preparer),
        escape(t.approval_fields[1]),
        escape(&(t.to_approve)(f.set.payouts, &f.set.digest)),
    );
    for (cur, x) in &f.set.figures {
        let _ = write!(
            h,
            "<tr><th>{}</th><td class=\"n approve\">{}</td></tr>",
            escape(cur),
            escape(&(t.payouts_total)(
                x.count,
                &language.amount(&x.total.to_string()),
                cur
            ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{PayoutSet, Preparer, RunInfo};
    use crate::who::Person;

    #[test]
    fn the_banner_says_what_to_do_and_escapes_names() {
        let mut f = Facts {
            run: RunInfo {
                id: 4,
                identity: "i".into(),
                file_sha256: "s".into(),
                label: String::new(),
                file_path: "p.csv".into(),
                provider: "sandbox".into(),
                rows_total: 1,
                rows_rejected: 0,
                created_at: "t".into(),
                finished_at: None,
                period: "2026-05".into(),
                sheet: String::new(),
                id_scheme: 3,
            },
            preparer: Some(Preparer {
                person: Person {
                    name: "<b>Ama</b>".into(),
                    os_user: "ama".into(),
                    host: "h".into(),
                },
                at: "t0".into(),
            }),
            set: PayoutSet {
                not_initiated: 2,
                ..PayoutSet::default()
            },
            overrides: Vec::new(),
            events: Vec::new(),
            standing: Standing::NotApproved,
        };
        let h = section(&f, Language::En);
        assert!(h.contains("class=\"banner pending\""), "{h}");
        assert!(h.contains("payrun approve 4 --as NAME (2 payout(s) are not initiated yet)"));
        assert!(h.contains("&lt;b&gt;Ama&lt;/b&gt; (ama@h)"), "{h}");
        assert!(!h.contains("<b>Ama"), "{h}");
        f.standing = Standing::Void {
            approval: Box::default(),
            why: vec![crate::signoff::Why::OverrideAdded(
                crate::store::OverrideLine::Recorded("row 3 <x>".into()),
            )],
        };
        let h = section(&f, Language::En);
        assert!(
            h.contains("APPROVAL VOID") && h.contains("row 3 &lt;x&gt;"),
            "{h}"
        );
    }
}
