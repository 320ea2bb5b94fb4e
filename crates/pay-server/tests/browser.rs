//! The hosted checkout and the customer portal in a real headless Chromium, driven over
//! WebDriver (chromedriver). The checkout: a
//! payer picks an asset, reviews and accepts the quote, sees the deposit address and QR code,
//! the sandbox pays exactly the amount asked, the page turns to success by itself (polling)
//! and the browser lands on the merchant's success URL; the merchant's receiver then gets the
//! signed webhooks of the whole path. An underpaid payer who reopens the link sees the same
//! payment with what is still due (another browser sees nothing of it), and a paid one-time
//! link says so. The portal: a customer opens the signed URL, sees the
//! subscriptions and invoices, pays an open invoice through the hosted checkout, renames
//! themself, pauses, resumes and cancels, and a tampered URL shows the refusal page.
//! Screenshots of each state are taken on the way and, with `PAY_UPDATE_SCREENSHOTS=1`,
//! written to `docs/images/checkout-<state>.png` and `docs/images/portal-<state>.png`.
//!
//! Without `chromium` and `chromedriver` the test prints a `SKIP:` line and passes, except
//! under `PAY_REQUIRE_ALL_TESTS=1`, where a missing browser is a failure.

use std::net::TcpListener;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use fantoccini::{Client, Locator};
use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use pay_domain::kernel::secret::Secret;
use pay_store::testing::TestDb;
use reqwest::Method;
use serde_json::{json, Value};

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

const ETH: &str = "eip155:1/slip44:60";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

// ----- the merchant's side: webhook receiver and shop pages -----

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    signature: String,
    event: String,
    body: String,
}

/// The merchant's server: `/hooks` records webhooks, `/success`, `/failure` and `/cart` are
/// the shop's pages the checkout sends the payer back to.
struct Shop {
    base: String,
    got: Arc<Mutex<Vec<Received>>>,
}

