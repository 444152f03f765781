//! Les règles de validation expliquées en français : ce qui ne va pas et
//! comment le corriger, une phrase par [`Reason`], avec les mêmes faits
//! que l'anglais. La ligne, la colonne et la valeur sont placées autour
//! par `Text::field_error`. Les montants sont écrits à la française
//! (`6 091 999,50`) par [`Language::amount`].

use super::Language;
use crate::validate::amount::{AmountError, MAX_INTEGER_DIGITS};
use crate::validate::fields::{MAX_EMAIL_LEN, MAX_ID_LEN};
use crate::validate::numeric::SPREADSHEET_DIGITS;
use crate::validate::reason::{Name, Reason};

const EMAIL_FIX: &str = "écrivez une seule adresse, comme nom@exemple.com";

/// An amount or a reading (`25000.5`) as a French reader writes it.
fn amount(a: impl ToString) -> String {
    Language::Fr.amount(&a.to_string())
}

/// An identifier column or config key, named for a payroll clerk.
fn id_name(key: &str) -> String {
    match key {
        "transaction_id" => "la référence de transaction (transaction_id)".into(),
        "account_id" => "le compte du bénéficiaire (account_id)".into(),
        "payout_method_id" => "le moyen de paiement (payout_method_id)".into(),
        "default_payout_method_id" => {
            "le moyen de paiement par défaut (default_payout_method_id)".into()
        }
        other => other.to_owned(),
    }
}

/// The character an identifier may not hold, named.
fn character(c: &Option<char>) -> String {
    match c {
        None => "un espace".to_owned(),
        Some('\u{a0}' | '\u{202f}') => format!(
            "un espace insécable ({})",
            c.unwrap_or_default().escape_unicode()
        ),
        Some(c) => format!("`{}` ({})", c.escape_debug(), c.escape_unicode()),
    }
}

