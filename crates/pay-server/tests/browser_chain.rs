//! The hosted checkout of a chain payment in a real headless Chromium, 390 px wide (a phone):
//! the payer starts the payment with the page's forms, pays from anvil (viem), and the page,
//! updating by itself, shows the confirmations as they arrive (`1 of 2`) and then the payment
//! complete. (chromedriver needs JavaScript to drive the page, so the run has the page's script;
//! the page also carries its `<noscript>` refresh, checked here in its source, for a browser
//! without it.) The screenshot of the
//! count is written to `docs/images/checkout-confirmations.png` with `PAY_UPDATE_SCREENSHOTS=1`.
//!
//! Without Chromium, chromedriver or node the test prints a `SKIP:` line and passes, except
//! under `PAY_REQUIRE_ALL_TESTS=1`.

use std::time::{Duration, Instant};

use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder, Locator};
use pay_chain::testing::Anvil;
use serde_json::json;

#[path = "support/process.rs"]
mod process;

#[path = "support/chain.rs"]
mod chain;

#[path = "support/browser.rs"]
mod chromium;

use chain::{databases, Shop};
use process::TempDir;

/// Chromium at a phone's width.
async fn open_phone(driver: &chromium::Driver, binary: &std::path::Path) -> Client {
    let mut caps = Capabilities::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": binary,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-extensions", "--no-first-run",
                     "--hide-scrollbars", "--force-device-scale-factor=1",
                     "--window-size=520,900"],
            "mobileEmulation": {"deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 1}},
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session")
}

/// Waits (20 s at most) until the page's text holds
/// `needle`; the text.
async fn wait_text(c: &Client, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Ok(body) = c.find(Locator::Css("body")).await {
            if let Ok(text) = body.text().await {
                if text.contains(needle) {
                    return text;
                }
                last = text;
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("waited for {needle:?}; the page shows:\n{last}");
}

#[test]
fn the_checkout_page_counts_the_confirmations_as_blocks_come() {
    let Some((binary, driver_bin)) = chromium::browser("chain checkout browser test") else {
        return;
    };
    // The browser's steps run on this runtime; the server's and the chain's (blocking HTTP and
    // processes) between them.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for db in databases() {
        let Some(anvil) = Anvil::start(&[]) else {
            return;
        };
        let dir = TempDir::new();
        let shop = Shop::open(&anvil, &dir, &db.url);
        shop.wallet(&anvil, 8);
        let token = shop.token_id();
        let link = shop.link("25", &token, None);
        let driver = rt.block_on(chromium::start_driver(&driver_bin));
        let c = rt.block_on(open_phone(&driver, &binary));
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async {
                c.goto(&format!("{}/pay/{link}", shop.server.base))
                    .await
                    .unwrap();
                let width = c.execute("return window.innerWidth", vec![]).await;
                assert_eq!(width.unwrap(), json!(390), "a phone's viewport");
                chromium::click(&c, &format!("input[name='payAsset'][value='{token}']")).await;
                chromium::click(&c, "form[action$='/start'] button[type='submit']").await;
                chromium::wait_heading(&c, "Send your payment").await;
            });
            let (_, detail) = shop.api("GET", &format!("/payment-links/{link}"), None);
            let address = detail["latestSession"]["depositAddress"]
                .as_str()
                .unwrap()
                .to_owned();
            anvil.tool(
                "sendToken",
                json!({"token": shop.token, "to": address, "units": "25000000", "wait": true}),
            );
            rt.block_on(async {
                let text = wait_text(&c, "Confirmations: 1 of 2").await;
                assert!(text.contains("Payment received"), "{text}");
                let source = c.source().await.unwrap();
                assert!(
                    source.contains("<noscript><meta http-equiv=\"refresh\""),
                    "without JavaScript the page reloads itself: {source}"
                );
                chromium::Shots::new("checkout")
                    .take(&c, "confirmations")
                    .await;
            });
            anvil.mine(1);
            rt.block_on(chromium::wait_heading(&c, "Payment complete"));
        }));
        let _ = rt.block_on(c.close());
        drop(driver);
        if let Err(panic) = run {
            eprintln!("log:\n{}", shop.server.log());
            std::panic::resume_unwind(panic);
        }
        shop.server.stop();
    }
}
