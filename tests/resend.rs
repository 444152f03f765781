//! Every send re-checks (issue 28, item 8): `reconcile --resend` and the
//! run's own re-send commit a claim (`unknown → executing`, written only
//! if the payout is still in the state they read) before the execute
//! leaves, and look at the stop signal first; a mark, a statement or a
//! status call settles nothing whose re-send is in flight; a crash between
//! the claim and the answer leaves a payout that may have been paid.
//! Against the sandbox's non-idempotent mode, where a second execute
//! really pays twice: each race below would pay twice, or leave the books
//! saying `execute_failed` for a paid payout, without the claim.

mod common;

use common::pg::Schema;
use common::*;
use payrun::engine::reconcile::{self as lib, ResendLine};
use payrun::machine::State;
use payrun::machine::decide::Verdict;
use payrun::provider::Client;
use payrun::sandbox::{LedgerEntry, SandboxConfig, magic};
use payrun::shutdown::Shutdown;
use payrun::store::{Db, Store};
use secrecy::SecretString;
use std::process::Command;

fn non_idempotent() -> Sandbox {
    Sandbox::start(SandboxConfig {
        non_idempotent_execute: true,
        ..SandboxConfig::default()
    })
}

/// A payroll of one XOF row to `account`.
fn one_row(account: &str) -> String {
    format!("{HEADER}\n{account},5000,XOF,momo,Salary,Awa,Kone\n")
}

/// `payrun run` of `file` on `db` (a file path or a `postgres://` URL).
fn run(w: &Work, db: &str, file: &std::path::Path, sb: &Sandbox, extra: &[&str]) -> String {
    let out = w
        .run_cmd_db(db, file, &sb.base_url(), extra)
        .output()
        .unwrap();
    text(&out)
}

/// A payout left `unknown` whose execute the provider carried out (it
/// answered 503 after debiting): paid once.
fn paid_unknown(w: &Work, db: &str, sb: &Sandbox) -> String {
    w.parked();
    let file = w.write(
        "paid.csv",
        &one_row(&format!("2250700{}", magic::EXECUTE_THEN_503)),
    );
    run(w, db, &file, sb, &[]);
    let tx = only_tx(sb, &format!("2250700{}", magic::EXECUTE_THEN_503));
    assert_eq!((tx.debits, tx.execute_calls), (1, 1), "{tx:?}");
    assert_eq!(state(db, &tx.transaction_id), State::Unknown);
    tx.transaction_id
}

/// A payout left `unknown` whose execute never left: the run died after
/// committing its intent, and the next run (`ambiguous = hold`) parked it.
fn unpaid_unknown(w: &Work, db: &str, sb: &Sandbox) -> String {
    w.parked();
    let file = w.write("unpaid.csv", &one_row("2250700000777"));
    let out = w
        .run_cmd_db(db, &file, &sb.base_url(), &[])
        .env("PAYRUN_FAULT", "before_send:2")
        .output()
        .unwrap();
    assert!(text(&out).contains("fault point"), "{}", text(&out));
    run(w, db, &file, sb, &[]);
    let tx = only_tx(sb, "2250700000777");
    assert_eq!((tx.debits, tx.execute_calls), (0, 0), "{tx:?}");
    assert_eq!(state(db, &tx.transaction_id), State::Unknown);
    tx.transaction_id
}

fn only_tx(sb: &Sandbox, account: &str) -> LedgerEntry {
    let l = sb.ledger();
    let mut it = l
        .transactions
        .into_iter()
        .filter(|t| t.account_id == account);
    let t = it.next().expect("sent");
    assert!(it.next().is_none());
    t
}

fn tx_of(sb: &Sandbox, id: &str) -> LedgerEntry {
    sb.ledger()
        .transactions
        .into_iter()
        .find(|t| t.transaction_id == id)
        .unwrap()
}

fn store(db: &str) -> Store {
    Store::connect(&Db::parse(db)).unwrap()
}

fn state(db: &str, tx: &str) -> State {
    store(db)
        .payout_by_transaction_id(tx)
        .unwrap()
        .unwrap()
        .state
}

fn client(sb: &Sandbox) -> Client {
    Client::new(&sb.base_url(), &SecretString::from(KEY.to_string())).unwrap()
}

