//! Every port method of `DieselStore`, run against SQLite and PostgreSQL alike: each case below
//! becomes a `sqlite` and a `postgres` test (the latter skips without `PAY_TEST_POSTGRES_URL`).

use std::thread;

use pay_domain::app::PayStore;
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::ids::{CompanyId, KeyId, PartnerId, SignInId, UserId};
use pay_domain::kernel::ports::HealthCheck;
use pay_domain::kernel::ratelimit::RateLimitStore;
use pay_domain::links::ports::{LinkFilter, PaymentLinkStore};
use pay_domain::links::{CreatedBy, LinkStatus};
use pay_domain::settings::ports::SettingsStore;
use pay_domain::settings::{FeePayer, PaySettings, ProductStatus};
use pay_domain::tenancy::keys::Integration;
use pay_domain::tenancy::ports::{IntegrationStore, SignInStore, StoredSignIn, TenancyStore};
use pay_domain::tenancy::{Role, Theme, UserRecord};
use pay_store::testing::TestDb;
use pay_store::{Backend, DieselStore, StoreConfig, StoreError};
use time::Duration;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;
use pay_domain::testing::conformance::links::values::link;
use pay_domain::testing::conformance::links::values::*;

// ----- fixtures -----

both_backends!(
    prune_forgets_what_no_rule_reads,
    migrations_are_idempotent,
    create_tenant_then_every_read,
    duplicate_email_writes_nothing,
    memberships_and_roles,
    add_member,
    settings_round_trip,
    integrations,
    sessions,
    login_failures,
    corrupt_rows_are_internal_errors,
    concurrent_writers,
);

conformance!(
    links:
    link_status_compare_and_set,
    payment_links,
    links_by_status_and_search,
);

// ----- cases -----

fn migrations_are_idempotent(store: &DieselStore, url: &str) {
    // `open` already ran them.
    assert_eq!(store.migrate().unwrap(), 0);
    let again = DieselStore::connect(&StoreConfig {
        url: url.into(),
        max_connections: 1,
    })
    .unwrap();
    assert_eq!(again.migrate().unwrap(), 0);
    store.ping().unwrap();
    assert!(store.is_empty().unwrap());
}

fn create_tenant_then_every_read(store: &DieselStore, _url: &str) {
    assert!(store.is_empty().unwrap());
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    assert!(!store.is_empty().unwrap());

    let user = t.new_user.clone().unwrap();
    assert_eq!(
        store.user_by_email("ann@example.com").unwrap(),
        Some(user.clone())
    );
    assert_eq!(store.user_by_email("bob@example.com").unwrap(), None);

    let m = store.memberships(user.id).unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].company_id, t.company.id);
    assert_eq!(m[0].company_name, "Acme Ltd");
    assert_eq!(m[0].role, Role::Owner);
    assert_eq!(
        store.role(user.id, t.company.id).unwrap(),
        Some(Role::Owner)
    );

    let (company, settings) = store.company_with_settings(t.company.id).unwrap().unwrap();
    assert_eq!(company, t.company);
    assert_eq!(settings, t.settings);
    assert_eq!(
        store
            .company_with_settings(CompanyId(Uuid::now_v7()))
            .unwrap(),
        None
    );

    assert_eq!(
        store.integrations(t.company.id).unwrap(),
        vec![t.integration.integration.clone()]
    );
    let by_key = store
        .integration_by_key_id(&t.integration.integration.key_id)
        .unwrap();
    assert_eq!(by_key, Some(t.integration.clone()));
}

