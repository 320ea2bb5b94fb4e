//! Rendering of every state, escaping of user input, the size budget and the CSP pieces.

use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::CheckoutView;
use pay_domain::checkout::PaymentSession;
use pay_domain::kernel::assets::AssetCatalogue;
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentLinkId, PaymentSessionId};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::{
    CreatedBy, ExpirationTime, LinkState, LinkStatus, PaymentLink, PaymentLinkPayload,
};
use pay_domain::tenancy::Theme;
use serde_json::{json, Value};

use super::render::{self, clock, logo_origin, sentence, Ctx, Problem, Screen};
use super::{csp, csp_with_form_target, path_prefix, public_origin};

/// The page budget: HTML with its inline style and script.
const MAX_PAGE_BYTES: usize = 60 * 1024;
const NONCE: &str = "n0nceN0nceN0nceN0nce12";
const ETH: &str = "eip155:1/slip44:60";
const HOSTILE: &str = "<script>alert(\"x\")</script> & 'q'";

fn t(secs: i64) -> Timestamp {
    Timestamp::from_unix_millis(1_795_327_640_000 + secs * 1000).unwrap()
}

fn ctx() -> Ctx<'static> {
    Ctx {
        nonce: NONCE,
        prefix: "",
        now: t(0),
    }
}

fn view(state: LinkState) -> CheckoutView {
    let assets = AssetCatalogue::builtin();
    CheckoutView {
        link: PaymentLink {
            id: PaymentLinkId(uuid::Uuid::from_u128(1)),
            uid: LinkUid::parse("AbCdEfGhIjKlMnOpQrStUv").unwrap(),
            company_id: CompanyId(uuid::Uuid::from_u128(2)),
            status: LinkStatus::Active,
            payload: PaymentLinkPayload {
                title: Some(format!("Order {HOSTILE}")),
                description: Some(format!("Two mugs {HOSTILE}")),
                amount: pay_domain::kernel::amount::Amount::parse("12.50", 2).unwrap(),
                fiat_currency: Some("USD".into()),
                currency: "USDC".into(),
                asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
                skip_quote_acceptance: None,
                fee_paid_by: None,
                order_id: None,
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
                merchant_name: Some(format!("Acme {HOSTILE}")),
                merchant_picture_url: None,
                merchant_logo_url: None,
                merchant_payment_link_theme: None,
                settlement_address: None,
            },
            created_at: t(-60),
            updated_at: t(-60),
            expires_at: None,
            created_by: CreatedBy::Anonymous,
            grant_subscription_id: None,
        },
        state,
        display_currency: "USD".into(),
        merchant_name: format!("Acme {HOSTILE}"),
        logo_url: None,
        theme: Theme::System,
        pay_assets: assets.all().to_vec(),
        review_required: true,
        now: t(0),
        success_url: Some("https://shop.example/thanks?order=1&x=2".into()),
        failure_url: Some("https://shop.example/sorry".into()),
        return_url: Some("https://shop.example/cart".into()),
        payer_fee: None,
        sandbox: false,
    }
}

fn session(status: SessionStatus, settlement: Value) -> PaymentSession {
    let settlement = serde_json::from_value(settlement).expect("a settlement object");
    let open = !matches!(status, SessionStatus::Quote);
    PaymentSession {
        id: PaymentSessionId(uuid::Uuid::from_u128(7)),
        link_id: PaymentLinkId(uuid::Uuid::from_u128(1)),
        company_id: CompanyId(uuid::Uuid::from_u128(2)),
        status,
        previous_status: None,
        version: 2,
        invoice_asset: "USD".into(),
        invoice_amount: pay_domain::kernel::amount::Amount::parse("12.50", 2).unwrap(),
        selected_sell_asset: ETH.into(),
        required_sell_amount: pay_domain::kernel::amount::Decimal::parse("0.005").unwrap(),
        expected_buy_amount: pay_domain::kernel::amount::Decimal::parse("12.37").unwrap(),
        destination_address: "0xmerchant".into(),
        deposit_address: open.then(|| "0x52908400098527886E0F7030069857D2E4169EE7".into()),
        channel_id: None,
        composite_channel_id: None,
        source_chain: open.then(|| "ethereum".into()),
        expires_at: t(29 * 60 + 59),
        settlement,
        error_message: None,
        created_at: t(-10),
        updated_at: t(-5),
    }
}

