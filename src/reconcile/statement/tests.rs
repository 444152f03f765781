use super::*;

fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

fn read_with(text: &str, config: &str) -> Result<Statement> {
    let (_d, p) = write("statement.csv", text);
    read(&p, None, &Config::parse(config).unwrap())
}

fn err(text: &str, config: &str) -> String {
    format!("{:#}", read_with(text, config).unwrap_err())
}

#[test]
fn reads_the_french_sandbox_statement_with_the_defaults() {
    let s = read_with(
        "Référence;Compte;Montant;Devise;Statut;Date\n\
         tx-1;2250700000001;2500;XOF;Réussi;2026-11-23 16:03:57\n\
         tx-2;2250700000002;10.50;eur;En attente;2026-11-24 16:03:57\n",
        "amount_unit = \"minor\"\n[statement]\namount_unit = \"major\"",
    )
    .unwrap();
    assert_eq!(s.sha256.len(), 64);
    assert_eq!(s.lines.len(), 2);
    assert_eq!(s.lines[0].status, StatementStatus::Paid);
    assert_eq!(s.lines[0].line, 2);
    assert_eq!(s.lines[1].amount, Decimal::new(1050, 2));
    assert_eq!(s.lines[1].currency, "EUR");
    assert_eq!(s.lines[1].status, StatementStatus::NotFinal);
    assert!(s.skipped.is_empty() && s.notices.is_empty());
    assert_eq!(
        s.dates.map(|(a, b)| (a.to_string(), b.to_string())),
        Some(("2026-11-23".into(), "2026-11-24".into()))
    );
}

