//! The public pages on the one base layout, in a real headless Chromium at 390 px wide (a
//! phone), on SQLite and on PostgreSQL: the hosted checkout of a link whose payer pays the fee
//! (the sandbox's test-mode badge, the fee line with its amount; the choice, the review and the
//! deposit), the customer portal (each open invoice's Pay button inside the card, compared by
//! bounding boxes), the gateway form's error page and the sign-in page after a refusal (the
//! e-mail typed is kept, the inputs styled). On each, axe-core (npm, `tests/axe`, injected into
//! the page) finds no violation and nothing is wider than the screen.
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

/// The service's answer to a partner API call with the merchant's key.
async fn api(base: &str, m: &Merchant, path: &str, body: Option<Value>) -> Value {
    let mut req = reqwest::Client::new()
        .post(format!("{base}/api/partner/v1/pay{path}"))
        .header("x-svc-key-id", &m.key)
        .header("x-svc-key-secret", &m.secret);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let v: Value = res.json().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {v}");
    v
}

/// The page at 390 px: nothing wider than the screen, no axe-core violation.
async fn on_a_phone(c: &Client, axe: &str, what: &str) {
    fits(c, what).await;
    no_violations(c, axe, &format!("{what} at 390 px")).await;
}

/// The box of the first element `css` matches: left, top, right, bottom.
async fn bounds(c: &Client, css: &str) -> (f64, f64, f64, f64) {
    let (x, y, w, h) = c
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .rectangle()
        .await
        .unwrap();
    (x, y, x + w, y + h)
}

async fn checkout(c: &Client, base: &str, m: &Merchant, axe: &str) {
    let link = api(
        base,
        m,
        "/payment-links",
        Some(json!({"amount": "25", "title": "Two mugs", "feePaidBy": "client"})),
    )
    .await;
    let uid = link["uid"].as_str().unwrap();
    c.goto(&format!("{base}/pay/{uid}")).await.unwrap();
    wait_heading(c, "Pay Acme Goods").await;
    assert!(
        text_of(c, "#test-mode").await.starts_with("Test mode"),
        "the sandbox's badge"
    );
    // The sandbox's fee is 1 % of the amount, and this payer pays it.
    assert_eq!(
        text_of(c, "#fee").await,
        "Processing fee, paid by you: 0.25 USDC (1 %), included in what you send."
    );
    on_a_phone(c, axe, "the checkout's choice").await;
    click(c, &format!("input[name='payAsset'][value='{BASE_USDC}']")).await;
    click(c, "form[action$='/start'] button[type='submit']").await;
    wait_heading(c, "Review your payment").await;
    let main = text_of(c, "main").await;
    assert!(
        main.contains("25.25") && main.contains("USDC"),
        "amount and fee: {main}"
    );
    on_a_phone(c, axe, "the checkout's review").await;
    click(c, "form[action$='/accept'] button").await;
    wait_heading(c, "Send your payment").await;
    let amount: f64 = text_of(c, "#amount").await.parse().unwrap();
    assert!(
        (amount - 25.25).abs() < 1e-9,
        "25 USDC and its fee: {amount}"
    );
    on_a_phone(c, axe, "the checkout's deposit").await;
}

async fn portal(c: &Client, base: &str, m: &Merchant, axe: &str) {
    let email = "ann@customer.example";
    api(
        base,
        m,
        "/customers",
        Some(json!({"email": email, "name": "Ann"})),
    )
    .await;
    for (label, amount) in [
        ("Team plan with a longer name", "1250.00"),
        ("Support", "9.50"),
    ] {
        api(
            base,
            m,
            "/subscriptions",
            Some(
                json!({"customerEmail": email, "label": label, "amountUsd": amount,
                   "cadence": "monthly", "timezone": "Europe/Berlin"}),
            ),
        )
        .await;
    }
    let customers: Value = reqwest::Client::new()
        .get(format!("{base}/api/partner/v1/pay/customers"))
        .header("x-svc-key-id", &m.key)
        .header("x-svc-key-secret", &m.secret)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let customer = customers["data"][0]["uid"].as_str().unwrap();
    let answer = api(base, m, &format!("/customers/{customer}/portal"), None).await;
    let url = answer["customer"]["urls"]["customerPortal"]
        .as_str()
        .unwrap();
    c.goto(url).await.unwrap();
    wait_heading(c, "Your subscriptions").await;
    let card = bounds(c, ".card").await;
    let buttons = c
        .find_all(Locator::Css("section[aria-labelledby='open'] a.btn"))
        .await
        .unwrap();
    assert_eq!(buttons.len(), 2, "two open invoices");
    for b in buttons {
        let (x, y, w, h) = b.rectangle().await.unwrap();
        let (left, top, right, bottom) = (x, y, x + w, y + h);
        assert!(
            left >= card.0 && right <= card.2 && top >= card.1 && bottom <= card.3,
            "a Pay button at ({left}, {top})-({right}, {bottom}) leaves the card {card:?}"
        );
    }
    on_a_phone(c, axe, "the portal").await;
}

async fn gateway(c: &Client, base: &str, axe: &str) {
    // A shop's page posts the form to an unknown form key: the error page.
    let shop = start_site();
    c.goto(&format!("{shop}/order")).await.unwrap();
    wait_heading(c, "Shop page /order").await;
    eval(
        c,
        &format!(
            "var f = document.createElement('form'); f.method = 'post';\
             f.action = '{base}/gateway/pay/pk_pay_{}';\
             var i = document.createElement('input'); i.name = 'amount'; i.value = '5';\
             f.appendChild(i); document.body.appendChild(f); f.submit(); return true;",
            "0".repeat(32)
        ),
    )
    .await;
    c.wait()
        .at_most(std::time::Duration::from_secs(10))
        .for_element(Locator::Css("main[data-error-code]"))
        .await
        .expect("the gateway's error page");
    assert!(text_of(c, "main").await.contains("Error code"));
    on_a_phone(c, axe, "the gateway's error page").await;
}

async fn sign_in_page(c: &Client, base: &str, m: &Merchant, axe: &str) {
    c.goto(&format!("{base}/dashboard")).await.unwrap();
    wait_heading(c, "Sign in").await;
    type_into(c, "#email", &m.email).await;
    type_into(c, "#password", "not the password").await;
    click(c, "button[type='submit']").await;
    wait_heading(c, "Sign in").await;
    let kept = eval(c, "return document.querySelector('#email').value;").await;
    assert_eq!(kept, json!(m.email), "the e-mail typed is kept");
    let styled = eval(
        c,
        "return getComputedStyle(document.querySelector('#email')).minHeight;",
    )
    .await;
    assert_eq!(styled, json!("44px"), "the sign-in inputs are styled");
    on_a_phone(c, axe, "the sign-in page after a refusal").await;
}

async fn run(c: &Client, base: &str, m: &Merchant, axe: &str) {
    c.set_window_size(PHONE, 900).await.unwrap();
    checkout(c, base, m, axe).await;
    portal(c, base, m, axe).await;
    gateway(c, base, axe).await;
    sign_in_page(c, base, m, axe).await;
}

async fn journey(db: TestDb) {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("public pages browser test") else {
        return;
    };
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    actix_rt::spawn(app.into_server());
    let m = merchant(pay).await;
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    ending_session(&c, driver, run(&c, &base, &m, &axe)).await;
}

#[actix_rt::test]
async fn the_public_pages_at_390_px_in_chromium_on_sqlite() {
    journey(TestDb::sqlite()).await;
}

#[actix_rt::test]
async fn the_public_pages_at_390_px_in_chromium_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        journey(db).await;
    }
}
