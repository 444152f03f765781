//! The texts of closing the books (`payrun reconcile`: the list of open
//! payouts, `--mark`, `--statement`, `--poll`, `--resend`, and the notes
//! and header of `reconciliation.csv`), one [`Closing`] per language, as
//! [`super::Text`] is: a field here, a line in [`EN`] and in [`FR`].
//! Amounts in them come already written by `Language::amount`; state names
//! already shown (`Text::state`).

/// Counts and totals of one currency in the statement's summary:
/// matched, differing, missing, out of scope, each (count, total as
/// written by `reconcile::money`, plain).
pub type SummaryCells = [(u64, String); 4];

/// Every text of closing the books, in one language.
#[derive(Debug)]
pub struct Closing {
    /// `reconcile` with nothing open; `--resend` with nothing to re-send.
    pub nothing_open: &'static str,
    pub nothing_to_resend: &'static str,
    /// What an operator can do about a payout in a state (its machine
    /// name); empty for a final state.
    pub advice: fn(&str) -> &'static str,
    /// `3 payout(s) not final: 2 unknown, 1 processing`: count, the
    /// counts per state.
    pub not_final: fn(u64, &str) -> String,
    /// One state's count in that list: count, state (shown).
    pub count_state: fn(u64, &str) -> String,
    /// `--mark`: transaction id, new state (shown), reason.
    pub marked: fn(&str, &str, &str) -> String,
    /// A report written again: (run, path); no report recorded (run); not
    /// written (run, error).
    pub report_updated: fn(i64, &str) -> String,
    pub no_recorded_report: fn(i64) -> String,
    pub report_not_updated: fn(i64, &str) -> String,
    /// Why a settlement was not made: the execute is on its way; the
    /// payout changed meanwhile.
    pub in_flight: &'static str,
    pub changed: &'static str,
    /// Where a statement line is: (sheet as shown, or empty; line).
    pub place: fn(&str, u64) -> String,
    /// `skipped: …` (what the statement reader skipped).
    pub skipped: fn(&str) -> String,
    /// The scope line's parts: the provider (URL, where from), none;
    /// the dates (first, last, where from; `until`, `from`, both), all;
    /// the run; and the whole line (provider, dates, run, in scope, out
    /// of scope, other runs, outside the dates, other providers).
    pub scope_provider: fn(&str, &str) -> String,
    pub scope_no_provider: &'static str,
    pub scope_until: fn(&str, &str) -> String,
    pub scope_from: fn(&str, &str) -> String,
    pub scope_dates: fn(&str, &str, &str) -> String,
    pub scope_all_dates: &'static str,
    pub scope_run: fn(i64) -> String,
    pub scope_line: fn(&str, &str, &str, u64, u64, u64, u64, u64) -> String,
    /// Where a scope came from (`named`, `the payouts it lists`,
    /// `base_url`, `the statement's dates`, `--from/--to`), from its
    /// English.
    pub scope_source: fn(&'static str) -> &'static str,
    /// A settlement by the statement: id, from, to (shown), place, run.
    pub settled_by_statement: fn(&str, &str, &str, &str, i64) -> String,
    /// A payout not settled: id, why.
    pub not_settled: fn(&str, &str) -> String,
    /// A duplicated id, not settled: id, the note naming its lines.
    pub duplicate_not_settled: fn(&str, &str) -> String,
    /// The printed summary per currency, header first where there is one.
    pub summary_lines: fn(&[(String, SummaryCells)]) -> Vec<String>,
    /// The last line: discrepancies, reconciliation, its summary, sha256.
    pub discrepancies: fn(u64, &str, &str, &str) -> String,
    /// `reconciliation.csv`'s header and its summary's.
    pub reconciliation_header: [&'static str; 16],
    pub reconciliation_summary_header: [&'static str; 9],
    /// Notes of `reconciliation.csv`: a line of another provider's
    /// payout; the lines of a duplicated id (count, conflicting, each as
    /// `line 6 "Failed"`); the amounts that differ (statement's, payrun's,
    /// each with its currency); the currencies; the accounts.
    pub note_other_provider: &'static str,
    pub note_duplicate: fn(u64, bool, &str) -> String,
    pub note_amount: fn(&str, &str) -> String,
    pub note_currency: fn(&str, &str) -> String,
    pub note_account: fn(&str, &str) -> String,
    /// `--poll`: a settlement (id, from, to, the provider's word); not
    /// asked (id, provider); the last line (calls, settled, left, not
    /// asked); stopping; stopped.
    pub settled_by_poll: fn(&str, &str, &str, &str) -> String,
    pub not_asked: fn(&str, &str) -> String,
    pub poll_done: fn(u64, u64, u64, u64) -> String,
    pub stopping_question: &'static str,
    pub poll_stopped: &'static str,
    /// The asking ended: no status route (the call); the key refused
    /// (HTTP status).
    pub poll_no_route: fn(&str) -> String,
    pub poll_refused: fn(u16) -> String,
    /// `--resend`: a line (id, what came of it, code, message); what came
    /// of it (executed, processing, failed, still unknown, not re-sent
    /// with why); stopping; stopped (left).
    pub resent: fn(&str, &str, &str, &str) -> String,
    pub resent_executed: &'static str,
    pub resent_processing: &'static str,
    pub resent_failed: &'static str,
    pub resent_unknown: &'static str,
    pub resent_refused: fn(&str) -> String,
    pub stopping_resend: &'static str,
    pub resend_stopped: fn(u64) -> String,
}

/// The statement's summary as English prints it: a CSV table.
fn en_summary(rows: &[(String, SummaryCells)]) -> Vec<String> {
    let mut out = vec![EN.reconciliation_summary_header.join(",")];
    for (cur, cells) in rows {
        let mut line = crate::output::safe_cell(cur).into_owned();
        for (n, total) in cells {
            line.push_str(&format!(",{n},{total}"));
        }
        out.push(line);
    }
    out
}

/// The statement's summary in French: a sentence per currency, totals
/// grouped.
fn fr_summary(rows: &[(String, SummaryCells)]) -> Vec<String> {
    let fr = super::Language::Fr;
    rows.iter()
        .map(|(cur, [m, d, x, o])| {
            let cell = |(n, t): &(u64, String)| format!("{n} ({} {cur})", fr.amount(t));
            format!(
                "{cur}\u{a0}: rapprochés {}, différents {}, manquants {}, hors périmètre {}",
                cell(m),
                cell(d),
                cell(x),
                cell(o)
            )
        })
        .collect()
}

pub const EN: Closing = Closing {
    nothing_open: "no unknown payouts, nothing open",
    nothing_to_resend: "no unknown or processing payouts",
    advice: |state| match state {
        "pending" => "not sent yet: run the same file again",
        "initiating" => {
            "initiation may have reached the provider: run the same file again \
             (re-sent under the same id; no money moves)"
        }
        "initiated" => {
            "initiated, not executed: after approval, run the same file again without --initiate-only"
        }
        "executing" => {
            "execute may have reached the provider (a run or a `reconcile --resend` is sending \
             it, or was interrupted doing so): let it finish; if it was interrupted, run the same \
             file again (held as unknown under ambiguous = hold, re-sent under the same id under \
             resend), then settle it"
        }
        "unknown" => {
            "outcome unknown: --statement FILE, --poll, --resend, \
             or --mark executed|failed ID --reason TEXT"
        }
        "processing" => {
            "accepted by the provider, not final yet: --poll (when the provider has a status \
             call), --statement FILE, or --mark executed|failed ID --reason TEXT"
        }
        "set_aside" => {
            "set aside: its attempt budget ran out without a final answer; check it with the \
             provider (no money moved: it was never executed) and pay it in a new run if due"
        }
        _ => "",
    },
    not_final: |n, counts| format!("{n} payout(s) not final: {counts}"),
    count_state: |n, s| format!("{n} {s}"),
    marked: |id, to, reason| format!("{id}: unknown -> {to} ({reason})"),
    report_updated: |run, path| format!("report of run {run} updated: {path}"),
    no_recorded_report: |run| {
        format!(
            "run {run} has no recorded report; write one with `payrun report --run {run} --out report.csv`"
        )
    },
    report_not_updated: |run, e| {
        format!(
            "payrun: warning: the report of run {run} could not be updated ({e}); \
             write it again with `payrun report --run {run} --out PATH`"
        )
    },
    in_flight: "not settled: its execute is on its way (a run's, or a `payrun \
     reconcile --resend`); settle it once that ends",
    changed: "not settled: it changed meanwhile (another process or terminal \
     settled it or is re-sending it); list it again",
    place: |sheet, line| {
        if sheet.is_empty() {
            format!("line {line}")
        } else {
            format!("sheet {sheet} line {line}")
        }
    },
    skipped: |s| format!("skipped: {s}"),
    scope_provider: |p, from| format!("provider {p} (from {from})"),
    scope_no_provider: "no provider: the statement lists none of payrun's payouts and none was named \
                 ([statement] provider or --base-url), so nothing can be missing from it",
    scope_until: |hi, from| format!(", until {hi} (from {from})"),
    scope_from: |lo, from| format!(", from {lo} (from {from})"),
    scope_dates: |lo, hi, from| format!(", {lo} to {hi} (from {from})"),
    scope_all_dates: ", all dates",
    scope_run: |r| format!(", run {r}"),
    scope_line: |provider, dates, run, in_scope, out, other_runs, outside, other_providers| {
        format!(
            "scope: {provider}{dates}{run}; in scope {in_scope} payout(s); out of scope {out} (other runs {other_runs}, \
             outside the dates {outside}); other providers' payouts not compared {other_providers}"
        )
    },
    scope_source: |s| s,
    settled_by_statement: |id, from, to, place, run| {
        format!("{id}: {from} -> {to} (statement {place}, run {run})")
    },
    not_settled: |id, why| format!("{id}: {why}"),
    duplicate_not_settled: |id, note| format!("{id}: not settled: {note}"),
    summary_lines: en_summary,
    discrepancies: |n, report, summary, sha| {
        format!(
            "{n} discrepancy(ies); reconciliation: {report} (summary {summary}); statement sha256 {sha}"
        )
    },
    reconciliation_header: [
        "result",
        "run",
        "row",
        "transaction_id",
        "state",
        "account_id",
        "amount",
        "currency",
        "statement_line",
        "statement_account",
        "statement_amount",
        "statement_currency",
        "statement_status",
        "statement_word",
        "statement_sheet",
        "note",
    ],
    reconciliation_summary_header: [
        "currency",
        "matched_count",
        "matched_total",
        "differing_count",
        "differing_total",
        "missing_count",
        "missing_total",
        "out_of_scope_count",
        "out_of_scope_total",
    ],
    note_other_provider: "the payout was made against another provider than this statement's",
    note_duplicate: |n, conflicting, each| {
        format!(
            "{n} lines for this id{}: {each}; it is settled by none of them",
            if conflicting {
                ", with conflicting statuses"
            } else {
                ""
            }
        )
    },
    note_amount: |statement, payrun| {
        format!("the statement shows {statement}, payrun sent {payrun}")
    },
    note_currency: |statement, payrun| {
        format!("the statement's currency is {statement}, payrun's {payrun}")
    },
    note_account: |statement, payrun| {
        format!("the statement's account is {statement}, payrun's {payrun}")
    },
    settled_by_poll: |id, from, to, word| format!("{id}: {from} -> {to} (provider status {word})"),
    not_asked: |id, provider| format!("{id}: not asked: its run was made against {provider}"),
    poll_done: |asked, settled, left, not_asked| {
        format!(
            "{asked} status call(s); {settled} settled; {left} still processing or unknown ({not_asked} not asked: another provider)"
        )
    },
    stopping_question: "payrun: stopping after the question in flight",
    poll_stopped: "stopped before every payout was final",
    poll_no_route: |call| {
        format!(
            "the provider has no status route ({call} answers 404 without its not-found \
             code): fix the path of [provider.status_call] in the config"
        )
    },
    poll_refused: |http| {
        format!("the provider refused the API key on its status call (HTTP {http})")
    },
    resent: |id, note, code, message| format!("{id}: {note} ({code}: {message})"),
    resent_executed: "executed",
    resent_processing: "processing (not final)",
    resent_failed: "failed",
    resent_unknown: "still unknown",
    resent_refused: |why| format!("not re-sent: {why}"),
    stopping_resend: "payrun: stopping after the re-send in flight",
    resend_stopped: |left| {
        format!(
            "payrun: stopped; {left} payout(s) not settled. Nothing is left half-sent: run \
             `payrun reconcile --resend` again to go on"
        )
    },
};

pub const FR: Closing = Closing {
    nothing_open: "aucun paiement d'issue inconnue, rien en attente",
    nothing_to_resend: "aucun paiement d'issue inconnue ni en traitement",
    advice: |state| match state {
        "pending" => "pas encore envoyé\u{a0}: relancez le même fichier",
        "initiating" => {
            "l'initiation est peut-être parvenue au fournisseur\u{a0}: relancez le même fichier \
             (renvoyée sous la même référence\u{a0}; aucun argent ne bouge)"
        }
        "initiated" => {
            "initié, non exécuté\u{a0}: après approbation, relancez le même fichier sans --initiate-only"
        }
        "executing" => {
            "l'exécution est peut-être parvenue au fournisseur (un lot ou un `reconcile --resend` \
             l'envoie, ou a été interrompu en l'envoyant)\u{a0}: laissez-le finir\u{a0}; s'il a été \
             interrompu, relancez le même fichier (retenu comme d'issue inconnue avec ambiguous = hold, \
             renvoyé sous la même référence avec resend), puis réglez-le"
        }
        "unknown" => {
            "issue inconnue\u{a0}: --statement RELEVÉ, --poll, --resend, \
             ou --mark executed|failed RÉF --reason TEXTE"
        }
        "processing" => {
            "accepté par le fournisseur, pas encore définitif\u{a0}: --poll (si le fournisseur a une \
             question d'état), --statement RELEVÉ, ou --mark executed|failed RÉF --reason TEXTE"
        }
        "set_aside" => {
            "mis de côté\u{a0}: ses tentatives sont épuisées sans réponse définitive\u{a0}; vérifiez \
             auprès du fournisseur (aucun argent n'a bougé\u{a0}: il n'a jamais été exécuté) et payez-le \
             dans un nouveau lot s'il est dû"
        }
        _ => "",
    },
    not_final: |n, counts| format!("{n} paiement(s) pas encore définitif(s)\u{a0}: {counts}"),
    count_state: |n, s| format!("{n} {s}"),
    marked: |id, to, reason| format!("{id}\u{a0}: issue inconnue -> {to} ({reason})"),
    report_updated: |run, path| format!("rapport du lot {run} mis à jour\u{a0}: {path}"),
    no_recorded_report: |run| {
        format!(
            "le lot {run} n'a pas de rapport enregistré\u{a0}; écrivez-en un avec `payrun report --run {run} --out rapport.csv`"
        )
    },
    report_not_updated: |run, e| {
        format!(
            "payrun\u{a0}: attention\u{a0}: le rapport du lot {run} n'a pas pu être mis à jour ({e})\u{a0}; \
             écrivez-le à nouveau avec `payrun report --run {run} --out FICHIER`"
        )
    },
    in_flight: "non réglé\u{a0}: son exécution est en cours d'envoi (par un lot, ou par un \
     `payrun reconcile --resend`)\u{a0}; réglez-le une fois l'envoi terminé",
    changed: "non réglé\u{a0}: il a changé entre-temps (un autre processus ou poste l'a réglé \
     ou le renvoie)\u{a0}; listez-le à nouveau",
    place: |sheet, line| {
        if sheet.is_empty() {
            format!("ligne {line}")
        } else {
            format!("feuille {sheet} ligne {line}")
        }
    },
    skipped: |s| format!("ignoré\u{a0}: {s}"),
    scope_provider: |p, from| format!("fournisseur {p} (d'après {from})"),
    scope_no_provider: "aucun fournisseur\u{a0}: le relevé ne liste aucun paiement de payrun et aucun \
                        n'a été nommé ([statement] provider ou --base-url), donc rien ne peut y manquer",
    scope_until: |hi, from| format!(", jusqu'au {hi} (d'après {from})"),
    scope_from: |lo, from| format!(", à partir du {lo} (d'après {from})"),
    scope_dates: |lo, hi, from| format!(", du {lo} au {hi} (d'après {from})"),
    scope_all_dates: ", toutes dates",
    scope_run: |r| format!(", lot {r}"),
    scope_line: |provider, dates, run, in_scope, out, other_runs, outside, other_providers| {
        format!(
            "périmètre\u{a0}: {provider}{dates}{run}\u{a0}; dans le périmètre {in_scope} paiement(s)\u{a0}; \
             hors périmètre {out} (autres lots {other_runs}, hors des dates {outside})\u{a0}; paiements \
             d'autres fournisseurs non comparés {other_providers}"
        )
    },
    scope_source: |s| match s {
        "named" => "le fournisseur nommé",
        "the payouts it lists" => "les paiements qu'il liste",
        "the statement's dates" => "les dates du relevé",
        other => other,
    },
    settled_by_statement: |id, from, to, place, run| {
        format!("{id}\u{a0}: {from} -> {to} (relevé {place}, lot {run})")
    },
    not_settled: |id, why| format!("{id}\u{a0}: {why}"),
    duplicate_not_settled: |id, note| format!("{id}\u{a0}: non réglé\u{a0}: {note}"),
    summary_lines: fr_summary,
    discrepancies: |n, report, summary, sha| {
        format!(
            "{n} écart(s)\u{a0}; rapprochement\u{a0}: {report} (récapitulatif {summary})\u{a0}; sha256 du relevé {sha}"
        )
    },
    reconciliation_header: [
        "résultat",
        "lot",
        "ligne",
        "id_transaction",
        "état",
        "compte",
        "montant",
        "devise",
        "ligne_relevé",
        "compte_relevé",
        "montant_relevé",
        "devise_relevé",
        "statut_relevé",
        "libellé_relevé",
        "feuille_relevé",
        "remarque",
    ],
    reconciliation_summary_header: [
        "devise",
        "rapprochés_nombre",
        "rapprochés_total",
        "différents_nombre",
        "différents_total",
        "manquants_nombre",
        "manquants_total",
        "hors_périmètre_nombre",
        "hors_périmètre_total",
    ],
    note_other_provider: "le paiement a été fait auprès d'un autre fournisseur que celui de ce relevé",
    note_duplicate: |n, conflicting, each| {
        format!(
            "{n} lignes pour cette référence{}\u{a0}: {each}\u{a0}; aucune ne le règle",
            if conflicting {
                ", aux statuts contradictoires"
            } else {
                ""
            }
        )
    },
    note_amount: |statement, payrun| {
        format!("le relevé indique {statement}, payrun a envoyé {payrun}")
    },
    note_currency: |statement, payrun| {
        format!("la devise du relevé est {statement}, celle de payrun {payrun}")
    },
    note_account: |statement, payrun| {
        format!("le compte du relevé est {statement}, celui de payrun {payrun}")
    },
    settled_by_poll: |id, from, to, word| {
        format!("{id}\u{a0}: {from} -> {to} (état chez le fournisseur\u{a0}: {word})")
    },
    not_asked: |id, provider| {
        format!("{id}\u{a0}: pas demandé\u{a0}: son lot a été fait auprès de {provider}")
    },
    poll_done: |asked, settled, left, not_asked| {
        format!(
            "{asked} question(s) au fournisseur\u{a0}; {settled} réglé(s)\u{a0}; {left} encore en traitement ou d'issue inconnue ({not_asked} pas demandé(s)\u{a0}: autre fournisseur)"
        )
    },
    stopping_question: "payrun\u{a0}: arrêt après la question en cours",
    poll_stopped: "arrêté avant que tous les paiements soient définitifs",
    poll_no_route: |call| {
        format!(
            "le fournisseur n'a pas de route d'état ({call} répond 404 sans son code «\u{a0}introuvable\u{a0}»)\u{a0}: \
             corrigez le chemin de [provider.status_call] dans la configuration"
        )
    },
    poll_refused: |http| {
        format!("le fournisseur a refusé la clé d'API lors de sa question d'état (HTTP {http})")
    },
    resent: |id, note, code, message| format!("{id}\u{a0}: {note} ({code}\u{a0}: {message})"),
    resent_executed: "exécuté",
    resent_processing: "en traitement (pas définitif)",
    resent_failed: "échoué",
    resent_unknown: "toujours d'issue inconnue",
    resent_refused: |why| format!("non renvoyé\u{a0}: {why}"),
    stopping_resend: "payrun\u{a0}: arrêt après le renvoi en cours",
    resend_stopped: |left| {
        format!(
            "payrun\u{a0}: arrêté\u{a0}; {left} paiement(s) non réglé(s). Rien n'est à moitié envoyé\u{a0}: \
             relancez `payrun reconcile --resend` pour continuer"
        )
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_is_a_table_in_english_and_sentences_in_french() {
        let rows = vec![(
            "XOF".to_string(),
            [
                (2, "300000".to_string()),
                (1, "151000".to_string()),
                (0, "0".to_string()),
                (0, "0".to_string()),
            ],
        )];
        let en = (EN.summary_lines)(&rows);
        assert_eq!(en[0], EN.reconciliation_summary_header.join(","));
        assert_eq!(en[1], "XOF,2,300000,1,151000,0,0,0,0");
        let fr = (FR.summary_lines)(&rows);
        assert_eq!(fr.len(), 1);
        assert!(
            fr[0].contains("rapprochés 2 (300\u{202f}000 XOF), différents 1 (151\u{202f}000 XOF)"),
            "{fr:?}"
        );
    }

    #[test]
    fn every_open_state_has_advice_in_both_languages() {
        for s in crate::machine::NOT_DONE {
            assert!(!(EN.advice)(s.as_str()).is_empty(), "{s}");
            assert!(!(FR.advice)(s.as_str()).is_empty(), "{s}");
        }
        assert_eq!((FR.advice)("executed"), "");
    }
}
