//! The dashboard's Team screen over HTTP: every member of the team with their role, the
//! signed-in user marked, for owners and members alike; no other team's member; another
//! team's screen is 404; signed out, the sign-in page first (for each new screen).

use reqwest::Method;

use crate::dashboard::{location, page};
use crate::helpers::TestApp;
use crate::oauth_support::form;
use crate::on_both_backends;

async fn the_team_lists_its_members_and_their_roles(app: TestApp) {
    let (member, password) = app.add_member(&app.t, "member").await;
    let (admin, _) = app.add_member(&app.t, "admin").await;
    let other = app.new_tenant("Bob Bikes").await;
    let team = format!("/dashboard/{}/team", app.t.company_id);
    let s = app.login_owner(&app.t).await;
    let (status, _, html) = page(&app, &s, &team).await;
    assert_eq!(status, 200);
    assert!(html.contains("<h1>Team</h1>"), "{html}");
    assert!(html.contains("aria-current=\"page\">Team</a>"), "{html}");
    for (email, role) in [
        (&app.t.email, "Owner"),
        (&member, "Member"),
        (&admin, "Admin"),
    ] {
        let row = format!("<td data-label=\"E-mail\">{email}");
        let at = html
            .find(&row)
            .unwrap_or_else(|| panic!("{email} in {html}"));
        let rest = &html[at..];
        let row_end = rest.find("</tr>").unwrap();
        assert!(
            rest[..row_end].contains(&format!("<span class=\"badge\">{role}</span>")),
            "{email} is {role}: {html}"
        );
    }
    assert!(
        html.contains(&format!("{} <small>(you)</small>", app.t.email)),
        "{html}"
    );
    assert_eq!(
        html.matches("<td data-label=\"E-mail\">").count(),
        3,
        "{html}"
    );
    assert!(!html.contains(&other.email), "{html}");
    // A read-only member reads the same list, marked as themselves.
    let ms = app.login(&member, &password).await;
    let (status, _, html) = page(&app, &ms, &team).await;
    assert_eq!(status, 200);
    assert!(
        html.contains(&format!("{member} <small>(you)</small>")),
        "{html}"
    );
    // Another team's screen, or an unknown one: 404.
    for path in [
        format!("/dashboard/{}/team", other.company_id),
        format!("/dashboard/{}/team", uuid::Uuid::new_v4()),
    ] {
        assert_eq!(page(&app, &s, &path).await.0, 404, "{path}");
    }
}

async fn signed_out_the_new_screens_ask_to_sign_in(app: TestApp) {
    let c = &app.t.company_id;
    for screen in ["webhooks", "settings", "team"] {
        let path = format!("/dashboard/{c}/{screen}");
        let res = app.anon(Method::GET, &path).send().await.unwrap();
        assert_eq!(res.status(), 303, "{path}");
        assert_eq!(
            location(&res),
            format!("/signin?{}", form(&[("return_to", &path)]))
        );
    }
    // A POST without a session: the sign-in page too (after the form is read).
    for path in [
        format!("/dashboard/{c}/webhooks/callback"),
        format!("/dashboard/{c}/settings"),
        format!("/dashboard/{c}/settings/wallet"),
    ] {
        let res = app
            .anon(Method::POST, &path)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("csrf_token=x")
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 303, "{path}");
    }
}

on_both_backends!(
    the_team_lists_its_members_and_their_roles,
    signed_out_the_new_screens_ask_to_sign_in,
);
