//! The per-person guard's look-ups, the account keys of earlier payouts and
//! the run overrides, tested against every backend (SQLite always,
//! PostgreSQL when `PAYRUN_TEST_POSTGRES` is set): both must give the same
//! answers.

use super::test_support::{new_run, payout, stores};
use super::{NewOverride, OverrideKind, PersonQuery, Store, Transition};
use crate::machine::{GUARDED, State};
use crate::payout::Payout;
use crate::provider::wire::Sender;

/// Runs `f` on a fresh store of every backend under test.
fn each(f: impl Fn(&mut Store, &str)) {
    let dir = tempfile::tempdir().unwrap();
    for mut store in stores(dir.path()) {
        let name = format!("{store:?}");
        f(&mut store, &name);
    }
}

/// Runs one statement on the store's connection (to age a payout, or to
/// make one look recorded before keys existed).
fn exec(store: &Store, sql: &str) {
    match store {
        Store::Sqlite(s) => {
            s.conn.execute_batch(sql).unwrap();
        }
        Store::Postgres(p) => {
            let sql = sql.to_string();
            p.call(move |c| Ok(c.batch_execute(&sql)?)).unwrap();
        }
    }
}

/// Awa's payout of `amount` on row `row`.
fn awa(row: u64, amount: &str) -> Payout {
    Payout {
        account_id: "2250701100001".into(),
        account_key: "+2250701100001".into(),
        ..payout(row, amount)
    }
}

/// A committed run of period `period` paying `payouts` under ids
/// `IDENTITY-ROW`.
fn run(store: &mut Store, identity: &str, period: &str, payouts: &[Payout]) -> i64 {
    let sender = Sender::default();
    let mut new = new_run(identity, &sender);
    new.period = period;
    let mut imp = store.begin_import(&new).unwrap();
    for p in payouts {
        imp.add(p, &format!("{identity}-{}", p.row)).unwrap();
    }
    imp.commit().unwrap()
}

fn query<'a>(period: &'a str, amount: &'a str) -> PersonQuery<'a> {
    PersonQuery {
        account_key: "+2250701100001",
        currency: "XOF",
        period,
        amount,
        window_days: 20,
        origin_run: None,
    }
}

/// The transaction ids `q` finds from inside a new import.
fn found(store: &mut Store, q: &PersonQuery<'_>) -> Vec<String> {
    let sender = Sender::default();
    let imp = store.begin_import(&new_run("probe", &sender)).unwrap();
    imp.same_person(q)
        .unwrap()
        .into_iter()
        .map(|e| e.transaction_id)
        .collect()
}

fn set_state(store: &mut Store, tx: &str, path: &[State]) {
    let id = store.payout_by_transaction_id(tx).unwrap().unwrap().id;
    let mut from = State::Pending;
    let ts: Vec<Transition> = path
        .iter()
        .map(|&to| {
            let t = Transition::new(id, from, to);
            from = to;
            t
        })
        .collect();
    store.apply(&ts).unwrap();
}

#[test]
fn a_person_is_found_by_key_in_the_period_whatever_the_amount() {
    each(|store, b| {
        run(
            store,
            "nov",
            "2026-11",
            &[awa(2, "95000"), payout(3, "95000")],
        );
        // Same period: any amount. The other payee is never found.
        assert_eq!(found(store, &query("2026-11", "105000")), ["nov-2"], "{b}");
        // Another period: only the same amount, within the window.
        assert_eq!(found(store, &query("2026-12", "95000")), ["nov-2"], "{b}");
        assert!(found(store, &query("2026-12", "105000")).is_empty(), "{b}");
        // Another currency or person: nothing.
        let mut other = query("2026-11", "95000");
        other.currency = "GHS";
        assert!(found(store, &other).is_empty(), "{b}");
        other = query("2026-11", "95000");
        other.account_key = "+2250701100002";
        assert!(found(store, &other).is_empty(), "{b}");
    });
}

#[test]
fn failed_payouts_do_not_count_and_paid_ones_do() {
    each(|store, b| {
        run(store, "oct", "2026-10", &[awa(2, "1000")]);
        set_state(store, "oct-2", &[State::Initiating, State::InitiateFailed]);
        assert!(found(store, &query("2026-10", "1")).is_empty(), "{b}");
        run(store, "oct2", "2026-10", &[awa(2, "1000")]);
        set_state(
            store,
            "oct2-2",
            &[
                State::Initiating,
                State::Initiated,
                State::Executing,
                State::Executed,
            ],
        );
        assert_eq!(found(store, &query("2026-10", "1")), ["oct2-2"], "{b}");
        assert!(GUARDED.contains(&State::Executed));
    });
}

