//! Token-request recovery over HTTP: a proxy in front of the server drops the first answer of
//! a keyed native token request after the server sent it (the client sees its connection
//! closed), and the exact request retried with the same `Idempotency-Key` gets the very same
//! tokens, while they are the family's live successor; never once it was used, revoked or
//! expired, never with another key's proof, another request under the key, or for a client
//! that is not a native installation.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use reqwest::Method;
use serde_json::Value;

use crate::helpers::{read, TestApp};
use crate::native::{connected, create_link, installed, native_code, platform, CALLBACK};
use crate::oauth_support::*;
use crate::on_both_backends;

/// A TCP proxy to the server that, when armed, forwards the next `POST /oauth/token` and
/// reads the server's whole answer, then closes the client's connection without a byte of it
/// (a response lost on the way). The dropped answer's body is kept for the test to compare.
struct DropProxy {
    base: String,
    armed: Arc<Mutex<bool>>,
    dropped: Arc<Mutex<Option<Value>>>,
}

/// One HTTP/1.1 message (head and `Content-Length` body) from `s`; `None` at end of stream.
fn message(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
            while buf.len() < end + 4 + len {
                let n = s.read(&mut byte).ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&byte[..n]);
            }
            return Some(buf);
        }
        let n = s.read(&mut byte).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
    }
}

