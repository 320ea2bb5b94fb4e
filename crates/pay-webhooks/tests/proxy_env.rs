//! Its own test binary: it sets proxy variables for the whole process, which would disturb
//! the other tests if they ran alongside.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use pay_domain::webhooks::OutboundRequest;
use pay_webhooks::{HttpTransport, TransportConfig};

/// A proxy would resolve the target's name itself, so the guard would never see the address:
/// the transport must ignore proxy settings from the environment.
#[tokio::test]
async fn environment_proxies_are_ignored() {
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    for var in [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        std::env::set_var(var, &proxy_url);
    }
    std::env::remove_var("NO_PROXY");
    std::env::remove_var("no_proxy");
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((_sock, _)) = proxy.accept().await {
            count.fetch_add(1, SeqCst);
        }
    });
    let transport = HttpTransport::new(TransportConfig {
        total_timeout: Duration::from_secs(3),
        ..TransportConfig::default()
    })
    .unwrap();
    // `.invalid` never resolves (RFC 6761): without a proxy the attempt fails at DNS.
    let outcome = transport
        .send(&OutboundRequest {
            delivery_id: uuid::Uuid::nil(),
            url: "https://hooks.shop.invalid/pay".into(),
            headers: vec![("content-type".into(), "application/json".into())],
            body: "{}".into(),
            attempt: 1,
        })
        .await;
    assert!(outcome.error.is_some(), "{outcome:?}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        accepted.load(SeqCst),
        0,
        "the request went through the proxy: {outcome:?}"
    );
}
