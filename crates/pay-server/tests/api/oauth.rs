//! OAuth over HTTP: the token endpoint (both grants, client authentication, DPoP binding),
//! revocation, the metadata, and OAuth tokens on the payment routes with their refusals.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{read, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

const LINKS: &str = "/api/partner/v1/pay/payment-links";
const RW: &str = "pay:payment-links:read pay:payment-links:write";

fn link_body() -> Value {
    json!({"title": "Order 7", "amount": "10.00", "currency": "USDC"})
}

async fn dpop_tokens(app: &TestApp, client: &App, key: &DpopKey) -> Value {
    let code = code_for(app, &app.t, client, RW).await;
    let (status, body, headers) = exchange(app, client, &code, Some(key)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers.get("cache-control").unwrap(), "no-store");
    body
}

async fn token_flow_with_dpop(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let t = dpop_tokens(&app, &client, &key).await;
    assert_eq!(t["token_type"], "DPoP");
    assert_eq!(t["expires_in"], 900);
    assert_eq!(t["scope"], RW);
    let access = t["access_token"].as_str().unwrap().to_owned();

    // Create and read a link with the bound token.
    let (status, link) = read(
        with_dpop(&app, &key, Method::POST, LINKS, &access)
            .json(&link_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 201, "{link}");
    let path = format!("{LINKS}/{}", link["uid"].as_str().unwrap());
    let (status, detail) = read(
        with_dpop(&app, &key, Method::GET, &path, &access)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["uid"], link["uid"]);

    // Refresh with a proof of the same key: both tokens rotate.
    let refresh = t["refresh_token"].as_str().unwrap();
    let (status, r, headers) = token(
        &app,
        &client,
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
        Some(&key),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(headers.get("cache-control").unwrap(), "no-store");
    assert_eq!(r["token_type"], "DPoP");
    assert_ne!(r["refresh_token"], t["refresh_token"]);
    let access2 = r["access_token"].as_str().unwrap().to_owned();
    let res = with_dpop(&app, &key, Method::GET, &path, &access2)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);

    // Another key cannot refresh the bound family.
    let other = DpopKey::generate();
    let refresh2 = r["refresh_token"].as_str().unwrap();
    let (status, e, _) = token(
        &app,
        &client,
        &[("grant_type", "refresh_token"), ("refresh_token", refresh2)],
        Some(&other),
    )
    .await;
    assert_eq!(status, 400, "{e}");

    // Revoke the refresh token: the family ends, its access token with it.
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .basic_auth(&client.client_id, client.secret.as_ref())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", refresh2)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let res = with_dpop(&app, &key, Method::GET, &path, &access2)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert!(challenges(res.headers()).contains("DPoP error=\"invalid_token\""));
    // RFC 7009: an unknown token is answered 200 too.
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .basic_auth(&client.client_id, client.secret.as_ref())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", "ort_unknown")]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

