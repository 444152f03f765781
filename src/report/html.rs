//! The approval page (`payrun summary RUN --html FILE`, and
//! `approval-run-N.html` beside the report after `--initiate-only`): one self-contained HTML file
//! a manager can read and print before money moves — the run, the file and
//! its SHA-256, counts and totals per currency, every beneficiary with the
//! amount, and the notices (rejected rows, second payments allowed, a totals
//! row used, rows skipped as already paid, unknown payouts, other runs of a
//! file of the same name). No script, no external resource: it renders the
//! same offline, in a mail client or on paper. Every value is escaped.

use crate::lang::Language;
use crate::machine::State;
use crate::store::{ReportRow, RunInfo, Store, Totals};
use anyhow::Result;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Everything the page shows, gathered from the store.
#[derive(Debug, Clone)]
pub struct ApprovalPage {
    pub run: RunInfo,
    pub counts: BTreeMap<State, u64>,
    pub totals: Totals,
    pub rows: Vec<ReportRow>,
    pub notices: Vec<String>,
    /// The run's audit trail: (transaction id, time, action, from, to,
    /// reason) of every settlement by a statement, a status call, an
    /// operator or a re-send, and every override recorded.
    pub audit: Vec<[String; 6]>,
    /// Four eyes: the preparer, the set to approve, the approval's standing.
    pub approval: Option<crate::signoff::Facts>,
    /// The language of the page's words and amounts (config `language`).
    pub language: Language,
}

/// HTML-escapes text for element content and quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Reads what the page of `run_id` shows, in `language`.
pub fn gather(store: &Store, run_id: i64, language: Language) -> Result<Option<ApprovalPage>> {
    let t = language.text();
    let Some(run) = store.run(run_id)? else {
        return Ok(None);
    };
    let mut rows = Vec::new();
    store.for_each_report_row(run_id, |r| {
        rows.push(r.clone());
        Ok(())
    })?;
    let counts = store.state_counts(run_id)?;
    let mut notices = Vec::new();
    let rejected = rows.iter().filter(|r| r.state == State::Rejected.as_str());
    for r in rejected {
        notices.push((t.notice_rejected)(r.row, &r.provider_message));
    }
    // What the run was allowed beyond the rules: a second payment to a
    // person, a totals row used, rows left out as already paid.
    notices.extend(store.overrides(run_id)?.lines_in(language));
    let unknown = counts.get(&State::Unknown).copied().unwrap_or(0);
    if unknown > 0 {
        notices.push((t.notice_unknown)(unknown));
    }
    let name = Path::new(&run.file_path).file_name();
    for other in store.runs()? {
        if other.id != run.id && Path::new(&other.file_path).file_name() == name {
            notices.push((t.notice_same_name)(
                other.id,
                &other.file_path,
                &other.created_at,
                other.finished_at.is_some(),
            ));
        }
    }
    Ok(Some(ApprovalPage {
        totals: store.totals(run_id)?,
        audit: crate::signoff::audit_trail(store, run_id)?,
        approval: crate::signoff::facts(store, run_id)?,
        run,
        counts,
        rows,
        notices,
        language,
    }))
}

