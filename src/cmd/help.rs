//! The text after each subcommand's `--help` options: an example, where
//! the API key comes from, and what the exit codes mean for that command.
//! Kept in one file so the wording stays consistent across commands (the
//! README's "Exit codes" table says the same).

pub const VALIDATE: &str = "\
Example:
  payrun validate payroll.csv --rejected rejected.csv

Sends nothing and needs no API key (PAYRUN_API_KEY is not used).

Exit codes: 0 every row is valid; 1 the file could not be validated at all
(unreadable, missing column, bad config); 2 some rows were rejected.";

pub const RUN: &str = "\
Examples:
  payrun run samples/payroll.csv --sandbox            # rehearse, no money moves
  payrun run payroll.csv --initiate-only              # initiate, write approval-run-N.html
  PAYRUN_API_KEY=... payrun run payroll.csv           # pay (resumes if interrupted)
  payrun run payroll.csv --db postgres://pay@db/pay   # one of several workers on one run
  payrun run failed.csv                               # re-pay exactly the failed payouts

The API key comes from PAYRUN_API_KEY or the file named by `api_key_file` in
payrun.toml, never from a flag.

A person (account key and currency) already paid, in flight or unknown in
the period, or paid the same amount recently, stops the run before anything
is sent; --allow-repeats pays it as a second payment, recorded in the audit
trail and on the approval page (docs/rerun.md).

With require_approval = true in payrun.toml, nothing is executed until
someone other than the run's preparer (--as NAME, else the OS account)
approves it: payrun approve RUN. Without a valid approval the run exits 1,
or waits for one (on_unapproved; the default on PostgreSQL).

Exit codes: 0 every payout executed (with --initiate-only: initiated); 1 the
run could not proceed or stopped early and can be resumed (config, key
refused, provider unreachable, no valid approval, Ctrl-C, a worker's lease
lost); 2 rows
rejected, transaction ids already used, a person already paid in the period
or a recent repeat, or a failed.csv row whose payout did not fail: nothing
sent; 3 finished with payouts not executed (see the report).";

pub const STATUS: &str = "\
Examples:
  payrun status --db payrun.db
  payrun status --db postgres://pay@db/pay             # also the workers holding leases

Reads the database only; needs no API key (PAYRUN_API_KEY is not used).

Exit codes: 0 done; 1 no database or an unreadable one.";

pub const REPORT: &str = "\
Examples:
  payrun report --run 3 --out report.csv
  payrun report --out report.xlsx                     # a workbook

Reads the database only; needs no API key (PAYRUN_API_KEY is not used).

Exit codes: 0 done; 1 no database, no such run, or an output that would
overwrite the database.";

pub const RECONCILE: &str = "\
Examples:
  payrun reconcile                                    # list unknown payouts (CSV)
  payrun reconcile --statement releve.csv             # match the provider's statement
  payrun reconcile --poll --until-settled --max-wait 2h
  PAYRUN_API_KEY=... payrun reconcile --resend
  payrun reconcile --mark executed tx-42 --reason \"statement of 2026-05-31\"
  payrun reconcile --audit > audit.csv

--resend and --poll need the API key: PAYRUN_API_KEY or `api_key_file` in
payrun.toml. A statement's headers and words go in [statement].
After a change the run's report is written again.

Exit codes: 0 nothing left unknown, the mark was recorded, the statement
matches, or (--poll) nothing is left processing or unknown; 1 an error (no
database, lock held, payout not unknown, no reason, key refused, no status
route, Ctrl-C); 3 unknown payouts remain, the statement shows
discrepancies, or (--poll) a payout is still processing or unknown.";

pub const SUMMARY: &str = "\
Example:
  payrun summary 3 --html run-3-approval.html

Reads the database only; needs no API key (PAYRUN_API_KEY is not used).

Exit codes: 0 done; 1 no database, no such run, or an output that would
overwrite the database.";

pub const APPROVE: &str = "\
Examples:
  payrun approve 3 --as \"Kofi Boateng\"              # shows the figures, asks, records
  payrun approve 3 --as Kofi --yes                     # from a script
  payrun approve 3 --revoke --reason \"wrong month\"    # withdraw it

The approver must not be the run's preparer (the name given with --as at
import, or the OS account). Reads and writes the database only; needs no API
key (PAYRUN_API_KEY is not used).

Exit codes: 0 approved (or approved already), or revoked; 1 refused: the
preparer, payouts not initiated yet, the run changed meanwhile, no terminal
and no --yes, not confirmed, no such run or database.";

pub const INIT: &str = "\
Examples:
  payrun init --lang fr                 # payrun.toml, payroll-template.csv/.xlsx
  payrun init --lang fr --from paie.csv # the payrun.toml that reads paie.csv

Never overwrites a file. The API key is not written anywhere: set
PAYRUN_API_KEY or `api_key_file`.

Exit codes: 0 done; 1 a file exists already, or the input cannot be read.";

pub const SANDBOX: &str = "\
Example:
  payrun sandbox --listen 127.0.0.1:8080

Prints the test API key it accepts; clients send it as PAYRUN_API_KEY.

Exit codes: 0 stopped by Ctrl-C or SIGTERM; 1 it could not start.";

pub const PROBE: &str = "\
Example:
  PAYRUN_API_KEY=... payrun probe --base-url https://api.provider.example/v1

Initiates one test payout (never executed) and asks the questions that
move no money; prints what each answer means and a [provider] profile.
The API key comes from PAYRUN_API_KEY or `api_key_file` in payrun.toml.

Exit codes: 0 every finding ok; 1 could not proceed (no URL, no key,
provider unreachable); 3 a finding to check (marked CHECK).";

pub const PAY: &str = "\
Example:
  payrun pay --request card.json --base-url http://127.0.0.1:8080

The API key comes from PAYRUN_API_KEY or `api_key_file` in payrun.toml.

Exit codes: 0 requires_3ds or paid; 1 not sent, unauthorized, rate limited,
or payrun could not proceed; 2 invalid, nothing sent; 3 refused or unknown.";
