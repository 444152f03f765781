//! The `payrun.toml` configuration file: its keys, their defaults, and the
//! rule that an unknown key is an error naming it (a typo such as `ambigous`
//! in a payments config must never be silently ignored). Command-line flags
//! override the file; the merge happens once, in `cmd`. A leaf: it imports
//! no other module of payrun.

mod statement;
pub use statement::{DateOrder, StatementSpec, parse_duration};

use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Default database file name, and the one used with `--sandbox` so that a
/// demo run on the simulator can never be mistaken for a real run of the
/// same file. Both live in the per-user data folder ([`default_db`]).
pub const DEFAULT_DB: &str = "payrun.db";
pub const DEFAULT_SANDBOX_DB: &str = "payrun-sandbox.db";

/// The per-user database (re-run keys, docs/rerun.md): `payrun/payrun.db`
/// (or `payrun-sandbox.db`) in the platform's data folder —
/// `$XDG_DATA_HOME` or `~/.local/share` on Linux, `~/Library/Application
/// Support` on macOS, `%APPDATA%` on Windows — so a payroll run from any
/// folder meets the history of every earlier run.
pub fn default_db(sandbox: bool) -> Result<PathBuf> {
    let dir = dirs::data_dir().context(
        "no per-user data folder (HOME is not set): pass --db or set `database` in payrun.toml",
    )?;
    Ok(dir.join("payrun").join(if sandbox {
        DEFAULT_SANDBOX_DB
    } else {
        DEFAULT_DB
    }))
}

/// The database a command uses: the flag, else the `database` key, else
/// the per-user default.
pub fn resolve_db(flag: Option<&Path>, cfg: &Config, sandbox: bool) -> Result<PathBuf> {
    match (flag, &cfg.database) {
        (Some(p), _) => Ok(p.to_path_buf()),
        (None, Some(p)) => Ok(p.clone()),
        (None, None) => default_db(sandbox),
    }
}
/// Default report path: in the working directory, where an operator looks.
pub const DEFAULT_REPORT: &str = "report.csv";

/// Environment variable holding the provider's API key.
pub use crate::provider::API_KEY_ENV;

// ---- rate keys: `rate`, `max_rate`, `max_concurrency` ----------------------

/// The fixed rate of callers that still want one number (`Config::rate`) when
/// the file says `rate = "auto"` without `max_rate`. Conservative: most payout
/// APIs allow tens of calls per second and a 429 storm is slower than a
/// modest rate.
pub const DEFAULT_RATE: u32 = 20;
/// Default cap on calls in flight under `rate = "auto"`: Little's law for
/// 400 calls/s at 400 ms latency with half again as headroom is 240, and the
/// cap bounds the connections and memory a run holds.
pub const DEFAULT_MAX_CONCURRENCY: usize = 256;
/// Largest accepted `max_concurrency` / `concurrency` (key or flag): far more
/// calls in flight than any payout provider accepts from one client (Little's
/// law gives 2,500 for 5,000 calls/s at 500 ms), and small enough that the
/// sockets and tasks it implies stay within ordinary process limits.
pub const MAX_CONCURRENCY_LIMIT: usize = 4096;

/// Checks a concurrency value from a key or a flag: at least 1, at most
/// [`MAX_CONCURRENCY_LIMIT`]. The message reads after the key or flag's name.
pub fn check_concurrency(n: usize) -> Result<usize, String> {
    match n {
        0 => Err("must be at least 1 (calls in flight)".into()),
        n if n > MAX_CONCURRENCY_LIMIT => Err(format!(
            "is too large ({n}): at most {MAX_CONCURRENCY_LIMIT} calls in flight"
        )),
        n => Ok(n),
    }
}

/// A concurrency flag (`--max-concurrency`, `--concurrency`): a whole number
/// within [`check_concurrency`]'s bounds.
pub fn parse_concurrency_flag(s: &str) -> Result<usize, String> {
    let n: u128 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of calls in flight"))?;
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    check_concurrency(n)
}

/// The `rate` key: `"auto"` (find the provider's limit; the default) or a
/// fixed number of calls per second that is never exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateSetting {
    #[default]
    Auto,
    Fixed(u32),
}

