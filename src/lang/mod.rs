//! The languages payrun speaks to people in (config `language`, alias
//! `report_language`; `--lang`), and the one place each language's texts
//! live: [`Text`], filled once in `en` and once in `fr`. Every
//! human-facing output — report headers, the approval page, the printed
//! summary, the terminal's last lines — takes its words from here and its
//! amounts from [`Language::amount`]. Machine formats (JSON logs, exit
//! codes, the English report's column keys) never go through it.

mod closing;
mod en;
mod fr;
mod group;
mod notices_en;
mod notices_fr;
mod rules_en;
mod rules_fr;
#[cfg(test)]
mod rules_tests;
mod text;

pub use closing::Closing;
pub use group::{FRENCH_GROUP, grouped};
pub use text::Text;

/// Why a row was refused, explained in `language`: one exhaustive `match`
/// per language (`rules_en`, `rules_fr`), so a rule without its French
/// sentence does not compile.
pub fn rule(reason: &crate::validate::reason::Reason, language: Language) -> String {
    match language {
        Language::En => rules_en::rule(reason),
        Language::Fr => rules_fr::rule(reason),
    }
}

/// What validation says about a file as a whole (`crate::validate::notice`,
/// `crate::input::InputNotice`, the header's columns), in `language`: one
/// exhaustive `match` per language (`notices_en`, `notices_fr`).
macro_rules! per_language {
    ($( $(#[$doc:meta])* $name:ident($arg:ident: $ty:ty) );* $(;)?) => {
        $(
            $(#[$doc])*
            pub fn $name($arg: $ty, language: Language) -> String {
                match language {
                    Language::En => notices_en::$name($arg),
                    Language::Fr => notices_fr::$name($arg),
                }
            }
        )*
    };
}

per_language! {
    /// A notice of the reader.
    input_notice(n: &crate::input::InputNotice);
    /// Why the reader cannot read a file.
    input_error(e: &crate::input::InputError);
    /// A notice of the summary.
    notice(n: &crate::validate::Notice);
    /// Why a file cannot be validated.
    refusal(r: &crate::validate::Refusal);
    /// Why a header row does not give payrun's columns.
    columns_error(e: &crate::validate::columns::ColumnsError);
    /// A line of `validate`'s summary.
    line(l: &crate::validate::Line<'_>);
    /// "cannot validate PATH", the context of a reading error.
    cannot_validate(path: &str);
}

/// Headers as listed in a message, and how many more.
pub fn listed(list: &[String], more: usize, language: Language) -> String {
    match language {
        Language::En => notices_en::listed(list, more),
        Language::Fr => notices_fr::listed(list, more),
    }
}

/// A language of the human-facing outputs. English by default; French
/// for the French-speaking payroll offices payrun serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    #[default]
    En,
    Fr,
}

impl Language {
    /// The config name of a language, as recorded with a run.
    pub fn name(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Fr => "fr",
        }
    }

    /// The language recorded with a run; anything unknown reads as English.
    pub fn from_name(name: &str) -> Language {
        match name {
            "fr" => Language::Fr,
            _ => Language::En,
        }
    }

    /// This language's texts.
    pub const fn text(self) -> &'static Text {
        match self {
            Language::En => &en::TEXT,
            Language::Fr => &fr::TEXT,
        }
    }

    /// This language's texts of closing the books (`payrun reconcile`).
    pub const fn closing(self) -> &'static Closing {
        match self {
            Language::En => &closing::EN,
            Language::Fr => &closing::FR,
        }
    }

    /// A decimal amount as people read it in this language:
    /// `6,091,999.50` or `6 091 999,50` (see [`grouped`]). Anything that
    /// is not a plain decimal is returned unchanged.
    pub fn amount(self, amount: &str) -> String {
        match self {
            Language::En => grouped(amount, ",", "."),
            Language::Fr => grouped(amount, FRENCH_GROUP, ","),
        }
    }
}
