//! The merchant dashboard clicked in a real headless Chromium, on SQLite and on PostgreSQL: a
//! merchant opens `/dashboard`, lands on the sign-in page, signs in and comes back to the Home
//! screen (two sandbox payments collected, one underpaid payment needing attention), goes to
//! Developers, creates an API key and sees its secret once, with the app the team connected
//! (its scopes) listed below; opened again, the screen lists the key without its secret, and
//! the merchant revokes the app. On Webhooks they set the callback to a receiver that fails,
//! send a test event, see the failure in the log and on the delivery's page, resend it and
//! see it delivered; then Settings and Team. On each screen axe-core (npm, `tests/axe`, injected into the
//! page) finds no violation, at a desktop width and at 390 px (a phone), where nothing is
//! wider than the screen. Screenshots, with `PAY_UPDATE_SCREENSHOTS=1`, go to
//! `docs/images/dashboard-{home,developers,webhooks,settings,team}.png` (from the SQLite run).
//!
//! Without `chromium` and `chromedriver`, or `node` and `npm` (axe-core is installed with
//! `npm ci` from the committed lock file), the test prints a `SKIP:` line and passes, except
//! under `PAY_REQUIRE_ALL_TESTS=1`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fantoccini::{Client, Locator};
use pay_domain::kernel::secret::Secret;
use pay_store::testing::TestDb;
use serde_json::json;

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

#[path = "support/dashboard.rs"]
mod dashboard;

use dashboard::*;

/// The merchant's webhook receiver (500 while `failing`, else 200), the dispatcher that
/// sends to it round by round, and a link of the merchant's to send a test event about.
struct Hooks {
    url: String,
    failing: Arc<AtomicBool>,
    dispatcher: pay_server::Dispatcher,
    link_uid: String,
}

