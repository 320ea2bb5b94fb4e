//! The dashboard's Payment links clicked in a real headless Chromium, on SQLite and on
//! PostgreSQL: a signed-in merchant opens Payment links, creates a link with the form (title,
//! order id, customer e-mail, metadata), it is paid in the sandbox, and its page shows the
//! completed session, the metadata and the timeline; the list then shows the link. On both
//! screens axe-core (npm, `tests/axe`, injected into the page) finds no violation, at a
//! desktop width and at 390 px (a phone), where nothing is wider than the screen.
//! Screenshots, with `PAY_UPDATE_SCREENSHOTS=1`, go to `docs/images/dashboard-link.png` and
//! `dashboard-links.png` (from the SQLite run).
//!
//! Without `chromium` and `chromedriver`, or `node` and `npm`, the test prints a `SKIP:` line
//! and passes, except under `PAY_REQUIRE_ALL_TESTS=1`.

use fantoccini::Client;
use pay_store::testing::TestDb;

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

#[path = "support/dashboard.rs"]
mod dashboard;

use dashboard::*;

/// A link made with the form, paid in the sandbox, its page with the session and the
/// timeline; then the list with it.
async fn run(c: &Client, base: &str, m: &Merchant, axe: &str, shots: &mut Option<Shots>) {
    sign_in(c, base, &m.email).await;
    click(c, "nav a[href$='/links']").await;
    wait_heading(c, "Payment links").await;
    no_violations(c, axe, "Payment links").await;
    type_into(c, "#l-amount", "15.00").await;
    type_into(c, "#l-title", "Desk lamp").await;
    type_into(c, "#l-order", "A-100").await;
    type_into(c, "#l-email", "payer@example.com").await;
    type_into(c, "#l-meta", "{\"orderRef\": \"A-17\"}").await;
    click(c, "#create-h ~ form button[type='submit']").await;
    wait_heading(c, "Payment link").await;
    let url = c.current_url().await.unwrap().to_string();
    let uid = url.rsplit('/').next().unwrap().to_owned();
    assert!(text_of(c, "main")
        .await
        .contains("No payer has started a session yet."));
    let paid = pay_in_sandbox(base, m, &uid, false).await;
    assert_eq!(paid["status"], "complete", "{paid}");
    c.goto(&url).await.unwrap();
    wait_heading(c, "Payment link").await;
    let main = text_of(c, "main").await;
    for words in [
        "Desk lamp",
        "A-100",
        "orderRef",
        "complete",
        "Timeline",
        "status_changed",
    ] {
        assert!(
            main.contains(words),
            "{words:?} not on the link's page:\n{main}"
        );
    }
    let entries = eval(
        c,
        "return document.querySelectorAll('#timeline li').length;",
    )
    .await;
    assert!(entries.as_u64().unwrap() >= 2, "the timeline: {entries}");
    no_violations(c, axe, "a payment link").await;
    if let Some(s) = shots.as_mut() {
        s.take(c, "link").await;
    }
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "a payment link").await;
    no_violations(c, axe, "a payment link at 390 px").await;
    c.set_window_size(1100, 1000).await.unwrap();
    click(c, "nav a[href$='/links']").await;
    wait_heading(c, "Payment links").await;
    assert!(text_of(c, "main table").await.contains("Desk lamp"));
    if let Some(s) = shots.as_mut() {
        s.take(c, "links").await;
    }
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "Payment links").await;
    no_violations(c, axe, "Payment links at 390 px").await;
}

async fn journey(db: TestDb, screenshots: bool) {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("dashboard links browser test") else {
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
        assert_eq!(s.taken, ["link", "links"]);
    }
}

#[actix_rt::test]
async fn a_merchant_creates_and_follows_a_link_in_chromium_on_sqlite() {
    journey(TestDb::sqlite(), true).await;
}

#[actix_rt::test]
async fn a_merchant_creates_and_follows_a_link_in_chromium_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        journey(db, false).await;
    }
}
