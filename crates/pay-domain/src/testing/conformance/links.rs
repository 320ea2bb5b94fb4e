//! Payment links: stored and read back per company, listed newest first, status moved only by compare-and-set.

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::ids::*;
use crate::kernel::secret::SecretDigest;
use crate::links::ports::{LinkFilter, PaymentLinkStore};
use crate::links::{CreatedBy, ExpirationTime, LinkStatus, PaymentLink, PaymentLinkPayload};
use crate::settings::FeePayer;
use crate::tenancy::keys::{Integration, StoredIntegration};
use crate::tenancy::ports::{NewTenant, TenancyStore};
use crate::tenancy::{Company, Theme, UserRecord};

/// The ports these cases need.
pub trait Ports: TenancyStore + PaymentLinkStore + Sync {}

impl<T: TenancyStore + PaymentLinkStore + Sync> Ports for T {}

pub(crate) fn digest() -> SecretDigest {
    SecretDigest(format!(
        "{}{}",
        Uuid::new_v4().simple(),
        Uuid::new_v4().simple()
    ))
}

pub(crate) fn integration(company: CompanyId, created_at: i64) -> StoredIntegration {
    StoredIntegration {
        integration: Integration {
            partner_id: PartnerId(Uuid::now_v7()),
            company_id: company,
            key_id: KeyId::from_random(&random_alnum(KeyId::RANDOM_LEN)).unwrap(),
            form_key_id: FormKeyId::from_random(&random_alnum(FormKeyId::RANDOM_LEN)).unwrap(),
            name: "Shop backend".into(),
            app_slug: "pay".into(),
            allowed_origins: vec!["https://shop.example".into(), "https://b.example".into()],
            enabled: true,
            created_at: ts(created_at),
            last_used_at: None,
        },
        secret_digest: digest(),
    }
}

/// A new user owning a new company.
pub(crate) fn tenant(email: &str) -> NewTenant {
    let user = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: email.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    tenant_of(user.id, Some(user))
}

/// A new company owned by `owner` (created with it when `new_user` is given).
pub(crate) fn tenant_of(owner: UserId, new_user: Option<UserRecord>) -> NewTenant {
    let company = Company {
        id: CompanyId(Uuid::now_v7()),
        name: "Acme Ltd".into(),
        picture_url: None,
        logo_url: Some("https://cdn.example/logo.png".into()),
        theme: Theme::Dark,
        created_at: ts(T0),
        test_clock_offset_ms: 0,
    };
    NewTenant {
        new_user,
        owner,
        integration: integration(company.id, T0),
        settings: settings(),
        company,
    }
}

pub(crate) fn payload(amount: &str) -> PaymentLinkPayload {
    PaymentLinkPayload {
        title: Some("Order #1".into()),
        description: None,
        amount: amount.into(),
        fiat_currency: Some("EUR".into()),
        currency: "USDC".into(),
        asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
        skip_quote_acceptance: Some(true),
        fee_paid_by: Some(FeePayer::Client),
        order_id: Some("o-1".into()),
        invoice_pdf_url: None,
        customer_email: Some("buyer@example.com".into()),
        client_id: None,
        return_url: None,
        success_url: Some("https://shop.example/ok".into()),
        failure_url: None,
        expiration_time: ExpirationTime::H24,
        metadata: serde_json::json!({"z": 1, "a": [true, null, "x"], "n": {"k": 1.5}})
            .as_object()
            .cloned(),
        runtime_mode: "merchant_target_net_v2".into(),
        billing_version: "v2".into(),
        merchant_name: Some("Acme Ltd".into()),
        merchant_picture_url: None,
        merchant_logo_url: Some("https://cdn.example/logo.png".into()),
        merchant_payment_link_theme: Some(Theme::Dark),
        settlement_address: None,
    }
}

pub(crate) fn link(company: CompanyId, created_at: i64, created_by: CreatedBy) -> PaymentLink {
    PaymentLink {
        id: PaymentLinkId(Uuid::now_v7()),
        uid: LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap(),
        company_id: company,
        status: LinkStatus::Active,
        payload: payload("12.50"),
        created_at: ts(created_at),
        updated_at: ts(created_at),
        expires_at: Some(ts(created_at + 86_400_000)),
        created_by,
    }
}