fn render_session(v: &CheckoutView, s: &PaymentSession, error: Option<&str>) -> String {
    let assets = AssetCatalogue::builtin();
    render::page(
        ctx(),
        v,
        &Screen::Session {
            session: s,
            asset: assets.get(&s.selected_sell_asset),
            error,
            confirmations: None,
        },
        None,
    )
}

/// Every `src`/`href`/`action` value of the page.
fn references(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["src=\"", "href=\"", "action=\"", "url("] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let end = rest.find(['"', ')']).unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
        }
    }
    out
}

/// Whether any tag carries an `on...=` attribute.
fn has_event_handler(html: &str) -> bool {
    html.split('<').skip(1).any(|tag| {
        let tag = tag.split('>').next().unwrap_or("");
        tag.split_whitespace().skip(1).any(|attr| {
            let name = attr.split('=').next().unwrap_or("").to_ascii_lowercase();
            name.len() > 2 && name.starts_with("on") && attr.contains('=')
        })
    })
}

/// Checks every page must pass: escaped input, the nonce on the one style and script, the
/// size budget, no foreign resources, the live region.
#[track_caller]
fn check(html: &str) {
    assert!(html.len() <= MAX_PAGE_BYTES, "{} bytes", html.len());
    assert!(!html.contains("<script>alert"), "unescaped user input");
    assert!(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"));
    assert_eq!(html.matches("<script").count(), 1, "one script");
    assert_eq!(html.matches("<style").count(), 1, "one style sheet");
    assert!(html.contains(&format!("<script nonce=\"{NONCE}\">")));
    assert!(html.contains(&format!("<style nonce=\"{NONCE}\">")));
    assert!(
        !html.contains(" style=\""),
        "no style attributes (the CSP refuses them)"
    );
    assert!(!has_event_handler(html), "no inline event handlers");
    assert!(html.contains("aria-live=\"polite\""));
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\""));
    for r in references(html) {
        let local = r.starts_with('/') && !r.starts_with("//");
        let merchant = r.starts_with("https://shop.example/");
        assert!(local || merchant, "foreign reference {r:?}");
    }
}

#[test]
fn the_choice_lists_every_pay_asset_in_one_form() {
    let v = view(LinkState::Active);
    let html = render::page(ctx(), &v, &Screen::Choose { error: None }, None);
    check(&html);
    assert!(html.contains("<form method=\"post\" action=\"/pay/AbCdEfGhIjKlMnOpQrStUv/start\">"));
    assert_eq!(
        html.matches("name=\"payAsset\"").count(),
        v.pay_assets.len()
    );
    assert!(html.contains(&format!("value=\"{ETH}\" required")));
    assert!(html.contains("<legend>Choose what to pay with</legend>"));
    assert!(html.contains("12.50 USD"));
    assert!(html.contains("<a href=\"https://shop.example/cart\" rel=\"noreferrer\">"));
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "no refresh while choosing"
    );
    assert!(html.contains("class=\"t-system\""));

    let html = render::page(
        ctx(),
        &v,
        &Screen::Choose {
            error: Some(HOSTILE),
        },
        None,
    );
    check(&html);
    assert!(html.contains("role=\"alert\""));
}

#[test]
fn the_review_shows_the_quote_its_expiry_and_three_actions() {
    let v = view(LinkState::Active);
    let mut s = session(SessionStatus::Quote, json!({}));
    s.expires_at = t(9 * 60 + 30);
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("<h1>Review your payment</h1>"));
    assert!(html.contains("0.005 ETH"));
    assert!(html.contains("data-left=\"570\">9:30</span>"));
    let id = "00000000-0000-0000-0000-000000000007";
    for a in ["accept", "refresh", "cancel"] {
        assert!(
            html.contains(&format!(
                "action=\"/pay/AbCdEfGhIjKlMnOpQrStUv/s/{id}/{a}\""
            )),
            "{a}"
        );
    }
    assert!(html.contains(&format!(
        "data-poll=\"/api/public/checkout/AbCdEfGhIjKlMnOpQrStUv/sessions/{id}\""
    )));
    assert!(html.contains("data-status=\"quote\""));
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "the payer is reading"
    );
    assert!(!html.contains("<svg"), "no address before acceptance");
}