/// The window is measured from each payout's own last change; a payout
/// still open counts however old (its run pays it when resumed).
#[test]
fn the_window_runs_from_the_payouts_own_time_and_open_ones_always_count() {
    each(|store, b| {
        run(store, "old", "2026-09", &[awa(2, "1000"), awa(3, "2000")]);
        set_state(
            store,
            "old-2",
            &[
                State::Initiating,
                State::Initiated,
                State::Executing,
                State::Executed,
            ],
        );
        // The run started long ago, and so did both payouts.
        exec(
            store,
            "UPDATE runs SET created_at = '2026-01-01T00:00:00.000Z';
             UPDATE payouts SET updated_at = '2026-01-01T00:00:00.000Z';",
        );
        // The executed one is outside the window; the pending one is not.
        assert!(found(store, &query("2026-11", "1000")).is_empty(), "{b}");
        assert_eq!(found(store, &query("2026-11", "2000")), ["old-3"], "{b}");
        // Settled yesterday: inside the window again, whatever the run's start.
        exec(
            store,
            "UPDATE payouts SET updated_at = '2999-01-01T00:00:00.000Z' WHERE row = 2",
        );
        assert_eq!(found(store, &query("2026-11", "1000")), ["old-2"], "{b}");
    });
}

/// A run from before periods counts in the month it was started.
#[test]
fn a_run_without_a_period_belongs_to_the_month_it_started() {
    each(|store, b| {
        run(store, "legacy", "", &[awa(2, "1000")]);
        exec(
            store,
            "UPDATE runs SET created_at = '2026-08-30T10:00:00.000Z'",
        );
        exec(
            store,
            "UPDATE payouts SET updated_at = '2026-08-30T10:00:01.000Z'",
        );
        set_state(
            store,
            "legacy-2",
            &[State::Initiating, State::InitiateFailed],
        );
        exec(
            store,
            "UPDATE payouts SET state = 'executed', updated_at = '2026-08-30T10:00:01.000Z'",
        );
        assert_eq!(found(store, &query("2026-08", "5")), ["legacy-2"], "{b}");
        assert!(found(store, &query("2026-09", "5")).is_empty(), "{b}");
    });
}

/// A re-payment is not compared with the payouts of the request it
/// belongs to; others of the period still count. At most `PER_ROW`.
#[test]
fn a_re_payment_leaves_out_its_own_request() {
    each(|store, b| {
        let first = run(store, "nov", "2026-11", &[awa(2, "1000"), awa(3, "1000")]);
        let other = run(store, "extra", "2026-11", &[awa(2, "500")]);
        let mut q = query("2026-11", "1000");
        q.origin_run = Some(first);
        assert_eq!(found(store, &q), ["extra-2"], "{b}");
        q.origin_run = Some(other);
        assert_eq!(found(store, &q), ["nov-2", "nov-3"], "{b}");
        let many: Vec<Payout> = (2..12).map(|r| awa(r, "7")).collect();
        run(store, "many", "2026-11", &many);
        let n = found(store, &query("2026-11", "1")).len();
        assert_eq!(n as i64, super::person::PER_ROW, "{b}");
    });
}

#[test]
fn keys_of_payouts_recorded_before_keys_are_filled_once() {
    each(|store, b| {
        run(store, "old", "2026-10", &[awa(2, "1000"), payout(3, "5")]);
        exec(store, "UPDATE payouts SET account_key = NULL");
        assert!(found(store, &query("2026-10", "1")).is_empty(), "{b}");
        let mut seen = Vec::new();
        let n = store
            .fill_account_keys(&mut |a| {
                seen.push(a.to_string());
                format!("+{a}")
            })
            .unwrap();
        assert_eq!(n, 2, "{b}");
        seen.sort();
        assert_eq!(seen, ["2250701100001", "acc3"], "{b}");
        assert_eq!(found(store, &query("2026-10", "1")), ["old-2"], "{b}");
        assert_eq!(store.fill_account_keys(&mut |_| unreachable!()).unwrap(), 0);
    });
}

