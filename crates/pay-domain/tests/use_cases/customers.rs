//! Customers over the fakes: upsert by e-mail (trimmed, without case), lists, tenancy, scopes,
//! and the signed portal URL, refused before any portal data is read.

use super::*;
use pay_domain::customers::portal::PortalParams;
use pay_domain::customers::{CustomerError, PortalRefused, UpsertContactInput};
use pay_domain::kernel::ids::SubscriptionUid;

fn upsert(email: &str, name: Option<&str>) -> UpsertContactInput {
    UpsertContactInput {
        email: email.into(),
        name: name.map(str::to_owned),
        ..Default::default()
    }
}

fn params_of(url: &str) -> PortalParams {
    let q = url.split_once('?').unwrap().1;
    let mut p = PortalParams::default();
    for kv in q.split('&') {
        let (k, v) = kv.split_once('=').unwrap();
        let v = v.to_owned();
        match k {
            "company" => p.company = v,
            "customer" => p.customer = v,
            "expires" => p.expires = v,
            "signature" => p.signature = v,
            _ => panic!("unexpected {k}"),
        }
    }
    p
}

#[test]
fn upsert_by_trimmed_case_insensitive_email() {
    let w = world();
    let b = w.tenant("Acme", "ann@acme.example");
    let key = w.key_principal(&b);
    let c = w.pay.customers();
    let first = c
        .upsert_customer(&key, upsert(" Bob@Shop.example ", Some("Bob")))
        .unwrap();
    assert!(first.was_created());
    assert_eq!(first.contact().email, "Bob@Shop.example");
    assert!(first.contact().uid.as_str().starts_with("cus_"));
    w.advance(Duration::seconds(5));
    let again = c
        .upsert_customer(&key, upsert("bob@shop.EXAMPLE", None))
        .unwrap();
    assert!(!again.was_created());
    let again = again.into_contact();
    assert_eq!(again.id, first.contact().id);
    assert_eq!(again.name.as_deref(), Some("Bob"), "absent fields stay");
    assert!(again.updated_at > again.created_at);
    c.upsert_customer(&key, upsert("carol@shop.example", None))
        .unwrap();
    let list = c.list_customers(&key).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].email, "carol@shop.example", "newest first");
    // By id or uid; another company's is not found.
    assert_eq!(c.get_customer(&key, again.id).unwrap().id, again.id);
    assert_eq!(c.get_customer(&key, &again.uid).unwrap().id, again.id);
    let other = w.tenant("Other", "olga@other.example");
    let other_key = w.key_principal(&other);
    assert_eq!(
        c.get_customer(&other_key, &again.uid),
        Err(CustomerError::NotFound(NotFound { kind: "Customer" }))
    );
    assert!(c.list_customers(&other_key).unwrap().is_empty());
    assert!(matches!(
        c.portal_link(&other_key, again.id),
        Err(CustomerError::NotFound(_))
    ));
    // Bad input names the field.
    match c.upsert_customer(&key, upsert("not-an-email", None)) {
        Err(CustomerError::Invalid(f)) => assert_eq!(f.field, "email"),
        other => panic!("{other:?}"),
    }
    // Scopes.
    let reader = grant(b.company_id, 1, &[Scope::CustomersRead]);
    assert!(c.list_customers(&reader).is_ok());
    assert_eq!(
        c.upsert_customer(&reader, upsert("x@y.example", None)),
        Err(CustomerError::Denied(Denied::MissingScope {
            scope: Scope::CustomersWrite,
            dpop_bound: false
        }))
    );
    let links_only = grant(b.company_id, 2, &[Scope::PaymentLinksRead]);
    assert!(matches!(
        c.list_customers(&links_only),
        Err(CustomerError::Denied(_))
    ));
}

