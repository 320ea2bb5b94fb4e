//! Themes, logos, problem pages, path prefixes, origins and clocks, and escaped settlement values.

use super::*;

#[test]
fn themes_and_logos() {
    let mut v = view(LinkState::Active);
    v.theme = Theme::Dark;
    v.logo_url = Some("https://cdn.shop.example/logo.png".into());
    let logo = logo_origin(v.logo_url.as_deref().unwrap());
    assert_eq!(logo.as_deref(), Some("https://cdn.shop.example"));
    let html = render::page(
        ctx(),
        &v,
        &Screen::Choose { error: None },
        v.logo_url.as_deref(),
    );
    assert!(html.contains("class=\"t-dark\""));
    assert!(html.contains("<meta name=\"color-scheme\" content=\"dark\">"));
    assert!(html.contains("<img src=\"https://cdn.shop.example/logo.png\" alt=\"\""));
    // The dark palette applies to the dark theme and, by media query, to the system theme.
    assert!(html.contains(".t-dark{--bg:#111113"));
    assert!(html.contains("@media (prefers-color-scheme:dark){.t-system{--bg:#111113"));
    v.theme = Theme::Light;
    let html = render::page(ctx(), &v, &Screen::Choose { error: None }, None);
    assert!(html.contains("class=\"t-light\""));
    assert!(!html.contains("<img"));

    assert_eq!(
        logo_origin("https://cdn.example:8443/a.png").as_deref(),
        Some("https://cdn.example:8443")
    );
    assert_eq!(
        logo_origin("https://CDN.Example/a.png").as_deref(),
        Some("https://cdn.example")
    );
    for bad in [
        "http://cdn.example/logo.png",
        "data:image/png;base64,AAAA",
        "javascript:alert(1)",
        "https://u:p@cdn.example/a.png",
        "/logo.png",
        "not a url",
    ] {
        assert_eq!(logo_origin(bad), None, "{bad}");
    }
}

#[test]
fn problems_are_pages_too() {
    let html = render::problem(
        ctx(),
        &Problem {
            heading: "Payment link not found",
            message: HOSTILE,
        },
        None,
    );
    check(&html);
    assert!(html.contains("<h1>Payment link not found</h1>"));
    let v = view(LinkState::Active);
    let html = render::problem(
        ctx(),
        &Problem {
            heading: "Payment not found",
            message: "x",
        },
        Some(&v),
    );
    assert!(html.contains("href=\"/pay/AbCdEfGhIjKlMnOpQrStUv\">Start again"));
}

#[test]
fn a_path_prefix_reaches_forms_polls_and_links() {
    let v = view(LinkState::Active);
    let s = session(SessionStatus::Pending, json!({}));
    let c = Ctx {
        prefix: "/checkout",
        ..ctx()
    };
    let assets = AssetCatalogue::builtin();
    let html = render::page(
        c,
        &v,
        &Screen::Session {
            session: &s,
            asset: assets.get(ETH),
            error: None,
            confirmations: None,
        },
        None,
    );
    assert!(html.contains("action=\"/checkout/pay/AbCdEfGhIjKlMnOpQrStUv/s/"));
    assert!(html.contains("data-poll=\"/checkout/api/public/checkout/"));
    assert!(html.contains("data-page=\"/checkout/pay/AbCdEfGhIjKlMnOpQrStUv?session="));
}

