//! The sandbox's own pages, outside the provider's API and its faults:
//! `GET /_sandbox/ledger` (the books as JSON) and the 3-D Secure
//! challenge a payer's browser opens (`/_sandbox/3ds/{id}`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use super::super::card;
use super::super::state;
use super::App;

/// `GET /_sandbox/ledger`: sandbox-only, no authentication, no faults.
pub(super) async fn ledger(State(app): State<Arc<App>>) -> Response {
    let snapshot = app.snapshot();
    let bytes = serde_json::to_vec(&snapshot).unwrap_or_default();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        bytes,
    )
        .into_response()
}

fn page_for(id: &str, view: Option<state::CardView>) -> Response {
    match view {
        Some(v) => Html(card::three_ds_page(&card::PageView {
            transaction_id: id,
            amount: v.amount.to_string(),
            currency: &v.currency,
            masked_card: &v.masked_card,
            status: v.status,
        }))
        .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            Html("<!doctype html>\n<p>No card payment with this transaction id.</p>\n"),
        )
            .into_response(),
    }
}

/// `GET /_sandbox/3ds/{id}`: the issuer's challenge page (HTML, for a
/// browser; no authentication, as the payer holds no API key).
pub(super) async fn three_ds_page(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    let view = app.ledger().card(&id);
    page_for(&id, view)
}

/// `POST /_sandbox/3ds/{id}` with form field `action=approve|decline`.
pub(super) async fn three_ds_submit(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let action = std::str::from_utf8(&body).ok().and_then(|form| {
        form.split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == "action")
            .map(|(_, v)| v.to_owned())
    });
    let approve = match action.as_deref() {
        Some("approve") => true,
        Some("decline") => false,
        _ => {
            return (
                StatusCode::BAD_REQUEST,
                Html("<!doctype html>\n<p>Send action=approve or action=decline.</p>\n"),
            )
                .into_response();
        }
    };
    let view = {
        let mut ledger = app.ledger();
        let view = ledger.complete_3ds(&id, approve);
        if let Err(r) = app.commit(&mut ledger) {
            return *r;
        }
        view
    };
    page_for(&id, view)
}
