//! Two server instances on one database, each with its own store (its own copy of DPoP-bound
//! tokens, its own connections): a proof used on one is a replay on the other, and a
//! revocation made through one holds from the next request on the other (docs/security.md,
//! "DPoP proofs"). The grant's own revocation across two stores is the store's test
//! (`pay-store`, `every_instance_sees_a_revocation_at_once`).

use std::sync::Arc;

use reqwest::Method;

use crate::helpers::{read, TestApp};
use crate::oauth_support::*;
use crate::on_both_backends;

const LINKS: &str = "/api/partner/v1/pay/payment-links";
const RW: &str = "pay:payment-links:read pay:payment-links:write";

/// A second server on `app`'s database and configuration; its base URL.
fn second_instance(app: &TestApp) -> String {
    let store = pay_server::open_store(&app.config).expect("open store");
    let pay = pay_server::build_pay_with(
        &app.config,
        store,
        app.clock.clone(),
        Arc::new(pay_processor::SandboxProcessor::new()),
    )
    .expect("build pay");
    let server = pay_server::Application::build_with(&app.config, pay).expect("build app");
    let base = format!("http://127.0.0.1:{}", server.port());
    actix_rt::spawn(server.into_server());
    base
}

/// `GET LINKS` on the server at `base` with the bound token and `proof`.
async fn get_on(app: &TestApp, base: &str, access: &str, proof: String) -> reqwest::Response {
    app.client
        .get(format!("{base}{LINKS}"))
        .header("authorization", format!("DPoP {access}"))
        .header("DPoP", proof)
        .send()
        .await
        .unwrap()
}

async fn revoke(app: &TestApp, client: &App, token: &str) {
    let res = app
        .anon(Method::POST, "/oauth/revoke")
        .basic_auth(&client.client_id, client.secret.as_ref())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", token)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
}

fn refused(res: &reqwest::Response, error: &str) {
    assert_eq!(res.status(), 401);
    let c = challenges(res.headers());
    assert!(c.contains(&format!("DPoP error=\"{error}\"")), "{c}");
}

async fn a_revocation_on_one_instance_holds_on_the_other_at_once(app: TestApp) {
    let other = second_instance(&app);
    let client = register(&app, RW, false, false).await;
    let key = DpopKey::generate();
    let htu = htu(&app, LINKS);

    // Two families of one grant: each refresh token's revocation ends its own family.
    let mut tokens = Vec::new();
    for _ in 0..2 {
        let code = code_for(&app, &app.t, &client, RW).await;
        let (status, t, _) = exchange(&app, &client, &code, Some(&key)).await;
        assert_eq!(status, 200, "{t}");
        tokens.push(t);
    }
    let access = |i: usize| tokens[i]["access_token"].as_str().unwrap().to_owned();

    // The other instance serves both tokens (and keeps its copies), several times.
    for i in [0, 1, 0, 1] {
        let res = get_on(
            &app,
            &other,
            &access(i),
            key.proof("GET", &htu, Some(&access(i))),
        )
        .await;
        let status = res.status();
        assert_eq!(status, 200, "{:?}", read(res).await);
    }
    // A proof used on one instance is a replay on the other, both ways.
    let proof = key.proof("GET", &htu, Some(&access(0)));
    assert_eq!(
        get_on(&app, &app.base, &access(0), proof.clone())
            .await
            .status(),
        200
    );
    refused(
        &get_on(&app, &other, &access(0), proof).await,
        "invalid_dpop_proof",
    );
    let proof = key.proof("GET", &htu, Some(&access(0)));
    assert_eq!(
        get_on(&app, &other, &access(0), proof.clone())
            .await
            .status(),
        200
    );
    refused(
        &get_on(&app, &app.base, &access(0), proof).await,
        "invalid_dpop_proof",
    );

    // The first family's refresh token revoked through the first instance: the very next
    // request on the other is refused, while the second family still works there.
    revoke(&app, &client, tokens[0]["refresh_token"].as_str().unwrap()).await;
    let res = get_on(
        &app,
        &other,
        &access(0),
        key.proof("GET", &htu, Some(&access(0))),
    )
    .await;
    refused(&res, "invalid_token");
    let res = get_on(
        &app,
        &other,
        &access(1),
        key.proof("GET", &htu, Some(&access(1))),
    )
    .await;
    assert_eq!(res.status(), 200);

    // The second access token itself revoked (RFC 7009): refused at once on the other too.
    revoke(&app, &client, &access(1)).await;
    let res = get_on(
        &app,
        &other,
        &access(1),
        key.proof("GET", &htu, Some(&access(1))),
    )
    .await;
    refused(&res, "invalid_token");
}

on_both_backends!(a_revocation_on_one_instance_holds_on_the_other_at_once,);