impl std::str::FromStr for RateSetting {
    type Err = String;
    /// For the command line: `auto` or a whole number of at least 1.
    fn from_str(s: &str) -> Result<RateSetting, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(RateSetting::Auto);
        }
        match s.trim().parse::<u32>() {
            Ok(0) => Err("rate must be at least 1 call per second, or \"auto\"".into()),
            Ok(n) => Ok(RateSetting::Fixed(n)),
            Err(_) if s.trim().bytes().all(|b| b.is_ascii_digit()) && !s.trim().is_empty() => {
                Err(format!(
                    "rate `{s}` is too large: at most {} calls per second, or \"auto\"",
                    u32::MAX
                ))
            }
            Err(_) => Err(format!(
                "rate `{s}` is neither \"auto\" nor a whole number of calls per second"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for RateSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RateSetting, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = RateSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"auto\" or a whole number of calls per second, at least 1")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RateSetting, E> {
                match u32::try_from(v) {
                    Ok(n) if n >= 1 => Ok(RateSetting::Fixed(n)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RateSetting, E> {
                match u32::try_from(v) {
                    Ok(n) if n >= 1 => Ok(RateSetting::Fixed(n)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Unsigned(v), &self)),
                }
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RateSetting, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(Visitor)
    }
}
// ---- end of rate keys ------------------------------------------------------

/// Closing keys. Default attempt budget of a payout across runs: two runs'
/// worth of retries (8 each). The first run that exhausts its retries on a
/// payout stops, as an outage would; the next one sets it aside and
/// finishes, so one poison row costs one extra run, never the payroll.
pub const DEFAULT_MAX_ATTEMPTS_TOTAL: u32 = 16;

/// Default `settle_wait`: a few seconds, enough for a provider that settles
/// within moments of the execute without holding up a run's verdict; slow
/// providers are settled by `payrun reconcile --poll --until-settled`.
pub const DEFAULT_SETTLE_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Default cap on requests in flight: enough to hide a provider latency of a
/// few hundred milliseconds at the default rate.
pub const DEFAULT_CONCURRENCY: usize = 16;

/// Default of `repeat_window_days` (docs/rerun.md): long enough to catch the
/// same payroll run again the same week or the week after, short enough
/// that next month's payroll (28 days or more later) never trips it.
pub const DEFAULT_REPEAT_WINDOW_DAYS: u32 = 20;

/// What to do with a payout whose outcome is unknown after a crash or an
/// ambiguous answer (README, "Ambiguous answers: resend or hold").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Ambiguous {
    /// Re-send the execute once per run, after a delay, with the same
    /// transactionId. Safe only if the provider guarantees executes are
    /// idempotent by transactionId (`docs/provider.md`).
    Resend,
    /// Park the payout as `unknown` for an operator (`payrun reconcile`).
    /// The default: payrun does not know that the provider deduplicates.
    #[default]
    Hold,
}

/// Whether the file's amounts are sent in the currency's major unit (the
/// wire amount is a string of digits, so fractions are rejected) or converted
/// to minor units (cents).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum AmountUnit {
    #[default]
    Major,
    Minor,
}

// ---- report keys: `language` (alias `report_language`) -----------------------

/// The language of every human-facing output (`crate::lang`): the old
/// name of [`crate::lang::Language`], kept for the modules that use it.
pub use crate::lang::Language as ReportLanguage;
// ---- end of report keys ----------------------------------------------------

/// Sender details sent with every payout unless a row overrides them: the
/// same struct as a row's overrides.
pub type SenderConfig = crate::payout::SenderOverride;

/// The whole configuration file. Every key is optional; accessors give the
/// defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The provider's base URL, e.g. `https://api.provider.example/v1`.
    pub base_url: Option<String>,
    /// A file holding the API key (the key itself never goes in this file).
    pub api_key_file: Option<PathBuf>,
    /// Rate keys. `rate`: provider calls per second, shared by every call,
    /// or `"auto"` (the default) to find the provider's limit.
    pub rate: Option<RateSetting>,
    /// With `rate = "auto"`: never more than this many calls per second.
    pub max_rate: Option<u32>,
    /// With `rate = "auto"`: the most calls in flight however slow the
    /// provider answers.
    pub max_concurrency: Option<usize>,
    /// Maximum requests in flight.
    pub concurrency: Option<usize>,
    pub ambiguous: Option<Ambiguous>,
    pub amount_unit: Option<AmountUnit>,
    /// Payout method used when a row has no `payout_method_id`.
    pub default_payout_method_id: Option<String>,
    /// ISO 3166 region (e.g. `CI`, `GH`) for phone numbers written without
    /// a leading `+`; without it such numbers are rejected.
    pub default_phone_region: Option<String>,
    /// The merchant identifier for card payments (`payrun pay`).
    pub merchant_id: Option<String>,
    /// Payment method for card payments when the request has none.
    pub card_payment_method_id: Option<String>,
    // ---- input keys: how input files are read (docs/input.md) ----
    /// How the file writes numbers: "fr" (`25 000,50`) or "en"
    /// (`25,000.50`). Unset: plain digits with an optional `.` only, and any
    /// value whose reading depends on the convention is refused.
    pub number_format: Option<NumberFormat>,
    /// Text encoding of CSV files ("utf-8", "windows-1252", "latin-1",
    /// "utf-16"). Unset: UTF-8, or Windows-1252 detected (with a notice)
    /// when the file is not valid UTF-8.
    pub encoding: Option<String>,
    /// Currency of rows when the file has no currency column.
    pub default_currency: Option<String>,
    /// Largest single payout per currency: `[max_amount] XOF = 5000000`.
    /// Replaces the built-in plausibility limit for that currency.
    #[serde(default)]
    pub max_amount: BTreeMap<String, rust_decimal::Decimal>,
    /// Rows not to pay: `[skip] column = "Statut"`, `values = ["annulé"]`.
    pub skip: Option<SkipRule>,
    // ---- end of input keys ----
    #[serde(default)]
    pub sender: SenderConfig,
    /// Maps a header of the file to a canonical column: `"Montant" = "amount"`.
    #[serde(default)]
    pub columns: BTreeMap<String, String>,
    // --- provider keys: how the provider's answers are read (docs/provider.md) ---
    /// The provider profile inline; absent keys take the sandbox defaults.
    pub provider: Option<crate::provider::ProfileSpec>,
    /// A TOML file holding the provider profile instead of `[provider]`.
    pub provider_profile: Option<PathBuf>,
    // --- closing keys: closing the books (docs/closing.md) ---
    /// How to read the provider's statement (`payrun reconcile
    /// --statement`): its column headers and status words.
    pub statement: Option<StatementSpec>,
    /// Requests one payout may use across all runs before an initiation
    /// that never gets a final answer is set aside (`set_aside`).
    pub max_attempts_total: Option<u32>,
    /// How long a run keeps asking the provider's status call about its
    /// `processing`/`unknown` payouts before its verdict (`"30s"`, `"2m"`;
    /// `"0s"`: not at all); default [`DEFAULT_SETTLE_WAIT`].
    pub settle_wait: Option<String>,
    // --- report keys: spreadsheet-ready outputs (README, "The report") ---
    /// The language of every human-facing output: reports, the approval
    /// page, summaries, the terminal's last lines (`crate::lang`).
    /// `report_language`, its name before it covered them all, still reads.
    #[serde(alias = "report_language")]
    pub language: Option<ReportLanguage>,
    // --- re-run keys: paid once per beneficiary (docs/rerun.md) ---
    /// The checkpoint database; default: `payrun.db` in the per-user data
    /// folder ([`default_db`]), so runs from any folder share one history.
    pub database: Option<PathBuf>,
    /// A file holding the PostgreSQL password on its first line, read under
    /// the API key file's rules (`config::key`) when `database` (or `--db`)
    /// is a connection string without one and `PGPASSWORD` is not set
    /// (docs/store.md, "Passwords").
    pub database_password_file: Option<PathBuf>,
    /// The batch/period reference rows are paid under; default: the
    /// current calendar month, `YYYY-MM`.
    pub period: Option<String>,
    /// How many days back the repeat guard compares new rows with earlier
    /// payouts; default [`DEFAULT_REPEAT_WINDOW_DAYS`].
    pub repeat_window_days: Option<u32>,
    // --- operator keys: what happens when a run ends (docs/operating.md) ---
    /// Receives the run's result JSON when a run ends: an `http://` or
    /// `https://` URL (POSTed), or a shell command (the JSON on its stdin).
    pub on_finish: Option<String>,
    /// The file this configuration was read from (none: the defaults). Not
    /// a key: kept so that no command ever writes over it.
    #[serde(skip)]
    pub source: Option<PathBuf>,
    // --- four-eyes keys (README, "3. Approve") ---
    /// The execute step needs an approval recorded by someone other than
    /// the run's preparer (`payrun approve`); default: off.
    pub require_approval: Option<bool>,
    /// Without a valid approval, the execute step waits for one or exits;
    /// default: wait on PostgreSQL, exit on a file.
    pub on_unapproved: Option<OnUnapproved>,
}

