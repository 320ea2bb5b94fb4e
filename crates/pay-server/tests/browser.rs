//! The hosted checkout in a real headless Chromium, driven over WebDriver (chromedriver): a
//! payer picks an asset, reviews and accepts the quote, sees the deposit address and QR code,
//! the sandbox pays exactly the amount asked, the page turns to success by itself (polling)
//! and the browser lands on the merchant's success URL; the merchant's receiver then gets the
//! signed webhooks of the whole path. Screenshots of each state are taken on the way and, with
//! `PAY_UPDATE_SCREENSHOTS=1`, written to `docs/images/checkout-<state>.png`.
//!
//! Without `chromium` and `chromedriver` the test prints a `SKIP:` line and passes, except
//! under `PAY_REQUIRE_ALL_TESTS=1`, where a missing browser is a failure.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder, Locator};
use futures_util::FutureExt;
use pay_domain::kernel::secret::Secret;
use pay_server::{Application, Config};
use pay_store::testing::{require_all_tests, TestDb};
use reqwest::Method;
use serde_json::{json, Value};

const ETH: &str = "eip155:1/slip44:60";
const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const WAIT: Duration = Duration::from_secs(10);

// ----- finding the browser -----

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Chromium and chromedriver, or `None` after the SKIP line (a panic under
/// `PAY_REQUIRE_ALL_TESTS=1`).
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = on_path(&["chromium", "chromium-browser", "google-chrome"]);
    let driver = on_path(&["chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            let msg = "chromium and chromedriver are not installed \
                       (apt-get install -y chromium chromium-driver)";
            if require_all_tests() {
                panic!("PAY_REQUIRE_ALL_TESTS=1 but {msg}");
            }
            // Straight to stderr, past the test harness's capture, so the skip is seen.
            let _ = writeln!(std::io::stderr(), "SKIP: browser checkout test: {msg}");
            None
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver as a child process, ended (by its id) when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_driver(binary: &Path) -> Driver {
    let port = free_port();
    let child = Command::new(binary)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let http = reqwest::Client::new();
    let deadline = Instant::now() + WAIT;
    loop {
        let ready = http
            .get(format!("{}/status", driver.url))
            .send()
            .await
            .ok()
            .map(|r| r.status().is_success())
            .unwrap_or(false);
        if ready {
            return driver;
        }
        assert!(Instant::now() < deadline, "chromedriver did not come up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn open_browser(driver: &Driver, chromium: &Path) -> Client {
    let mut caps = Capabilities::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--disable-extensions",
                "--no-first-run",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                "--window-size=520,1200",
            ],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a WebDriver session")
}

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
            .default_service(web::to(|req: HttpRequest| async move {
                HttpResponse::Ok()
                    .content_type("text/html; charset=utf-8")
                    .body(format!(
                        "<!DOCTYPE html><title>Shop</title><h1>Shop page {}</h1>",
                        req.path()
                    ))
            }))
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

/// The real server on a free port, with its public pay URL on that port (so the page's form
/// posts come from the public origin), on real time.
async fn start_service() -> Service {
    let db = TestDb::sqlite();
    let mut config = Config::for_database(&db.url);
    let port = free_port();
    config.listen = SocketAddr::from(([127, 0, 0, 1], port));
    let base = format!("http://127.0.0.1:{port}");
    config.base_url = base.clone();
    config.public_pay_url = base.clone();
    let app = Application::build(&config).expect("build the service");
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

/// Screenshots taken on the way, written to `docs/images` on request.
struct Shots {
    update: bool,
    dir: PathBuf,
    taken: Vec<String>,
}

impl Shots {
    fn new() -> Shots {
        Shots {
            update: std::env::var("PAY_UPDATE_SCREENSHOTS").as_deref() == Ok("1"),
            dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/images"),
            taken: Vec::new(),
        }
    }

    async fn take(&mut self, c: &Client, state: &str) {
        let png = c.screenshot().await.expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{state}: not a PNG");
        assert!(png.len() > 5_000, "{state}: an empty screenshot?");
        if self.update {
            std::fs::create_dir_all(&self.dir).unwrap();
            let path = self.dir.join(format!("checkout-{state}.png"));
            std::fs::write(&path, &png).unwrap();
            eprintln!("wrote {}", path.display());
        }
        self.taken.push(state.to_owned());
    }
}

/// Waits until the page's `<h1>` reads `heading` (the page may be loading or swapping).
async fn wait_heading(c: &Client, heading: &str) {
    let deadline = Instant::now() + WAIT;
    let mut last = String::new();
    while Instant::now() < deadline {
        if let Ok(h1) = c.find(Locator::Css("h1")).await {
            if let Ok(text) = h1.text().await {
                if text == heading {
                    return;
                }
                last = text;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("waited for heading {heading:?}; the page shows {last:?}");
}

async fn click(c: &Client, css: &str) {
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("click {css}: {e}"));
}

async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

async fn eval(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.expect(script)
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

#[actix_rt::test]
async fn a_payer_pays_in_chromium_and_the_merchant_hears_of_it() {
    let Some((chromium, driver_bin)) = browser() else {
        return;
    };
    let started = Instant::now();
    let shop = start_shop();
    let svc = start_service().await;
    let secret = svc.set_callback(&format!("{}/hooks", shop.base)).await;
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    let mut shots = Shots::new();
    // A failed assertion must still end the browser session (chromedriver then quits
    // Chromium), or the browser would outlive the test.
    let result = AssertUnwindSafe(run(&c, &svc, &shop, &secret, &mut shots))
        .catch_unwind()
        .await;
    let _ = c.close().await;
    drop(driver);
    match result {
        Ok(done) => done.expect("the browser run"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
    eprintln!(
        "browser checkout: {} screenshots in {:.1} s",
        shots.taken.len(),
        started.elapsed().as_secs_f64()
    );
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
