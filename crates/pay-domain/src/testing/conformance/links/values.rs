//! The tenants, keys and links the link cases store.

use super::*;

pub fn digest() -> SecretDigest {
    SecretDigest(format!(
        "{}{}",
        Uuid::new_v4().simple(),
        Uuid::new_v4().simple()
    ))
}

pub fn integration(company: CompanyId, created_at: i64) -> StoredIntegration {
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
pub fn tenant(email: &str) -> NewTenant {
    let user = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: email.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    tenant_of(user.id, Some(user))
}

/// A new company owned by `owner` (created with it when `new_user` is given).
pub fn tenant_of(owner: UserId, new_user: Option<UserRecord>) -> NewTenant {
    let company = Company {
        id: CompanyId(Uuid::now_v7()),
        name: "Acme Ltd".into(),
        picture_url: None,
        logo_url: Some("https://cdn.example/logo.png".into()),
        theme: Theme::Dark,
        created_at: ts(T0),
        test_clock_offset_ms: 0,
        payment_link_domain: None,
        website: None,
    };
    NewTenant {
        new_user,
        owner,
        integration: integration(company.id, T0),
        settings: settings(),
        company,
    }
}

pub fn payload(amount: &str) -> PaymentLinkPayload {
    PaymentLinkPayload {
        title: Some("Order #1".into()),
        description: None,
        amount: crate::kernel::amount::Amount::parse_stored(amount, u32::MAX)
            .expect("a literal amount"),
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

pub fn link(company: CompanyId, created_at: i64, created_by: CreatedBy) -> PaymentLink {
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
        grant_subscription_id: None,
    }
}