fn start_shop() -> Shop {
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = HttpServer::new(move || {
        let g = g.clone();
        App::new()
            .route(
                "/hooks",
                web::post().to(move |req: HttpRequest, body: web::Bytes| {
                    let g = g.clone();
                    async move {
                        let h = |n: &str| {
                            req.headers()
                                .get(n)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned()
                        };
                        g.lock().unwrap().push(Received {
                            signature: h("x-pay-signature"),
                            event: h("x-pay-event"),
                            body: String::from_utf8_lossy(&body).into_owned(),
                        });
                        HttpResponse::Ok().body("ok")
                    }
                }),
            )
            .default_service(web::to(shop_page))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    actix_rt::spawn(server);
    Shop {
        base: format!("http://127.0.0.1:{port}"),
        got,
    }
}

// ----- the payment service -----

struct Service {
    base: String,
    http: reqwest::Client,
    app_dispatcher: pay_server::Dispatcher,
    key_id: String,
    key_secret: String,
    company_id: String,
    email: String,
    password: String,
    _db: TestDb,
}

/// The real server (`chromium::service`) with a bootstrapped company.
async fn start_service() -> Service {
    let db = TestDb::sqlite();
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    let app_dispatcher = app.dispatcher();
    actix_rt::spawn(app.into_server());
    let email = format!("owner-{}@shop.example", uuid::Uuid::new_v4().simple());
    let password = "correct horse battery staple".to_owned();
    let (e, p) = (email.clone(), password.clone());
    let o = tokio::task::spawn_blocking(move || {
        pay.tenancy().bootstrap("Acme Goods", &e, &Secret::new(p))
    })
    .await
    .unwrap()
    .unwrap();
    Service {
        base,
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        app_dispatcher,
        key_id: o.key_id.to_string(),
        key_secret: o.key_secret.unwrap().expose().to_owned(),
        company_id: o.company_id.to_string(),
        email,
        password,
        _db: db,
    }
}

impl Service {
    async fn api(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .header("x-svc-key-id", &self.key_id)
            .header("x-svc-key-secret", &self.key_secret);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let text = res.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Signs in as the owner and sets the company's payment callback; returns its secret.
    async fn set_callback(&self, url: &str) -> String {
        let res = self
            .http
            .post(format!("{}/auth/login", self.base))
            .json(&json!({"email": self.email, "password": self.password}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let cookie = res.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let csrf = res.json::<Value>().await.unwrap()["csrfToken"]
            .as_str()
            .unwrap()
            .to_owned();
        let res = self
            .http
            .put(format!(
                "{}/api/partner/v1/companies/{}/payment-callback",
                self.base, self.company_id
            ))
            .header("cookie", cookie)
            .header("x-csrf-token", csrf)
            .json(&json!({ "url": url }))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        res.json::<Value>().await.unwrap()["signingSecret"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    async fn create_link(&self, body: Value) -> String {
        let (status, l) = self
            .api(
                Method::POST,
                "/api/partner/v1/pay/payment-links",
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{l}");
        l["uid"].as_str().unwrap().to_owned()
    }

    async fn sandbox(&self, uid: &str, body: Value) -> Value {
        let (status, s) = self
            .api(
                Method::POST,
                &format!("/api/partner/v1/pay/sandbox/payment-links/{uid}/events"),
                Some(body),
            )
            .await;
        assert_eq!(status, 200, "{s}");
        s
    }
}

// ----- the browser's side -----

async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

/// The style sheet and the script ran under the page's CSP, and no violation was reported
/// since `watch_csp`.
async fn assert_page_healthy(c: &Client) {
    let v = eval(
        c,
        "return {\
           styled: getComputedStyle(document.querySelector('main')).borderRadius,\
           violations: window.__cspViolations || [],\
           live: !!document.getElementById('live')\
         };",
    )
    .await;
    assert_eq!(v["styled"], "12px", "the inline style applied: {v}");
    assert_eq!(v["violations"], json!([]), "CSP violations: {v}");
    assert_eq!(v["live"], true);
}

async fn watch_csp(c: &Client) {
    eval(
        c,
        "window.__cspViolations = [];\
         document.addEventListener('securitypolicyviolation', function (e) {\
           window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);\
         });\
         return true;",
    )
    .await;
}

/// Picks `asset` on the choose step and continues.
async fn choose(c: &Client, asset: &str) {
    click(c, &format!("input[name='payAsset'][value='{asset}']")).await;
    click(c, "form[action$='/start'] button[type='submit']").await;
}

fn session_id(url: &url::Url) -> String {
    url.query_pairs()
        .find(|(k, _)| k == "session")
        .map(|(_, v)| v.into_owned())
        .expect("a session in the URL")
}

// ----- the test -----

/// What a browser run gets: the page, the service, the shop, the callback's secret, the shots.
type RunFn = for<'a> fn(
    &'a Client,
    &'a Service,
    &'a Shop,
    &'a str,
    &'a mut Shots,
) -> BoxFuture<'a, Result<(), String>>;

/// Starts the shop, the service (with its callback to the shop), chromedriver and Chromium, and
/// runs `body`; the browser session ends even when `body` fails (chromedriver then quits
/// Chromium), or the browser would outlive the test.
async fn in_chromium(what: &str, prefix: &'static str, body: RunFn) {
    let Some((chromium, driver_bin)) = browser(&format!("browser {what} test")) else {
        return;
    };
    let started = Instant::now();
    let shop = start_shop();
    let svc = start_service().await;
    let secret = svc.set_callback(&format!("{}/hooks", shop.base)).await;
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    let mut shots = Shots::new(prefix);
    let result = AssertUnwindSafe(body(&c, &svc, &shop, &secret, &mut shots))
        .catch_unwind()
        .await;
    let _ = c.close().await;
    drop(driver);
    match result {
        Ok(done) => done.expect("the browser run"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
    eprintln!(
        "browser {what}: {} screenshots in {:.1} s",
        shots.taken.len(),
        started.elapsed().as_secs_f64()
    );
}

#[actix_rt::test]
async fn a_payer_pays_in_chromium_and_the_merchant_hears_of_it() {
    in_chromium("checkout", "checkout", |c, svc, shop, secret, shots| {
        Box::pin(run(c, svc, shop, secret, shots))
    })
    .await;
}

async fn run(
    c: &Client,
    svc: &Service,
    shop: &Shop,
    secret: &str,
    shots: &mut Shots,
) -> Result<(), String> {
    let uid = svc
        .create_link(json!({
            "amount": "25",
            "title": "Order #1042 - two mugs",
            "description": "Stoneware, 350 ml, glazed blue",
            "successUrl": format!("{}/success", shop.base),
            "failureUrl": format!("{}/failure", shop.base),
            "returnUrl": format!("{}/cart", shop.base),
        }))
        .await;
    let page = format!("{}/pay/{uid}", svc.base);

    // Choose what to pay with.
    c.goto(&page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Pay Acme Goods").await;
    watch_csp(c).await;
    assert_page_healthy(c).await;
    assert_eq!(text_of(c, ".amt").await, "25 USDC");
    shots.take(c, "choose").await;

    // Review the quote and accept it.
    choose(c, ETH).await;
    wait_heading(c, "Review your payment").await;
    watch_csp(c).await;
    let left = text_of(c, ".cd").await;
    assert!(
        left.starts_with("10:00") || left.starts_with("9:5"),
        "{left}"
    );
    shots.take(c, "review").await;
    click(c, "form[action$='/accept'] button").await;

    // The deposit: address, amount, QR, a running countdown, copy buttons the script shows.
    wait_heading(c, "Send your payment").await;
    watch_csp(c).await;
    let url = c.current_url().await.map_err(|e| e.to_string())?;
    let id = session_id(&url);
    let (_, s) = svc
        .api(
            Method::GET,
            &format!("/api/public/checkout/{uid}/sessions/{id}"),
            None,
        )
        .await;
    assert_eq!(s["status"], "pending");
    let address = s["depositAddress"].as_str().unwrap().to_owned();
    let amount = s["requiredSellAmount"].as_str().unwrap().to_owned();
    assert_eq!(text_of(c, "#address").await, address);
    assert_eq!(text_of(c, "#amount").await, amount);
    let qr = c
        .find(Locator::Css("svg.qr"))
        .await
        .map_err(|e| e.to_string())?;
    let (_, _, w, h) = qr.rectangle().await.map_err(|e| e.to_string())?;
    assert!(
        w >= 150.0 && (w - h).abs() < 1.0,
        "a square QR code: {w}x{h}"
    );
    let copy = c
        .find(Locator::Css("button[data-copy]"))
        .await
        .map_err(|e| e.to_string())?;
    assert!(
        copy.is_displayed().await.map_err(|e| e.to_string())?,
        "the script shows the copy buttons"
    );
    let first = text_of(c, ".cd").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = text_of(c, ".cd").await;
    assert_ne!(first, second, "the countdown runs");
    assert!(second.starts_with("29:5"), "{second}");
    assert_page_healthy(c).await;
    shots.take(c, "deposit").await;

    // The chain pays exactly the amount asked; the page finds out by itself.
    let done = svc
        .sandbox(&uid, json!({"type": "deposit", "amount": amount}))
        .await;
    assert_eq!(done["status"], "complete");
    wait_heading(c, "Payment complete").await;
    // The browser leaves for the success URL 2 s after the swap: screenshot and checks first,
    // in few round trips.
    shots.take(c, "success").await;
    let deadline = Instant::now() + Duration::from_secs(1);
    let seen = loop {
        let seen = eval(
            c,
            "var a = document.querySelector('a.btn.primary');\
             return {\
               live: document.getElementById('live').textContent,\
               href: a && a.getAttribute('href'),\
               styled: getComputedStyle(document.querySelector('main')).borderRadius,\
               violations: window.__cspViolations || []\
             };",
        )
        .await;
        if seen["live"] != "" || Instant::now() > deadline {
            break seen;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The live region (visually hidden) announced the new state.
    assert!(
        seen["live"]
            .as_str()
            .is_some_and(|l| l.starts_with("Payment complete")),
        "{seen}"
    );
    assert_eq!(seen["href"], format!("{}/success", shop.base), "{seen}");
    assert_eq!(seen["styled"], "12px", "{seen}");
    assert_eq!(
        seen["violations"],
        json!([]),
        "no CSP violation in the swap: {seen}"
    );
    // ... and sends the browser to the merchant's success page.
    let success = url::Url::parse(&format!("{}/success", shop.base)).unwrap();
    c.wait()
        .at_most(WAIT)
        .for_url(&success)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(text_of(c, "h1").await, "Shop page /success");

    // The merchant's webhooks: the channel, then pending -> processing -> complete, signed.
    svc.app_dispatcher
        .drain()
        .await
        .map_err(|e| e.to_string())?;
    let got = shop.got.lock().unwrap().clone();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut events: Vec<(u64, String, String)> = got
        .iter()
        .map(|r| {
            pay_webhooks::verify(secret, &r.signature, r.body.as_bytes(), now, 300)
                .expect("a valid signature");
            let b: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(r.event, b["event"]["type"].as_str().unwrap());
            assert_eq!(b["session"]["id"], id.as_str());
            (
                b["sequence"].as_u64().unwrap(),
                r.event.clone(),
                format!(
                    "{} -> {}",
                    b["session"]["previousStatus"].as_str().unwrap_or("-"),
                    b["session"]["status"].as_str().unwrap_or("-")
                ),
            )
        })
        .collect();
    events.sort();
    let names: Vec<(&str, &str)> = events
        .iter()
        .map(|(_, e, s)| (e.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        names[0],
        ("channel_created", "quote -> pending"),
        "{names:?}"
    );
    let moves: Vec<&str> = names
        .iter()
        .filter(|(e, _)| *e == "status_changed")
        .map(|(_, s)| *s)
        .collect();
    assert_eq!(
        moves,
        [
            "quote -> pending",
            "pending -> processing",
            "processing -> complete"
        ]
    );

    // A deposit request that runs out: the failure state, with the way back.
    c.goto(&page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Pay Acme Goods").await;
    choose(c, BASE_USDC).await;
    wait_heading(c, "Review your payment").await;
    click(c, "form[action$='/accept'] button").await;
    wait_heading(c, "Send your payment").await;
    svc.sandbox(&uid, json!({"type": "expire"})).await;
    wait_heading(c, "This payment request expired").await;
    let back = c
        .find(Locator::Css("a[href$='/failure']"))
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(
        back.attr("href").await.map_err(|e| e.to_string())?,
        Some(format!("{}/failure", shop.base))
    );
    assert_page_healthy(c).await;
    shots.take(c, "expired").await;

    // A paused link: a clear page, nothing to start.
    let paused = svc
        .create_link(json!({"amount": "12.50", "title": "Workshop ticket"}))
        .await;
    let (status, _) = svc
        .api(
            Method::PATCH,
            &format!("/api/partner/v1/pay/payment-links/{paused}"),
            Some(json!({"status": "paused"})),
        )
        .await;
    assert_eq!(status, 200);
    c.goto(&format!("{}/pay/{paused}", svc.base))
        .await
        .map_err(|e| e.to_string())?;
    wait_heading(c, "This payment link is paused").await;
    assert!(c.find(Locator::Css("form")).await.is_err(), "no form");
    shots.take(c, "paused").await;

    // The dark theme (an anonymous link's branding), at the deposit step.
    let (status, anon) = svc
        .api(
            Method::POST,
            "/api/public/anonymous-payment-links",
            Some(json!({
                "amount": "0.05",
                "title": "Tip jar",
                "settlement": {"priorities": [
                    {"asset": ETH, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}
                ]},
                "branding": {"name": "Bob's stall", "theme": "dark"}
            })),
        )
        .await;
    assert_eq!(status, 201, "{anon}");
    let anon = anon["uid"].as_str().unwrap();
    c.goto(&format!("{}/pay/{anon}", svc.base))
        .await
        .map_err(|e| e.to_string())?;
    wait_heading(c, "Pay Bob's stall").await;
    watch_csp(c).await;
    let bg = eval(
        c,
        "return getComputedStyle(document.documentElement).backgroundColor;",
    )
    .await;
    assert_eq!(bg, "rgb(17, 17, 19)", "the dark palette");
    choose(c, ETH).await;
    wait_heading(c, "Review your payment").await;
    click(c, "form[action$='/accept'] button").await;
    wait_heading(c, "Send your payment").await;
    watch_csp(c).await;
    assert_page_healthy(c).await;
    shots.take(c, "deposit-dark").await;
    Ok(())
}

// ----- a payment under way -----

#[actix_rt::test]
async fn an_underpaid_payer_who_reopens_the_link_is_asked_only_for_the_rest() {
    in_chromium("underpaid", "checkout", |c, svc, shop, secret, shots| {
        Box::pin(underpaid_run(c, svc, shop, secret, shots))
    })
    .await;
}

/// A payer sends less than asked, closes the page and opens the link again: the page shows
/// the same payment with what is still due, never a new start at the full price; another
/// browser (no cookie) is told a payment is under way and shown nothing of it; the rest
/// completes the payment. A paid one-time link, reopened, says it is paid.
async fn underpaid_run(
    c: &Client,
    svc: &Service,
    _shop: &Shop,
    _secret: &str,
    shots: &mut Shots,
) -> Result<(), String> {
    let uid = svc
        .create_link(json!({"amount": "25", "title": "Order #1043 - a teapot"}))
        .await;
    let page = format!("{}/pay/{uid}", svc.base);
    c.goto(&page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Pay Acme Goods").await;
    choose(c, BASE_USDC).await;
    wait_heading(c, "Review your payment").await;
    click(c, "form[action$='/accept'] button").await;
    wait_heading(c, "Send your payment").await;
    let url = c.current_url().await.map_err(|e| e.to_string())?;
    let id = session_id(&url);
    let required = text_of(c, "#amount").await;
    assert_eq!(required, "25");
    // Twenty arrive: five are still due.
    let short = svc
        .sandbox(&uid, json!({"type": "deposit", "amount": "20"}))
        .await;
    assert_eq!(short["status"], "underpaid");
    wait_heading(c, "Part of your payment arrived").await;

    // Away and back through the link itself: the same payment, what is still due.
    c.goto(&format!("{}/", svc.base))
        .await
        .map_err(|e| e.to_string())?;
    c.goto(&page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Part of your payment arrived").await;
    watch_csp(c).await;
    let url = c.current_url().await.map_err(|e| e.to_string())?;
    assert_eq!(session_id(&url), id, "the same session, not a new one");
    let body = text_of(c, "main").await;
    assert!(body.contains("Still due"), "{body}");
    assert!(body.contains("5 USDC"), "{body}");
    assert!(
        c.find(Locator::Css("input[name='payAsset']"))
            .await
            .is_err(),
        "no new start offered"
    );
    assert_page_healthy(c).await;
    shots.take(c, "underpaid-reopened").await;

    // Another browser (no cookie): nothing of the payment, nothing to start.
    c.delete_all_cookies().await.map_err(|e| e.to_string())?;
    c.goto(&page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "A payment through this link is under way").await;
    assert!(c.find(Locator::Css("form")).await.is_err(), "no form");
    let body = text_of(c, "main").await;
    assert!(!body.contains("Still due") && !body.contains(&id), "{body}");
    shots.take(c, "under-way").await;

    // The payer's browser again (the session's page remembers it), and the rest arrives.
    c.goto(&format!("{page}?session={id}"))
        .await
        .map_err(|e| e.to_string())?;
    wait_heading(c, "Part of your payment arrived").await;
    let done = svc
        .sandbox(&uid, json!({"type": "deposit", "amount": "5"}))
        .await;
    assert_eq!(done["status"], "complete");
    assert_eq!(done["id"], id.as_str());
    wait_heading(c, "Payment complete").await;

    // A one-time link, paid, reopened: it says so; the payer's browser sees its payment.
    let (status, anon) = svc
        .api(
            Method::POST,
            "/api/public/anonymous-payment-links",
            Some(json!({
                "amount": "0.05",
                "title": "Tip jar",
                "settlement": {"priorities": [
                    {"asset": ETH, "address": "0x52908400098527886E0F7030069857D2E4169EE7"}
                ]}
            })),
        )
        .await;
    assert_eq!(status, 201, "{anon}");
    let anon = anon["uid"].as_str().unwrap().to_owned();
    let anon_page = format!("{}/pay/{anon}", svc.base);
    c.goto(&anon_page).await.map_err(|e| e.to_string())?;
    choose(c, ETH).await;
    wait_heading(c, "Review your payment").await;
    click(c, "form[action$='/accept'] button").await;
    wait_heading(c, "Send your payment").await;
    let amount = text_of(c, "#amount").await;
    let (status, paid) = svc
        .api(
            Method::POST,
            &format!("/api/public/sandbox/payment-links/{anon}/events"),
            Some(json!({"type": "deposit", "amount": amount})),
        )
        .await;
    assert_eq!((status, paid["status"].as_str()), (200, Some("complete")));
    c.goto(&anon_page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Payment complete").await;
    c.delete_all_cookies().await.map_err(|e| e.to_string())?;
    c.goto(&anon_page).await.map_err(|e| e.to_string())?;
    wait_heading(c, "This payment link is already paid").await;
    assert!(c.find(Locator::Css("form")).await.is_err(), "no form");
    shots.take(c, "already-paid").await;
    Ok(())
}

// ----- the customer portal -----

/// Clicks the button whose text is `label` (an XPath over the visible text), and waits for
/// the page its form loads (`click`).
async fn click_button(c: &Client, scope: &str, label: &str) {
    let xpath = format!("{scope}//button[normalize-space()='{label}']");
    click_at(c, Locator::XPath(&xpath), &xpath).await;
}

/// The portal's own style applied and no CSP violation since `watch_csp`.
async fn assert_portal_healthy(c: &Client) {
    let v = eval(
        c,
        "return {\
           styled: getComputedStyle(document.querySelector('.card')).borderRadius,\
           wide: getComputedStyle(document.querySelector('main')).maxWidth,\
           violations: window.__cspViolations || [],\
           scripts: document.scripts.length\
         };",
    )
    .await;
    assert_eq!(v["styled"], "12px", "the inline style applied: {v}");
    assert_eq!(v["wide"], "704px", "the portal's rules applied: {v}");
    assert_eq!(v["violations"], json!([]), "CSP violations: {v}");
    assert_eq!(v["scripts"], 0, "the portal runs no script: {v}");
}

/// The text of the subscription's status badge.
async fn badge(c: &Client, sub: &str) -> String {
    text_of(c, &format!("#sub-{sub} header .badge")).await
}

#[actix_rt::test]
async fn a_customer_uses_the_portal_in_chromium() {
    in_chromium("portal", "portal", |c, svc, shop, secret, shots| {
        Box::pin(portal_run(c, svc, shop, secret, shots))
    })
    .await;
}

async fn portal_run(
    c: &Client,
    svc: &Service,
    shop: &Shop,
    secret: &str,
    shots: &mut Shots,
) -> Result<(), String> {
    c.set_window_size(900, 1300)
        .await
        .map_err(|e| e.to_string())?;
    let email = "ann@customer.example";
    let (status, _) = svc
        .api(
            Method::POST,
            "/api/partner/v1/pay/customers",
            Some(json!({"email": email, "name": "Ann", "clientId": "CRM-1042"})),
        )
        .await;
    assert_eq!(status, 201);
    let mut subs = vec![];
    for body in [
        json!({
            "customerEmail": email, "label": "Team plan", "description": "5 seats, billed monthly",
            "amountUsd": "25.00", "cadence": "monthly", "timezone": "Europe/Berlin",
        }),
        json!({
            "customerEmail": email, "label": "Support add-on", "amountUsd": "9.50",
            "cadence": "custom_months", "billingIntervalCount": 3, "timezone": "America/New_York",
        }),
    ] {
        let (status, s) = svc
            .api(
                Method::POST,
                "/api/partner/v1/pay/subscriptions",
                Some(body),
            )
            .await;
        assert_eq!(status, 201, "{s}");
        subs.push(s);
    }
    let team = subs[0]["uid"].as_str().unwrap().to_owned();
    let invoice = subs[0]["cycles"][0]["paymentLinkUid"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, customers) = svc
        .api(Method::GET, "/api/partner/v1/pay/customers", None)
        .await;
    let customer = customers["data"][0]["uid"].as_str().unwrap().to_owned();
    let (status, answer) = svc
        .api(
            Method::POST,
            &format!("/api/partner/v1/pay/customers/{customer}/portal"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let portal = answer["customer"]["urls"]["customerPortal"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        portal.starts_with(&format!("{}/portal?", svc.base)),
        "{portal}"
    );

    // The signed URL: subscriptions with their cycles, open invoices with a pay button.
    c.goto(&portal).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Your subscriptions").await;
    watch_csp(c).await;
    assert_portal_healthy(c).await;
    assert_eq!(text_of(c, ".merchant").await, "Acme Goods");
    assert_eq!(text_of(c, "#client-id").await, "CRM-1042");
    let name = c
        .find(Locator::Css("#name"))
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(
        name.prop("value")
            .await
            .map_err(|e| e.to_string())?
            .as_deref(),
        Some("Ann")
    );
    assert_eq!(badge(c, &team).await, "active");
    let pay_buttons = c
        .find_all(Locator::Css(
            "section[aria-labelledby='open'] a.btn.primary",
        ))
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(pay_buttons.len(), 2, "two open invoices");
    assert!(text_of(c, "section[aria-labelledby='paid']")
        .await
        .contains("No payments yet."));
    shots.take(c, "overview").await;

    // Pay the Team plan's invoice through the hosted checkout (the sandbox pays it).
    click(c, &format!("a[href$='/pay/{invoice}']")).await;
    wait_heading(c, "Pay Acme Goods").await;
    choose(c, BASE_USDC).await;
    wait_heading(c, "Review your payment").await;
    click(c, "form[action$='/accept'] button").await;
    wait_heading(c, "Send your payment").await;
    let amount = text_of(c, "#amount").await;
    let done = svc
        .sandbox(&invoice, json!({"type": "deposit", "amount": amount}))
        .await;
    assert_eq!(done["status"], "complete");
    wait_heading(c, "Payment complete").await;
    c.goto(&portal).await.map_err(|e| e.to_string())?;
    wait_heading(c, "Your subscriptions").await;
    let paid = text_of(c, "section[aria-labelledby='paid']").await;
    assert!(
        paid.contains("Team plan") && paid.contains("25.00 USD"),
        "{paid}"
    );
    assert_eq!(
        c.find_all(Locator::Css(
            "section[aria-labelledby='open'] a.btn.primary"
        ))
        .await
        .map_err(|e| e.to_string())?
        .len(),
        1,
        "one open invoice left"
    );
    shots.take(c, "paid").await;

    // Rename (the customer ID stays read-only).
    let name = c
        .find(Locator::Css("#name"))
        .await
        .map_err(|e| e.to_string())?;
    name.clear().await.map_err(|e| e.to_string())?;
    name.send_keys("Ann Lee").await.map_err(|e| e.to_string())?;
    click_button(c, "", "Save name").await;
    wait_heading(c, "Your subscriptions").await;
    assert_eq!(text_of(c, ".notice").await, "Your name was saved.");
    let (_, customers) = svc
        .api(Method::GET, "/api/partner/v1/pay/customers", None)
        .await;
    assert_eq!(customers["data"][0]["name"], "Ann Lee");
    assert_eq!(customers["data"][0]["clientId"], "CRM-1042");

    // Pause, resume, cancel the Team plan.
    let scope = format!("//article[@id='sub-{team}']");
    click_button(c, &scope, "Pause").await;
    wait_heading(c, "Your subscriptions").await;
    assert_eq!(badge(c, &team).await, "paused");
    watch_csp(c).await;
    assert_portal_healthy(c).await;
    shots.take(c, "paused").await;
    click_button(c, &scope, "Resume").await;
    wait_heading(c, "Your subscriptions").await;
    assert_eq!(badge(c, &team).await, "active");
    click_button(c, &scope, "Cancel subscription").await;
    wait_heading(c, "Your subscriptions").await;
    assert_eq!(badge(c, &team).await, "cancelled");
    assert_eq!(
        text_of(c, ".notice").await,
        "The subscription is cancelled; its unpaid invoices are closed."
    );
    shots.take(c, "cancelled").await;
    let (_, s) = svc
        .api(
            Method::GET,
            &format!("/api/partner/v1/pay/subscriptions/{team}"),
            None,
        )
        .await;
    assert_eq!(s["status"], "cancelled");
    assert_eq!(s["cycles"][0]["status"], "paid", "a paid cycle stays paid");

    // Each move was one signed subscription webhook with the customer's reason.
    svc.app_dispatcher
        .drain()
        .await
        .map_err(|e| e.to_string())?;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let reasons: Vec<String> = shop
        .got
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.event == "subscription_status_changed")
        .map(|r| {
            pay_webhooks::verify(secret, &r.signature, r.body.as_bytes(), now, 300)
                .expect("a valid signature");
            let b: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(b["subscription"]["uid"], team.as_str());
            assert_eq!(b["event"]["trigger"], "customer_portal");
            b["data"]["reason"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        reasons,
        ["customer_paused", "customer_resumed", "customer_cancelled"]
    );

    // One changed character of the signature: the refusal page, nothing of the customer.
    let at = portal.len() - 1;
    let last = if portal.ends_with('0') { "1" } else { "0" };
    let tampered = format!("{}{last}", &portal[..at]);
    c.goto(&tampered).await.map_err(|e| e.to_string())?;
    wait_heading(c, "This link is invalid or has expired").await;
    let body = text_of(c, "body").await;
    assert!(
        !body.contains(email) && !body.contains("Team plan"),
        "{body}"
    );
    shots.take(c, "refused").await;
    Ok(())
}