#[test]
fn portal_urls_verify_before_any_read() {
    let mut w = world();
    w.rebuild(true);
    let b = w.tenant("Acme", "ann@acme.example");
    let key = w.key_principal(&b);
    let c = w.pay.customers();
    let bob = c
        .upsert_customer(&key, upsert("bob@shop.example", None))
        .unwrap()
        .into_contact();
    let carol = c
        .upsert_customer(&key, upsert("carol@shop.example", None))
        .unwrap()
        .into_contact();
    let link = c.portal_link(&key, &bob.uid).unwrap();
    assert!(link.url.starts_with("https://pay.example/portal?company="));
    assert_eq!(link.company_account_id, b.company_id.to_string());
    assert_eq!(
        link.expires_at,
        Timestamp::from_unix_millis((T0_MS / 1000 + 86_400) * 1000).unwrap()
    );
    let good = params_of(&link.url);
    assert_eq!(c.open_portal(&good).unwrap().contact().id, bob.id);

    // Tampered, cross-customer, cross-company: refused with no store call at all.
    let other = w.tenant("Other", "olga@other.example");
    let mut bad = vec![];
    let mut p = good.clone();
    p.customer = carol.uid.to_string();
    bad.push(p);
    let mut p = good.clone();
    p.company = other.company_id.to_string();
    bad.push(p);
    let mut p = good.clone();
    p.expires = (good.expires.parse::<i64>().unwrap() + 1).to_string();
    bad.push(p);
    let mut p = good.clone();
    p.signature.replace_range(
        0..1,
        if p.signature.starts_with('0') {
            "1"
        } else {
            "0"
        },
    );
    bad.push(p);
    for p in &bad {
        w.store.reset_calls();
        assert_eq!(
            c.open_portal(p),
            Err(CustomerError::Portal(PortalRefused)),
            "{p:?}"
        );
        assert_eq!(
            w.store.calls.lock().unwrap().values().sum::<usize>(),
            0,
            "no store call on refusal"
        );
    }
    // Expired on the company clock: only the clock is read, no contact.
    w.advance(Duration::hours(24));
    w.store.reset_calls();
    assert_eq!(
        c.open_portal(&good),
        Err(CustomerError::Portal(PortalRefused))
    );
    assert_eq!(w.store.calls("contact"), 0);
    assert_eq!(w.store.calls("contact_subscriptions"), 0);
    assert_eq!(
        w.pay.subscriptions().portal(&good).unwrap_err().to_string(),
        PortalRefused.to_string()
    );
    assert_eq!(w.store.calls("contact_subscriptions"), 0);

    // Rotation: a URL of the previous key still opens; once that key is dropped it does not.
    let link = c.portal_link(&key, &bob.uid).unwrap();
    let signed_before = params_of(&link.url);
    w.portal_keys.rotate();
    assert!(c.open_portal(&signed_before).is_ok());
    w.portal_keys.drop_previous();
    assert!(c.open_portal(&signed_before).is_err());
    // The portal edits the name.
    let fresh = params_of(&c.portal_link(&key, &bob.uid).unwrap().url);
    let access = c.open_portal(&fresh).unwrap();
    // State-changing forms carry the token bound to this URL; without it, with another
    // customer's, or with an older URL's, they are refused before anything is read.
    let carols = params_of(&c.portal_link(&key, &carol.uid).unwrap().url);
    let carols_token = c.open_portal(&carols).unwrap().form_token().to_owned();
    w.advance(Duration::seconds(1));
    let newer = params_of(&c.portal_link(&key, &bob.uid).unwrap().url);
    assert_ne!(newer, fresh);
    let newer_token = c.open_portal(&newer).unwrap().form_token().to_owned();
    for token in ["", "nope", carols_token.as_str(), newer_token.as_str()] {
        w.store.reset_calls();
        assert_eq!(
            c.open_portal_form(&fresh, token),
            Err(CustomerError::Portal(PortalRefused)),
            "{token}"
        );
        assert_eq!(
            w.pay
                .subscriptions()
                .portal_set_status(
                    &fresh,
                    token,
                    &SubscriptionUid::parse("sub_AAAAAAAAAAAAAAAAAAAAAAAA").unwrap(),
                    pay_domain::subscriptions::SubscriptionStatus::Paused
                )
                .unwrap_err()
                .to_string(),
            PortalRefused.to_string()
        );
        assert_eq!(
            w.store.calls.lock().unwrap().values().sum::<usize>(),
            0,
            "no store call on a refused form"
        );
    }
    assert_eq!(
        c.open_portal_form(&fresh, access.form_token())
            .unwrap()
            .contact()
            .id,
        bob.id
    );
    let renamed = c.rename_in_portal(&access, "  Robert  ").unwrap();
    assert_eq!(renamed.name.as_deref(), Some("Robert"));
    assert_eq!(
        c.get_customer(&key, &bob.uid).unwrap().name.as_deref(),
        Some("Robert")
    );
}