fn duplicate_email_writes_nothing(store: &DieselStore, _url: &str) {
    let first = tenant("ann@example.com");
    store.create_tenant(&first).unwrap();
    let second = tenant("ann@example.com");
    assert!(is_fault(store.create_tenant(&second)));

    assert_eq!(
        store.company_with_settings(second.company.id).unwrap(),
        None
    );
    assert_eq!(store.integrations(second.company.id).unwrap(), vec![]);
    assert_eq!(
        store
            .integration_by_key_id(&second.integration.integration.key_id)
            .unwrap(),
        None
    );
    let ann = store.user_by_email("ann@example.com").unwrap().unwrap();
    assert_eq!(ann.id, first.owner);
    assert_eq!(store.memberships(ann.id).unwrap().len(), 1);
    assert_eq!(store.memberships(second.owner).unwrap(), vec![]);

    // The rolled-back transaction left nothing behind that blocks the same tenant later.
    let mut retry = second;
    retry.new_user.as_mut().unwrap().email = "bob@example.com".into();
    store.create_tenant(&retry).unwrap();
    assert!(store
        .company_with_settings(retry.company.id)
        .unwrap()
        .is_some());
}

fn memberships_and_roles(store: &DieselStore, _url: &str) {
    let first = tenant("ann@example.com");
    store.create_tenant(&first).unwrap();
    let ann = first.owner;
    // A second team for the same user, joined later.
    let mut second = tenant_of(ann, None);
    second.company.name = "Beta GmbH".into();
    second.company.created_at = ts(T0 + 1000);
    store.create_tenant(&second).unwrap();

    let m = store.memberships(ann).unwrap();
    let names: Vec<_> = m.iter().map(|m| m.company_name.as_str()).collect();
    assert_eq!(names, ["Acme Ltd", "Beta GmbH"], "oldest membership first");
    assert!(m.iter().all(|m| m.role == Role::Owner));

    let bob = tenant("bob@example.com");
    store.create_tenant(&bob).unwrap();
    assert_eq!(
        store.role(ann, second.company.id).unwrap(),
        Some(Role::Owner)
    );
    assert_eq!(store.role(ann, bob.company.id).unwrap(), None);
    assert_eq!(store.role(bob.owner, first.company.id).unwrap(), None);
    assert_eq!(
        store
            .role(UserId(Uuid::now_v7()), first.company.id)
            .unwrap(),
        None
    );
    assert_eq!(store.memberships(UserId(Uuid::now_v7())).unwrap(), vec![]);

    // An owner that does not exist violates the foreign key: nothing is written.
    let orphan = tenant_of(UserId(Uuid::now_v7()), None);
    assert!(is_fault(store.create_tenant(&orphan)));
    assert_eq!(
        store.company_with_settings(orphan.company.id).unwrap(),
        None
    );
}

fn add_member(store: &DieselStore, _url: &str) {
    let acme = tenant("owner@acme.example");
    store.create_tenant(&acme).unwrap();
    let beta = tenant("owner@beta.example");
    store.create_tenant(&beta).unwrap();
    // A new user joins as a member.
    let carol = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: "carol@acme.example".into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    store
        .add_member(
            Some(&carol),
            carol.id,
            acme.company.id,
            Role::Member,
            ts(T0 + 5),
        )
        .unwrap();
    assert_eq!(
        store.role(carol.id, acme.company.id).unwrap(),
        Some(Role::Member)
    );
    assert_eq!(
        store
            .user_by_email("carol@acme.example")
            .unwrap()
            .unwrap()
            .id,
        carol.id
    );
    // An existing user joins another team as admin.
    store
        .add_member(None, carol.id, beta.company.id, Role::Admin, ts(T0 + 6))
        .unwrap();
    let m = store.memberships(carol.id).unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(
        (m[0].company_id, m[0].role),
        (acme.company.id, Role::Member)
    );
    assert_eq!((m[1].company_id, m[1].role), (beta.company.id, Role::Admin));
    // Joining twice fails and writes nothing; a new user with a taken e-mail neither.
    assert!(is_fault(store.add_member(
        None,
        carol.id,
        acme.company.id,
        Role::Admin,
        ts(T0 + 7)
    )));
    assert_eq!(
        store.role(carol.id, acme.company.id).unwrap(),
        Some(Role::Member)
    );
    let dup = UserRecord {
        id: UserId(Uuid::now_v7()),
        ..carol.clone()
    };
    assert!(is_fault(store.add_member(
        Some(&dup),
        dup.id,
        beta.company.id,
        Role::Member,
        ts(T0 + 8)
    )));
    assert_eq!(store.memberships(dup.id).unwrap(), vec![]);
}

