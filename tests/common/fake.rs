//! A small fake provider for end-to-end tests of how payrun reads
//! answers: `/initiates` answers as the sandbox does (201, the request
//! echoed, `INITIATED`), `/executes` answers whatever body the test
//! writes for the payout, raw (duplicated keys, tampered echoes, odd
//! words), so the test controls every byte payrun reads. Counts the
//! executes it answered.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A payout as its initiation sent it.
#[derive(Debug, Clone)]
pub struct Initiated {
    pub transaction_id: String,
    pub amount: String,
    pub currency: String,
    pub account: String,
}

/// The `/executes` answer for a payout: HTTP status and raw body.
pub type ExecuteAnswer = dyn Fn(&Initiated) -> (u16, String) + Send + Sync;

struct Books {
    initiated: Mutex<HashMap<String, Initiated>>,
    executes: AtomicUsize,
    answer: Box<ExecuteAnswer>,
}

/// The fake provider, on a loopback port of its own.
pub struct Fake {
    /// Serves the fake for as long as it lives.
    _rt: tokio::runtime::Runtime,
    books: Arc<Books>,
    url: String,
}

impl Fake {
    pub fn start(answer: impl Fn(&Initiated) -> (u16, String) + Send + Sync + 'static) -> Fake {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let books = Arc::new(Books {
            initiated: Mutex::new(HashMap::new()),
            executes: AtomicUsize::new(0),
            answer: Box::new(answer),
        });
        let app = Router::new()
            .route("/initiates", post(initiate))
            .route("/executes", post(execute))
            .with_state(books.clone());
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        rt.spawn(async move { axum::serve(listener, app).await.unwrap() });
        Fake {
            _rt: rt,
            books,
            url,
        }
    }

    pub fn base_url(&self) -> String {
        self.url.clone()
    }

    /// How many `/executes` it answered.
    pub fn executes(&self) -> usize {
        self.books.executes.load(Ordering::SeqCst)
    }
}

fn raw(status: u16, body: String) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

fn text(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

async fn initiate(State(books): State<Arc<Books>>, body: Bytes) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap();
    let p = Initiated {
        transaction_id: text(&req, "transactionId"),
        amount: text(&req, "amount"),
        currency: text(&req, "currency"),
        account: text(&req, "accountId"),
    };
    let answer = json!({
        "status": "success", "code": "INITIATED", "message": "initiated",
        "data": {
            "transactionId": p.transaction_id, "amount": p.amount, "currency": p.currency,
            "accountId": p.account, "status": "INITIATED"
        }
    });
    books
        .initiated
        .lock()
        .unwrap()
        .insert(p.transaction_id.clone(), p);
    raw(201, answer.to_string())
}

async fn execute(State(books): State<Arc<Books>>, body: Bytes) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap();
    let id = text(&req, "transactionId");
    let p = books.initiated.lock().unwrap().get(&id).cloned();
    let Some(p) = p else {
        return raw(
            404,
            r#"{"status":"error","code":"TRANSACTION_NOT_FOUND"}"#.into(),
        );
    };
    books.executes.fetch_add(1, Ordering::SeqCst);
    let (status, body) = (books.answer)(&p);
    raw(status, body)
}
