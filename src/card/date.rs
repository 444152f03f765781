//! Calendar months for card expiry: [`YearMonth`], the month it is now, and
//! the two-digit `MM`/`YY` fields cards print. A leaf: it imports nothing
//! from payrun, so the `pay` command (`card`) and the sandbox's `/pay`
//! (`sandbox`) read expiry dates with this one copy. No date crate is used
//! for one civil-calendar conversion.

use std::fmt;

/// A calendar month, for card expiry. Cards are valid through the last day
/// of their expiry month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct YearMonth {
    pub year: u16,
    pub month: u8,
}

impl YearMonth {
    /// The month it is now in the westernmost time zone (UTC−12). A card is
    /// refused as expired only once its expiry month has ended everywhere, so
    /// payrun never rejects a card the issuer would still accept; the
    /// provider has the last word on the few hours in between.
    pub fn current() -> YearMonth {
        /// UTC−12 is the earliest local time on Earth.
        const WESTERNMOST_OFFSET_SECS: u64 = 12 * 3600;
        YearMonth::from_unix(unix_now().saturating_sub(WESTERNMOST_OFFSET_SECS))
    }

    /// The month it is now in UTC: the sandbox's clock, as a provider's.
    pub fn now_utc() -> YearMonth {
        YearMonth::from_unix(unix_now())
    }

    /// The UTC calendar month of a Unix time (days-to-civil algorithm of
    /// Howard Hinnant, exact for the whole proleptic Gregorian calendar).
    pub fn from_unix(secs: u64) -> YearMonth {
        let z = (secs / 86_400) as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        YearMonth {
            year: u16::try_from(year).unwrap_or(u16::MAX),
            month: month as u8,
        }
    }
}

impl fmt::Display for YearMonth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}/{:02}", self.month, self.year % 100)
    }
}

/// Seconds since the Unix epoch by the system clock (0 if the clock is set
/// before 1970, which only makes every card look unexpired).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Exactly two ASCII digits (`07`, `29`), as cards print the expiry month
/// and year; anything else (`7`, `2029`, ` 7`) is `None`.
pub fn two_digits(s: &str) -> Option<u8> {
    if s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// A two-digit expiry month, `01` to `12`.
pub fn parse_month(mm: &str) -> Option<u8> {
    two_digits(mm).filter(|m| (1..=12).contains(m))
}

/// A two-digit expiry year `YY`, meaning 20YY.
pub fn parse_year(yy: &str) -> Option<u16> {
    two_digits(yy).map(|y| 2000 + u16::from(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_months_from_unix_time() {
        let ym = |year, month| YearMonth { year, month };
        assert_eq!(YearMonth::from_unix(0), ym(1970, 1));
        assert_eq!(YearMonth::from_unix(951_782_400), ym(2000, 2));
        assert_eq!(YearMonth::from_unix(1_700_000_000), ym(2023, 11));
        assert_eq!(YearMonth::from_unix(1_709_251_199), ym(2024, 2));
        assert_eq!(YearMonth::from_unix(1_709_251_200), ym(2024, 3));
        assert_eq!(YearMonth::from_unix(4_102_444_800), ym(2100, 1));
        assert!(YearMonth::current() >= ym(2025, 1));
        assert_eq!(ym(2029, 7).to_string(), "07/29");
    }

    /// Moved from the sandbox, which had its own copy of the conversion.
    #[test]
    fn civil_dates() {
        let at_day = |days: u64| {
            let ym = YearMonth::from_unix(days * 86_400);
            (u32::from(ym.year), u32::from(ym.month))
        };
        assert_eq!(at_day(0), (1970, 1));
        assert_eq!(at_day(31), (1970, 2));
        // 2000-02-29 is day 11_016; 2000-03-01 is day 11_017.
        assert_eq!(at_day(11_016), (2000, 2));
        assert_eq!(at_day(11_017), (2000, 3));
        // 2024-12-31 is day 20_088; 2025-01-01 is day 20_089.
        assert_eq!(at_day(20_088), (2024, 12));
        assert_eq!(at_day(20_089), (2025, 1));
        let now = YearMonth::now_utc();
        assert!(now.year >= 2025 && (1..=12).contains(&now.month));
    }

    #[test]
    fn two_digit_fields() {
        assert_eq!(two_digits("07"), Some(7));
        assert_eq!(two_digits("00"), Some(0));
        for bad in ["7", "007", " 7", "a7", "", "+7"] {
            assert_eq!(two_digits(bad), None, "{bad}");
        }
        assert_eq!(parse_month("12"), Some(12));
        assert_eq!(parse_month("13"), None);
        assert_eq!(parse_month("00"), None);
        assert_eq!(parse_year("29"), Some(2029));
        assert_eq!(parse_year("2029"), None);
    }
}