async fn dpop_refusals(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let t = dpop_tokens(&app, &client, &key).await;
    let access = t["access_token"].as_str().unwrap().to_owned();
    let expect_401 = |res: reqwest::Response, error: &'static str| async move {
        let headers = res.headers().clone();
        let (status, body) = read(res).await;
        assert_eq!(status, 401, "{error}: {body}");
        assert_eq!(body["error"], "Invalid pay API credentials");
        let c = challenges(&headers);
        assert!(c.contains(&format!("error=\"{error}\"")), "{c}");
        c
    };

    // A bound token sent as Bearer.
    let res = app
        .anon(Method::GET, LINKS)
        .bearer_auth(&access)
        .send()
        .await
        .unwrap();
    let c = expect_401(res, "invalid_token").await;
    assert!(c.contains("DPoP error=\"invalid_token\""), "{c}");

    // A bound token with the DPoP scheme but no proof.
    let res = app
        .anon(Method::GET, LINKS)
        .header("authorization", format!("DPoP {access}"))
        .send()
        .await
        .unwrap();
    let c = expect_401(res, "invalid_dpop_proof").await;
    assert!(c.starts_with("DPoP "), "{c}");

    // A replayed proof: the first use passes, the second fails.
    let proof = key.proof("GET", &htu(&app, LINKS), Some(&access));
    let send = |proof: String| {
        app.anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", proof)
            .send()
    };
    assert_eq!(send(proof.clone()).await.unwrap().status(), 200);
    expect_401(send(proof).await.unwrap(), "invalid_dpop_proof").await;

    // htu naming the host the request really went to (Host is never trusted): the server's
    // configured base URL has no port.
    let wrong = key.proof("GET", &app.url(LINKS), Some(&access));
    expect_401(send(wrong).await.unwrap(), "invalid_dpop_proof").await;
    // Another method, no ath, a stale iat, a proof by another key.
    let htu_links = htu(&app, LINKS);
    let claims = |htm: &str, ath: bool, iat: i64| {
        let mut c = json!({"jti": uuid::Uuid::new_v4().to_string(), "htm": htm, "htu": htu_links, "iat": iat});
        if ath {
            c["ath"] = json!(pay_dpop::access_token_hash(&access));
        }
        c
    };
    for bad in [
        key.sign(&claims("POST", true, now_unix())),
        key.sign(&claims("GET", false, now_unix())),
        key.sign(&claims("GET", true, now_unix() - 301)),
        key.sign(&claims("GET", true, now_unix() + 11)),
        DpopKey::generate().sign(&claims("GET", true, now_unix())),
    ] {
        expect_401(send(bad).await.unwrap(), "invalid_dpop_proof").await;
    }
    // Two DPoP headers.
    let res = app
        .anon(Method::GET, LINKS)
        .header("authorization", format!("DPoP {access}"))
        .header("DPoP", key.proof("GET", &htu_links, Some(&access)))
        .header("DPoP", key.proof("GET", &htu_links, Some(&access)))
        .send()
        .await
        .unwrap();
    expect_401(res, "invalid_dpop_proof").await;
}

