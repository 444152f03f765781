//! Card rules of the sandbox's `/pay`: the test cards and their 3-D Secure
//! enrolment, the Luhn, expiry and CVV checks, masking to first 6 / last 4,
//! and the 3-D Secure page a payer's browser is sent to. Nothing here keeps
//! a card number, CVV or OTP: callers get back only a masked number. The
//! Luhn check, the mask and the expiry dates are `card::pan` and
//! `card::date`, the same code `payrun pay` uses.

use crate::card::date::YearMonth;
use crate::card::pan::luhn_valid;

pub(crate) use crate::card::date::{parse_month, parse_year};
/// The sandbox shows and keeps what `payrun pay` shows: first 6 and last 4
/// digits at most, fewer for short numbers.
pub(crate) use crate::card::pan::mask_pan as mask;

/// Enrolled in 3-D Secure: `/pay` answers `REQUIRES_3DS` with a redirect.
pub const ENROLLED_CARDS: [&str; 2] = ["4000000000003220", "4000002760003184"];
/// A valid card that is not enrolled: `/pay` answers 422 `CARD_NOT_3DS_ENROLLED`
/// (as does every other valid number not listed here).
pub const NOT_ENROLLED_CARD: &str = "4242424242424242";
/// Enrolled, but the issuer declines it: `/pay` answers 422 `CARD_DECLINED`.
pub const DECLINED_CARD: &str = "4000000000000002";

/// What the sandbox's issuer says about a valid card number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enrolment {
    Enrolled,
    NotEnrolled,
    Declined,
}

pub(crate) fn enrolment(number: &str) -> Enrolment {
    if ENROLLED_CARDS.contains(&number) {
        Enrolment::Enrolled
    } else if number == DECLINED_CARD {
        Enrolment::Declined
    } else {
        Enrolment::NotEnrolled
    }
}

/// Why a card number is refused, or `None` when it is well formed.
pub(crate) fn card_number_problem(number: &str) -> Option<&'static str> {
    if !number.bytes().all(|b| b.is_ascii_digit()) {
        return Some("must contain digits only");
    }
    // ISO/IEC 7812 primary account numbers have 12 to 19 digits.
    if !(12..=19).contains(&number.len()) {
        return Some("must have 12 to 19 digits");
    }
    if !luhn_valid(number) {
        return Some("fails the Luhn check");
    }
    None
}

/// Why a CVV is refused, or `None`.
pub(crate) fn cvv_problem(cvv: &str) -> Option<&'static str> {
    let ok = (3..=4).contains(&cvv.len()) && cvv.bytes().all(|b| b.is_ascii_digit());
    (!ok).then_some("must be 3 or 4 digits")
}

/// A card is valid through the last day of its expiry month.
pub(crate) fn expired(year: u16, month: u8, now: (u32, u32)) -> bool {
    (u32::from(year), u32::from(month)) < now
}

/// The current (year, month) in UTC, from the system clock.
pub(crate) fn current_year_month() -> (u32, u32) {
    let now = YearMonth::now_utc();
    (u32::from(now.year), u32::from(now.month))
}

/// Escapes text for an HTML page (transaction ids are chosen by the
/// merchant and may hold anything).
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes a path segment (RFC 3986: only unreserved characters
/// stay as they are).
pub(crate) fn encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What the 3-D Secure page shows about a payment.
pub(crate) struct PageView<'a> {
    pub transaction_id: &'a str,
    pub amount: String,
    pub currency: &'a str,
    pub masked_card: &'a str,
    pub status: &'a str,
}

/// The issuer's 3-D Secure challenge page: the payment and two buttons
/// posting `action=approve` or `action=decline` back to the same URL.
pub(crate) fn three_ds_page(view: &PageView<'_>) -> String {
    let id = html_escape(view.transaction_id);
    let card = html_escape(view.masked_card);
    let currency = html_escape(view.currency);
    let status = html_escape(view.status);
    let form = if view.status == "REQUIRES_3DS" {
        "<form method=\"post\">\
         <button name=\"action\" value=\"approve\">Approve</button> \
         <button name=\"action\" value=\"decline\">Decline</button></form>"
    } else {
        "<p>This payment is no longer waiting for authentication.</p>"
    };
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>3-D Secure (sandbox)</title></head>\
         <body><h1>3-D Secure check (payrun sandbox)</h1>\
         <p>Transaction <code>{id}</code>: {amount} {currency} with card <code>{card}</code>.</p>\
         <p>Status: <strong id=\"status\">{status}</strong></p>{form}</body></html>\n",
        amount = view.amount,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn() {
        for good in [
            "4242424242424242",
            "4000000000003220",
            "4000002760003184",
            DECLINED_CARD,
            "79927398713",
        ] {
            assert!(luhn_valid(good), "{good}");
        }
        for bad in ["4242424242424241", "79927398710", "", "4242x42424242424"] {
            assert!(!luhn_valid(bad), "{bad}");
        }
    }

    #[test]
    fn card_number_rules() {
        assert_eq!(card_number_problem("4000000000003220"), None);
        assert_eq!(
            card_number_problem("4000 0000 0000 3220"),
            Some("must contain digits only")
        );
        assert_eq!(
            card_number_problem("42424242"),
            Some("must have 12 to 19 digits")
        );
        assert_eq!(
            card_number_problem("4000000000003221"),
            Some("fails the Luhn check")
        );
    }

    #[test]
    fn cvv_rules() {
        assert_eq!(cvv_problem("123"), None);
        assert_eq!(cvv_problem("1234"), None);
        for bad in ["", "12", "12345", "12a"] {
            assert!(cvv_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn expiry_rules() {
        assert_eq!(parse_month("01"), Some(1));
        assert_eq!(parse_month("12"), Some(12));
        for bad in ["00", "13", "1", "011", "ab"] {
            assert_eq!(parse_month(bad), None, "{bad}");
        }
        assert_eq!(parse_year("30"), Some(2030));
        assert_eq!(parse_year("2030"), None);
        // Valid through the end of the expiry month.
        assert!(!expired(2026, 5, (2026, 5)));
        assert!(expired(2026, 4, (2026, 5)));
        assert!(expired(2025, 12, (2026, 1)));
        assert!(!expired(2027, 1, (2026, 12)));
    }

    #[test]
    fn masking_keeps_first_six_last_four() {
        assert_eq!(mask("4000000000003220"), "400000******3220");
        // 12 digits: 6 + 4 would leave only 2 hidden; the shared mask shows
        // the last 4 only.
        assert_eq!(mask("400000000000"), "********0000");
        assert_eq!(mask("1234"), "****");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html_escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(encode_segment("tx-1_a.b~c"), "tx-1_a.b~c");
        assert_eq!(encode_segment("a/b c?é"), "a%2Fb%20c%3F%C3%A9");
    }

    #[test]
    fn page_escapes_and_offers_buttons() {
        let page = three_ds_page(&PageView {
            transaction_id: "<script>",
            amount: "100".into(),
            currency: "XOF",
            masked_card: "400000******3220",
            status: "REQUIRES_3DS",
        });
        assert!(page.contains("&lt;script&gt;"));
        assert!(!page.contains("<script>"));
        assert!(page.contains("value=\"approve\""));
        assert!(page.contains("400000******3220"));
    }
}
