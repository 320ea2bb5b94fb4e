//! Use-case tests of `Pay` over in-memory fakes of the ports: `MemStore` (every store trait,
//! honouring each documented guarantee, with call counters), `FixedClock` (moved by the test)
//! and `FakeCrypto` (deterministic randomness, transparent digests and password hashes);
//! for webhooks `FakeSealer` (readable, aad-bound sealing) and `FakeSigner` (records what
//! signed), with a separate wall clock. The webhook use-case tests live in `tests/webhooks.rs`.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

use pay_domain::app::{Adapters, AppConfig, Pay, Stores};
use pay_domain::testing::*;
use time::Duration;

use pay_domain::checkout::Resolution;
use pay_domain::checkout::{CheckoutError, RefundAddressAlreadySet};
use pay_domain::kernel::assets::AssetCatalogue;
use pay_domain::kernel::assets::AssetRefusal;
use pay_domain::kernel::error::{FieldError, NotFound, RateLimited, UnknownField};
use pay_domain::kernel::ids::{CompanyId, FormKeyId, KeyId, LinkUid, PartnerId, PaymentLinkId};
use pay_domain::kernel::ports::Clock;
use pay_domain::kernel::secret::Secret;
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::ports::PaymentLinkStore;
use pay_domain::links::{CreateLinkInput, CreatedBy, PaymentLink};
use pay_domain::links::{InvalidTransition, LinkError, LinkNotActive};
use pay_domain::links::{LinkState, LinkStatus};
use pay_domain::mail::{MailError, MissingEmail};
use pay_domain::sandbox::SandboxError;
use pay_domain::sandbox::SandboxEvent;
use pay_domain::settings::SettingsError;
use pay_domain::settings::{FeePayer, ProductStatus};
use pay_domain::settings::{PaySettings, SettingsPatch};
use pay_domain::tenancy::keys::{Integration, NewIntegrationInput, StoredIntegration};
use pay_domain::tenancy::ports::{IntegrationStore, TenancyStore};
use pay_domain::tenancy::{ApiKeyNotFound, Denied, InvalidLogin, TenancyError};
use pay_domain::tenancy::{
    BootstrapOutcome, Company, Credential, LoginOutcome, Membership, Principal, Role, Scope,
    SignedIn, Theme,
};
use pay_domain::webhooks::ports::{AttemptRecord, WebhookStore};
use pay_domain::webhooks::CallbackView;
use pay_domain::webhooks::WebhookError;
use pay_domain::webhooks::{
    AfterAttempt, CallbackKind, CompanyCallback, Delivery, DeliveryFilter, DeliveryStatus,
};

mod anonymous;
mod billing;
mod billing_clock;
mod bookkeeping;
mod checkout;
mod customers;
mod domains;
mod evidence;
mod gateway;
mod mail;
mod native_platforms;
mod oauth;
mod webhooks;

// =====================================================================================
// Harness
// =====================================================================================

/// 2026-11-22T06:07:20.000Z: whole seconds, so `lastUsedAt` granularity is exact.
const T0_MS: i64 = 1_795_327_640_000;
/// The wall clock starts elsewhere (2026-11-23T01:00:00Z), so a signature's `t` shows which
/// clock it came from.
const WALL_MS: i64 = 1_795_395_600_000;
const PW: &str = "correct horse battery";
const ADDR: &str = "203.0.113.7";

#[derive(Debug)]
struct World {
    pay: Pay,
    store: Arc<MemStore>,
    crypto: Arc<FakeCrypto>,
    clock: Arc<FixedClock>,
    sealer: Arc<FakeSealer>,
    signer: Arc<FakeSigner>,
    /// Real time for signatures; the service clock (`clock`) is business time.
    wall: Arc<FixedClock>,
    processor: Arc<FakeProcessor>,
    portal_keys: Arc<FakePortalKeys>,
    files: Arc<MemFiles>,
    allow_private_targets: bool,
}

fn world() -> World {
    world_with(false)
}

/// A world whose webhooks may (`true`) or may not target http and private addresses.
fn world_with(allow_private_targets: bool) -> World {
    let store = Arc::new(MemStore::default());
    let crypto = Arc::new(FakeCrypto::default());
    let clock = Arc::new(FixedClock(AtomicI64::new(T0_MS)));
    let sealer = Arc::new(FakeSealer::default());
    let signer = Arc::new(FakeSigner::default());
    let wall = Arc::new(FixedClock(AtomicI64::new(WALL_MS)));
    let processor = Arc::new(FakeProcessor::default());
    let portal_keys = Arc::new(FakePortalKeys::default());
    let files = Arc::new(MemFiles::default());
    let mut w = World {
        pay: Pay::new(
            AppConfig {
                assets: AssetCatalogue::builtin(),
                public_pay_url: String::new(),
                limits: Default::default(),
                sandbox: true,
                allow_private_targets,
                billing: Default::default(),
                oauth: Default::default(),
                webhook_circuit: Default::default(),
                events_kept: pay_domain::webhooks::EVENTS_KEPT_DEFAULT,
            },
            Stores::all_in(store.clone()),
            Adapters {
                clock: clock.clone(),
                crypto: crypto.clone(),
                sealer: sealer.clone(),
                signer: signer.clone(),
                wall_clock: wall.clone(),
                processor: processor.clone(),
                prices: Arc::new(FakePrices),
                portal_keys: portal_keys.clone(),
                files: files.clone(),
            },
        ),
        store,
        crypto,
        clock,
        sealer,
        signer,
        wall,
        processor,
        portal_keys,
        files,
        allow_private_targets,
    };
    w.rebuild(true);
    w
}