fn start_receiver(failing: Arc<AtomicBool>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = actix_web::HttpServer::new(move || {
        let failing = failing.clone();
        actix_web::App::new().default_service(actix_web::web::to(move || {
            let down = failing.load(Ordering::SeqCst);
            async move {
                if down {
                    actix_web::HttpResponse::InternalServerError().body("down")
                } else {
                    actix_web::HttpResponse::Ok().body("ok")
                }
            }
        }))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    actix_rt::spawn(server);
    format!("http://127.0.0.1:{port}/hooks")
}

/// An application the owner connected to the team (consent through the domain), whose code
/// was exchanged for tokens.
async fn connect_app(pay: pay_domain::app::Pay, m: &Merchant) {
    let (email, company) = (m.email.clone(), m.company_id.clone());
    tokio::task::spawn_blocking(move || {
        let redirect = "https://shop.example/oauth/cb";
        let input = pay_domain::oauth::NewApplication {
            name: "Shop sync".into(),
            redirect_uris: vec![redirect.into()],
            scopes: APP_SCOPES.into(),
            public: false,
            dpop_bound: false,
            refresh_ttl: None,
        };
        let (app, secret) = pay.oauth().register_application(input).unwrap();
        let login = pay
            .tenancy()
            .login(&email, &Secret::new(PASSWORD.to_owned()), "127.0.0.1")
            .unwrap();
        let signed_in = pay
            .tenancy()
            .authenticate_sign_in(login.session_token.expose())
            .unwrap();
        let req = pay_domain::oauth::AuthorizeRequest {
            client_id: app.client_id.to_string(),
            redirect_uri: redirect.into(),
            scope: APP_SCOPES.into(),
            state: None,
            // RFC 7636, appendix B.
            code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
            dpop_jkt: None,
        };
        let company = pay_domain::kernel::ids::CompanyId::parse(&company).unwrap();
        let issued = pay.oauth().authorize(&signed_in, company, &req).unwrap();
        let client = pay_domain::oauth::ClientAuth {
            client_id: app.client_id.to_string(),
            secret,
        };
        pay.oauth()
            .exchange_code(
                &client,
                issued.code.expose(),
                redirect,
                "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                None,
            )
            .unwrap();
    })
    .await
    .unwrap();
}

const APP_SCOPES: &str = "company:read pay:payment-links:read";

/// The merchant and their key, with an app connected; two completed sandbox payments and an
/// underpaid one (whose link's uid is the last of the three).
async fn world(base: &str, pay: pay_domain::app::Pay) -> (String, String) {
    let m = merchant(pay.clone()).await;
    connect_app(pay, &m).await;
    let mut last = String::new();
    for (amount, short) in [("25.00", false), ("10.50", false), ("40.00", true)] {
        let uid = new_link(base, &m, amount, "Order").await;
        let after = pay_in_sandbox(base, &m, &uid, short).await;
        let want = if short { "underpaid" } else { "complete" };
        assert_eq!(after["status"], want, "{after}");
        last = uid;
    }
    (m.email, last)
}

/// Waits until the element `css` (on the page a form's answer loads) holds `words`.
async fn wait_text(c: &Client, css: &str, words: &str) {
    for _ in 0..100 {
        if let Ok(e) = c.find(Locator::Css(css)).await {
            if e.text().await.is_ok_and(|t| t.contains(words)) {
                return;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{words:?} never showed in {css}");
}

/// Webhooks, Settings and Team, from the Developers screen at `dev_url`.
async fn hooks_settings_team(
    c: &Client,
    dev_url: &str,
    h: &Hooks,
    axe: &str,
    shots: &mut Option<Shots>,
) {
    let hooks_url = dev_url.replace("/developers", "/webhooks");
    click(c, "nav a[href$='/webhooks']").await;
    wait_heading(c, "Webhooks").await;
    no_violations(c, axe, "Webhooks").await;
    type_into(c, "#callback-url-input", &h.url).await;
    click(c, "form[action$='/webhooks/callback'] button").await;
    wait_text(c, "#new-secret-value", "whsec_").await;
    // The receiver fails the test event's first attempt.
    h.failing.store(true, Ordering::SeqCst);
    type_into(c, "#test-link", &h.link_uid).await;
    click(c, "form[action$='/webhooks/test'] button").await;
    wait_text(c, "#notice", "A test event is queued").await;
    assert_eq!(h.dispatcher.run_once().await.unwrap(), 1);
    c.goto(&format!("{hooks_url}?deliveryStatus=retrying"))
        .await
        .unwrap();
    wait_heading(c, "Webhooks").await;
    let log = text_of(c, "#deliveries").await;
    assert!(
        log.contains("retrying") && log.contains("HTTP 500"),
        "{log}"
    );
    click(c, "#deliveries a").await;
    wait_heading(c, "Webhook delivery").await;
    let main = text_of(c, "main").await;
    assert!(main.contains("Attempt 1: HTTP 500"), "{main}");
    no_violations(c, axe, "a webhook delivery").await;
    // Up again: the resend is delivered.
    h.failing.store(false, Ordering::SeqCst);
    click(c, "form[action$='/resend'] button").await;
    wait_heading(c, "Webhooks").await;
    assert_eq!(h.dispatcher.run_once().await.unwrap(), 1);
    c.goto(&hooks_url).await.unwrap();
    wait_heading(c, "Webhooks").await;
    let log = text_of(c, "#deliveries").await;
    assert!(
        log.contains("succeeded") && log.contains("(manual)"),
        "{log}"
    );
    assert!(log.contains("retrying"), "{log}");
    no_violations(c, axe, "Webhooks with deliveries").await;
    for (tab, heading) in [
        ("webhooks", "Webhooks"),
        ("settings", "Settings"),
        ("team", "Team"),
    ] {
        if tab != "webhooks" {
            click(c, &format!("nav a[href$='/{tab}']")).await;
            wait_heading(c, heading).await;
            no_violations(c, axe, heading).await;
        }
        if let Some(s) = shots.as_mut() {
            s.take(c, tab).await;
        }
        c.set_window_size(PHONE, 900).await.unwrap();
        fits(c, heading).await;
        no_violations(c, axe, &format!("{heading} at 390 px")).await;
        c.set_window_size(1100, 1000).await.unwrap();
    }
    let main = text_of(c, "main").await;
    assert!(main.contains("Owner") && main.contains("(you)"), "{main}");
}

async fn run(c: &Client, base: &str, email: &str, h: &Hooks, axe: &str, shots: &mut Option<Shots>) {
    c.set_window_size(1100, 1000).await.unwrap();
    c.goto(&format!("{base}/dashboard")).await.unwrap();
    wait_heading(c, "Sign in").await;
    type_into(c, "#email", email).await;
    type_into(c, "#password", "not the password").await;
    click(c, "button[type='submit']").await;
    wait_heading(c, "Sign in").await;
    // Refused: the e-mail is still there, the error said, the inputs styled.
    let kept = eval(c, "return document.querySelector('#email').value;").await;
    assert_eq!(kept, json!(email));
    assert!(text_of(c, "[role='alert']")
        .await
        .contains("Invalid e-mail or password"));
    let styled = eval(
        c,
        "return getComputedStyle(document.querySelector('#email')).minHeight;",
    )
    .await;
    assert_eq!(styled, json!("44px"), "the sign-in inputs are styled");
    no_violations(c, axe, "the sign-in page after a refusal").await;
    type_into(c, "#password", PASSWORD).await;
    click(c, "button[type='submit']").await;

    wait_heading(c, "Home").await;
    let main = text_of(c, "main").await;
    for words in [
        "Payments today",
        "35.50",
        "USDC (Base)",
        "Needs attention",
        "Underpaid payments",
        "40.00 USDC (Base) invoiced",
        "Latest events",
    ] {
        assert!(main.contains(words), "{words:?} not on Home:\n{main}");
    }
    let bars = eval(
        c,
        "return document.querySelectorAll('svg.chart rect.bar').length;",
    )
    .await;
    assert_eq!(bars, json!(30), "a bar per day");
    no_violations(c, axe, "Home").await;
    if let Some(s) = shots.as_mut() {
        s.take(c, "home").await;
    }
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "Home").await;
    no_violations(c, axe, "Home at 390 px").await;
    c.set_window_size(1100, 1000).await.unwrap();

    click(c, "nav a[href$='/developers']").await;
    wait_heading(c, "Developers").await;
    let dev_url = c.current_url().await.unwrap().to_string();
    no_violations(c, axe, "Developers").await;
    type_into(c, "#key-name", "Shop backend").await;
    click(c, "#create-h ~ form button[type='submit']").await;
    wait_heading(c, "Developers").await;
    let secret = text_of(c, "#new-key-secret").await;
    let key_id = text_of(c, "#new-key-id").await;
    assert!(secret.starts_with("mksec_"), "{secret}");
    assert!(key_id.starts_with("mk_pay_"), "{key_id}");
    let apps = text_of(c, "#apps").await;
    for words in [
        "Shop sync",
        "company:read",
        "pay:payment-links:read",
        "Active",
    ] {
        assert!(apps.contains(words), "{words:?} not in the apps:\n{apps}");
    }
    no_violations(c, axe, "Developers with a new key").await;
    if let Some(s) = shots.as_mut() {
        // Tall enough for the connected app below the keys.
        c.set_window_size(1100, 1500).await.unwrap();
        s.take(c, "developers").await;
        c.set_window_size(1100, 1000).await.unwrap();
    }
    c.set_window_size(PHONE, 900).await.unwrap();
    fits(c, "Developers").await;
    no_violations(c, axe, "Developers at 390 px").await;
    // Opened again: the key is listed, its secret is gone.
    c.goto(&dev_url).await.unwrap();
    wait_heading(c, "Developers").await;
    let source = c.source().await.unwrap();
    assert!(source.contains(&key_id), "the new key is listed");
    assert!(!source.contains(&secret), "the secret is shown once");
    assert!(c.find(Locator::Css("#new-key-secret")).await.is_err());
    fits(c, "Developers, listed").await;
    // Revoked at 390 px: the app stays listed, revoked, with no control.
    click(c, "#apps form button[type='submit']").await;
    wait_text(c, "#apps", "Revoked").await;
    assert!(c.find(Locator::Css("#apps form")).await.is_err());
    fits(c, "Developers, an app revoked").await;
    no_violations(c, axe, "Developers with a revoked app at 390 px").await;
    c.set_window_size(1100, 1000).await.unwrap();
    hooks_settings_team(c, &dev_url, h, axe, shots).await;

    // Signing out ends the session: the dashboard asks to sign in again.
    click(c, "form[action$='/dashboard/signout'] button").await;
    wait_heading(c, "Sign in").await;
    c.goto(&dev_url).await.unwrap();
    wait_heading(c, "Sign in").await;
}

async fn journey(db: TestDb, screenshots: bool) {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("dashboard browser test") else {
        return;
    };
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    let dispatcher = app.dispatcher();
    actix_rt::spawn(app.into_server());
    let (email, link_uid) = world(&base, pay).await;
    let failing = Arc::new(AtomicBool::new(false));
    let hooks = Hooks {
        url: start_receiver(failing.clone()),
        failing,
        dispatcher,
        link_uid,
    };
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    let mut shots = screenshots.then(|| Shots::new("dashboard"));
    ending_session(&c, driver, run(&c, &base, &email, &hooks, &axe, &mut shots)).await;
    if let Some(s) = shots {
        assert_eq!(
            s.taken,
            ["home", "developers", "webhooks", "settings", "team"]
        );
    }
}

#[actix_rt::test]
async fn a_merchant_signs_in_and_creates_a_key_in_chromium_on_sqlite() {
    journey(TestDb::sqlite(), true).await;
}

#[actix_rt::test]
async fn a_merchant_signs_in_and_creates_a_key_in_chromium_on_postgres() {
    if let Some(db) = TestDb::postgres() {
        journey(db, false).await;
    }
}