fn settings_round_trip(store: &DieselStore, _url: &str) {
    let mut t = tenant("ann@example.com");
    t.company.picture_url = Some("https://cdn.example/p.png".into());
    t.company.theme = Theme::Light;
    t.settings = PaySettings {
        status: ProductStatus::Paused,
        default_destination_asset: None,
        fee_paid_by: FeePayer::Client,
        skip_quote_acceptance: true,
        merchant_surcharge_percent: Decimal::parse("-0.5").unwrap(),
        return_redirect_url: Some("https://shop.example/back".into()),
        success_redirect_url: Some("https://shop.example/ok".into()),
        failure_redirect_url: Some("https://shop.example/ko".into()),
        underpayment_percent_enabled: true,
        underpayment_percent_threshold: Decimal::parse("99.999").unwrap(),
        underpayment_fixed_enabled: true,
        underpayment_fixed_threshold: Decimal::parse("0.010").unwrap(),
    };
    store.create_tenant(&t).unwrap();
    let (company, s) = store.company_with_settings(t.company.id).unwrap().unwrap();
    assert_eq!(company, t.company);
    assert_eq!(s, t.settings);
    // Decimal equality is by value; the stored text must be exact too.
    assert_eq!(s.merchant_surcharge_percent.to_string(), "-0.5");
    assert_eq!(s.underpayment_fixed_threshold.to_string(), "0.010");

    // Every field changes, and the URLs are cleared.
    let saved = PaySettings {
        status: ProductStatus::Active,
        default_destination_asset: Some("solana:x/token:y".into()),
        fee_paid_by: FeePayer::Merchant,
        skip_quote_acceptance: false,
        merchant_surcharge_percent: Decimal::parse("1").unwrap(),
        return_redirect_url: None,
        success_redirect_url: None,
        failure_redirect_url: None,
        underpayment_percent_enabled: false,
        underpayment_percent_threshold: Decimal::parse("0").unwrap(),
        underpayment_fixed_enabled: false,
        underpayment_fixed_threshold: Decimal::parse("123456789012345678.000000000000000001")
            .unwrap(),
    };
    store
        .save_settings(t.company.id, &saved, ts(T0 + 5000))
        .unwrap();
    let (_, s) = store.company_with_settings(t.company.id).unwrap().unwrap();
    assert_eq!(s, saved);
    assert_eq!(
        s.underpayment_fixed_threshold.to_string(),
        "123456789012345678.000000000000000001"
    );

    // Another company's settings are untouched.
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    store
        .save_settings(t.company.id, &t.settings, ts(T0 + 6000))
        .unwrap();
    assert_eq!(
        store
            .company_with_settings(other.company.id)
            .unwrap()
            .unwrap()
            .1,
        other.settings
    );
    assert_eq!(
        store
            .company_with_settings(t.company.id)
            .unwrap()
            .unwrap()
            .1,
        t.settings
    );
}

