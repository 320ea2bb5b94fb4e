//! The gateway form: the form key and `Origin` checks (one answer for unknown and disabled
//! keys), the fields mapped onto the JSON route's input and created through the same path, and
//! tenancy of the links it creates.

use super::*;
use pay_domain::kernel::ids::FormKeyId;

const SHOP: &str = "https://shop.example";
/// The client address the posts come from.
const ADDR: &str = "203.0.113.7";

/// A tenant with a second integration whose allowed origins are the shop and a dev server.
struct Form {
    tenant: BootstrapOutcome,
    integration: Integration,
    key_secret: Secret,
}

impl Form {
    fn key(&self) -> &str {
        self.integration.form_key_id.as_str()
    }

    fn partner(&self) -> PartnerId {
        self.integration.partner_id
    }
}

fn form_tenant(w: &World, company: &str, email: &str) -> Form {
    let tenant = w.tenant(company, email);
    let (_, owner) = w.sign_in(email);
    let (integration, key_secret) = w
        .pay
        .tenancy()
        .create_integration(
            &owner,
            tenant.company_id,
            NewIntegrationInput {
                name: "Shop form".into(),
                app_slug: "pay".into(),
                allowed_origins: vec![SHOP.into(), "http://localhost:3000".into()],
            },
        )
        .unwrap();
    Form {
        tenant,
        integration,
        key_secret,
    }
}

fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn post(
    w: &World,
    key: &str,
    origin: Option<&str>,
    list: &[(&str, &str)],
) -> Result<PaymentLink, LinkError> {
    // Each post from its own address: these tests are about the form, not the rate limits.
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let addr = format!("198.51.{}.{}", n / 256 % 256, n % 256);
    w.pay
        .links()
        .create_link_from_form(key, origin, &addr, fields(list))
}

/// The integration's own API key, as the JSON route would act.
fn key_principal_of(w: &World, f: &Form) -> Principal {
    w.pay
        .tenancy()
        .authenticate_api_key(
            Some(f.integration.key_id.as_str()),
            Some(f.key_secret.expose()),
        )
        .unwrap()
}

#[test]
fn a_form_creates_the_link_its_api_key_would_create() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    let form = [
        ("amount", "12.50"),
        ("currency", "USDC"),
        ("title", "Order 42"),
        ("description", "Two mugs"),
        ("orderId", "42"),
        ("customerEmail", "payer@example.com"),
        ("clientId", "cus_1"),
        ("successUrl", "https://shop.example/ok"),
        ("failureUrl", "https://shop.example/fail"),
        ("returnUrl", "https://shop.example/back"),
        ("metadata[cart]", "7"),
        ("metadata[note]", "gift wrap"),
    ];
    let link = post(&w, f.key(), Some(SHOP), &form).unwrap();
    assert_eq!(link.company_id, f.tenant.company_id);
    assert_eq!(link.created_by, CreatedBy::ApiKey(f.partner()));
    assert_eq!(link.status, LinkStatus::Active);
    assert_eq!(link.expires_at, Some(w.now().plus(Duration::hours(24))));
    assert_eq!(w.store.stored_link(&link.uid), Some(link.clone()));
    let p = &link.payload;
    assert_eq!(p.amount.as_str(), "12.50");
    assert_eq!(p.title.as_deref(), Some("Order 42"));
    assert_eq!(p.order_id.as_deref(), Some("42"));
    assert_eq!(p.success_url.as_deref(), Some("https://shop.example/ok"));
    let meta = p.metadata.as_ref().unwrap();
    assert_eq!(meta["cart"], "7");
    assert_eq!(meta["note"], "gift wrap");
    assert_eq!(meta.len(), 2);

    // The JSON route with the same fields, through the integration's key: the same payload
    // (merchant name, theme, runtime mode, resolved asset all injected identically).
    let mut metadata = serde_json::Map::new();
    metadata.insert("cart".into(), "7".into());
    metadata.insert("note".into(), "gift wrap".into());
    let json = w
        .pay
        .links()
        .create_link(
            &key_principal_of(&w, &f),
            CreateLinkInput {
                amount: "12.50".into(),
                currency: Some("USDC".into()),
                title: Some("Order 42".into()),
                description: Some("Two mugs".into()),
                order_id: Some("42".into()),
                customer_email: Some("payer@example.com".into()),
                client_id: Some("cus_1".into()),
                success_url: Some("https://shop.example/ok".into()),
                failure_url: Some("https://shop.example/fail".into()),
                return_url: Some("https://shop.example/back".into()),
                metadata: Some(metadata),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(json.payload, link.payload);
    assert_eq!(json.created_by, link.created_by);
    assert_eq!(p.merchant_name.as_deref(), Some("Acme"));
}

#[test]
fn settings_decide_the_asset_as_on_the_json_route() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    let link = post(&w, f.key(), Some(SHOP), &[("amount", "5")]).unwrap();
    let default = w
        .store
        .stored_settings(f.tenant.company_id)
        .unwrap()
        .default_destination_asset
        .unwrap();
    assert_eq!(link.payload.asset, default);
    assert_eq!(link.payload.metadata, None);
    // Blank optional inputs are "not given".
    let link = post(
        &w,
        f.key(),
        Some(SHOP),
        &[("amount", "5"), ("title", ""), ("customerEmail", "")],
    )
    .unwrap();
    assert_eq!(link.payload.title, None);
    assert_eq!(link.payload.customer_email, None);
}