impl World {
    /// Builds the service again over the same fakes, with the sandbox on or off.
    fn rebuild(&mut self, sandbox: bool) {
        self.pay = Pay::new(
            AppConfig {
                assets: AssetCatalogue::builtin(),
                public_pay_url: "https://pay.example".into(),
                limits: pay_domain::kernel::ratelimit::RateLimits::default(),
                sandbox,
                allow_private_targets: self.allow_private_targets,
                billing: Default::default(),
                oauth: Default::default(),
                webhook_circuit: Default::default(),
                events_kept: pay_domain::webhooks::EVENTS_KEPT_DEFAULT,
            },
            Stores::all_in(self.store.clone()),
            Adapters {
                clock: self.clock.clone(),
                crypto: self.crypto.clone(),
                sealer: self.sealer.clone(),
                signer: self.signer.clone(),
                wall_clock: self.wall.clone(),
                processor: self.processor.clone(),
                prices: Arc::new(FakePrices),
                portal_keys: self.portal_keys.clone(),
                files: self.files.clone(),
            },
        );
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn advance(&self, d: Duration) {
        self.clock.advance(d);
    }

    fn tenant(&self, company: &str, email: &str) -> BootstrapOutcome {
        self.pay
            .tenancy()
            .bootstrap(company, email, &Secret::new(PW))
            .unwrap()
    }

    fn partner_of(&self, b: &BootstrapOutcome) -> PartnerId {
        self.store
            .tables()
            .integrations
            .iter()
            .find(|i| i.integration.key_id == b.key_id)
            .unwrap()
            .integration
            .partner_id
    }

    fn key_principal(&self, b: &BootstrapOutcome) -> Principal {
        self.pay
            .tenancy()
            .authenticate_api_key(
                Some(b.key_id.as_str()),
                b.key_secret.as_ref().map(Secret::expose),
            )
            .unwrap()
    }

    fn sign_in(&self, email: &str) -> (LoginOutcome, SignedIn) {
        let out = self
            .pay
            .tenancy()
            .login(email, &Secret::new(PW), ADDR)
            .unwrap();
        let signed_in = self
            .pay
            .tenancy()
            .authenticate_sign_in(out.session_token.expose())
            .unwrap();
        (out, signed_in)
    }

    /// Adds a new user with `role` to `company` and signs them in.
    fn member(&self, company: CompanyId, email: &str, role: Role) -> SignedIn {
        self.pay
            .tenancy()
            .add_member(company, email, &Secret::new(PW), role)
            .unwrap();
        self.sign_in(email).1
    }

    fn sign_in_principal(&self, s: &SignedIn) -> Principal {
        self.pay.tenancy().sign_in_principal(s).unwrap()
    }

    fn new_link(&self, p: &Principal) -> PaymentLink {
        self.pay.links().create_link(p, amount("10")).unwrap()
    }
}

fn amount(a: &str) -> CreateLinkInput {
    CreateLinkInput {
        amount: a.into(),
        ..Default::default()
    }
}

fn grant(company: CompanyId, id: u128, scopes: &[Scope]) -> Principal {
    Principal {
        company_id: company,
        credential: Credential::OAuthGrant {
            grant_id: uuid::Uuid::from_u128(id),
            scopes: scopes.to_vec(),
            dpop_bound: false,
        },
    }
}

/// The `Invalid(FieldError)` refusal of a context error, if it is one.
trait AsInvalid: std::fmt::Debug {
    fn invalid(&self) -> Option<&FieldError>;
}

macro_rules! as_invalid {
    ($($t:ident),*) => {
        $(impl AsInvalid for $t {
            fn invalid(&self) -> Option<&FieldError> {
                match self {
                    $t::Invalid(f) => Some(f),
                    _ => None,
                }
            }
        })*
    };
}

as_invalid!(
    TenancyError,
    LinkError,
    CheckoutError,
    WebhookError,
    MailError,
    SettingsError,
    SandboxError
);

impl AsInvalid for FieldError {
    fn invalid(&self) -> Option<&FieldError> {
        Some(self)
    }
}

fn field_of<T: std::fmt::Debug, E: AsInvalid>(r: Result<T, E>) -> String {
    match r.as_ref().map_err(|e| (e.invalid(), e)) {
        Err((Some(f), _)) => f.field.clone(),
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn is_alnum(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn integration_input(slug: &str) -> NewIntegrationInput {
    NewIntegrationInput {
        name: "Shop backend".into(),
        app_slug: slug.into(),
        allowed_origins: vec!["https://shop.example".into()],
    }
}

const LINK_NOT_FOUND: NotFound = NotFound {
    kind: "Payment link",
};

// =====================================================================================
// 1. bootstrap
// =====================================================================================

#[test]
fn bootstrap_creates_user_company_settings_and_key() {
    let w = world();
    let out = w
        .pay
        .tenancy()
        .bootstrap("  Acme  ", "  Ops@Acme.EXAMPLE ", &Secret::new(PW))
        .unwrap();
    assert!(out.created);
    let secret = out
        .key_secret
        .clone()
        .expect("the secret is shown on creation");
    let s = secret.expose();
    assert!(s.starts_with("mksec_"), "{s}");
    assert_eq!(s.len(), "mksec_".len() + 43);
    assert!(is_alnum(&s["mksec_".len()..]));
    assert!(out.key_id.as_str().starts_with("mk_pay_"));
    assert_eq!(out.key_id.as_str().len(), "mk_pay_".len() + 24);
    assert!(out.form_key_id.as_str().starts_with("pk_pay_"));
    assert_eq!(out.form_key_id.as_str().len(), "pk_pay_".len() + 24);
    assert_eq!(w.store.calls("create_tenant"), 1);

    let t = w.store.snapshot();
    assert_eq!(t.users.len(), 1);
    let user = &t.users[0];
    assert_eq!(user.id, out.user_id);
    assert_eq!(user.email, "ops@acme.example");
    assert_eq!(user.password_hash, format!("h:{PW}"));
    assert_eq!(user.created_at, w.now());

    assert_eq!(t.companies.len(), 1);
    let (company, settings) = &t.companies[0];
    assert_eq!(company.id, out.company_id);
    assert_eq!(company.name, "Acme");
    assert_eq!(company.theme, Theme::System);
    assert_eq!(company.created_at, w.now());
    assert_eq!(
        *settings,
        PaySettings::new_company_default(&AssetCatalogue::builtin())
    );

    assert_eq!(
        t.members,
        vec![MemberRow {
            user: out.user_id,
            company: out.company_id,
            role: Role::Owner,
            at: w.now(),
        }]
    );

    assert_eq!(t.integrations.len(), 1);
    let key = &t.integrations[0];
    assert_eq!(key.secret_digest, SecretDigest(format!("d:{s}")));
    let i = &key.integration;
    assert_eq!(i.company_id, out.company_id);
    assert_eq!(i.key_id, out.key_id);
    assert_eq!(i.form_key_id, out.form_key_id);
    assert_eq!(i.name, "Default key");
    assert_eq!(i.app_slug, "pay");
    assert!(i.allowed_origins.is_empty());
    assert!(i.enabled);
    assert_eq!(i.created_at, w.now());
    assert_eq!(i.last_used_at, None);

    // The returned pair authenticates for the new company.
    let p = w
        .pay
        .tenancy()
        .authenticate_api_key(Some(out.key_id.as_str()), Some(s))
        .unwrap();
    assert_eq!(p.company_id, out.company_id);
}

#[test]
fn bootstrap_is_idempotent_on_the_normalised_email() {
    let w = world();
    let first = w.tenant("Acme", "ops@acme.example");
    // A newer key must not change which key bootstrap reports (the first one).
    w.advance(Duration::minutes(1));
    let (_, owner) = w.sign_in("ops@acme.example");
    w.pay
        .tenancy()
        .create_integration(&owner, first.company_id, integration_input("pay"))
        .unwrap();

    w.store.reset_calls();
    let before = w.store.snapshot();
    let again = w
        .pay
        .tenancy()
        .bootstrap("Another name", " OPS@Acme.Example", &Secret::new(PW))
        .unwrap();
    assert!(!again.created);
    assert!(again.key_secret.is_none(), "a secret is never shown twice");
    assert_eq!(again.company_id, first.company_id);
    assert_eq!(again.user_id, first.user_id);
    assert_eq!(again.key_id, first.key_id);
    assert_eq!(again.form_key_id, first.form_key_id);
    assert_eq!(w.store.writes(), 0);
    assert_eq!(w.store.snapshot(), before);
}

#[test]
fn bootstrap_refuses_bad_input_and_writes_nothing() {
    let w = world();
    let short = Secret::new("123456789"); // 9 characters
    assert_eq!(
        field_of(
            w.pay
                .tenancy()
                .bootstrap("Acme", "ops@acme.example", &short)
        ),
        "password"
    );
    for bad in [
        "not-an-email",
        "",
        "a@b",
        "two words@acme.example",
        "@acme.example",
    ] {
        assert_eq!(
            field_of(w.pay.tenancy().bootstrap("Acme", bad, &Secret::new(PW))),
            "email",
            "{bad:?}"
        );
    }
    assert_eq!(
        field_of(
            w.pay
                .tenancy()
                .bootstrap("   ", "ops@acme.example", &Secret::new(PW))
        ),
        "company"
    );
    assert_eq!(w.store.writes(), 0);
    assert_eq!(w.store.snapshot(), Tables::default());
    assert_eq!(w.crypto.hash_calls.load(Ordering::SeqCst), 0);

    // Exactly the minimum length is accepted.
    let ten = Secret::new("1234567890");
    assert!(
        w.pay
            .tenancy()
            .bootstrap("Acme", "ops@acme.example", &ten)
            .unwrap()
            .created
    );
}

// =====================================================================================
// 2. authenticate_api_key
// =====================================================================================

#[test]
fn api_key_with_a_missing_header_is_unauthorized() {
    let w = world();
    let b = w.tenant("Acme", "ops@acme.example");
    let secret = b.key_secret.as_ref().unwrap().expose();
    assert_eq!(
        w.pay.tenancy().authenticate_api_key(None, None),
        Err(Denied::Unauthenticated.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_api_key(Some(b.key_id.as_str()), None),
        Err(Denied::Unauthenticated.into())
    );
    assert_eq!(
        w.pay.tenancy().authenticate_api_key(None, Some(secret)),
        Err(Denied::Unauthenticated.into())
    );
    assert_eq!(w.store.calls("touch_integration"), 0);
}

#[test]
fn api_key_wrong_unknown_or_disabled_is_invalid_credentials() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let b = w.tenant("Beta", "ops@beta.example");
    let a_secret = a.key_secret.as_ref().unwrap().expose();
    let b_secret = b.key_secret.as_ref().unwrap().expose();
    let bad = |key: &str, secret: &str| {
        assert_eq!(
            w.pay
                .tenancy()
                .authenticate_api_key(Some(key), Some(secret)),
            Err(Denied::InvalidCredentials.into()),
            "{key} / {secret}"
        );
    };
    // Malformed key ids.
    bad("mk_pay_short", a_secret);
    bad(&a.form_key_id.to_string(), a_secret);
    bad(&format!("{}-", a.key_id), a_secret);
    bad("", a_secret);
    // Well-formed but unknown.
    bad(&format!("mk_pay_{}", "Z".repeat(24)), a_secret);
    // Wrong secret, another key's secret, the secret without its prefix.
    bad(a.key_id.as_str(), &format!("mksec_{}", "x".repeat(43)));
    bad(a.key_id.as_str(), b_secret);
    bad(a.key_id.as_str(), &a_secret["mksec_".len()..]);
    bad(a.key_id.as_str(), "");
    // Disabled.
    let partner = w.partner_of(&a);
    w.store
        .set_integration_enabled(a.company_id, partner, false)
        .unwrap();
    bad(a.key_id.as_str(), a_secret);
    assert_eq!(w.store.calls("touch_integration"), 0);
    // B's pair still works.
    assert!(w
        .pay
        .tenancy()
        .authenticate_api_key(Some(b.key_id.as_str()), Some(b_secret))
        .is_ok());
}

#[test]
fn api_key_secret_must_start_with_mksec() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    // Keys whose stored digest matches their secret: one prefixed, one not.
    let insert = |n: u128, secret: &str| -> KeyId {
        let key_id = KeyId::from_random(&format!("{:0>24}", n)).unwrap();
        w.store
            .insert_integration(&StoredIntegration {
                integration: Integration {
                    partner_id: PartnerId(uuid::Uuid::from_u128(1_000_000 + n)),
                    company_id: a.company_id,
                    key_id: key_id.clone(),
                    form_key_id: FormKeyId::from_random(&format!("{:0>24}", n)).unwrap(),
                    name: "manual".into(),
                    app_slug: "pay".into(),
                    allowed_origins: vec![],
                    enabled: true,
                    created_at: w.now(),
                    last_used_at: None,
                },
                secret_digest: SecretDigest(format!("d:{secret}")),
            })
            .unwrap();
        key_id
    };
    let plain = format!("xxsec_{}", "p".repeat(43));
    let prefixed = format!("mksec_{}", "p".repeat(43));
    let plain_key = insert(777, &plain);
    let good_key = insert(778, &prefixed);
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_api_key(Some(plain_key.as_str()), Some(&plain)),
        Err(Denied::InvalidCredentials.into())
    );
    // The fixture itself is sound: the prefixed twin authenticates.
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_api_key(Some(good_key.as_str()), Some(&prefixed))
            .map(|p| p.company_id),
        Ok(a.company_id)
    );
}

#[test]
fn api_key_success_resolves_the_company_and_touches_once_a_minute() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    w.tenant("Beta", "ops@beta.example");
    let partner = w.partner_of(&a);
    let t0 = w.now();

