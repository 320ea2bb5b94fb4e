//! The checkout page as HTML: askama templates (`templates/checkout/`) on the one base layout,
//! one self-contained document per state (the checkout's part of the style sheet and its script
//! inline under the response's CSP nonce, the QR code as inline SVG), every interpolated value
//! escaped by the kernel's escaper. Rendering is a pure function of the checkout view, the
//! session and the time, so every state is unit-tested without a server.

use askama::Template;

use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::CheckoutView;
use pay_domain::checkout::PaymentSession;
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::LinkState;
use pay_domain::tenancy::Theme;

use super::qr;
use crate::pages::layout::{html, Layout, Sheet};
use pay_domain::checkout::quote::PayerFee;
use pay_domain::kernel::html::safe_url;

/// How long the success state shows before the browser goes to the success URL.
pub const REDIRECT_DELAY_MS: u32 = 2000;
/// Without JavaScript, a waiting page reloads itself this often.
pub const NOSCRIPT_REFRESH_SECS: u32 = 5;

const JS: &str = include_str!("page.js");

/// What every page needs besides its content.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The response's CSP nonce (inline style and script).
    pub nonce: &'a str,
    /// The path of the public pay URL (`""` at the root): page and API links start with it.
    pub prefix: &'a str,
    /// Now on the service clock (countdowns).
    pub now: Timestamp,
}

/// Which screen of a link to show.
#[derive(Debug)]
pub enum Screen<'a> {
    /// Pick the asset to pay with (an active link, no session yet).
    Choose { error: Option<&'a str> },
    /// A paused, archived or expired link: no new payments.
    Inactive { message: Option<&'a str> },
    /// The link holds a payment a new start would ask for again (`PaymentUnderWay`), seen by
    /// a browser that did not start it: nothing of that payment is shown, nothing starts.
    /// `paid`: a link that takes one payment has it.
    UnderWay {
        paid: bool,
        message: Option<&'a str>,
    },
    /// One payer's session, in whatever status it is.
    Session {
        session: &'a PaymentSession,
        /// The asset the session pays with, from the catalogue.
        asset: Option<&'a DestinationAsset>,
        /// A refused refund address, shown beside the form.
        error: Option<&'a str>,
        /// The confirmations a transfer needs (the chain processor), shown while processing.
        confirmations: Option<u32>,
    },
}

/// A page about no link in particular (unknown link, refused form, server error).
#[derive(Debug)]
pub struct Problem<'a> {
    pub heading: &'a str,
    pub message: &'a str,
}

/// The `https` origin of a logo URL, for the CSP's `img-src`; `None` (no logo shown) for
/// anything else.
pub fn logo_origin(logo: &str) -> Option<String> {
    let url = url::Url::parse(logo).ok()?;
    if url.scheme() != "https" || url.host_str().is_none() || !url.username().is_empty() {
        return None;
    }
    let origin = url.origin().ascii_serialization();
    // The origin goes into a header: only characters a serialized origin can hold.
    let plain = origin
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ".-:/[]".contains(c));
    plain.then_some(origin)
}

/// The heading of a session's status, as payers read it.
fn session_heading(s: &PaymentSession) -> &'static str {
    match s.status {
        SessionStatus::Quote => "Review your payment",
        SessionStatus::Pending => "Send your payment",
        SessionStatus::Processing => "Payment received",
        SessionStatus::Complete => "Payment complete",
        SessionStatus::Underpaid => "Part of your payment arrived",
        SessionStatus::RefundPending => "Your payment will be refunded",
        SessionStatus::Refunded => "Payment refunded",
        SessionStatus::Expired if s.previous_status == Some(SessionStatus::Quote) => {
            "The quote expired"
        }
        SessionStatus::Expired => "This payment request expired",
        SessionStatus::Cancelled => "Payment cancelled",
        SessionStatus::Failed => "Payment failed",
    }
}

fn inactive_heading(state: LinkState) -> &'static str {
    match state {
        LinkState::Paused => "This payment link is paused",
        LinkState::Archived => "This payment link is no longer available",
        LinkState::Expired => "This payment link has expired",
        LinkState::Active => "This payment link is not available",
    }
}

/// A message of the domain as a sentence: a leading plain word capitalised, a final period.
/// Identifiers at the start (`eip155:1/...`) keep their case.
pub fn sentence(message: &str) -> String {
    let message = message.trim();
    let first = message.split(' ').next().unwrap_or("");
    let mut out = if !first.is_empty() && first.chars().all(|c| c.is_ascii_lowercase()) {
        let mut c = message.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    } else {
        message.to_owned()
    };
    if out.chars().last().is_some_and(char::is_alphanumeric) {
        out.push('.');
    }
    out
}

/// `m:ss` (or `h:mm:ss`) of a non-negative number of seconds.
pub fn clock(secs: i64) -> String {
    let s = secs.max(0);
    let (h, m, x) = (s / 3600, s % 3600 / 60, s % 60);
    if h > 0 {
        format!("{h}:{m:02}:{x:02}")
    } else {
        format!("{m}:{x:02}")
    }
}