/// `reconcile --resend` of what `store` listed as unresolved *before*
/// `meanwhile` ran (another terminal, or a worker), as the library runs it.
fn resend_after(
    db: &str,
    sb: &Sandbox,
    meanwhile: impl FnOnce(&mut Store),
) -> (Vec<ResendLine>, anyhow::Result<lib::Resends>) {
    let mut reader = store(db);
    let unresolved = reader.unresolved(None).unwrap();
    assert_eq!(unresolved.len(), 1, "{unresolved:?}");
    meanwhile(&mut store(db));
    let client = client(sb);
    let mut lines = Vec::new();
    let ended = sb.rt.block_on(lib::resend(
        &mut reader,
        &client,
        unresolved,
        &Shutdown::never(),
        |l| lines.push(l.clone()),
    ));
    (lines, ended)
}

/// On SQLite (`db` a file) and, when `PAYRUN_TEST_POSTGRES` is set, on a
/// schema of its own.
fn on_both(test: &str, f: impl Fn(&Work, &str)) {
    let w = Work::new();
    f(&w, w.db().to_str().unwrap());
    if let Some(schema) = Schema::fresh(test) {
        let w = Work::new();
        f(&w, &schema.url());
    }
}

#[test]
fn a_payout_marked_failed_while_a_re_send_waits_is_never_sent() {
    on_both("a_payout_marked_failed_while_a_re_send_waits", |w, db| {
        let sb = non_idempotent();
        let tx = unpaid_unknown(w, db, &sb);
        // The operator checks with the provider (not paid) and marks it
        // failed from another terminal after the re-send read its list.
        let (lines, ended) = resend_after(db, &sb, |other| {
            lib::mark(
                other,
                std::slice::from_ref(&tx),
                Verdict::Failed,
                "not on the statement",
                |_, _| {},
            )
            .unwrap();
        });
        // Nothing was paid, so the books may say failed.
        let t = tx_of(&sb, &tx);
        assert_eq!((t.execute_calls, t.debits), (0, 0), "{t:?}");
        assert_eq!(state(db, &tx), State::ExecuteFailed);
        assert_eq!(ended.unwrap(), lib::Resends::default());
        let why = lines[0].refused.clone().unwrap_or_default();
        assert!(
            why.contains("changed meanwhile (now execute_failed)"),
            "{lines:?}"
        );
    });
}

#[test]
fn a_payout_a_statement_settled_while_a_re_send_waits_is_never_paid_again() {
    on_both(
        "a_payout_a_statement_settled_while_a_re_send_waits",
        |w, db| {
            let sb = non_idempotent();
            let tx = paid_unknown(w, db, &sb);
            std::fs::write(w.path("releve.csv"), statement(&sb)).unwrap();
            let (lines, ended) = resend_after(db, &sb, |other| {
                let closed = payrun::reconcile::reconcile_statement(
                    other,
                    &w.path("releve.csv"),
                    None,
                    &Default::default(),
                    &Default::default(),
                    &w.path("reconciliation.csv"),
                )
                .unwrap();
                assert_eq!(closed.settled.len(), 1, "{:?}", closed.settled);
            });
            let t = tx_of(&sb, &tx);
            assert_eq!((t.execute_calls, t.debits), (1, 1), "paid once: {t:?}");
            assert_eq!(state(db, &tx), State::Executed);
            ended.unwrap();
            assert!(
                lines[0]
                    .refused
                    .as_deref()
                    .is_some_and(|w| w.contains("now executed")),
                "{lines:?}"
            );
        },
    );
}

/// The sandbox's statement, as its back office exports it.
fn statement(sb: &Sandbox) -> String {
    let url = format!("{}/_sandbox/statement?format=csv&lang=en", sb.base_url());
    sb.rt.block_on(async {
        reqwest::Client::new()
            .get(url)
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    })
}

#[test]
fn a_stop_before_a_re_send_sends_nothing() {
    let sb = non_idempotent();
    let w = Work::new();
    let db = w.db().to_str().unwrap().to_string();
    let tx = paid_unknown(&w, &db, &sb);
    let mut s = store(&db);
    let unresolved = s.unresolved(None).unwrap();
    let (trigger, stop) = payrun::shutdown::channel();
    trigger.fire();
    let ended = sb
        .rt
        .block_on(lib::resend(&mut s, &client(&sb), unresolved, &stop, |_| {}))
        .unwrap();
    assert_eq!(
        ended,
        lib::Resends {
            left: 1,
            interrupted: true
        }
    );
    assert_eq!(tx_of(&sb, &tx).execute_calls, 1);
    assert_eq!(state(&db, &tx), State::Unknown);
}