#[test]
fn the_deposit_shows_address_amount_qr_and_countdown() {
    let v = view(LinkState::Active);
    let s = session(SessionStatus::Pending, json!({}));
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("<h1>Send your payment</h1>"));
    assert!(html.contains(
        "<svg class=\"qr\" role=\"img\" aria-label=\"QR code of the ETH deposit address\""
    ));
    // The QR code is the EIP-681 request: address, chain and the amount in wei in one scan.
    let request = crate::pages::checkout::qr::svg(
        "ethereum:0x52908400098527886E0F7030069857D2E4169EE7@1?value=5000000000000000",
        "QR code of the ETH deposit address",
    )
    .unwrap();
    assert!(html.contains(&request), "{html}");
    assert!(html.contains(
        "<code class=\"addr\" id=\"address\">0x52908400098527886E0F7030069857D2E4169EE7</code>"
    ));
    assert!(html
        .contains("data-copy=\"0x52908400098527886E0F7030069857D2E4169EE7\" hidden>Copy address"));
    assert!(html.contains("<span class=\"mono\" id=\"amount\">0.005</span> ETH"));
    assert!(html.contains("data-left=\"1799\">29:59</span>"));
    assert!(html.contains("on Ethereum"));
    assert!(html.contains(&format!(
        "<noscript><meta http-equiv=\"refresh\" content=\"{}\"></noscript>",
        render::NOSCRIPT_REFRESH_SECS
    )));
    assert!(html.contains("/cancel\""));
}

#[test]
fn complete_redirects_to_the_success_url_after_a_moment() {
    let v = view(LinkState::Active);
    let s = session(
        SessionStatus::Complete,
        json!({"receivedAmount": "0.006", "overpaidBy": "0.001"}),
    );
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("<h1>Payment complete</h1>"));
    let url = "https://shop.example/thanks?order=1&amp;x=2";
    assert!(html.contains(&format!("data-redirect=\"{url}\" data-delay=\"2000\"")));
    assert!(html.contains(&format!("<a class=\"btn primary\" href=\"{url}\"")));
    assert!(html.contains(&format!("content=\"3;url={url}\"")));
    assert!(
        !html.contains("data-poll=\""),
        "a finished session is not polled"
    );
    assert!(html.contains("0.001 ETH more"));

    // A success URL that is not a web URL is never followed nor linked.
    let mut v = view(LinkState::Active);
    v.success_url = Some("javascript:alert(1)".into());
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(!html.contains("javascript:"));
    assert!(!html.contains("data-redirect=\""));
}

#[test]
fn failures_link_to_the_failure_url_and_a_new_start() {
    let v = view(LinkState::Active);
    for (status, previous, heading) in [
        (SessionStatus::Failed, None, "Payment failed"),
        (
            SessionStatus::Cancelled,
            Some(SessionStatus::Pending),
            "Payment cancelled",
        ),
        (
            SessionStatus::Expired,
            Some(SessionStatus::Pending),
            "This payment request expired",
        ),
        (
            SessionStatus::Expired,
            Some(SessionStatus::Quote),
            "The quote expired",
        ),
    ] {
        let mut s = session(status, json!({}));
        s.previous_status = previous;
        s.error_message = Some(format!("processor said {HOSTILE}"));
        let html = render_session(&v, &s, None);
        check(&html);
        assert!(html.contains(&format!("<h1>{heading}</h1>")), "{heading}");
        assert!(
            html.contains("href=\"https://shop.example/sorry\""),
            "{heading}"
        );
        assert!(
            html.contains("href=\"/pay/AbCdEfGhIjKlMnOpQrStUv\">Try again"),
            "{heading}"
        );
        assert!(!html.contains("data-poll=\""));
        assert!(!html.contains("http-equiv"));
    }
    // No new start on a link that stopped.
    let mut s = session(
        SessionStatus::Expired,
        json!({"late": true, "lateAmount": "0.005"}),
    );
    s.previous_status = Some(SessionStatus::Pending);
    let html = render_session(&view(LinkState::Paused), &s, None);
    check(&html);
    assert!(!html.contains("Try again"));
    assert!(html.contains("arrived after this request ended"));
}

/// A checksummed EVM address (EIP-55's example).
const PAYER: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