/// The portal export: a preamble, `;`, a BOM, amounts as the
/// portal writes them, a Total footer.
#[test]
fn a_portal_export_with_a_preamble_grouped_amounts_and_a_footer() {
    let text = "\u{feff}Relevé des opérations;;;;;\n\
                Compte marchand : Wave CI;;;;;\n\
                Période : 01/11/2026 - 30/11/2026;;;;;\n\
                ;;;;;\n\
                Réf. opération;N° bénéficiaire;Montant net;Devise;État;Date opération\n\
                tx-1;+225 07 01 10 00 01;25\u{a0}000;XOF;Succès;02/11/2026 09:14\n\
                tx-2;2250701100002;1 250 000;XOF;Échec;03/11/2026\n\
                tx-3;2250701100003;1\u{202f}250,50;EUR;Succès;30/11/2026 23:59\n\
                Total;;1 275 000;XOF;;\n";
    let config = "[statement]\ntransaction_id = [\"Réf. opération\"]\n\
                  account = [\"N° bénéficiaire\"]\namount = [\"Montant net\"]\n\
                  paid = [\"Succès\"]\nfailed = [\"Échec\"]\nnumber_format = \"fr\"\n";
    let s = read_with(text, config).unwrap();
    let got: Vec<(u64, &str, String, StatementStatus)> = s
        .lines
        .iter()
        .map(|l| {
            (
                l.line,
                l.transaction_id.as_str(),
                l.amount.to_string(),
                l.status,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (6, "tx-1", "25000".into(), StatementStatus::Paid),
            (7, "tx-2", "1250000".into(), StatementStatus::Failed),
            (8, "tx-3", "1250.50".into(), StatementStatus::Paid),
        ]
    );
    assert_eq!(s.skipped.len(), 2, "{:?}", s.skipped);
    assert!(
        s.skipped[0].starts_with("rows 1 to 3 before the header row (row 5) were skipped")
            && s.skipped[0].contains("\"Relevé des opérations\""),
        "{}",
        s.skipped[0]
    );
    assert!(
        s.skipped[1].contains("line 9")
            && s.skipped[1].contains("a total line, equal to the sum of the lines above"),
        "{}",
        s.skipped[1]
    );
    assert!(s.notices.is_empty(), "{:?}", s.notices);
    assert_eq!(
        s.dates.map(|(a, b)| (a.to_string(), b.to_string())),
        Some(("2026-11-02".into(), "2026-11-30".into()))
    );
}

/// Values are shown as a person reads them, never as `\u{a0}`; without
/// `number_format` a grouped amount is refused naming the line, the
/// column, the value and the fix.
#[test]
fn a_grouped_amount_without_a_format_names_line_column_value_and_fix() {
    let e = err(
        "Référence;Compte;Montant;Devise;Statut\ntx-1;1;496\u{a0}611;XOF;Réussi\n",
        "",
    );
    assert!(e.contains("line 2") && e.contains("\"Montant\""), "{e}");
    assert!(e.contains("\"496 611\""), "{e}");
    assert!(!e.contains("\\u{a0}"), "{e}");
    assert!(e.contains("number_format"), "{e}");
}

/// The statement's own reader is gone: `1,234` is not 1.234, and minor
/// units are divided by the currency's decimals.
#[test]
fn amounts_go_through_the_one_number_reader_in_the_statements_unit() {
    let e = err(
        "Transaction ID,Account,Amount,Currency,Status\ntx-1,1,\"1,234\",USD,Successful\n",
        "",
    );
    assert!(e.contains("\"1,234\""), "{e}");
    let s = read_with(
        "Transaction ID,Account,Amount,Currency,Status\ntx-1,1,125050,EUR,Successful\n\
         tx-2,1,-2500,XOF,Failed\ntx-3,1,0,XOF,Failed\n",
        "amount_unit = \"minor\"",
    )
    .unwrap();
    assert_eq!(s.lines[0].amount, Decimal::new(125050, 2));
    assert_eq!(s.lines[1].amount, Decimal::from(2500));
    assert_eq!(s.lines[2].amount, Decimal::ZERO);
    let s = read_with(
        "Transaction ID,Account,Amount,Currency,Status\ntx-1,1,\"1,250.50\",EUR,Successful\n",
        "number_format = \"fr\"\n[statement]\nnumber_format = \"en\"",
    )
    .unwrap();
    assert_eq!(s.lines[0].amount, Decimal::new(125050, 2));
}

#[test]
fn footers_without_an_id_are_skipped_and_a_wrong_total_is_noticed() {
    let s = read_with(
        "Transaction ID,Account,Amount,Currency,Status\n\
         tx-1,1,100,XOF,Successful\ntx-2,1,50,XOF,Failed\n\
         ,,150,,\n\
         tx-3,1,70,XOF,Successful\n\
         TOTAL,,220,XOF,\n\
         Grand total,,999,XOF,\n",
        "",
    )
    .unwrap();
    assert_eq!(s.lines.len(), 3);
    assert_eq!(s.skipped.len(), 3, "{:?}", s.skipped);
    assert!(
        s.skipped[0].contains("line 4") && s.skipped[0].contains("subtotal"),
        "{:?}",
        s.skipped
    );
    assert!(s.skipped[1].contains("line 6") && s.skipped[1].contains("equal to the sum"));
    assert!(s.skipped[2].contains("line 7") && s.skipped[2].contains("footer"));
    assert_eq!(s.notices.len(), 1, "{:?}", s.notices);
    assert!(
        s.notices[0].contains("line 7") && s.notices[0].contains("differs"),
        "{:?}",
        s.notices
    );
    // A line with an id and a status word is never a footer because of
    // its amount.
    let s = read_with(
        "Transaction ID,Account,Amount,Currency,Status\n\
         tx-1,1,100,XOF,Successful\ntx-2,1,100,XOF,Successful\n",
        "",
    )
    .unwrap();
    assert_eq!(s.lines.len(), 2);
}

/// A subtotal with a label of its own in the id cell and no status word is
/// recognised by its amount, the sum of the lines above; one whose amount
/// is not that sum is still refused, naming its status.
#[test]
fn a_subtotal_is_recognised_by_its_amount() {
    let s = read_with(
        "Réf;Compte;Montant;Devise;Statut\n\
         tx-1;1;25\u{a0}000;XOF;Réussi\ntx-2;1;50\u{a0}000;XOF;Échoué\n\
         Semaine 1;;75\u{a0}000;XOF;\n\
         tx-3;1;10\u{a0}000;XOF;Réussi\n\
         Semaine 2;;10\u{a0}000;;\n\
         Novembre;;85\u{a0}000;XOF;\n",
        "number_format = \"fr\"",
    )
    .unwrap();
    assert_eq!(s.lines.len(), 3, "{:?}", s.skipped);
    assert_eq!(s.skipped.len(), 3, "{:?}", s.skipped);
    for (i, line) in [(0, "line 4"), (1, "line 6"), (2, "line 7")] {
        assert!(
            s.skipped[i].contains(line) && s.skipped[i].contains("subtotal"),
            "{:?}",
            s.skipped
        );
    }
    assert!(
        s.skipped[0].contains("\"Semaine 1 75 000 XOF\""),
        "{:?}",
        s.skipped
    );
    assert!(s.notices.is_empty(), "{:?}", s.notices);
    let e = err(
        "Réf;Compte;Montant;Devise;Statut\n\
         tx-1;1;25000;XOF;Réussi\nSemaine 1;;24000;XOF;\n",
        "",
    );
    assert!(e.contains("line 3") && e.contains("status"), "{e}");
    // A line with an unknown status word is an error, even when its
    // amount is that of the line above.
    let e = err(
        "Réf;Compte;Montant;Devise;Statut\n\
         tx-1;1;25000;XOF;Réussi\ntx-2;1;25000;XOF;Reversed\n",
        "",
    );
    assert!(e.contains("line 3") && e.contains("\"Reversed\""), "{e}");
}

#[test]
fn the_providers_own_words_come_from_the_config() {
    let s = read_with(
        "Ref,Acct,Amt,Ccy,State\ntx-1,1,5,XOF,DONE\ntx-2,1,5,XOF,KO\n",
        "[statement]\ntransaction_id = [\"Ref\"]\naccount = [\"Acct\"]\namount = [\"Amt\"]\n\
         currency = [\"Ccy\"]\nstatus = [\"State\"]\npaid = [\"done\"]\nfailed = [\"KO\"]\n",
    )
    .unwrap();
    assert_eq!(s.lines[0].status, StatementStatus::Paid);
    assert_eq!(s.lines[1].status, StatementStatus::Failed);
}

#[test]
fn an_unknown_status_word_names_line_column_value_and_fix() {
    let e = err(
        "Transaction ID,Account,Amount,Currency,Status\ntx-1,1,5,XOF,Bounced\n",
        "",
    );
    assert!(
        e.contains("line 2") && e.contains("\"Status\"") && e.contains("\"Bounced\""),
        "{e}"
    );
    assert!(e.contains("[statement]"), "{e}");
}

#[test]
fn a_missing_column_is_named_with_what_the_first_row_holds() {
    let e = err(
        "Transaction ID,Account,Amount,Status\ntx-1,1,5,Failed\n",
        "",
    );
    assert!(e.contains("no currency column"), "{e}");
    assert!(e.contains("\"Transaction ID\""), "{e}");
    assert!(e.contains("[statement]"), "{e}");
}

#[test]
fn unreadable_dates_are_noticed_and_not_used() {
    let s = read_with(
        "Transaction ID,Account,Amount,Currency,Status,Date\n\
         tx-1,1,5,XOF,Successful,2 nov. 2026\ntx-2,1,5,XOF,Successful,2026-11-03\n",
        "",
    )
    .unwrap();
    assert_eq!(s.dates, None);
    assert_eq!(s.notices.len(), 1);
    assert!(s.notices[0].contains("\"2 nov. 2026\"") && s.notices[0].contains("--from"));
}