/// `payrun reconcile ARGS` on the test database.
fn reconcile(w: &Work, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("XDG_DATA_HOME", w.path("data"))
        .env_remove("RUST_LOG")
        .arg("reconcile")
        .arg("--db")
        .arg(w.db())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_re_send_that_dies_after_its_claim_leaves_a_payout_nobody_settles_on_a_guess() {
    let sb = non_idempotent();
    let w = Work::new();
    let db = w.db().to_str().unwrap().to_string();
    let tx = paid_unknown(&w, &db, &sb);
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("PAYRUN_API_KEY", KEY)
        .env("PAYRUN_FAULT", "before_send")
        .args([
            "reconcile",
            "--resend",
            "--base-url",
            &sb.base_url(),
            "--db",
            &db,
        ])
        .output()
        .unwrap();
    assert!(text(&out).contains("fault point"), "{}", text(&out));
    // Claimed, then the process died: executing, which may have paid.
    let p = store(&db).payout_by_transaction_id(&tx).unwrap().unwrap();
    assert_eq!(
        (p.state, p.provider_code.as_str()),
        (State::Executing, lib::RESEND_IN_FLIGHT)
    );
    // A verdict beside it is refused, and says why.
    let out = reconcile(&w, &["--mark", "failed", &tx, "--reason", "not seen"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("is executing"), "{}", text(&out));
    // A statement that shows it paid does not settle it either, and says so.
    std::fs::write(w.path("releve.csv"), statement(&sb)).unwrap();
    let out = reconcile(&w, &["--statement", "releve.csv"]);
    assert!(
        text(&out).contains(&format!("{tx}: not settled: its execute is on its way")),
        "{}",
        text(&out)
    );
    // It is listed, with what to do.
    let out = reconcile(&w, &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert!(text(&out).contains(",executing,"), "{}", text(&out));
    // Resuming its run (hold) parks it as unknown, never failed, never
    // sent again; then the statement settles it.
    let file = w.path("paid.csv");
    run(&w, &db, &file, &sb, &[]);
    assert_eq!(state(&db, &tx), State::Unknown);
    let out = reconcile(&w, &["--statement", "releve.csv"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(state(&db, &tx), State::Executed);
    let t = tx_of(&sb, &tx);
    assert_eq!((t.execute_calls, t.debits), (1, 1), "{t:?}");
}

/// The run's own re-send (`ambiguous = resend`) claims the payout after its
/// delay: one an operator settled meanwhile from another terminal (a
/// worker's database, PostgreSQL) is not sent again.
#[test]
fn the_runs_own_re_send_leaves_a_payout_settled_meanwhile() {
    let Some(schema) = Schema::fresh("the_runs_own_re_send_leaves_a_payout_settled_meanwhile")
    else {
        return;
    };
    let db = schema.url();
    let sb = non_idempotent();
    let w = Work::new();
    let account = format!("2250700{}", magic::EXECUTE_THEN_503);
    let file = w.write("paid.csv", &one_row(&account));
    // A long delay: the operator's mark below lands well inside it.
    let mut child = w
        .run_cmd_db(
            &db,
            &file,
            &sb.base_url(),
            &["--ambiguous", "resend", "--resend-delay-ms", "4000"],
        )
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let tx = loop {
        let unknown = store(&db).unresolved(None).unwrap();
        if let Some(u) = unknown.first() {
            break u.transaction_id.clone();
        }
        assert!(std::time::Instant::now() < deadline, "never unknown");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // The command refuses while the run may still send (it names the
    // worker and changes nothing) ...
    let out = w.cmd_db(
        &db,
        &[
            "reconcile",
            "--mark",
            "executed",
            &tx,
            "--reason",
            "seen paid",
        ],
    );
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("at work on this database")
            && text(&out).contains("Nothing was changed"),
        "{}",
        text(&out)
    );
    // ... so the settlement comes from a writer the command does not fence
    // (the library's mark on another connection): the run's own re-send
    // must still re-read the state before it sends.
    lib::mark(
        &mut store(&db),
        std::slice::from_ref(&tx),
        Verdict::Executed,
        "seen paid",
        |_, _| {},
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let t = tx_of(&sb, &tx);
    assert_eq!((t.execute_calls, t.debits), (1, 1), "paid once: {t:?}");
    assert_eq!(state(&db, &tx), State::Executed);
}