    let p = w.key_principal(&a);
    assert_eq!(
        p,
        Principal {
            company_id: a.company_id,
            credential: Credential::ApiKey {
                partner_id: partner
            },
        }
    );
    assert_eq!(w.store.calls("touch_integration"), 1);
    let last_used = |w: &World| {
        w.store
            .stored_integration(partner)
            .unwrap()
            .integration
            .last_used_at
    };
    assert_eq!(last_used(&w), Some(t0));

    w.advance(Duration::seconds(59));
    w.key_principal(&a);
    assert_eq!(
        w.store.calls("touch_integration"),
        1,
        "within 59 s: no write"
    );
    assert_eq!(last_used(&w), Some(t0));

    w.advance(Duration::seconds(1));
    w.key_principal(&a);
    assert_eq!(
        w.store.calls("touch_integration"),
        2,
        "at 60 s: written again"
    );
    assert_eq!(last_used(&w), Some(t0.plus(Duration::seconds(60))));

    w.advance(Duration::seconds(30));
    w.key_principal(&a);
    assert_eq!(w.store.calls("touch_integration"), 2);
}

// =====================================================================================
// 3. login, sessions, CSRF, logout
// =====================================================================================

#[test]
fn login_unknown_email_and_wrong_password_look_the_same() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    w.crypto.reset_verify_calls();
    w.store.reset_calls();

    assert_eq!(
        w.pay
            .tenancy()
            .login("nobody@acme.example", &Secret::new(PW), ADDR)
            .map(|_| ()),
        Err(InvalidLogin.into())
    );
    assert_eq!(
        w.crypto.verify_calls(),
        vec![None],
        "unknown user still verifies once"
    );

    assert_eq!(
        w.pay
            .tenancy()
            .login("ops@acme.example", &Secret::new("wrong password"), ADDR)
            .map(|_| ()),
        Err(InvalidLogin.into())
    );
    assert_eq!(w.crypto.verify_calls(), vec![None, Some(format!("h:{PW}"))]);
    // Both attempts were counted before the check, in the e-mail and address's bucket and in
    // the address's own.
    assert_eq!(w.store.calls("rate_hit"), 4);
    assert_eq!(w.store.snapshot().rate_hits.len(), 4);
    assert_eq!(w.store.calls("insert_sign_in"), 0);
    assert!(w.store.snapshot().sessions.is_empty());
}

fn fail_login(w: &World, email: &str, addr: &str) {
    assert_eq!(
        w.pay
            .tenancy()
            .login(email, &Secret::new("wrong password"), addr)
            .map(|_| ()),
        Err(InvalidLogin.into())
    );
}

fn login_result(w: &World, email: &str, addr: &str) -> Result<(), TenancyError> {
    w.pay
        .tenancy()
        .login(email, &Secret::new(PW), addr)
        .map(|_| ())
}

#[test]
fn ten_failures_lock_the_email_and_address_for_the_window() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    w.tenant("Beta", "ops@beta.example");
    for i in 0..10 {
        // Case and spaces do not make a new throttle key.
        let email = if i % 2 == 0 {
            "ops@acme.example"
        } else {
            " OPS@acme.example"
        };
        fail_login(&w, email, ADDR);
    }
    let locked = Err(RateLimited {
        retry_after_secs: 900,
    }
    .into());
    // The 11th attempt is refused even with the right password.
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), locked);
    assert_eq!(login_result(&w, "Ops@Acme.Example", ADDR), locked);
    assert_eq!(w.store.calls("insert_sign_in"), 0);
    // The pair is locked, not the e-mail nor the address.
    assert_eq!(login_result(&w, "ops@acme.example", "198.51.100.1"), Ok(()));
    assert_eq!(login_result(&w, "ops@beta.example", ADDR), Ok(()));

    w.advance(Duration::minutes(15) - Duration::seconds(1));
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), locked);
    w.advance(Duration::seconds(2));
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), Ok(()));
}

