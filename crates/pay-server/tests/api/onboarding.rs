//! Partner onboarding over HTTP: the draft call (`POST /api/partner/v1/onboarding/company`)
//! with its onboarding secret, every field rule, idempotent drafts per partner; the claim page
//! (sign up, or a signed-in user), the company with the merchant as owner, the OAuth code
//! redeemed at `/oauth/token`; expiry, a second claim refused, concurrent claims making one
//! company.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{assert_error, read, Session, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

const DRAFTS: &str = "/api/partner/v1/onboarding/company";
const SCOPES: &str = "company:read pay:payment-links:read";
const PASSWORD: &str = "correct horse battery staple";

/// A partner (`admin create-partner`): its onboarding secret.
pub async fn partner(app: &TestApp, name: &str) -> String {
    let pay = app.pay.clone();
    let name = name.to_owned();
    let (_, secret) = tokio::task::spawn_blocking(move || pay.onboarding().create_partner(&name))
        .await
        .unwrap()
        .unwrap();
    secret.expose().to_owned()
}

async fn draft(app: &TestApp, secret: &str, body: &Value) -> (reqwest::StatusCode, Value) {
    read(
        app.anon(Method::POST, DRAFTS)
            .bearer_auth(secret)
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn oauth_of(client: &App) -> Value {
    json!({
        "clientId": client.client_id,
        "redirectUri": REDIRECT,
        "scope": SCOPES,
        "state": "partner-state 1",
        "codeChallenge": CHALLENGE,
        "codeChallengeMethod": "S256",
    })
}

fn body(key: &str, oauth: Option<Value>) -> Value {
    let mut b = json!({
        "idempotencyKey": key,
        "company": {"name": "Bella Bakery", "website": "https://bella.example"},
    });
    if let Some(o) = oauth {
        b["oauth"] = o;
    }
    b
}

/// The claim page's path of a draft answer (the URL is on `PAY_BASE_URL`).
fn claim_path(answer: &Value) -> String {
    let url = answer["claimUrl"].as_str().unwrap();
    let rest = url.strip_prefix("http://127.0.0.1").unwrap();
    assert!(rest.starts_with("/onboarding/claim/obc_"), "{url}");
    rest.to_owned()
}

fn location(res: &reqwest::Response) -> String {
    res.headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn query_param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The value of a form's hidden input in a page.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{name} in {html}"))
        + marker.len();
    html[start..start + html[start..].find('"').unwrap()].to_owned()
}

async fn page(app: &TestApp, path: &str, cookie: Option<&str>) -> (u16, String) {
    let mut req = app.anon(Method::GET, path);
    if let Some(c) = cookie {
        req = req.header("cookie", format!("pay_session={c}"));
    }
    let res = req.send().await.unwrap();
    (res.status().as_u16(), res.text().await.unwrap())
}

async fn sign_up(app: &TestApp, path: &str, email: &str, password: &str) -> reqwest::Response {
    app.anon(Method::POST, &format!("{path}/signup"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("email", email), ("password", password)]))
        .send()
        .await
        .unwrap()
}

/// The signed-in claim: the claim page's CSRF token, then its form.
async fn claim_signed_in(app: &TestApp, path: &str, s: &Session) -> reqwest::Response {
    app.anon(Method::POST, path)
        .header("cookie", format!("pay_session={}", s.cookie))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("csrf_token", &s.csrf)]))
        .send()
        .await
        .unwrap()
}