#[test]
fn processing_underpaid_and_refunds() {
    let v = view(LinkState::Active);
    let html = render_session(
        &v,
        &session(
            SessionStatus::Processing,
            json!({"receivedAmount": "0.005"}),
        ),
        None,
    );
    check(&html);
    assert!(html.contains("<h1>Payment received</h1>"));
    assert!(html.contains("http-equiv=\"refresh\""));
    assert!(
        !html.contains("Confirmations"),
        "no count outside the chain processor"
    );
    // The chain processor: the least confirmed transfer's count, of those needed.
    let s = session(
        SessionStatus::Processing,
        json!({"receivedAmount": "0.005", "transfers": [
            {"txHash": "0xaa", "logIndex": null, "amount": "0.002", "blockNumber": 7, "confirmations": 2},
            {"txHash": "0xbb", "logIndex": null, "amount": "0.003", "blockNumber": 8, "confirmations": 1}]}),
    );
    let assets = AssetCatalogue::builtin();
    let html = render::page(
        ctx(),
        &v,
        &Screen::Session {
            session: &s,
            asset: assets.get(&s.selected_sell_asset),
            error: None,
            confirmations: Some(2),
        },
        None,
    );
    check(&html);
    assert!(
        html.contains("Confirmations: <strong>1 of 2</strong>"),
        "{html}"
    );
    assert!(html.contains("http-equiv=\"refresh\""));

    let s = session(
        SessionStatus::Underpaid,
        json!({"receivedAmount": "0.003", "shortBy": "0.002"}),
    );
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("<dt>Still due</dt><dd><strong>0.002 ETH</strong>"));
    assert!(html.contains("<span class=\"mono\" id=\"amount\">0.002</span>"));
    assert!(html.contains("<svg class=\"qr\""));

    let s = session(
        SessionStatus::RefundPending,
        json!({"refundReason": "link_already_paid"}),
    );
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("already paid by someone else"));
    assert!(html.contains("<label class=\"block\" for=\"refund-address\">"));
    assert!(html.contains("name=\"address\" required"));
    assert!(
        !html.contains("http-equiv"),
        "no reload while the payer types"
    );
    let html = render_session(
        &v,
        &s,
        Some("address must be an address on Ethereum (0x and 40 hex digits, EIP-55 checksummed when in mixed case); it has the wrong length"),
    );
    check(&html);
    assert!(html.contains("aria-invalid=\"true\" aria-describedby=\"refund-error\""));
    assert!(html.contains("id=\"refund-error\" role=\"alert\""));

    let s = session(
        SessionStatus::RefundPending,
        json!({"refundAddress": PAYER}),
    );
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(!html.contains("<form method=\"post\" action=\"/pay/AbCdEfGhIjKlMnOpQrStUv/s/00000000-0000-0000-0000-000000000007/refund-address\""));
    assert!(html.contains(&format!("<code>{PAYER}</code>")));
    assert!(html.contains("http-equiv=\"refresh\""));
    assert!(!html.contains("role=\"alert\""));
    // A later address was refused: the page says why, keeps the first, offers no form.
    let html = render_session(
        &v,
        &s,
        Some("a refund address was already given for this payment; it cannot be changed"),
    );
    check(&html);
    assert!(html.contains("<p class=\"err\" id=\"refund-error\" role=\"alert\">A refund address was already given for this payment; it cannot be changed.</p>"));
    assert!(html.contains(&format!("<code>{PAYER}</code>")));
    assert!(!html.contains("name=\"address\""));

    let s = session(SessionStatus::Refunded, json!({"refundAddress": PAYER}));
    let html = render_session(&v, &s, None);
    check(&html);
    assert!(html.contains("<h1>Payment refunded</h1>"));
}

#[test]
fn stopped_links_get_a_clear_page_without_forms() {
    for (state, name, heading) in [
        (LinkState::Paused, "paused", "This payment link is paused"),
        (
            LinkState::Archived,
            "archived",
            "This payment link is no longer available",
        ),
        (
            LinkState::Expired,
            "expired",
            "This payment link has expired",
        ),
    ] {
        let html = render::page(
            ctx(),
            &view(state),
            &Screen::Inactive {
                message: Some("the payment link is paused; it takes no new payments"),
            },
            None,
        );
        check(&html);
        assert!(html.contains(&format!("<h1>{heading}</h1>")));
        assert!(html.contains(&format!("data-state=\"{name}\"")));
        assert!(!html.contains("<form"), "{name}");
        assert!(html.contains("it takes no new payments"));
    }
}

mod pages;

#[test]
fn a_payment_under_way_shows_nothing_of_it_and_offers_no_start() {
    let v = view(LinkState::Active);
    for (paid, heading) in [
        (false, "A payment through this link is under way"),
        (true, "This payment link is already paid"),
    ] {
        let html = render::page(
            ctx(),
            &v,
            &Screen::UnderWay {
                paid,
                message: None,
            },
            None,
        );
        assert!(html.contains("<h1"), "{html}");
        assert!(html.contains(heading), "{heading}");
        assert!(!html.contains("<form"), "nothing to start");
        assert!(!html.contains("0x5290"), "no deposit address");
        assert!(!html.contains("data-session"), "no session");
        assert!(html.contains("Acme &lt;script&gt;"), "merchant escaped");
    }
}