fn seconds_left(ctx: &Ctx<'_>, until: Timestamp) -> i64 {
    ((until.unix_millis() - ctx.now.unix_millis()) / 1000).max(0)
}

/// A countdown the script keeps running, starting from what the server computed.
pub(super) struct Countdown {
    secs: i64,
    clock: String,
    iso: String,
    hhmm: String,
}

fn countdown(ctx: &Ctx<'_>, until: Timestamp) -> Countdown {
    let secs = seconds_left(ctx, until);
    let d = until.datetime();
    Countdown {
        secs,
        clock: clock(secs),
        iso: until.to_rfc3339(),
        hhmm: format!("{:02}:{:02}", d.hour(), d.minute()),
    }
}

/// A settlement amount as the page shows it (normalised decimal text).
fn amount_text(d: Option<Decimal>) -> Option<String> {
    d.map(|d| d.normalized().to_string())
}

/// The link's title, amount, description and the payer's fee at the top of the card.
struct Summary<'a> {
    title: &'a str,
    amount: &'a str,
    currency: &'a str,
    description: Option<&'a str>,
    fee: Option<FeeLine>,
}

/// The fee a payer pays on top of the amount, as the page shows it.
struct FeeLine {
    amount: String,
    percent: String,
}

impl<'a> Summary<'a> {
    fn of(view: &'a CheckoutView) -> Summary<'a> {
        let p = &view.link.payload;
        Summary {
            title: p.title.as_deref().unwrap_or("Amount due"),
            amount: p.amount.as_str(),
            currency: &view.display_currency,
            description: p.description.as_deref(),
            fee: view.payer_fee.map(|f: PayerFee| FeeLine {
                amount: f.amount.to_string(),
                percent: f.percent.to_string(),
            }),
        }
    }
}

/// The links under a failed, expired or refunded session.
pub(super) struct FailLinks<'a> {
    again: Option<String>,
    failure: Option<&'a str>,
    merchant: &'a str,
}

/// What a deposit needs: the QR code, the exact amount and the address.
pub(super) struct Deposit {
    qr: Option<String>,
    label: &'static str,
    amount: String,
    address: String,
}

/// The card's content below the summary, one variant per screen (`templates/checkout/body.html`).
enum Body<'a> {
    Choose {
        action: String,
        assets: &'a [DestinationAsset],
        error: Option<String>,
        next: &'static str,
    },
    Inactive {
        merchant: &'a str,
        suffix: &'static str,
        note: Option<String>,
    },
    Paid {
        merchant: &'a str,
        note: Option<String>,
    },
    UnderWay {
        merchant: &'a str,
        note: Option<String>,
    },
    Quote {
        amount: String,
        a: AssetLabel,
        left: Countdown,
        action: String,
    },
    Pending {
        deposit: Deposit,
        a: AssetLabel,
        left: Countdown,
        action: String,
    },
    Processing {
        got: String,
        a: AssetLabel,
        confirmations: Option<(u64, u32)>,
    },
    Complete {
        merchant: &'a str,
        amount: String,
        a: AssetLabel,
        over: Option<String>,
        success: Option<&'a str>,
    },
    Underpaid {
        got: String,
        due: String,
        a: AssetLabel,
        deposit: Option<Deposit>,
    },
    Refund {
        why: &'static str,
        received: Option<String>,
        a: AssetLabel,
        address: Option<&'a str>,
        error: Option<String>,
        action: String,
    },
    Refunded {
        address: Option<&'a str>,
        links: FailLinks<'a>,
    },
    Ended {
        label: &'static str,
        why: String,
        late: Option<String>,
        a: AssetLabel,
        merchant: &'a str,
        links: FailLinks<'a>,
    },
    Problem {
        message: String,
        again: Option<String>,
    },
}

/// One checkout document.
#[derive(Template)]
#[template(path = "checkout/page.html")]
struct CheckoutPage<'a> {
    layout: Layout<'a>,
    /// The logo URL, already checked by `logo_origin`.
    logo: Option<&'a str>,
    /// The merchant's name in the header.
    shown: &'a str,
    /// The sandbox's test-mode badge.
    sandbox: bool,
    heading: &'a str,
    /// Attributes of `<main>` the script reads (`data-state`, `data-poll`, ...).
    attrs: Vec<(&'static str, String)>,
    summary: Option<Summary<'a>>,
    body: Body<'a>,
    /// "Back to the merchant": the return URL and the merchant's name.
    back: Option<(&'a str, &'a str)>,
}

/// A URL fit for `href` (`safe_url`'s check), as written: the template escapes it.
fn web_url(url: Option<&str>) -> Option<&str> {
    url.filter(|u| safe_url(u).is_some())
}

struct Doc<'a> {
    ctx: Ctx<'a>,
    view: Option<&'a CheckoutView>,
    logo: Option<&'a str>,
    heading: &'a str,
    attrs: Vec<(&'static str, String)>,
    summary: bool,
    body: Body<'a>,
    refresh: Option<String>,
}

