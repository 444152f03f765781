//! The shared provider rate's one statement (PostgreSQL): reserving a span
//! of the GCRA schedule in `rate_limits`, atomically, on the server's
//! clock. The arithmetic is `limiter::shared::reserve`'s; see
//! `ARCHITECTURE.md`, "Several workers on one run".

use super::Pg;
use anyhow::Result;

/// The server's clock in microseconds (the transaction's start: one
/// instant for the whole statement).
const NOW_US: &str = "(EXTRACT(EPOCH FROM now()) * 1000000)::BIGINT";

impl Pg {
    /// Reserves `span_us` of the schedule `key`: returns the start of the
    /// span (never before now: an idle schedule grants no burst) and the
    /// server's now, both in µs.
    pub fn reserve_rate(&mut self, key: &str, span_us: i64) -> Result<(i64, i64)> {
        let key = key.to_string();
        let sql = format!(
            "INSERT INTO rate_limits AS r (key, tat_us) VALUES ($1, {NOW_US} + $2)
             ON CONFLICT (key) DO UPDATE SET tat_us = GREATEST(r.tat_us, {NOW_US}) + $2
             RETURNING tat_us - $2, {NOW_US}"
        );
        self.call(move |c| {
            let r = c.query_one(&sql, &[&key, &span_us])?;
            Ok((r.try_get(0)?, r.try_get(1)?))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::limiter::shared::reserve;
    use crate::store::Store;
    use crate::store::test_support::pg_target;

    #[test]
    fn the_statement_reserves_as_the_gcra_arithmetic_says() {
        let Some(db) = pg_target() else {
            return;
        };
        let mut a = Store::connect(&db).unwrap();
        let mut b = Store::connect(&db).unwrap();
        let key = "http://p/ pay@example.com";
        let (first, now) = a.reserve_rate(key, 40_000).unwrap();
        assert_eq!(first, now, "a new schedule starts now");
        let mut tat = first + 40_000;
        for (store, span) in [(&mut b, 40_000), (&mut a, 10_000)] {
            let (first, now) = store.reserve_rate(key, span).unwrap();
            assert_eq!((first, first + span), reserve(Some(tat), now, span, 1));
            tat = first + span;
        }
        // Another key is another schedule.
        let (first, now) = b.reserve_rate("http://q/ merchant", 1).unwrap();
        assert_eq!(first, now);
    }
}
