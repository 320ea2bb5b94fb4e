//! Partner onboarding clicked in a real headless Chromium, at a phone's width (390 px): a
//! partner makes a draft with `oauth`; the merchant opens the claim URL, reads what is
//! prepared and which app it connects, signs up, and the browser arrives at the app's redirect
//! URI with `code` and `state`; the code is redeemed at `/oauth/token` with the PKCE verifier
//! and the token acts for the new company. The claimed link then says it was used. A second
//! draft, without `oauth`, is claimed by an existing merchant who signs in from the claim page
//! and comes back to it: the page says the company is ready, and the merchant owns both.
//! On each claim page axe-core (npm, `tests/axe`, injected into the page) finds no violation.
//! Screenshots, with `PAY_UPDATE_SCREENSHOTS=1`, go to `docs/images/onboarding-*.png`.
//!
//! Without `chromium` and `chromedriver`, or `node` and `npm`, the test prints a `SKIP:` line
//! and passes, except under `PAY_REQUIRE_ALL_TESTS=1`.

use fantoccini::{Client, Locator};
use pay_domain::app::Pay;
use pay_domain::kernel::secret::Secret;
use pay_store::testing::TestDb;
use serde_json::{json, Value};

#[path = "support/browser.rs"]
mod chromium;

use chromium::*;

#[path = "support/dashboard.rs"]
mod dashboard;

use dashboard::{browser_and_axe, no_violations};

const PASSWORD: &str = "correct horse battery staple";
const SCOPES: &str = "company:read pay:payment-links:read pay:payment-links:write";
/// RFC 7636 appendix B.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const WIDTH: u32 = 390;

struct World {
    base: String,
    secret: String,
    client_id: String,
    client_secret: String,
    redirect: String,
    /// A merchant who already has a company.
    email: String,
}

async fn world(base: String, pay: Pay, redirect: String) -> World {
    let r = redirect.clone();
    tokio::task::spawn_blocking(move || {
        let (_, secret) = pay.onboarding().create_partner("Northwind Agency").unwrap();
        let (app, client_secret) = pay
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
        let email = format!("owner-{}@acme.example", uuid::Uuid::new_v4().simple());
        pay.tenancy()
            .bootstrap("Acme Goods", &email, &Secret::new(PASSWORD))
            .unwrap();
        World {
            base,
            secret: secret.expose().to_owned(),
            client_id: app.client_id.to_string(),
            client_secret: client_secret.unwrap().expose().to_owned(),
            redirect: r,
            email,
        }
    })
    .await
    .unwrap()
}

impl World {
    /// The partner's draft call: the claim URL.
    async fn draft(&self, key: &str, name: &str, oauth: bool) -> String {
        let mut body = json!({
            "idempotencyKey": key,
            "company": {"name": name, "website": "https://bella.example"},
        });
        if oauth {
            body["oauth"] = json!({
                "clientId": self.client_id,
                "redirectUri": self.redirect,
                "scope": SCOPES,
                "state": "lead-4711",
                "codeChallenge": CHALLENGE,
                "codeChallengeMethod": "S256",
            });
        }
        let res = reqwest::Client::new()
            .post(format!("{}/api/partner/v1/onboarding/company", self.base))
            .bearer_auth(&self.secret)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 201);
        let v: Value = res.json().await.unwrap();
        v["claimUrl"].as_str().unwrap().to_owned()
    }

    /// The partner redeems `code` with its verifier: the access token.
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
        assert_eq!(body["scope"], SCOPES, "{body}");
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// The companies of a merchant (JSON sign-in): their names.
    async fn companies(&self, email: &str) -> Vec<String> {
        let http = reqwest::Client::new();
        let res = http
            .post(format!("{}/auth/login", self.base))
            .json(&json!({"email": email, "password": PASSWORD}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        let cookie = res
            .headers()
            .get("set-cookie")
            .unwrap()
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let list: Value = http
            .get(format!("{}/api/partner/v1/companies", self.base))
            .header("cookie", cookie)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let mut names: Vec<String> = list["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["role"], "owner", "{c}");
                c["name"].as_str().unwrap().to_owned()
            })
            .collect();
        names.sort();
        names
    }
}

