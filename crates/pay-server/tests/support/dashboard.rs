//! What the Chromium journeys of the dashboard and the public pages share (`browser_dashboard*.rs`,
//! `browser_pages.rs`, `browser_onboarding.rs`): axe-core found and injected into a page, the
//! width check at 390 px, typing and reading, the merchant made with an API key and signed in,
//! a link made and paid in the sandbox.
// Each test binary includes this file and uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use fantoccini::{Client, Locator};
use pay_domain::kernel::secret::Secret;
use pay_store::testing::require_all_tests;
use serde_json::{json, Value};

use super::chromium::{browser, click, eval, wait_heading};

pub const PASSWORD: &str = "correct horse battery staple";
pub const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
pub const PHONE: u32 = 390;

/// Chromium, chromedriver and axe-core's script for `test`; `None` after the SKIP line of
/// whichever is missing.
pub fn browser_and_axe(test: &str) -> Option<(PathBuf, PathBuf, String)> {
    let (chromium, driver) = browser(test)?;
    Some((chromium, driver, axe_source()?))
}

/// axe-core's script, installed from `tests/axe` when missing; `None` after the SKIP line.
pub fn axe_source() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/axe");
    let script: PathBuf = dir.join("node_modules/axe-core/axe.min.js");
    // The two tests of this binary run at once: one installs, the other waits for it.
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _installing = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if !script.is_file() {
        let npm = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output();
        match npm {
            Ok(out) if out.status.success() => {}
            Ok(out) => panic!("npm ci failed:\n{}", String::from_utf8_lossy(&out.stderr)),
            Err(e) => {
                let msg = format!("npm is needed to install axe-core ({e})");
                assert!(!require_all_tests(), "PAY_REQUIRE_ALL_TESTS=1 but {msg}");
                eprintln!("SKIP: dashboard browser test: {msg}");
                return None;
            }
        }
    }
    Some(std::fs::read_to_string(script).unwrap())
}

/// Runs axe-core on the page: no violation, or the list of them.
pub async fn no_violations(c: &Client, axe: &str, what: &str) {
    let loaded = eval(c, &format!("{axe}\n;return typeof window.axe;")).await;
    assert_eq!(loaded, json!("object"), "axe-core loaded into {what}");
    let found = c
        .execute_async(
            "const done = arguments[arguments.length - 1];
             axe.run(document).then(
               r => done(r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at '
                 + v.nodes.map(n => n.target.join(' ')).join(', '))),
               e => done(['axe failed: ' + e]));",
            vec![],
        )
        .await
        .expect("axe.run");
    assert_eq!(found, json!([]), "axe-core on {what}");
}

/// Nothing wider than the window.
pub async fn fits(c: &Client, what: &str) {
    let widths = eval(
        c,
        "return [document.documentElement.scrollWidth, window.innerWidth];",
    )
    .await;
    let (scroll, inner) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    assert!(
        scroll <= inner,
        "{what} is {scroll} px wide in a {inner} px window"
    );
}

pub async fn type_into(c: &Client, css: &str, text: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .send_keys(text)
        .await
        .unwrap();
}

pub async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

/// The merchant's e-mail and API key pair.
pub struct Merchant {
    pub email: String,
    pub company_id: String,
    pub key: String,
    pub secret: String,
}

/// A new merchant's team "Acme Goods", its owner (password [`PASSWORD`]) and API key.
pub async fn merchant(pay: pay_domain::app::Pay) -> Merchant {
    let email = format!("owner-{}@acme.example", uuid::Uuid::new_v4().simple());
    let e = email.clone();
    let o = tokio::task::spawn_blocking(move || {
        pay.tenancy()
            .bootstrap("Acme Goods", &e, &Secret::new(PASSWORD.to_owned()))
            .unwrap()
    })
    .await
    .unwrap();
    Merchant {
        email,
        company_id: o.company_id.to_string(),
        key: o.key_id.to_string(),
        secret: o.key_secret.unwrap().expose().to_owned(),
    }
}

/// A payment link of `amount` (the default currency) for the merchant's team, made with its API
/// key: its uid.
pub async fn new_link(base: &str, m: &Merchant, amount: &str, title: &str) -> String {
    let res = reqwest::Client::new()
        .post(format!("{base}/api/partner/v1/pay/payment-links"))
        .header("x-svc-key-id", &m.key)
        .header("x-svc-key-secret", &m.secret)
        .json(&json!({"amount": amount, "title": title}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let v: Value = res.json().await.unwrap();
    v["uid"].as_str().unwrap().to_owned()
}

/// Pays the link `uid` in the sandbox, as a payer and the chain would: a session on Base
/// USDC, its quote accepted, a deposit of the whole amount (of 1 when `short`). The session
/// after.
pub async fn pay_in_sandbox(base: &str, m: &Merchant, uid: &str, short: bool) -> Value {
    let http = reqwest::Client::new();
    let mut s: Value = http
        .post(format!("{base}/api/public/checkout/{uid}/sessions"))
        .json(&json!({"payAsset": BASE_USDC}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    if s["status"] == "quote" {
        let id = s["id"].as_str().unwrap();
        s = http
            .post(format!(
                "{base}/api/public/checkout/{uid}/sessions/{id}/accept"
            ))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    }
    let all = s["requiredSellAmount"].as_str().unwrap().to_owned();
    let sent = if short { "1".to_owned() } else { all };
    http.post(format!(
        "{base}/api/partner/v1/pay/sandbox/payment-links/{uid}/events"
    ))
    .header("x-svc-key-id", &m.key)
    .header("x-svc-key-secret", &m.secret)
    .json(&json!({"type": "deposit", "amount": sent}))
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap()
}

/// Opens `/dashboard` at a desktop width and signs in as `email`: the Home screen.
pub async fn sign_in(c: &Client, base: &str, email: &str) {
    c.set_window_size(1100, 1000).await.unwrap();
    c.goto(&format!("{base}/dashboard")).await.unwrap();
    wait_heading(c, "Sign in").await;
    type_into(c, "#email", email).await;
    type_into(c, "#password", PASSWORD).await;
    click(c, "button[type='submit']").await;
    wait_heading(c, "Home").await;
}