fn document(d: Doc<'_>) -> String {
    let merchant = d.view.map_or("", |v| v.merchant_name.as_str());
    let title = if merchant.is_empty() {
        d.heading.to_owned()
    } else {
        format!("{} - {merchant}", d.heading)
    };
    let mut layout =
        Layout::card(d.ctx.nonce, &title).themed(d.view.map_or(Theme::System, |v| v.theme));
    layout.css = Sheet::Checkout.css();
    layout.script = Some(JS);
    layout.refresh = d.refresh;
    html(&CheckoutPage {
        layout,
        logo: d.logo,
        shown: if merchant.is_empty() {
            "Payment"
        } else {
            merchant
        },
        sandbox: d.view.is_some_and(|v| v.sandbox),
        heading: d.heading,
        attrs: d.attrs,
        summary: d.view.filter(|_| d.summary).map(Summary::of),
        body: d.body,
        back: d
            .view
            .and_then(|v| web_url(v.return_url.as_deref()).map(|u| (u, merchant_or_default(v)))),
    })
}

fn merchant_or_default(view: &CheckoutView) -> &str {
    if view.merchant_name.is_empty() {
        "the merchant"
    } else {
        &view.merchant_name
    }
}

/// Renders a screen of a link.
pub fn page(ctx: Ctx<'_>, view: &CheckoutView, screen: &Screen<'_>, logo: Option<&str>) -> String {
    let uid = view.link.uid.to_string();
    let base = format!("{}/pay/{}", ctx.prefix, uid);
    let mut attrs = vec![("data-state", view.state.as_str().to_owned())];
    let merchant = merchant_or_default(view);
    let mut refresh = None;
    let (heading, body): (&str, Body<'_>) = match screen {
        Screen::Choose { error } => (
            "",
            Body::Choose {
                action: format!("{base}/start"),
                assets: &view.pay_assets,
                error: error.map(sentence),
                next: if view.review_required {
                    "Continue"
                } else {
                    "Continue to payment"
                },
            },
        ),
        Screen::Inactive { message } => (
            inactive_heading(view.state),
            Body::Inactive {
                merchant,
                suffix: if view.state == LinkState::Paused {
                    " right now"
                } else {
                    ""
                },
                note: message.map(sentence),
            },
        ),
        Screen::UnderWay {
            paid: true,
            message,
        } => (
            "This payment link is already paid",
            Body::Paid {
                merchant,
                note: message.map(sentence),
            },
        ),
        Screen::UnderWay { message, .. } => (
            "A payment through this link is under way",
            Body::UnderWay {
                merchant,
                note: message.map(sentence),
            },
        ),
        Screen::Session {
            session: s,
            asset,
            error,
            confirmations,
        } => {
            attrs.extend([
                ("data-session", s.id.to_string()),
                ("data-status", s.status.as_str().to_owned()),
                ("data-updated", s.updated_at.to_rfc3339()),
                ("data-page", format!("{base}?session={}", s.id)),
            ]);
            if !s.status.is_terminal() {
                attrs.push((
                    "data-poll",
                    format!("{}/api/public/checkout/{uid}/sessions/{}", ctx.prefix, s.id),
                ));
            }
            let waiting = matches!(
                s.status,
                SessionStatus::Pending | SessionStatus::Processing | SessionStatus::Underpaid
            ) || (s.status == SessionStatus::RefundPending
                && s.settlement.refund_address.is_some());
            if waiting {
                refresh = Some(NOSCRIPT_REFRESH_SECS.to_string());
            }
            let body = session_body(
                &ctx,
                view,
                &base,
                s,
                AssetLabel::of(s, *asset),
                *error,
                *confirmations,
            );
            if let Body::Complete {
                success: Some(url), ..
            } = &body
            {
                attrs.push(("data-redirect", (*url).to_owned()));
                attrs.push(("data-delay", REDIRECT_DELAY_MS.to_string()));
                refresh = Some(format!("3;url={url}"));
            }
            (session_heading(s), body)
        }
    };
    let choose_heading;
    let heading = if heading.is_empty() {
        choose_heading = format!("Pay {merchant}");
        &choose_heading
    } else {
        heading
    };
    document(Doc {
        ctx,
        view: Some(view),
        logo,
        heading,
        attrs,
        summary: true,
        body,
        refresh,
    })
}

/// A page about no particular link (the link is unknown, or what happened is not its state).
pub fn problem(ctx: Ctx<'_>, p: &Problem<'_>, view: Option<&CheckoutView>) -> String {
    let again = view
        .filter(|v| v.state.takes_payments())
        .map(|v| format!("{}/pay/{}", ctx.prefix, v.link.uid));
    document(Doc {
        ctx,
        view,
        logo: None,
        heading: p.heading,
        attrs: vec![("data-state", "problem".to_owned())],
        summary: false,
        body: Body::Problem {
            message: sentence(p.message),
            again,
        },
        refresh: None,
    })
}

mod screens;
use screens::*;