#[test]
fn unknown_malformed_and_disabled_keys_get_one_answer() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    let (_, owner) = w.sign_in("ops@acme.example");
    w.pay
        .tenancy()
        .set_integration_enabled(&owner, f.tenant.company_id, f.partner(), false)
        .unwrap();
    let not_found = NotFound {
        kind: "Payment form",
    };
    let unknown = FormKeyId::from_random(&"z".repeat(FormKeyId::RANDOM_LEN)).unwrap();
    for key in [
        f.key(),
        unknown.as_str(),
        "pk_pay_short",
        f.integration.key_id.as_str(),
        "",
    ] {
        // With an allowed origin and a valid body: the key decides alone.
        assert_eq!(
            post(&w, key, Some(SHOP), &[("amount", "5")]),
            Err(not_found.into()),
            "{key}"
        );
        // Origin and body are not looked at: the same answer without them.
        assert_eq!(
            post(&w, key, None, &[("bogus", "")]),
            Err(not_found.into()),
            "{key}"
        );
    }
    assert!(w.store.tables().links.is_empty());
    // Enabled again: it works.
    w.pay
        .tenancy()
        .set_integration_enabled(&owner, f.tenant.company_id, f.partner(), true)
        .unwrap();
    assert!(post(&w, f.key(), Some(SHOP), &[("amount", "5")]).is_ok());
}

#[test]
fn origin_must_be_one_of_the_allowed_origins() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    for origin in [
        None,
        Some("null"),
        Some(""),
        Some("https://evil.example"),
        Some("http://shop.example"),
        Some("https://shop.example:8443"),
        Some("https://shop.example/"),
        Some("https://sub.shop.example"),
        Some("http://localhost:3001"),
    ] {
        // Even a perfect body is refused, and nothing is written.
        assert_eq!(
            post(&w, f.key(), origin, &[("amount", "5")]),
            Err(Denied::Forbidden.into()),
            "{origin:?}"
        );
    }
    assert!(w.store.tables().links.is_empty());
    // Browsers serialise origins lower-case without the default port; stored origins are
    // compared the same way.
    for origin in [SHOP, "HTTPS://SHOP.EXAMPLE:443", "http://localhost:3000"] {
        assert!(
            post(&w, f.key(), Some(origin), &[("amount", "5")]).is_ok(),
            "{origin}"
        );
    }
}

#[test]
fn a_key_without_allowed_origins_takes_no_forms() {
    let w = world();
    let tenant = w.tenant("Acme", "ops@acme.example");
    // The bootstrap key has no allowed origins.
    assert_eq!(
        post(
            &w,
            tenant.form_key_id.as_str(),
            Some(SHOP),
            &[("amount", "5")]
        ),
        Err(Denied::Forbidden.into())
    );
}

