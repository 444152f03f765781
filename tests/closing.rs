//! Closing a payroll (issue 13): reconciling against the provider's own
//! statement, the approval gate under crashes, and the control totals. The
//! real binary against the in-process sandbox.

mod common;

use common::*;
use payrun::sandbox::SandboxConfig;
use std::process::Command;

/// A payroll of XOF rows; `account(i)` gives row i's account.
fn xof_payroll(n: usize, account: impl Fn(usize) -> String) -> String {
    let mut s = String::from(HEADER);
    s.push('\n');
    for i in 0..n {
        s.push_str(&format!(
            "{},{},XOF,momo,Salary {i},Ama,Mensah{i}\n",
            account(i),
            1000 + i
        ));
    }
    s
}

/// The sandbox's statement, as its back office exports it.
fn statement(sb: &Sandbox, lang: &str) -> String {
    sandbox_statement(sb, &format!("&lang={lang}"))
}

/// reconciliation.csv as (transaction id, result, state).
fn results(w: &Work) -> Vec<(String, String, String)> {
    read_csv(&w.path("reconciliation.csv"))
        .iter()
        .map(|r| (r[3].to_string(), r[0].to_string(), r[4].to_string()))
        .collect()
}

fn sha256_hex(path: &std::path::Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn a_french_statement_settles_unknown_payouts_and_names_every_discrepancy() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    // Row 0 is debited, then answered 503: unknown under `hold`.
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &xof_payroll(4, accounts));
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let report = w.report_rows();
    let tx = |i: usize| col(&report, i, "transaction_id");
    assert_eq!(col(&report, 0, "state"), "unknown");

    // The provider's French export, edited: row 1's amount differs, row 2's
    // line is missing, and a line payrun never sent is added.
    let fr = statement(&sb, "fr");
    assert!(
        fr.starts_with("Référence;Compte;Montant;Devise;Statut"),
        "{fr}"
    );
    let mut lines: Vec<String> = Vec::new();
    for l in fr.lines() {
        if l.starts_with(&tx(2)) {
            continue;
        }
        if l.starts_with(&tx(1)) {
            lines.push(l.replace(";1001;", ";1010;"));
        } else {
            lines.push(l.to_string());
        }
    }
    lines.push("tx-not-ours;2250700009999;777;XOF;Réussi;2026-11-23 10:00:00".into());
    let st = w.write("releve.csv", &(lines.join("\n") + "\n"));

    let out = reconcile(&w, &["--statement", "releve.csv"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        stdout.contains(&format!("{}: unknown -> executed", tx(0))),
        "{stdout}"
    );
    let got = results(&w);
    let find = |id: &str| got.iter().find(|r| r.0 == id).cloned().unwrap();
    assert_eq!(find(&tx(0)).1, "matched");
    assert_eq!(find(&tx(0)).2, "executed");
    assert_eq!(find(&tx(1)).1, "amount_differs");
    assert_eq!(find(&tx(2)).1, "missing_from_statement");
    assert_eq!(find(&tx(3)).1, "matched");
    assert_eq!(find("tx-not-ours").1, "unknown_to_payrun");
    let summary = read_csv(&w.path("reconciliation.csv.summary.csv"));
    assert_eq!(summary.len(), 1);
    assert_eq!(
        summary[0].iter().collect::<Vec<_>>(),
        ["XOF", "2", "2003", "1", "1001", "2", "1779", "0", "0"]
    );
    // The settlement is audited with the statement's hash and line.
    let audit = String::from_utf8_lossy(&reconcile(&w, &["--audit"]).stdout).to_string();
    let sha = sha256_hex(&st);
    assert!(audit.contains(&sha), "{audit}");
    assert!(audit.contains("line 2"), "{audit}");
    let audit_lines = audit.lines().count();

    // Idempotent: the same statement again changes nothing.
    let before = std::fs::read(w.path("reconciliation.csv")).unwrap();
    let out = reconcile(&w, &["--statement", "releve.csv"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("->"));
    assert_eq!(std::fs::read(w.path("reconciliation.csv")).unwrap(), before);
    let audit = String::from_utf8_lossy(&reconcile(&w, &["--audit"]).stdout).to_string();
    assert_eq!(audit.lines().count(), audit_lines);
    // Nothing is left open.
    let out = reconcile(&w, &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
}

#[test]
fn the_providers_own_headers_and_status_words_come_from_the_config() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &xof_payroll(3, account));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let en = statement(&sb, "en");
    let own = en
        .replacen(
            "Transaction ID,Account,Amount,Currency,Status",
            "Ref,Acct,Amt,Ccy,Etat",
            1,
        )
        .replace(",Successful,", ",DONE,");
    w.write("export.csv", &own);
    // Without the mapping: a clear error naming the missing columns and
    // what the first row holds (`Ref` is a default name of the id).
    let out = reconcile(&w, &["--statement", "export.csv"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("no account column") && text(&out).contains("\"Acct\""),
        "{}",
        text(&out)
    );
    w.write(
        "payrun.toml",
        "[statement]\ntransaction_id = [\"Ref\"]\naccount = [\"Acct\"]\namount = [\"Amt\"]\n\
         currency = [\"Ccy\"]\nstatus = [\"Etat\"]\npaid = [\"done\"]\n",
    );
    let out = reconcile(&w, &["--statement", "export.csv"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        results(&w).iter().all(|r| r.1 == "matched"),
        "{:?}",
        results(&w)
    );
    assert_eq!(results(&w).len(), 3);
}

#[test]
fn initiate_only_after_a_kill_between_initiation_and_execution_sends_no_execute() {
    // `before_commit:2`: the commit after the claim, the first payout's
    // `initiated` with its execute intent, dies unwritten.
    for point in ["after_intent_commit", "after_answer", "before_commit:2"] {
        let sb = Sandbox::start(SandboxConfig::default());
        let w = Work::new();
        let file = w.write("payroll.csv", &xof_payroll(3, account));
        let out = w
            .run_cmd(&file, &sb.base_url(), &["--concurrency", "1"])
            .env("PAYRUN_FAULT", point)
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("fault point"),
            "{point}: {}",
            text(&out)
        );
        if point == "before_commit:2" {
            let r = sb.ledger().requests;
            assert_eq!((r.initiates, r.executes), (1, 0), "{point}: {r:?}");
        }
        let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
        // A crash after the execute intent leaves that payout for the
        // approver's run: not complete (3), and still not executed.
        let want = if point == "after_intent_commit" { 3 } else { 0 };
        assert_eq!(code(&out), want, "{point}: {}", text(&out));
        let ledger = sb.ledger();
        assert_eq!(ledger.requests.executes, 0, "{point}: {ledger:?}");
        for t in &ledger.transactions {
            assert_eq!(t.execute_calls, 0, "{point}: {t:?}");
        }
        // The approver's run executes each exactly once (the intent a crash
        // left is re-sent: `resend`; under the default `hold` it would be
        // parked as unknown for an operator).
        let out = w.run(&file, &sb.base_url(), &["--ambiguous", "resend"]);
        assert_eq!(code(&out), 0, "{point}: {}", text(&out));
        for t in &sb.ledger().transactions {
            assert_eq!(t.debits, 1, "{point}: {t:?}");
        }
    }
}

#[test]
fn initiate_only_writes_control_totals_and_expect_total_guards_the_execute() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &xof_payroll(3, account));
    let out = w.run(&file, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        text(&out).contains("--expect-total XOF=3003"),
        "{}",
        text(&out)
    );
    let approval = read_csv(&w.path("approval-run-1.csv"));
    assert_eq!(
        approval[0].iter().collect::<Vec<_>>(),
        ["XOF", "3", "3003", ""]
    );

    for wrong in [
        &["--expect-total", "XOF=3000"][..],
        &["--expect-total", "GHS=3003"],
    ] {
        let out = w.run(&file, &sb.base_url(), wrong);
        assert_eq!(code(&out), 1, "{wrong:?}: {}", text(&out));
        assert!(text(&out).contains("do not add up"), "{}", text(&out));
        assert_eq!(sb.ledger().requests.executes, 0, "{wrong:?}");
    }
    let out = w.run(&file, &sb.base_url(), &["--expect-total", "XOF=3003"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_eq!(sb.ledger().requests.executes, 3);
}

#[test]
fn expect_total_refuses_a_batch_that_was_never_approved() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    let file = w.write("payroll.csv", &xof_payroll(2, account));
    let out = w.run(&file, &sb.base_url(), &["--expect-total", "XOF=2001"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("--initiate-only first"),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.total, 0);
}

#[test]
fn a_poison_row_is_set_aside_and_the_rest_of_the_run_completes() {
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    // Row 1 always gets a 500 on initiation.
    let accounts = |i: usize| {
        if i == 1 {
            "CI000000000500".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &xof_payroll(4, accounts));
    let cfg = w.write("budget.toml", "max_attempts_total = 8\n");
    let cfg = cfg.display().to_string();
    let out = w.run(
        &file,
        &sb.base_url(),
        &["--config", &cfg, "--concurrency", "1"],
    );
    assert_eq!(code(&out), 3, "{}", text(&out));
    let report = w.report_rows();
    let states: Vec<String> = (0..4).map(|i| col(&report, i, "state")).collect();
    assert_eq!(states, ["executed", "set_aside", "executed", "executed"]);
    assert_eq!(col(&report, 1, "provider_code"), "ATTEMPTS_SPENT");
    assert_eq!(col(&report, 1, "attempts"), "8");
    // reconcile lists it, with what can be done, and exits 3.
    let out = reconcile(&w, &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        listed.contains(&col(&report, 1, "transaction_id")),
        "{listed}"
    );
    assert!(
        listed.contains("set_aside") && text(&out).contains("1 set_aside"),
        "{listed}"
    );
    // A re-run sends nothing for it again.
    let before = sb.ledger().requests.initiates;
    let out = w.run(&file, &sb.base_url(), &["--config", &cfg]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(sb.ledger().requests.initiates, before);
}

#[test]
fn pending_payouts_are_settled_by_polling_the_status_call() {
    use payrun::sandbox::Dialect;
    let sb = Sandbox::start(SandboxConfig {
        dialect: Dialect::Pending,
        ..Default::default()
    });
    let w = Work::new();
    // Row 1 fails at settlement (magic recipient-not-found account).
    let accounts = |i: usize| {
        if i == 1 {
            "CI000000000404".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &xof_payroll(3, accounts));
    let status_call = "[provider.status_call]\nmethod = \"GET\"\n\
                       path = \"/status/{transactionId}\"\nstatus = \"/data/status\"\n";
    let cfg = w.write("poll.toml", status_call).display().to_string();
    let out = w.run(&file, &sb.base_url(), &["--config", &cfg]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let report = w.report_rows();
    let states: Vec<String> = (0..3).map(|i| col(&report, i, "state")).collect();
    assert_eq!(
        states,
        ["executed", "execute_failed", "executed"],
        "{}",
        text(&out)
    );
    assert!(sb.ledger().requests.status >= 3);
    let audit = String::from_utf8_lossy(&reconcile(&w, &["--audit"]).stdout).to_string();
    assert!(audit.contains(",poll,processing,executed,"), "{audit}");

    // With `settle_wait = "0s"` a run asks nothing: the payouts stay
    // processing (accepted by the provider, not final).
    let sb = Sandbox::start(SandboxConfig {
        dialect: Dialect::Pending,
        ..Default::default()
    });
    let w = Work::new();
    w.parked();
    let file = w.write("payroll.csv", &xof_payroll(2, account));
    let out = w.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(sb.ledger().requests.status, 0);
    assert_eq!(col(&w.report_rows(), 0, "state"), "processing");
    // `reconcile --poll` with the built-in profile (the sandbox's status
    // call, no config) asks once each: the sandbox answers PROCESSING
    // first, so they are still open, exit 3.
    let out = reconcile(&w, &["--poll", "--base-url", &sb.base_url()]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2 still processing or unknown"),
        "{}",
        text(&out)
    );
    assert_eq!(sb.ledger().requests.status, 2);
    // --until-settled asks again, with a progress line per round, until
    // they are final: exit 0 (nothing open), the report rewritten.
    let out = reconcile(
        &w,
        &[
            "--poll",
            "--until-settled",
            "--max-wait",
            "1m",
            "--base-url",
            &sb.base_url(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("processing -> executed"));
    assert!(
        text(&out).contains("status call round 1:"),
        "{}",
        text(&out)
    );
    assert_eq!(col(&w.report_rows(), 0, "state"), "executed");
    assert_eq!(code(&reconcile(&w, &[])), 0);
}

#[test]
fn reconcile_lists_every_open_state_and_refuses_to_resend_to_another_provider() {
    let sb = Sandbox::start(SandboxConfig::default());
    let other = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &xof_payroll(2, accounts));
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    // A second file, initiated only.
    let second = w.write("second.csv", &xof_payroll(1, |_| account(7)));
    let out = w.run(&second, &sb.base_url(), &["--initiate-only"]);
    assert_eq!(code(&out), 0, "{}", text(&out));

    let out = reconcile(&w, &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        listed.contains(",unknown,") && listed.contains(",initiated,"),
        "{listed}"
    );
    // The count goes to stderr: stdout is one CSV table.
    assert!(
        text(&out).contains("1 initiated, 1 unknown"),
        "{}",
        text(&out)
    );

    // Re-sending to a provider the run was not made against could pay twice.
    let out = reconcile(&w, &["--resend", "--base-url", &other.base_url()]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("nothing was re-sent"), "{}", text(&out));
    assert_eq!(other.ledger().requests.total, 0);
    // To its own provider it goes, and settles.
    let out = reconcile(&w, &["--resend", "--base-url", &sb.base_url()]);
    assert_eq!(code(&out), 0, "{}", text(&out));
}

/// The built-in sandbox keeps its books beside the database: a `--sandbox`
/// run's unknown payout is settled by `reconcile --sandbox --poll`, which
/// starts it again on those books and asks its status call (the built-in
/// profile's). Nothing needs configuring.
#[test]
fn reconcile_poll_on_the_built_in_sandbox_settles_its_runs() {
    let w = Work::new();
    w.parked();
    let file = w.write(
        "payroll.csv",
        &xof_payroll(2, |i| {
            if i == 0 {
                "22501000000000503".to_string()
            } else {
                account(i)
            }
        }),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_payrun"))
        .current_dir(w.dir.path())
        .env("XDG_DATA_HOME", w.path("data"))
        .env_remove("RUST_LOG")
        .arg("run")
        .arg(&file)
        .args(["--sandbox", "--quiet", "--db"])
        .arg(w.db())
        .arg("--report")
        .arg(w.report())
        .output()
        .unwrap();
    assert_eq!(code(&out), 3, "{}", text(&out));
    assert_eq!(col(&w.report_rows(), 0, "state"), "unknown");
    let out = reconcile(&w, &["--sandbox", "--poll"]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("unknown -> executed (provider status SUCCESS)"),
        "{}",
        text(&out)
    );
    assert_eq!(col(&w.report_rows(), 0, "state"), "executed");
}

/// A 429 on the status call pauses the asking for its `Retry-After`
/// (under the rate limiter): the provider is asked again once, not
/// hammered, and the payouts settle when it answers.
#[test]
fn poll_until_settled_honours_retry_after() {
    use payrun::sandbox::Dialect;
    let sb = Sandbox::start(SandboxConfig {
        dialect: Dialect::Pending,
        ..Default::default()
    });
    let w = Work::new();
    w.parked();
    let file = w.write("payroll.csv", &xof_payroll(2, account));
    assert_eq!(code(&w.run(&file, &sb.base_url(), &[])), 3);
    // Every provider call answers 429 (Retry-After: 1) for a second.
    let paused = sb.rt.block_on(async {
        reqwest::Client::new()
            .post(format!("{}/_sandbox/pause", sb.base_url()))
            .bearer_auth(KEY)
            .json(&serde_json::json!({"seconds": 1}))
            .send()
            .await
            .unwrap()
            .status()
    });
    assert!(paused.is_success(), "{paused}");
    let out = reconcile(
        &w,
        &[
            "--poll",
            "--until-settled",
            "--max-wait",
            "1m",
            "--base-url",
            &sb.base_url(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    let requests = sb.ledger().requests;
    assert!(
        (1..=2).contains(&requests.rate_limited),
        "one refused question per payout at most: {requests:?}"
    );
    assert_eq!(col(&w.report_rows(), 1, "state"), "executed");
}

/// A provider that never settles: `--until-settled --max-wait` keeps
/// asking with a growing pause (not hammering it), prints a progress line
/// per round, and at the end of the wait exits 3 (cron: something is still
/// open), naming the payout of another provider it did not ask about.
#[test]
fn poll_until_settled_gives_up_at_max_wait_and_exits_3_while_anything_is_open() {
    use payrun::sandbox::{Dialect, Settlement};
    let slow = Sandbox::start(SandboxConfig {
        dialect: Dialect::Pending,
        settlement: Settlement {
            after_polls: Some(1_000),
            after_ms: None,
        },
        ..Default::default()
    });
    let other = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.parked();
    let file = w.write("payroll.csv", &xof_payroll(2, account));
    assert_eq!(code(&w.run(&file, &slow.base_url(), &[])), 3);
    let second = w.write(
        "second.csv",
        &xof_payroll(1, |_| "22501000000000503".into()),
    );
    let out = w.run(&second, &other.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let out = reconcile(
        &w,
        &[
            "--poll",
            "--until-settled",
            "--max-wait",
            "2s",
            "--base-url",
            &slow.base_url(),
        ],
    );
    assert_eq!(code(&out), 3, "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("status call round 1: 2 asked, 0 settled, 2 still not final"),
        "{said}"
    );
    let rounds = said.matches("status call round ").count();
    assert!((3..=6).contains(&rounds), "{rounds} rounds in 2 s: {said}");
    assert!(
        said.contains("3 still processing or unknown (1 not asked: another provider)"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "not asked: its run was made against {}",
            other.base_url()
        )),
        "{said}"
    );
    assert_eq!(slow.ledger().requests.status, 2 * rounds as u64, "{said}");
    assert_eq!(other.ledger().requests.status, 0);
}

/// Issue 35: with `language = "fr"`, closing the books speaks French —
/// the statement's settlements, scope, summary and last line, the open
/// list, `--poll`, and reconciliation.csv's headers and notes (amounts in
/// them grouped) — while verdicts, states and amount columns stay the
/// machine's.
#[test]
fn closing_the_books_in_french() {
    use payrun::sandbox::Dialect;
    let sb = Sandbox::start(SandboxConfig::default());
    let w = Work::new();
    w.write(
        "payrun.toml",
        &format!("language = \"fr\"\n{NO_SETTLE_WAIT}"),
    );
    let accounts = |i: usize| {
        if i == 0 {
            "CI000000000503".to_string()
        } else {
            account(i)
        }
    };
    let file = w.write("payroll.csv", &xof_payroll(3, accounts));
    let out = w.run(&file, &sb.base_url(), &["--ambiguous", "hold"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let report = w.report_rows();
    let tx = |i: usize| col(&report, i, "transaction_id");

    // Open payouts: the advice in French, the summary line too.
    // (Its stdout is a table for scripts: keys and states stay the
    // machine's; the advice in it is for people.)
    let out = reconcile(&w, &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        table.contains("issue inconnue\u{a0}: --statement RELEVÉ"),
        "{table}"
    );
    let mut printed = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        printed.contains("1 paiement(s) pas encore définitif(s)\u{a0}: 1 issue inconnue"),
        "{printed}"
    );

    // Row 1's amount differs on the statement (12 345 against 1 001).
    let fr = statement(&sb, "fr");
    let lines: Vec<String> = fr
        .lines()
        .map(|l| {
            if l.starts_with(&tx(1)) {
                l.replace(";1001;", ";12345;")
            } else {
                l.to_string()
            }
        })
        .collect();
    w.write("releve.csv", &(lines.join("\n") + "\n"));
    let out = reconcile(&w, &["--statement", "releve.csv"]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    printed.push_str(&text(&out));
    for french in [
        format!(
            "{}\u{a0}: issue inconnue -> exécuté (relevé ligne 2, lot 1)",
            tx(0)
        ),
        "périmètre\u{a0}: fournisseur".into(),
        "dans le périmètre 3 paiement(s)".into(),
        "XOF\u{a0}: rapprochés 2 (2\u{202f}002 XOF)".into(),
        "différents 1 (1\u{202f}001 XOF)".into(),
        "1 écart(s)\u{a0}; rapprochement\u{a0}: reconciliation.csv".into(),
        "sha256 du relevé".into(),
    ] {
        assert!(printed.contains(&french), "{french:?} not in\n{printed}");
    }
    let body = std::fs::read_to_string(w.path("reconciliation.csv")).unwrap();
    assert!(
        body.starts_with("résultat,lot,ligne,id_transaction,état,"),
        "{body}"
    );
    let rows = read_csv(&w.path("reconciliation.csv"));
    let row1 = rows.iter().find(|r| r[3] == tx(1)).unwrap();
    assert_eq!(
        &row1[0], "amount_differs",
        "the verdict stays the machine's"
    );
    assert_eq!(&row1[6], "1001", "amount columns stay plain numbers");
    assert_eq!(
        &row1[15],
        "le relevé indique 12\u{202f}345 XOF, payrun a envoyé 1\u{202f}001 XOF"
    );
    let summary = std::fs::read_to_string(w.path("reconciliation.csv.summary.csv")).unwrap();
    assert!(
        summary.starts_with("devise,rapprochés_nombre,"),
        "{summary}"
    );
    assert!(summary.contains("XOF,2,2002,1,1001,"), "{summary}");

    // Nothing left open: said in French.
    let out = reconcile(&w, &[]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    printed.push_str(&text(&out));
    assert!(
        printed.contains("aucun paiement d'issue inconnue, rien en attente"),
        "{printed}"
    );

    // `--poll` on processing payouts, in French.
    let sb = Sandbox::start(SandboxConfig {
        dialect: Dialect::Pending,
        ..Default::default()
    });
    let w2 = Work::new();
    w2.write(
        "payrun.toml",
        &format!("language = \"fr\"\n{NO_SETTLE_WAIT}"),
    );
    let file = w2.write("payroll.csv", &xof_payroll(2, account));
    let out = w2.run(&file, &sb.base_url(), &[]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    let out = reconcile(&w2, &["--poll", "--base-url", &sb.base_url()]);
    assert_eq!(code(&out), 3, "{}", text(&out));
    printed.push_str(&text(&out));
    assert!(
        text(&out).contains(
            "2 question(s) au fournisseur\u{a0}; 0 réglé(s)\u{a0}; 2 encore en traitement"
        ),
        "{}",
        text(&out)
    );
    let out = reconcile(
        &w2,
        &[
            "--poll",
            "--until-settled",
            "--max-wait",
            "1m",
            "--base-url",
            &sb.base_url(),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    printed.push_str(&text(&out));
    assert!(
        text(&out).contains("en traitement -> exécuté (état chez le fournisseur\u{a0}:"),
        "{}",
        text(&out)
    );
    for english in [
        "unknown",
        "executed",
        "processing",
        "not final",
        "scope:",
        "in scope",
        "statement line",
        "discrepancy",
        "reconciliation:",
        "(summary ",
        "status call",
        "settled",
        "still",
        "payout(s)",
        "nothing open",
        "report of run",
        "not settled",
        "provider status",
    ] {
        assert!(
            !printed.contains(english),
            "English {english:?} in what the clerk read:\n{printed}"
        );
    }
}
