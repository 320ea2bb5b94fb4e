//! `FormKeyStore` on `DieselStore`, on SQLite and PostgreSQL alike (the PostgreSQL case skips
//! without `PAY_TEST_POSTGRES_URL`).

use pay_domain::kernel::ids::{CompanyId, FormKeyId, KeyId, PartnerId, UserId};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::links::gateway::FormKeyStore;
use pay_domain::tenancy::keys::{Integration, StoredIntegration};
use pay_domain::tenancy::ports::{IntegrationStore, NewTenant, TenancyStore};
use pay_domain::tenancy::{Company, Theme, UserRecord};
use pay_store::DieselStore;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;

fn integration(company: CompanyId, origins: &[&str]) -> StoredIntegration {
    StoredIntegration {
        integration: Integration {
            partner_id: PartnerId(Uuid::now_v7()),
            company_id: company,
            key_id: KeyId::from_random(&random_alnum(KeyId::RANDOM_LEN)).unwrap(),
            form_key_id: FormKeyId::from_random(&random_alnum(FormKeyId::RANDOM_LEN)).unwrap(),
            name: "Shop form".into(),
            app_slug: "pay".into(),
            allowed_origins: origins.iter().map(|o| (*o).to_owned()).collect(),
            enabled: true,
            created_at: ts(T0),
            last_used_at: None,
        },
        secret_digest: SecretDigest(format!("{}", Uuid::new_v4().simple())),
    }
}

/// A new company with its owner and first integration.
fn tenant(store: &DieselStore, name: &str) -> StoredIntegration {
    let user = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: format!("owner-{}@example.com", Uuid::new_v4().simple()),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    let company = Company {
        id: CompanyId(Uuid::now_v7()),
        name: name.into(),
        picture_url: None,
        logo_url: None,
        theme: Theme::System,
        created_at: ts(T0),
        test_clock_offset_ms: 0,
        payment_link_domain: None,
        website: None,
    };
    let first = integration(company.id, &["https://shop.example"]);
    store
        .create_tenant(&NewTenant {
            owner: user.id,
            new_user: Some(user),
            company,
            settings: settings(),
            integration: first.clone(),
        })
        .unwrap();
    first
}

both_backends!(form_key_lookup);

fn form_key_lookup(store: &DieselStore, _url: &str) {
    let acme = tenant(store, "Acme");
    let company = acme.integration.company_id;
    let second = integration(company, &["https://shop.example", "http://localhost:3000"]);
    store.insert_integration(&second).unwrap();
    let other = tenant(store, "Other");

    // Each key finds its own integration, allowed origins in order, across companies.
    for s in [&acme, &second, &other] {
        assert_eq!(
            store
                .integration_by_form_key(&s.integration.form_key_id)
                .unwrap(),
            Some(s.integration.clone())
        );
    }
    let unknown = FormKeyId::from_random(&random_alnum(FormKeyId::RANDOM_LEN)).unwrap();
    assert_eq!(store.integration_by_form_key(&unknown).unwrap(), None);

    // A disabled integration is returned as disabled at once (no cache in between), after
    // an authenticating read has put the key into the hot-read cache.
    store
        .integration_by_key_id(&second.integration.key_id)
        .unwrap()
        .unwrap();
    store
        .set_integration_enabled(company, second.integration.partner_id, false)
        .unwrap()
        .unwrap();
    let found = store
        .integration_by_form_key(&second.integration.form_key_id)
        .unwrap()
        .unwrap();
    assert!(!found.enabled);
    assert_eq!(found.partner_id, second.integration.partner_id);

    // Deleted: gone.
    assert!(store
        .delete_integration(company, second.integration.partner_id)
        .unwrap());
    assert_eq!(
        store
            .integration_by_form_key(&second.integration.form_key_id)
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .integration_by_form_key(&acme.integration.form_key_id)
            .unwrap(),
        Some(acme.integration.clone())
    );
}
