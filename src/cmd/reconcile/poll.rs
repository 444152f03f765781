//! `payrun reconcile --poll [--until-settled [--max-wait D]]`: asks the
//! provider's status call about every `processing` or `unknown` payout of
//! runs made against it, settles what it answers clearly, and — with
//! `--until-settled` — keeps asking with a growing pause until none is open
//! or the wait ends, with a progress line per round on stderr. With
//! `--sandbox` (and no `--base-url`) the built-in sandbox is started on the
//! books beside the database and asked about the sandbox's runs. Exit 0
//! when no `processing` or `unknown` payout is left (of the run, or of
//! every run), 3 while any is, 1 when the asking could not proceed.

use super::{ReconcileArgs, client, rewrite_reports};
use crate::config::Config;
use crate::exit::Exit;
use crate::output::safe_cell;
use crate::reconcile::poll::{self, Ask, Ended, Progress};
use crate::store::{Db, Store};
use anyhow::{Context, Result, bail};
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// `--until-settled` without `--max-wait`: long enough for a mobile-money
/// or bank payout to settle, short enough that a cron job ends.
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(3600);

/// [`settling_line`] in `language`.
pub fn settling_line_in(p: &Progress, language: crate::lang::Language) -> String {
    (language.text().settling)(
        u64::from(p.round),
        p.asked,
        p.settled,
        p.open,
        &whole(p.waited),
        &p.next.map(whole).unwrap_or_default(),
    )
}

/// One round of asking, as a progress line.
pub fn settling_line(p: &Progress) -> String {
    let next = match p.next {
        Some(d) => format!("; asking again in {}", whole(d)),
        None => String::new(),
    };
    format!(
        "status call round {}: {} asked, {} settled, {} still not final after {}{next}",
        p.round,
        p.asked,
        p.settled,
        p.open,
        whole(p.waited)
    )
}

/// A duration as a person reads it: `250ms`, `14s`, `3m20s`.
fn whole(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{}ms", d.as_millis()),
        1..=59 => format!("{s}s"),
        _ => format!("{}m{:02}s", s / 60, s % 60),
    }
}

pub fn command(
    args: &ReconcileArgs,
    db: &Db,
    store: &mut Store,
    out: &mut impl Write,
) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let language = cfg.language();
    let c = language.closing();
    let wait = if args.until_settled {
        args.max_wait.unwrap_or(DEFAULT_MAX_WAIT)
    } else {
        cfg.settle_wait()
    };
    let rt = super::runtime(super::Threads::Workers(1))?;
    let polled = rt.block_on(async {
        let builtin = args.sandbox && args.base_url.is_none();
        let (client, sandbox) = if builtin {
            let file = db
                .file()
                .context("--sandbox keeps the simulator's books beside a database file")?;
            let (running, client) = crate::engine::settle::builtin_sandbox(file).await?;
            (client, Some(running))
        } else {
            (client(args)?, None)
        };
        if !client.has_status_call() {
            bail!(
                "the provider profile names no status call; add [provider.status_call] \
                 (method, path with {{transactionId}}, status pointer) to the config, e.g. \
                 the sandbox's: method = \"GET\", path = \"/status/{{transactionId}}\", \
                 status = \"/data/status\""
            );
        }
        let ask = Ask {
            provider: if builtin {
                "sandbox".to_string()
            } else {
                client.base_url().to_string()
            },
            run: args.run,
            wait,
        };
        let limiter = crate::limiter::Limiter::new(crate::limiter::Settings::new(
            cfg.rate_mode(),
            cfg.max_concurrency(),
        ));
        let (trigger, stop) = crate::shutdown::channel();
        let mut signals = crate::cmd::Signals::install()?;
        let watcher = tokio::spawn(async move {
            signals.stop_requested().await;
            eprintln!("{}", c.stopping_question);
            trigger.fire();
        });
        let polled = poll::poll(store, &client, &limiter, &ask, Some(stop), |p| {
            if args.until_settled || p.round > 1 || p.next.is_some() {
                eprintln!("{}", settling_line_in(p, language));
            }
        })
        .await;
        watcher.abort();
        if let Some(s) = sandbox {
            s.shutdown().await.ok();
        }
        polled
    })?;
    let t = language.text();
    for (tx, from, to, word) in &polled.settled {
        writeln!(
            out,
            "{}",
            (c.settled_by_poll)(
                &safe_cell(tx),
                t.state(from.as_str()),
                t.state(to.as_str()),
                &safe_cell(word)
            )
        )?;
    }
    for (tx, why) in &polled.skipped {
        writeln!(
            out,
            "{}",
            (c.not_settled)(&safe_cell(tx), why.describe_in(language))
        )?;
    }
    for (tx, provider) in polled.not_asked.iter().take(20) {
        writeln!(out, "{}", (c.not_asked)(&safe_cell(tx), provider))?;
    }
    let runs: BTreeSet<i64> = store
        .booked(args.run)?
        .iter()
        .filter(|b| polled.settled.iter().any(|s| s.0 == b.transaction_id))
        .map(|b| b.run_id)
        .collect();
    let left = store
        .booked(args.run)?
        .iter()
        .filter(|b| poll::POLLED.contains(&b.state))
        .count();
    writeln!(
        out,
        "{}",
        (c.poll_done)(
            polled.asked,
            polled.settled.len() as u64,
            left as u64,
            polled.not_asked.len() as u64
        )
    )?;
    rewrite_reports(store, runs, &super::inputs(args, db)?, language);
    match &polled.ended {
        Some(e @ (Ended::NoRoute(_) | Ended::Refused(_))) => bail!("{}", e.describe_in(language)),
        Some(Ended::Stopped) => {
            eprintln!("payrun: {}", Ended::Stopped.describe_in(language));
            Ok(Exit::Fatal)
        }
        None => Ok(Exit::complete_if(left == 0)),
    }
}
