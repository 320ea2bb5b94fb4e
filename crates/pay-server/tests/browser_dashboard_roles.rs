//! The dashboard's decisions and limits clicked in a real headless Chromium, on SQLite and on
//! PostgreSQL: the owner answers an underpaid payment from the link's page (keeps what arrived
//! and completes it) and signs out; a read-only member of the team signs in, sees the link and
//! its session but no control that changes anything; another company's link is 404 to them,
//! under their team's path and under the other team's. axe-core (npm, `tests/axe`) finds no
//! violation on the pages shown, and at 390 px (a phone) nothing is wider than the screen.
//!
//! Without `chromium` and `chromedriver`, or `node` and `npm`, the test prints a `SKIP:` line
//! and passes, except under `PAY_REQUIRE_ALL_TESTS=1`.

use fantoccini::Client;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::Secret;
use pay_domain::tenancy::Role;
use pay_store::testing::TestDb;
use serde_json::json;

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

#[path = "support/dashboard.rs"]
mod dashboard;

use dashboard::*;

/// The status the browser's own `fetch` of `path` gets (its session cookie sent).
async fn status_of(c: &Client, path: &str) -> u64 {
    c.execute_async(
        "const done = arguments[arguments.length - 1];
         fetch(arguments[0], {redirect: 'manual'}).then(r => done(r.status), e => done(String(e)));",
        vec![json!(path)],
    )
    .await
    .expect("fetch")
    .as_u64()
    .unwrap_or_else(|| panic!("no status for {path}"))
}

/// How many forms that post are on the screen (the frame's sign-out is outside `main`).
async fn posting_forms(c: &Client) -> u64 {
    eval(
        c,
        "return document.querySelectorAll('main form[method=post]').length;",
    )
    .await
    .as_u64()
    .unwrap()
}

async fn run(c: &Client, base: &str, m: &Merchant, member: &str, other: &Merchant, axe: &str) {
    let uid = new_link(base, m, "10.00", "Short-paid lamp").await;
    let paid = pay_in_sandbox(base, m, &uid, true).await;
    assert_eq!(paid["status"], "underpaid", "{paid}");
    let page = format!("/dashboard/{}/links/{uid}", m.company_id);

    // The owner answers the underpayment: keep what arrived and complete.
    sign_in(c, base, &m.email).await;
    c.goto(&format!("{base}{page}")).await.unwrap();
    wait_heading(c, "Payment link").await;
    assert!(text_of(c, "main")
        .await
        .contains("Underpaid: your decision"));
    no_violations(c, axe, "an underpaid payment link").await;
    // The owner's page has controls, so the member's count of 0 below means something.
    assert!(posting_forms(c).await > 1, "no controls shown to the owner");
    click(
        c,
        "form[action$='/manual-resolution'] input[value='complete'] ~ button",
    )
    .await;
    wait_heading(c, "Payment link").await;
    let main = text_of(c, "main").await;
    assert!(!main.contains("Underpaid: your decision"), "{main}");
    assert!(main.contains("complete"), "{main}");
    click(c, "form[action$='/dashboard/signout'] button").await;
    wait_heading(c, "Sign in").await;

    // A read-only member sees the link and its session, and no control that changes anything.
    sign_in(c, base, member).await;
    click(c, "nav a[href$='/links']").await;
    wait_heading(c, "Payment links").await;
    assert!(text_of(c, "main table").await.contains("Short-paid lamp"));
    assert_eq!(posting_forms(c).await, 0, "a create form shown to a member");
    c.goto(&format!("{base}{page}")).await.unwrap();
    wait_heading(c, "Payment link").await;
    let main = text_of(c, "main").await;
    assert!(
        main.contains("Short-paid lamp") && main.contains("complete"),
        "{main}"
    );
    assert_eq!(posting_forms(c).await, 0, "a control shown to a member");
    no_violations(c, axe, "a payment link seen by a member").await;
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "a payment link seen by a member").await;
    no_violations(c, axe, "a payment link seen by a member at 390 px").await;
    c.set_window_size(1100, 1000).await.unwrap();

    // Another company's link: not found, under either team's path.
    let theirs = new_link(base, other, "10.00", "Not yours").await;
    for path in [
        format!("/dashboard/{}/links/{theirs}", m.company_id),
        format!("/dashboard/{}/links/{theirs}", other.company_id),
    ] {
        assert_eq!(status_of(c, &path).await, 404, "{path}");
        c.goto(&format!("{base}{path}")).await.unwrap();
        wait_heading(c, "Not found").await;
        assert!(!text_of(c, "main").await.contains("Not yours"));
    }
    no_violations(c, axe, "the not-found page").await;
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "the not-found page").await;
    no_violations(c, axe, "the not-found page at 390 px").await;
}

async fn journey(db: TestDb) {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("dashboard roles browser test") else {
        return;
    };
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    actix_rt::spawn(app.into_server());
    let m = merchant(pay.clone()).await;
    let other = merchant(pay.clone()).await;
    let member = format!("viewer-{}@acme.example", uuid::Uuid::new_v4().simple());
    let (p, e, company) = (
        pay.clone(),
        member.clone(),
        CompanyId::parse(&m.company_id).unwrap(),
    );
    tokio::task::spawn_blocking(move || {
        p.tenancy().add_member(
            company,
            &e,
            &Secret::new(PASSWORD.to_owned()),
            Role::parse("member").unwrap(),
        )
    })
    .await
    .unwrap()
    .unwrap();
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    ending_session(&c, driver, run(&c, &base, &m, &member, &other, &axe)).await;
}

#[actix_rt::test]
async fn an_owner_answers_an_underpayment_and_a_member_only_sees_in_chromium_on_sqlite() {
    journey(TestDb::sqlite()).await;
}

#[actix_rt::test]
async fn an_owner_answers_an_underpayment_and_a_member_only_sees_in_chromium_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        journey(db).await;
    }
}
