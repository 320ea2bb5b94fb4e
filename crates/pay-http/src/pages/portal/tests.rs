//! The portal page as HTML, without a server: what it shows for each status, the token on
//! every form, and escaping.

use pay_domain::customers::portal::PortalParams;
use pay_domain::customers::PortalAccess;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::subscriptions::{CycleStatus, PortalView, SubscriptionStatus, SubscriptionView};
use pay_domain::testing::conformance::fixtures::ts;
use pay_domain::testing::conformance::subscriptions::{contact, cycle, subscription};

use super::render::{self, Ctx};

const TOKEN: &str = "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12";

fn params() -> PortalParams {
    PortalParams {
        company: "0192f0c4-1a2b-7c3d-8e4f-0123456789ab".into(),
        customer: "cus_AbCdEfGhIjKlMnOpQrStUvWx".into(),
        expires: "1795414040".into(),
        signature: "f".repeat(64),
        ..PortalParams::default()
    }
}

fn view(statuses: &[SubscriptionStatus]) -> PortalView {
    let company = CompanyId::parse(&params().company).unwrap();
    let mut who = contact(company, "bob@shop.example");
    who.name = Some("<b>Bob</b>".into());
    who.client_id = Some("c-\"7\"".into());
    let subscriptions = statuses
        .iter()
        .map(|status| {
            let (mut s, mut c0) = subscription(company, who.id, 0);
            s.status = *status;
            s.label = "Pro <plan>".into();
            c0.status = CycleStatus::Paid;
            c0.paid_at = Some(ts(1_000));
            let mut c1 = cycle(&s, 1);
            c1.status = CycleStatus::Open;
            // 23:30 UTC on Jan 31 is Feb 1 in the subscription's zone (Europe/Berlin).
            c1.due_at = ts(1_801_438_200_000);
            c1.payment_link_uid = pay_domain::kernel::ids::LinkUid::parse("Xk3pQ9rT2mVw8LzA4bN7cD");
            SubscriptionView {
                subscription: s,
                cycles: vec![c0, c1],
            }
        })
        .collect();
    PortalView {
        access: PortalAccess::for_tests(company, who, 1_795_414_040, TOKEN),
        company_name: "Acme & Co".into(),
        subscriptions,
    }
}

fn html(v: &PortalView) -> String {
    render::portal(
        Ctx {
            nonce: "N0nce",
            prefix: "/p",
        },
        v,
        &params(),
        render::notice_words("paused"),
        &|c| {
            c.payment_link_uid
                .as_ref()
                .map(|u| format!("https://pay.example/p/pay/{u}"))
        },
    )
}

#[test]
fn shows_details_invoices_subscriptions_and_history() {
    let page = html(&view(&[SubscriptionStatus::Active]));
    assert!(page.contains("<style nonce=\"N0nce\">"));
    assert!(!page.contains("<script"), "no script at all");
    assert!(page.contains("Acme &amp; Co"));
    assert!(
        page.contains("value=\"&lt;b&gt;Bob&lt;/b&gt;\""),
        "name escaped"
    );
    assert!(page.contains("c-&quot;7&quot;"), "clientId shown escaped");
    assert!(
        !page.contains("name=\"clientId\""),
        "clientId is not a field"
    );
    assert!(page.contains("Pro &lt;plan&gt;"));
    assert!(!page.contains("<plan>"));
    assert!(page.contains("href=\"https://pay.example/p/pay/Xk3pQ9rT2mVw8LzA4bN7cD\""));
    assert!(page.contains(">Pay 19.99 USD<"));
    assert!(
        page.contains("<td data-label=\"Due\">2027-02-01</td>")
            && page.contains("<table class=\"stack\">"),
        "due dates in the subscription's zone"
    );
    assert!(!page.contains("2027-01-31"));
    assert!(page.contains("Payment history"));
    assert!(page.contains("The subscription is paused"));
    // Every form posts to the portal with the signed parameters and the token.
    let forms = page.matches("<form method=\"post\"").count();
    assert_eq!(forms, 3, "rename, pause, cancel");
    assert_eq!(
        page.matches(&format!("name=\"token\" value=\"{TOKEN}\""))
            .count(),
        forms
    );
    assert_eq!(
        page.matches("name=\"signature\" value=\"ffff").count(),
        forms
    );
    assert!(page.contains("action=\"/p/portal/name\""));
    assert!(page.contains("value=\"paused\""));
    assert!(page.contains("value=\"cancelled\""));
    assert!(!page.contains("value=\"active\""));
}