fn integrations(store: &DieselStore, _url: &str) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    let company = t.company.id;

    let mut second = integration(company, T0 + 1000);
    second.integration.allowed_origins = vec![];
    let third = integration(company, T0 + 2000);
    store.insert_integration(&second).unwrap();
    store.insert_integration(&third).unwrap();

    let listed: Vec<_> = store
        .integrations(company)
        .unwrap()
        .into_iter()
        .map(|i| i.partner_id)
        .collect();
    assert_eq!(
        listed,
        [
            third.integration.partner_id,
            second.integration.partner_id,
            t.integration.integration.partner_id
        ],
        "newest first"
    );
    assert_eq!(store.integrations(other.company.id).unwrap().len(), 1);
    assert_eq!(
        store
            .integration_by_key_id(&second.integration.key_id)
            .unwrap(),
        Some(second.clone())
    );
    let unknown = KeyId::from_random(&random_alnum(KeyId::RANDOM_LEN)).unwrap();
    assert_eq!(store.integration_by_key_id(&unknown).unwrap(), None);

    // Uniqueness of key id, form key id and partner id.
    let mut dup = integration(company, T0);
    dup.integration.key_id = third.integration.key_id.clone();
    assert!(is_fault(store.insert_integration(&dup)));
    let mut dup = integration(company, T0);
    dup.integration.form_key_id = third.integration.form_key_id.clone();
    assert!(is_fault(store.insert_integration(&dup)));
    let mut dup = integration(company, T0);
    dup.integration.partner_id = third.integration.partner_id;
    assert!(is_fault(store.insert_integration(&dup)));

    // Enable / disable, only within the company.
    let p = second.integration.partner_id;
    let disabled = store
        .set_integration_enabled(company, p, false)
        .unwrap()
        .unwrap();
    assert!(!disabled.enabled);
    assert_eq!(
        disabled,
        Integration {
            enabled: false,
            ..second.integration.clone()
        }
    );
    assert!(
        !store
            .integration_by_key_id(&second.integration.key_id)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );
    assert!(
        store
            .set_integration_enabled(company, p, true)
            .unwrap()
            .unwrap()
            .enabled
    );
    assert_eq!(
        store
            .set_integration_enabled(other.company.id, p, false)
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .set_integration_enabled(company, PartnerId(Uuid::now_v7()), false)
            .unwrap(),
        None
    );
    assert!(
        store
            .integration_by_key_id(&second.integration.key_id)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );

    // Touch.
    store.touch_integration(p, ts(T0 + 60_000)).unwrap();
    let touched = store
        .integration_by_key_id(&second.integration.key_id)
        .unwrap()
        .unwrap();
    assert_eq!(touched.integration.last_used_at, Some(ts(T0 + 60_000)));
    store
        .touch_integration(PartnerId(Uuid::now_v7()), ts(T0))
        .unwrap();

    // Delete, only within the company.
    assert!(!store.delete_integration(other.company.id, p).unwrap());
    assert!(store
        .integration_by_key_id(&second.integration.key_id)
        .unwrap()
        .is_some());
    assert!(store.delete_integration(company, p).unwrap());
    assert!(!store.delete_integration(company, p).unwrap());
    assert_eq!(
        store
            .integration_by_key_id(&second.integration.key_id)
            .unwrap(),
        None
    );
    assert_eq!(store.integrations(company).unwrap().len(), 2);
}

fn sessions(store: &DieselStore, _url: &str) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let session = StoredSignIn {
        id: SignInId(Uuid::now_v7()),
        token_digest: digest(),
        csrf_digest: digest(),
        user_id: t.owner,
        company_id: t.company.id,
        created_at: ts(T0),
        expires_at: ts(T0 + 3_600_000),
    };
    store.insert_sign_in(&session).unwrap();
    assert_eq!(
        store.sign_in_by_token(&session.token_digest).unwrap(),
        Some(session.clone())
    );
    assert_eq!(store.sign_in_by_token(&digest()).unwrap(), None);
    assert_eq!(store.sign_in_by_token(&session.csrf_digest).unwrap(), None);
    // Same token digest twice is refused.
    let clash = StoredSignIn {
        id: SignInId(Uuid::now_v7()),
        ..session.clone()
    };
    assert!(is_fault(store.insert_sign_in(&clash)));

    store.delete_sign_in(&digest()).unwrap();
    assert!(store
        .sign_in_by_token(&session.token_digest)
        .unwrap()
        .is_some());
    store.delete_sign_in(&session.token_digest).unwrap();
    assert_eq!(store.sign_in_by_token(&session.token_digest).unwrap(), None);
}

