//! Four eyes in the checkpoint, on every backend (as `both_tests.rs`):
//! the preparer recorded by the import, an approval recorded with its
//! payout set only while the run holds the set shown, revocations kept,
//! and the differences named after a change.

use super::both_tests::{advance, import, mask, on_every_backend};
use super::test_support::new_run;
use super::{Action, Change, NewApproval, Store};
use crate::machine::State;
use crate::provider::wire::Sender;
use crate::who::Person;

const INITIATED: &[State] = &[State::Initiating, State::Initiated];

fn person(name: &str) -> Person {
    Person {
        name: name.into(),
        os_user: name.to_lowercase(),
        host: "box".into(),
    }
}

fn approve(store: &mut Store, run_id: i64, by: &Person, action: Action) -> Option<i64> {
    let set = store.payout_set(run_id).unwrap();
    let revokes = store.approval_events(run_id).unwrap().last().map(|e| e.id);
    store
        .record_approval(&NewApproval {
            run_id,
            action,
            by,
            file_sha256: "f",
            period: "2026-05",
            set: &set,
            overrides: &["a note".to_string()],
            revokes: revokes.filter(|_| action == Action::Revoked),
            reason: "checked",
        })
        .unwrap()
        .map(|e| e.id)
}

#[test]
fn an_approval_covers_the_set_it_was_shown_and_names_later_changes() {
    let seen = on_every_backend(|store| {
        let rows = [
            (2, "100", "XOF", "tx-a"),
            (3, "250.5", "XOF", "tx-b"),
            (4, "7", "GHS", "tx-c"),
        ];
        let run = import(store, "r1", &rows);
        // Not initiated yet: the set says so and no approval is recorded.
        assert_eq!(store.payout_set(run).unwrap().not_initiated, 3);
        let kofi = person("Kofi");
        let stale = store.payout_set(run).unwrap();
        for tx in ["tx-a", "tx-b", "tx-c"] {
            advance(store, tx, INITIATED);
        }
        let shown = NewApproval {
            run_id: run,
            action: Action::Approved,
            by: &kofi,
            file_sha256: "f",
            period: "2026-05",
            set: &stale,
            overrides: &[],
            revokes: None,
            reason: "",
        };
        assert_eq!(store.record_approval(&shown).unwrap(), None, "moved");
        let set = store.payout_set(run).unwrap();
        assert_eq!((set.payouts, set.not_initiated), (3, 0));
        let id = approve(store, run, &kofi, Action::Approved).unwrap();
        let events = store.approval_events(run).unwrap();
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].id, events[0].by.clone()), (id, kofi.clone()));
        assert_eq!(events[0].figures, set.figures);
        assert_eq!(events[0].digest, set.digest);
        assert_eq!(events[0].overrides, ["a note"]);
        assert!(
            store.approval_changes(id, run).unwrap().listed.is_empty(),
            "nothing changed"
        );
        // Executing does not change the set; cancelling a payout does.
        let b = super::both_tests::id_of(store, "tx-b");
        store
            .apply(&[super::Transition::new(
                b,
                State::Initiated,
                State::Executing,
            )])
            .unwrap();
        assert_eq!(store.payout_set(run).unwrap().digest, set.digest);
        store.cancel_run(run).unwrap();
        let changes = store.approval_changes(id, run).unwrap();
        assert_ne!(store.payout_set(run).unwrap().digest, set.digest);
        // Revoked: recorded beside the approval, never instead of it.
        let ama = person("Ama");
        approve(store, run, &ama, Action::Revoked).unwrap();
        let events = store.approval_events(run).unwrap();
        let kinds: Vec<_> = events.iter().map(|e| (e.action, e.revokes)).collect();
        assert_eq!(
            kinds,
            [(Action::Approved, None), (Action::Revoked, Some(id))]
        );
        (changes, mask(&events[1].at))
    });
    let (changes, at) = seen;
    assert_eq!(at, "<time>");
    assert_eq!(changes.total, 2);
    assert_eq!(
        changes.listed,
        [
            Change::Left {
                row: 2,
                transaction_id: "tx-a".into(),
                state: Some(State::Cancelled)
            },
            Change::Left {
                row: 4,
                transaction_id: "tx-c".into(),
                state: Some(State::Cancelled)
            }
        ]
    );
}

#[test]
fn the_import_records_its_preparer() {
    on_every_backend(|store| {
        let sender = Sender::default();
        let mut imp = store.begin_import(&new_run("r2", &sender)).unwrap();
        imp.set_preparer(&person("Ama")).unwrap();
        let run = imp.commit().unwrap();
        let p = store.preparer(run).unwrap().unwrap();
        assert_eq!(p.person, person("Ama"));
        assert_eq!(mask(&p.at), "<time>");
        let other = import(store, "r3", &[]);
        assert_eq!(store.preparer(other).unwrap(), None);
    });
}
