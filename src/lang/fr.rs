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
    latency: |p, q| {
        format!(
            "latence du fournisseur {p} (l'appel seul)\u{a0}; attente {q} (du débit ou d'une place libre)"
        )
    },
    limiter_brief: |rate, r429, l, q, paused| {
        format!("débit {rate}/s, 429\u{a0}: {r429}, latence {l}, attente {q}{paused}")
    },
    paused: |s| format!(", pause {s}\u{a0}s"),
    progress_line: |i, t, e, f, u, r| {
        format!(
            "{i}/{t} initiés, {e}/{t} exécutés, {f} en échec, {u} d'issue inconnue, {r} appels/s"
        )
    },
    progress_stopping: "arrêt en cours",
    bar_labels: ["initiés", "exécutés"],
    bar_figures: |f, u, r, clock| format!("échecs {f}  inconnus {u}  {r} appels/s  {clock}"),
    bar_stopping: "arrêt\u{a0}: fin des appels en cours (Ctrl-C à nouveau pour quitter aussitôt)",
    bar_no_execute: "exécutés  (pas avec --initiate-only)",
    sandbox_started: |url| format!("bac à sable intégré sur {url} (aucun argent réel ne bouge)"),
    joined: |run, worker, lease| {
        format!(
            "travail sur le lot {run} comme poste {worker} (bail de {lease}\u{a0}ms)\u{a0}; d'autres postes peuvent le partager"
        )
    },
    resuming: |run, file, at| format!("reprise du lot {run} de {file} (commencé le {at})"),
    importing: |file| {
        format!(
            "vérification de {file} et enregistrement de ses lignes comme nouveau lot (rien n'est envoyé avant que toutes les lignes soient enregistrées)"
        )
    },
    imported: |n, secs| format!("{n} paiement(s) enregistré(s) en {secs}\u{a0}s"),
    writing_report: |p| format!("écriture du rapport {p}"),
    skipped: |rows| {
        format!(
            "{rows} ligne(s) déjà payée(s), en cours ou closes par des lots précédents ne sont pas renvoyées\u{a0}; le rapport indique le lot et la ligne de chacune"
        )
    },
    settling: |round, asked, settled, open, waited, next| {
        let next = if next.is_empty() {
            String::new()
        } else {
            format!("\u{a0}; nouvelle question dans {next}")
        };
        format!(
            "question au fournisseur, tour {round}\u{a0}: {asked} demandé(s), {settled} réglé(s), {open} toujours pas définitif(s) après {waited}{next}"
        )
    },
    approved_executing: |run, by, at, n, digest| {
        format!(
            "lot {run} approuvé par {by} le {at} ({n} paiement(s), empreinte {digest})\u{a0}: exécution"
        )
    },
    nothing_executed: |what| format!("rien n'a été exécuté\u{a0}: {what}"),
    waiting_for_approval: |what| format!("{what}. En attente (Ctrl-C pour arrêter)"),
    someone_else: |name| {
        if name.is_empty() {
            "une personne autre que celle qui l'a préparé".to_string()
        } else {
            format!("une personne autre que celle qui l'a préparé ({name})")
        }
    },
    unapproved_not_initiated: |run, n, file, who, approve| {
        format!(
            "le lot {run} n'est pas approuvé, et {n} paiement(s) ne sont pas encore initiés. Lancez `payrun run {file} --initiate-only`\u{a0}; puis {who} l'approuve\u{a0}: {approve}"
        )
    },
    unapproved_plain: |run, who, approve| {
        format!(
            "le lot {run} n'est pas approuvé (require_approval = true)\u{a0}; {who} l'approuve\u{a0}: {approve}"
        )
    },
    unapproved_again: |run, standing, approve| {
        format!("lot {run}\u{a0}: {standing}. Il doit être approuvé à nouveau\u{a0}: {approve}")
    },
    standing_approved: |by, at| format!("approuvé par {by} le {at}"),
    standing_revoked: |by, at, rby, rat, reason| {
        format!(
            "l'approbation de {by} le {at} a été retirée par {rby} le {rat}{}",
            if reason.is_empty() {
                String::new()
            } else {
                format!(" ({reason})")
            }
        )
    },
    standing_void: |by, at, why| format!("l'approbation de {by} le {at} est caduque\u{a0}: {why}"),
    banner_void: |word, standing, run| {
        format!(
            "APPROBATION {}\u{a0}: {standing}. Le lot doit être approuvé à nouveau\u{a0}: payrun approve {run} --as NOM",
            if word == "revoked" {
                "RETIRÉE"
            } else {
                "CADUQUE"
            }
        )
    },
    field_error: |row, col, value, msg| {
        format!("ligne {row}, colonne {col}, valeur {value}\u{a0}: {msg}")
    },
    row_error: |row, msg| format!("ligne {row}\u{a0}: {msg}"),
    rejected_nothing_sent: |rejected, rows, path| {
        format!(
            "{rejected} ligne(s) rejetée(s) sur {rows}\u{a0}; rien n'a été envoyé. Corrigez-les (voir {path}) et relancez."
        )
    },
    ids_used: "références de transaction déjà utilisées\u{a0}; rien n'a été importé ni envoyé.",
    and_more: |n| format!("... et {n} autre(s)"),
    repeats_found: |n, what| {
        format!(
            "{n} ligne(s) paient une personne déjà payée (ou en cours de paiement) sur cette période, répètent un paiement récent du même montant, ou répètent une autre ligne du fichier\u{a0}; rien n'a été enregistré ni envoyé. {what}"
        )
    },
    repeats_what_to_do: |period| {
        format!(
            "Une correction est un nouveau paiement de la différence (une ligne du montant manquant), ou d'abord l'annulation du paiement précédent (`payrun cancel LOT` tant qu'il n'est pas exécuté)\u{a0}; un nouveau lot dans le même mois est une période à part (celle de ce lot est {period}\u{a0}: par exemple --period {period}-prime). Si ces personnes doivent vraiment être payées à nouveau, vérifiez la liste et relancez avec --allow-repeats\u{a0}: chaque second paiement est alors inscrit dans la piste d'audit et montré sur la page d'approbation."
        )
    },
    not_failed_rows: |n| {
        format!(
            "{n} ligne(s) de ce failed.csv désignent des paiements qui n'ont pas échoué (payés, retenus ou encore ouverts)\u{a0}; rien n'a été enregistré ni envoyé. Retirez ces lignes\u{a0}: un failed.csv ne repaie que les paiements en échec (un ancien failed.csv, payé depuis par un autre lot\u{a0}?)."
        )
    },
    import_only_done: |run, n, file| {
        format!(
            "le lot {run} contient {n} paiement(s) de {file}\u{a0}; rien n'a été envoyé (--import-only)"
        )
    },
    note: |line| format!("remarque\u{a0}: {line}"),
    override_totals_row: |row, amount, cur| {
        format!(
            "ligne {row}\u{a0}: une ligne de totaux ({amount} {cur}) prise comme total de contrôle, non payée"
        )
    },
    override_skipped: |n| {
        format!(
            "{n} ligne(s) écartée(s) car déjà payée(s) (ou retenue(s)) par des lots précédents\u{a0}: listée(s) dans le rapport comme ignorée(s), pas payée(s) à nouveau"
        )
    },
    override_second_payment: |row, amount, cur, tx| {
        format!(
            "ligne {row}\u{a0}: un second paiement de {amount} {cur} laissé passer par --allow-repeats ({tx})"
        )
    },
    override_more: |n| {
        format!("... et {n} autre(s) second(s) paiement(s) (`payrun reconcile --audit`)")
    },
    void_self_approved: |by, preparer| {
        format!(
            "{by} a approuvé un lot préparé par {preparer}\u{a0}: l'approbateur doit être quelqu'un d'autre"
        )
    },
    void_figures: |cur, was_n, was_total, n, total| {
        let fr = super::Language::Fr;
        format!(
            "{cur}\u{a0}: {was_n} paiement(s) pour {} approuvés, {n} pour {} maintenant",
            fr.amount(was_total),
            fr.amount(total)
        )
    },
    void_left: |row, tx, state| format!("ligne {row} ({tx})\u{a0}: {state} depuis l'approbation"),
    void_gone: |row, tx| format!("ligne {row} ({tx})\u{a0}: disparue depuis l'approbation"),
    void_joined: |row, tx, amount, cur| {
        format!(
            "ligne {row} ({tx}, {} {cur})\u{a0}: n'a pas été approuvée",
            super::Language::Fr.amount(amount)
        )
    },
    void_altered: |row, tx, was, now| {
        format!("ligne {row} ({tx})\u{a0}: {was} approuvés\u{a0}; {now} maintenant")
    },
    void_field: |name, value| match name {
        "id" => format!("référence {value}"),
        "account" => format!("compte {value}"),
        "amount" => format!("montant {}", super::Language::Fr.amount(value)),
        "currency" => format!("devise {value}"),
        other => format!("{other} {value}"),
    },
    void_more: |n| format!("... et {n} autre(s) changement(s)"),
    void_digest: |now, approved| {
        format!(
            "l'empreinte de l'ensemble des paiements est {now} maintenant, {approved} à l'approbation"
        )
    },
    void_override: |o| format!("une dérogation depuis l'approbation\u{a0}: {o}"),
    void_dropped: |n| format!("{n} dérogation(s) approuvée(s) plus enregistrée(s)"),
    stop_unauthorized: |msg, run| {
        format!(
            "le fournisseur a refusé la clé d'API ({msg})\u{a0}; plus rien n'a été envoyé. Corrigez la clé et relancez la même commande pour reprendre (ou closez le lot avec `payrun cancel {run}`)"
        )
    },
    stop_interrupted: "interrompu\u{a0}; les appels en cours se sont terminés et sont enregistrés. Relancez la même commande pour reprendre.",
    stop_unreachable: |msg| {
        format!(
            "le fournisseur n'accepte pas de requêtes ({msg})\u{a0}; l'avancement est enregistré. Relancez la même commande pour reprendre"
        )
    },
    stop_config: |msg| format!("erreur de configuration\u{a0}: {msg}"),
    stop_lease: |msg| format!("arrêté\u{a0}: {msg}"),
    stopping_after_flight: "arrêt après les appels en cours (Ctrl-C à nouveau pour quitter aussitôt)",
    quitting_now: "arrêt immédiat\u{a0}; relancez la même commande pour reprendre",
    still_in_flight: |secs| {
        format!(
            "appels toujours en cours après {secs}\u{a0}s\u{a0}; arrêt immédiat. Leurs intentions sont enregistrées\u{a0}: relancez la même commande pour reprendre"
        )
    },
    control_totals: |path| {
        format!("totaux de contrôle (initiations acceptées), écrits dans {path}\u{a0}:")
    },
    approval_page_at: |run, path| format!("page d'approbation du lot {run}\u{a0}: {path}"),
    initiation_done: |n, flags| {
        format!(
            "initiation terminée, aucun argent n'a bougé. {n} paiement(s) initié(s)\u{a0}; une fois approuvé, relancez sans --initiate-only (ajoutez {flags} pour vérifier que les totaux tiennent toujours)."
        )
    },
    approval_needed: |standing, run| {
        format!(
            "approbation\u{a0}: {standing}\u{a0}; une autre personne que vous approuve le lot {run}\u{a0}: `payrun approve {run} --as NOM`"
        )
    },
    processing_left: |n| {
        format!(
            "{n} paiement(s) acceptés par le fournisseur mais pas définitifs (en traitement)\u{a0}: de l'argent peut encore bouger. Vérifiez-les auprès du fournisseur, ou listez-les avec `payrun reconcile`."
        )
    },
    facts_run: |id, file, period, created| {
        format!("lot {id}  {file}  période {period}  créé le {created}")
    },
    facts_sha: |sha| format!("  sha256 du fichier {sha}"),
    facts_prepared: |by, at| format!("  préparé par {by} le {at}"),
    facts_prepared_unknown: "  préparé par\u{a0}: non enregistré (importé avant que payrun ne l'enregistre)",
    facts_initiated: |n, digest, waiting| {
        format!(
            "  paiements initiés\u{a0}: {n} (empreinte {digest}){}",
            match waiting {
                0 => String::new(),
                w => format!("\u{a0}; {w} pas encore initié(s)"),
            }
        )
    },
    facts_currency: |cur, n, total| format!("    {cur}\u{a0}: {n} paiement(s), total {total}"),
    approval_withdrawn: |run, by, at| {
        format!(
            "lot {run}\u{a0}: approbation retirée par {by} le {at}\u{a0}; rien n'en sera exécuté tant que personne ne l'approuve à nouveau"
        )
    },
    approved_already: |run| format!("le lot {run} est déjà approuvé\u{a0}; rien n'est enregistré"),
    approved_now: |run, by, at, n, digest, file| {
        format!(
            "lot {run} approuvé par {by} le {at}\u{a0}: {n} paiement(s), empreinte {digest}. L'exécution (`payrun run {file}`) peut maintenant les envoyer."
        )
    },
    nothing_recorded: "non approuvé\u{a0}; rien n'a été enregistré",
    confirm_approve: |run, by| {
        format!(
            "Approuver le lot {run} en tant que {by}\u{a0}? Ces paiements seront exécutés. Tapez oui pour approuver\u{a0}: "
        )
    },
    no_terminal: |run, by| {
        format!(
            "pas de terminal pour confirmer\u{a0}: lisez les montants ci-dessus, puis relancez avec --yes pour approuver le lot {run} en tant que {by} (rien n'a été enregistré)"
        )
    },
    status_database: |db| format!("base\u{a0}: {db}"),
    status_no_runs: |db| format!("aucun lot dans {db}"),
    status_run: |id, file, created, rows, finished, period| {
        format!(
            "lot {id}  {file}  {created}  {rows} lignes  {}{}",
            if finished { "terminé" } else { "en cours" },
            if period.is_empty() {
                String::new()
            } else {
                format!("  période {period}")
            }
        )
    },
    status_skipped: |n| format!("  déjà payées par des lots précédents, non envoyées\u{a0}: {n}"),
    status_states: |states| format!("  états\u{a0}: {states}"),
    status_prepared: |by| {
        if by.is_empty() {
            "préparateur non enregistré".to_string()
        } else {
            format!("préparé par {by}")
        }
    },
    status_approval: |preparer, standing| {
        format!("  {preparer}\u{a0}; approbation\u{a0}: {standing}")
    },
    rejected_heading: "Lignes rejetées\u{a0}:",
    more_rejected: |n, file| {
        format!(
            "... et {n} autre(s) ligne(s) rejetée(s){}",
            if file {
                " (toutes sont dans le fichier des rejets)"
            } else {
                " (--rejected FICHIER pour les avoir toutes)"
            }
        )
    },
    rejected_in_file: |p| {
        format!(
            "Les lignes rejetées et leurs motifs sont dans {p}\u{a0}: corrigez-les là et validez à nouveau ce fichier."
        )
    },
    rejected_no_file: "Rien n'a été envoyé. Ajoutez --rejected rejets.csv pour avoir les lignes rejetées et leurs motifs dans un fichier.",
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
    refused_preparer: |run, preparer| {
        format!(
            "le lot {run} a été préparé (importé) par {preparer}\u{a0}: l'approbateur doit être \
             quelqu'un d'autre (quatre yeux)\u{a0}; demandez à un collègue de lancer `payrun approve {run}` sous son nom"
        )
    },
    refused_not_initiated: |run, waiting| {
        format!(
            "{waiting} paiement(s) du lot {run} ne sont pas encore initiés\u{a0}: terminez l'initiation \
             (`payrun run FICHIER --initiate-only`), puis approuvez les chiffres qu'elle affiche"
        )
    },
    refused_empty: |run| {
        format!("le lot {run} n'a aucun paiement initié\u{a0}: il n'y a rien à approuver")
    },
    refused_finished: |run| {
        format!("le lot {run} est terminé\u{a0}: il n'y a plus rien à approuver")
    },
    refused_changed: |run| {
        format!(
            "le lot {run} a changé pendant que vous le regardiez (un paiement a été initié, annulé ou \
             modifié)\u{a0}: rien n'a été enregistré\u{a0}; relancez `payrun approve {run}` pour le voir tel qu'il est"
        )
    },
    refused_nothing_to_revoke: |run, standing| {
        format!("le lot {run} n'a pas d'approbation à retirer ({standing})")
    },
    init_wrote: |p| format!("écrit\u{a0}: {p}"),
    init_next: |csv| {
        format!(
            "suite\u{a0}: remplissez {csv} (ou le .xlsx), puis `payrun validate {csv}` et \
             `payrun run {csv} --sandbox` pour une répétition"
        )
    },
    init_wrote_for: |p, file| format!("écrit\u{a0}: {p} pour {file}"),
    init_exists: |p, file| {
        format!(
            "# {p} existe et n'est pas modifié\u{a0}: collez-y cette table\u{a0}; puis vérifiez avec `payrun validate {file}`."
        )
    },
    init_table_written: |p, file| {
        format!(
            "# La table [columns] écrite dans {p}\u{a0}; suite\u{a0}: `payrun validate {file}`."
        )
    },
    sandbox_listening: |url| format!("bac à sable payrun à l'écoute sur {url}"),
    sandbox_key: |key| format!("clé d'API\u{a0}: {key}"),
    sandbox_seed: |seed| format!("graine\u{a0}: {seed}"),
    probe_heading: |url, tx| {
        format!("sondage payrun de {url} (paiement d'essai {tx}\u{a0}: initié, jamais exécuté)")
    },
    probe_labels: [
        "envoyé\u{a0}:  ",
        "réponse\u{a0}: ",
        "corps\u{a0}:   ",
        "profil\u{a0}:  ",
        "constat\u{a0}: ",
    ],
    probe_no_answer: "pas de réponse",
    probe_answer: |http, code| format!("{http}, code {code}"),
    probe_marks: ["ok", "À VÉRIFIER"],
    probe_resend_unsafe: |why| format!("renvoi\u{a0}: PAS sûr\u{a0}: {why}"),
    probe_resend_unproven: |why| format!("renvoi\u{a0}: pas prouvé sûr\u{a0}: {why}"),
};
