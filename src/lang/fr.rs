//! Les textes français. Typographie : espace insécable (U+00A0) avant
//! « : » et « ; » dans les phrases, montants groupés par `Language::amount`.

use super::Text;

pub const TEXT: Text = Text {
    report_header: [
        "ligne",
        "id_transaction",
        "compte",
        "bénéficiaire",
        "montant",
        "devise",
        "état",
        "code_fournisseur",
        "message_fournisseur",
        "tentatives",
        "initié_le",
        "exécuté_le",
    ],
    summary_header: ["devise", "état", "nombre", "total"],
    approval_csv_header: ["devise", "nombre", "total", "remarque"],
    states: &[
        ("pending", "en attente"),
        ("initiating", "initiation en cours"),
        ("initiated", "initié"),
        ("executing", "exécution en cours"),
        ("processing", "en traitement"),
        ("executed", "exécuté"),
        ("initiate_failed", "initiation refusée"),
        ("execute_failed", "exécution refusée"),
        ("unknown", "issue inconnue"),
        ("set_aside", "mis de côté"),
        ("cancelled", "annulé"),
        ("rejected", "rejeté"),
    ],
    html_lang: "fr",
    page_title: |id| format!("payrun, lot {id}\u{a0}: approbation"),
    page_heading: |id| format!("Lot de paie {id}\u{a0}: approbation"),
    run_fields: [
        "Fichier",
        "SHA-256",
        "Période",
        "Libellé",
        "Fournisseur",
        "Créé le",
        "Lignes",
        "États",
    ],
    no_period: "(non enregistrée\u{a0}: un lot d'avant les périodes)",
    rows_value: |rows, rejected| format!("{rows} ({rejected} rejetée(s))"),
    totals_heading: "Totaux par devise",
    totals_header: ["Devise", "Paiements", "Total", "Par état"],
    notices_heading: "Avis",
    no_notices: "Aucun avis\u{a0}: toutes les lignes ont passé la validation.",
    notice_rejected: |row, why| format!("ligne {row} rejetée\u{a0}: {why}"),
    notice_unknown: |n| {
        format!(
            "{n} paiement(s) d'issue inconnue\u{a0}: réglez-les avec `payrun reconcile` avant de payer à nouveau"
        )
    },
    notice_same_name: |id, file, created, finished| {
        format!(
            "le lot {id} d'un fichier du même nom ({file}, {created}, {}) est aussi dans cette base\u{a0}: vérifiez qu'il ne s'agit pas de la même paie",
            if finished { "terminé" } else { "non terminé" }
        )
    },
    beneficiaries_heading: "Bénéficiaires",
    beneficiaries_header: [
        "Ligne",
        "Bénéficiaire",
        "Compte",
        "Référence de transaction",
        "Montant",
        "État",
    ],
    audit_heading: "Piste d'audit",
    audit_empty: "Rien de réglé par un relevé, une question au fournisseur, un opérateur ou un renvoi, et rien d'autorisé au-delà des règles.",
    audit_header: [
        "Heure",
        "Référence de transaction",
        "Action",
        "De",
        "Vers",
        "Motif",
    ],
    sign_off: ["Approuvé par", "Date", "Signature"],
    banner_approved: |by, at, n, digest| {
        format!("Approuvé par {by} le {at}\u{a0}: {n} paiement(s), empreinte {digest}.")
    },
    banner_pending: |run, waiting| {
        format!(
            "PAS ENCORE APPROUVÉ. Rien n'est exécuté tant qu'une personne autre que celle qui a \
             préparé le lot n'a pas vérifié ces montants et ne l'a pas enregistré\u{a0}: \
             payrun approve {run} --as NOM{}",
            match waiting {
                0 => String::new(),
                n => format!(" ({n} paiement(s) pas encore initié(s))"),
            }
        )
    },
    approval_heading: "Approbation",
    approval_fields: ["Préparé par", "À approuver"],
    preparer_unknown: "non enregistré (importé avant que payrun ne l'enregistre)",
    by_at: |by, at| format!("{by} le {at}"),
    to_approve: |n, digest| format!("{n} paiement(s) initié(s), empreinte {digest}"),
    payouts_total: |n, total, cur| format!("{n} paiement(s), total {total} {cur}"),
    report_line: |p| format!("rapport\u{a0}: {p}"),
    failed_line: |p| {
        format!(
            "lignes en échec\u{a0}: {p} (corrigez-les et passez ce fichier\u{a0}: il ne paie que ces lignes)"
        )
    },
    next: "suite\u{a0}: ",
    all_executed: |n| format!("les {n} paiement(s) sont exécutés\u{a0}; plus rien à faire"),
    settled_by_resend: |n| {
        format!(
            "dont {n} d'issue inconnue en cours de route, réglé(s) par un renvoi sous la même référence de transaction (la piste d'audit de `payrun summary --html` les liste)"
        )
    },
    rows_list: |count, shown, more| {
        let word = if count == 1 { "ligne" } else { "lignes" };
        if more > 0 {
            format!("{word} {shown} et {more} autre(s)")
        } else {
            format!("{word} {shown}")
        }
    },
    waiting_top_up: |rows, cur| {
        format!(
            "{rows}\u{a0}: en attente d'un approvisionnement du portefeuille {cur}\u{a0}; approvisionnez-le, puis relancez la même commande"
        )
    },
    may_have_paid: |rows, run| {
        format!(
            "{rows}\u{a0}: payée(s) ou non, on ne sait pas\u{a0}; vérifiez auprès du fournisseur, puis réglez-les avec `payrun reconcile --run {run}`"
        )
    },
    not_finished: |rows, run| {
        format!(
            "{rows}\u{a0}: pas terminée(s)\u{a0}; relancez la même commande pour reprendre (ou `payrun cancel {run}` pour clore le lot)"
        )
    },
    failed_for_good: |rows, report| {
        format!(
            "{rows}\u{a0}: refusée(s) définitivement par le fournisseur (voir {report})\u{a0}; corrigez-les et payez-les dans un nouveau fichier"
        )
    },
    initiated_only: |n| {
        format!(
            "{n} paiement(s) initié(s), aucun argent n'a bougé\u{a0}: une fois approuvé, relancez sans --initiate-only"
        )
    },
    rate_settled: |rate, r429, events, rest| {
        format!(
            "débit\u{a0}: stabilisé à {rate} appels/s\u{a0}; {r429} réponse(s) 429 en {events} épisode(s) de congestion\u{a0}; {rest}"
        )
    },
    rate_no_limit: |peak, rest| {
        format!("débit\u{a0}: aucune limite atteinte\u{a0}; pointe {peak} appels/s\u{a0}; {rest}")
    },
    latency: |l| format!("latence {l} (du tour de l'appel à sa réponse)"),
    validate_head: |file, rows, valid, rejected| {
        format!("{file}\u{a0}: {rows} ligne(s), {valid} valide(s), {rejected} rejetée(s)")
    },
    valid_per_currency: "Lignes valides par devise\u{a0}:",
    valid_table_header: ["devise", "lignes", "total"],
    all_valid: "Toutes les lignes sont valides.",
    no_rejected_file: |path, earlier| {
        format!(
            "Aucune ligne rejetée\u{a0}: rien n'est écrit dans {path}{}.",
            if earlier {
                " (le fichier qui s'y trouve date d'une vérification précédente)"
            } else {
                ""
            }
        )
    },
    summary_run: |id, file, sha, rows, rejected| {
        format!("lot {id}  {file}  sha256 {sha}  {rows} lignes ({rejected} rejetée(s))")
    },
    summary_notice: "avis\u{a0}: ",
    summary_approval: "approbation\u{a0}: ",
    not_approved_yet: "pas encore approuvé",
};
