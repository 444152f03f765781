//! Ce que `validate` et `run` disent d'un fichier dans son ensemble, en
//! français : les avis sur la façon dont il a été lu, les refus d'un
//! fichier qui ne peut pas être validé, les colonnes manquantes de
//! l'en-tête et les lignes du résumé. Mêmes faits que l'anglais ; les
//! montants écrits à la française par [`Language::amount`].

use super::Language;
use crate::input::{InputError, InputNotice};
use crate::validate::columns::{Col, ColumnsError, Found};
use crate::validate::notice::{Line, Notice, Refusal, SkippedBy};

/// `lignes 4, 7` or `ligne 4`.
fn rows(rows: &[u64]) -> String {
    format!(
        "ligne{} {}",
        if rows.len() == 1 { "" } else { "s" },
        rows.iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(super) fn listed(list: &[String], more: usize) -> String {
    let mut list = list.to_vec();
    if more > 0 {
        list.push(format!("et {more} autre(s)"));
    }
    list.join(", ")
}

pub(super) fn input_notice(n: &InputNotice) -> String {
    match n {
        InputNotice::Windows1252 => "lu en Windows-1252 (le fichier n'est pas en UTF-8 valide\u{a0}; indiquez encoding dans la configuration pour choisir)".into(),
        InputNotice::GuardUndone { last_column, cells } => format!(
            "lu comme un fichier écrit par payrun (sa dernière colonne est `{last_column}`)\u{a0}: {cells} cellule(s) protégée(s) des formules de tableur par une apostrophe ' initiale ont été lues sans elle"
        ),
        InputNotice::FirstVisibleSheet { sheet, hidden } => format!(
            "feuille {sheet:?} lue, la première visible (masquée(s) avant elle\u{a0}: {})\u{a0}; choisissez-en une autre avec --sheet",
            hidden
                .iter()
                .map(|n| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        InputNotice::Preamble {
            first,
            last,
            header_row,
            said,
            more,
        } => {
            let said = format!("{}{}", said.join(", "), if *more { ", …" } else { "" });
            if first == last {
                format!(
                    "la ligne {first}, avant la ligne d'en-tête (ligne {header_row}), a été ignorée et n'est pas lue comme une donnée\u{a0}: {said}"
                )
            } else {
                format!(
                    "les lignes {first} à {last}, avant la ligne d'en-tête (ligne {header_row}), ont été ignorées et ne sont pas lues comme des données\u{a0}: {said}"
                )
            }
        }
    }
}

pub(super) fn notice(n: &Notice) -> String {
    match n {
        Notice::Input(n) => input_notice(n),
        Notice::HiddenNotLookedFor { ext } => format!(
            "les lignes masquées ou filtrées n'ont pas été recherchées\u{a0}: un classeur .{ext} ne les montre pas à payrun (--assume-no-hidden-rows)\u{a0}; enregistrez-le en .xlsx pour qu'elles soient vérifiées"
        ),
        Notice::HiddenLeftOut { count } => format!(
            "{count} ligne(s) masquée(s) ou filtrée(s) dans le tableur écartée(s) (--skip-hidden-rows), listée(s) avec les lignes écartées"
        ),
        Notice::PayeesCapped { max } => format!(
            "les bénéficiaires répétés n'ont été recherchés que dans les {} premières lignes valides",
            Language::Fr.amount(&max.to_string())
        ),
        Notice::TotalsRowUsed {
            row,
            total,
            currency,
        } => format!(
            "la ligne {row} est une ligne de total ({} {currency}), égale à la somme des lignes au-dessus\u{a0}: elle sert de total de contrôle et n'est pas payée",
            Language::Fr.amount(&total.to_string())
        ),
        Notice::NumberColumn {
            header,
            count,
            first,
            phone,
        } => {
            let rows = if *count == 1 {
                format!("ligne {first}")
            } else {
                format!("{count} lignes, la première étant la ligne {first}")
            };
            let read = if *phone {
                " (un numéro de téléphone dans une cellule Nombre est lu comme +chiffres)"
            } else {
                ""
            };
            format!(
                "la colonne {header:?} contient des nombres, pas du texte ({rows}){read}\u{a0}: des zéros initiaux ont pu être perdus sans que payrun puisse le savoir\u{a0}; vérifiez ces identifiants, et mettez la colonne au format Texte"
            )
        }
    }
}

pub(super) fn cannot_validate(path: &str) -> String {
    format!("impossible de valider {path}")
}

pub(super) fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::HiddenUnknown { path, ext } => format!(
            "{path}\u{a0}: payrun ne peut pas savoir quelles lignes d'un classeur .{ext} sont masquées ou filtrées, et paierait donc des lignes que personne ne voit\u{a0}: enregistrez le classeur en .xlsx (ou .ods) et donnez ce fichier, ou, après avoir vérifié dans le tableur qu'aucune ligne n'est masquée ni filtrée, ajoutez --assume-no-hidden-rows"
        ),
        Refusal::HiddenRows { path, count, named } => {
            let more = if *count > named.len() {
                format!(" et {} autre(s)", count - named.len())
            } else {
                String::new()
            };
            format!(
                "{path}\u{a0}: {count} ligne(s) masquée(s) ou filtrée(s) dans le tableur, que personne ne voit donc\u{a0}: {}{more}\u{a0}; affichez-les, supprimez-les, ou ajoutez --skip-hidden-rows pour les écarter",
                rows(named)
            )
        }
        Refusal::Columns {
            path,
            error,
            sheets,
        } => {
            let mut said = format!("{}\u{a0}: {}", cannot_validate(path), columns_error(error));
            if !sheets.is_empty() {
                said.push_str(&format!(
                    ". Les feuilles de ce classeur sont {}\u{a0}: si la paie est sur une autre, choisissez-la avec --sheet NOM",
                    sheets.join(", ")
                ));
            }
            said
        }
        Refusal::NoDataRows { path } => format!(
            "{path} a une ligne d'en-tête mais aucune ligne de données\u{a0}: ajoutez une ligne par paiement sous l'en-tête"
        ),
        Refusal::SkipColumn { column } => format!(
            "la règle [skip] de la configuration nomme la colonne {column}, qui n'est pas un en-tête du fichier\u{a0}: écrivez l'en-tête tel qu'il apparaît dans la première ligne du fichier"
        ),
        Refusal::SkipNoValues => "la règle [skip] de la configuration n'a pas de valeurs\u{a0}: listez les valeurs qui indiquent qu'une ligne ne doit pas être payée, par ex. values = [\"annulé\", \"non\"]".into(),
    }
}

pub(super) fn columns_error(e: &ColumnsError) -> String {
    match e {
        ColumnsError::NotAColumn { from, to } => format!(
            "la table [columns] associe {from:?} à {to:?}, qui n'est pas une colonne de payrun\u{a0}; les colonnes sont\u{a0}: {}",
            Col::ALL.map(Col::name).join(", ")
        ),
        ColumnsError::Twice {
            column,
            first,
            first_at,
            second,
            second_at,
        } => format!(
            "deux colonnes sont lues comme `{column}`\u{a0}: {first} (colonne {first_at}) et {second} (colonne {second_at})\u{a0}; renommez ou supprimez l'une d'elles, ou associez-en une dans la table [columns] de la configuration"
        ),
        ColumnsError::Missing {
            missing,
            found,
            defaults,
            to_map,
        } => {
            let found = match found {
                Found::EmptyRow => "la ligne est vide".to_owned(),
                Found::AllRead => "tous les en-têtes du fichier sont déjà lus".to_owned(),
                Found::NotRead { shown, more } => {
                    format!("en-têtes non lus\u{a0}: {}", listed(shown, *more))
                }
            };
            let extra = if defaults.is_empty() {
                String::new()
            } else {
                format!(
                    " (ou indiquez {} dans la configuration)",
                    defaults.join(" et ")
                )
            };
            let first = missing.first().copied().unwrap_or_default();
            let fix = match to_map {
                Some(h) => format!(
                    "Renommez l'en-tête dans le fichier, ou associez-le dans la table [columns] du fichier de configuration (payrun.toml dans le dossier d'où vous lancez payrun, ou le fichier donné avec --config), par ex. {h:?} = \"{first}\""
                ),
                None => format!("Ajoutez une colonne {first} au fichier"),
            };
            let what = if missing.len() == 1 {
                "colonne obligatoire manquante"
            } else {
                "colonnes obligatoires manquantes"
            };
            format!(
                "{what}\u{a0}: {}{extra}\u{a0}; {found}. {fix}",
                missing.join(", ")
            )
        }
    }
}

pub(super) fn line(l: &Line<'_>) -> String {
    match l {
        Line::Note(n) => format!("Avis\u{a0}: {}", notice(n)),
        Line::NotRead(headers) => {
            let (list, more) = crate::validate::columns::shown(headers);
            format!("Colonnes non lues\u{a0}: {}", listed(&list, more))
        }
        Line::Skipped {
            by,
            count,
            rows: listed_rows,
            more,
        } => format!(
            "Écartée(s) par {}, non payée(s)\u{a0}: {count} ligne(s) ({}{})",
            match by {
                SkippedBy::Rule => "la règle [skip] de la configuration",
                SkippedBy::Hidden => "--skip-hidden-rows (lignes masquées ou filtrées)",
                SkippedBy::Both =>
                    "la règle [skip] de la configuration et --skip-hidden-rows (lignes masquées ou filtrées)",
            },
            rows(listed_rows),
            if *more { ", …" } else { "" }
        ),
        Line::Repeated { pairs, more } => format!(
            "Même compte, même montant et même devise qu'une ligne précédente (collée deux fois\u{a0}?)\u{a0}: {}{}",
            pairs
                .iter()
                .map(|[r, first]| format!("la ligne {r} répète la ligne {first}"))
                .collect::<Vec<_>>()
                .join(", "),
            if *more { ", …" } else { "" }
        ),
    }
}

/// Names as listed in a message: `"Paie", "Primes"`.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn input_error(e: &InputError) -> String {
    match e {
        InputError::EmptyFile { path } => format!(
            "{path} est vide\u{a0}: il faut une ligne d'en-tête qui nomme les colonnes, puis une ligne par paiement"
        ),
        InputError::EmptySheet { path, sheet } => format!(
            "la feuille {sheet:?} de {path} est vide\u{a0}: il faut une ligne d'en-tête qui nomme les colonnes, puis une ligne par paiement"
        ),
        InputError::NoSuchSheet {
            path,
            wanted,
            sheets,
        } => format!(
            "{path} n'a pas de feuille nommée {wanted:?}\u{a0}; ses feuilles sont\u{a0}: {}",
            quoted(sheets)
        ),
        InputError::SheetOfCsv { path, sheet } => format!(
            "--sheet {sheet:?} ne s'applique qu'aux classeurs de tableur (.xlsx, .xls, .ods), et {path} est lu comme un fichier CSV"
        ),
        InputError::WorkbookAsCsv { path } => format!(
            "{path} est un classeur de tableur, pas un fichier CSV\u{a0}: donnez-lui sa vraie extension (.xlsx, .xls ou .ods) pour qu'il soit lu comme un classeur"
        ),
        InputError::NulBytes { path } => format!(
            "{path} contient des octets NUL, ce n'est donc pas un fichier texte CSV (de l'UTF-16 ou un fichier binaire\u{a0}?)\u{a0}: enregistrez-le au format «\u{a0}CSV UTF-8\u{a0}»"
        ),
        InputError::UnclosedQuote { line } => format!(
            "ligne {line} du fichier\u{a0}: un guillemet droit (\") ouvert là n'est jamais refermé, si bien que toutes les lignes suivantes seraient lues comme une seule cellule\u{a0}: refermez-le ou retirez-le (une valeur qui contient un guillemet s'écrit entre guillemets, le guillemet doublé\u{a0}: \"5\"\" écran\")"
        ),
        InputError::NotUtf8 {
            line,
            row,
            field,
            byte,
            before,
        } => format!(
            "la ligne {line} du fichier (ligne {row}, champ {field}) n'est pas en UTF-8 valide\u{a0}: octet 0x{byte:02X} après {before:?}. Le fichier a sans doute été enregistré dans un encodage Windows ou Latin-1 (le format «\u{a0}CSV\u{a0}» simple d'Excel)\u{a0}: indiquez encoding = \"windows-1252\" dans la configuration, ou enregistrez-le à nouveau au format «\u{a0}CSV UTF-8\u{a0}»"
        ),
    }
}
