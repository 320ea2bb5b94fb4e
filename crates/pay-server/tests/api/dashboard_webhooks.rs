//! The dashboard's Webhooks screen over HTTP: an owner saves the company payment callback
//! (a refused URL keeps what was typed; the signing secret shows once, in the answer that
//! issued it, then never again), rotates its secret, sends a test event to a receiver that
//! fails, finds the failure in the log under the JSON log's filters and on the delivery's
//! page (request and answer), resends it and sees it delivered. Every form needs the
//! session's CSRF token, our origin and a form body; a read-only member sees the log and no
//! control, and each POST answers them 403; another team's ids are 404.

use reqwest::Method;
use serde_json::Value;

use crate::dashboard::{field, location, page, post};
use crate::helpers::{read, Session, TestApp};
use crate::oauth_support::form;
use crate::on_both_backends;
use crate::webhooks::{set_callback, test_event, test_event_as, Receiver};

/// The text between `start` and the next `end` in a page.
fn between<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {html}"))
        + start.len();
    &html[from..from + html[from..].find(end).unwrap()]
}

/// The company payment callback as the JSON API reads it.
async fn callback(app: &TestApp, s: &Session) -> Value {
    let got = read(
        app.in_session(
            s,
            Method::GET,
            &format!(
                "/api/partner/v1/companies/{}/payment-callback",
                app.t.company_id
            ),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1
}

/// The company's deliveries as the JSON log lists them (newest first).
async fn deliveries(app: &TestApp) -> Vec<Value> {
    let got = read(
        app.req(Method::GET, "/api/partner/v1/pay/webhook-requests")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.0, 200, "{}", got.1);
    got.1["data"].as_array().cloned().unwrap()
}

async fn link(app: &TestApp) -> String {
    app.create_link(serde_json::json!({"amount": "12.00", "title": "Order"}))
        .await["uid"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn an_owner_saves_the_callback_and_sees_each_secret_once(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let hooks = format!("/dashboard/{}/webhooks", app.t.company_id);
    let (status, _, html) = page(&app, &s, &hooks).await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Webhooks</h1>"), "{html}");
    assert!(html.contains("No callback URL yet"), "{html}");
    assert!(
        html.contains("aria-current=\"page\">Webhooks</a>"),
        "{html}"
    );
    let csrf = field(&html, "csrf_token");
    let save = format!("{hooks}/callback");
    let rx = Receiver::start();

    // Without the token, with a wrong one, from another site, or with no form: refused.
    let res = post(&app, &s, &save, &[("url", &rx.url)]).await;
    assert_eq!(res.status(), 403);
    let res = post(&app, &s, &save, &[("url", &rx.url), ("csrf_token", "x")]).await;
    assert_eq!(res.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, &save)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body(form(&[("url", &rx.url), ("csrf_token", &csrf)]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, &save)
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    assert_eq!(callback(&app, &s).await["url"], Value::Null);

    // A refused URL: the form again with the reason and what was typed.
    let typed = "ftp://shop.example/<hooks>";
    let res = post(&app, &s, &save, &[("url", typed), ("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 400);
    let html = res.text().await.unwrap();
    assert!(html.contains("id=\"url-error\""), "{html}");
    assert!(
        html.contains("value=\"ftp://shop.example/&lt;hooks&gt;\""),
        "{html}"
    );
    assert_eq!(callback(&app, &s).await["url"], Value::Null);

    // Saved: the secret in this answer only.
    let res = post(&app, &s, &save, &[("url", &rx.url), ("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["cache-control"], "no-store");
    let html = res.text().await.unwrap();
    let secret = between(&html, "id=\"new-secret-value\">", "<").to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    let cb = callback(&app, &s).await;
    assert_eq!(cb["url"], rx.url.as_str());
    assert_eq!(cb["secretLast4"], &secret[secret.len() - 4..]);
    let (_, _, html) = page(&app, &s, &hooks).await;
    assert!(!html.contains(&secret), "the secret is shown once");
    assert!(html.contains(&rx.url), "{html}");
    assert!(html.contains("Closed: delivering"), "{html}");
    // Saving the URL again issues no secret.
    let res = post(&app, &s, &save, &[("url", &rx.url), ("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 200);
    assert!(!res.text().await.unwrap().contains("new-secret-value"));

    // Rotation: a new secret, once.
    let rotate = format!("{hooks}/rotate-secret");
    let res = post(&app, &s, &rotate, &[]).await;
    assert_eq!(res.status(), 403);
    let res = post(&app, &s, &rotate, &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 200);
    let html = res.text().await.unwrap();
    let rotated = between(&html, "id=\"new-secret-value\">", "<").to_owned();
    assert!(
        rotated.starts_with("whsec_") && rotated != secret,
        "{rotated}"
    );
    assert_eq!(
        callback(&app, &s).await["secretLast4"],
        &rotated[rotated.len() - 4..]
    );
    let (_, _, html) = page(&app, &s, &hooks).await;
    assert!(
        !html.contains(&rotated) && !html.contains(&secret),
        "{html}"
    );
}

async fn a_failed_delivery_is_found_read_resent_and_delivered(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let hooks = format!("/dashboard/{}/webhooks", app.t.company_id);
    let (_, _, html) = page(&app, &s, &hooks).await;
    let csrf = field(&html, "csrf_token");
    let uid = link(&app).await;
    let test = format!("{hooks}/test");
    // No callback yet: the test form says why.
    let res = post(
        &app,
        &s,
        &test,
        &[("payment_link_uid", &uid), ("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 400);
    let html = res.text().await.unwrap();
    assert!(
        html.contains("set the company payment callback first"),
        "{html}"
    );
    assert!(html.contains(&format!("value=\"{uid}\"")), "{html}");
    let res = post(
        &app,
        &s,
        &test,
        &[("payment_link_uid", "nope"), ("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 404);

    // The receiver fails the first attempt.
    let rx = Receiver::start();
    set_callback(&app, &s, &rx.url).await;
    rx.always(500, 1);
    let res = post(
        &app,
        &s,
        &test,
        &[("payment_link_uid", &uid), ("csrf_token", &csrf)],
    )
    .await;
    assert_eq!(res.status(), 202);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("A test event is queued (1 delivery)."));
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    let failed = deliveries(&app).await[0]["id"].as_str().unwrap().to_owned();

    // The log under the JSON log's filters.
    let (status, _, html) = page(
        &app,
        &s,
        &format!("{hooks}?deliveryStatus=retrying&paymentLinkUid={uid}&search=&limit="),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        html.contains(&format!("/webhooks/deliveries/{failed}\">test</a>")),
        "{html}"
    );
    assert!(
        html.contains("<td data-label=\"Last answer\">HTTP 500</td>"),
        "{html}"
    );
    assert!(
        html.contains("<option value=\"retrying\" selected>"),
        "{html}"
    );
    assert!(
        html.contains("Failing: retrying"),
        "the endpoint's circuit: {html}"
    );
    let (_, _, html) = page(&app, &s, &format!("{hooks}?deliveryStatus=succeeded")).await;
    assert!(html.contains("id=\"no-deliveries\""), "{html}");
    let (_, _, html) = page(&app, &s, &format!("{hooks}?search={failed}")).await;
    assert!(html.contains(&failed), "{html}");
    for bad in [
        "limit=0",
        "deliveryStatus=done",
        "status=failed",
        "limit=1&limit=2",
    ] {
        let (status, _, html) = page(&app, &s, &format!("{hooks}?{bad}")).await;
        assert_eq!(status, 400, "{bad}");
        assert!(html.contains("id=\"filter-error\""), "{bad}: {html}");
    }

    // The delivery's page: the request and the attempt's answer.
    let one = format!("{hooks}/deliveries/{failed}");
    let (status, _, html) = page(&app, &s, &one).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("<h2 id=\"delivery-h\">pay.webhook.test</h2>"),
        "{html}"
    );
    assert!(html.contains(&format!("POST {}", rx.url)), "{html}");
    let body = between(&html, "id=\"request-body\">", "</code>");
    assert!(body.contains(&failed) && body.contains(&uid), "{body}");
    assert!(html.contains("<h3>Attempt 1: HTTP 500</h3>"), "{html}");
    assert!(
        html.contains("<code class=\"secret\">ok</code>"),
        "the response: {html}"
    );

    // Resend: a new delivery, due now, delivered.
    let resend = format!("{one}/resend");
    let res = post(&app, &s, &resend, &[]).await;
    assert_eq!(res.status(), 403);
    let res = post(&app, &s, &resend, &[("csrf_token", &csrf)]).await;
    assert_eq!(res.status(), 303);
    assert_eq!(location(&res), hooks);
    assert_eq!(app.dispatcher.run_once().await.unwrap(), 1);
    let (_, _, html) = page(&app, &s, &format!("{hooks}?deliveryStatus=succeeded")).await;
    assert!(html.contains("test</a> <small>(manual)</small>"), "{html}");
    assert!(
        html.contains("<td data-label=\"Last answer\">HTTP 200</td>"),
        "{html}"
    );
    assert_eq!(rx.received().len(), 2);
}

async fn a_read_only_member_sees_the_log_and_changes_nothing(app: TestApp) {
    let owner = app.login_owner(&app.t).await;
    let rx = Receiver::start();
    set_callback(&app, &owner, &rx.url).await;
    let uid = link(&app).await;
    let sent = test_event(&app, &uid).await;
    let id = sent["id"].as_str().unwrap();
    let (email, password) = app.add_member(&app.t, "member").await;
    let s = app.login(&email, &password).await;
    let hooks = format!("/dashboard/{}/webhooks", app.t.company_id);
    let (status, _, html) = page(&app, &s, &hooks).await;
    assert_eq!(status, 200);
    assert!(html.contains(id), "the member sees the log: {html}");
    for control in [
        "/callback\"",
        "/rotate-secret\"",
        "/test\"",
        "/resend\"",
        &rx.url,
    ] {
        assert!(
            !html.contains(control),
            "{control} shown to a member: {html}"
        );
    }
    let (status, _, html) = page(&app, &s, &format!("{hooks}/deliveries/{id}")).await;
    assert_eq!(status, 200);
    assert!(!html.contains("/resend\""), "{html}");
    let csrf = field(&html, "csrf_token");
    for (path, pairs) in [
        (
            format!("{hooks}/callback"),
            vec![("url", "https://evil.example/x")],
        ),
        (format!("{hooks}/rotate-secret"), vec![]),
        (
            format!("{hooks}/test"),
            vec![("payment_link_uid", uid.as_str())],
        ),
        (format!("{hooks}/deliveries/{id}/resend"), vec![]),
    ] {
        let mut pairs = pairs;
        pairs.push(("csrf_token", csrf.as_str()));
        let res = post(&app, &s, &path, &pairs).await;
        assert_eq!(res.status(), 403, "{path}");
    }
    assert_eq!(callback(&app, &owner).await["url"], rx.url.as_str());
    assert_eq!(deliveries(&app).await.len(), 1, "nothing resent or sent");
}

async fn another_teams_ids_are_not_found(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let rx = Receiver::start();
    crate::webhooks::put_callback_of(&app, &other.company_id, &so, &rx.url).await;
    let link: Value = read(
        app.as_tenant(&other, Method::POST, "/api/partner/v1/pay/payment-links")
            .json(&serde_json::json!({"amount": "5.00", "title": "Theirs"}))
            .send()
            .await
            .unwrap(),
    )
    .await
    .1;
    let theirs_link = link["uid"].as_str().unwrap();
    let theirs = test_event_as(&app, &other, theirs_link).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let ours = format!("/dashboard/{}/webhooks", app.t.company_id);
    let bob = format!("/dashboard/{}/webhooks", other.company_id);
    let (_, _, html) = page(&app, &s, &ours).await;
    assert!(!html.contains(&theirs), "{html}");
    let csrf = field(&html, "csrf_token");
    for path in [
        format!("{ours}/deliveries/{theirs}"),
        format!("{ours}/deliveries/not-a-delivery"),
        bob.clone(),
        format!("{bob}/deliveries/{theirs}"),
    ] {
        assert_eq!(page(&app, &s, &path).await.0, 404, "{path}");
    }
    for (path, pairs) in [
        (format!("{ours}/deliveries/{theirs}/resend"), vec![]),
        (
            format!("{ours}/test"),
            vec![("payment_link_uid", theirs_link)],
        ),
        (
            format!("{bob}/callback"),
            vec![("url", "https://evil.example/x")],
        ),
        (format!("{bob}/rotate-secret"), vec![]),
        (format!("{bob}/deliveries/{theirs}/resend"), vec![]),
    ] {
        let mut pairs = pairs;
        pairs.push(("csrf_token", csrf.as_str()));
        let res = post(&app, &s, &path, &pairs).await;
        assert_eq!(res.status(), 404, "{path}");
    }
    let got = read(
        app.as_tenant(&other, Method::GET, "/api/partner/v1/pay/webhook-requests")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(got.1["data"].as_array().unwrap().len(), 1, "nothing resent");
}

on_both_backends!(
    an_owner_saves_the_callback_and_sees_each_secret_once,
    a_failed_delivery_is_found_read_resent_and_delivered,
    a_read_only_member_sees_the_log_and_changes_nothing,
    another_teams_ids_are_not_found,
);