/// Printable, quiet styles: black on white, tables that break across pages
/// with their header repeated.
const CSS: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#111}\
h1{font-size:1.5em;margin:0 0 .5em}h2{font-size:1.15em;margin:1.5em 0 .5em}\
table{border-collapse:collapse;width:100%}th,td{border:1px solid #999;padding:.25em .5em;text-align:left}\
th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
code{font-size:.9em;word-break:break-all}.notice{color:#8a4b00}.ok{color:#1d6b1d}td.r{overflow-wrap:anywhere}\
.sign{margin-top:3em;display:flex;gap:4em}.sign div{border-top:1px solid #111;padding-top:.3em;width:14em}\
@media print{body{margin:1cm;font-size:11px}thead{display:table-header-group}tr{page-break-inside:avoid}}";

/// One part of the page, written into it in order.
type Section = fn(&ApprovalPage, &mut String);

/// The page's parts, top to bottom. A new part (a second approver's
/// sign-off, the overrides a run was made with) is a function here and a
/// line in this list; each part takes what it shows from the
/// [`ApprovalPage`] (add a field there, filled by [`gather`]).
const SECTIONS: &[Section] = &[
    run_section,
    approval_section,
    totals_section,
    notices_section,
    beneficiaries_section,
    audit_section,
    sign_off_section,
];

/// The page as one HTML document.
pub fn render(p: &ApprovalPage) -> String {
    let mut h = String::new();
    let t = p.language.text();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"payrun-run\" content=\"{id}\">\
         <title>{title}</title><style>{CSS}{BANNER}</style></head><body>\n",
        lang = t.html_lang,
        id = p.run.id,
        title = escape(&(t.page_title)(p.run.id)),
        BANNER = super::signoff_html::CSS,
    );
    for section in SECTIONS {
        section(p, &mut h);
    }
    h.push_str("</body></html>\n");
    h
}

/// Four eyes: whether the run is approved, by whom, and what to approve
/// (`signoff_html`).
fn approval_section(p: &ApprovalPage, h: &mut String) {
    if let Some(f) = &p.approval {
        h.push_str(&super::signoff_html::section(f, p.language));
    }
}

/// The run: its number, file, SHA-256, label, provider, rows and states.
fn run_section(p: &ApprovalPage, h: &mut String) {
    let run = &p.run;
    let t = p.language.text();
    let _ = write!(h, "<h1>{}</h1>\n<table>", escape(&(t.page_heading)(run.id)));
    let period = if run.period.is_empty() {
        escape(t.no_period)
    } else {
        escape(&run.period)
    };
    let states = p
        .counts
        .iter()
        .map(|(s, n)| format!("{} {n}", t.state(s.as_str())))
        .collect::<Vec<_>>()
        .join(", ");
    let values = [
        format!("<code>{}</code>", escape(&run.file_path)),
        format!("<code>{}</code>", escape(&run.file_sha256)),
        period,
        escape(&run.label),
        escape(&run.provider),
        escape(&run.created_at),
        escape(&(t.rows_value)(run.rows_total, run.rows_rejected)),
        escape(&states),
    ];
    for (name, value) in t.run_fields.iter().zip(values) {
        let _ = write!(h, "<tr><th>{}</th><td>{value}</td></tr>", escape(name));
    }
    h.push_str("</table>\n");
}

/// A table's header row.
fn head(h: &mut String, names: &[&str]) {
    h.push_str("<table><thead><tr>");
    for n in names {
        let _ = write!(h, "<th>{}</th>", escape(n));
    }
    h.push_str("</tr></thead><tbody>\n");
}

/// Count and total per currency, with the breakdown per state.
fn totals_section(p: &ApprovalPage, h: &mut String) {
    let lang = p.language;
    let t = lang.text();
    let _ = writeln!(h, "<h2>{}</h2>", escape(t.totals_heading));
    head(h, &t.totals_header);
    for (currency, states) in &p.totals {
        let count: u64 = states.values().map(|t| t.count).sum();
        let total: rust_decimal::Decimal = states.values().map(|t| t.total).sum();
        let by_state: Vec<String> = states
            .iter()
            .map(|(s, x)| {
                format!(
                    "{}: {} ({})",
                    t.state(s.as_str()),
                    x.count,
                    lang.amount(&x.total.to_string())
                )
            })
            .collect();
        let _ = writeln!(
            h,
            "<tr><td>{c}</td><td class=\"n\">{count}</td><td class=\"n total\">{total} {c}</td><td>{b}</td></tr>",
            c = escape(currency),
            total = escape(&lang.amount(&total.to_string())),
            b = escape(&by_state.join(", "))
        );
    }
    h.push_str("</tbody></table>\n");
}

/// Rejected rows, unknown payouts, other runs of a file of the same name.
fn notices_section(p: &ApprovalPage, h: &mut String) {
    let t = p.language.text();
    let _ = writeln!(h, "<h2>{}</h2>", escape(t.notices_heading));
    if p.notices.is_empty() {
        let _ = writeln!(h, "<p class=\"ok\">{}</p>", escape(t.no_notices));
        return;
    }
    h.push_str("<ul>\n");
    for n in &p.notices {
        let _ = writeln!(h, "<li class=\"notice\">{}</li>", escape(n));
    }
    h.push_str("</ul>\n");
}

/// Every beneficiary: row, name, account, transaction id, amount, state.
fn beneficiaries_section(p: &ApprovalPage, h: &mut String) {
    let lang = p.language;
    let t = lang.text();
    let _ = writeln!(h, "<h2>{}</h2>", escape(t.beneficiaries_heading));
    head(h, &t.beneficiaries_header);
    for r in &p.rows {
        let _ = writeln!(
            h,
            "<tr><td class=\"n\">{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td class=\"n\">{} {}</td><td>{}</td></tr>",
            r.row,
            escape(&r.beneficiary),
            escape(&r.account_id),
            escape(&r.transaction_id),
            escape(&lang.amount(&r.amount)),
            escape(&r.currency),
            escape(t.state(&r.state))
        );
    }
    h.push_str("</tbody></table>\n");
}

/// Lines for the approver: name, date, signature.
fn sign_off_section(p: &ApprovalPage, h: &mut String) {
    h.push_str("<div class=\"sign\">");
    for line in p.language.text().sign_off {
        let _ = write!(h, "<div>{}</div>", escape(line));
    }
    h.push_str("</div>\n");
}

/// The audit section: every settlement (statement, status call, operator,
/// re-send) and override of the run, in order, with its reason.
fn audit_section(p: &ApprovalPage, h: &mut String) {
    let audit = &p.audit;
    let t = p.language.text();
    let _ = writeln!(h, "<h2>{}</h2>", escape(t.audit_heading));
    if audit.is_empty() {
        let _ = writeln!(h, "<p class=\"ok\">{}</p>", escape(t.audit_empty));
        return;
    }
    head(h, &t.audit_header);
    for [tx, at, action, from, to, reason] in audit {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td class=\"r\">{}</td></tr>",
            escape(at),
            escape(tx),
            escape(action),
            escape(t.state(from)),
            escape(t.state(to)),
            escape(reason)
        );
    }
    h.push_str("</tbody></table>\n");
}

/// Writes the approval page of `run_id` in `language` to `path` (whole
/// or not at all). `false` when there is no such run.
pub fn write_approval(store: &Store, run_id: i64, path: &Path, language: Language) -> Result<bool> {
    let Some(page) = gather(store, run_id, language)? else {
        return Ok(false);
    };
    let html = render(&page);
    super::write_atomically(path, |w| {
        use std::io::Write;
        Ok(w.write_all(html.as_bytes())?)
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Tally;

    fn page(name: &str) -> ApprovalPage {
        let mut totals = Totals::new();
        totals.entry("XOF".into()).or_default().insert(
            State::Initiated,
            Tally {
                count: 1,
                total: rust_decimal::Decimal::new(25000, 0),
            },
        );
        ApprovalPage {
            run: RunInfo {
                id: 7,
                identity: "i".into(),
                file_sha256: "ab12".into(),
                label: String::new(),
                file_path: "<payroll>.csv".into(),
                provider: "sandbox".into(),
                rows_total: 1,
                rows_rejected: 0,
                created_at: "2026-05-31".into(),
                finished_at: None,
                period: "2026-05".into(),
                sheet: String::new(),
                id_scheme: 2,
            },
            counts: BTreeMap::from([(State::Initiated, 1)]),
            totals,
            rows: vec![ReportRow {
                row: 2,
                transaction_id: "tx-1".into(),
                account_id: "2250700000001".into(),
                beneficiary: name.into(),
                amount: "25000".into(),
                currency: "XOF".into(),
                state: "initiated".into(),
                provider_code: String::new(),
                provider_message: String::new(),
                attempts: 1,
                initiated_at: String::new(),
                executed_at: String::new(),
            }],
            notices: vec!["a <b>notice</b>".into()],
            audit: vec![[
                "tx-1".into(),
                "2026-06-02T10:00:00.000Z".into(),
                "statement".into(),
                "unknown".into(),
                "executed".into(),
                "statement <releve>.csv (sha256 ab) line 4: Réussi".into(),
            ]],
            approval: None,
            language: Language::En,
        }
    }

    #[test]
    fn everything_is_escaped_and_nothing_external_is_loaded() {
        let html = render(&page("<script>alert('x')</script> & Co"));
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; Co"));
        assert!(html.contains("&lt;payroll&gt;.csv"));
        assert!(html.contains("a &lt;b&gt;notice&lt;/b&gt;"));
        for external in ["http://", "https://", "src=", "<link", "@import"] {
            assert!(!html.contains(external), "{external} in the page");
        }
        assert!(html.contains("25,000 XOF"), "{html}");
        assert!(html.contains("ab12"));
        assert!(html.contains("<th>Period</th><td>2026-05</td>"), "{html}");
        assert!(
            html.contains("<td>statement</td><td>unknown</td><td>executed</td><td class=\"r\">statement &lt;releve&gt;.csv (sha256 ab) line 4: Réussi</td>"),
            "{html}"
        );
    }

    /// In French: every heading and state in French, amounts grouped by
    /// a narrow no-break space, `<html lang="fr">`.
    #[test]
    fn the_french_page_is_french() {
        let mut p = page("Aya Koffi");
        p.language = Language::Fr;
        let html = render(&p);
        for word in [
            "<html lang=\"fr\">",
            "Lot de paie 7\u{a0}: approbation",
            "<th>Période</th><td>2026-05</td>",
            "<h2>Totaux par devise</h2>",
            "<h2>Bénéficiaires</h2>",
            "<th>Montant</th>",
            "25\u{202f}000 XOF",
            "<td>initié</td>",
            "<div>Approuvé par</div>",
            "<h2>Piste d&#39;audit</h2>",
        ] {
            assert!(html.contains(word), "{word} not in {html}");
        }
        for english in [
            "Beneficiaries",
            "Totals per currency",
            "Approved by",
            ">initiated<",
        ] {
            assert!(!html.contains(english), "{english} in {html}");
        }
    }
}
