//! `AnonymousLinkStore` on `DieselStore`, run against SQLite and PostgreSQL alike: each case
//! below becomes a `sqlite` and a `postgres` test (the latter skips without
//! `PAY_TEST_POSTGRES_URL`).

use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId, UserId};
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::links::ports::{AnonymousLinkStore, LinkFilter, PaymentLinkStore};
use pay_domain::links::{
    CreatedBy, ExpirationTime, LinkStatus, PaymentLink, PaymentLinkPayload, ANONYMOUS_COMPANY,
};
use pay_domain::settings::{FeePayer, PaySettings, ProductStatus};
use pay_domain::tenancy::ports::TenancyStore;
use pay_domain::tenancy::{Company, Theme};
use pay_domain::webhooks::ports::WebhookStore;
use pay_domain::webhooks::{
    CallbackKind, Delivery, DeliveryFilter, DeliveryOrigin, DeliveryStatus, EventKind, LinkWebhook,
    PaymentEvent, StoredSigningSecret,
};
use pay_store::DieselStore;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;

// ----- fixtures -----

/// A new anonymous link (not yet stored).
fn anonymous_link(created_at: i64) -> PaymentLink {
    PaymentLink {
        id: PaymentLinkId(Uuid::now_v7()),
        uid: LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap(),
        company_id: ANONYMOUS_COMPANY,
        status: LinkStatus::Active,
        payload: PaymentLinkPayload {
            title: Some("Coffee".into()),
            description: None,
            amount: pay_domain::kernel::amount::Amount::parse("4.20", 6).unwrap(),
            fiat_currency: None,
            currency: "USDC".into(),
            asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
            skip_quote_acceptance: None,
            fee_paid_by: None,
            order_id: Some("anon-1".into()),
            invoice_pdf_url: None,
            customer_email: None,
            client_id: None,
            return_url: None,
            success_url: None,
            failure_url: None,
            expiration_time: ExpirationTime::H24,
            metadata: None,
            runtime_mode: "merchant_target_net_v2".into(),
            billing_version: "v2".into(),
            merchant_name: Some("Corner café ☕".into()),
            merchant_picture_url: None,
            merchant_logo_url: None,
            merchant_payment_link_theme: Some(Theme::System),
            settlement_address: Some("0x00000000000000000000000000000000000000aa".into()),
        },
        created_at: ts(created_at),
        updated_at: ts(created_at),
        expires_at: Some(ts(created_at + 86_400_000)),
        created_by: CreatedBy::Anonymous,
        grant_subscription_id: None,
    }
}

fn webhook_of(link: &PaymentLink, tag: &str) -> LinkWebhook {
    LinkWebhook {
        link_uid: link.uid.to_string(),
        url: format!("https://hooks.buyer.example/{tag}"),
        secret: StoredSigningSecret {
            sealed: SealedSecret {
                key_id: format!("k-{tag}"),
                sealed: format!("bm9uY2U{tag}Y2lwaGVy"),
            },
            last4: format!("{tag:0>4}"),
            created_at: ts(T0),
        },
    }
}

fn all_links() -> LinkFilter {
    LinkFilter::default()
}

fn all_deliveries() -> DeliveryFilter {
    DeliveryFilter {
        limit: 50,
        ..DeliveryFilter::default()
    }
}

both_backends!(
    anonymous_company_exists_after_migration,
    insert_and_read_back,
    anonymous_links_are_never_listed,
    failed_link_insert_writes_nothing,
    failed_webhook_insert_writes_nothing,
    only_anonymous_links_are_accepted,
    enqueue_link_event_for_anonymous_link,
    corrupt_link_webhooks_are_internal_errors,
);

conformance!(
    ratelimit:
    rate_hits_count_per_bucket_and_window,
    a_forgotten_hit_no_longer_counts,
    concurrent_hits_never_pass_the_limit,
);

// ----- cases -----

