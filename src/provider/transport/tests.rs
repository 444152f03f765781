//! The transport's one distinction (never sent / may have been sent) at
//! each way a call can fail, the body cap, and the proxy's tunnel, against
//! raw loopback servers.

use super::*;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KEY: &str = "Bearer sk_test_secret_123";

fn limits(request: Duration) -> Limits {
    Limits {
        request,
        connect: Duration::from_secs(10),
        max_body: 1024,
        idle_per_host: 4,
    }
}

fn client(base: &Uri, proxies: &Matcher, request: Duration) -> Http {
    Http::new(
        Some(HeaderValue::from_static(KEY)),
        base,
        proxies,
        limits(request),
    )
}

fn no_proxy() -> Matcher {
    Matcher::builder().build()
}

/// Reads one request head (up to the blank line) and returns it.
async fn read_head(sock: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match sock.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A server that answers each connection with `then` after reading the
/// request head; returns its address and the heads it read.
async fn server<F, Fut>(then: F) -> (String, Arc<Mutex<Vec<String>>>)
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    let then = Arc::new(then);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let seen = seen.clone();
            let then = then.clone();
            tokio::spawn(async move {
                let head = read_head(&mut sock).await;
                seen.lock().unwrap().push(head);
                then(sock).await;
            });
        }
    });
    (addr, heads)
}

fn uri(text: &str) -> Uri {
    text.parse().unwrap()
}

async fn post(h: &Http, to: &Uri) -> Result<Reply, Failure> {
    h.call(Method::POST, to, &[], Some(b"{}".to_vec())).await
}

#[tokio::test]
async fn nothing_listening_means_never_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let to = uri(&format!("http://{addr}/executes"));
    let got = post(&client(&to, &no_proxy(), Duration::from_secs(30)), &to).await;
    assert!(
        matches!(&got, Err(Failure::NotSent(d)) if d.contains("/executes")),
        "{got:?}"
    );
}

#[tokio::test]
async fn a_connection_closed_after_the_request_may_have_been_sent() {
    let (addr, heads) = server(|sock| async move { drop(sock) }).await;
    let to = uri(&format!("http://{addr}/executes"));
    let got = post(&client(&to, &no_proxy(), Duration::from_secs(30)), &to).await;
    assert!(matches!(got, Err(Failure::MaybeSent(_))), "{got:?}");
    assert!(heads.lock().unwrap()[0].starts_with("POST /executes HTTP/1.1"));
}

#[tokio::test]
async fn no_answer_before_the_deadline_may_have_been_sent() {
    let (addr, _) = server(|sock| async move {
        // Holds the connection open without answering.
        let _keep = sock;
        std::future::pending::<()>().await;
    })
    .await;
    let to = uri(&format!("http://{addr}/executes"));
    let got = post(&client(&to, &no_proxy(), Duration::from_millis(300)), &to).await;
    assert!(
        matches!(&got, Err(Failure::MaybeSent(d)) if d.contains("no complete answer within")),
        "{got:?}"
    );
}

#[tokio::test]
async fn the_answer_its_headers_and_the_key_sent() {
    let (addr, heads) = server(|mut sock| async move {
        let answer =
            "HTTP/1.1 429 Too Many Requests\r\nretry-after: 3\r\ncontent-length: 2\r\n\r\n{}";
        let _ = sock.write_all(answer.as_bytes()).await;
    })
    .await;
    let to = uri(&format!("http://{addr}/initiates"));
    let h = client(&to, &no_proxy(), Duration::from_secs(30));
    let got = h
        .call(
            Method::POST,
            &to,
            &[(http::header::ACCEPT, "application/json")],
            Some(b"{}".to_vec()),
        )
        .await
        .unwrap();
    assert_eq!(got.http, 429);
    assert_eq!(got.retry_after.as_deref(), Some("3"));
    assert_eq!(got.body, Ok(b"{}".to_vec()));
    let head = heads.lock().unwrap()[0].to_ascii_lowercase();
    for line in [
        "authorization: bearer sk_test_secret_123",
        "accept: application/json",
        "content-type: application/json",
        "content-length: 2",
    ] {
        assert!(head.contains(line), "{line} in {head}");
    }
}

#[tokio::test]
async fn a_declared_body_over_the_cap_is_not_read() {
    let (addr, _) = server(|mut sock| async move {
        let _ = sock
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n")
            .await;
        std::future::pending::<()>().await;
    })
    .await;
    let to = uri(&format!("http://{addr}/executes"));
    let got = post(&client(&to, &no_proxy(), Duration::from_secs(30)), &to).await;
    assert_eq!(got.unwrap().body, Err(BodyError::TooLarge));
}

#[tokio::test]
async fn an_https_provider_is_reached_through_the_proxys_tunnel_without_the_key() {
    let (proxy, heads) = server(|mut sock| async move {
        let _ = sock.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
    })
    .await;
    let proxies = Matcher::builder()
        .https(format!("http://clerk:s3cret@{proxy}"))
        .build();
    let to = uri("https://provider.example/v1/executes");
    let got = post(&client(&to, &proxies, Duration::from_secs(30)), &to).await;
    // The tunnel was refused: the request itself never left.
    assert!(matches!(got, Err(Failure::NotSent(_))), "{got:?}");
    let head = heads.lock().unwrap()[0].clone();
    assert!(
        head.starts_with("CONNECT provider.example:443 HTTP/1.1\r\n"),
        "{head}"
    );
    // clerk:s3cret, for the proxy only; the provider's key never goes to it.
    assert!(
        head.to_ascii_lowercase()
            .contains("proxy-authorization: basic y2xlcms6cznjcmv0"),
        "{head}"
    );
    assert!(!head.contains("sk_test_secret_123"), "{head}");
}

#[tokio::test]
async fn a_loopback_provider_is_never_proxied() {
    let (proxy, proxied) = server(|sock| async move { drop(sock) }).await;
    let (addr, heads) = server(|mut sock| async move {
        let _ = sock
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .await;
    })
    .await;
    let proxies = Matcher::builder().all(format!("http://{proxy}")).build();
    let to = uri(&format!("http://{addr}/executes"));
    let got = post(&client(&to, &proxies, Duration::from_secs(30)), &to).await;
    assert_eq!(got.unwrap().http, 200);
    assert_eq!(heads.lock().unwrap().len(), 1);
    assert!(proxied.lock().unwrap().is_empty());
}
