//! One provider call carried out once its faults have passed: the checks
//! (`checks`), then the business rules of each call on the books, saved to
//! the state file before the answer leaves.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};

use super::super::card;
use super::super::fields;
use super::super::misbehave;
use super::super::state::{self, Answer};
use super::checks::{check_auth, check_headers, read_body};
use super::reply::{Refused, body_error};
use super::{App, Call, base_url};
use crate::provider::wire::codes;

/// Checks and carries out one call. `Err` is a refusal that changed
/// nothing (or, for a failed state save, a 500).
pub(super) async fn answer(
    app: &App,
    call: Call,
    headers: &HeaderMap,
    body: Body,
    status_id: Option<String>,
) -> Result<Answer, Refused> {
    check_auth(app, headers)?;
    check_headers(call, headers)?;
    let bytes = read_body(headers, body).await?;
    match call {
        Call::Initiate => {
            let req = fields::initiate(&bytes).map_err(body_error)?;
            if state::always_500(&req.request.account_id) {
                return Ok(Answer::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    codes::INTERNAL_ERROR,
                    "internal error (magic account ...500)",
                ));
            }
            if state::initiate_refused(&req.request.account_id) {
                return Ok(Answer::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    codes::INVALID_ACCOUNT,
                    "the recipient account is invalid",
                ));
            }
            if !app.payout_methods.contains(&req.request.payout_method_id) {
                return Ok(Answer::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    codes::INVALID_PAYOUT_METHOD,
                    "unknown payoutMethodId",
                ));
            }
            let mut ledger = app.ledger();
            let Some(wallet) = ledger.wallet(&req.request.currency) else {
                return Ok(no_wallet(&req.request.currency));
            };
            let mut a = ledger.initiate(&req, wallet);
            app.commit(&mut ledger)?;
            if let (Some(what), Some(data)) = (app.misbehaviour.initiate_mismatch, a.data.as_mut())
            {
                misbehave::mismatch(data, what);
            }
            Ok(a)
        }
        Call::Execute => {
            let req = fields::execute(&bytes).map_err(body_error)?;
            let mut ledger = app.ledger();
            let a = ledger.execute(&req.transaction_id);
            app.commit(&mut ledger)?;
            Ok(a)
        }
        Call::Status => {
            let mut ledger = app.ledger();
            let a = ledger.status(status_id.as_deref().unwrap_or_default());
            app.commit(&mut ledger)?;
            Ok(a)
        }
        Call::Pay => {
            let req = fields::pay(&bytes, card::current_year_month()).map_err(body_error)?;
            if app
                .merchant_id
                .as_ref()
                .is_some_and(|m| *m != req.merchant_id)
            {
                return Ok(Answer::new(
                    StatusCode::FORBIDDEN,
                    codes::INVALID_MERCHANT,
                    "merchant_id does not belong to this API key",
                ));
            }
            if !app.payment_methods.contains(&req.payment_method_id) {
                return Ok(Answer::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    codes::INVALID_PAYMENT_METHOD,
                    "unknown payment_method_id",
                ));
            }
            match req.enrolment {
                card::Enrolment::Enrolled => {}
                card::Enrolment::NotEnrolled => {
                    return Ok(Answer::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        codes::CARD_NOT_3DS_ENROLLED,
                        "only 3-D Secure enrolled cards are accepted",
                    ));
                }
                card::Enrolment::Declined => {
                    return Ok(Answer::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        codes::CARD_DECLINED,
                        "the issuer declined the card",
                    ));
                }
            }
            let base = base_url(headers, app.local_addr);
            let mut ledger = app.ledger();
            let Some(wallet) = ledger.wallet(&req.currency) else {
                return Ok(no_wallet(&req.currency));
            };
            let a = ledger.pay(&req, wallet, &base);
            app.commit(&mut ledger)?;
            Ok(a)
        }
    }
}

fn no_wallet(currency: &str) -> Answer {
    Answer::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        codes::CURRENCY_WALLET_MISMATCH,
        format!("the merchant has no {currency} wallet"),
    )
}
