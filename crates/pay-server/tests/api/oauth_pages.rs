//! The browser side of OAuth over HTTP: sign-in page, consent page, the decision's 303s and
//! the error page, then the whole flow from consent to revocation with a DPoP key.

use reqwest::Method;
use serde_json::json;

use crate::helpers::{read, Tenant, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

const SCOPES: &str = "pay:payment-links:read pay:payment-links:write";

fn authorize_query(client: &App, extra: &[(&str, &str)]) -> String {
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", client.client_id.as_str()),
        ("redirect_uri", REDIRECT),
        ("scope", SCOPES),
        ("state", "xyz 1"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    for (k, v) in extra {
        pairs.retain(|(n, _)| n != k);
        if !v.is_empty() {
            pairs.push((k, v));
        }
    }
    format!("/oauth/authorize?{}", form(&pairs))
}

fn location(res: &reqwest::Response) -> String {
    res.headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

/// The value of `name="<name>" value="..."` in a page (our escaper writes `&amp;`...).
fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html
        .find(&marker)
        .unwrap_or_else(|| panic!("{name} in {html}"))
        + marker.len();
    let raw = &html[start..start + html[start..].find('"').unwrap()];
    raw.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Signs in through the sign-in page on the way to `authorize`; the cookies.
async fn sign_in_via_page(app: &TestApp, t: &Tenant, authorize: &str) -> String {
    let res = app.anon(Method::GET, authorize).send().await.unwrap();
    assert_eq!(res.status(), 303);
    let to_signin = location(&res);
    assert!(to_signin.starts_with("/signin?return_to="), "{to_signin}");
    let page = app.anon(Method::GET, &to_signin).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page
        .headers()
        .get("content-security-policy")
        .unwrap()
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
    let html = page.text().await.unwrap();
    let return_to = field(&html, "return_to");
    assert_eq!(return_to, authorize);
    let res = app
        .anon(Method::POST, "/signin")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("email", &t.email),
            ("password", &t.password),
            ("return_to", &return_to),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), authorize);
    res.headers()
        .get_all("set-cookie")
        .iter()
        .map(|c| c.to_str().unwrap().split(';').next().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Consent page then the decision; the 303's Location.
async fn decide(app: &TestApp, cookies: &str, authorize: &str, decision: &str) -> String {
    let res = app
        .anon(Method::GET, authorize)
        .header("cookie", cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Browsers hold the post's redirect to `form-action` too: the redirect URI's origin is in it.
    let csp = res.headers()["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("form-action 'self' https://shop.example;"),
        "{csp}"
    );
    let html = res.text().await.unwrap();
    assert!(html.contains("Shop &lt;Plugin&gt;"), "{html}");
    assert!(html.contains("Create payment links"), "{html}");
    assert!(html.contains("Acme Goods"), "{html}");
    let mut pairs: Vec<(String, String)> = [
        "response_type",
        "client_id",
        "redirect_uri",
        "scope",
        "state",
        "code_challenge",
        "code_challenge_method",
        "csrf_token",
        "company_id",
    ]
    .iter()
    .map(|n| (n.to_string(), field(&html, n)))
    .collect();
    if html.contains("name=\"dpop_jkt\"") {
        pairs.push(("dpop_jkt".into(), field(&html, "dpop_jkt")));
    }
    pairs.push(("decision".into(), decision.into()));
    let res = app
        .anon(Method::POST, "/oauth/authorize")
        .header("cookie", cookies)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(&pairs)
                .finish(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    location(&res)
}

fn query_param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

async fn full_flow_through_the_consent_page(app: TestApp) {
    let client = register(&app, SCOPES, true, true).await;
    let key = DpopKey::generate();
    // The code is bound to the key's thumbprint (RFC 9449 section 10).
    let authorize = authorize_query(&client, &[("dpop_jkt", &key.jkt)]);
    let cookies = sign_in_via_page(&app, &app.t, &authorize).await;
    let back = decide(&app, &cookies, &authorize, "approve").await;
    assert!(back.starts_with(REDIRECT), "{back}");
    assert_eq!(query_param(&back, "state").as_deref(), Some("xyz 1"));
    let code = query_param(&back, "code").unwrap();
    // Another key cannot redeem it.
    let (status, e, _) = exchange(&app, &client, &code, Some(&DpopKey::generate())).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_dpop_proof"))
    );
    let (status, t, _) = exchange(&app, &client, &code, Some(&key)).await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["token_type"], "DPoP");
    let access = t["access_token"].as_str().unwrap().to_owned();
    let links = "/api/partner/v1/pay/payment-links";
    let (status, link) = read(
        with_dpop(&app, &key, Method::POST, links, &access)
            .json(&json!({"title": "T", "amount": "5.00", "currency": "USDC"}))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{link}");
    let path = format!("{links}/{}", link["uid"].as_str().unwrap());
    let res = with_dpop(&app, &key, Method::GET, &path, &access)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let (status, r, _) = token(
        &app,
        &client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", t["refresh_token"].as_str().unwrap()),
        ],
        Some(&key),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let access2 = r["access_token"].as_str().unwrap().to_owned();
    // Refresh reuse: the spent token revokes the family, the new access token included.
    let (status, e, _) = token(
        &app,
        &client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", t["refresh_token"].as_str().unwrap()),
        ],
        Some(&key),
    )
    .await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let res = with_dpop(&app, &key, Method::GET, &path, &access2)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    // A public client revokes with its client_id.
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("token", r["refresh_token"].as_str().unwrap()),
            ("client_id", &client.client_id),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

async fn authorization_refusals(app: TestApp) {
    let client = register(&app, SCOPES, true, false).await;
    let authorize = authorize_query(&client, &[]);
    let cookies = sign_in_via_page(&app, &app.t, &authorize).await;
    let get = |path: String| {
        let cookies = cookies.clone();
        let app = &app;
        async move {
            app.anon(Method::GET, &path)
                .header("cookie", cookies)
                .send()
                .await
                .unwrap()
        }
    };
    // Deny.
    let back = decide(&app, &cookies, &authorize, "deny").await;
    assert_eq!(
        query_param(&back, "error").as_deref(),
        Some("access_denied")
    );
    assert_eq!(query_param(&back, "state").as_deref(), Some("xyz 1"));
    assert!(query_param(&back, "code").is_none());
    // Unknown client, unregistered redirect URI: an error page, no redirect.
    for bad in [
        authorize_query(
            &App {
                client_id: format!("oc_{}", "x".repeat(32)),
                secret: None,
            },
            &[],
        ),
        authorize_query(&client, &[("redirect_uri", "https://evil.example/cb")]),
        authorize_query(&client, &[("redirect_uri", "")]),
    ] {
        let res = get(bad).await;
        assert_eq!(res.status(), 400);
        assert!(res.headers().get("location").is_none());
        assert!(res
            .headers()
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("text/html"));
    }
    // PKCE plain or missing, an unknown scope, a scope beyond the allowlist, another
    // response_type: redirected with their error and the state.
    for (extra, error) in [
        (vec![("code_challenge_method", "plain")], "invalid_request"),
        (vec![("code_challenge_method", "")], "invalid_request"),
        (vec![("code_challenge", "")], "invalid_request"),
        (vec![("scope", "pay:everything")], "invalid_scope"),
        (vec![("scope", "pay:settings:write")], "invalid_scope"),
        (
            vec![("response_type", "token")],
            "unsupported_response_type",
        ),
    ] {
        let res = get(authorize_query(&client, &extra)).await;
        assert_eq!(res.status(), 303, "{extra:?}");
        let to = location(&res);
        assert!(to.starts_with(REDIRECT), "{to}");
        assert_eq!(
            query_param(&to, "error").as_deref(),
            Some(error),
            "{extra:?}"
        );
        assert_eq!(query_param(&to, "state").as_deref(), Some("xyz 1"));
    }
    // The decision without the CSRF token, or from another site.
    let body = form(&[
        ("response_type", "code"),
        ("client_id", &client.client_id),
        ("redirect_uri", REDIRECT),
        ("scope", SCOPES),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("company_id", &app.t.company_id),
        ("decision", "approve"),
        ("csrf_token", "wrong"),
    ]);
    let post = |origin: Option<&str>| {
        let mut r = app
            .anon(Method::POST, "/oauth/authorize")
            .header("cookie", &cookies)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.clone());
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        r.send()
    };
    let res = post(None).await.unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.headers().get("location").is_none());
    let res = post(Some("https://evil.example")).await.unwrap();
    assert_eq!(res.status(), 403);
    // Another company's id: refused with a page.
    let other = app.new_tenant("Other Co").await;
    let res = app
        .anon(Method::GET, &authorize)
        .header("cookie", &cookies)
        .send()
        .await
        .unwrap();
    let html = res.text().await.unwrap();
    let csrf = field(&html, "csrf_token");
    let res = app
        .anon(Method::POST, "/oauth/authorize")
        .header("cookie", &cookies)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("response_type", "code"),
            ("client_id", &client.client_id),
            ("redirect_uri", REDIRECT),
            ("scope", SCOPES),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("company_id", &other.company_id),
            ("decision", "approve"),
            ("csrf_token", &csrf),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.headers().get("location").is_none());
    // A wrong password re-renders the form with 401.
    let res = app
        .anon(Method::POST, "/signin")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[
            ("email", &app.t.email),
            ("password", "nope nope nope"),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("Invalid e-mail or password"));
    // The right password from another site's form: the 403 page, no session cookie.
    let res = app
        .anon(Method::POST, "/signin")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(form(&[
            ("email", &app.t.email),
            ("password", &app.t.password),
        ]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    assert!(res.headers().get("set-cookie").is_none());
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("This form was sent from another site."));
}

/// One sign-in for every door: a session from the JSON `POST /auth/login` (no second cookie)
/// opens the consent page, whose form carries the session's own CSRF token, and approving
/// works; the page sign-in sets the session cookie alone.
async fn json_login_is_signed_in_for_the_consent_page(app: TestApp) {
    let client = register(&app, SCOPES, true, false).await;
    let authorize = authorize_query(&client, &[]);
    let s = app.login_owner(&app.t).await;
    let cookies = format!("pay_session={}", s.cookie);
    let res = app
        .anon(Method::GET, &authorize)
        .header("cookie", &cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    assert_eq!(field(&html, "csrf_token"), s.csrf);
    let back = decide(&app, &cookies, &authorize, "approve").await;
    assert!(back.starts_with(REDIRECT), "{back}");
    let code = query_param(&back, "code").unwrap();
    let (status, t, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    // Without the session cookie: to the sign-in page.
    let res = app.anon(Method::GET, &authorize).send().await.unwrap();
    assert_eq!(res.status(), 303);
    // The page's sign-in sets one cookie, the session; its CSRF token is the one the pages
    // embed and the JSON routes accept.
    let page_cookies = sign_in_via_page(&app, &app.t, &authorize).await;
    assert!(page_cookies.starts_with("pay_session="), "{page_cookies}");
    assert!(!page_cookies.contains(';'), "{page_cookies}");
    let html = app
        .anon(Method::GET, &authorize)
        .header("cookie", &page_cookies)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let csrf = field(&html, "csrf_token");
    let res = app
        .anon(Method::POST, "/auth/logout")
        .header("cookie", &page_cookies)
        .header("x-csrf-token", &csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 204);
    let res = app
        .anon(Method::GET, &authorize)
        .header("cookie", &page_cookies)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
}

on_both_backends!(
    full_flow_through_the_consent_page,
    authorization_refusals,
    json_login_is_signed_in_for_the_consent_page
);
