//! Anonymous links: settlement priorities, branding, the per-link callback and its secret, the
//! rate limit, and their events reaching the link's own URL signed with its own secret.

use super::*;
use pay_domain::links::ports::AnonymousLinkStore;
use pay_domain::links::{
    Branding, CreateAnonymousLinkInput, SettlementPriority, ANONYMOUS_COMPANY,
};
use pay_domain::webhooks::{CallbackKind, EventKind, LinkWebhook, SessionSnapshot};

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const ETH: &str = "eip155:1/slip44:60";
const HOOK: &str = "https://buyer.example/hooks";

fn input(priorities: &[(&str, &str)]) -> CreateAnonymousLinkInput {
    CreateAnonymousLinkInput {
        link: CreateLinkInput {
            amount: "5".into(),
            ..Default::default()
        },
        priorities: priorities
            .iter()
            .map(|(a, addr)| SettlementPriority {
                asset: (*a).into(),
                address: (*addr).into(),
            })
            .collect(),
        branding: Branding::default(),
        webhook_url: None,
    }
}

fn field(r: Result<(PaymentLink, Option<Secret>), LinkError>) -> String {
    match r {
        Err(LinkError::Invalid(FieldError { field, .. }))
        | Err(LinkError::Asset(AssetRefusal::InvalidDestinationAsset { field, .. })) => field,
        other => panic!("expected a field error, got {other:?}"),
    }
}

#[test]
fn the_first_priority_the_service_can_settle_wins() {
    let w = world();
    let (link, secret) = w
        .pay
        .links()
        .create_anonymous_link(
            input(&[
                ("eip155:999/erc20:0xunknown", "0xaaa"),
                (ETH, "0xbbb"),
                (BASE_USDC, "0xccc"),
            ]),
            "198.51.100.1",
        )
        .unwrap();
    assert!(secret.is_none(), "no webhookUrl, no secret");
    assert_eq!(link.company_id, ANONYMOUS_COMPANY);
    assert_eq!(link.created_by, CreatedBy::Anonymous);
    assert_eq!(link.payload.asset, ETH);
    assert_eq!(link.payload.currency, "ETH");
    assert_eq!(link.payload.settlement_address.as_deref(), Some("0xbbb"));
    assert_eq!(
        link.payload.merchant_name, None,
        "no branding name, no merchant name"
    );
    assert_eq!(link.expires_at, Some(w.now().plus(Duration::hours(24))));
    // Invisible to every merchant listing.
    assert!(w.store.tables().links.iter().any(|l| l.uid == link.uid));
}

#[test]
fn body_rules_name_their_field() {
    let w = world();
    let many: Vec<(&str, &str)> = (0..11).map(|_| (BASE_USDC, "0xabc")).collect();
    let cases: Vec<(CreateAnonymousLinkInput, &str)> = vec![
        (input(&[]), "settlement.priorities"),
        (input(&many), "settlement.priorities"),
        (
            input(&[("eip155:999/erc20:0xnope", "0xabc")]),
            "settlement.priorities",
        ),
        (
            input(&[(BASE_USDC, "")]),
            "settlement.priorities[0].address",
        ),
        (
            input(&[(ETH, "0xabc"), (BASE_USDC, "0x a")]),
            "settlement.priorities[1].address",
        ),
        (
            CreateAnonymousLinkInput {
                link: CreateLinkInput {
                    asset: Some(BASE_USDC.into()),
                    ..input(&[]).link
                },
                ..input(&[(BASE_USDC, "0xabc")])
            },
            "asset",
        ),
        (
            CreateAnonymousLinkInput {
                link: CreateLinkInput {
                    currency: Some("USDC".into()),
                    ..input(&[]).link
                },
                ..input(&[(BASE_USDC, "0xabc")])
            },
            "currency",
        ),
        (
            CreateAnonymousLinkInput {
                branding: Branding {
                    theme: Some("neon".into()),
                    ..Default::default()
                },
                ..input(&[(BASE_USDC, "0xabc")])
            },
            "branding.theme",
        ),
        (
            CreateAnonymousLinkInput {
                branding: Branding {
                    logo_url: Some("ftp://x".into()),
                    ..Default::default()
                },
                ..input(&[(BASE_USDC, "0xabc")])
            },
            "branding.logoUrl",
        ),
        (
            CreateAnonymousLinkInput {
                webhook_url: Some("http://buyer.example/hook".into()),
                ..input(&[(BASE_USDC, "0xabc")])
            },
            "webhookUrl",
        ),
        (
            CreateAnonymousLinkInput {
                link: CreateLinkInput {
                    amount: "1.1234567".into(),
                    ..input(&[]).link
                },
                ..input(&[(BASE_USDC, "0xabc")])
            },
            "amount",
        ),
    ];
    for (i, want) in cases {
        assert_eq!(
            field(w.pay.links().create_anonymous_link(i, "198.51.100.1")),
            want
        );
    }
}