fn anonymous_company_exists_after_migration(store: &DieselStore, _url: &str) {
    assert_eq!(
        ANONYMOUS_COMPANY.to_string(),
        "00000000-0000-0000-0000-000000000000"
    );
    let (company, settings) = store
        .company_with_settings(ANONYMOUS_COMPANY)
        .unwrap()
        .expect("the anonymous company is created by the migration");
    assert_eq!(
        company,
        Company {
            id: ANONYMOUS_COMPANY,
            name: "Anonymous links".into(),
            picture_url: None,
            logo_url: None,
            theme: Theme::System,
            created_at: ts(0),
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: None,
        }
    );
    assert_eq!(
        settings,
        PaySettings {
            status: ProductStatus::Active,
            default_destination_asset: None,
            fee_paid_by: FeePayer::Merchant,
            skip_quote_acceptance: false,
            merchant_surcharge_percent: Decimal::ZERO,
            return_redirect_url: None,
            success_redirect_url: None,
            failure_redirect_url: None,
            underpayment_percent_enabled: false,
            underpayment_percent_threshold: Decimal::ZERO,
            underpayment_fixed_enabled: false,
            underpayment_fixed_threshold: Decimal::ZERO,
        }
    );
    // Nobody is a member, and the database still counts as empty (first-run set-up).
    assert!(store.is_empty().unwrap());
    assert_eq!(
        store
            .role(UserId(Uuid::now_v7()), ANONYMOUS_COMPANY)
            .unwrap(),
        None
    );
    assert!(store
        .links(ANONYMOUS_COMPANY, all_links(), 50)
        .unwrap()
        .is_empty());
}

fn insert_and_read_back(store: &DieselStore, _url: &str) {
    let with = anonymous_link(T0);
    let hook = webhook_of(&with, "a1");
    store.insert_anonymous_link(&with, Some(&hook)).unwrap();
    let without = anonymous_link(T0 + 1);
    store.insert_anonymous_link(&without, None).unwrap();

    assert_eq!(
        store.link(ANONYMOUS_COMPANY, &with.uid).unwrap(),
        Some(with.clone())
    );
    assert_eq!(
        store.link(ANONYMOUS_COMPANY, &without.uid).unwrap(),
        Some(without.clone())
    );
    assert_eq!(store.link_webhook(&with.uid).unwrap(), Some(hook));
    assert_eq!(store.link_webhook(&without.uid).unwrap(), None);
    assert_eq!(
        store
            .link_webhook(&LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap())
            .unwrap(),
        None
    );
    // Only under the anonymous company.
    let other = CompanyId(Uuid::now_v7());
    assert_eq!(store.link(other, &with.uid).unwrap(), None);
}

fn anonymous_links_are_never_listed(store: &DieselStore, _url: &str) {
    for n in 0..3 {
        let l = anonymous_link(T0 + n);
        let hook = webhook_of(&l, &format!("h{n}"));
        store
            .insert_anonymous_link(&l, (n % 2 == 0).then_some(&hook))
            .unwrap();
    }
    assert!(store
        .links(ANONYMOUS_COMPANY, all_links(), 50)
        .unwrap()
        .is_empty());
    let grant = LinkFilter {
        grant_id: Some(Uuid::now_v7()),
        ..LinkFilter::default()
    };
    assert!(store
        .links(ANONYMOUS_COMPANY, grant, 50)
        .unwrap()
        .is_empty());
}

fn failed_link_insert_writes_nothing(store: &DieselStore, _url: &str) {
    let first = anonymous_link(T0);
    store.insert_anonymous_link(&first, None).unwrap();

    // A second link reusing the uid (another id): the link insert fails, and its callback is
    // not written either.
    let again = PaymentLink {
        id: PaymentLinkId(Uuid::now_v7()),
        created_at: ts(T0 + 5),
        updated_at: ts(T0 + 5),
        ..first.clone()
    };
    let hook = webhook_of(&again, "b2");
    assert!(is_fault(store.insert_anonymous_link(&again, Some(&hook))));
    assert_eq!(store.link_webhook(&first.uid).unwrap(), None);
    assert_eq!(
        store.link(ANONYMOUS_COMPANY, &first.uid).unwrap(),
        Some(first)
    );
}

fn failed_webhook_insert_writes_nothing(store: &DieselStore, url: &str) {
    let link = anonymous_link(T0);
    // A callback row already filed under this uid (planted without its link, past the foreign
    // key): the link insert succeeds, the callback insert fails, and the link goes with it.
    let planted = format!(
        "INSERT INTO link_webhooks (link_uid, url, secret_key_id, secret_sealed, secret_last4, \
         secret_created_at) VALUES ('{}', 'https://planted.example/', 'k', 's', 'xxxx', {T0});",
        link.uid
    );
    if url.starts_with("sqlite://") {
        // Foreign keys are a per-connection switch on SQLite.
        raw_sql(url, &format!("PRAGMA foreign_keys = OFF; {planted}"));
    } else {
        raw_sql(
            url,
            &format!(
                "ALTER TABLE link_webhooks DROP CONSTRAINT link_webhooks_link_uid_fkey; {planted}"
            ),
        );
    }
    let hook = webhook_of(&link, "c3");
    assert!(is_fault(store.insert_anonymous_link(&link, Some(&hook))));
    assert_eq!(store.link(ANONYMOUS_COMPANY, &link.uid).unwrap(), None);
    let kept = store.link_webhook(&link.uid).unwrap().unwrap();
    assert_eq!(kept.url, "https://planted.example/");
    // And the link can still be inserted once the way is clear.
    raw_sql(url, "DELETE FROM link_webhooks;");
    store.insert_anonymous_link(&link, Some(&hook)).unwrap();
    assert_eq!(
        store.link(ANONYMOUS_COMPANY, &link.uid).unwrap(),
        Some(link.clone())
    );
    assert_eq!(store.link_webhook(&link.uid).unwrap(), Some(hook));
}

