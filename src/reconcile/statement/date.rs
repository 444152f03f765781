//! Calendar days, as a statement writes them and as payrun records its
//! payouts: the statement's dates (or `--from/--to`) bound which payouts it
//! can say are missing (docs/closing.md, "What a statement speaks about").
//! Days only: a statement's times are in the provider's local time, payrun's
//! in UTC, and a day is what a clerk compares.

use crate::config::DateOrder;
use std::fmt;

/// A calendar day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in(year: u16, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

impl Day {
    /// Bounds of an open range (`--from` without `--to`).
    pub const MIN: Day = Day {
        year: 1900,
        month: 1,
        day: 1,
    };
    pub const MAX: Day = Day {
        year: 2999,
        month: 12,
        day: 31,
    };

    fn new(year: u16, month: u8, day: u8) -> Option<Day> {
        ((1900..=2999).contains(&year)
            && (1..=12).contains(&month)
            && day >= 1
            && day <= days_in(year, month))
        .then_some(Day { year, month, day })
    }

    /// The day of a timestamp payrun records (`2026-11-23T16:03:57.123Z`).
    pub fn of_timestamp(ts: &str) -> Option<Day> {
        let d = ts.get(..10)?;
        iso(d)
    }
}

/// `YYYY-MM-DD`.
fn iso(d: &str) -> Option<Day> {
    let mut parts = d.split('-');
    let (y, m, dd) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() > 2 || dd.len() > 2 {
        return None;
    }
    Day::new(y.parse().ok()?, m.parse().ok()?, dd.parse().ok()?)
}

/// Reads the day of a statement's date cell: ISO (`2026-11-23`, with a time
/// after a space or `T`), or day and month as numbers separated by `/`, `-`
/// or `.` in `order` (`23/11/2026 16:03`), with a four-digit year. `None`
/// for anything else (month names, two-digit years): the caller says so.
pub fn parse(text: &str, order: DateOrder) -> Option<Day> {
    let t = text.trim();
    let date = t.split([' ', 'T']).next()?;
    if let Some(d) = iso(date) {
        return Some(d);
    }
    let parts: Vec<&str> = date.split(['/', '-', '.']).collect();
    let [a, b, y] = parts.as_slice() else {
        return None;
    };
    if y.len() != 4 || a.is_empty() || b.is_empty() || a.len() > 2 || b.len() > 2 {
        return None;
    }
    let (a, b): (u8, u8) = (a.parse().ok()?, b.parse().ok()?);
    let (month, day) = match order {
        DateOrder::Dmy => (b, a),
        DateOrder::Mdy => (a, b),
    };
    Day::new(y.parse().ok()?, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: u16, m: u8, d: u8) -> Option<Day> {
        Some(Day {
            year: y,
            month: m,
            day: d,
        })
    }

    #[test]
    fn statement_dates() {
        use DateOrder::*;
        assert_eq!(parse("2026-11-23 16:03:57", Dmy), day(2026, 11, 23));
        assert_eq!(parse("2026-11-23T16:03:57Z", Mdy), day(2026, 11, 23));
        assert_eq!(parse("23/11/2026 16:03", Dmy), day(2026, 11, 23));
        assert_eq!(parse("03/11/2026", Dmy), day(2026, 11, 3));
        assert_eq!(parse("03/11/2026", Mdy), day(2026, 3, 11));
        assert_eq!(parse("3.11.2026", Dmy), day(2026, 11, 3));
        assert_eq!(parse("23-11-2026", Dmy), day(2026, 11, 23));
        for bad in [
            "",
            "23/11/26",
            "23 nov. 2026",
            "2026-02-30",
            "31/04/2026",
            "11/23/2026",
        ] {
            assert_eq!(parse(bad, Dmy), None, "{bad}");
        }
        assert_eq!(parse("2024-02-29", Dmy), day(2024, 2, 29));
        assert_eq!(
            Day::of_timestamp("2026-11-23T16:03:57.123Z"),
            day(2026, 11, 23)
        );
        assert_eq!(Day::of_timestamp(""), None);
        assert_eq!(day(2026, 1, 5).unwrap().to_string(), "2026-01-05");
    }
}