#[test]
fn origins_prefixes_policies_and_clocks() {
    assert_eq!(
        public_origin("https://pay.example.com").as_deref(),
        Some("https://pay.example.com")
    );
    assert_eq!(
        public_origin("https://Pay.Example.com:443/x/").as_deref(),
        Some("https://pay.example.com")
    );
    assert_eq!(
        public_origin("http://127.0.0.1:8080").as_deref(),
        Some("http://127.0.0.1:8080")
    );
    assert_eq!(public_origin("nonsense"), None);
    assert_eq!(path_prefix("https://pay.example.com"), "");
    assert_eq!(path_prefix("https://pay.example.com/"), "");
    assert_eq!(path_prefix("https://example.com/checkout/"), "/checkout");

    let p = csp("abc", Some("https://cdn.example"));
    for part in [
        "default-src 'none'",
        "script-src 'nonce-abc'",
        "style-src 'nonce-abc'",
        "img-src 'self' data: https://cdn.example;",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ] {
        assert!(p.contains(part), "{part} in {p}");
    }
    assert!(csp("abc", None).contains("img-src 'self' data:;"));
    assert!(
        csp_with_form_target("abc", None, Some("https://shop.example"))
            .contains("form-action 'self' https://shop.example;")
    );

    assert_eq!(
        sentence("the payment link is paused; it takes no new payments"),
        "The payment link is paused; it takes no new payments."
    );
    assert_eq!(
        sentence("eip155:1/x is not an asset this link can be paid with"),
        "eip155:1/x is not an asset this link can be paid with."
    );
    assert_eq!(sentence("Done."), "Done.");
    assert_eq!(sentence(""), "");
    assert_eq!(clock(0), "0:00");
    assert_eq!(clock(-5), "0:00");
    assert_eq!(clock(59), "0:59");
    assert_eq!(clock(600), "10:00");
    assert_eq!(clock(3600 + 61), "1:01:01");
}

#[test]
fn settlement_values_are_escaped() {
    // Settlement amounts are typed decimals (no text can hide in them); the text members, the
    // deposit and refund addresses, are escaped wherever a page shows them.
    let v = view(LinkState::Active);
    let mut s = session(
        SessionStatus::Underpaid,
        json!({"receivedAmount": "0.004", "shortBy": "0.001"}),
    );
    s.deposit_address = Some(HOSTILE.into());
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("<dd>0.004 ETH</dd>"), "{html}");
    for status in [SessionStatus::RefundPending, SessionStatus::Refunded] {
        let s = session(status, json!({ "refundAddress": HOSTILE }));
        check(&render_session(&v, &s, None));
    }
}

#[test]
fn the_sandbox_shows_a_test_mode_badge() {
    let mut v = view(LinkState::Active);
    let html = render::page(ctx(), &v, &Screen::Choose { error: None }, None);
    assert!(!html.contains("Test mode"), "not outside the sandbox");
    v.sandbox = true;
    let choose = render::page(ctx(), &v, &Screen::Choose { error: None }, None);
    let s = session(SessionStatus::Pending, json!({}));
    for html in [choose, render_session(&v, &s, None)] {
        check(&html);
        assert!(
            html.contains("<strong class=\"test\" id=\"test-mode\">Test mode<span class=\"sr\">: a sandbox payment, no real funds move</span></strong></header>"),
            "{html}"
        );
    }
}

#[test]
fn a_payer_paying_the_fee_reads_it_beside_the_amount() {
    use pay_domain::checkout::quote::PayerFee;
    use pay_domain::kernel::amount::Decimal;
    let mut v = view(LinkState::Active);
    let html = render::page(ctx(), &v, &Screen::Choose { error: None }, None);
    assert!(
        !html.contains("id=\"fee\""),
        "the merchant pays it: no line"
    );
    v.payer_fee = Some(PayerFee {
        percent: Decimal::parse("1.5").unwrap(),
        amount: Decimal::parse("0.375").unwrap(),
    });
    let choose = render::page(ctx(), &v, &Screen::Choose { error: None }, None);
    let mut quote = session(SessionStatus::Quote, json!({}));
    quote.required_sell_amount = Decimal::parse("25.37625").unwrap();
    for html in [choose, render_session(&v, &quote, None)] {
        check(&html);
        assert!(
            html.contains("<p class=\"fee\" id=\"fee\">Processing fee, paid by you: <strong>0.375 USD</strong> (1.5 %), included in what you send.</p>"),
            "{html}"
        );
    }
    let html = render_session(&v, &quote, None);
    assert!(
        html.contains("<span class=\"amt\">12.50 USD</span>"),
        "{html}"
    );
    assert!(html.contains("25.37625 ETH"), "{html}");
}