#[test]
fn the_moves_follow_the_status() {
    let page = html(&view(&[SubscriptionStatus::Paused]));
    assert!(page.contains("value=\"active\"") && page.contains(">Resume<"));
    assert!(!page.contains("value=\"paused\""));
    let page = html(&view(&[SubscriptionStatus::Cancelled]));
    assert_eq!(
        page.matches("<form method=\"post\"").count(),
        1,
        "rename only"
    );
    let page = html(&view(&[]));
    assert!(page.contains("You have no subscriptions."));
    assert!(page.contains("Nothing to pay right now."));
}

#[test]
fn a_refusal_shows_nothing_of_the_customer() {
    let page = render::problem(
        Ctx {
            nonce: "n",
            prefix: "",
        },
        "This link is invalid or has expired",
        "Ask <them>",
        None,
    );
    assert!(page.contains("Ask &lt;them&gt;"));
    assert!(!page.contains("<form"));
    assert_eq!(
        render::portal_href("/p", &params()),
        format!(
            "/p/portal?company=0192f0c4-1a2b-7c3d-8e4f-0123456789ab&customer=cus_AbCdEfGhIjKlMnOpQrStUvWx&expires=1795414040&signature={}",
            "f".repeat(64)
        )
    );
}

#[test]
fn a_grant_url_shows_and_offers_only_its_rights() {
    use pay_domain::customers::portal::PortalRights;
    let grant = uuid::Uuid::from_u128(7);
    let with = |see: bool, manage: bool| {
        let mut v = view(&[SubscriptionStatus::Active]);
        v.access = v.access.with_rights(PortalRights {
            grant: Some(grant),
            see_subscriptions: see,
            manage_subscriptions: manage,
        });
        let p = PortalParams {
            grant: Some(grant.to_string()),
            access: Some(v.access.rights().access().into()),
            ..params()
        };
        render::portal(
            Ctx {
                nonce: "N0nce",
                prefix: "/p",
            },
            &v,
            &p,
            None,
            &|_| Some("https://pay.example/p/pay/x".into()),
        )
    };
    let page = with(true, true);
    assert_eq!(page.matches("<form method=\"post\"").count(), 3);
    assert_eq!(
        page.matches(&format!("name=\"grant\" value=\"{grant}\""))
            .count(),
        3,
        "every form carries the URL's grant"
    );
    assert_eq!(
        page.matches("name=\"access\" value=\"read-write\"").count(),
        3
    );
    let page = with(true, false);
    assert!(page.contains("Pro &lt;plan&gt;") && page.contains(">Pay 19.99 USD<"));
    assert_eq!(
        page.matches("<form method=\"post\"").count(),
        1,
        "rename only"
    );
    for page in [with(false, false), with(false, true)] {
        assert!(page.contains("<h1>Your details</h1>"));
        assert!(!page.contains("Pro &lt;plan&gt;") && !page.contains("Pay 19.99"));
        assert!(!page.contains("Payment history"));
        assert_eq!(
            page.matches("<form method=\"post\"").count(),
            1,
            "rename only"
        );
    }
    assert_eq!(
        render::portal_href(
            "",
            &PortalParams {
                grant: Some(grant.to_string()),
                access: Some("read".into()),
                ..params()
            }
        ),
        format!(
            "/portal?company=0192f0c4-1a2b-7c3d-8e4f-0123456789ab&customer=cus_AbCdEfGhIjKlMnOpQrStUvWx&expires=1795414040&signature={}&grant={grant}&access=read",
            "f".repeat(64)
        )
    );
}
