//! Test harness: a running server, tenants, credentials and request helpers.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use pay_domain::app::Pay;
use pay_domain::kernel::ports::Clock;
use pay_domain::kernel::ratelimit::{Limit, RateLimits};
use pay_domain::kernel::secret::Secret;
use pay_domain::kernel::timestamp::Timestamp;
use pay_server::{build_pay_with, open_store, Application, Config, Dispatcher};
use pay_store::testing::TestDb;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::Value;

#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A team with its owner's sign-in and its first API key.
#[derive(Debug, Clone)]
pub struct Tenant {
    pub company_id: String,
    pub email: String,
    pub password: String,
    pub key_id: String,
    pub key_secret: String,
}

/// A signed-in browser session.
#[derive(Debug, Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

/// The process clock, which the test moves as real time passing (signatures still use the
/// system's real time; companies' test clocks add their offsets to it).
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn advance_secs(&self, secs: i64) {
        self.0.fetch_add(secs * 1000, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_millis(self.0.load(Ordering::SeqCst)).unwrap()
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub pay: Pay,
    /// The store under `pay`, for tests that read or write rows the API does not show.
    pub store: pay_store::DieselStore,
    pub clock: Arc<ManualClock>,
    pub dispatcher: Dispatcher,
    /// The counters `GET /metrics` shows (the application's: its dispatcher counts there;
    /// tests run a mailer or a background job's round with them).
    pub counters: pay_http::edge::metrics::Counters,
    pub config: Config,
    /// The port of the metrics listener (`PAY_METRICS_LISTEN`), when configured.
    pub metrics_port: Option<u16>,
    /// The main tenant ("Acme Goods").
    pub t: Tenant,
    _db: TestDb,
}

/// The server's evidence files live in a directory of its own (`Config::for_database`): gone
/// with the test, as its database is.
impl Drop for TestApp {
    fn drop(&mut self) {
        if let pay_server::files::FilesConfig::Local(dir) = &self.config.files {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Runs each named `async fn(TestApp)` once per backend; with `spawn = f;` first, on the
/// servers `f(Backend) -> Option<TestApp>` (a function of the calling module) starts.
#[macro_export]
macro_rules! on_both_backends {
    (spawn = $spawn:ident; $($f:ident),* $(,)?) => {$(
        mod $f {
            #[actix_rt::test]
            async fn sqlite() {
                if let Some(app) = super::$spawn($crate::helpers::Backend::Sqlite).await {
                    super::$f(app).await;
                }
            }
            #[actix_rt::test]
            async fn postgres() {
                if let Some(app) = super::$spawn($crate::helpers::Backend::Postgres).await {
                    super::$f(app).await;
                }
            }
        }
    )*};
    ($($f:ident),* $(,)?) => {$(
        mod $f {
            #[actix_rt::test]
            async fn sqlite() {
                if let Some(app) = $crate::helpers::spawn($crate::helpers::Backend::Sqlite).await {
                    super::$f(app).await;
                }
            }
            #[actix_rt::test]
            async fn postgres() {
                if let Some(app) = $crate::helpers::spawn($crate::helpers::Backend::Postgres).await {
                    super::$f(app).await;
                }
            }
        }
    )*};
}

pub async fn spawn(backend: Backend) -> Option<TestApp> {
    spawn_with(backend, Arc::new(pay_processor::SandboxProcessor::new())).await
}

/// The limits of the suites that are not about them: the defaults, but the gateway form and
/// request e-mails (which suites post many times from one address) kept out of the way. The
/// throttle tests spawn with the real defaults (`spawn_limited`).
fn suite_limits() -> RateLimits {
    let many = Limit::per(10_000, time::Duration::minutes(1));
    RateLimits {
        gateway_per_form: many,
        gateway_per_address: many,
        request_email_per_link: many,
        mail_per_recipient: many,
        login_per_address: many,
        ..RateLimits::default()
    }
}

/// The same over another processor (a merchant without a wallet, say).
pub async fn spawn_with(
    backend: Backend,
    processor: Arc<dyn pay_domain::checkout::ports::Processor>,
) -> Option<TestApp> {
    spawn_configured(backend, processor, |_| {}).await
}

/// A server with the given rate limits.
pub async fn spawn_limited(backend: Backend, limits: RateLimits) -> Option<TestApp> {
    spawn_configured(
        backend,
        Arc::new(pay_processor::SandboxProcessor::new()),
        move |c| c.rate_limits = limits,
    )
    .await
}

/// The same with the test configuration adjusted first (private webhook targets refused, as
/// in production, say). The suites' rate limits (`suite_limits`) apply unless it sets others.
pub async fn spawn_configured(
    backend: Backend,
    processor: Arc<dyn pay_domain::checkout::ports::Processor>,
    configure: impl FnOnce(&mut Config),
) -> Option<TestApp> {
    let db = match backend {
        Backend::Sqlite => TestDb::sqlite(),
        Backend::Postgres => TestDb::postgres()?,
    };
    let mut config = Config::for_database(&db.url);
    config.public_pay_url = "https://pay.test.example".into();
    config.rate_limits = suite_limits();
    configure(&mut config);
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    let clock = Arc::new(ManualClock(AtomicI64::new(now)));
    let store = open_store(&config).expect("open store");
    let pay = build_pay_with(&config, store.clone(), clock.clone(), processor).expect("build pay");
    let app = Application::build_with_store(&config, pay, store.clone()).expect("build app");
    let base = format!("http://127.0.0.1:{}", app.port());
    let pay = app.pay().clone();
    let dispatcher = app.dispatcher();
    let counters = app.counters();
    let metrics_port = app.metrics_port();
    actix_rt::spawn(app.into_server());
    let mut test = TestApp {
        metrics_port,
        store,
        clock,
        dispatcher,
        counters,
        config,
        base,
        client: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // Never reuse a connection the server may be closing: actix ends idle keep-alive
            // connections after 5 s, and a request sent on one as it closes fails with
            // `IncompleteMessage` (seen on a loaded machine).
            .pool_idle_timeout(std::time::Duration::from_secs(1))
            .build()
            .unwrap(),
        pay,
        t: Tenant {
            company_id: String::new(),
            email: String::new(),
            password: String::new(),
            key_id: String::new(),
            key_secret: String::new(),
        },
        _db: db,
    };
    test.t = test.new_tenant("Acme Goods").await;
    Some(test)
}

/// Status and JSON body (Null when the body is empty or not JSON).
pub async fn read(res: reqwest::Response) -> (StatusCode, Value) {
    let status = res.status();
    let text = res.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Asserts an error response: status, `errorCode`, and `field` when given.
#[track_caller]
pub fn assert_error(got: &(StatusCode, Value), status: u16, code: &str, field: Option<&str>) {
    assert_eq!(got.0.as_u16(), status, "status; body {}", got.1);
    assert_eq!(got.1["errorCode"], code, "errorCode; body {}", got.1);
    assert!(
        got.1["error"].as_str().is_some_and(|s| !s.is_empty()),
        "error message; body {}",
        got.1
    );
    match field {
        Some(f) => assert_eq!(got.1["field"], f, "field; body {}", got.1),
        None => assert!(
            got.1.get("field").is_none(),
            "no field expected; body {}",
            got.1
        ),
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Creates another team through the domain (as `admin bootstrap` does).
    pub async fn new_tenant(&self, name: &str) -> Tenant {
        let pay = self.pay.clone();
        let email = format!(
            "owner-{}@{}.example",
            uuid::Uuid::new_v4().simple(),
            name.replace(' ', "-").to_lowercase()
        );
        let password = "correct horse battery staple".to_owned();
        let (e, p, n) = (email.clone(), password.clone(), name.to_owned());
        let o =
            tokio::task::spawn_blocking(move || pay.tenancy().bootstrap(&n, &e, &Secret::new(p)))
                .await
                .unwrap()
                .unwrap();
        Tenant {
            company_id: o.company_id.to_string(),
            email,
            password,
            key_id: o.key_id.to_string(),
            key_secret: o.key_secret.unwrap().expose().to_owned(),
        }
    }

    /// A request with no credentials.
    pub fn anon(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, self.url(path))
    }

    /// A request with the main tenant's key.
    pub fn req(&self, method: Method, path: &str) -> RequestBuilder {
        self.as_tenant(&self.t, method, path)
    }

    pub fn as_tenant(&self, t: &Tenant, method: Method, path: &str) -> RequestBuilder {
        self.anon(method, path)
            .header("x-svc-key-id", &t.key_id)
            .header("x-svc-key-secret", &t.key_secret)
    }

    /// A request in a browser session, with its CSRF token.
    pub fn in_session(&self, s: &Session, method: Method, path: &str) -> RequestBuilder {
        self.anon(method, path)
            .header("cookie", format!("pay_session={}", s.cookie))
            .header("x-csrf-token", &s.csrf)
    }

    /// Same, without the CSRF header.
    pub fn in_session_no_csrf(&self, s: &Session, method: Method, path: &str) -> RequestBuilder {
        self.anon(method, path)
            .header("cookie", format!("pay_session={}", s.cookie))
    }

    pub async fn login(&self, email: &str, password: &str) -> Session {
        let res = self
            .anon(Method::POST, "/auth/login")
            .json(&serde_json::json!({"email": email, "password": password}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let set_cookie = res
            .headers()
            .get("set-cookie")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let cookie = set_cookie
            .split(';')
            .next()
            .unwrap()
            .strip_prefix("pay_session=")
            .unwrap()
            .to_owned();
        let body: Value = res.json().await.unwrap();
        Session {
            cookie,
            csrf: body["csrfToken"].as_str().unwrap().to_owned(),
        }
    }

    pub async fn login_owner(&self, t: &Tenant) -> Session {
        self.login(&t.email, &t.password).await
    }

    /// Creates a link with the main tenant's key and returns its body.
    /// A payer starts a session on the link, paying with `asset` (201 expected): the session.
    pub async fn start_session(&self, uid: &str, asset: &str) -> Value {
        let got = read(
            self.anon(
                Method::POST,
                &format!("/api/public/checkout/{uid}/sessions"),
            )
            .json(&serde_json::json!({ "payAsset": asset }))
            .send()
            .await
            .unwrap(),
        )
        .await;
        assert_eq!(got.0, 201, "{}", got.1);
        got.1
    }

    pub async fn create_link(&self, body: Value) -> Value {
        let got = read(
            self.req(Method::POST, "/api/partner/v1/pay/payment-links")
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.0, 201, "{}", got.1);
        got.1
    }
}

impl TestApp {
    /// Marks `domain` as the company's verified payment-link domain (`admin verify-domain`).
    pub async fn verify_domain(&self, company_id: &str, domain: &str) {
        let pay = self.pay.clone();
        let company = pay_domain::kernel::ids::CompanyId::parse(company_id).unwrap();
        let domain = domain.to_owned();
        let set = tokio::task::spawn_blocking(move || {
            pay.tenancy()
                .set_payment_link_domain(company, Some(&domain))
        })
        .await
        .unwrap()
        .unwrap();
        assert!(set.is_some());
    }

    /// Adds a new user to the tenant's company with `role`; returns their e-mail and password.
    pub async fn add_member(&self, t: &Tenant, role: &str) -> (String, String) {
        let pay = self.pay.clone();
        let email = format!("{role}-{}@acme.example", uuid::Uuid::new_v4().simple());
        let password = "member password 123".to_owned();
        let company = pay_domain::kernel::ids::CompanyId::parse(&t.company_id).unwrap();
        let role = pay_domain::tenancy::Role::parse(role).unwrap();
        let (e, p) = (email.clone(), password.clone());
        tokio::task::spawn_blocking(move || {
            pay.tenancy().add_member(company, &e, &Secret::new(p), role)
        })
        .await
        .unwrap()
        .unwrap();
        (email, password)
    }
}