async fn bearer_tokens_scopes_and_tenancy(app: TestApp) {
    // A public client without a proof gets Bearer tokens, read-only here.
    let client = register(&app, "pay:payment-links:read", true, false).await;
    let code = code_for(&app, &app.t, &client, "pay:payment-links:read").await;
    let (status, t, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["token_type"], "Bearer");
    let access = t["access_token"].as_str().unwrap();
    let res = app
        .anon(Method::GET, LINKS)
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Missing scope: the spec's 401.
    let got = read(
        app.anon(Method::POST, LINKS)
            .bearer_auth(access)
            .json(&link_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 401, "{}", got.1);
    assert_eq!(got.1["error"], "Invalid pay API credentials");
    // Another company's link is not found; so is a link of the same company made by a key
    // (a grant sees its own links only).
    let other = app.new_tenant("Other Co").await;
    let theirs = read(
        app.as_tenant(&other, Method::POST, LINKS)
            .json(&link_body())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(theirs.0, 201);
    let res = app
        .anon(
            Method::GET,
            &format!("{LINKS}/{}", theirs.1["uid"].as_str().unwrap()),
        )
        .bearer_auth(access)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    // An unknown Bearer token: Bearer challenge.
    let res = app
        .anon(Method::GET, LINKS)
        .bearer_auth("oat_nope")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    assert!(challenges(res.headers()).starts_with("Bearer error=\"invalid_token\""));
}

async fn token_endpoint_refusals(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    // PKCE: a wrong verifier.
    let code = code_for(&app, &app.t, &client, RW).await;
    let (status, e, headers) = token(
        &app,
        &client,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &"a".repeat(43)),
        ],
        None,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"], "invalid_grant");
    assert!(e["error_description"].as_str().is_some());
    assert_eq!(headers.get("cache-control").unwrap(), "no-store");

    // Code reuse: the second redemption fails and revokes what the first issued.
    let code = code_for(&app, &app.t, &client, RW).await;
    let (status, first, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(status, 200, "{first}");
    let (status, e, _) = exchange(&app, &client, &code, None).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let res = app
        .anon(Method::GET, LINKS)
        .bearer_auth(first["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
    let (status, e, _) = token(
        &app,
        &client,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first["refresh_token"].as_str().unwrap()),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // client_secret_post works; a wrong secret is invalid_client with a Basic challenge.
    let code = code_for(&app, &app.t, &client, RW).await;
    let secret = client.secret.clone().unwrap();
    let post = App {
        client_id: client.client_id.clone(),
        secret: None,
    };
    let (status, ok, _) = token(
        &app,
        &post,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
            ("client_secret", &secret),
        ],
        None,
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    let wrong = App {
        client_id: client.client_id.clone(),
        secret: Some("ocs_wrong".into()),
    };
    let (status, e, headers) = exchange(&app, &wrong, "oac_x", None).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (401, Some("invalid_client"))
    );
    assert!(headers
        .get("www-authenticate")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("Basic"));
    // A confidential client without its secret, an unknown grant type, a missing field.
    let (status, e, _) = exchange(&app, &post, "oac_x", None).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, e, _) = token(&app, &client, &[("grant_type", "password")], None).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let (status, e, _) = token(&app, &client, &[("grant_type", "refresh_token")], None).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_request"))
    );
    // A repeated parameter, and a body that is not a form.
    let (status, e, _) = token(
        &app,
        &client,
        &[
            ("grant_type", "refresh_token"),
            ("grant_type", "refresh_token"),
        ],
        None,
    )
    .await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_request"))
    );
    let res = app
        .anon(Method::POST, "/oauth/token")
        .json(&json!({"grant_type": "refresh_token"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 415);
    // A DPoP proof for another URL at the token endpoint.
    let key = DpopKey::generate();
    let code = code_for(&app, &app.t, &client, RW).await;
    let res = app
        .anon(Method::POST, "/oauth/token")
        .basic_auth(&client.client_id, client.secret.as_ref())
        .header("content-type", "application/x-www-form-urlencoded")
        .header("DPoP", key.proof("POST", &htu(&app, "/oauth/revoke"), None))
        .body(form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ]))
        .send()
        .await
        .unwrap();
    let (status, e) = read(res).await;
    assert_eq!(
        (status.as_u16(), e["error"].as_str()),
        (400, Some("invalid_dpop_proof"))
    );
    // A dpop_bound application refuses a token request without a proof.
    let bound = register(&app, RW, true, true).await;
    let code = code_for(&app, &app.t, &bound, RW).await;
    let (status, e, _) = exchange(&app, &bound, &code, None).await;
    assert_eq!(status, 400, "{e}");
}

async fn metadata(app: TestApp) {
    let (status, m) = read(
        app.anon(Method::GET, "/.well-known/oauth-authorization-server")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let base = app.config.base_url.trim_end_matches('/');
    assert_eq!(m["issuer"], base);
    assert_eq!(m["token_endpoint"], format!("{base}/oauth/token"));
    assert_eq!(
        m["authorization_endpoint"],
        format!("{base}/oauth/authorize")
    );
    assert_eq!(m["revocation_endpoint"], format!("{base}/oauth/revoke"));
    assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        m["dpop_signing_alg_values_supported"],
        json!(["ES256", "EdDSA", "Ed25519"])
    );
    assert_eq!(
        m["token_endpoint_auth_methods_supported"],
        json!(["client_secret_basic", "client_secret_post", "none"])
    );
    let scopes = m["scopes_supported"].as_array().unwrap();
    assert_eq!(scopes.len(), 13);
    assert!(scopes.contains(&json!("company:read")));
    assert!(scopes.contains(&json!("pay:bookkeeping:read")));
    assert!(scopes.contains(&json!("pay:bookkeeping:write")));
}

