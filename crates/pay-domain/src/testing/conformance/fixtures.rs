//! Values the conformance cases store: a company with its owner and key, links, deliveries.

use uuid::Uuid;

use crate::kernel::amount::Decimal;
use crate::kernel::assets::AssetCatalogue;
use crate::kernel::error::Fault;
use crate::kernel::ids::{CompanyId, FormKeyId, KeyId, LinkUid, PartnerId, PaymentLinkId, UserId};
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::links::ports::PaymentLinkStore;
use crate::links::{CreatedBy, ExpirationTime, LinkStatus, PaymentLink, PaymentLinkPayload};
use crate::settings::{FeePayer, PaySettings, ProductStatus};
use crate::tenancy::keys::{Integration, StoredIntegration};
use crate::tenancy::ports::{NewTenant, TenancyStore};
use crate::tenancy::{Company, Theme, UserRecord};
use crate::webhooks::{
    CallbackKind, Delivery, DeliveryOrigin, DeliveryStatus, EventKind, PaymentEvent,
};

pub const T0: i64 = 1_795_327_640_123;

pub fn ts(ms: i64) -> Timestamp {
    Timestamp::from_unix_millis(ms).unwrap()
}

/// Alphanumeric randomness for the prefixed ids (hex is a subset).
pub fn random_alnum(len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        s.push_str(&Uuid::new_v4().simple().to_string());
    }
    s.truncate(len);
    s
}

/// A new company's settings.
pub fn settings() -> PaySettings {
    PaySettings::new_company_default(&AssetCatalogue::builtin())
}

/// Whether the port refused (ports fail only with a `Fault`).
pub fn is_fault<T: std::fmt::Debug>(r: Result<T, Fault>) -> bool {
    r.is_err()
}

/// A new company (with its owner, settings and key) in the store.
pub fn company<S: TenancyStore + ?Sized>(store: &S) -> CompanyId {
    let user = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: format!("{}@example.com", random_alnum(12)),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    let company = Company {
        id: CompanyId(Uuid::now_v7()),
        name: "Acme Ltd".into(),
        picture_url: None,
        logo_url: None,
        theme: Theme::Dark,
        created_at: ts(T0),
        test_clock_offset_ms: 0,
        payment_link_domain: None,
        website: None,
    };
    let tenant = NewTenant {
        owner: user.id,
        new_user: Some(user),
        integration: StoredIntegration {
            integration: Integration {
                partner_id: PartnerId(Uuid::now_v7()),
                company_id: company.id,
                key_id: KeyId::from_random(&random_alnum(KeyId::RANDOM_LEN)).unwrap(),
                form_key_id: FormKeyId::from_random(&random_alnum(FormKeyId::RANDOM_LEN)).unwrap(),
                name: "Shop backend".into(),
                app_slug: "pay".into(),
                allowed_origins: vec![],
                enabled: true,
                created_at: ts(T0),
                last_used_at: None,
            },
            secret_digest: SecretDigest(random_alnum(64)),
        },
        settings: PaySettings {
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
        },
        company,
    };
    store.create_tenant(&tenant).unwrap();
    tenant.company.id
}

/// A link of the company, not yet stored: active, 12.50 USDC on Base, order `o-1`.
pub fn link_value(company: CompanyId) -> PaymentLink {
    PaymentLink {
        id: PaymentLinkId(Uuid::now_v7()),
        uid: LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap(),
        company_id: company,
        status: LinkStatus::Active,
        payload: PaymentLinkPayload {
            title: None,
            description: None,
            amount: crate::kernel::amount::Amount::parse("12.50", 2).expect("a literal amount"),
            fiat_currency: None,
            currency: "USDC".into(),
            asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
            skip_quote_acceptance: None,
            fee_paid_by: None,
            order_id: Some("o-1".into()),
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
            merchant_name: None,
            merchant_picture_url: None,
            merchant_logo_url: None,
            merchant_payment_link_theme: None,
            settlement_address: None,
        },
        created_at: ts(T0),
        updated_at: ts(T0),
        expires_at: None,
        created_by: CreatedBy::Anonymous,
        grant_subscription_id: None,
    }
}

/// A new link of the company in the store (`link_value`).
pub fn link<S: PaymentLinkStore + ?Sized>(store: &S, company: CompanyId) -> PaymentLink {
    let l = link_value(company);
    store.insert_link(&l, None).unwrap();
    l
}

/// A pending delivery of the company, due at `due`, created at `created_at`.
pub fn delivery(company: CompanyId, created_at: i64, due: i64) -> Delivery {
    let id = Uuid::now_v7();
    Delivery {
        id,
        group_id: Uuid::now_v7(),
        company_id: company,
        origin: DeliveryOrigin::Event,
        event: EventKind::Payment(PaymentEvent::StatusChanged),
        status: DeliveryStatus::Pending,
        attempts: 0,
        next_attempt_at: Some(ts(due)),
        last_attempt_at: None,
        last_response_status: None,
        last_error: None,
        payment_link_uid: None,
        subscription_uid: None,
        grant_id: None,
        order_id: None,
        target: CallbackKind::CompanyPayment,
        url: "https://hooks.shop.example/pay".into(),
        body: format!(r#"{{"deliveryId":"{id}","data":{{"amount":"12.50","note":"é ✓"}}}}"#),
        created_at: ts(created_at),
    }
}
