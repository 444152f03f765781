//! `payrun probe`: before a first real run, asks the provider five
//! questions with calls that move no money and prints what each answer
//! was, how the current profile reads it, whether `ambiguous = "resend"`
//! looks safe, and a profile to start from. The library part is
//! `provider::probe`.

use super::{Threads, runtime};
use crate::config::Config;
use crate::exit::Exit;
use crate::provider::Client;
use crate::provider::probe::{self, ProbeSettings, ResendVerdict};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = super::help::PROBE)]
pub struct ProbeArgs {
    /// The language of what it prints (default: the config's `language`).
    #[arg(long, value_enum)]
    pub lang: Option<crate::lang::Language>,
    /// Config file (default: ./payrun.toml if present): base_url, key, profile.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The provider's base URL (overrides `base_url` in the config).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Beneficiary account of the test payout (it is initiated, never executed).
    #[arg(long, default_value = "2250700000001")]
    pub account: String,
    /// Payout method of the test payout.
    #[arg(long, default_value = "momo")]
    pub method: String,
    /// Currency of the test payout.
    #[arg(long, default_value = "XOF")]
    pub currency: String,
    /// Amount of the test payout, as sent (digits): the smallest by default.
    #[arg(long, default_value = "1")]
    pub amount: String,
}

pub fn command(args: ProbeArgs) -> Result<Exit> {
    let cfg = Config::load(args.config.as_deref())?;
    let base_url = args
        .base_url
        .clone()
        .or(cfg.base_url.clone())
        .context("no provider URL: pass --base-url or set base_url in payrun.toml")?;
    if args.amount.is_empty() || !args.amount.bytes().all(|b| b.is_ascii_digit()) {
        anyhow::bail!(
            "--amount {:?} is not digits; give the amount as sent, e.g. --amount 1",
            args.amount
        );
    }
    let profile = cfg.profile()?;
    let client = Client::with_profile(&base_url, &super::api_key(&cfg)?, profile)?;
    let settings = ProbeSettings {
        account: args.account.clone(),
        method: args.method.clone(),
        currency: args.currency.clone(),
        amount: args.amount.clone(),
        sender: (&cfg.sender).into(),
    };
    let rt = runtime(Threads::Workers(1))?;
    let report = rt.block_on(probe::probe(&client, &settings))?;
    let t = args.lang.unwrap_or(cfg.language()).text();
    let [sent, answer, body, profile, finding] = t.probe_labels;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}\n",
        (t.probe_heading)(client.base_url(), &report.transaction_id)
    )?;
    for (i, s) in report.steps.iter().enumerate() {
        writeln!(out, "{}. {}", i + 1, s.question)?;
        writeln!(out, "   {sent} {}", s.request)?;
        let http = s
            .http
            .map_or(t.probe_no_answer.to_string(), |h| format!("HTTP {h}"));
        let code = s.code.as_deref().unwrap_or("-");
        writeln!(out, "   {answer} {}", (t.probe_answer)(&http, code))?;
        writeln!(out, "   {body} {}", s.body)?;
        writeln!(out, "   {profile} {} ({})", s.class, s.class_code)?;
        let mark = t.probe_marks[usize::from(!s.ok)];
        writeln!(out, "   {finding} [{mark}] {}\n", s.finding)?;
    }
    match &report.resend {
        ResendVerdict::Unsafe(why) => writeln!(out, "{}\n", (t.probe_resend_unsafe)(why))?,
        ResendVerdict::Unproven(why) => writeln!(out, "{}\n", (t.probe_resend_unproven)(why))?,
    }
    writeln!(out, "{}", report.skeleton)?;
    out.flush()?;
    Ok(Exit::complete_if(report.steps.iter().all(|s| s.ok)))
}
