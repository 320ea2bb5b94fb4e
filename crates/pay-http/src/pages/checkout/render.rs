//! The checkout page as HTML: one self-contained document per state (inline style and script
//! carrying the response's CSP nonce, the QR code as inline SVG), every interpolated value
//! escaped. Rendering is a pure function of the checkout view, the session and the time, so
//! every state is unit-tested without a server.

use std::fmt::Write;
use std::sync::LazyLock;

use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::CheckoutView;
use pay_domain::checkout::PaymentSession;
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::LinkState;
use pay_domain::tenancy::Theme;

use super::qr;
use pay_domain::kernel::html::{escape, safe_url};

/// How long the success state shows before the browser goes to the success URL.
pub const REDIRECT_DELAY_MS: u32 = 2000;
/// Without JavaScript, a waiting page reloads itself this often.
pub const NOSCRIPT_REFRESH_SECS: u32 = 5;

const DARK: &str = "--bg:#111113;--fg:#f4f4f5;--card:#1c1c1f;--mut:#a1a1aa;--bd:#3f3f46;\
--soft:#27272a;--ac:#60a5fa;--acfg:#0b1220;--ok:#22c55e;--bad:#f87171;--warn:#fbbf24;\
--focus:#93c5fd;color-scheme:dark";

/// The page's style sheet: the dark palette is written once and applied both to the dark
/// theme and to the system theme under `prefers-color-scheme: dark`.
static CSS: LazyLock<String> = LazyLock::new(|| {
    include_str!("page.css")
        .replace("DARK", DARK)
        .replace('\n', "")
});
const JS: &str = include_str!("page.js");

/// The checkout's style sheet, which the sign-in and consent pages share.
pub(crate) fn stylesheet() -> &'static str {
    &CSS
}

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
fn countdown(ctx: &Ctx<'_>, until: Timestamp) -> String {
    let left = seconds_left(ctx, until);
    let d = until.datetime();
    format!(
        "<span class=\"cd big\" data-left=\"{left}\">{}</span> <small>(until <time datetime=\"{}\">{:02}:{:02} UTC</time>)</small>",
        clock(left),
        until.to_rfc3339(),
        d.hour(),
        d.minute(),
    )
}

/// A settlement amount as the page shows it (normalised decimal text).
fn amount_text(d: Option<Decimal>) -> Option<String> {
    d.map(|d| d.normalized().to_string())
}

/// One self-contained page. `logo` is the logo URL already checked by `logo_origin`.
struct Doc<'a> {
    ctx: Ctx<'a>,
    theme: Theme,
    merchant: &'a str,
    logo: Option<&'a str>,
    heading: &'a str,
    /// Attributes of `<main>` (already escaped, each with its leading space).
    main_attrs: String,
    body: String,
    back: Option<String>,
    /// `<noscript>` refresh: seconds, and where to (the same page when `None`).
    refresh: Option<(u32, Option<String>)>,
}