pub(super) fn rule(reason: &Reason) -> String {
    match reason {
        Reason::Amount(e) => amount_rule(e),
        Reason::ControlCharacter { escaped } => format!(
            "le texte contient un caractère de contrôle ({escaped})\u{a0}: retirez les retours à la ligne, les tabulations et les autres caractères invisibles"
        ),
        Reason::TextTooLong { len, max } => format!(
            "le texte fait {len} caractères\u{a0}; {max} au plus sont acceptés\u{a0}: raccourcissez-le"
        ),
        Reason::NameRequired(Name::First) => {
            "le prénom du bénéficiaire est obligatoire\u{a0}: renseignez-le".into()
        }
        Reason::NameRequired(Name::Last) => {
            "le nom du bénéficiaire est obligatoire\u{a0}: renseignez-le".into()
        }
        Reason::IdRequired(what) => {
            format!("{} est obligatoire\u{a0}: renseignez-le", id_name(what))
        }
        Reason::IdTextMarker(what) => format!(
            "{} commence par une apostrophe ', la marque de texte d'un tableur, qui ne fait pas partie de l'identifiant\u{a0}: retirez-la (payrun relit ses propres failed.csv et rejected.csv sans elle)",
            id_name(what)
        ),
        Reason::IdCharacter { id, character: c } => format!(
            "{} ne peut contenir que des lettres A-Z, des chiffres et la ponctuation ASCII, et il contient {}\u{a0}: retapez-le sans ce caractère",
            id_name(id),
            character(c)
        ),
        Reason::IdTooLong { id, len } => format!(
            "{} fait {len} caractères\u{a0}; {MAX_ID_LEN} au plus sont acceptés\u{a0}: vérifiez que la cellule ne contient qu'un seul identifiant",
            id_name(id)
        ),
        Reason::CurrencyRequired => "la devise est obligatoire\u{a0}: écrivez son code ISO 4217, par ex. XOF, XAF, USD".into(),
        Reason::CurrencyNotForPayment { code } => format!(
            "{code} est un code ISO 4217 de fonds, de compte ou de monnaie retirée de la circulation, pas une devise dans laquelle on peut payer\u{a0}: écrivez le code de la devise payée, par ex. EUR au lieu de HRK, SLE au lieu de SLL, BOB au lieu de BOV"
        ),
        Reason::CurrencyNoMinorUnit { code, name } => format!(
            "{code} ({name}) n'est pas une devise dans laquelle on peut payer\u{a0}: écrivez le code ISO 4217 d'une vraie devise, par ex. XOF, XAF, USD"
        ),
        Reason::CurrencyUnknown => "ce n'est pas un code de devise ISO 4217\u{a0}: écrivez le code à trois lettres, par ex. XOF (franc CFA d'Afrique de l'Ouest), XAF (franc CFA d'Afrique centrale), GHS (cedi), NGN, EUR, USD".into(),
        Reason::EmailTooLong => {
            format!("l'adresse dépasse {MAX_EMAIL_LEN} caractères\u{a0}: {EMAIL_FIX}")
        }
        Reason::EmailNoAt => format!("l'adresse n'a pas de `@`\u{a0}: {EMAIL_FIX}"),
        Reason::EmailNotAnAddress => {
            format!("ce n'est pas une adresse e-mail\u{a0}: {EMAIL_FIX}")
        }
        Reason::EmailSpace => format!(
            "l'adresse contient un espace\u{a0}: {EMAIL_FIX} (une adresse par cellule)"
        ),
        Reason::EmailCharacter => format!(
            "l'adresse contient un caractère qu'une adresse ne peut pas contenir\u{a0}: {EMAIL_FIX} (une adresse par cellule)"
        ),
        Reason::EmailDot => {
            format!("la partie avant `@` contient un point mal placé\u{a0}: {EMAIL_FIX}")
        }
        Reason::EmailDomain => format!(
            "ce qui suit `@` n'est pas un nom de domaine valide (comme exemple.com)\u{a0}: {EMAIL_FIX}"
        ),
        Reason::PhoneNoCountryCode => "le numéro n'a pas d'indicatif pays\u{a0}: écrivez-le au format international, + et l'indicatif suivis du numéro (par ex. +2250701020304), ou indiquez default_phone_region dans la configuration (par ex. \"CI\")".into(),
        Reason::PhoneLetters => "un numéro de téléphone ne contient que des chiffres (les espaces, points, tirets et parenthèses sont acceptés)\u{a0}: retirez les lettres et tout numéro de poste".into(),
        Reason::PhoneNotANumber => "ce n'est pas un numéro de téléphone\u{a0}: écrivez-le au format international, par ex. +2250701020304".into(),
        Reason::PhoneInvalid { region } => {
            let whose = match region {
                None => "pour son indicatif pays".to_owned(),
                Some(r) => format!("dans la région par défaut {r:?}"),
            };
            format!(
                "ce numéro de téléphone n'est pas valide {whose} (longueur ou préfixe incorrect)\u{a0}: vérifiez les chiffres, et écrivez-le au format international +indicatif… s'il est d'un autre pays"
            )
        }
        Reason::PhoneNumberCell { digits } => format!(
            "la cellule est au format Nombre\u{a0}: elle ne garde ni le `+` ni le zéro initial, et {digits} n'est pas un numéro international valide\u{a0}: mettez la colonne au format Texte et tapez le numéro sous la forme +indicatif…"
        ),
        Reason::NumberCell => format!(
            "la cellule est au format Nombre, et un tableur ne garde que {SPREADSHEET_DIGITS} chiffres significatifs et supprime les zéros initiaux, si bien que ce n'est peut-être pas l'identifiant qui a été tapé\u{a0}: mettez la colonne au format Texte et retapez les identifiants"
        ),
        Reason::DuplicateId { id, first } => format!(
            "la référence de transaction (transaction_id) {id:?} est déjà utilisée à la ligne {first}\u{a0}: chaque paiement doit avoir sa propre référence (c'est à une référence répétée que le prestataire reconnaît un paiement déjà fait)\u{a0}; donnez-en une nouvelle à cette ligne, ou supprimez la ligne si c'est un doublon"
        ),
        Reason::NoPayoutMethod => "le moyen de paiement (payout_method_id) est vide et la configuration n'a pas de default_payout_method_id\u{a0}: renseignez-le (par ex. l'identifiant du moyen Mobile Money ou bancaire chez le prestataire) ou indiquez default_payout_method_id dans la configuration".into(),
        Reason::NotToPay { header, value } => format!(
            "payrun ne lit pas cette colonne, et elle indique que la ligne ne doit pas être payée\u{a0}: supprimez la ligne, ou ajoutez à la configuration une règle qui écarte ces lignes en les listant\u{a0}: [skip] column = {header:?}, values = [{value:?}]"
        ),
        Reason::FormulaWithoutResult { formula } => format!(
            "la cellule contient la formule {formula} mais aucun résultat enregistré (le fichier a été écrit par un programme qui ne calcule pas les formules)\u{a0}: ouvrez-le et enregistrez-le dans un tableur, ou tapez la valeur elle-même"
        ),
        Reason::CellError { shown } => format!(
            "la cellule contient l'erreur de tableur {shown}\u{a0}: corrigez la formule ou tapez la valeur elle-même"
        ),
        Reason::Misaligned { cells, width } => format!(
            "la ligne a {cells} cellules mais l'en-tête en a {width}, ses valeurs sont donc peut-être sous les mauvaises colonnes\u{a0}: mettez entre guillemets droits \"…\" une valeur qui contient le séparateur (souvent un libellé avec une virgule ou un point-virgule), ou retirez les cellules en trop"
        ),
        Reason::TotalsNotLast {
            total,
            currency,
            next,
        } => format!(
            "cette ligne n'a pas de bénéficiaire et son montant ({} {currency}) est la somme des lignes au-dessus, comme une ligne de total, mais la ligne {next} la suit\u{a0}: une ligne de total doit être la dernière des données\u{a0}; déplacez-la à la fin ou supprimez-la, ou renseignez le compte et le bénéficiaire s'il s'agit d'un paiement",
            amount(total)
        ),
        Reason::TotalsDiffer {
            total,
            sum,
            currency,
        } => format!(
            "c'est une ligne de total de {} {currency}, mais les lignes valides au-dessus totalisent {} {currency}\u{a0}: une ligne manque peut-être, a été modifiée ou a été rejetée\u{a0}; corrigez les lignes ou le total",
            amount(total),
            amount(sum)
        ),
        Reason::TotalsUncomparable => "cette ligne ressemble à une ligne de total, mais son montant ne peut pas être comparé aux lignes au-dessus (plusieurs devises, ou pas de montant)\u{a0}: retirez la ligne du fichier".into(),
        Reason::Unexplained => {
            "la ligne n'a pas pu être validée\u{a0}: merci de signaler ce problème".into()
        }
    }
}

