//! Digits grouped by thousands, as each language writes amounts for
//! people. Never used for a file payrun or a script reads back: a grouped
//! amount in a CSV would be text to a spreadsheet.

/// The French group separator: U+202F NARROW NO-BREAK SPACE, the "espace
/// fine insécable" of French typography, and what CLDR's `fr` locale (and
/// so Windows, macOS and Excel in French since 2018-2019) writes between
/// thousands. It never breaks a line inside an amount.
pub const FRENCH_GROUP: &str = "\u{202f}";

/// `amount` (an optional `-`, digits, an optional `.` and digits) with
/// its whole part grouped by three with `group` and `decimal` for the
/// point. Anything else comes back unchanged.
pub fn grouped(amount: &str, group: &str, decimal: &str) -> String {
    let (sign, digits) = match amount.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", amount),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let plain = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !plain(whole) || fraction.is_some_and(|f| !plain(f)) {
        return amount.to_string();
    }
    let mut out = String::with_capacity(amount.len() + whole.len() / 3 * group.len() + 1);
    out.push_str(sign);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push_str(group);
        }
        out.push(c);
    }
    if let Some(f) = fraction {
        out.push_str(decimal);
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_grouped_by_three() {
        assert_eq!(grouped("6091999", ",", "."), "6,091,999");
        assert_eq!(
            grouped("6091999", FRENCH_GROUP, ","),
            "6\u{202f}091\u{202f}999"
        );
        assert_eq!(grouped("150000.50", FRENCH_GROUP, ","), "150\u{202f}000,50");
        assert_eq!(grouped("-1234", ",", "."), "-1,234");
        for short in ["0", "12", "999"] {
            assert_eq!(grouped(short, ",", "."), short);
        }
        assert_eq!(grouped("1000", ",", "."), "1,000");
        // Not a plain decimal: unchanged.
        for odd in ["", "abc", "1.2.3", "1e5", "."] {
            assert_eq!(grouped(odd, ",", "."), odd);
        }
    }
}
