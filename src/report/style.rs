//! How a report looks to the person who opens it: the delimiter and
//! byte-order mark of the payroll it answers (a `;` payroll with a BOM,
//! as French Excel writes, gets a `;` report with a BOM, so it opens in
//! columns in the same Excel), the decimal separator that goes with `;`,
//! and the language of the header.

use crate::config::ReportLanguage;
use std::io::Read;
use std::path::Path;

/// The UTF-8 byte-order mark. Excel reads a CSV as UTF-8 only when it
/// starts with one; without it, accents come out garbled on Windows.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bytes read from the payroll to judge its conventions: far more than a
/// header line, one system call.
const SNIFF_BYTES: u64 = 8 * 1024;

/// A report's conventions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportStyle {
    pub delimiter: u8,
    pub bom: bool,
    pub language: ReportLanguage,
}

impl Default for ReportStyle {
    fn default() -> ReportStyle {
        ReportStyle {
            delimiter: b',',
            bom: false,
            language: ReportLanguage::En,
        }
    }
}

impl ReportStyle {
    /// The style of a report answering `payroll`: its delimiter and BOM
    /// when it is a CSV file, the defaults for a workbook or an unreadable
    /// file (the report is still written; only its looks are at stake).
    pub fn of_input(payroll: &Path, language: ReportLanguage) -> ReportStyle {
        let mut head = Vec::new();
        let read =
            std::fs::File::open(payroll).and_then(|f| f.take(SNIFF_BYTES).read_to_end(&mut head));
        let (delimiter, bom) = match read {
            Ok(_) => sniff(&head),
            Err(_) => (b',', false),
        };
        ReportStyle {
            delimiter,
            bom,
            language,
        }
    }

    /// With `;` as delimiter the spreadsheet expects a decimal comma.
    pub fn decimal_comma(&self) -> bool {
        self.delimiter == b';'
    }

    /// An amount as this style writes it: `1234.50` or `1234,50`.
    pub fn amount(&self, amount: &str) -> String {
        if self.decimal_comma() {
            amount.replace('.', ",")
        } else {
            amount.to_string()
        }
    }
}

/// The delimiter the payroll was read with (`crate::input::detect_delimiter`:
/// `;` when the first line with a delimiter has more semicolons than commas
/// outside quotes, else `,`) and whether the bytes start with a BOM.
/// Workbooks (zip or OLE files) are not text: `,` and no BOM.
pub fn sniff(head: &[u8]) -> (u8, bool) {
    let bom = head.starts_with(BOM);
    let text = if bom { &head[BOM.len()..] } else { head };
    if text.starts_with(b"PK") || text.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return (b',', false);
    }
    (crate::input::detect_delimiter(text), bom)
}

/// The report's header in `language`. The English names are the fixed
/// machine names reconciliation scripts key on; the French ones are for
/// people, asked for with `language = "fr"`.
pub fn report_header(language: ReportLanguage) -> [&'static str; 12] {
    language.text().report_header
}

/// The summary's header in `language`.
pub fn summary_header(language: ReportLanguage) -> [&'static str; 4] {
    language.text().summary_header
}

/// The config name of a language, as recorded with the run.
pub fn language_name(language: ReportLanguage) -> &'static str {
    language.name()
}

/// The language recorded with a run; anything unknown reads as English.
pub fn language_from_name(name: &str) -> ReportLanguage {
    ReportLanguage::from_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semicolon_payroll_with_bom_is_recognised() {
        assert_eq!(
            sniff(b"\xEF\xBB\xBFcompte;montant;devise\n1,5;2;3"),
            (b';', true)
        );
        assert_eq!(sniff(b"account_id,amount\n"), (b',', false));
        // A comma inside quotes does not count.
        assert_eq!(sniff(b"\"a,b,c\";x;y\n"), (b';', false));
        // A workbook is not text.
        assert_eq!(sniff(b"PK\x03\x04;;;;"), (b',', false));
    }

    #[test]
    fn decimal_comma_goes_with_semicolons() {
        let s = ReportStyle {
            delimiter: b';',
            ..Default::default()
        };
        assert_eq!(s.amount("1234.50"), "1234,50");
        assert_eq!(ReportStyle::default().amount("1234.50"), "1234.50");
    }

    #[test]
    fn languages_round_trip() {
        for l in [ReportLanguage::En, ReportLanguage::Fr] {
            assert_eq!(language_from_name(language_name(l)), l);
        }
        assert_eq!(
            report_header(ReportLanguage::Fr).len(),
            super::super::REPORT_HEADER.len()
        );
    }
}
