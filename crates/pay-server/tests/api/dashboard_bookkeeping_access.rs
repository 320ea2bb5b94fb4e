//! The dashboard's Bookkeeping and its limits: another team's activity, file, screen and
//! export are 404 (read and change); the expense form needs the session's CSRF token and our
//! origin, is read only as `multipart/form-data`, and without a session goes to the sign-in.

use reqwest::Method;
use serde_json::Value;

use crate::books_files::PDF;
use crate::dashboard::{field, location, page};
use crate::dashboard_bookkeeping::{
    activity_page, detail, multipart, outgoing, post_multipart, screen, vendor_form, BOUNDARY,
};
use crate::helpers::TestApp;
use crate::on_both_backends;

async fn another_teams_ids_are_not_found(app: TestApp) {
    let owner = app.login_owner(&app.t).await;
    let out = outgoing(&app, '8').await;
    let id = out["id"].as_str().unwrap();
    let csrf = field(&page(&app, &owner, &screen(&app)).await.2, "csrf_token");
    let res = post_multipart(
        &app,
        &owner,
        &format!("{}/expense", activity_page(&app, id)),
        multipart(&vendor_form(&csrf), &[("evidence", "a.pdf", PDF)]),
    )
    .await;
    assert_eq!(res.status(), 303);
    let file = detail(&app, id).await["expense"]["evidenceFiles"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = app.new_tenant("Bob Bikes").await;
    let so = app.login_owner(&other).await;
    let theirs = format!("/dashboard/{}/bookkeeping", other.company_id);
    let (_, _, html) = page(&app, &so, &theirs).await;
    assert!(html.contains("id=\"no-activity\""), "{html}");
    let their_csrf = field(&html, "csrf_token");
    for path in [
        format!("{theirs}/activity/{id}"),
        format!("{theirs}/files/{file}"),
        screen(&app),
        activity_page(&app, id),
        format!("{}/files/{file}", screen(&app)),
        format!(
            "{}/export?kind=payments&from=2026-01-01&to=2026-01-02",
            screen(&app)
        ),
    ] {
        assert_eq!(page(&app, &so, &path).await.0, 404, "{path}");
    }
    for path in [
        format!("{theirs}/activity/{id}/expense"),
        format!("{}/expense", activity_page(&app, id)),
    ] {
        let res = post_multipart(&app, &so, &path, multipart(&vendor_form(&their_csrf), &[])).await;
        assert_eq!(res.status(), 404, "{path}");
    }
    assert_eq!(detail(&app, id).await["expense"]["version"], 1, "unchanged");
}

async fn the_form_needs_csrf_and_our_origin(app: TestApp) {
    let s = app.login_owner(&app.t).await;
    let out = outgoing(&app, '9').await;
    let id = out["id"].as_str().unwrap();
    let path = format!("{}/expense", activity_page(&app, id));
    let csrf = field(&page(&app, &s, &screen(&app)).await.2, "csrf_token");
    let without: Vec<_> = vendor_form(&csrf)
        .into_iter()
        .filter(|(k, _)| *k != "csrf_token")
        .collect();
    let res = post_multipart(&app, &s, &path, multipart(&without, &[])).await;
    assert_eq!(res.status(), 403);
    let mut wrong = without.clone();
    wrong.push(("csrf_token", "wrong"));
    let res = post_multipart(&app, &s, &path, multipart(&wrong, &[])).await;
    assert_eq!(res.status(), 403);
    let res = app
        .in_session_no_csrf(&s, Method::POST, &path)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("origin", "https://evil.example")
        .body(multipart(&vendor_form(&csrf), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    // Not a multipart form: 400; not signed in: to the sign-in page.
    let res = app
        .in_session_no_csrf(&s, Method::POST, &path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf_token=x")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let res = app
        .anon(Method::POST, &path)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(multipart(&vendor_form(&csrf), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 303);
    assert!(location(&res).starts_with("/signin?"), "{}", location(&res));
    assert_eq!(
        detail(&app, id).await["expense"],
        Value::Null,
        "nothing saved"
    );
    for path in [screen(&app), activity_page(&app, id)] {
        let res = app.anon(Method::GET, &path).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
    }
    // The export's query is read before the session, as every dashboard form is: 400 to anyone.
    let bad = format!(
        "{}/export?kind=refunds&from=2026-11-01&to=2026-11-02",
        screen(&app)
    );
    let res = app.anon(Method::GET, &bad).send().await.unwrap();
    assert_eq!(res.status(), 400);
}

on_both_backends!(
    another_teams_ids_are_not_found,
    the_form_needs_csrf_and_our_origin,
);
