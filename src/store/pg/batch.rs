//! One batch of an import (PostgreSQL): payouts buffered a vector per
//! column and inserted by one statement (`unnest` of arrays), in file
//! order, a row whose transaction id is already recorded left out and
//! reported to the import, which lists it (see `import.rs`).

use crate::machine::State;
use crate::payout::{Payout, SenderOverride};
use crate::store::types::RetryLink;
use anyhow::Result;
use postgres::Client;

/// Buffered payouts, one vector per column (what `unnest` takes).
#[derive(Default)]
pub(super) struct Columns {
    pub(super) seq: Vec<u64>,
    pub(super) id: Vec<i64>,
    pub(super) row: Vec<i64>,
    pub(super) transaction_id: Vec<String>,
    account_id: Vec<String>,
    amount: Vec<String>,
    wire_amount: Vec<String>,
    currency: Vec<String>,
    method: Vec<String>,
    description: Vec<String>,
    b_first: Vec<String>,
    b_last: Vec<String>,
    b_phone: Vec<String>,
    b_email: Vec<String>,
    sender_json: Vec<Option<String>>,
    retry_of: Vec<Option<i64>>,
    origin_run: Vec<Option<i64>>,
    account_key: Vec<String>,
    account_given: Vec<Option<String>>,
}

impl Columns {
    /// Buffers one payout, `seq`-th of the import, under payout id `id`.
    pub(super) fn push(
        &mut self,
        seq: u64,
        id: i64,
        p: &Payout,
        transaction_id: &str,
        link: Option<RetryLink>,
    ) -> Result<()> {
        let sender_json = if p.sender == SenderOverride::default() {
            None
        } else {
            Some(serde_json::to_string(&p.sender)?)
        };
        self.seq.push(seq);
        self.id.push(id);
        self.row.push(p.row as i64);
        self.transaction_id.push(transaction_id.to_string());
        self.account_id.push(p.account_id.clone());
        self.amount.push(p.amount.normalize().to_string());
        self.wire_amount.push(p.wire_amount.clone());
        self.currency.push(p.currency.clone());
        self.method.push(p.payout_method_id.clone());
        self.description.push(p.description.clone());
        self.b_first.push(p.beneficiary_firstname.clone());
        self.b_last.push(p.beneficiary_lastname.clone());
        self.b_phone
            .push(p.beneficiary_phone.clone().unwrap_or_default());
        self.b_email
            .push(p.beneficiary_email.clone().unwrap_or_default());
        self.sender_json.push(sender_json);
        self.retry_of.push(link.map(|l| l.of));
        self.origin_run.push(link.map(|l| l.origin_run));
        self.account_key.push(p.account_key.clone());
        self.account_given.push(p.account_given.clone());
        Ok(())
    }

    pub(super) fn len(&self) -> usize {
        self.seq.len()
    }

    pub(super) fn clear(&mut self) {
        let Columns {
            seq,
            id,
            row,
            transaction_id,
            account_id,
            amount,
            wire_amount,
            currency,
            method,
            description,
            b_first,
            b_last,
            b_phone,
            b_email,
            sender_json,
            retry_of,
            origin_run,
            account_key,
            account_given,
        } = self;
        seq.clear();
        id.clear();
        row.clear();
        transaction_id.clear();
        account_id.clear();
        amount.clear();
        wire_amount.clear();
        currency.clear();
        method.clear();
        description.clear();
        b_first.clear();
        b_last.clear();
        b_phone.clear();
        b_email.clear();
        sender_json.clear();
        retry_of.clear();
        origin_run.clear();
        account_key.clear();
        account_given.clear();
    }

    /// Inserts the rows in order; returns the ids of those inserted (a
    /// row whose transaction id is already recorded is left out).
    pub(super) fn insert(&self, c: &mut Client, run_id: i64) -> Result<Vec<i64>> {
        let rows = c.query(
            "INSERT INTO payouts (id, run_id, row, transaction_id, account_id, amount, wire_amount,
                currency, method, description, b_first, b_last, b_phone, b_email, sender_json,
                state, retry_of, origin_run, account_key, account_given)
             SELECT u.id, $1, u.r, u.t, u.acc, u.amt, u.wire, u.cur, u.meth, u.descr, u.bf, u.bl,
                u.bp, u.be, u.sj, $2, u.retry, u.origin, u.akey, u.agiven
             FROM unnest($3::BIGINT[], $4::BIGINT[], $5::TEXT[], $6::TEXT[], $7::TEXT[],
                $8::TEXT[], $9::TEXT[], $10::TEXT[], $11::TEXT[], $12::TEXT[], $13::TEXT[],
                $14::TEXT[], $15::TEXT[], $16::TEXT[], $17::BIGINT[], $18::BIGINT[], $19::TEXT[],
                $20::TEXT[])
                AS u(id, r, t, acc, amt, wire, cur, meth, descr, bf, bl, bp, be, sj, retry,
                     origin, akey, agiven)
             ORDER BY u.id
             ON CONFLICT (transaction_id) DO NOTHING
             RETURNING id",
            &[
                &run_id,
                &State::Pending.as_str(),
                &self.id,
                &self.row,
                &self.transaction_id,
                &self.account_id,
                &self.amount,
                &self.wire_amount,
                &self.currency,
                &self.method,
                &self.description,
                &self.b_first,
                &self.b_last,
                &self.b_phone,
                &self.b_email,
                &self.sender_json,
                &self.retry_of,
                &self.origin_run,
                &self.account_key,
                &self.account_given,
            ],
        )?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}
