//! The dashboard's Customers and Subscriptions clicked in a real headless Chromium, on SQLite
//! and on PostgreSQL: a signed-in merchant adds a customer with the form and sees its page,
//! creates a subscription for them with the form (another one is made through the API), sees
//! its cycle 0 and its invoice link, pauses it, resumes it, generates the customer's portal
//! link from the customer's page, sees both lists, and cancels the subscription. On every
//! screen axe-core (npm, `tests/axe`, injected into the page) finds no violation, at a desktop
//! width and at 390 px (a phone), where nothing is wider than the screen. Screenshots, with
//! `PAY_UPDATE_SCREENSHOTS=1`, go to `docs/images/dashboard-{customers,customer,subscriptions,
//! subscription}.png` (from the SQLite run).
//!
//! Without `chromium` and `chromedriver`, or `node` and `npm`, the test prints a `SKIP:` line
//! and passes, except under `PAY_REQUIRE_ALL_TESTS=1`.

use fantoccini::Client;
use pay_store::testing::TestDb;
use serde_json::json;

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

#[path = "support/dashboard.rs"]
mod dashboard;

use dashboard::*;

/// axe-core at the desktop width and at 390 px, where nothing is wider than the screen; then
/// the desktop width again.
async fn checked(c: &Client, axe: &str, what: &str) {
    no_violations(c, axe, what).await;
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, what).await;
    no_violations(c, axe, &format!("{what} at 390 px")).await;
    c.set_window_size(1100, 1000).await.unwrap();
}

/// The subscription's status badge.
async fn state(c: &Client) -> String {
    text_of(c, "#sub-state").await
}