fn document(d: Doc<'_>) -> String {
    let mut h = String::with_capacity(24 * 1024);
    let theme = d.theme.as_str();
    let scheme = match d.theme {
        Theme::Light => "light",
        Theme::Dark => "dark",
        Theme::System => "light dark",
    };
    let title = if d.merchant.is_empty() {
        escape(d.heading)
    } else {
        format!("{} - {}", escape(d.heading), escape(d.merchant))
    };
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\" class=\"t-{theme}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"robots\" content=\"noindex, nofollow\">\n\
         <meta name=\"color-scheme\" content=\"{scheme}\">\n<title>{title}</title>\n"
    );
    if let Some((secs, to)) = &d.refresh {
        let target = to.as_ref().map(|u| format!(";url={u}")).unwrap_or_default();
        let _ = writeln!(
            h,
            "<noscript><meta http-equiv=\"refresh\" content=\"{secs}{target}\"></noscript>"
        );
    }
    let _ = write!(
        h,
        "<style nonce=\"{nonce}\">{css}</style>\n</head>\n<body>\n<div class=\"page\">\n<header class=\"merchant\">",
        nonce = escape(d.ctx.nonce),
        css = *CSS,
    );
    if let Some(logo) = d.logo {
        let _ = write!(
            h,
            "<img src=\"{}\" alt=\"\" width=\"40\" height=\"40\" referrerpolicy=\"no-referrer\">",
            escape(logo)
        );
    }
    let shown = if d.merchant.is_empty() {
        "Payment"
    } else {
        d.merchant
    };
    let _ = write!(
        h,
        "<span>{}</span></header>\n<main id=\"checkout\" class=\"card\" tabindex=\"-1\"{}>\n<h1>{}</h1>\n{}</main>\n\
         <p id=\"live\" class=\"live\" role=\"status\" aria-live=\"polite\"></p>\n",
        escape(shown),
        d.main_attrs,
        escape(d.heading),
        d.body,
    );
    if let Some(back) = &d.back {
        let _ = writeln!(h, "<footer>{back}</footer>");
    }
    let _ = write!(
        h,
        "</div>\n<script nonce=\"{}\">{}</script>\n</body>\n</html>\n",
        escape(d.ctx.nonce),
        JS
    );
    h
}

/// The link's title, amount and description at the top of the card.
fn summary(view: &CheckoutView) -> String {
    let p = &view.link.payload;
    let mut h = String::new();
    let title = p.title.as_deref().unwrap_or("Amount due");
    let _ = writeln!(
        h,
        "<div class=\"sum\"><span class=\"ttl\">{}</span><span class=\"amt\">{} {}</span></div>",
        escape(title),
        escape(p.amount.as_str()),
        escape(&view.display_currency),
    );
    if let Some(desc) = &p.description {
        let _ = writeln!(h, "<p class=\"desc\">{}</p>", escape(desc));
    }
    h
}

fn merchant_or_default(view: &CheckoutView) -> &str {
    if view.merchant_name.is_empty() {
        "the merchant"
    } else {
        &view.merchant_name
    }
}

/// "Back to the merchant" (the return URL), when one is set.
fn back_link(view: &CheckoutView) -> Option<String> {
    let url = safe_url(view.return_url.as_deref()?)?;
    Some(format!(
        "<a href=\"{url}\" rel=\"noreferrer\">&larr; Back to {}</a>",
        escape(merchant_or_default(view))
    ))
}

fn post_form(action: &str, class: &str, label: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{}\"><button type=\"submit\" class=\"btn {class}\">{}</button></form>",
        escape(action),
        escape(label)
    )
}

/// While a chain payment is confirmed: the confirmations of its least confirmed transfer, of
/// those it needs (`1 of 2`).
fn confirmations_line(body: &mut String, s: &PaymentSession, required: Option<u32>) {
    let Some(required) = required else {
        return;
    };
    let Some(least) = s.settlement.transfers.iter().map(|t| t.confirmations).min() else {
        return;
    };
    let _ = writeln!(
        body,
        "<p class=\"confirmations\">Confirmations: <strong>{least} of {required}</strong></p>"
    );
}

