//! Identifiers (account, transaction id, phone) read from a workbook's
//! number cells. A spreadsheet keeps 15 significant digits of a number and
//! no leading zero: past 15 digits the identifier was rounded (another
//! account), so it is refused. A leading zero lost cannot be seen in the
//! number, so it is refused only when it can be told: a zero-padded cell
//! format shows the zeros, and the cell is read padded (`input::formats`);
//! any other number cell in these columns is read as its digits and the
//! column is named in a notice of the summary.

use super::columns::{Col, Columns};
use super::reason::Reason;
use crate::input::RawRow;

/// Significant digits a spreadsheet keeps in a number cell.
pub const SPREADSHEET_DIGITS: usize = 15;

/// Columns whose number cells may have lost leading zeros.
const IDENTIFIERS: [Col; 4] = [
    Col::AccountId,
    Col::TransactionId,
    Col::BeneficiaryPhone,
    Col::SenderPhone,
];

/// An identifier read from a workbook's number cell (field `index` of
/// `raw`): more than 15 significant digits were rounded by the
/// spreadsheet, and a fraction or exponent is not an identifier.
pub fn check(raw: &RawRow, index: Option<usize>, value: &str) -> Result<(), Reason> {
    if !index.is_some_and(|i| raw.numeric.contains(&i)) {
        return Ok(());
    }
    let significant = value
        .trim_start_matches('0')
        .bytes()
        .filter(u8::is_ascii_digit)
        .count();
    if significant > SPREADSHEET_DIGITS || value.contains('.') {
        return Err(Reason::NumberCell);
    }
    Ok(())
}

/// Whether field `index` of `raw` is a number cell shown without padding,
/// which may have lost leading zeros.
pub fn unpadded(raw: &RawRow, index: Option<usize>) -> bool {
    index.is_some_and(|i| raw.numeric.contains(&i) && !raw.padded.contains(&i))
}

/// Identifier columns seen holding unpadded number cells: per column, how
/// many rows and the first one.
#[derive(Debug, Default)]
pub struct NumberColumns {
    seen: [Option<(u64, u64)>; IDENTIFIERS.len()],
}

impl NumberColumns {
    /// Records the unpadded, non-empty number cells of `raw`'s identifier
    /// columns.
    pub fn record(&mut self, raw: &RawRow, columns: &Columns) {
        if raw.numeric.is_empty() {
            return;
        }
        for (slot, col) in self.seen.iter_mut().zip(IDENTIFIERS) {
            let index = columns.index(col);
            let filled = index
                .and_then(|i| raw.fields.get(i))
                .is_some_and(|v| !v.trim().is_empty());
            if filled && unpadded(raw, index) {
                let (count, _) = slot.get_or_insert((0, raw.row));
                *count += 1;
            }
        }
    }

    /// One notice per column recorded.
    pub fn notices(&self, columns: &Columns) -> Vec<super::Notice> {
        self.seen
            .iter()
            .zip(IDENTIFIERS)
            .filter_map(|(seen, col)| {
                let (count, first) = (*seen)?;
                Some(super::Notice::NumberColumn {
                    header: columns.label(col).to_owned(),
                    count,
                    first,
                    phone: matches!(col, Col::BeneficiaryPhone | Col::SenderPhone),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(row: u64, cells: &[&str], numeric: &[usize], padded: &[usize]) -> RawRow {
        RawRow {
            row,
            fields: csv::StringRecord::from(cells.to_vec()),
            cell_errors: Vec::new(),
            numeric: numeric.to_vec(),
            padded: padded.to_vec(),
        }
    }

    #[test]
    fn significant_digits_not_padding() {
        let r = raw(2, &["x"], &[0], &[0]);
        assert!(check(&r, Some(0), "000000000000000000123").is_ok());
        assert!(check(&r, Some(0), "1234567890123456").is_err());
        assert!(check(&r, Some(0), "12.5").is_err());
        assert!(check(&r, None, "1234567890123456").is_ok());
    }

    #[test]
    fn columns_of_unpadded_numbers_are_noted_once() {
        let header = [
            "account_id",
            "amount",
            "transaction_id",
            "beneficiary_phone",
            "currency",
            "payout_method_id",
            "beneficiary_firstname",
            "beneficiary_lastname",
        ];
        let columns = Columns::resolve(header, &Default::default(), &[]).unwrap();
        let cells = [
            "701020304",
            "100",
            "0000012",
            "2250701020304",
            "XOF",
            "m",
            "A",
            "B",
        ];
        let mut seen = NumberColumns::default();
        // Account unpadded, id padded, phone unpadded; then account only;
        // then text cells.
        seen.record(&raw(2, &cells, &[0, 1, 2, 3], &[2]), &columns);
        seen.record(&raw(3, &cells, &[0, 1, 2], &[2]), &columns);
        seen.record(&raw(4, &cells, &[], &[]), &columns);
        let notices: Vec<String> = seen
            .notices(&columns)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(
            notices[0].starts_with(
                "column \"account_id\" holds numbers, not text (2 rows, the first row 2): leading zeros would have been lost"
            ),
            "{notices:?}"
        );
        assert!(notices[0].ends_with("format the column as Text"));
        assert!(
            notices[1].starts_with(
                "column \"beneficiary_phone\" holds numbers, not text (row 2) (phone numbers"
            ),
            "{notices:?}"
        );
    }
}