fn only_anonymous_links_are_accepted(store: &DieselStore, _url: &str) {
    // Created by a key, or filed under a merchant company: refused, nothing written.
    let by_key = PaymentLink {
        created_by: CreatedBy::User(UserId(Uuid::now_v7())),
        ..anonymous_link(T0)
    };
    assert!(is_fault(store.insert_anonymous_link(&by_key, None)));
    let elsewhere = PaymentLink {
        company_id: CompanyId(Uuid::now_v7()),
        ..anonymous_link(T0)
    };
    assert!(is_fault(store.insert_anonymous_link(&elsewhere, None)));
    // A callback of another link.
    let link = anonymous_link(T0);
    let stray = webhook_of(&anonymous_link(T0), "d4");
    assert!(is_fault(store.insert_anonymous_link(&link, Some(&stray))));
    for l in [&by_key, &elsewhere, &link] {
        assert_eq!(store.link(l.company_id, &l.uid).unwrap(), None);
        assert_eq!(store.link_webhook(&l.uid).unwrap(), None);
    }
    assert_eq!(
        store
            .link_webhook(&LinkUid::parse(&stray.link_uid).unwrap())
            .unwrap(),
        None
    );
}

fn enqueue_link_event_for_anonymous_link(store: &DieselStore, _url: &str) {
    let link = anonymous_link(T0);
    let hook = webhook_of(&link, "e5");
    store.insert_anonymous_link(&link, Some(&hook)).unwrap();
    let build = |n: u64| {
        let id = Uuid::now_v7();
        vec![Delivery {
            id,
            group_id: Uuid::now_v7(),
            company_id: ANONYMOUS_COMPANY,
            origin: DeliveryOrigin::Event,
            event: EventKind::Payment(PaymentEvent::StatusChanged),
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(ts(T0)),
            last_attempt_at: None,
            last_response_status: None,
            last_error: None,
            payment_link_uid: Some(link.uid.to_string()),
            subscription_uid: None,
            grant_id: None,
            order_id: link.payload.order_id.clone(),
            target: CallbackKind::AnonymousLink,
            url: hook.url.clone(),
            body: format!(r#"{{"sequence":{n}}}"#),
            created_at: ts(T0 + n as i64),
        }]
    };
    let first = store.enqueue_link_event(link.id, &build).unwrap();
    let second = store.enqueue_link_event(link.id, &build).unwrap();
    assert_eq!(first[0].body, r#"{"sequence":1}"#);
    assert_eq!(second[0].body, r#"{"sequence":2}"#);

    for d in first.iter().chain(&second) {
        assert_eq!(d.company_id, ANONYMOUS_COMPANY);
        assert_eq!(
            store.delivery(ANONYMOUS_COMPANY, d.id).unwrap().as_ref(),
            Some(d)
        );
    }
    let logged = store
        .deliveries(ANONYMOUS_COMPANY, &all_deliveries())
        .unwrap();
    assert_eq!(logged.len(), 2);
    assert!(logged
        .iter()
        .all(|d| d.target == CallbackKind::AnonymousLink && d.url == hook.url));
    // No other company sees them.
    assert!(store
        .deliveries(CompanyId(Uuid::now_v7()), &all_deliveries())
        .unwrap()
        .is_empty());
    // Claimed like any other delivery.
    let claimed = store
        .claim_due_deliveries(ts(T0), ts(T0 + 60_000), 10)
        .unwrap();
    assert_eq!(claimed.len(), 2);
    assert!(claimed.iter().all(|d| d.company_id == ANONYMOUS_COMPANY));
}

fn corrupt_link_webhooks_are_internal_errors(store: &DieselStore, url: &str) {
    let link = anonymous_link(T0);
    let hook = webhook_of(&link, "f6");
    store.insert_anonymous_link(&link, Some(&hook)).unwrap();
    raw_sql(
        url,
        &format!("UPDATE link_webhooks SET secret_created_at = {};", i64::MAX),
    );
    let msg = store.link_webhook(&link.uid).unwrap_err().chain();
    assert!(msg.contains("link_webhooks.secret_created_at"), "{msg}");
    assert!(!msg.contains("f6"), "no stored values in errors: {msg}");
}