#[test]
fn failures_across_accounts_lock_the_address() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    let cap = pay_domain::kernel::ratelimit::RateLimits::default().login_per_address;
    // Successes are not counted.
    for _ in 0..3 {
        assert_eq!(login_result(&w, "ops@acme.example", ADDR), Ok(()));
    }
    for i in 0..cap.max {
        fail_login(&w, &format!("user{i}@acme.example"), ADDR);
    }
    let locked = Err(RateLimited {
        retry_after_secs: 900,
    }
    .into());
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), locked);
    // Another address is not locked.
    assert_eq!(login_result(&w, "ops@acme.example", "198.51.100.1"), Ok(()));
    w.advance(Duration::minutes(15) + Duration::seconds(1));
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), Ok(()));
}

#[test]
fn the_window_slides_over_old_failures() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    // One failure a minute: T0 .. T0+9m.
    for _ in 0..10 {
        fail_login(&w, "ops@acme.example", ADDR);
        w.advance(Duration::minutes(1));
    }
    // Now T0+10m: all ten in the window.
    assert!(matches!(
        login_result(&w, "ops@acme.example", ADDR),
        Err(TenancyError::RateLimited(_))
    ));
    // T0+15m+1s: the failure at T0 has left the window, nine remain.
    w.advance(Duration::minutes(5) + Duration::seconds(1));
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), Ok(()));
}

#[test]
fn a_successful_login_clears_the_failures() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    for _ in 0..9 {
        fail_login(&w, "ops@acme.example", ADDR);
    }
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), Ok(()));
    // The account's failures are forgotten; the address keeps its nine failures, not the
    // success.
    assert_eq!(w.store.snapshot().rate_hits.len(), 9);
    // Without the clear these would make 18 in the window.
    for _ in 0..9 {
        fail_login(&w, "ops@acme.example", ADDR);
    }
    assert_eq!(login_result(&w, "ops@acme.example", ADDR), Ok(()));
}

#[test]
fn login_issues_a_twelve_hour_session() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let t0 = w.now();
    let out = w
        .pay
        .tenancy()
        .login(" Ops@Acme.Example ", &Secret::new(PW), ADDR)
        .unwrap();
    assert_eq!(out.expires_at, t0.plus(Duration::hours(12)));
    let token = out.session_token.expose().to_owned();
    assert!(token.starts_with("pss_"));
    assert_eq!(token.len(), 4 + 43);
    // The CSRF token is the session's own: derived from its token under its own label.
    assert_eq!(out.csrf_token.expose(), format!("d:pay-csrf|{token}"));

    let sessions = w.store.snapshot().sessions;
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s.user_id, a.user_id);
    assert_eq!(s.company_id, a.company_id);
    assert_eq!(s.created_at, t0);
    assert_eq!(s.expires_at, out.expires_at);
    assert_eq!(s.token_digest, SecretDigest(format!("d:{token}")));
    assert_eq!(
        s.csrf_digest,
        SecretDigest(format!("d:{}", out.csrf_token.expose()))
    );

    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_sign_in(&token)
            .unwrap()
            .sign_in,
        s.clone()
    );
    w.advance(Duration::hours(12) - Duration::milliseconds(1));
    assert!(w.pay.tenancy().authenticate_sign_in(&token).is_ok());
    w.advance(Duration::milliseconds(1));
    assert_eq!(
        w.pay.tenancy().authenticate_sign_in(&token).map(|_| ()),
        Err(Denied::Unauthenticated.into()),
        "expired at expires_at"
    );
    w.advance(Duration::hours(1));
    assert_eq!(
        w.pay.tenancy().authenticate_sign_in(&token).map(|_| ()),
        Err(Denied::Unauthenticated.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_sign_in("pss_unknown")
            .map(|_| ()),
        Err(Denied::Unauthenticated.into())
    );
}

#[test]
fn csrf_token_must_be_the_sessions_own() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    let (out, s) = w.sign_in("ops@acme.example");
    let (other_out, _) = w.sign_in("ops@acme.example");
    assert_eq!(
        w.pay
            .tenancy()
            .check_csrf(&s, Some(out.csrf_token.expose())),
        Ok(())
    );
    assert_eq!(
        w.pay.tenancy().check_csrf(&s, None),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay.tenancy().check_csrf(&s, Some("")),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay.tenancy().check_csrf(&s, Some("wrong")),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .check_csrf(&s, Some(out.session_token.expose())),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .check_csrf(&s, Some(other_out.csrf_token.expose())),
        Err(Denied::Forbidden.into())
    );
    // A page holding the session cookie embeds the same token the JSON sign-in returned;
    // another session's token does not give it.
    assert_eq!(
        w.pay
            .tenancy()
            .page_csrf(&s, out.session_token.expose())
            .map(|c| c.expose().to_owned()),
        Ok(out.csrf_token.expose().to_owned())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .page_csrf(&s, other_out.session_token.expose())
            .map(|_| ()),
        Err(Denied::Unauthenticated.into())
    );
}

#[test]
fn logout_removes_only_that_session() {
    let w = world();
    w.tenant("Acme", "ops@acme.example");
    let (one, _) = w.sign_in("ops@acme.example");
    let (two, _) = w.sign_in("ops@acme.example");
    assert_eq!(w.store.snapshot().sessions.len(), 2);
    w.pay.tenancy().logout(one.session_token.expose()).unwrap();
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_sign_in(one.session_token.expose())
            .map(|_| ()),
        Err(Denied::Unauthenticated.into())
    );
    assert!(w
        .pay
        .tenancy()
        .authenticate_sign_in(two.session_token.expose())
        .is_ok());
    let sessions = w.store.snapshot().sessions;
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        sessions[0].token_digest,
        SecretDigest(format!("d:{}", two.session_token.expose()))
    );
}

// =====================================================================================
// 4. session principal and key management
// =====================================================================================

#[test]
fn session_principal_carries_the_role_and_members_cannot_write() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let (_, owner) = w.sign_in("ops@acme.example");
    assert_eq!(
        w.sign_in_principal(&owner),
        Principal {
            company_id: a.company_id,
            credential: Credential::SignIn {
                sign_in_id: owner.sign_in.id,
                user_id: a.user_id,
                role: Role::Owner,
            },
        }
    );

    let member = w.member(a.company_id, "m@acme.example", Role::Member);
    let p = w.sign_in_principal(&member);
    assert_eq!(p.company_id, a.company_id);
    assert!(matches!(
        p.credential,
        Credential::SignIn {
            role: Role::Member,
            ..
        }
    ));
    assert_eq!(
        p.authorize(Scope::PaymentLinksWrite),
        Err(Denied::Forbidden)
    );
    assert_eq!(p.authorize(Scope::PaymentLinksRead), Ok(()));
    assert_eq!(
        w.pay.links().create_link(&p, amount("1")).map(|_| ()),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(w.store.calls("insert_link"), 0);
    assert_eq!(w.pay.links().list_links(&p), Ok(vec![]));
}

#[test]
fn session_principal_of_a_removed_membership_is_forbidden() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let member = w.member(a.company_id, "m@acme.example", Role::Member);
    w.store.write().members.retain(|m| m.role != Role::Member);
    assert_eq!(
        w.pay.tenancy().sign_in_principal(&member),
        Err(Denied::Forbidden.into())
    );
}

