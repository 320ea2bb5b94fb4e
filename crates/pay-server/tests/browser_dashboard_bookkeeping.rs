//! The dashboard's Bookkeeping clicked in a real headless Chromium, on SQLite and on
//! PostgreSQL: the team has an outgoing transfer (the sandbox's), the signed-in owner opens
//! Bookkeeping, sees it unexplained, opens it, explains it with the expense form (a new
//! vendor, category, description, amounts) and attaches a PDF receipt through the file input
//! (one `multipart/form-data` POST); the activity's page then shows the saved expense and the
//! file, and the list marks the transfer explained. axe-core (npm, `tests/axe`) finds no
//! violation on either screen, at a desktop width and at 390 px (a phone), where nothing is
//! wider than the screen. Screenshots, with `PAY_UPDATE_SCREENSHOTS=1`, go to
//! `docs/images/dashboard-bookkeeping.png` and `dashboard-bookkeeping-activity.png` (from the
//! SQLite run).
//!
//! Without `chromium` and `chromedriver`, or `node` and `npm`, the test prints a `SKIP:` line
//! and passes, except under `PAY_REQUIRE_ALL_TESTS=1`.

use fantoccini::{Client, Locator};
use pay_store::testing::TestDb;
use serde_json::{json, Value};

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

#[path = "support/dashboard.rs"]
mod dashboard;

use dashboard::*;

/// A receipt the server sniffs as a PDF.
const PDF: &[u8] = b"%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n";

/// An outgoing transfer of the merchant's team, as the sandbox records one: the activity.
async fn outgoing(base: &str, m: &Merchant) -> Value {
    let res = reqwest::Client::new()
        .post(format!(
            "{base}/api/partner/v1/pay/sandbox/wallet-activity/outgoing"
        ))
        .header("x-svc-key-id", &m.key)
        .header("x-svc-key-secret", &m.secret)
        .json(&json!({
            "chain": "eip155:8453", "txHash": format!("0x{}", "7".repeat(64)),
            "logIndex": 0, "asset": BASE_USDC, "amount": "125.5",
            "toAddress": "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    res.json().await.unwrap()
}

async fn run(
    c: &Client,
    base: &str,
    m: &Merchant,
    axe: &str,
    receipt: &str,
    shots: &mut Option<Shots>,
) {
    let out = outgoing(base, m).await;
    let id = out["id"].as_str().unwrap().to_owned();
    sign_in(c, base, &m.email).await;
    click(c, "nav a[href$='/bookkeeping']").await;
    wait_heading(c, "Bookkeeping").await;
    let list = text_of(c, "main table").await;
    assert!(list.contains("125.5"), "{list}");
    assert!(list.contains("Explain it"), "{list}");
    no_violations(c, axe, "Bookkeeping").await;
    click(c, &format!("main table a[href$='/activity/{id}']")).await;
    wait_heading(c, "Wallet activity").await;
    assert!(text_of(c, "#no-expense")
        .await
        .contains("Not explained yet"));
    no_violations(c, axe, "an outgoing transfer").await;
    c.find(Locator::Css("#e-contact option[value='new']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    type_into(c, "#e-vemail", "billing@hoster.example").await;
    type_into(c, "#e-vname", "Hoster").await;
    type_into(c, "#e-category", "Hosting").await;
    type_into(c, "#e-description", "Servers for November").await;
    type_into(c, "#e-currency", "EUR").await;
    type_into(c, "#e-fiat", "115.20").await;
    type_into(c, "#e-tax", "18.39").await;
    // A file input takes the local path of the file to upload.
    type_into(c, "#e-file", receipt).await;
    click(c, "#form-h ~ form button[type='submit']").await;
    wait_heading(c, "Wallet activity").await;
    let saved = text_of(c, "#expense-saved").await;
    for words in ["Hosting", "Servers for November", "Hoster", "115.20", "EUR"] {
        assert!(
            saved.contains(words),
            "{words:?} not in the expense:\n{saved}"
        );
    }
    let files = text_of(c, "#evidence").await;
    assert!(files.contains("receipt.pdf"), "{files}");
    no_violations(c, axe, "an explained transfer").await;
    if let Some(s) = shots.as_mut() {
        s.take(c, "bookkeeping-activity").await;
    }
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "an explained transfer").await;
    no_violations(c, axe, "an explained transfer at 390 px").await;
    c.set_window_size(1100, 1000).await.unwrap();
    click(c, "nav a[href$='/bookkeeping']").await;
    wait_heading(c, "Bookkeeping").await;
    let list = text_of(c, "main table").await;
    assert!(list.contains("Explained"), "{list}");
    assert!(!list.contains("Explain it"), "{list}");
    if let Some(s) = shots.as_mut() {
        s.take(c, "bookkeeping").await;
    }
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "Bookkeeping").await;
    no_violations(c, axe, "Bookkeeping at 390 px").await;
}

async fn journey(db: TestDb, screenshots: bool) {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("dashboard bookkeeping browser test")
    else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("pay-receipt-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let receipt = dir.join("receipt.pdf");
    std::fs::write(&receipt, PDF).unwrap();
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    actix_rt::spawn(app.into_server());
    let m = merchant(pay).await;
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    let mut shots = screenshots.then(|| Shots::new("dashboard"));
    let journey = run(&c, &base, &m, &axe, receipt.to_str().unwrap(), &mut shots);
    ending_session(&c, driver, journey).await;
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(s) = shots {
        assert_eq!(s.taken, ["bookkeeping-activity", "bookkeeping"]);
    }
}

#[actix_rt::test]
async fn a_merchant_explains_a_transfer_in_chromium_on_sqlite() {
    journey(TestDb::sqlite(), true).await;
}

#[actix_rt::test]
async fn a_merchant_explains_a_transfer_in_chromium_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        journey(db, false).await;
    }
}