/// The same proof sent eight times at once: exactly one request is served, every other one is
/// refused as a replay (the `jti` record is one atomic step, whatever path it takes), and a
/// fresh proof still works after them.
async fn concurrent_identical_proofs_pass_once(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let t = dpop_tokens(&app, &client, &key).await;
    let access = t["access_token"].as_str().unwrap().to_owned();
    let proof = key.proof("GET", &htu(&app, LINKS), Some(&access));
    let sends = (0..8).map(|_| {
        app.anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", proof.clone())
            .send()
    });
    let mut served = 0;
    for res in futures_util::future::join_all(sends).await {
        let res = res.unwrap();
        if res.status() == 200 {
            served += 1;
        } else {
            assert_eq!(res.status(), 401);
            let c = challenges(res.headers());
            assert!(c.contains("error=\"invalid_dpop_proof\""), "{c}");
        }
    }
    assert_eq!(served, 1, "one of eight identical proofs is served");
    let res = with_dpop(&app, &key, Method::GET, LINKS, &access)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

/// On a token the server already served (its copy is warm, so on SQLite every record is
/// awaited by its request without holding a thread, and the replay writer batches them): 24
/// fresh proofs at once are all served, and of 8 equal proofs sent at once with them one is
/// served, the others refused as replays; each fresh proof sent again is refused.
async fn many_proofs_in_flight_on_a_served_token_pass_once(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let t = dpop_tokens(&app, &client, &key).await;
    let access = t["access_token"].as_str().unwrap().to_owned();
    let res = with_dpop(&app, &key, Method::GET, LINKS, &access)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let target = htu(&app, LINKS);
    let fresh: Vec<String> = (0..24)
        .map(|_| key.proof("GET", &target, Some(&access)))
        .collect();
    let same = key.proof("GET", &target, Some(&access));
    let send = |proof: &str| {
        app.anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", proof.to_owned())
            .send()
    };
    let sends = fresh
        .iter()
        .map(|p| (true, send(p)))
        .chain((0..8).map(|_| (false, send(&same))))
        .map(|(fresh, f)| async move { (fresh, f.await.unwrap()) });
    let mut served_same = 0;
    for (fresh, res) in futures_util::future::join_all(sends).await {
        match (fresh, res.status().as_u16()) {
            (true, status) => assert_eq!(status, 200, "every fresh proof is served"),
            (false, 200) => served_same += 1,
            (false, status) => {
                assert_eq!(status, 401);
                let c = challenges(res.headers());
                assert!(c.contains("error=\"invalid_dpop_proof\""), "{c}");
            }
        }
    }
    assert_eq!(served_same, 1, "one of eight equal proofs is served");
    for p in fresh.iter().take(4) {
        let res = send(p).await.unwrap();
        assert_eq!(res.status(), 401, "a proof served once is a replay");
    }
}

/// A key that has signed many proofs for its bound token (past the 64 after which the verifier
/// checks its ES256 signatures with the key's own table): its fresh proofs are still served,
/// and a proof whose signature is another proof's, or has one bit changed, is refused.
async fn a_busy_key_is_served_and_its_forgeries_refused(app: TestApp) {
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let t = dpop_tokens(&app, &client, &key).await;
    let access = t["access_token"].as_str().unwrap().to_owned();
    for i in 0..80 {
        let res = with_dpop(&app, &key, Method::GET, LINKS, &access)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "request {i}");
    }
    let target = htu(&app, LINKS);
    let (one, two) = (
        key.proof("GET", &target, Some(&access)),
        key.proof("GET", &target, Some(&access)),
    );
    let (input, _) = one.rsplit_once('.').unwrap();
    let (_, other_sig) = two.rsplit_once('.').unwrap();
    let swapped = format!("{input}.{other_sig}");
    let mut flipped = one.clone().into_bytes();
    let last = flipped.len() - 2;
    flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    for forged in [swapped, flipped] {
        let res = app
            .anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", forged)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 401);
        let c = challenges(res.headers());
        assert!(c.contains("error=\"invalid_dpop_proof\""), "{c}");
    }
    for proof in [one, two] {
        let res = app
            .anon(Method::GET, LINKS)
            .header("authorization", format!("DPoP {access}"))
            .header("DPoP", proof)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200, "the genuine proofs are still served");
    }
}

on_both_backends!(
    a_busy_key_is_served_and_its_forgeries_refused,
    token_flow_with_dpop,
    dpop_refusals,
    concurrent_identical_proofs_pass_once,
    many_proofs_in_flight_on_a_served_token_pass_once,
    bearer_tokens_scopes_and_tenancy,
    token_endpoint_refusals,
    metadata,
);