#[test]
fn fields_are_checked_like_the_json_route() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    let field = |list: &[(&str, &str)]| field_of(post(&w, f.key(), Some(SHOP), list));
    assert_eq!(field(&[("amount", "12.5.0")]), "amount");
    assert_eq!(field(&[("amount", "1.1234567")]), "amount");
    assert_eq!(field(&[("amount", "-1")]), "amount");
    assert_eq!(field(&[("title", "no amount")]), "amount");
    assert_eq!(
        field(&[("amount", "5"), ("customerEmail", "nope")]),
        "customerEmail"
    );
    assert_eq!(
        field(&[("amount", "5"), ("successUrl", "/relative")]),
        "successUrl"
    );
    assert_eq!(
        field(&[("amount", "5"), ("title", &"t".repeat(201))]),
        "title"
    );
    assert_eq!(field(&[("amount", "5"), ("amount", "6")]), "amount");
    assert_eq!(field(&[("amount", "5"), ("metadata[]", "x")]), "metadata[]");
    let many: Vec<(String, String)> = (0..51)
        .map(|i| (format!("metadata[k{i}]"), "v".to_owned()))
        .chain([("amount".to_owned(), "5".to_owned())])
        .collect();
    assert_eq!(
        field_of(
            w.pay
                .links()
                .create_link_from_form(f.key(), Some(SHOP), ADDR, many)
        ),
        "metadata"
    );
    assert_eq!(
        post(
            &w,
            f.key(),
            Some(SHOP),
            &[("amount", "5"), ("feePaidBy", "client")]
        ),
        Err(UnknownField {
            field: "feePaidBy".into()
        }
        .into())
    );
    assert!(matches!(
        post(
            &w,
            f.key(),
            Some(SHOP),
            &[("amount", "5"), ("asset", "eip155:1/erc20:0xnope")]
        ),
        Err(LinkError::Asset(
            AssetRefusal::InvalidDestinationAsset { .. }
        ))
    ));
    assert!(w.store.tables().links.is_empty());
}

#[test]
fn a_form_post_counts_as_a_use_of_the_integration() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    assert_eq!(f.integration.last_used_at, None);
    post(&w, f.key(), Some(SHOP), &[("amount", "5")]).unwrap();
    let stored = w.store.stored_integration(f.partner()).unwrap();
    assert_eq!(stored.integration.last_used_at, Some(w.now()));
    // At most once a minute, as for API calls.
    w.store.reset_calls();
    post(&w, f.key(), Some(SHOP), &[("amount", "5")]).unwrap();
    assert_eq!(w.store.calls("touch_integration"), 0);
}

#[test]
fn form_links_belong_to_the_integrations_company() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    let other = form_tenant(&w, "Other", "ops@other.example");
    let link = post(&w, f.key(), Some(SHOP), &[("amount", "5")]).unwrap();
    let mine = key_principal_of(&w, &f);
    assert_eq!(w.pay.links().get_link(&mine, &link.uid).unwrap(), link);
    assert_eq!(w.pay.links().list_links(&mine).unwrap(), vec![link.clone()]);
    let theirs = key_principal_of(&w, &other);
    assert_eq!(
        w.pay.links().get_link(&theirs, &link.uid),
        Err(LINK_NOT_FOUND.into())
    );
    assert!(w.pay.links().list_links(&theirs).unwrap().is_empty());
}

#[test]
fn the_two_steps_check_before_reading_the_body() {
    let w = world();
    let f = form_tenant(&w, "Acme", "ops@acme.example");
    let form = w
        .pay
        .links()
        .open_gateway_form(f.key(), Some(SHOP), ADDR)
        .unwrap();
    assert_eq!(form.company_id(), f.tenant.company_id);
    let link = w
        .pay
        .links()
        .create_link_for_form(&form, fields(&[("amount", "7")]))
        .unwrap();
    assert_eq!(link.created_by, CreatedBy::ApiKey(f.partner()));
}