/// The companies a session's user belongs to: (name, role).
async fn companies(app: &TestApp, s: &Session) -> Vec<(String, String)> {
    let (st, list) = read(
        app.in_session(s, Method::GET, "/api/partner/v1/companies")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(st, 200, "{list}");
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["role"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// No secret, another scheme, a wrong or malformed secret, an API key or an OAuth token: 401
/// with the spec's two messages; the body is not read before the credential.
async fn the_onboarding_secret_is_required(app: TestApp) {
    let secret = partner(&app, "Agency").await;
    let b = body("k-1", None);
    let none = read(
        app.anon(Method::POST, DRAFTS)
            .json(&b)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&none, 401, "unauthorized", None);
    assert_eq!(none.1["error"], "Unauthorized");
    let key = read(app.req(Method::POST, DRAFTS).json(&b).send().await.unwrap()).await;
    assert_error(&key, 401, "unauthorized", None);
    let wrong_secret = format!("obs_{}", "x".repeat(43));
    let token = access_token(&app, "company:read").await;
    for auth in [
        format!("Bearer {wrong_secret}"),
        format!("Bearer {}", &secret[..secret.len() - 1]),
        format!("Basic {secret}"),
        format!("DPoP {secret}"),
        format!("Bearer {token}"),
        "Bearer".to_owned(),
    ] {
        let got = read(
            app.anon(Method::POST, DRAFTS)
                .header("authorization", &auth)
                .json(&b)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_error(&got, 401, "invalid_credentials", None);
        assert_eq!(got.1["error"], "Invalid pay API credentials", "{auth}");
    }
    // A malformed body without a valid credential is still 401.
    let got = read(
        app.anon(Method::POST, DRAFTS)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 401, "unauthorized", None);
    // The right secret: created.
    assert_eq!(draft(&app, &secret, &b).await.0, 201);
}

/// 201 the first time; the same key and body: the same draft and claim URL (200); another body:
/// 409; another partner's same key is a draft of its own.
async fn drafts_are_idempotent_per_partner(app: TestApp) {
    let a = partner(&app, "Agency A").await;
    let b = partner(&app, "Agency B").await;
    let client = register(&app, SCOPES, false, false).await;
    let first = body("lead-4711", Some(oauth_of(&client)));
    let (st, created) = draft(&app, &a, &first).await;
    assert_eq!(st, 201, "{created}");
    let d = &created["draft"];
    assert_eq!(d["status"], "open");
    assert_eq!(
        d["company"],
        json!({"name": "Bella Bakery", "website": "https://bella.example"})
    );
    let at = |v: &Value| {
        time::OffsetDateTime::parse(
            v.as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
    };
    assert_eq!(
        at(&d["expiresAt"]) - at(&d["createdAt"]),
        time::Duration::days(7)
    );
    let path = claim_path(&created);
    let (st, again) = draft(&app, &a, &first).await;
    assert_eq!(st, 200, "{again}");
    assert_eq!(again, created, "the same draft and claim URL");
    for other in [
        body("lead-4711", None),
        json!({"idempotencyKey": "lead-4711", "company": {"name": "Bella Bakery"}, "oauth": oauth_of(&client)}),
        {
            let mut o = oauth_of(&client);
            o["state"] = json!("another state");
            body("lead-4711", Some(o))
        },
    ] {
        let got = draft(&app, &a, &other).await;
        assert_error(&got, 409, "idempotency_key_reused", None);
    }
    let (st, theirs) = draft(&app, &b, &first).await;
    assert_eq!(st, 201, "{theirs}");
    assert_ne!(theirs["draft"]["id"], created["draft"]["id"]);
    assert_ne!(claim_path(&theirs), path);
    // A's draft is unchanged by B's and by the refused calls.
    assert_eq!(draft(&app, &a, &first).await.1, created);
    // Without `website`: a draft of its own.
    let (st, plain) = draft(
        &app,
        &a,
        &json!({"idempotencyKey": "lead-2", "company": {"name": "Cafe"}}),
    )
    .await;
    assert_eq!(st, 201, "{plain}");
    assert_eq!(
        plain["draft"]["company"],
        json!({"name": "Cafe", "website": null})
    );
}

/// Every field, refused up front with 400 naming it; nothing is created by a refused call.
async fn every_field_is_checked(app: TestApp) {
    let secret = partner(&app, "Agency").await;
    let client = register(&app, SCOPES, false, false).await;
    let other_app = register(&app, "company:read", true, false).await;
    // `None` leaves the field out.
    let with = |path: &[&str], value: Option<Value>| {
        let mut b = body("k", Some(oauth_of(&client)));
        let mut at = &mut b;
        for p in &path[..path.len() - 1] {
            at = &mut at[*p];
        }
        let last = path[path.len() - 1];
        match value {
            None => {
                at.as_object_mut().unwrap().remove(last);
            }
            Some(v) => at[last] = v,
        }
        b
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            with(&["idempotencyKey"], None),
            "validation_failed",
            "idempotencyKey",
        ),
        (
            with(&["idempotencyKey"], Some(json!(""))),
            "validation_failed",
            "idempotencyKey",
        ),
        (
            with(&["idempotencyKey"], Some(json!("  "))),
            "validation_failed",
            "idempotencyKey",
        ),
        (
            with(&["idempotencyKey"], Some(json!("schlüssel"))),
            "validation_failed",
            "idempotencyKey",
        ),
        (
            with(&["idempotencyKey"], Some(json!("k".repeat(256)))),
            "validation_failed",
            "idempotencyKey",
        ),
        (
            with(&["idempotencyKey"], Some(json!(7))),
            "validation_failed",
            "idempotencyKey",
        ),
        (with(&["company"], None), "validation_failed", "company"),
        (
            with(&["company", "name"], Some(json!(" "))),
            "validation_failed",
            "company.name",
        ),
        (
            with(&["company", "name"], Some(json!("x".repeat(201)))),
            "validation_failed",
            "company.name",
        ),
        (
            with(&["company", "name"], Some(json!("a\u{0}b"))),
            "validation_failed",
            "company.name",
        ),
        (
            with(&["company", "website"], Some(json!("bella.example"))),
            "validation_failed",
            "company.website",
        ),
        (
            with(&["company", "website"], Some(json!("ftp://bella.example"))),
            "validation_failed",
            "company.website",
        ),
        (
            with(
                &["company", "website"],
                Some(json!("https://u:p@bella.example")),
            ),
            "validation_failed",
            "company.website",
        ),
        (
            with(&["company", "website"], Some(json!(null))),
            "validation_failed",
            "company.website",
        ),
        (
            with(&["company", "logo"], Some(json!("x"))),
            "unknown_field",
            "company.logo",
        ),
        (with(&["extra"], Some(json!(1))), "unknown_field", "extra"),
        (
            with(&["oauth", "clientId"], Some(json!("oc_nope"))),
            "validation_failed",
            "oauth.clientId",
        ),
        (
            with(
                &["oauth", "clientId"],
                Some(json!(format!("oc_{}", "a".repeat(32)))),
            ),
            "validation_failed",
            "oauth.clientId",
        ),
        (
            with(&["oauth", "clientId"], None),
            "validation_failed",
            "oauth.clientId",
        ),
        (
            with(
                &["oauth", "redirectUri"],
                Some(json!("https://shop.example/oauth/cb/")),
            ),
            "validation_failed",
            "oauth.redirectUri",
        ),
        (
            with(
                &["oauth", "redirectUri"],
                Some(json!("https://evil.example/oauth/cb")),
            ),
            "validation_failed",
            "oauth.redirectUri",
        ),
        (
            with(&["oauth", "scope"], Some(json!(""))),
            "validation_failed",
            "oauth.scope",
        ),
        (
            with(
                &["oauth", "scope"],
                Some(json!("company:read  pay:payment-links:read")),
            ),
            "validation_failed",
            "oauth.scope",
        ),
        (
            with(
                &["oauth", "scope"],
                Some(json!("company:read company:read")),
            ),
            "validation_failed",
            "oauth.scope",
        ),
        (
            with(&["oauth", "scope"], Some(json!("pay:everything"))),
            "validation_failed",
            "oauth.scope",
        ),
        (
            with(
                &["oauth", "scope"],
                Some(json!("company:read pay:settings:write")),
            ),
            "validation_failed",
            "oauth.scope",
        ),
        (
            with(&["oauth", "state"], Some(json!(""))),
            "validation_failed",
            "oauth.state",
        ),
        (
            with(&["oauth", "state"], Some(json!("s".repeat(1025)))),
            "validation_failed",
            "oauth.state",
        ),
        (
            with(&["oauth", "state"], Some(json!("é"))),
            "validation_failed",
            "oauth.state",
        ),
        (
            with(&["oauth", "codeChallenge"], Some(json!("short"))),
            "validation_failed",
            "oauth.codeChallenge",
        ),
        (
            with(
                &["oauth", "codeChallenge"],
                Some(json!(format!("{}+", &CHALLENGE[..42]))),
            ),
            "validation_failed",
            "oauth.codeChallenge",
        ),
        (
            with(&["oauth", "codeChallengeMethod"], Some(json!("plain"))),
            "validation_failed",
            "oauth.codeChallengeMethod",
        ),
        (
            with(&["oauth", "codeChallengeMethod"], Some(json!("s256"))),
            "validation_failed",
            "oauth.codeChallengeMethod",
        ),
        (
            with(&["oauth", "codeChallengeMethod"], None),
            "validation_failed",
            "oauth.codeChallengeMethod",
        ),
        (
            with(&["oauth", "nonce"], Some(json!("n"))),
            "unknown_field",
            "oauth.nonce",
        ),
        (
            with(&["oauth"], Some(json!(null))),
            "validation_failed",
            "oauth",
        ),
        (
            with(&["oauth"], Some(json!("oc_x"))),
            "validation_failed",
            "oauth",
        ),
    ];
    for (b, code, field) in &cases {
        let got = draft(&app, &secret, b).await;
        assert_error(&got, 400, code, Some(field));
    }
    // Another application's redirect URI and scopes are not this one's.
    let mut o = oauth_of(&client);
    o["clientId"] = json!(other_app.client_id);
    o["scope"] = json!(SCOPES);
    let got = draft(&app, &secret, &body("k", Some(o))).await;
    assert_error(&got, 400, "validation_failed", Some("oauth.scope"));
    let got = read(
        app.anon(Method::POST, DRAFTS)
            .bearer_auth(&secret)
            .header("content-type", "application/json")
            .body("[]")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(&got, 400, "invalid_json", None);
    // None of them made a draft: the key is still free for any body.
    let (st, made) = draft(&app, &secret, &body("k", None)).await;
    assert_eq!(st, 201, "{made}");
}

/// A new merchant signs up on the claim page: the company is theirs, the application is granted
/// and the browser goes to its redirect URI with a code the partner redeems with the verifier.
/// The draft cannot be claimed again.
async fn sign_up_claims_and_connects(app: TestApp) {
    let secret = partner(&app, "Agency <One>").await;
    let client = register(&app, SCOPES, false, false).await;
    let (st, created) = draft(&app, &secret, &body("lead-1", Some(oauth_of(&client)))).await;
    assert_eq!(st, 201);
    let path = claim_path(&created);
    let (st, html) = page(&app, &path, None).await;
    assert_eq!(st, 200, "{html}");
    for words in [
        "Set up Bella Bakery",
        "Agency &lt;One&gt;",
        "Shop &lt;Plugin&gt;",
        "See your company",
        "Create your account",
        "/signin?return_to=%2Fonboarding%2Fclaim%2Fobc_",
    ] {
        assert!(html.contains(words), "{words} not in {html}");
    }
    // A short password, a taken e-mail: the form again, nothing created.
    let res = sign_up(&app, &path, "new@bella.example", "short").await;
    assert_eq!(res.status(), 400);
    assert!(res.text().await.unwrap().contains("at least 10 characters"));
    let res = sign_up(&app, &path, &app.t.email, PASSWORD).await;
    assert_eq!(res.status(), 400);
    assert!(res.text().await.unwrap().contains("sign in instead"));
    // Another site's form is refused.
    let res = app
        .anon(Method::POST, &format!("{path}/signup"))
        .header("origin", "https://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("email", "new@bella.example"),
            ("password", PASSWORD),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);

    let res = sign_up(&app, &path, "New@Bella.example", PASSWORD).await;
    assert_eq!(res.status(), 303, "{}", res.text().await.unwrap());
    let to = location(&res);
    assert!(to.starts_with(&format!("{REDIRECT}?")), "{to}");
    assert_eq!(
        query_param(&to, "state").as_deref(),
        Some("partner-state 1")
    );
    let code = query_param(&to, "code").expect("a code");
    assert!(res
        .headers()
        .get("set-cookie")
        .is_some_and(|c| c.to_str().unwrap().starts_with("pay_session=")));
    let (st, tokens, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(st, 200, "{tokens}");
    assert_eq!(tokens["scope"], SCOPES);
    let at = tokens["access_token"].as_str().unwrap();
    let (st, company) = read(
        app.anon(Method::GET, "/api/partner/v1/pay/company")
            .bearer_auth(at)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(st, 200, "{company}");
    assert_eq!(company["name"], "Bella Bakery");
    // The code is single-use.
    assert_eq!(exchange(&app, &client, &code, None).await.0, 400);
    // The merchant owns the company and signs in with the new account.
    let s = app.login("new@bella.example", PASSWORD).await;
    assert_eq!(
        companies(&app, &s).await,
        vec![("Bella Bakery".to_owned(), "owner".to_owned())]
    );
    // Claimed: the page says so, a second claim is refused, the draft call shows it.
    let (st, html) = page(&app, &path, None).await;
    assert_eq!(st, 409);
    assert!(html.contains("already"), "{html}");
    let res = sign_up(&app, &path, "second@bella.example", PASSWORD).await;
    assert_eq!(res.status(), 409);
    let (st, html) = page(&app, &path, Some(&s.cookie)).await;
    assert_eq!(st, 409, "{html}");
    assert_eq!(claim_signed_in(&app, &path, &s).await.status(), 409);
    assert_eq!(companies(&app, &s).await.len(), 1);
    let login = app
        .anon(Method::POST, "/auth/login")
        .json(&json!({"email": "second@bella.example", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 401, "the refused sign-up made no user");
    let (st, again) = draft(&app, &secret, &body("lead-1", Some(oauth_of(&client)))).await;
    assert_eq!(
        (st.as_u16(), again["draft"]["status"].as_str()),
        (200, Some("claimed"))
    );
    assert_eq!(again["claimUrl"], created["claimUrl"]);
}

/// A signed-in merchant (the JSON sign-in) claims with one button and its CSRF token; without
/// `oauth` the page says the company is ready. Without the token: 403; without a session: 401.
async fn a_signed_in_user_claims_a_draft(app: TestApp) {
    let secret = partner(&app, "Agency").await;
    let (_, created) = draft(&app, &secret, &body("lead-2", None)).await;
    let path = claim_path(&created);
    let s = app.login_owner(&app.t).await;
    let (st, html) = page(&app, &path, Some(&s.cookie)).await;
    assert_eq!(st, 200, "{html}");
    assert_eq!(
        hidden(&html, "csrf_token"),
        s.csrf,
        "the session's own CSRF token"
    );
    assert!(!html.contains("Create your account"), "{html}");
    let no_csrf = app
        .anon(Method::POST, &path)
        .header("cookie", format!("pay_session={}", s.cookie))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("csrf_token", "wrong")]))
        .send()
        .await
        .unwrap();
    assert_eq!(no_csrf.status(), 403);
    let no_session = app
        .anon(Method::POST, &path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("csrf_token", &s.csrf)]))
        .send()
        .await
        .unwrap();
    assert_eq!(no_session.status(), 401);
    // Another site's form, even with the session and its CSRF token, is refused.
    let other_site = app
        .anon(Method::POST, &path)
        .header("origin", "https://evil.example")
        .header("cookie", format!("pay_session={}", s.cookie))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("csrf_token", &s.csrf)]))
        .send()
        .await
        .unwrap();
    assert_eq!(other_site.status(), 403);
    assert_eq!(companies(&app, &s).await.len(), 1, "nothing claimed yet");
    let res = claim_signed_in(&app, &path, &s).await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert!(html.contains("Bella Bakery is ready"), "{html}");
    let mut mine = companies(&app, &s).await;
    mine.sort();
    assert_eq!(
        mine,
        vec![
            ("Acme Goods".to_owned(), "owner".to_owned()),
            ("Bella Bakery".to_owned(), "owner".to_owned())
        ]
    );
    assert_eq!(claim_signed_in(&app, &path, &s).await.status(), 409);
    assert_eq!(companies(&app, &s).await.len(), 2);
}

/// Unclaimed after seven days: the page says the link expired, claims are refused, the draft
/// call answers it `expired`. Unknown and malformed links are 404 pages.
async fn drafts_expire(app: TestApp) {
    let secret = partner(&app, "Agency").await;
    let b = body("lead-3", None);
    let (_, created) = draft(&app, &secret, &b).await;
    let path = claim_path(&created);
    app.clock.advance_secs(7 * 24 * 3600 - 60);
    assert_eq!(
        page(&app, &path, None).await.0,
        200,
        "open until its expiry"
    );
    app.clock.advance_secs(60);
    let (st, html) = page(&app, &path, None).await;
    assert_eq!(st, 410);
    assert!(
        html.contains("Link expired") && html.contains("Ask Agency for a new link"),
        "{html}"
    );
    assert_eq!(
        sign_up(&app, &path, "late@bella.example", PASSWORD)
            .await
            .status(),
        410
    );
    let s = app.login_owner(&app.t).await;
    assert_eq!(claim_signed_in(&app, &path, &s).await.status(), 410);
    assert_eq!(companies(&app, &s).await.len(), 1);
    let (st, again) = draft(&app, &secret, &b).await;
    assert_eq!(
        (st.as_u16(), again["draft"]["status"].as_str()),
        (200, Some("expired"))
    );
    for bad in [
        format!("/onboarding/claim/obc_{}", "a".repeat(43)),
        "/onboarding/claim/obc_short".to_owned(),
        format!("/onboarding/claim/{}", "a".repeat(47)),
    ] {
        assert_eq!(page(&app, &bad, None).await.0, 404, "{bad}");
    }
}

/// Two claims at once, signed in as two users or signing up two accounts: exactly one company,
/// the other claim refused and its new user not created.
async fn concurrent_claims_make_one_company(app: TestApp) {
    let secret = partner(&app, "Agency").await;
    let other = app.new_tenant("Other Team").await;
    let s1 = app.login_owner(&app.t).await;
    let s2 = app.login_owner(&other).await;
    for round in 0..4 {
        let (_, created) = draft(&app, &secret, &body(&format!("race-{round}"), None)).await;
        let path = claim_path(&created);
        let (a, b) = tokio::join!(
            claim_signed_in(&app, &path, &s1),
            claim_signed_in(&app, &path, &s2)
        );
        let mut got = [a.status().as_u16(), b.status().as_u16()];
        got.sort();
        assert_eq!(got, [200, 409], "round {round}");
    }
    let bakeries = |list: Vec<(String, String)>| {
        list.into_iter()
            .filter(|(n, _)| n == "Bella Bakery")
            .count()
    };
    assert_eq!(
        bakeries(companies(&app, &s1).await) + bakeries(companies(&app, &s2).await),
        4,
        "one company per draft"
    );
    for round in 0..3 {
        let (_, created) = draft(&app, &secret, &body(&format!("signup-race-{round}"), None)).await;
        let path = claim_path(&created);
        let (e1, e2) = (
            format!("a{round}@race.example"),
            format!("b{round}@race.example"),
        );
        let (a, b) = tokio::join!(
            sign_up(&app, &path, &e1, PASSWORD),
            sign_up(&app, &path, &e2, PASSWORD)
        );
        let mut got = [(a.status().as_u16(), e1), (b.status().as_u16(), e2)];
        got.sort();
        assert_eq!([got[0].0, got[1].0], [200, 409], "round {round}");
        let winner = app.login(&got[0].1, PASSWORD).await;
        assert_eq!(bakeries(companies(&app, &winner).await), 1);
        let loser = app
            .anon(Method::POST, "/auth/login")
            .json(&json!({"email": got[1].1, "password": PASSWORD}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            loser.status(),
            401,
            "round {round}: the losing sign-up made no user"
        );
    }
}

on_both_backends!(
    the_onboarding_secret_is_required,
    drafts_are_idempotent_per_partner,
    every_field_is_checked,
    sign_up_claims_and_connects,
    a_signed_in_user_claims_a_draft,
    drafts_expire,
    concurrent_claims_make_one_company,
);
