//! The sandbox's state file (`--state FILE`, `SandboxConfig::state_file`):
//! transactions, wallets and pending settlements, so a rehearsal survives
//! the end of a command or a restarted sandbox. The file is JSON, written
//! whole to a temporary file beside it, flushed to disk, then renamed over
//! the old one, after every change and before the answer leaves: a killed
//! sandbox leaves either the previous or the new state, never half of one,
//! and never forgets a call it answered.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::dialect::Rules;
use super::state::{Failure, Kind, Ledger, PendingInfo, Status, Txn};

/// Version of the file format, checked on load so a future change is
/// refused clearly instead of misread.
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Saved {
    version: u32,
    wallets: BTreeMap<String, Decimal>,
    next_seq: u64,
    transactions: Vec<SavedTxn>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SavedTxn {
    transaction_id: String,
    kind: String,
    status: String,
    amount: Decimal,
    account: String,
    currency: String,
    /// Hex of the request fingerprint (duplicate detection).
    fingerprint: String,
    seq: u64,
    initiate_calls: u32,
    execute_calls: u32,
    debits: u32,
    at: u32,
    #[serde(default)]
    failure_code: Option<String>,
    #[serde(default)]
    pending: Option<PendingInfo>,
}

fn to_saved(l: &Ledger) -> Saved {
    let mut transactions: Vec<SavedTxn> = l
        .txns
        .iter()
        .map(|(id, t)| SavedTxn {
            transaction_id: id.to_string(),
            kind: match t.kind {
                Kind::Payout => "payout".into(),
                Kind::Card => "card".into(),
            },
            status: t.status.as_str().into(),
            amount: t.amount,
            account: t.account.to_string(),
            currency: l.currencies[usize::from(t.wallet)].to_string(),
            fingerprint: hex::encode(t.fingerprint),
            seq: t.seq,
            initiate_calls: t.initiate_calls,
            execute_calls: t.execute_calls,
            debits: t.debits,
            at: t.at,
            failure_code: t.failure.map(|f| f.code().to_owned()),
            pending: l.pending.get(id).copied(),
        })
        .collect();
    transactions.sort_unstable_by_key(|t| t.seq);
    Saved {
        version: VERSION,
        wallets: l
            .currencies
            .iter()
            .zip(&l.balances)
            .map(|(c, b)| (c.to_string(), *b))
            .collect(),
        next_seq: l.next_seq,
        transactions,
    }
}

fn from_saved(s: Saved, rules: Rules) -> anyhow::Result<Ledger> {
    if s.version != VERSION {
        anyhow::bail!(
            "state file version {} is not supported (this payrun writes version {VERSION})",
            s.version
        );
    }
    let mut l = Ledger::new(&s.wallets, rules)?;
    let mut txns = HashMap::with_capacity(s.transactions.len());
    for t in s.transactions {
        let id = t.transaction_id;
        let wallet = l
            .wallet(&t.currency)
            .with_context(|| format!("transaction {id:?}: no {} wallet", t.currency))?;
        let kind = match t.kind.as_str() {
            "payout" => Kind::Payout,
            "card" => Kind::Card,
            other => anyhow::bail!("transaction {id:?}: unknown kind {other:?}"),
        };
        let status = Status::ALL
            .into_iter()
            .find(|s| s.as_str() == t.status)
            .with_context(|| format!("transaction {id:?}: unknown status {:?}", t.status))?;
        let failure = match t.failure_code {
            None => None,
            Some(code) => Some(
                Failure::ALL
                    .into_iter()
                    .find(|f| f.code() == code)
                    .with_context(|| format!("transaction {id:?}: unknown failure {code:?}"))?,
            ),
        };
        let fingerprint: [u8; 16] = hex::decode(&t.fingerprint)
            .ok()
            .and_then(|v| v.try_into().ok())
            .with_context(|| format!("transaction {id:?}: bad fingerprint"))?;
        if status == Status::Pending {
            l.pending
                .insert(id.as_str().into(), t.pending.unwrap_or_default());
        }
        let txn = Txn {
            amount: t.amount,
            fingerprint,
            account: t.account.into(),
            seq: t.seq,
            initiate_calls: t.initiate_calls,
            execute_calls: t.execute_calls,
            debits: t.debits,
            at: t.at,
            wallet,
            kind,
            status,
            failure,
        };
        if txns.insert(id.clone().into_boxed_str(), txn).is_some() {
            anyhow::bail!("transaction {id:?} appears twice");
        }
    }
    l.txns = txns;
    l.next_seq = s.next_seq;
    Ok(l)
}

/// Loads the ledger from `path`, or, when the file does not exist yet,
/// opens one with `wallets` and writes it. The file's wallets win over the
/// configured ones: they are the state being kept.
pub(crate) fn open(
    path: &Path,
    wallets: &BTreeMap<String, Decimal>,
    rules: Rules,
) -> anyhow::Result<Ledger> {
    match fs::read(path) {
        Ok(bytes) => {
            let saved: Saved = serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not a sandbox state file", path.display()))?;
            from_saved(saved, rules).with_context(|| format!("cannot load {}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let l = Ledger::new(wallets, rules)?;
            save(path, &l)?;
            Ok(l)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Writes the whole state atomically (temporary file, fsync, rename,
/// fsync of the directory).
pub(crate) fn save(path: &Path, l: &Ledger) -> anyhow::Result<()> {
    let bytes = serde_json::to_vec(&to_saved(l)).context("cannot encode the sandbox state")?;
    let mut tmp = PathBuf::from(path);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    tmp.set_file_name(name);
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir)?;
        }
        let mut f = fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Ok(d) = fs::File::open(dir.unwrap_or(Path::new("."))) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().with_context(|| format!("cannot write the sandbox state {}", path.display()))
}

/// The ledger kept in a state file, as `GET /_sandbox/ledger` would list
/// it (request counts are per process and read as zero). Lets a test or
/// a command read what a stopped sandbox left.
pub fn read_state(path: &Path) -> anyhow::Result<super::LedgerSnapshot> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let saved: Saved = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a sandbox state file", path.display()))?;
    let mut l = from_saved(saved, Rules::default())?;
    Ok(l.snapshot(super::RequestCounts::default()))
}

/// A change to one wallet of a state file, made while no sandbox uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalletChange {
    /// Add this amount (a top-up).
    Add(Decimal),
    /// Make the balance exactly this (to rehearse a wallet running out).
    Set(Decimal),
}

/// Edits the wallets of a state file offline (`payrun sandbox --state FILE
/// --top-up XOF=100000`), creating the file with `wallets` if it does not
/// exist yet. Returns the balances after the change. A sandbox serving the
/// same file at the same time would overwrite the change at its next save:
/// use `POST /_sandbox/topup` on a running sandbox instead.
pub fn edit_wallets(
    path: &Path,
    wallets: &BTreeMap<String, Decimal>,
    changes: &[(String, WalletChange)],
) -> anyhow::Result<BTreeMap<String, Decimal>> {
    let mut l = open(path, wallets, Rules::default())?;
    for (currency, change) in changes {
        let current = l
            .wallet(currency)
            .map(|_| l.snapshot(super::RequestCounts::default()).wallets[currency.as_str()])
            .unwrap_or(Decimal::ZERO);
        let delta = match *change {
            WalletChange::Add(a) => a,
            WalletChange::Set(b) => b - current,
        };
        if l.top_up(currency, delta).is_none() {
            anyhow::bail!("the {currency} balance would overflow");
        }
    }
    save(path, &l)?;
    Ok(l.snapshot(super::RequestCounts::default()).wallets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::dialect::{Dialect, Settlement};
    use crate::sandbox::fields;
    use crate::sandbox::state::magic;
    use crate::sandbox::{LedgerSnapshot, RequestCounts};
    use serde_json::json;

    fn init(id: &str, amount: &str, account: &str) -> fields::Initiate {
        let body = json!({"transactionId": id, "amount": amount, "currency": "XOF",
                          "payoutMethodId": "momo", "accountId": account});
        fields::initiate(&serde_json::to_vec(&body).unwrap()).unwrap()
    }

    fn snap(l: &mut Ledger) -> LedgerSnapshot {
        l.snapshot(RequestCounts::default())
    }

    #[test]
    fn a_saved_ledger_loads_back_the_same() {
        let dir = std::env::temp_dir().join(format!("payrun-persist-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.json");
        let _ = fs::remove_file(&path);
        let rules = Rules::new(Dialect::Pending, Settlement::default(), false);
        let wallets: BTreeMap<String, Decimal> = [("XOF".to_string(), Decimal::from(1000))].into();
        let mut l = open(&path, &wallets, rules).unwrap();
        assert!(path.exists(), "created at once");
        let w = l.wallet("XOF").unwrap();
        l.initiate(&init("ok", "100", "1"), w);
        l.initiate(&init("nf", "5", magic::RECIPIENT_NOT_FOUND), w);
        l.initiate(&init("big", "5000", "2"), w);
        l.initiate(&init("idle", "1", "3"), w);
        l.execute("ok");
        l.status("ok");
        l.execute("nf");
        l.execute("big");
        l.top_up("GHS", Decimal::new(25, 1));
        save(&path, &l).unwrap();
        let before = snap(&mut l);

        let mut again = open(&path, &BTreeMap::new(), rules).unwrap();
        assert_eq!(snap(&mut again), before);
        // Wallet indices follow the file's (sorted) currencies.
        let xof = again.wallet("XOF").unwrap();
        // The same body is still a duplicate (fingerprints kept), the
        // pending payout keeps its poll and settles at the next one.
        assert_eq!(
            again.initiate(&init("idle", "1", "3"), xof).code,
            "DUPLICATE_IGNORED"
        );
        assert_eq!(again.status("ok").data.unwrap()["status"], "SUCCESS");
        let s = snap(&mut again);
        assert_eq!(s.wallets["XOF"], Decimal::from(900));
        assert_eq!(s.wallets["GHS"], Decimal::new(25, 1));
        assert_eq!(
            s.get("big").unwrap().failure_code.as_deref(),
            Some("INSUFFICIENT_BALANCE")
        );
        assert_eq!(read_state(&path).unwrap().transactions.len(), 4);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_foreign_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("payrun-persist-bad-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.json");
        fs::write(
            &path,
            b"{\"version\":9,\"wallets\":{},\"nextSeq\":0,\"transactions\":[]}",
        )
        .unwrap();
        let e = open(&path, &BTreeMap::new(), Rules::default())
            .err()
            .expect("refused");
        assert!(format!("{e:#}").contains("version 9"), "{e:#}");
        fs::write(&path, b"not json").unwrap();
        let e = open(&path, &BTreeMap::new(), Rules::default())
            .err()
            .expect("refused");
        assert!(
            format!("{e:#}").contains("not a sandbox state file"),
            "{e:#}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