async fn type_into(c: &Client, css: &str, text: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .send_keys(text)
        .await
        .unwrap();
}

async fn page_text(c: &Client) -> String {
    eval(c, "return document.querySelector('main').innerText;")
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

/// Nothing wider than the phone's screen.
async fn fits(c: &Client) {
    let widths = eval(
        c,
        "return [document.documentElement.scrollWidth, window.innerWidth];",
    )
    .await;
    let (scroll, inner) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    assert!(
        scroll <= inner,
        "the page is {scroll} px wide in a {inner} px window"
    );
}

async fn run(c: &Client, w: &World, axe: &str, shots: &mut Shots) {
    c.set_window_size(WIDTH, 900).await.unwrap();

    // With `oauth`: a new merchant signs up; the browser ends at the app with a code.
    let claim = w.draft("lead-4711", "Bella Bakery", true).await;
    c.goto(&claim).await.unwrap();
    wait_heading(c, "Set up Bella Bakery").await;
    let text = page_text(c).await;
    for words in [
        "Northwind Agency prepared an account for Bella Bakery",
        "You will be its owner",
        "It also connects Ledger Sync",
        "See your payment links and their payments",
        "Create your account",
        "Already have an account? Sign in",
    ] {
        assert!(
            text.contains(words),
            "{words:?} not on the claim page:\n{text}"
        );
    }
    fits(c).await;
    no_violations(c, axe, "the claim page at 390 px").await;
    shots.take(c, "draft-claim").await;
    let email = format!("bella-{}@bella.example", uuid::Uuid::new_v4().simple());
    type_into(c, "#email", &email).await;
    type_into(c, "#password", PASSWORD).await;
    click(c, "button[type='submit']").await;
    wait_heading(c, "Shop page /oauth/callback").await;
    let url = c.current_url().await.unwrap();
    assert_eq!(
        format!("{}{}", url.origin().ascii_serialization(), url.path()),
        w.redirect
    );
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(param("state").as_deref(), Some("lead-4711"));
    let token = w.exchange(&param("code").expect("a code")).await;
    let company: Value = reqwest::Client::new()
        .get(format!("{}/api/partner/v1/pay/company", w.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(company["name"], "Bella Bakery", "{company}");
    assert_eq!(w.companies(&email).await, ["Bella Bakery"]);
    // Used: the link says so.
    c.goto(&claim).await.unwrap();
    wait_heading(c, "Link already used").await;

    // Without `oauth`: an existing merchant signs in from the claim page and claims it.
    c.delete_all_cookies().await.unwrap();
    let claim = w.draft("lead-4712", "Cafe Central", false).await;
    c.goto(&claim).await.unwrap();
    wait_heading(c, "Set up Cafe Central").await;
    c.find(Locator::LinkText("Sign in"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_heading(c, "Sign in").await;
    type_into(c, "#email", &w.email).await;
    type_into(c, "#password", PASSWORD).await;
    click(c, "button[type='submit']").await;
    wait_heading(c, "Set up Cafe Central").await;
    let text = page_text(c).await;
    assert!(!text.contains("Create your account"), "{text}");
    assert!(!text.contains("connects"), "{text}");
    fits(c).await;
    no_violations(c, axe, "the signed-in claim page at 390 px").await;
    shots.take(c, "signed-in").await;
    click(c, "button[type='submit']").await;
    wait_heading(c, "Cafe Central is ready").await;
    fits(c).await;
    no_violations(c, axe, "the claimed page at 390 px").await;
    shots.take(c, "ready").await;
    assert_eq!(w.companies(&w.email).await, ["Acme Goods", "Cafe Central"]);
}

#[actix_rt::test]
async fn a_merchant_claims_drafts_with_and_without_oauth_in_chromium() {
    let Some((chromium, driver_bin, axe)) = browser_and_axe("browser onboarding test") else {
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
    let mut shots = Shots::new("onboarding");
    ending_session(&c, driver, run(&c, &w, &axe, &mut shots)).await;
    assert_eq!(shots.taken, ["draft-claim", "signed-in", "ready"]);
}