/// Renders a screen of a link.
pub fn page(ctx: Ctx<'_>, view: &CheckoutView, screen: &Screen<'_>, logo: Option<&str>) -> String {
    let uid = view.link.uid.to_string();
    let base = format!("{}/pay/{}", ctx.prefix, uid);
    let mut attrs = format!(" data-state=\"{}\"", view.state.as_str());
    let mut body = summary(view);
    let mut refresh = None;
    let heading: String;
    match screen {
        Screen::Choose { error } => {
            heading = format!("Pay {}", merchant_or_default(view));
            choose(&mut body, view, &base, *error);
        }
        Screen::Inactive { message } => {
            heading = inactive_heading(view.state).to_owned();
            let _ = write!(
                body,
                "<div class=\"icon off\" aria-hidden=\"true\">!</div>\n<p>{} is not taking payments through this link{}. No payment can be started here.</p>\n",
                escape(merchant_or_default(view)),
                if view.state == LinkState::Paused { " right now" } else { "" },
            );
            if let Some(m) = message {
                let _ = writeln!(
                    body,
                    "<p class=\"note\" role=\"alert\">{}</p>",
                    escape(&sentence(m))
                );
            }
        }
        Screen::UnderWay { paid, message } => {
            let merchant = escape(merchant_or_default(view));
            if *paid {
                heading = "This payment link is already paid".to_owned();
                let _ = writeln!(
                    body,
                    "<div class=\"icon ok\" aria-hidden=\"true\">&#10003;</div>\n<p>{merchant} already received the one payment this link takes. No new payment can be started here.</p>",
                );
            } else {
                heading = "A payment through this link is under way".to_owned();
                let _ = writeln!(
                    body,
                    "<div class=\"icon off\" aria-hidden=\"true\">!</div>\n<p>Part of a payment through this link has already arrived, or a payment is being confirmed. If it is yours, open this link in the browser you paid with: it shows what is still due and where to send it.</p>\n<p>No new payment can be started here until it is complete or {merchant} has resolved it.</p>",
                );
            }
            if let Some(m) = message {
                let _ = writeln!(
                    body,
                    "<p class=\"note\" role=\"alert\">{}</p>",
                    escape(&sentence(m))
                );
            }
        }
        Screen::Session {
            session: s,
            asset,
            error,
            confirmations,
        } => {
            heading = session_heading(s).to_owned();
            let page_url = format!("{base}?session={}", s.id);
            let _ = write!(
                attrs,
                " data-session=\"{}\" data-status=\"{}\" data-updated=\"{}\" data-page=\"{}\"",
                escape(&s.id.to_string()),
                s.status.as_str(),
                s.updated_at.to_rfc3339(),
                escape(&page_url),
            );
            if !s.status.is_terminal() {
                let _ = write!(
                    attrs,
                    " data-poll=\"{}\"",
                    escape(&format!(
                        "{}/api/public/checkout/{uid}/sessions/{}",
                        ctx.prefix, s.id
                    ))
                );
            }
            let waiting = matches!(
                s.status,
                SessionStatus::Pending | SessionStatus::Processing | SessionStatus::Underpaid
            ) || (s.status == SessionStatus::RefundPending
                && s.settlement.refund_address.is_some());
            if waiting {
                refresh = Some((NOSCRIPT_REFRESH_SECS, None));
            }
            let action = |what: &str| format!("{base}/s/{}/{what}", s.id);
            let a = AssetLabel::of(s, *asset);
            match s.status {
                SessionStatus::Quote => review(&mut body, &ctx, s, &a, &action),
                SessionStatus::Pending => deposit(&mut body, &ctx, s, &a, &action),
                SessionStatus::Processing => {
                    let got = amount_text(s.settlement.received_amount)
                        .unwrap_or_else(|| s.required_sell_amount.to_string());
                    let _ = write!(
                        body,
                        "<p class=\"status wait\">Confirming your payment&hellip;</p>\n\
                         <p>We received <strong>{} {}</strong> on {}. This page updates by itself once the payment is confirmed.</p>\n",
                        escape(&got),
                        escape(&a.symbol),
                        escape(&a.chain),
                    );
                    confirmations_line(&mut body, s, *confirmations);
                }
                SessionStatus::Complete => {
                    let _ = write!(
                        body,
                        "<div class=\"icon ok\" aria-hidden=\"true\">&#10003;</div>\n\
                         <p class=\"status ok\">Paid</p>\n<p>Thank you. {} received your payment of <strong>{} {}</strong>.</p>\n",
                        escape(merchant_or_default(view)),
                        escape(&s.required_sell_amount.to_string()),
                        escape(&a.symbol),
                    );
                    overpaid_note(&mut body, s, &a);
                    if let Some(url) = view.success_url.as_deref().and_then(safe_url) {
                        let _ = write!(
                            attrs,
                            " data-redirect=\"{url}\" data-delay=\"{REDIRECT_DELAY_MS}\""
                        );
                        refresh = Some((3, Some(url.clone())));
                        let _ = write!(
                            body,
                            "<p>Taking you back to {} in a moment&hellip;</p>\n<a class=\"btn primary\" href=\"{url}\" rel=\"noreferrer\">Continue to {}</a>\n",
                            escape(merchant_or_default(view)),
                            escape(merchant_or_default(view)),
                        );
                    }
                }
                SessionStatus::Underpaid => underpaid(&mut body, s, &a),
                SessionStatus::RefundPending => {
                    refund_form::refund(&mut body, s, &a, &action, *error)
                }
                SessionStatus::Refunded => {
                    let _ = write!(
                        body,
                        "<div class=\"icon off\" aria-hidden=\"true\">&#8634;</div>\n<p>What you sent was returned{}. No payment was taken.</p>\n",
                        s.settlement
                            .refund_address
                            .as_deref()
                            .map(|r| format!(" to <code>{}</code>", escape(r)))
                            .unwrap_or_default(),
                    );
                    failure_links(&mut body, view, &base);
                }
                SessionStatus::Expired | SessionStatus::Cancelled | SessionStatus::Failed => {
                    let why = match s.status {
                        SessionStatus::Failed => s
                            .error_message
                            .clone()
                            .unwrap_or_else(|| "The payment could not be completed.".into()),
                        SessionStatus::Cancelled => "You cancelled this payment.".into(),
                        _ if s.previous_status == Some(SessionStatus::Quote) => {
                            "The quote was not accepted in time.".into()
                        }
                        _ => "No payment arrived in time.".into(),
                    };
                    let _ = write!(
                        body,
                        "<div class=\"icon bad\" aria-hidden=\"true\">&#10005;</div>\n<p class=\"status bad\">{}</p>\n<p>{}</p>\n",
                        match s.status {
                            SessionStatus::Failed => "Failed",
                            SessionStatus::Cancelled => "Cancelled",
                            _ => "Expired",
                        },
                        escape(&why),
                    );
                    if let Some(late) = amount_text(s.settlement.late_amount) {
                        let _ = writeln!(
                            body,
                            "<p class=\"warn\">A payment of {} {} arrived after this request ended. {} will return it or contact you.</p>",
                            escape(&late),
                            escape(&a.symbol),
                            escape(merchant_or_default(view)),
                        );
                    }
                    failure_links(&mut body, view, &base);
                }
            }
        }
    }
    document(Doc {
        ctx,
        theme: view.theme,
        merchant: &view.merchant_name,
        logo,
        heading: &heading,
        main_attrs: attrs,
        body,
        back: back_link(view),
        refresh,
    })
}

/// A page about no particular link (the link is unknown, or what happened is not its state).
pub fn problem(ctx: Ctx<'_>, p: &Problem<'_>, view: Option<&CheckoutView>) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<div class=\"icon off\" aria-hidden=\"true\">!</div>\n<p>{}</p>\n",
        escape(&sentence(p.message))
    );
    if let Some(v) = view {
        if v.state.takes_payments() {
            let _ = writeln!(
                body,
                "<p><a href=\"{}\">Start again</a></p>",
                escape(&format!("{}/pay/{}", ctx.prefix, v.link.uid))
            );
        }
    }
    document(Doc {
        ctx,
        theme: view.map(|v| v.theme).unwrap_or(Theme::System),
        merchant: view.map(|v| v.merchant_name.as_str()).unwrap_or(""),
        logo: None,
        heading: p.heading,
        main_attrs: " data-state=\"problem\"".into(),
        body,
        back: view.and_then(back_link),
        refresh: None,
    })
}

mod refund_form;
mod screens;
use screens::*;