pub fn payment_links<S: Ports>(store: &S) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    let company = t.company.id;
    let key = CreatedBy::ApiKey(t.integration.integration.partner_id);
    let grant = Uuid::new_v4();

    let oldest = link(company, T0, CreatedBy::User(t.owner));
    let mut by_grant = link(company, T0 + 1000, CreatedBy::Grant(grant));
    by_grant.expires_at = None;
    by_grant.payload.metadata = None;
    // Two links in the same millisecond: the larger id comes first.
    let tie_a = link(company, T0 + 2000, key.clone());
    let tie_b = link(company, T0 + 2000, key.clone());
    let anonymous = link(company, T0 + 3000, CreatedBy::Anonymous);
    let other_grant = link(company, T0 + 4000, CreatedBy::Grant(Uuid::new_v4()));
    let foreign = link(other.company.id, T0 + 5000, key.clone());
    for l in [
        &tie_b,
        &oldest,
        &anonymous,
        &by_grant,
        &tie_a,
        &other_grant,
        &foreign,
    ] {
        store.insert_link(l).unwrap();
    }
    // `uid` is unique across companies.
    let mut clash = link(other.company.id, T0, key.clone());
    clash.uid = oldest.uid.clone();
    assert!(is_internal(store.insert_link(&clash)));

    let (first_tie, second_tie) = if tie_a.id.to_string() > tie_b.id.to_string() {
        (&tie_a, &tie_b)
    } else {
        (&tie_b, &tie_a)
    };
    let all = store
        .links(company, LinkFilter { grant_id: None }, 200)
        .unwrap();
    assert_eq!(
        all,
        vec![
            other_grant.clone(),
            first_tie.clone(),
            second_tie.clone(),
            by_grant.clone(),
            oldest.clone()
        ],
        "newest first, ties by id, anonymous excluded"
    );
    let top = store
        .links(company, LinkFilter { grant_id: None }, 2)
        .unwrap();
    assert_eq!(top, vec![other_grant.clone(), first_tie.clone()]);
    assert_eq!(
        store
            .links(company, LinkFilter { grant_id: None }, 0)
            .unwrap(),
        vec![]
    );
    assert_eq!(
        store
            .links(
                company,
                LinkFilter {
                    grant_id: Some(grant)
                },
                200
            )
            .unwrap(),
        vec![by_grant.clone()]
    );
    assert_eq!(
        store
            .links(
                company,
                LinkFilter {
                    grant_id: Some(Uuid::new_v4())
                },
                200
            )
            .unwrap(),
        vec![]
    );
    assert_eq!(
        store
            .links(other.company.id, LinkFilter { grant_id: None }, 200)
            .unwrap(),
        vec![foreign.clone()]
    );

    // By uid: every field round-trips (anonymous links too), only within the company.
    for l in [&oldest, &by_grant, &tie_a, &anonymous] {
        assert_eq!(store.link(company, &l.uid).unwrap().as_ref(), Some(l));
    }
    assert_eq!(store.link(other.company.id, &oldest.uid).unwrap(), None);
    assert_eq!(store.link(company, &foreign.uid).unwrap(), None);
    let unknown = LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap();
    assert_eq!(store.link(company, &unknown).unwrap(), None);
}

pub fn link_status_compare_and_set<S: Ports>(store: &S) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    let company = t.company.id;
    let l = link(company, T0, CreatedBy::User(t.owner));
    store.insert_link(&l).unwrap();

    use LinkStatus::*;
    assert!(store
        .set_link_status(company, &l.uid, Active, Paused, ts(T0 + 10))
        .unwrap());
    // Stale `from`: the status already moved.
    assert!(!store
        .set_link_status(company, &l.uid, Active, Archived, ts(T0 + 20))
        .unwrap());
    let now = store.link(company, &l.uid).unwrap().unwrap();
    assert_eq!(now.status, Paused);
    assert_eq!(now.updated_at, ts(T0 + 10));
    assert_eq!(now.created_at, l.created_at);
    // Another company cannot move it.
    assert!(!store
        .set_link_status(other.company.id, &l.uid, Paused, Archived, ts(T0 + 30))
        .unwrap());
    let unknown = LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap();
    assert!(!store
        .set_link_status(company, &unknown, Active, Paused, ts(T0))
        .unwrap());
    assert!(store
        .set_link_status(company, &l.uid, Paused, Archived, ts(T0 + 40))
        .unwrap());
    assert_eq!(
        store.link(company, &l.uid).unwrap().unwrap().status,
        Archived
    );
}