#[test]
fn creating_keys_needs_membership_and_settings_manage() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let b = w.tenant("Beta", "ops@beta.example");
    let admin = w.member(a.company_id, "admin@acme.example", Role::Admin);
    let member = w.member(a.company_id, "m@acme.example", Role::Member);
    w.store.reset_calls();

    assert_eq!(
        w.pay
            .tenancy()
            .create_integration(&admin, b.company_id, integration_input("pay"))
            .map(|_| ()),
        Err(Denied::Forbidden.into()),
        "not a member of B"
    );
    assert_eq!(
        w.pay
            .tenancy()
            .create_integration(&member, a.company_id, integration_input("pay"))
            .map(|_| ()),
        Err(Denied::Forbidden.into()),
        "member without settings.manage"
    );
    // The role is checked before the body.
    assert_eq!(
        w.pay
            .tenancy()
            .create_integration(&member, a.company_id, integration_input("shop"))
            .map(|_| ()),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        field_of(w.pay.tenancy().create_integration(
            &admin,
            a.company_id,
            integration_input("shop")
        )),
        "appSlug"
    );
    assert_eq!(w.store.calls("insert_integration"), 0);

    w.advance(Duration::seconds(5));
    let (created, secret) = w
        .pay
        .tenancy()
        .create_integration(&admin, a.company_id, integration_input("pay"))
        .unwrap();
    assert_eq!(w.store.calls("insert_integration"), 1);
    assert_eq!(created.company_id, a.company_id);
    assert_eq!(created.name, "Shop backend");
    assert_eq!(created.allowed_origins, vec!["https://shop.example"]);
    assert!(created.enabled);
    assert_eq!(created.created_at, w.now());
    assert!(secret.expose().starts_with("mksec_"));
    assert_eq!(
        w.store
            .stored_integration(created.partner_id)
            .unwrap()
            .integration,
        created
    );
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_api_key(Some(created.key_id.as_str()), Some(secret.expose()))
            .map(|p| p.company_id),
        Ok(a.company_id)
    );

    // Members read, newest first; another team's list is forbidden.
    let list = w
        .pay
        .tenancy()
        .list_integrations(&member, a.company_id)
        .unwrap();
    assert_eq!(
        list.iter().map(|i| i.partner_id).collect::<Vec<_>>(),
        vec![created.partner_id, w.partner_of(&a)]
    );
    assert_eq!(
        w.pay.tenancy().list_integrations(&member, b.company_id),
        Err(Denied::Forbidden.into())
    );
}

#[test]
fn key_management_cannot_reach_another_companys_keys() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let b = w.tenant("Beta", "ops@beta.example");
    let (_, owner_a) = w.sign_in("ops@acme.example");
    let b_partner = w.partner_of(&b);
    let b_before = w.store.stored_integration(b_partner).unwrap();

    assert_eq!(
        w.pay
            .tenancy()
            .set_integration_enabled(&owner_a, a.company_id, b_partner, false),
        Err(ApiKeyNotFound.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .delete_integration(&owner_a, a.company_id, b_partner),
        Err(ApiKeyNotFound.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .set_integration_enabled(&owner_a, b.company_id, b_partner, false),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .delete_integration(&owner_a, b.company_id, b_partner),
        Err(Denied::Forbidden.into())
    );
    assert_eq!(w.store.stored_integration(b_partner), Some(b_before));
    assert!(w
        .pay
        .tenancy()
        .authenticate_api_key(
            Some(b.key_id.as_str()),
            b.key_secret.as_ref().map(Secret::expose)
        )
        .is_ok());

    // A member of A may not disable A's key either.
    let member = w.member(a.company_id, "m@acme.example", Role::Member);
    let a_partner = w.partner_of(&a);
    assert_eq!(
        w.pay
            .tenancy()
            .set_integration_enabled(&member, a.company_id, a_partner, false),
        Err(Denied::Forbidden.into())
    );

    // Its own key: disable, refused, re-enable, delete, gone.
    let disabled = w
        .pay
        .tenancy()
        .set_integration_enabled(&owner_a, a.company_id, a_partner, false)
        .unwrap();
    assert_eq!(disabled.partner_id, a_partner);
    assert!(!disabled.enabled);
    let a_pair = (
        Some(a.key_id.as_str()),
        a.key_secret.as_ref().map(Secret::expose),
    );
    assert_eq!(
        w.pay.tenancy().authenticate_api_key(a_pair.0, a_pair.1),
        Err(Denied::InvalidCredentials.into())
    );
    assert!(
        w.pay
            .tenancy()
            .set_integration_enabled(&owner_a, a.company_id, a_partner, true)
            .unwrap()
            .enabled
    );
    assert!(w
        .pay
        .tenancy()
        .authenticate_api_key(a_pair.0, a_pair.1)
        .is_ok());
    assert_eq!(
        w.pay
            .tenancy()
            .delete_integration(&owner_a, a.company_id, a_partner),
        Ok(())
    );
    assert_eq!(
        w.pay
            .tenancy()
            .delete_integration(&owner_a, a.company_id, a_partner),
        Err(ApiKeyNotFound.into())
    );
    assert_eq!(
        w.pay.tenancy().authenticate_api_key(a_pair.0, a_pair.1),
        Err(Denied::InvalidCredentials.into())
    );
}

// =====================================================================================
// 5. add_member
// =====================================================================================

#[test]
fn add_member_creates_a_new_user_with_the_role() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    w.advance(Duration::minutes(1));
    let pw = Secret::new("another long password");
    let id = w
        .pay
        .tenancy()
        .add_member(a.company_id, " New@Acme.Example ", &pw, Role::Admin)
        .unwrap();
    let user = w
        .store
        .snapshot()
        .users
        .into_iter()
        .find(|u| u.id == id)
        .unwrap();
    assert_eq!(user.email, "new@acme.example");
    assert_eq!(user.password_hash, "h:another long password");
    assert_eq!(user.created_at, w.now());
    assert_eq!(w.store.role(id, a.company_id), Ok(Some(Role::Admin)));
    let (_, signed_in) = w.sign_in_with("new@acme.example", &pw);
    assert_eq!(
        w.pay.tenancy().companies(&signed_in),
        Ok(vec![Membership {
            company_id: a.company_id,
            company_name: "Acme".into(),
            role: Role::Admin,
        }])
    );
}

impl World {
    fn sign_in_with(&self, email: &str, pw: &Secret) -> (LoginOutcome, SignedIn) {
        let out = self.pay.tenancy().login(email, pw, ADDR).unwrap();
        let s = self
            .pay
            .tenancy()
            .authenticate_sign_in(out.session_token.expose())
            .unwrap();
        (out, s)
    }
}

#[test]
fn add_member_adds_an_existing_user_and_keeps_their_password() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let b = w.tenant("Beta", "ops@beta.example");
    let hashes = w.crypto.hash_calls.load(Ordering::SeqCst);
    w.advance(Duration::minutes(1));
    let id = w
        .pay
        .tenancy()
        .add_member(
            b.company_id,
            "OPS@acme.example",
            &Secret::new("x"), // ignored for an existing user
            Role::Member,
        )
        .unwrap();
    assert_eq!(id, a.user_id);
    assert_eq!(w.crypto.hash_calls.load(Ordering::SeqCst), hashes);
    let t = w.store.snapshot();
    assert_eq!(t.users.len(), 2);
    assert_eq!(
        t.users
            .iter()
            .find(|u| u.id == a.user_id)
            .unwrap()
            .password_hash,
        format!("h:{PW}")
    );
    let (_, s) = w.sign_in("ops@acme.example");
    assert_eq!(
        w.pay
            .tenancy()
            .companies(&s)
            .unwrap()
            .into_iter()
            .map(|m| (m.company_id, m.role))
            .collect::<Vec<_>>(),
        vec![(a.company_id, Role::Owner), (b.company_id, Role::Member)]
    );
    // The session acts for the first membership.
    assert_eq!(s.sign_in.company_id, a.company_id);
}