#[test]
fn overrides_are_kept_with_an_audit_line_and_read_back() {
    each(|store, b| {
        let first = run(store, "nov", "2026-11", &[awa(2, "95000")]);
        let earlier = store.payout_by_transaction_id("nov-2").unwrap().unwrap().id;
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("copy", &sender)).unwrap();
        let payout_id = imp.add(&awa(2, "105000"), "copy-2").unwrap();
        imp.add_override(NewOverride {
            kind: OverrideKind::SecondPayment,
            row: 2,
            payout_id,
            earlier_id: Some(earlier),
            currency: Some("XOF".into()),
            amount: Some("105000".into()),
            detail: "paid with --allow-repeats: row 2".into(),
        })
        .unwrap();
        imp.add_override(NewOverride {
            kind: OverrideKind::TotalsRow,
            row: 9,
            payout_id: None,
            earlier_id: None,
            currency: Some("XOF".into()),
            amount: Some("200000".into()),
            detail: "row 9 is a totals row".into(),
        })
        .unwrap();
        imp.add_skipped(3, earlier).unwrap();
        let run_id = imp.commit().unwrap();
        let o = store.overrides(run_id).unwrap();
        assert_eq!(o.second_payments.len(), 1, "{b}");
        assert_eq!(o.second_payments_total, 1);
        assert_eq!(
            o.second_payments[0].transaction_id.as_deref(),
            Some("copy-2")
        );
        let t = o.totals_row.as_ref().unwrap();
        assert_eq!((t.row, t.amount.as_deref()), (9, Some("200000")), "{b}");
        assert_eq!(o.second_payments[0].currency.as_deref(), Some("XOF"));
        assert_eq!(o.skipped_as_paid, 1);
        assert!(store.overrides(first).unwrap().is_empty(), "{b}");
        let audit = store.audit(run_id).unwrap();
        assert_eq!(audit.len(), 1, "{b}");
        let [tx, _, action, from, to, reason] = audit[0].clone();
        assert_eq!(
            (tx.as_str(), action.as_str(), from.as_str(), to.as_str()),
            ("copy-2", "allow_repeat", "pending", "pending")
        );
        assert_eq!(reason, "paid with --allow-repeats: row 2");
    });
}

#[test]
fn second_payments_beyond_the_listed_ones_are_counted() {
    each(|store, b| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("big", &sender)).unwrap();
        let n = super::overrides::MAX_LISTED as u64 + 3;
        for row in 2..n + 2 {
            let payout_id = imp.add(&payout(row, "1"), &format!("big-{row}")).unwrap();
            imp.add_override(NewOverride {
                kind: OverrideKind::SecondPayment,
                row,
                payout_id,
                earlier_id: None,
                currency: None,
                amount: None,
                detail: format!("row {row}"),
            })
            .unwrap();
        }
        let run_id = imp.commit().unwrap();
        let o = store.overrides(run_id).unwrap();
        assert_eq!(o.second_payments.len(), super::overrides::MAX_LISTED, "{b}");
        assert_eq!(o.second_payments_total, n);
        assert_eq!(o.second_payments[0].detail, "row 2");
    });
}

#[test]
fn a_batch_of_look_ups_answers_as_each_one_alone() {
    each(|store, b| {
        let first = run(
            store,
            "nov",
            "2026-11",
            &[awa(2, "95000"), payout(3, "95000"), awa(4, "1000")],
        );
        run(store, "dec", "2026-12", &[awa(2, "95000")]);
        let mut queries = vec![
            query("2026-11", "105000"),
            query("2026-12", "95000"),
            query("2027-01", "7"),
            query("2026-11", "95000"),
        ];
        queries[3].origin_run = Some(first);
        let mut gsk = query("2026-11", "95000");
        gsk.account_key = "+2250701100002";
        queries.push(gsk);
        let alone: Vec<Vec<String>> = queries.iter().map(|q| found(store, q)).collect();
        let sender = Sender::default();
        let imp = store.begin_import(&new_run("probe", &sender)).unwrap();
        let together: Vec<Vec<String>> = imp
            .same_person_many(&queries)
            .unwrap()
            .into_iter()
            .map(|found| found.into_iter().map(|e| e.transaction_id).collect())
            .collect();
        assert_eq!(together, alone, "{b}");
        assert!(alone.iter().any(|f| f.len() > 1), "{b}: {alone:?}");
        assert!(alone.iter().any(Vec::is_empty), "{b}");
        assert!(imp.same_person_many(&[]).unwrap().is_empty(), "{b}");
        // The earlier payouts of a batch of ids: those found, by id.
        let ids = ["nov-2", "missing", "dec-2", "nov-2"].map(String::from);
        let held = imp.earlier_many(&ids).unwrap();
        let mut got: Vec<(&str, i64)> = held.iter().map(|(t, e)| (t.as_str(), e.run_id)).collect();
        got.sort();
        assert_eq!(got, [("dec-2", first + 1), ("nov-2", first)], "{b}");
        assert_eq!(held["nov-2"], imp.earlier("nov-2").unwrap().unwrap(), "{b}");
    });
}
