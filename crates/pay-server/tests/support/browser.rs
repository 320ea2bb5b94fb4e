//! Headless Chromium over WebDriver for the browser tests: finding the browser (a `SKIP:` line
//! without it, a failure under `PAY_REQUIRE_ALL_TESTS=1`), chromedriver as a child process, a
//! session, screenshots written to `docs/images` with `PAY_UPDATE_SCREENSHOTS=1`, and the waits
//! and clicks the tests share.
// Each test binary includes this file and uses part of it.
#![allow(dead_code)]

use std::future::Future;
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder, Locator};
use futures_util::FutureExt;
use pay_server::{Application, Config};
use pay_store::testing::{require_all_tests, TestDb};
use serde_json::{json, Value};

pub const WAIT: Duration = Duration::from_secs(10);

pub fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    names.iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Chromium and chromedriver, or `None` after the SKIP line (a panic under
/// `PAY_REQUIRE_ALL_TESTS=1`).
pub fn browser(test: &str) -> Option<(PathBuf, PathBuf)> {
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
            let _ = writeln!(std::io::stderr(), "SKIP: {test}: {msg}");
            None
        }
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// chromedriver as a child process, ended (by its id) when dropped.
pub struct Driver {
    child: Child,
    pub url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub async fn start_driver(binary: &Path) -> Driver {
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

pub async fn open_browser(driver: &Driver, chromium: &Path) -> Client {
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

/// Screenshots taken on the way, written to `docs/images` on request.
pub struct Shots {
    update: bool,
    dir: PathBuf,
    /// The file names' prefix: `docs/images/<prefix>-<state>.png`.
    prefix: &'static str,
    pub taken: Vec<String>,
}

impl Shots {
    pub fn new(prefix: &'static str) -> Shots {
        Shots {
            update: std::env::var("PAY_UPDATE_SCREENSHOTS").as_deref() == Ok("1"),
            dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/images"),
            prefix,
            taken: Vec::new(),
        }
    }

    pub async fn take(&mut self, c: &Client, state: &str) {
        let png = c.screenshot().await.expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{state}: not a PNG");
        assert!(png.len() > 5_000, "{state}: an empty screenshot?");
        if self.update {
            std::fs::create_dir_all(&self.dir).unwrap();
            let path = self.dir.join(format!("{}-{state}.png", self.prefix));
            std::fs::write(&path, &png).unwrap();
            eprintln!("wrote {}", path.display());
        }
        self.taken.push(state.to_owned());
    }
}

/// Runs `journey` on the session `c`, then ends the session and its driver whatever happened:
/// a failed assertion is raised again once the browser is closed.
pub async fn ending_session(c: &Client, driver: Driver, journey: impl Future<Output = ()>) {
    let result = AssertUnwindSafe(journey).catch_unwind().await;
    let _ = c.clone().close().await;
    drop(driver);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// Waits until the page's `<h1>` reads `heading` (the page may be loading or swapping).
pub async fn wait_heading(c: &Client, heading: &str) {
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

/// Clicks the element `css` finds (waiting for it). A link or a button (every button the
/// tests click submits a form) loads a new page: the click returns once the page it was on is
/// gone, so what the test reads next is never the old page's (WebDriver's click may return
/// before a form's POST, or the redirect after it, has replaced the document).
pub async fn click(c: &Client, css: &str) {
    click_at(c, Locator::Css(css), css).await;
}

/// `click` on the element `locator` finds; `what` names it in a failure.
pub async fn click_at(c: &Client, locator: Locator<'_>, what: &str) {
    let el = c
        .wait()
        .at_most(WAIT)
        .for_element(locator)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let tag = el.tag_name().await.unwrap_or_default().to_ascii_lowercase();
    let old_page = match tag.as_str() {
        "a" | "button" => Some(
            c.find(Locator::Css("html"))
                .await
                .unwrap_or_else(|e| panic!("the page before clicking {what}: {e}")),
        ),
        _ => None,
    };
    el.click()
        .await
        .unwrap_or_else(|e| panic!("click {what}: {e}"));
    if let Some(old) = old_page {
        let deadline = Instant::now() + WAIT;
        loop {
            match old.tag_name().await {
                // Gone: "stale element reference" once the new page is in, or, while it
                // replaces the old one, chromedriver's "unknown error: Node with given id does
                // not belong to the document" (seen in a .ci/run). A failure of the session
                // itself shows in the next command.
                Err(_) => return,
                Ok(_) if Instant::now() > deadline => {
                    panic!("clicked {what}, and no new page came within {WAIT:?}")
                }
                Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }
}

pub async fn eval(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.expect(script)
}

/// The real server on `db` and a free port, with its base and public pay URL on that port (so
/// the pages' form posts come from their own origin), on real time: the base URL and the
/// application, still to be spawned.
pub fn service(db: &TestDb) -> (String, Application) {
    let mut config = Config::for_database(&db.url);
    let port = free_port();
    config.listen = SocketAddr::from(([127, 0, 0, 1], port));
    let base = format!("http://127.0.0.1:{port}");
    config.base_url = base.clone();
    config.public_pay_url = base.clone();
    (
        base,
        Application::build(&config).expect("build the service"),
    )
}

/// A page of the merchant's or partner's own site (where the browser is sent back to): its
/// `<h1>` names the path.
pub async fn shop_page(req: actix_web::HttpRequest) -> actix_web::HttpResponse {
    actix_web::HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!DOCTYPE html><title>Shop</title><h1>Shop page {}</h1>",
            req.path()
        ))
}

/// The partner's site alone, serving `shop_page` on a free port: its base URL.
pub fn start_site() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = actix_web::HttpServer::new(|| {
        actix_web::App::new().default_service(actix_web::web::to(shop_page))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    actix_rt::spawn(server);
    format!("http://127.0.0.1:{port}")
}
