//! Card numbers (primary account numbers, PANs) as plain text: the Luhn
//! checksum and the one mask payrun shows (first 6 and last 4 digits at
//! most). A leaf: it imports nothing from payrun, so both the `pay` command
//! (`card`) and the sandbox's `/pay` (`sandbox`) use this one copy, and the
//! two can never disagree on what a masked number shows.

/// Shortest and longest primary account number (ISO/IEC 7812 allows 8 to 19
/// digits, but no payment card network issues fewer than 12).
pub const PAN_DIGITS: std::ops::RangeInclusive<usize> = 12..=19;

/// How many characters of text that is not a card number the mask keeps:
/// enough to recognise what was typed, short enough for one error line.
const MASK_TEXT_CHARS: usize = 60;

/// The Luhn (mod 10) checksum every payment card number satisfies; it catches
/// any single mistyped digit and most swapped neighbours.
pub fn luhn_valid(digits: &str) -> bool {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                let d2 = d * 2;
                if d2 > 9 { d2 - 9 } else { d2 }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Masks a card number for display: at most the first 6 and last 4 digits
/// (PCI DSS 3.4), fewer for short numbers so at least 3 digits stay hidden
/// (a 12-digit number shows only its last 4: 6 + 4 would leave 2 hidden).
/// Spaces and dashes are dropped. Text that is not all digits has every digit
/// starred and its other characters kept, so the user can see where the stray
/// character is without any digit being shown.
pub fn mask_pan(raw: &str) -> String {
    let compact: String = raw.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    if compact.is_empty() || !compact.bytes().all(|b| b.is_ascii_digit()) {
        return raw
            .chars()
            .take(MASK_TEXT_CHARS)
            .map(|c| {
                if c.is_ascii_digit() {
                    '*'
                } else if c.is_control() {
                    '?'
                } else {
                    c
                }
            })
            .collect();
    }
    let n = compact.len();
    let (head, tail) = match n {
        13.. => (6, 4),
        8..=12 => (0, 4),
        _ => (0, 0),
    };
    let mut out = String::with_capacity(n);
    out.push_str(&compact[..head]);
    out.extend(std::iter::repeat_n('*', n - head - tail));
    out.push_str(&compact[n - tail..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn() {
        for ok in [
            "4000000000003220",
            "4242424242424242",
            "5555555555554444",
            "378282246310005",
            "79927398713",
        ] {
            assert!(luhn_valid(ok), "{ok}");
        }
        for bad in [
            "4000000000003221",
            "4242424242424241",
            "",
            "42a2",
            "79927398710",
        ] {
            assert!(!luhn_valid(bad), "{bad}");
        }
    }

    #[test]
    fn masking_shows_at_most_first_6_and_last_4() {
        assert_eq!(mask_pan("4000000000003220"), "400000******3220");
        assert_eq!(mask_pan("4000 0000 0000 3220"), "400000******3220");
        assert_eq!(mask_pan("4000-0000-0000-3220"), "400000******3220");
        assert_eq!(mask_pan("378282246310005"), "378282*****0005");
        assert_eq!(mask_pan("4000000000003220123"), "400000*********0123");
        assert_eq!(mask_pan("400000000322"), "********0322");
        assert_eq!(mask_pan("4000000"), "*******");
        assert_eq!(mask_pan("4000 0000 0000 322O"), "**** **** **** ***O");
        assert_eq!(mask_pan(""), "");
    }

    proptest::proptest! {
        #[test]
        fn masked_numbers_show_at_most_ten_digits(digits in "[0-9]{12,19}") {
            let masked = mask_pan(&digits);
            proptest::prop_assert_eq!(masked.len(), digits.len());
            let shown = masked.bytes().filter(u8::is_ascii_digit).count();
            proptest::prop_assert!(shown <= 10 && shown + 3 <= digits.len());
        }
    }
}