/// Clicks the move to `to` on the subscription's page and waits until the page shows the
/// subscription as `after`.
async fn move_to(c: &Client, to: &str, after: &str) {
    click(
        c,
        &format!("form[action$='/status'] input[value='{to}'] ~ button"),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let shown = eval(
            c,
            "const b = document.getElementById('sub-state'); return b ? b.textContent : '';",
        )
        .await;
        if shown == json!(after) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the subscription shows {shown}, not {after}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn run(c: &Client, base: &str, m: &Merchant, axe: &str, shots: &mut Option<Shots>) {
    sign_in(c, base, &m.email).await;
    // Another customer's subscription, made through the API.
    let res = reqwest::Client::new()
        .post(format!("{base}/api/partner/v1/pay/subscriptions"))
        .header("x-svc-key-id", &m.key)
        .header("x-svc-key-secret", &m.secret)
        .json(&json!({
            "customerEmail": "bob@bikes.example",
            "label": "Team seats",
            "amountUsd": "49.00",
            "cadence": "yearly",
            "timezone": "America/New_York",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);

    click(c, "nav a[href$='/customers']").await;
    wait_heading(c, "Customers").await;
    assert!(text_of(c, "main table").await.contains("bob@bikes.example"));
    type_into(c, "#c-email", "ada@example.com").await;
    type_into(c, "#c-name", "Ada Lovelace").await;
    type_into(c, "#c-client", "C-42").await;
    click(c, "#create-h ~ form button[type='submit']").await;
    wait_heading(c, "Customer").await;
    let customer_url = c.current_url().await.unwrap().to_string();
    let main = text_of(c, "main").await;
    for words in ["Ada Lovelace", "C-42", "This customer has no subscription."] {
        assert!(
            main.contains(words),
            "{words:?} not on the customer's page:\n{main}"
        );
    }
    checked(c, axe, "a customer").await;

    click(c, "nav a[href$='/subscriptions']").await;
    wait_heading(c, "Subscriptions").await;
    checked(c, axe, "Subscriptions").await;
    type_into(c, "#s-email", "ada@example.com").await;
    type_into(c, "#s-label", "Pro plan").await;
    type_into(c, "#s-amount", "19.99").await;
    c.find(fantoccini::Locator::Css("#s-zone"))
        .await
        .unwrap()
        .clear()
        .await
        .unwrap();
    type_into(c, "#s-zone", "Europe/Berlin").await;
    type_into(c, "#s-desc", "Every seat, monthly").await;
    click(c, "#create-h ~ form button[type='submit']").await;
    wait_heading(c, "Subscription").await;
    let main = text_of(c, "main").await;
    for words in [
        "Pro plan",
        "ada@example.com",
        "19.99 USD",
        "Europe/Berlin",
        "Cycles",
    ] {
        assert!(
            main.contains(words),
            "{words:?} not on the subscription's page:\n{main}"
        );
    }
    let cycles = eval(
        c,
        "return document.querySelectorAll('#cycles tbody tr').length;",
    )
    .await;
    assert_eq!(cycles, json!(1), "cycle 0");
    assert!(text_of(c, "#cycles").await.contains("open"));
    assert_eq!(state(c).await, "active");
    move_to(c, "paused", "paused").await;
    move_to(c, "active", "active").await;
    if let Some(s) = shots.as_mut() {
        s.take(c, "subscription").await;
    }
    checked(c, axe, "a subscription").await;
    // Its invoice is a payment link of the team.
    click(c, "#cycles a[href*='/links/']").await;
    wait_heading(c, "Payment link").await;
    assert!(text_of(c, "main").await.contains("Pro plan"));
    c.back().await.unwrap();
    wait_heading(c, "Subscription").await;

    c.goto(&customer_url).await.unwrap();
    wait_heading(c, "Customer").await;
    assert!(text_of(c, "main table").await.contains("Pro plan"));
    click(c, "form[action$='/portal'] button").await;
    let portal = c
        .wait()
        .for_element(fantoccini::Locator::Css("#portal-url"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(portal.contains("/portal?"), "{portal}");
    if let Some(s) = shots.as_mut() {
        s.take(c, "customer").await;
    }
    checked(c, axe, "a customer with a portal link").await;

    click(c, "nav a[href$='/customers']").await;
    wait_heading(c, "Customers").await;
    let table = text_of(c, "main table").await;
    assert!(
        table.contains("Ada Lovelace") && table.contains("bob@bikes.example"),
        "{table}"
    );
    if let Some(s) = shots.as_mut() {
        s.take(c, "customers").await;
    }
    checked(c, axe, "Customers").await;

    click(c, "nav a[href$='/subscriptions']").await;
    wait_heading(c, "Subscriptions").await;
    let table = text_of(c, "main table").await;
    assert!(
        table.contains("Pro plan") && table.contains("Team seats"),
        "{table}"
    );
    if let Some(s) = shots.as_mut() {
        s.take(c, "subscriptions").await;
    }
    checked(c, axe, "Subscriptions with two").await;

    click(c, "main table a").await;
    wait_heading(c, "Subscription").await;
    assert!(text_of(c, "main").await.contains("Pro plan"));
    move_to(c, "cancelled", "cancelled").await;
    assert!(text_of(c, "#cycles").await.contains("cancelled"));
    let moves = eval(
        c,
        "return document.querySelectorAll('form[action$=\"/status\"]').length;",
    )
    .await;
    assert_eq!(moves, json!(0), "no move from cancelled");
    checked(c, axe, "a cancelled subscription").await;
}

async fn journey(db: TestDb, screenshots: bool) {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("dashboard customers browser test")
    else {
        return;
    };
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    actix_rt::spawn(app.into_server());
    let m = merchant(pay).await;
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    let mut shots = screenshots.then(|| Shots::new("dashboard"));
    ending_session(&c, driver, run(&c, &base, &m, &axe, &mut shots)).await;
    if let Some(s) = shots {
        assert_eq!(
            s.taken,
            ["subscription", "customer", "customers", "subscriptions"]
        );
    }
}

#[actix_rt::test]
async fn a_merchant_follows_customers_and_subscriptions_in_chromium_on_sqlite() {
    journey(TestDb::sqlite(), true).await;
}

#[actix_rt::test]
async fn a_merchant_follows_customers_and_subscriptions_in_chromium_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        journey(db, false).await;
    }
}