impl DropProxy {
    fn start(upstream: &str) -> DropProxy {
        let upstream = upstream.trim_start_matches("http://").to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let armed = Arc::new(Mutex::new(false));
        let dropped = Arc::new(Mutex::new(None));
        let (a, d) = (armed.clone(), dropped.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { return };
                let (upstream, armed, dropped) = (upstream.clone(), a.clone(), d.clone());
                std::thread::spawn(move || {
                    let mut server = TcpStream::connect(&upstream).unwrap();
                    while let Some(request) = message(&mut client) {
                        server.write_all(&request).unwrap();
                        let Some(answer) = message(&mut server) else {
                            return;
                        };
                        let token = request.starts_with(b"POST /oauth/token ");
                        if token && std::mem::take(&mut *armed.lock().unwrap()) {
                            let at = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
                            *dropped.lock().unwrap() =
                                Some(serde_json::from_slice(&answer[at + 4..]).unwrap());
                            let _ = client.shutdown(std::net::Shutdown::Both);
                            return;
                        }
                        if client.write_all(&answer).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        DropProxy {
            base,
            armed,
            dropped,
        }
    }

    /// Drops the next token answer; returns it once dropped.
    fn arm(&self) {
        *self.armed.lock().unwrap() = true;
        *self.dropped.lock().unwrap() = None;
    }

    fn dropped(&self) -> Value {
        self.dropped
            .lock()
            .unwrap()
            .clone()
            .expect("an answer was dropped")
    }
}

/// POST /oauth/token to `base` (the proxy or the server) as the public client `client_id`,
/// with a fresh proof of `key` and the `Idempotency-Key` `idem` when given.
pub async fn keyed(
    app: &TestApp,
    base: &str,
    client_id: &str,
    pairs: &[(&str, &str)],
    key: &DpopKey,
    idem: Option<&str>,
) -> Result<(reqwest::StatusCode, Value, reqwest::header::HeaderMap), reqwest::Error> {
    let mut pairs = pairs.to_vec();
    pairs.push(("client_id", client_id));
    let mut req = app
        .client
        .request(Method::POST, format!("{base}/oauth/token"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("DPoP", key.proof("POST", &htu(app, "/oauth/token"), None));
    if let Some(k) = idem {
        req = req.header("Idempotency-Key", k);
    }
    let res = req.body(form(&pairs)).send().await?;
    let headers = res.headers().clone();
    let (status, body) = read(res).await;
    Ok((status, body, headers))
}

fn code_pairs(code: &str) -> Vec<(&str, &str)> {
    vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", CALLBACK),
        ("code_verifier", VERIFIER),
    ]
}

pub fn refresh_pairs(refresh: &str) -> Vec<(&str, &str)> {
    vec![("grant_type", "refresh_token"), ("refresh_token", refresh)]
}

/// The stored answer of `idem` for `client_id` still holds its sealed response.
pub async fn answer_held(app: &TestApp, client_id: &str, idem: &str) -> bool {
    use pay_domain::oauth::ports::OAuthStore;
    use pay_domain::oauth::recovery::TokenRecoveryStore;
    let store = app.store.clone();
    let client = pay_domain::kernel::ids::ClientId::parse(client_id).unwrap();
    let digest = ring::digest::digest(&ring::digest::SHA256, idem.as_bytes());
    let key_digest: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    tokio::task::spawn_blocking(move || {
        let application = store.application(&client).unwrap().unwrap().app.id;
        store
            .token_answer(application, &key_digest)
            .unwrap()
            .is_some_and(|a| a.sealed.is_some())
    })
    .await
    .unwrap()
}

/// A lost answer recovered: the same tokens, and they work.
#[track_caller]
fn assert_recovered(got: &(reqwest::StatusCode, Value, reqwest::header::HeaderMap), lost: &Value) {
    assert_eq!(got.0, 200, "{}", got.1);
    assert_eq!(&got.1, lost);
    assert_eq!(got.2.get("idempotent-replayed").unwrap(), "true");
    assert_eq!(got.2.get("cache-control").unwrap(), "no-store");
}

#[track_caller]
pub fn assert_oauth_error(
    got: &(reqwest::StatusCode, Value, reqwest::header::HeaderMap),
    status: u16,
    error: &str,
) {
    assert_eq!(
        (got.0.as_u16(), got.1["error"].as_str()),
        (status, Some(error)),
        "{}",
        got.1
    );
}

async fn a_lost_token_response_is_recovered(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let (_, client) = installed(&app, &key).await;
    let client_id = client["client_id"].as_str().unwrap();
    let proxy = DropProxy::start(&app.base);
    let direct = app.base.clone();

    // The code's answer is lost: the client sees its connection closed.
    let code = native_code(&app, &app.t, client_id).await;
    proxy.arm();
    let lost = keyed(
        &app,
        &proxy.base,
        client_id,
        &code_pairs(&code),
        &key,
        Some("k-1"),
    )
    .await;
    assert!(lost.is_err(), "{lost:?}");
    let first = proxy.dropped();
    assert_eq!(first["token_type"], "DPoP", "{first}");
    // Retried exactly, with a fresh proof of the same key: the same tokens.
    let again = keyed(
        &app,
        &proxy.base,
        client_id,
        &code_pairs(&code),
        &key,
        Some("k-1"),
    )
    .await
    .unwrap();
    assert_recovered(&again, &first);
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(create_link(&app, &key, access).await, 201);
    // A proof by another key recovers nothing; another request under the key is refused.
    let thief = DpopKey::generate();
    let got = keyed(
        &app,
        &direct,
        client_id,
        &code_pairs(&code),
        &thief,
        Some("k-1"),
    )
    .await
    .unwrap();
    assert_oauth_error(&got, 400, "invalid_dpop_proof");
    let mut other = code_pairs(&code);
    other[3] = (
        "code_verifier",
        "another-verifier-another-verifier-another-ver",
    );
    let got = keyed(&app, &direct, client_id, &other, &key, Some("k-1"))
        .await
        .unwrap();
    assert_oauth_error(&got, 409, "idempotency_key_reused");
    assert!(answer_held(&app, client_id, "k-1").await);

    // A refresh's answer is lost and recovered the same way.
    let r1 = first["refresh_token"].as_str().unwrap();
    proxy.arm();
    let lost = keyed(
        &app,
        &proxy.base,
        client_id,
        &refresh_pairs(r1),
        &key,
        Some("k-2"),
    )
    .await;
    assert!(lost.is_err(), "{lost:?}");
    let second = proxy.dropped();
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    let got = keyed(
        &app,
        &direct,
        client_id,
        &refresh_pairs(r1),
        &key,
        Some("k-2"),
    )
    .await
    .unwrap();
    assert_recovered(&got, &second);
    // Rotating the refresh token makes the first answer's successor used: erased.
    assert!(!answer_held(&app, client_id, "k-1").await);
    let got = keyed(
        &app,
        &direct,
        client_id,
        &code_pairs(&code),
        &key,
        Some("k-1"),
    )
    .await
    .unwrap();
    assert_oauth_error(&got, 400, "invalid_grant");

    // Once the recovered successor is used, the retry is refused, and the family lives on.
    let r2 = second["refresh_token"].as_str().unwrap();
    let third = keyed(&app, &direct, client_id, &refresh_pairs(r2), &key, None)
        .await
        .unwrap();
    assert_eq!(third.0, 200, "{}", third.1);
    assert!(third.2.get("idempotent-replayed").is_none());
    assert!(!answer_held(&app, client_id, "k-2").await);
    let got = keyed(
        &app,
        &direct,
        client_id,
        &refresh_pairs(r1),
        &key,
        Some("k-2"),
    )
    .await
    .unwrap();
    assert_oauth_error(&got, 400, "invalid_grant");
    let r3 = third.1["refresh_token"].as_str().unwrap();
    let fourth = keyed(
        &app,
        &direct,
        client_id,
        &refresh_pairs(r3),
        &key,
        Some("k-3"),
    )
    .await
    .unwrap();
    assert_eq!(fourth.0, 200, "{}", fourth.1);
    assert!(fourth.2.get("idempotent-replayed").is_none());

    // A lost answer, then the plugin disconnects (revokes its family): refused.
    let r4 = fourth.1["refresh_token"].as_str().unwrap();
    proxy.arm();
    let lost = keyed(
        &app,
        &proxy.base,
        client_id,
        &refresh_pairs(r4),
        &key,
        Some("k-4"),
    )
    .await;
    assert!(lost.is_err(), "{lost:?}");
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", r4), ("client_id", client_id)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(!answer_held(&app, client_id, "k-4").await);
    let got = keyed(
        &app,
        &direct,
        client_id,
        &refresh_pairs(r4),
        &key,
        Some("k-4"),
    )
    .await
    .unwrap();
    assert_oauth_error(&got, 400, "invalid_grant");
    let dead = proxy.dropped();
    let res = with_dpop(
        &app,
        &key,
        Method::GET,
        "/api/partner/v1/pay/payment-links",
        dead["access_token"].as_str().unwrap(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(res.status(), 401);
}

/// A lost answer whose access token expired is not given again; nor is any answer to a
/// client that is not a native installation.
async fn expired_answers_and_other_clients(app: TestApp) {
    platform(&app, "woocommerce", "Woo Pay Connector").await;
    let key = DpopKey::generate();
    let (_, client) = installed(&app, &key).await;
    let client_id = client["client_id"].as_str().unwrap();
    let proxy = DropProxy::start(&app.base);
    let tokens = connected(&app, client_id, &key).await;
    let r1 = tokens["refresh_token"].as_str().unwrap();
    proxy.arm();
    let lost = keyed(
        &app,
        &proxy.base,
        client_id,
        &refresh_pairs(r1),
        &key,
        Some("k"),
    )
    .await;
    assert!(lost.is_err(), "{lost:?}");
    app.clock.advance_secs(899);
    let got = keyed(
        &app,
        &app.base,
        client_id,
        &refresh_pairs(r1),
        &key,
        Some("k"),
    )
    .await
    .unwrap();
    assert_recovered(&got, &proxy.dropped());
    app.clock.advance_secs(2);
    let got = keyed(
        &app,
        &app.base,
        client_id,
        &refresh_pairs(r1),
        &key,
        Some("k"),
    )
    .await
    .unwrap();
    assert_oauth_error(&got, 400, "invalid_grant");
    assert!(!answer_held(&app, client_id, "k").await);

    // Malformed keys, and a key from an operator-registered (non-native) client.
    for bad in ["", "caf\u{e9}"] {
        let got = keyed(
            &app,
            &app.base,
            client_id,
            &refresh_pairs(r1),
            &key,
            Some(bad),
        )
        .await;
        if let Ok(got) = got {
            assert_oauth_error(&got, 400, "invalid_request");
        }
    }
    let other = register(&app, "company:read", true, true).await;
    let code = code_for(&app, &app.t, &other, "company:read").await;
    let pairs = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    let got = keyed(&app, &app.base, &other.client_id, &pairs, &key, Some("k"))
        .await
        .unwrap();
    assert_oauth_error(&got, 400, "invalid_request");
    // The refusal used nothing up: the same code without a key works.
    let got = keyed(&app, &app.base, &other.client_id, &pairs, &key, None)
        .await
        .unwrap();
    assert_eq!(got.0, 200, "{}", got.1);
}

on_both_backends!(
    a_lost_token_response_is_recovered,
    expired_answers_and_other_clients
);
