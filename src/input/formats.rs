//! Number formats of workbook cells that change what an identifier is. A
//! zero-padded format (`0000000000`, Excel's "Special > Zip code" `00000`)
//! shows a number with leading zeros: an account typed as `0701020304`
//! is stored as the number 701020304 and shown as `0701020304`, so the
//! cell's digits are padded back to the width the sheet shows. Cell formats
//! are read for .xlsx/.xlsm only (the spreadsheet library gives them for
//! no other format); elsewhere a number cell in an identifier column is
//! noted by the validator (`validate::numeric`).

/// The least digits a zero-padded number format shows: `0000000000` is
/// 10. Only formats made of zeros alone (first section, before any `;`):
/// other formats add text or separators a person does not type as part of
/// an identifier.
pub fn zero_pad_width(code: &str) -> Option<usize> {
    let first = code.split(';').next()?.trim();
    (first.len() >= 2 && first.bytes().all(|b| b == b'0')).then_some(first.len())
}

/// The digits of a whole non-negative number padded with zeros to `width`;
/// `None` for other texts (a fraction, a sign), which are left as they are.
pub fn pad(digits: &str, width: usize) -> Option<String> {
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("{digits:0>width$}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_padded_formats() {
        assert_eq!(zero_pad_width("0000000000"), Some(10));
        assert_eq!(zero_pad_width("00000;[Red]-00000"), Some(5));
        assert_eq!(zero_pad_width("0"), None);
        assert_eq!(zero_pad_width("General"), None);
        assert_eq!(zero_pad_width("@"), None);
        assert_eq!(zero_pad_width("#,##0"), None);
        assert_eq!(zero_pad_width("00000-0000"), None);
        assert_eq!(zero_pad_width("0.00"), None);
    }

    #[test]
    fn padding() {
        assert_eq!(pad("701020304", 10).as_deref(), Some("0701020304"));
        assert_eq!(pad("2250505112233", 10).as_deref(), Some("2250505112233"));
        assert_eq!(pad("12.5", 10), None);
        assert_eq!(pad("-5", 10), None);
    }
}
