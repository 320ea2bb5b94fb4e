//! A company's verified payment-link domain (the operator's `admin verify-domain`): checked
//! and normalised, one company per domain, and once set every hosted URL the domain builds
//! for that company is on it (portal URL, cycle `paymentUrl`, webhook `publicUrl`, reminder
//! mails); cleared, they are back on the public payment site. Other companies never change.

use std::sync::atomic::Ordering;

use serde_json::Value;

use super::billing::{monthly, pay_link, shop, JAN_31_MS};
use super::*;
use pay_domain::customers::UpsertContactInput;
use pay_domain::subscriptions::SubscriptionStatus;
use pay_domain::tenancy::TenancyError;

const DOMAIN: &str = "https://pay.acme.example/";

#[test]
fn the_domain_is_checked_normalised_and_owned_by_one_company() {
    let w = world();
    let (_, a) = shop(&w);
    let b = w.tenant("Beta", "ben@beta.example").company_id;
    let t = w.pay.tenancy();
    assert_eq!(
        t.set_payment_link_domain(a, Some("  Pay.ACME.example "))
            .unwrap()
            .as_deref(),
        Some("pay.acme.example")
    );
    for bad in [
        "",
        "localhost",
        "https://pay.acme.example",
        "pay.acme.example:443",
        "pay.acme.example/",
        "pay.acme.example.",
        "pay..acme.example",
        "-pay.acme.example",
        "pay_acme.example",
        "203.0.113.7",
        "pay acme.example",
    ] {
        match t.set_payment_link_domain(b, Some(bad)) {
            Err(TenancyError::Invalid(e)) => assert_eq!(e.field, "domain", "{bad}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    let long_label = format!("{}.example", "a".repeat(64));
    assert!(t.set_payment_link_domain(b, Some(&long_label)).is_err());
    match t.set_payment_link_domain(b, Some("PAY.acme.example")) {
        Err(TenancyError::Invalid(e)) => {
            assert_eq!(e.field, "domain");
            assert!(e.message.contains("another company"), "{e:?}");
        }
        other => panic!("taken: {other:?}"),
    }
    assert!(matches!(
        t.set_payment_link_domain(CompanyId(uuid::Uuid::now_v7()), Some("x.example")),
        Err(TenancyError::NotFound(_))
    ));
    assert_eq!(t.set_payment_link_domain(a, None).unwrap(), None);
    assert_eq!(
        t.set_payment_link_domain(b, Some("pay.acme.example"))
            .unwrap()
            .as_deref(),
        Some("pay.acme.example"),
        "free again once cleared"
    );
}

#[test]
fn every_hosted_url_of_the_company_moves_to_its_verified_domain() {
    let w = world();
    w.clock.0.store(JAN_31_MS, Ordering::SeqCst);
    let (key, a) = shop(&w);
    let other = w.tenant("Beta", "ben@beta.example");
    let other_key = w.key_principal(&other);
    w.pay
        .tenancy()
        .set_payment_link_domain(a, Some("pay.acme.example"))
        .unwrap();

    // Portal URL.
    let customers = w.pay.customers();
    let bob = customers
        .upsert_customer(
            &key,
            UpsertContactInput {
                email: "bob@shop.example".into(),
                name: None,
                client_id: None,
                metadata: None,
            },
        )
        .unwrap()
        .into_contact();
    let portal = customers.portal_link(&key, &bob.uid).unwrap();
    assert!(
        portal
            .url
            .starts_with("https://pay.acme.example/portal?company="),
        "{}",
        portal.url
    );

    // A cycle's paymentUrl, in the API and in the subscription webhook.
    let s = w.pay.subscriptions();
    let v = s
        .create_subscription(&key, monthly("bob@shop.example"))
        .unwrap();
    let c0 = &v.cycles[0];
    let uid = c0.payment_link_uid.as_ref().unwrap();
    assert_eq!(s.payment_url(c0).unwrap(), format!("{DOMAIN}pay/{uid}"));
    s.set_subscription_status(&key, &v.subscription.uid, SubscriptionStatus::Paused)
        .unwrap();
    s.set_subscription_status(&key, &v.subscription.uid, SubscriptionStatus::Active)
        .unwrap();
    let bodies: Vec<Value> = w
        .store
        .stored_deliveries()
        .into_iter()
        .map(|d| serde_json::from_str(&d.body).unwrap())
        .collect();
    assert!(!bodies.is_empty());
    for b in &bodies {
        assert_eq!(
            b["cycle"]["paymentUrl"],
            format!("{DOMAIN}pay/{uid}"),
            "{b}"
        );
    }

    // A reminder mail (cycle 0's overdue one, two days after due).
    w.pay
        .sandbox()
        .advance_test_clock(&key, 3 * 24 * 3600)
        .unwrap();
    let mails = w.store.snapshot().mails;
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert!(
        mails[0].text_body.contains(&format!("{DOMAIN}pay/{uid}")),
        "{}",
        mails[0].text_body
    );

    // The payment webhooks' link.publicUrl.
    pay_link(&w, &key, uid);
    let urls: Vec<String> = w
        .store
        .stored_deliveries()
        .into_iter()
        .map(|d| serde_json::from_str::<Value>(&d.body).unwrap())
        .filter_map(|b| b["paymentLink"]["publicUrl"].as_str().map(str::to_owned))
        .collect();
    assert!(!urls.is_empty());
    assert!(
        urls.iter().all(|u| *u == format!("{DOMAIN}pay/{uid}")),
        "{urls:?}"
    );

    // Another company stays on the public payment site; cleared, so does this one.
    let theirs = customers
        .upsert_customer(
            &other_key,
            UpsertContactInput {
                email: "dan@beta.example".into(),
                name: None,
                client_id: None,
                metadata: None,
            },
        )
        .unwrap()
        .into_contact();
    let public = customers.portal_link(&other_key, &theirs.uid).unwrap();
    assert!(!public.url.contains("pay.acme.example"), "{}", public.url);
    w.pay.tenancy().set_payment_link_domain(a, None).unwrap();
    assert_eq!(
        s.payment_url(c0).unwrap(),
        format!("{}/pay/{uid}", w.pay.public_pay_url().trim_end_matches('/'))
    );
}