#[test]
fn add_member_refuses_members_unknown_companies_and_bad_input() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    w.pay
        .tenancy()
        .add_member(
            a.company_id,
            "m@acme.example",
            &Secret::new(PW),
            Role::Member,
        )
        .unwrap();
    w.store.reset_calls();
    let before = w.store.snapshot();

    for email in ["ops@acme.example", " M@Acme.Example"] {
        assert_eq!(
            w.pay
                .tenancy()
                .add_member(a.company_id, email, &Secret::new(PW), Role::Admin),
            Err(FieldError::new("email", "already a member of this company").into()),
            "{email}"
        );
    }
    assert_eq!(
        w.pay.tenancy().add_member(
            CompanyId(uuid::Uuid::from_u128(u128::MAX)),
            "new@acme.example",
            &Secret::new(PW),
            Role::Member
        ),
        Err(NotFound { kind: "Company" }.into())
    );
    assert_eq!(
        field_of(w.pay.tenancy().add_member(
            a.company_id,
            "not-an-email",
            &Secret::new(PW),
            Role::Member
        )),
        "email"
    );
    assert_eq!(
        field_of(w.pay.tenancy().add_member(
            a.company_id,
            "new@acme.example",
            &Secret::new("short"),
            Role::Member
        )),
        "password"
    );
    assert_eq!(w.store.writes(), 0);
    assert_eq!(w.store.snapshot(), before);
}

// =====================================================================================
// 6. payment links
// =====================================================================================

#[test]
fn create_link_stores_an_active_link_expiring_in_a_day() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    w.advance(Duration::minutes(3));
    let now = w.now();
    let link = w.pay.links().create_link(&p, amount("12.50")).unwrap();
    assert_eq!(link.status, LinkStatus::Active);
    assert_eq!(link.company_id, a.company_id);
    assert_eq!(link.created_at, now);
    assert_eq!(link.updated_at, now);
    assert_eq!(link.expires_at, Some(now.plus(Duration::hours(24))));
    assert_eq!(link.created_by, CreatedBy::ApiKey(w.partner_of(&a)));
    assert_eq!(link.uid.as_str().len(), 22);
    assert!(is_alnum(link.uid.as_str()));
    assert_eq!(link.payload.amount.as_str(), "12.50");
    assert_eq!(
        link.payload.asset,
        AssetCatalogue::builtin()
            .default_for_new_companies()
            .asset_identifier
    );
    assert_eq!(link.payload.merchant_name.as_deref(), Some("Acme"));
    assert_eq!(w.store.stored_link(&link.uid), Some(link.clone()));

    let never = w
        .pay
        .links()
        .create_link(
            &p,
            CreateLinkInput {
                expiration_time: Some("never".into()),
                ..amount("1")
            },
        )
        .unwrap();
    assert_eq!(never.expires_at, None);
    let short = w
        .pay
        .links()
        .create_link(
            &p,
            CreateLinkInput {
                expiration_time: Some("15m".into()),
                ..amount("1")
            },
        )
        .unwrap();
    assert_eq!(short.expires_at, Some(now.plus(Duration::minutes(15))));

    // A signed-in owner is recorded as the user; an OAuth grant as the grant.
    let (_, owner) = w.sign_in("ops@acme.example");
    let by_user = w.new_link(&w.sign_in_principal(&owner));
    assert_eq!(by_user.created_by, CreatedBy::User(a.user_id));
    let g = grant(a.company_id, 42, &[Scope::PaymentLinksWrite]);
    assert_eq!(
        w.new_link(&g).created_by,
        CreatedBy::Grant(uuid::Uuid::from_u128(42))
    );

    // Invalid input writes nothing.
    let inserts = w.store.calls("insert_link");
    assert_eq!(
        field_of(w.pay.links().create_link(&p, amount("0"))),
        "amount"
    );
    assert_eq!(w.store.calls("insert_link"), inserts);
}

#[test]
fn list_links_returns_the_200_newest_of_the_company() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let b = w.tenant("Beta", "ops@beta.example");
    let p = w.key_principal(&a);
    let pb = w.key_principal(&b);
    let mut created = Vec::new();
    for i in 0..205 {
        // Pairs share a millisecond: ties are broken by id.
        if i % 2 == 0 {
            w.advance(Duration::milliseconds(1));
        }
        created.push(w.new_link(&p).uid);
    }
    w.new_link(&pb);
    // An anonymous link, newest of all, never listed.
    w.advance(Duration::seconds(1));
    let mut anon = w.new_link(&p);
    w.store.write().links.pop();
    anon.uid = LinkUid::parse("Anonymous0000000000000").unwrap();
    anon.id = PaymentLinkId(uuid::Uuid::from_u128(u128::MAX));
    anon.created_by = CreatedBy::Anonymous;
    w.store.insert_link(&anon, None).unwrap();

    let list = w.pay.links().list_links(&p).unwrap();
    assert_eq!(list.len(), 200);
    let expected: Vec<LinkUid> = created.iter().rev().take(200).cloned().collect();
    assert_eq!(
        list.into_iter().map(|l| l.uid).collect::<Vec<_>>(),
        expected
    );
}

#[test]
fn oauth_grants_see_only_their_own_links() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let key = w.key_principal(&a);
    let rw = [Scope::PaymentLinksRead, Scope::PaymentLinksWrite];
    let g1 = grant(a.company_id, 1, &rw);
    let g2 = grant(a.company_id, 2, &rw);
    let by_key = w.new_link(&key);
    w.advance(Duration::seconds(1));
    let by_g1 = w.new_link(&g1);
    w.advance(Duration::seconds(1));
    let by_g2 = w.new_link(&g2);

    assert_eq!(w.pay.links().list_links(&g1), Ok(vec![by_g1.clone()]));
    assert_eq!(w.pay.links().list_links(&g2), Ok(vec![by_g2.clone()]));
    assert_eq!(
        w.pay.links().list_links(&key),
        Ok(vec![by_g2.clone(), by_g1.clone(), by_key.clone()])
    );
    assert_eq!(w.pay.links().get_link(&g1, &by_g1.uid), Ok(by_g1.clone()));
    assert_eq!(
        w.pay.links().get_link(&g1, &by_g2.uid),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(
        w.pay.links().get_link(&g1, &by_key.uid),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(w.pay.links().get_link(&key, &by_g2.uid), Ok(by_g2.clone()));
    // Status changes go through the same visibility.
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&g1, &by_g2.uid, LinkStatus::Paused),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(w.store.calls("set_link_status"), 0);

    // Scopes.
    let write_only = grant(a.company_id, 1, &[Scope::PaymentLinksWrite]);
    assert_eq!(
        w.pay.links().list_links(&write_only),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksRead,
            dpop_bound: false
        }
        .into())
    );
    assert_eq!(
        w.pay.links().get_link(&write_only, &by_g1.uid),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksRead,
            dpop_bound: false
        }
        .into())
    );
    let read_only = grant(a.company_id, 1, &[Scope::PaymentLinksRead]);
    assert_eq!(
        w.pay
            .links()
            .create_link(&read_only, amount("1"))
            .map(|_| ()),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksWrite,
            dpop_bound: false
        }
        .into())
    );
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&read_only, &by_g1.uid, LinkStatus::Paused)
            .map(|_| ()),
        Err(Denied::MissingScope {
            scope: Scope::PaymentLinksWrite,
            dpop_bound: false
        }
        .into())
    );
}