/// What the execute step does without a valid approval when one is
/// required (config `on_unapproved`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OnUnapproved {
    /// Check again every few seconds until an approval arrives (Ctrl-C
    /// stops waiting).
    Wait,
    /// Exit with status 1 and say what is missing.
    Exit,
}

impl Config {
    /// The provider profile this configuration asks for:
    /// `provider_profile = "file"`, else the `[provider]` table, else the
    /// sandbox default. Both at once is refused (which one wins would be a
    /// guess).
    pub fn profile(&self) -> Result<crate::provider::Profile> {
        use crate::provider::Profile;
        match (&self.provider_profile, &self.provider) {
            (Some(_), Some(_)) => {
                anyhow::bail!(
                    "the config has both `provider_profile` and a `[provider]` table; keep one"
                )
            }
            (Some(path), None) => Profile::from_file(path),
            (None, Some(spec)) => Ok(Profile::from_spec(spec)?),
            (None, None) => Ok(Profile::sandbox()),
        }
    }

    /// Reads `path`, or `./payrun.toml` when no path is given and that file
    /// exists, or the defaults.
    pub fn load(path: Option<&Path>) -> Result<Config> {
        match path {
            Some(p) => Self::from_file(p),
            None => {
                let default = Path::new("payrun.toml");
                if default.exists() {
                    Self::from_file(default)
                } else {
                    Ok(Config::default())
                }
            }
        }
    }

    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let mut cfg = Self::parse(&text)
            .with_context(|| format!("invalid config file {}", path.display()))?;
        cfg.source = Some(path.to_path_buf());
        Ok(cfg)
    }

    pub fn parse(text: &str) -> Result<Config> {
        let cfg: Config = toml::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))?;
        // Rate keys.
        if cfg.max_rate == Some(0) {
            anyhow::bail!("`max_rate` must be at least 1 call per second");
        }
        if let (Some(RateSetting::Fixed(n)), Some(_)) = (cfg.rate, cfg.max_rate) {
            anyhow::bail!(
                "`max_rate` only applies to `rate = \"auto\"`; with `rate = {n}` the rate itself is the cap: remove one of them"
            );
        }
        if let Some(n) = cfg.max_concurrency {
            check_concurrency(n).map_err(|e| anyhow::anyhow!("`max_concurrency` {e}"))?;
        }
        if let Some(n) = cfg.concurrency {
            check_concurrency(n).map_err(|e| anyhow::anyhow!("`concurrency` {e}"))?;
        }
        if let Some(t) = &cfg.settle_wait {
            parse_duration(t).map_err(|e| anyhow::anyhow!("`settle_wait` {e}"))?;
        }
        if let Some(st) = &cfg.statement {
            st.check()?;
        }
        Ok(cfg)
    }

    /// The API key: `PAYRUN_API_KEY`, else the file named by
    /// `api_key_file` (its first line, trimmed, under the rules of
    /// [`key`]: a regular file, a few KiB at most, owned by you or root).
    /// Never a command-line flag: flags land in shell history and process
    /// listings. The caller shows the file's warning, if any.
    pub fn api_key(&self) -> Result<key::KeyFile> {
        if let Ok(key) = std::env::var(API_KEY_ENV) {
            let key = key.trim();
            if !key.is_empty() {
                return Ok(key::KeyFile {
                    key: secrecy::SecretString::from(key.to_string()),
                    warning: None,
                });
            }
        }
        let Some(path) = &self.api_key_file else {
            anyhow::bail!(
                "no API key: set {API_KEY_ENV} or point `api_key_file` in the config at a file holding the key"
            );
        };
        key::read(path)
    }

    /// One fixed rate, for callers that cannot use auto mode: the fixed
    /// `rate`, else `max_rate`, else `DEFAULT_RATE`.
    pub fn rate(&self) -> u32 {
        match self.rate.unwrap_or_default() {
            RateSetting::Fixed(n) => n,
            RateSetting::Auto => self.max_rate.unwrap_or(DEFAULT_RATE),
        }
    }
    /// How the limiter chooses the rate (rate keys).
    pub fn rate_mode(&self) -> crate::limiter::RateMode {
        match self.rate.unwrap_or_default() {
            RateSetting::Fixed(n) => crate::limiter::RateMode::Fixed(n),
            RateSetting::Auto => crate::limiter::RateMode::Auto {
                ceiling: self.max_rate,
            },
        }
    }
    /// Most calls in flight for the limiter: `max_concurrency`, else the
    /// older `concurrency`, else `DEFAULT_MAX_CONCURRENCY`.
    pub fn max_concurrency(&self) -> usize {
        self.max_concurrency
            .or(self.concurrency)
            .unwrap_or(DEFAULT_MAX_CONCURRENCY)
    }
    pub fn concurrency(&self) -> usize {
        self.concurrency.unwrap_or(DEFAULT_CONCURRENCY)
    }
    /// `max_attempts_total`, else [`DEFAULT_MAX_ATTEMPTS_TOTAL`].
    pub fn max_attempts_total(&self) -> u32 {
        self.max_attempts_total
            .unwrap_or(DEFAULT_MAX_ATTEMPTS_TOTAL)
            .max(1)
    }
    /// `settle_wait`, else [`DEFAULT_SETTLE_WAIT`].
    pub fn settle_wait(&self) -> std::time::Duration {
        self.settle_wait
            .as_deref()
            .and_then(|t| parse_duration(t).ok())
            .unwrap_or(DEFAULT_SETTLE_WAIT)
    }
    pub fn ambiguous(&self) -> Ambiguous {
        self.ambiguous.unwrap_or_default()
    }
    pub fn amount_unit(&self) -> AmountUnit {
        self.amount_unit.unwrap_or_default()
    }
    /// `language` (or `report_language`), else English.
    pub fn language(&self) -> ReportLanguage {
        self.language.unwrap_or_default()
    }
    pub fn repeat_window_days(&self) -> u32 {
        self.repeat_window_days
            .unwrap_or(DEFAULT_REPEAT_WINDOW_DAYS)
    }

    /// `require_approval`, else off.
    pub fn require_approval(&self) -> bool {
        self.require_approval.unwrap_or(false)
    }

    /// This configuration with every key that has a default set to the
    /// value the accessors above give: two files mean the same thing
    /// exactly when their resolved forms are equal. A key whose removal
    /// leaves the resolved form unchanged is at its documented default
    /// (the starting points are tested against this, `template`).
    pub fn resolved(&self) -> Config {
        Config {
            rate: Some(match self.rate_mode() {
                crate::limiter::RateMode::Fixed(n) => RateSetting::Fixed(n),
                crate::limiter::RateMode::Auto { .. } => RateSetting::Auto,
            }),
            max_concurrency: Some(self.max_concurrency()),
            concurrency: Some(self.concurrency()),
            ambiguous: Some(self.ambiguous()),
            amount_unit: Some(self.amount_unit()),
            max_attempts_total: Some(self.max_attempts_total()),
            language: Some(self.language()),
            repeat_window_days: Some(self.repeat_window_days()),
            require_approval: Some(self.require_approval()),
            settle_wait: Some(format!("{}ms", self.settle_wait().as_millis())),
            ..self.clone()
        }
    }
}

// ---- specs read from payrun.toml for other modules (kept here so that
// config imports none of the modules that take a `Config`) ----------------

/// How the file writes numbers (config key `number_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberFormat {
    /// `25 000,50`: groups by space, no-break space, narrow no-break space
    /// or `.`; decimal comma.
    Fr,
    /// `25,000.50`: groups by `,`; decimal point.
    En,
}

/// Rows not to pay, marked in a column payrun does not otherwise read
/// (config `[skip]`): `column = "Statut"`, `values = ["annulé", "non"]`.
/// Values match ignoring case, accents and surrounding spaces. Skipped
/// rows are listed in the summary, never silently dropped.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SkipRule {
    pub column: String,
    pub values: Vec<String>,
}

pub mod key;

#[cfg(test)]
mod tests;