fn login_failures(store: &DieselStore, _url: &str) {
    // Login attempts are hits of a bucket named by a digest; a success clears the bucket.
    let window = Duration::minutes(15);
    let key = digest().0;
    let other = digest().0;
    for ms in [T0, T0 + 1000, T0 + 1000, T0 + 2000] {
        assert!(store.hit(&key, ts(ms), window, 10).unwrap());
    }
    assert!(store.hit(&other, ts(T0 + 2000), window, 10).unwrap());
    // Four in the window: a limit of four refuses, five takes one more.
    assert!(!store.hit(&key, ts(T0 + 2000), window, 4).unwrap());
    assert!(store.hit(&key, ts(T0 + 2000), window, 5).unwrap());
    // At or after: 15 minutes after T0 + 1000 the two at T0 + 1000 still count (with the
    // two at T0 + 2000), the one at T0 no longer.
    let later = T0 + 1000 + 15 * 60_000;
    assert!(!store.hit(&key, ts(later), window, 4).unwrap());
    assert!(store.hit(&key, ts(later + 1), window, 3).unwrap());
    store.clear_hits(&key).unwrap();
    assert!(store.hit(&key, ts(T0), window, 1).unwrap());
    assert!(
        !store.hit(&other, ts(T0 + 2000), window, 1).unwrap(),
        "other kept"
    );
}

fn corrupt_rows_are_internal_errors(store: &DieselStore, url: &str) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let l = link(t.company.id, T0, CreatedBy::User(t.owner));
    store.insert_link(&l, None).unwrap();
    raw_sql(
        url,
        "UPDATE companies SET theme = 'neon'; \
         UPDATE payment_links SET payload = '{\"amount\": 3}'; \
         UPDATE integrations SET allowed_origins = 'not json'; \
         UPDATE memberships SET role = 'king';",
    );
    assert!(is_fault(store.company_with_settings(t.company.id)));
    assert!(is_fault(store.link(t.company.id, &l.uid)));
    assert!(is_fault(store.links(
        t.company.id,
        LinkFilter::default(),
        10
    )));
    assert!(is_fault(store.integrations(t.company.id)));
    assert!(is_fault(
        store.integration_by_key_id(&t.integration.integration.key_id)
    ));
    assert!(is_fault(store.role(t.owner, t.company.id)));
    assert!(is_fault(store.memberships(t.owner)));

    // Short columns (ids, kinds, statuses) are read inline: one longer than any of them can be
    // is a corrupt row too, not a panic or a cut.
    let t2 = tenant("bob@example.com");
    store.create_tenant(&t2).unwrap();
    let l2 = link(t2.company.id, T0, CreatedBy::User(t2.owner));
    store.insert_link(&l2, None).unwrap();
    assert!(store.link(t2.company.id, &l2.uid).is_ok());
    raw_sql(
        url,
        &format!(
            "UPDATE payment_links SET status = '{}' WHERE uid = '{}';",
            "a".repeat(41),
            l2.uid
        ),
    );
    assert!(is_fault(store.link(t2.company.id, &l2.uid)));
    assert!(is_fault(store.links(
        t2.company.id,
        LinkFilter::default(),
        10
    )));
}

