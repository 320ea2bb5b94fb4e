//! Native platform templates (the operator's `admin create-native-platform`): checked, created
//! once with the official native scopes, never changed, and the one a registration names must
//! exist (an unknown platform is `Invalid` on `platform`, a 400).

use super::*;
use pay_domain::installations::{InstallationError, NewPlatform, PlatformExists, NATIVE_SCOPES};
use pay_domain::tenancy::Scope;

fn woo() -> NewPlatform {
    NewPlatform {
        platform: "woocommerce".into(),
        name: "  WooCommerce ".into(),
        icon_url: Some("https://cdn.example/woo.png".into()),
        support_url: None,
    }
}

#[test]
fn a_template_is_created_once_with_the_native_scopes() {
    let w = world();
    let i = w.pay.installations();
    let created = i.create_platform(woo()).unwrap();
    assert_eq!(created.name, "WooCommerce");
    assert_eq!(created.created_at, w.now());
    assert_eq!(
        created.scopes,
        vec![
            Scope::CompanyRead,
            Scope::PaymentLinksRead,
            Scope::PaymentLinksWrite,
            Scope::WebhooksRead,
            Scope::WebhooksWrite,
        ]
    );
    assert_eq!(created.scopes, NATIVE_SCOPES.to_vec());
    assert_eq!(i.platform("woocommerce").unwrap(), created);
    // Immutable: the same identifier again is refused, the first kept.
    let again = NewPlatform {
        name: "Renamed".into(),
        ..woo()
    };
    assert_eq!(
        i.create_platform(again),
        Err(InstallationError::PlatformExists(PlatformExists))
    );
    assert_eq!(i.platform("woocommerce").unwrap().name, "WooCommerce");
}

#[test]
fn every_field_of_a_template_is_checked() {
    let w = world();
    let i = w.pay.installations();
    let field = |input: NewPlatform| match i.create_platform(input) {
        Err(InstallationError::Invalid(e)) => e.field,
        other => panic!("{other:?}"),
    };
    for bad in ["", "Woo", "woo commerce", "-woo", "wöo", &"w".repeat(65)] {
        let input = NewPlatform {
            platform: bad.into(),
            ..woo()
        };
        assert_eq!(field(input), "platform", "{bad:?}");
    }
    for bad in ["", "   ", "a\u{202e}b", &"n".repeat(101)] {
        let input = NewPlatform {
            name: bad.into(),
            ..woo()
        };
        assert_eq!(field(input), "name", "{bad:?}");
    }
    for bad in [
        "http://cdn.example/i.png",
        "cdn.example/i.png",
        "https://u@cdn.example/",
    ] {
        let input = NewPlatform {
            icon_url: Some(bad.into()),
            ..woo()
        };
        assert_eq!(field(input), "iconUrl", "{bad:?}");
        let input = NewPlatform {
            support_url: Some(bad.into()),
            ..woo()
        };
        assert_eq!(field(input), "supportUrl", "{bad:?}");
    }
    // The longest identifier is taken; nothing refused was written.
    let longest = NewPlatform {
        platform: "w".repeat(64),
        ..woo()
    };
    assert!(i.create_platform(longest).is_ok());
    assert_eq!(w.store.snapshot().native_platforms.len(), 1);
}

#[test]
fn a_registration_names_a_platform_that_exists() {
    let w = world();
    let i = w.pay.installations();
    i.create_platform(woo()).unwrap();
    for unknown in ["shopware", "", "Woocommerce", "woo commerce"] {
        match i.platform(unknown) {
            Err(InstallationError::Invalid(e)) => {
                assert_eq!(
                    (e.field.as_str(), e.message.as_str()),
                    ("platform", "unknown platform")
                )
            }
            other => panic!("{unknown:?}: {other:?}"),
        }
    }
}