#[test]
fn get_link_hides_anonymous_foreign_and_malformed_uids() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let b = w.tenant("Beta", "ops@beta.example");
    let p = w.key_principal(&a);
    let own = w.new_link(&p);
    let foreign = w.new_link(&w.key_principal(&b));
    let anon = PaymentLink {
        id: PaymentLinkId(uuid::Uuid::from_u128(u128::MAX)),
        uid: LinkUid::parse("Anonymous0000000000000").unwrap(),
        created_by: CreatedBy::Anonymous,
        ..own.clone()
    };
    w.store.insert_link(&anon, None).unwrap();

    assert_eq!(w.pay.links().get_link(&p, &own.uid), Ok(own.clone()));
    assert_eq!(
        w.pay.links().get_link(&p, &anon.uid),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(
        w.pay.links().get_link(&p, &foreign.uid),
        Err(LINK_NOT_FOUND.into())
    );
    // A malformed uid is no link's: it never reaches the service (the edge answers it as an
    // unknown link).
    for bad in [
        "",
        "abc",
        "Anonymous000000000000-",
        "Anonymous00000000000000",
    ] {
        assert_eq!(LinkUid::parse(bad), None, "{bad:?}");
    }
    assert_eq!(w.pay.links().list_links(&p), Ok(vec![own]));
    // Neither can be moved.
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&p, &anon.uid, LinkStatus::Paused),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&p, &foreign.uid, LinkStatus::Paused),
        Err(LINK_NOT_FOUND.into())
    );
    assert_eq!(
        w.store.stored_link(&foreign.uid).unwrap().status,
        LinkStatus::Active
    );
}

// =====================================================================================
// 7. set_link_status
// =====================================================================================

#[test]
fn set_link_status_follows_the_whole_table() {
    use LinkStatus::*;
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let moves = [
        (Active, Paused),
        (Paused, Active),
        (Active, Archived),
        (Paused, Archived),
    ];
    for from in LinkStatus::ALL {
        for to in LinkStatus::ALL {
            let link = w.new_link(&p);
            w.store.force_status(&link.uid, from);
            let before = w.store.stored_link(&link.uid).unwrap();
            w.advance(Duration::minutes(1));
            let now = w.now();
            w.store.reset_calls();
            let got = w.pay.links().set_link_status(&p, &link.uid, to);
            if from == to {
                assert_eq!(got, Ok(before.clone()), "{from}->{to}: unchanged");
                assert_eq!(w.store.calls("set_link_status"), 0, "{from}->{to}");
                assert_eq!(w.store.stored_link(&link.uid), Some(before));
            } else if moves.contains(&(from, to)) {
                let expected = PaymentLink {
                    status: to,
                    updated_at: now,
                    ..before
                };
                assert_eq!(got, Ok(expected.clone()), "{from}->{to}");
                assert_eq!(w.store.calls("set_link_status"), 1, "{from}->{to}");
                assert_eq!(w.store.stored_link(&link.uid), Some(expected));
            } else {
                assert_eq!(from, Archived);
                assert_eq!(
                    got,
                    Err(InvalidTransition { from, to }.into()),
                    "{from}->{to}"
                );
                assert_eq!(w.store.calls("set_link_status"), 0, "{from}->{to}");
                assert_eq!(w.store.stored_link(&link.uid), Some(before));
            }
        }
    }
}

/// Records what the links service tells its observers.
#[derive(Debug, Default)]
struct Heard {
    changed: AtomicU64,
}

impl pay_domain::links::ports::LinkObserver for Heard {
    fn links_changed(&self) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn observers_hear_of_each_move_and_each_stop_is_an_event_while_they_live() {
    use pay_domain::kernel::events::DomainEvent;
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let link = w.new_link(&p);
    let heard = Arc::new(Heard::default());
    let observer: Arc<dyn pay_domain::links::ports::LinkObserver> = heard.clone();
    w.pay.links().observe(&observer);
    let uid = &link.uid;
    w.pay
        .links()
        .set_link_status(&p, uid, LinkStatus::Paused)
        .unwrap();
    w.pay
        .links()
        .set_link_status(&p, uid, LinkStatus::Active)
        .unwrap();
    // No move, no word.
    w.pay
        .links()
        .set_link_status(&p, uid, LinkStatus::Active)
        .unwrap();
    w.pay
        .links()
        .set_link_status(&p, uid, LinkStatus::Archived)
        .unwrap();
    assert_eq!(heard.changed.load(Ordering::SeqCst), 3);
    // Each stop (not the activation) is a domain event, written with the move and done at once.
    let stops: Vec<_> = w
        .store
        .tables()
        .events
        .iter()
        .map(|e| (e.record.event.clone(), e.done_at.is_some()))
        .collect();
    let stopped = DomainEvent::LinkStopped {
        company: a.company_id,
        link: link.uid.clone(),
    };
    assert_eq!(stops, vec![(stopped.clone(), true), (stopped, true)]);
    // The service holds observers weakly: one that was dropped hears nothing and costs nothing.
    drop(observer);
    drop(heard);
    let other = w.new_link(&p);
    w.pay
        .links()
        .set_link_status(&p, &other.uid, LinkStatus::Paused)
        .unwrap();
}

#[test]
fn set_link_status_needs_write_rights() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let link = w.new_link(&w.key_principal(&a));
    let member = w.member(a.company_id, "m@acme.example", Role::Member);
    let p = w.sign_in_principal(&member);
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&p, &link.uid, LinkStatus::Paused),
        Err(Denied::Forbidden.into())
    );
    let (_, owner) = w.sign_in("ops@acme.example");
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&w.sign_in_principal(&owner), &link.uid, LinkStatus::Paused)
            .map(|l| l.status),
        Ok(LinkStatus::Paused)
    );
}

#[test]
fn lost_race_to_the_requested_status_returns_it_without_another_write() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let link = w.new_link(&p);
    w.advance(Duration::minutes(1));
    w.store.reset_calls();
    w.store.interfere_with_next_cas(&[LinkStatus::Paused]);
    let got = w
        .pay
        .links()
        .set_link_status(&p, &link.uid, LinkStatus::Paused)
        .unwrap();
    assert_eq!(w.store.calls("set_link_status"), 1);
    assert_eq!(got.status, LinkStatus::Paused);
    // The re-read link, as the concurrent writer left it.
    assert_eq!(Some(got.clone()), w.store.stored_link(&link.uid));
    assert_eq!(got.updated_at, w.now().minus(Duration::milliseconds(1)));
}

#[test]
fn lost_race_to_archived_is_re_decided_and_refused() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let link = w.new_link(&p);
    w.store.force_status(&link.uid, LinkStatus::Paused);
    w.store.reset_calls();
    w.store.interfere_with_next_cas(&[LinkStatus::Archived]);
    assert_eq!(
        w.pay
            .links()
            .set_link_status(&p, &link.uid, LinkStatus::Active),
        Err(InvalidTransition {
            from: LinkStatus::Archived,
            to: LinkStatus::Active,
        }
        .into())
    );
    assert_eq!(w.store.calls("set_link_status"), 1);
    assert_eq!(
        w.store.stored_link(&link.uid).unwrap().status,
        LinkStatus::Archived
    );
}

#[test]
fn lost_race_is_re_decided_from_the_new_status() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let link = w.new_link(&p);
    w.advance(Duration::minutes(1));
    w.store.reset_calls();
    // active -> archived requested; meanwhile someone paused it: paused -> archived is written.
    w.store.interfere_with_next_cas(&[LinkStatus::Paused]);
    let got = w
        .pay
        .links()
        .set_link_status(&p, &link.uid, LinkStatus::Archived)
        .unwrap();
    assert_eq!(w.store.calls("set_link_status"), 2);
    assert_eq!(got.status, LinkStatus::Archived);
    assert_eq!(got.updated_at, w.now());
    assert_eq!(Some(got), w.store.stored_link(&link.uid));
}

#[test]
fn set_link_status_gives_up_after_three_lost_races() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let link = w.new_link(&p);
    w.store.reset_calls();
    w.store
        .interfere_with_next_cas(&[LinkStatus::Paused, LinkStatus::Active, LinkStatus::Paused]);
    assert!(matches!(
        w.pay
            .links()
            .set_link_status(&p, &link.uid, LinkStatus::Archived),
        Err(LinkError::Fault(_))
    ));
    assert_eq!(w.store.calls("set_link_status"), 3);
    assert_eq!(
        w.store.stored_link(&link.uid).unwrap().status,
        LinkStatus::Paused
    );
}