/// Many writers at once: SQLite must queue them (BEGIN IMMEDIATE + busy timeout), never fail.
fn concurrent_writers(store: &DieselStore, _url: &str) {
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let store = store.clone();
            thread::spawn(move || {
                for j in 0..5 {
                    let t = tenant(&format!("user{i}-{j}@example.com"));
                    store.create_tenant(&t).unwrap();
                    let l = link(t.company.id, T0 + j, CreatedBy::User(t.owner));
                    store.insert_link(&l, None).unwrap();
                    assert!(store.hit("k", ts(T0), Duration::days(1), 1000).unwrap());
                    assert!(store
                        .set_link_status(
                            t.company.id,
                            &l.uid,
                            LinkStatus::Active,
                            LinkStatus::Paused,
                            ts(T0),
                            None,
                        )
                        .unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // All 40 counted: 40 refuses, 41 takes one more.
    assert!(!store.hit("k", ts(T0), Duration::days(1), 40).unwrap());
    assert!(store.hit("k", ts(T0), Duration::days(1), 41).unwrap());
}

// ----- connection set-up (backend-independent) -----

fn assert_pay_store<T: PayStore + Clone + std::fmt::Debug + 'static>(_: &T) {}
fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}

#[test]
fn store_is_a_pay_store() {
    let db = TestDb::sqlite();
    assert_pay_store(&open(&db.url));
    // The server wraps it in `anyhow`.
    assert_error::<StoreError>();
}

#[test]
fn unsupported_urls_are_refused() {
    let connect = |url: &str| {
        DieselStore::connect(&StoreConfig {
            url: url.into(),
            max_connections: 1,
        })
    };
    assert!(matches!(
        connect("mysql://localhost/x"),
        Err(StoreError::InvalidUrl(_))
    ));
    assert!(matches!(
        connect("sqlite://"),
        Err(StoreError::InvalidUrl(_))
    ));
    assert!(matches!(
        connect("/tmp/x.db"),
        Err(StoreError::InvalidUrl(_))
    ));
    let missing_dir = std::env::temp_dir().join(format!("pay_missing_{}", Uuid::new_v4().simple()));
    let url = format!("sqlite://{}/db.sqlite", missing_dir.display());
    assert!(matches!(connect(&url), Err(StoreError::InvalidUrl(_))));
}

#[test]
fn unreachable_postgres_fails_fast_with_the_reason() {
    let started = std::time::Instant::now();
    let r = DieselStore::connect(&StoreConfig {
        url: "postgres://nobody:secret-pw@127.0.0.1:1/none".into(),
        max_connections: 2,
    });
    let Err(e) = r else {
        panic!("connected to nothing")
    };
    assert!(matches!(e, StoreError::Connect(_)), "{e:?}");
    assert!(!e.to_string().contains("secret-pw"));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn sqlite_creates_the_file_and_accepts_relative_paths() {
    let db = TestDb::sqlite();
    let path = db.url.strip_prefix("sqlite://").unwrap().to_owned();
    assert!(!std::path::Path::new(&path).exists());
    let store = open(&db.url);
    assert!(std::path::Path::new(&path).exists());
    assert_eq!(store.backend(), Backend::Sqlite);

    // Relative to the working directory (the crate directory under `cargo test`).
    let name = format!("pay_test_rel_{}.sqlite", Uuid::new_v4().simple());
    let rel = DieselStore::connect(&StoreConfig {
        url: format!("sqlite://{name}"),
        max_connections: 1,
    });
    let exists = std::path::Path::new(&name).exists();
    for suffix in [
        "",
        "-wal",
        "-shm",
        "-jti",
        "-dpop",
        "-dpop-wal",
        "-dpop-shm",
    ] {
        let _ = std::fs::remove_file(format!("{name}{suffix}"));
    }
    rel.unwrap();
    assert!(exists);
}

#[test]
fn debug_output_hides_the_url() {
    let cfg = StoreConfig {
        url: "postgres://u:secret-pw@h/db".into(),
        max_connections: 3,
    };
    assert!(!format!("{cfg:?}").contains("secret-pw"));
    let db = TestDb::sqlite();
    let store = open(&db.url);
    assert!(format!("{store:?}").contains("Sqlite"));
}

/// After a server-side disconnect (a PostgreSQL restart, say) a pooled connection fails one call
/// and is then replaced, although the pool does not ping on checkout.
#[test]
fn postgres_lost_connections_are_replaced() {
    let Some(db) = TestDb::postgres() else { return };
    let store = DieselStore::connect(&StoreConfig {
        url: db.url.clone(),
        max_connections: 1,
    })
    .unwrap();
    store.migrate().unwrap();
    store.ping().unwrap();
    let database = db.url.rsplit('/').next().unwrap().to_owned();
    raw_sql(
        &db.url,
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = '{database}' AND pid <> pg_backend_pid()"
        ),
    );
    let first = store.is_empty();
    assert!(first.is_ok() || is_fault(first));
    assert!(store.is_empty().unwrap());
}

/// The hot-read cache: this instance's writes are seen at once, another instance's after the
/// time to live.
fn cache_invalidation(url: &str) {
    let ttl = std::time::Duration::from_millis(300);
    let a = open(url).with_read_cache(ttl);
    let b = open(url).with_read_cache(ttl);
    let t = tenant("cache@example.com");
    a.create_tenant(&t).unwrap();
    let key = t.integration.integration.key_id.clone();
    let partner = t.integration.integration.partner_id;
    let company = t.company.id;
    // Both instances cache the key and the settings.
    assert!(
        a.integration_by_key_id(&key)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );
    assert!(
        b.integration_by_key_id(&key)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );
    assert!(
        !b.company_with_settings(company)
            .unwrap()
            .unwrap()
            .1
            .skip_quote_acceptance
    );
    // A touch through A updates A's cached copy.
    a.touch_integration(partner, ts(T0 + 42)).unwrap();
    assert_eq!(
        a.integration_by_key_id(&key)
            .unwrap()
            .unwrap()
            .integration
            .last_used_at,
        Some(ts(T0 + 42))
    );
    // A disables the key and changes settings: A sees both at once.
    a.set_integration_enabled(company, partner, false).unwrap();
    let mut s = settings();
    s.skip_quote_acceptance = true;
    a.save_settings(company, &s, ts(T0 + 50)).unwrap();
    assert!(
        !a.integration_by_key_id(&key)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );
    assert!(
        a.company_with_settings(company)
            .unwrap()
            .unwrap()
            .1
            .skip_quote_acceptance
    );
    // B still serves its cached copies until they expire, then reads the new rows.
    assert!(
        b.integration_by_key_id(&key)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );
    std::thread::sleep(ttl + std::time::Duration::from_millis(50));
    assert!(
        !b.integration_by_key_id(&key)
            .unwrap()
            .unwrap()
            .integration
            .enabled
    );
    assert!(
        b.company_with_settings(company)
            .unwrap()
            .unwrap()
            .1
            .skip_quote_acceptance
    );
    // A deleted key is gone at once on the instance that deleted it.
    assert!(a.delete_integration(company, partner).unwrap());
    assert_eq!(a.integration_by_key_id(&key).unwrap(), None);
    // Without a cache every read is fresh.
    let c = open(url);
    assert_eq!(c.integration_by_key_id(&key).unwrap(), None);
}

#[test]
fn cache_invalidation_sqlite() {
    let db = TestDb::sqlite();
    cache_invalidation(&db.url);
}

#[test]
fn cache_invalidation_postgres() {
    if let Some(db) = TestDb::postgres() {
        cache_invalidation(&db.url);
    }
}

fn prune_forgets_what_no_rule_reads(store: &DieselStore, _url: &str) {
    let t = tenant("prune@example.com");
    store.create_tenant(&t).unwrap();
    let session = |expires: i64| StoredSignIn {
        id: SignInId(Uuid::now_v7()),
        token_digest: digest(),
        csrf_digest: digest(),
        user_id: t.owner,
        company_id: t.company.id,
        created_at: ts(T0),
        expires_at: ts(expires),
    };
    let (old, live) = (session(T0 + 10), session(T0 + 10_000));
    store.insert_sign_in(&old).unwrap();
    store.insert_sign_in(&live).unwrap();
    let key = digest().0;
    let day = Duration::days(1);
    for bucket in [key.as_str(), "bucket"] {
        assert!(store.hit(bucket, ts(T0), day, 10).unwrap());
        assert!(store.hit(bucket, ts(T0 + 5_000), day, 10).unwrap());
    }
    // Cut-offs just past the old rows: the old session and the two old hits go.
    assert_eq!(store.prune(ts(T0 + 11), ts(T0 + 1)).unwrap(), 3);
    assert_eq!(store.sign_in_by_token(&old.token_digest).unwrap(), None);
    assert_eq!(
        store.sign_in_by_token(&live.token_digest).unwrap(),
        Some(live.clone())
    );
    // One hit left in each bucket: a limit of one refuses, two takes one more.
    for bucket in [key.as_str(), "bucket"] {
        assert!(!store.hit(bucket, ts(T0 + 5_000), day, 1).unwrap());
        assert!(store.hit(bucket, ts(T0 + 5_000), day, 2).unwrap());
    }
    // Nothing else is old enough.
    assert_eq!(store.prune(ts(T0 + 11), ts(T0 + 1)).unwrap(), 0);
}
