//! The OAuth consent flow clicked in a real headless Chromium: a partner app sends the merchant
//! to `/oauth/authorize`; the browser lands on the sign-in page, signs in, comes back to the
//! consent page, which names the app and its scopes in words and offers the merchant's two
//! companies; the merchant picks the second and allows, and the browser arrives at the app's
//! redirect URI with a code that exchanges for a token acting for that company. A second
//! request denied lands there with `error=access_denied`. Screenshots of both pages, with
//! `PAY_UPDATE_SCREENSHOTS=1`, go to `docs/images/oauth-signin.png` and `oauth-consent.png`.
//!
//! Without `chromium` and `chromedriver` the test prints a `SKIP:` line and passes, except
//! under `PAY_REQUIRE_ALL_TESTS=1`.

use fantoccini::{Client, Locator};
use pay_domain::app::Pay;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::secret::Secret;
use pay_domain::tenancy::Role;
use pay_store::testing::TestDb;
use serde_json::{json, Value};

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

const PASSWORD: &str = "correct horse battery staple";
const SCOPES: &str = "company:read pay:payment-links:read pay:payment-links:write";
/// RFC 7636 appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

/// Two companies: Acme Goods (the merchant owns it) and Bob's Bikes (the merchant is an admin
/// there); the API-key pairs of both, and a confidential app.
struct World {
    base: String,
    email: String,
    acme_key: (String, String),
    bikes: CompanyId,
    bikes_key: (String, String),
    client_id: String,
    client_secret: String,
    redirect: String,
}

async fn world(base: String, pay: Pay, redirect: String) -> World {
    let p = pay.clone();
    let email = format!("owner-{}@acme.example", uuid::Uuid::new_v4().simple());
    let e = email.clone();
    let r = redirect.clone();
    tokio::task::spawn_blocking(move || {
        let t = p.tenancy();
        let pw = Secret::new(PASSWORD.to_owned());
        let acme = t.bootstrap("Acme Goods", &e, &pw).unwrap();
        let bikes = t
            .bootstrap("Bob's Bikes", "bob@bikes.example", &pw)
            .unwrap();
        t.add_member(bikes.company_id, &e, &pw, Role::Admin)
            .unwrap();
        let (app, secret) = p
            .oauth()
            .register_application(pay_domain::oauth::NewApplication {
                name: "Ledger Sync".into(),
                redirect_uris: vec![r.clone()],
                scopes: SCOPES.into(),
                public: false,
                dpop_bound: false,
                refresh_ttl: None,
            })
            .unwrap();
        let key = |o: &pay_domain::tenancy::BootstrapOutcome| {
            (
                o.key_id.to_string(),
                o.key_secret.as_ref().unwrap().expose().to_owned(),
            )
        };
        World {
            base,
            email: e,
            acme_key: key(&acme),
            bikes: bikes.company_id,
            bikes_key: key(&bikes),
            client_id: app.client_id.to_string(),
            client_secret: secret.unwrap().expose().to_owned(),
            redirect: r,
        }
    })
    .await
    .unwrap()
}

impl World {
    fn authorize_url(&self, state: &str) -> String {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect)
            .append_pair("scope", SCOPES)
            .append_pair("state", state)
            .append_pair("code_challenge", CHALLENGE)
            .append_pair("code_challenge_method", "S256")
            .finish();
        format!("{}/oauth/authorize?{query}", self.base)
    }

    /// Exchanges `code` (client_secret_basic) and returns the access token.
    async fn exchange(&self, code: &str) -> String {
        let res = reqwest::Client::new()
            .post(format!("{}/oauth/token", self.base))
            .basic_auth(&self.client_id, Some(&self.client_secret))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", &self.redirect),
                ("code_verifier", VERIFIER),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["token_type"], "Bearer", "{body}");
        assert_eq!(body["scope"], SCOPES, "{body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// GET `path` with an API-key pair: the status.
    async fn status_with_key(&self, key: &(String, String), path: &str) -> u16 {
        reqwest::Client::new()
            .get(format!("{}{path}", self.base))
            .header("x-svc-key-id", &key.0)
            .header("x-svc-key-secret", &key.1)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    }
}