// =====================================================================================
// 8. settings and destination assets
// =====================================================================================

#[test]
fn update_settings_writes_only_when_something_changed() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let defaults = PaySettings::new_company_default(&AssetCatalogue::builtin());
    w.store.reset_calls();

    assert_eq!(
        w.pay
            .settings()
            .update_settings(&p, SettingsPatch::default()),
        Ok(defaults.clone())
    );
    assert_eq!(w.store.calls("save_settings"), 0, "empty patch");
    let same = SettingsPatch {
        fee_paid_by: Some("merchant".into()),
        status: Some("active".into()),
        merchant_surcharge_percent: Some("0".into()),
        ..Default::default()
    };
    assert_eq!(
        w.pay.settings().update_settings(&p, same),
        Ok(defaults.clone())
    );
    assert_eq!(w.store.calls("save_settings"), 0, "values equal to current");

    let change = SettingsPatch {
        fee_paid_by: Some("client".into()),
        success_redirect_url: Some(Some("https://shop.example/ok".into())),
        ..Default::default()
    };
    let updated = w
        .pay
        .settings()
        .update_settings(&p, change.clone())
        .unwrap();
    let expected = PaySettings {
        fee_paid_by: FeePayer::Client,
        success_redirect_url: Some("https://shop.example/ok".into()),
        ..defaults
    };
    assert_eq!(updated, expected);
    assert_eq!(w.store.calls("save_settings"), 1);
    assert_eq!(
        w.store.stored_settings(a.company_id),
        Some(expected.clone())
    );
    assert_eq!(w.pay.settings().settings(&p), Ok(expected.clone()));

    // The same patch again is no change.
    assert_eq!(w.pay.settings().update_settings(&p, change), Ok(expected));
    assert_eq!(w.store.calls("save_settings"), 1);
}

#[test]
fn update_settings_validation_leaves_the_store_unchanged() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    w.store.reset_calls();
    let before = w.store.snapshot();
    // A valid field next to an invalid one is not written either.
    assert_eq!(
        field_of(w.pay.settings().update_settings(
            &p,
            SettingsPatch {
                fee_paid_by: Some("client".into()),
                status: Some("gone".into()),
                ..Default::default()
            }
        )),
        "status"
    );
    assert_eq!(
        field_of(w.pay.settings().update_settings(
            &p,
            SettingsPatch {
                skip_quote_acceptance: Some(true),
                merchant_surcharge_percent: Some("2".into()),
                ..Default::default()
            }
        )),
        "merchantSurchargePercent"
    );
    assert!(matches!(
        w.pay.settings().update_settings(
            &p,
            SettingsPatch {
                default_destination_asset: Some(Some("eip155:1/erc20:0xnope".into())),
                ..Default::default()
            }
        ),
        Err(SettingsError::Asset(AssetRefusal::InvalidDestinationAsset { ref field, .. }))
            if field == "defaultDestinationAsset"
    ));
    assert_eq!(w.store.calls("save_settings"), 0);
    assert_eq!(w.store.snapshot(), before);
}

#[test]
fn destination_assets_mark_exactly_the_default() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let p = w.key_principal(&a);
    let catalogue = AssetCatalogue::builtin();
    let marked = |w: &World| -> Vec<String> {
        let list = w.pay.settings().destination_assets(&p).unwrap();
        assert_eq!(
            list.iter().map(|(d, _)| d.clone()).collect::<Vec<_>>(),
            catalogue.all().to_vec(),
            "the whole catalogue, in its order"
        );
        list.into_iter()
            .filter(|(_, is_default)| *is_default)
            .map(|(d, _)| d.asset_identifier)
            .collect()
    };
    assert_eq!(
        marked(&w),
        vec![catalogue
            .default_for_new_companies()
            .asset_identifier
            .clone()]
    );

    let eth = "eip155:1/slip44:60";
    w.pay
        .settings()
        .update_settings(
            &p,
            SettingsPatch {
                default_destination_asset: Some(Some(eth.into())),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(marked(&w), vec![eth.to_owned()]);

    w.pay
        .settings()
        .update_settings(
            &p,
            SettingsPatch {
                default_destination_asset: Some(None),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(marked(&w).is_empty());
}

#[test]
fn members_read_settings_but_cannot_update_them() {
    let w = world();
    let a = w.tenant("Acme", "ops@acme.example");
    let member = w.member(a.company_id, "m@acme.example", Role::Member);
    let admin = w.member(a.company_id, "admin@acme.example", Role::Admin);
    let pm = w.sign_in_principal(&member);
    let pa = w.sign_in_principal(&admin);
    let pause = SettingsPatch {
        status: Some("paused".into()),
        ..Default::default()
    };
    w.store.reset_calls();

    assert_eq!(
        w.pay.settings().update_settings(&pm, pause.clone()),
        Err(Denied::Forbidden.into())
    );
    let read_only = grant(a.company_id, 9, &[Scope::SettingsRead]);
    assert_eq!(
        w.pay.settings().update_settings(&read_only, pause.clone()),
        Err(Denied::MissingScope {
            scope: Scope::SettingsWrite,
            dpop_bound: false
        }
        .into())
    );
    assert_eq!(w.store.calls("save_settings"), 0);
    assert_eq!(
        w.pay.settings().settings(&pm).map(|s| s.status),
        Ok(ProductStatus::Active)
    );
    assert_eq!(
        w.pay.settings().settings(&read_only).map(|s| s.status),
        Ok(ProductStatus::Active)
    );

    assert_eq!(
        w.pay
            .settings()
            .update_settings(&pa, pause)
            .map(|s| s.status),
        Ok(ProductStatus::Paused)
    );
    assert_eq!(w.store.calls("save_settings"), 1);
    assert_eq!(
        w.pay.settings().settings(&pm).map(|s| s.status),
        Ok(ProductStatus::Paused)
    );
}

#[test]
fn ready_pings_the_store() {
    let w = world();
    assert_eq!(w.pay.ready(), Ok(()));
    assert_eq!(w.store.calls("ping"), 1);
}

#[test]
fn prune_cuts_at_each_rules_window() {
    use pay_domain::kernel::ports::HealthCheck;
    use pay_domain::kernel::ratelimit::RateLimitStore;
    let w = world();
    let t = w
        .pay
        .tenancy()
        .bootstrap(
            "Acme",
            "ops@acme.example",
            &Secret::new("correct horse battery"),
        )
        .unwrap();
    let _ = t;
    // Two buckets, each with a hit now and one just past the longest window (a day).
    let old = w.now().minus(Duration::days(1) + Duration::seconds(1));
    for bucket in ["k", "b"] {
        assert!(w.store.hit(bucket, old, Duration::days(2), 10).unwrap());
        assert!(w.store.hit(bucket, w.now(), Duration::days(2), 10).unwrap());
    }
    let login = w
        .pay
        .tenancy()
        .login(
            "ops@acme.example",
            &Secret::new("correct horse battery"),
            "198.51.100.1",
        )
        .unwrap();
    assert_eq!(w.pay.prune().unwrap(), 2, "the two old hits");
    let kept = |bucket: &str| {
        w.store
            .snapshot()
            .rate_hits
            .iter()
            .filter(|(b, _)| b == bucket)
            .count()
    };
    assert_eq!((kept("k"), kept("b")), (1, 1));
    // Just over a day later the session has expired and goes too, with the two hits.
    w.advance(Duration::days(1) + Duration::seconds(1));
    assert_eq!(w.pay.prune().unwrap(), 3);
    assert_eq!(
        w.pay
            .tenancy()
            .authenticate_sign_in(login.session_token.expose())
            .unwrap_err(),
        TenancyError::Denied(Denied::Unauthenticated)
    );
    let _ = HealthCheck::ping(&*w.store);
}