/// The amount's rules.
fn amount_rule(e: &AmountError) -> String {
    match e {
        AmountError::Empty => {
            "le montant est vide\u{a0}: écrivez le montant à payer, par ex. 25000".into()
        }
        AmountError::Sign => "un montant ne porte pas de signe\u{a0}: écrivez-le sans `+` ni `-` (un paiement est toujours un montant positif)".into(),
        AmountError::Exponent => "la notation scientifique n'est pas acceptée\u{a0}: écrivez tous les chiffres, par ex. 2500000 au lieu de 2.5E6 ou 2,5E+06".into(),
        AmountError::Separator => "les séparateurs de milliers et la virgule décimale ne sont pas acceptés\u{a0}: écrivez des chiffres, avec un point `.` facultatif avant les décimales, par ex. 1234.50".into(),
        AmountError::Ambiguous { en, fr } => format!(
            "la valeur se lit {} à l'anglaise (25,000.50) et {} à la française (25 000,50 ou 25.000,50), car son séparateur peut marquer les milliers ou les décimales\u{a0}: le montant dépend de qui l'a écrit. Écrivez-la en chiffres seuls (par ex. {fr} ou {en}), ou indiquez dans la configuration comment le fichier écrit les nombres\u{a0}: number_format = \"fr\" (25 000,50) ou \"en\" (25,000.50)",
            amount(en),
            amount(fr)
        ),
        AmountError::NeedsFormat { format, reading } => format!(
            "les séparateurs de milliers et la virgule décimale ne sont lus que si la configuration dit comment le fichier écrit les nombres\u{a0}: avec number_format = \"{format}\", ce montant se lit {}\u{a0}; ajoutez ce réglage à la configuration, ou écrivez des chiffres seuls, avec un point `.` facultatif avant les décimales",
            amount(reading)
        ),
        AmountError::NoConvention { format, other } => {
            let what = if format.is_empty() {
                "ses séparateurs ne correspondent ni à l'écriture française (25 000,50) ni à l'anglaise (25,000.50) des nombres".to_owned()
            } else {
                format!("il ne correspond pas au réglage number_format = \"{format}\" de la configuration")
            };
            let hint = match other {
                Some((f, r)) => format!(" (avec number_format = \"{f}\", il se lirait {})", amount(r)),
                None => String::new(),
            };
            format!(
                "{what}{hint}\u{a0}: écrivez des chiffres seuls avec un séparateur décimal facultatif, par ex. 25000.50"
            )
        }
        AmountError::CurrencyMismatch { word, currency } => format!(
            "le montant indique {word} mais la colonne de la devise indique {currency}\u{a0}: corrigez l'un des deux, ou écrivez le montant sans devise"
        ),
        AmountError::Implausible {
            digits,
            limit,
            currency,
        } => format!(
            "le montant a {digits} chiffres avant le séparateur décimal, plus qu'aucun paiement plausible en {currency} ({limit} au plus)\u{a0}: on dirait un numéro de compte ou de téléphone dans la colonne du montant\u{a0}; si c'est bien le montant, relevez la limite dans la configuration avec [max_amount] {currency} = ..."
        ),
        AmountError::AboveMax { currency, max } => format!(
            "le montant dépasse le plafond max_amount de la configuration pour {currency} ({})\u{a0}: vérifiez-le, ou relevez max_amount",
            amount(max)
        ),
        AmountError::NotDigits => "le montant doit s'écrire en chiffres, avec un point `.` facultatif et des décimales, par ex. 1234.50\u{a0}: retirez les symboles monétaires, les lettres et les autres caractères".into(),
        AmountError::Malformed => "le montant est mal formé\u{a0}: écrivez des chiffres, avec un point `.` facultatif suivi des décimales, par ex. 0.50".into(),
        AmountError::TooLarge => format!(
            "le montant a plus de {MAX_INTEGER_DIGITS} chiffres avant le séparateur décimal\u{a0}: vérifiez qu'il s'agit bien de la colonne du montant"
        ),
        AmountError::Zero => "le montant doit être supérieur à zéro\u{a0}: supprimez la ligne s'il n'y a rien à payer".into(),
        AmountError::TooManyDecimals {
            currency,
            exponent,
            found,
        } => format!(
            "la devise {currency} a {exponent} décimale(s) (ISO 4217) mais ce montant en a {found}\u{a0}: arrondissez-le à {exponent} décimale(s)"
        ),
        AmountError::Fractional { currency } => format!(
            "le prestataire reçoit des montants entiers en {currency} (amount_unit = \"major\") et ce montant a des décimales\u{a0}: arrondissez-le à l'unité, ou indiquez amount_unit = \"minor\" dans la configuration si le prestataire prend les montants en unités mineures (centimes)"
        ),
    }
}