/// The query parameters of the page the browser shows, once it is on the app's site.
async fn landed(c: &Client, w: &World) -> Vec<(String, String)> {
    wait_heading(c, "Shop page /oauth/callback").await;
    let url = c.current_url().await.unwrap();
    assert_eq!(
        format!("{}{}", url.origin().ascii_serialization(), url.path()),
        w.redirect
    );
    url.query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

async fn type_into(c: &Client, css: &str, text: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .send_keys(text)
        .await
        .unwrap();
}

async fn run(c: &Client, w: &World, shots: &mut Shots) {
    // Not signed in: the sign-in page, then back to the consent page.
    c.goto(&w.authorize_url("state-approve")).await.unwrap();
    wait_heading(c, "Sign in").await;
    assert!(c.current_url().await.unwrap().path().ends_with("/signin"));
    shots.take(c, "signin").await;
    type_into(c, "#email", &w.email).await;
    type_into(c, "#password", PASSWORD).await;
    click(c, "button[type='submit']").await;

    wait_heading(c, "Connect Ledger Sync").await;
    let page = eval(c, "return document.querySelector('main').innerText;").await;
    let page = page.as_str().unwrap();
    for words in [
        "Ledger Sync asks to connect to your account",
        "See your company's name and when it joined",
        "See your payment links and their payments",
        "Create payment links and pause, resume or archive them",
        "Acme Goods",
        "Bob's Bikes",
    ] {
        assert!(
            page.contains(words),
            "{words:?} not on the consent page:\n{page}"
        );
    }
    let styled = eval(
        c,
        "return getComputedStyle(document.querySelector('.card')).borderRadius;",
    )
    .await;
    assert_ne!(styled, json!("0px"), "the page's style sheet applied");
    click(c, &format!("input[name='company_id'][value='{}']", w.bikes)).await;
    shots.take(c, "consent").await;
    click(c, "button[name='decision'][value='approve']").await;

    // Allowed: at the redirect URI with a code for Bob's Bikes.
    let query = landed(c, w).await;
    assert_eq!(param(&query, "state"), Some("state-approve"));
    let code = param(&query, "code").expect("a code").to_owned();
    let token = w.exchange(&code).await;
    let res = reqwest::Client::new()
        .post(format!("{}/api/partner/v1/pay/payment-links", w.base))
        .bearer_auth(&token)
        .json(&json!({"title": "Synced order", "amount": "10.00", "currency": "USDC"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let uid = res.json::<Value>().await.unwrap()["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = format!("/api/partner/v1/pay/payment-links/{uid}");
    assert_eq!(w.status_with_key(&w.bikes_key, &path).await, 200);
    assert_eq!(w.status_with_key(&w.acme_key, &path).await, 404);

    // Signed in now: straight to the consent page; denied.
    c.goto(&w.authorize_url("state-deny")).await.unwrap();
    wait_heading(c, "Connect Ledger Sync").await;
    click(c, "button[name='decision'][value='deny']").await;
    let query = landed(c, w).await;
    assert_eq!(param(&query, "error"), Some("access_denied"));
    assert_eq!(param(&query, "state"), Some("state-deny"));
    assert_eq!(param(&query, "code"), None);
}

#[actix_rt::test]
async fn a_merchant_signs_in_picks_a_company_and_approves_or_denies_in_chromium() {
    let Some((chromium, driver_bin)) = browser("browser OAuth consent test") else {
        return;
    };
    let db = TestDb::sqlite();
    let (base, app) = service(&db);
    let pay = app.pay().clone();
    actix_rt::spawn(app.into_server());
    let site = start_site();
    let w = world(base, pay, format!("{site}/oauth/callback")).await;
    let driver = start_driver(&driver_bin).await;
    let c = open_browser(&driver, &chromium).await;
    let mut shots = Shots::new("oauth");
    ending_session(&c, driver, run(&c, &w, &mut shots)).await;
    assert_eq!(shots.taken, ["signin", "consent"]);
}