#[test]
fn branding_and_the_webhook_secret() {
    let w = world();
    let i = CreateAnonymousLinkInput {
        branding: Branding {
            name: Some("Bob's stall".into()),
            logo_url: Some("https://bob.example/logo.png".into()),
            theme: Some("dark".into()),
        },
        webhook_url: Some(HOOK.into()),
        ..input(&[(BASE_USDC, "0xabc")])
    };
    let (link, secret) = w
        .pay
        .links()
        .create_anonymous_link(i, "198.51.100.1")
        .unwrap();
    let secret = secret.expect("returned once, at creation");
    assert!(secret.expose().starts_with("whsec_"));
    assert_eq!(link.payload.merchant_name.as_deref(), Some("Bob's stall"));
    assert_eq!(
        link.payload.merchant_logo_url.as_deref(),
        Some("https://bob.example/logo.png")
    );
    assert_eq!(link.payload.merchant_payment_link_theme, Some(Theme::Dark));
    let hook = w.store.link_webhook(&link.uid).unwrap().unwrap();
    assert_eq!(hook.url, HOOK);
    assert_eq!(
        hook.secret.sealed,
        FakeSealer::sealed(secret.expose(), &LinkWebhook::aad(link.uid.as_str()))
    );
}

#[test]
fn thirty_links_a_minute_per_address() {
    let w = world();
    for _ in 0..30 {
        w.pay
            .links()
            .create_anonymous_link(input(&[(BASE_USDC, "0xabc")]), "198.51.100.7")
            .unwrap();
    }
    assert_eq!(
        w.pay
            .links()
            .create_anonymous_link(input(&[(BASE_USDC, "0xabc")]), "198.51.100.7")
            .unwrap_err(),
        LinkError::RateLimited(RateLimited {
            retry_after_secs: 60
        })
    );
    // Another address is not limited; a minute later this one is free again.
    w.pay
        .links()
        .create_anonymous_link(input(&[(BASE_USDC, "0xabc")]), "198.51.100.8")
        .unwrap();
    w.advance(Duration::seconds(61));
    w.pay
        .links()
        .create_anonymous_link(input(&[(BASE_USDC, "0xabc")]), "198.51.100.7")
        .unwrap();
}

impl World {
    /// The reserved company that owns anonymous links (the store's migration creates it).
    pub(super) fn reserve_anonymous_company(&self) {
        self.store.write().companies.push((
            Company {
                id: ANONYMOUS_COMPANY,
                name: "Anonymous links".into(),
                picture_url: None,
                logo_url: None,
                theme: Theme::System,
                created_at: self.now(),
                test_clock_offset_ms: 0,
                payment_link_domain: None,
                website: None,
            },
            PaySettings::new_company_default(&AssetCatalogue::builtin()),
        ));
    }
}

#[test]
fn events_of_an_anonymous_link_go_to_its_own_url_signed_with_its_secret() {
    let w = world();
    w.reserve_anonymous_company();
    let with_hook = CreateAnonymousLinkInput {
        webhook_url: Some(HOOK.into()),
        ..input(&[(BASE_USDC, "0xabc")])
    };
    let (link, secret) = w
        .pay
        .links()
        .create_anonymous_link(with_hook, "198.51.100.1")
        .unwrap();
    let sent = w
        .pay
        .webhooks()
        .emit_link_event(&link, EventKind::Test, "test", SessionSnapshot::default())
        .unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].target, sent[0].url.as_str()),
        (CallbackKind::AnonymousLink, HOOK)
    );
    assert_eq!(sent[0].company_id, ANONYMOUS_COMPANY);
    let claimed = w.pay.webhooks().claim_due_deliveries(10).unwrap();
    w.pay.webhooks().prepare_attempt(&claimed[0]).unwrap();
    assert_eq!(
        w.signer.last().secrets,
        vec![secret.unwrap().expose().to_owned()]
    );
    // Without a webhookUrl nothing is queued.
    let (quiet, _) = w
        .pay
        .links()
        .create_anonymous_link(input(&[(BASE_USDC, "0xabc")]), "198.51.100.1")
        .unwrap();
    assert!(w
        .pay
        .webhooks()
        .emit_link_event(&quiet, EventKind::Test, "test", SessionSnapshot::default())
        .unwrap()
        .is_empty());
}
