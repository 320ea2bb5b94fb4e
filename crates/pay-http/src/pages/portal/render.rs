//! The customer portal as HTML: the checkout's style sheet (plus a few rules of its own) under
//! the response's CSP nonce, no script, every interpolated value escaped by the one escaper.
//! A pure function of the portal view, so every state is unit-tested without a server.

use std::fmt::Write;

use pay_domain::customers::portal::PortalParams;
use pay_domain::kernel::html::escape;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::subscriptions::{
    local_date, Cycle, CycleStatus, PortalView, Subscription, SubscriptionStatus,
};

/// The portal's rules beside the checkout's style sheet.
const PORTAL_CSS: &str = ".page.wide{max-width:44rem}\
h2{font-size:1.1rem;margin:0 0 .5rem}\
section{margin:0 0 1.5rem}\
section form{margin:0 0 1rem}\
.sub{border:1px solid var(--bd);border-radius:10px;padding:1rem;margin:0 0 1rem}\
.sub header{display:flex;justify-content:space-between;align-items:baseline;gap:1rem;flex-wrap:wrap}\
.badge{display:inline-block;padding:.1rem .55rem;border-radius:999px;background:var(--soft);border:1px solid var(--bd);font-size:.85rem;font-weight:600}\
.badge.overdue,.badge.cancelled{color:var(--bad)}\
.badge.paid,.badge.active{color:var(--ok)}\
table{width:100%;border-collapse:collapse;margin:.5rem 0 0;font-variant-numeric:tabular-nums}\
th,td{text-align:left;padding:.4rem .3rem;border-bottom:1px solid var(--bd);vertical-align:middle}\
th{color:var(--mut);font-weight:500;font-size:.9rem}\
.inline{display:flex;gap:.5rem;flex-wrap:wrap;margin:.75rem 0 0}\
.inline form{margin:0}\
.btn.danger{color:var(--bad)}\
.btn.small{min-height:36px;padding:.3rem .8rem}\
.notice{padding:.6rem .85rem;border-radius:8px;background:var(--soft);border:1px solid var(--bd);font-weight:600}";

/// What every portal page needs besides its content.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub nonce: &'a str,
    /// The path of the public pay URL (`""` at the root).
    pub prefix: &'a str,
}

fn document(ctx: Ctx<'_>, title: &str, heading: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"robots\" content=\"noindex\">\
         <title>{}</title><style nonce=\"{}\">{}{}</style></head>\n\
         <body class=\"t-system\"><main class=\"page wide\">{heading}<div class=\"card\">\n{body}</div></main></body></html>\n",
        escape(title),
        escape(ctx.nonce),
        crate::pages::checkout::render::stylesheet(),
        PORTAL_CSS,
    )
}

/// A refusal or an error: what happened, nothing of the customer's data.
pub fn problem(ctx: Ctx<'_>, heading: &str, message: &str, back: Option<&str>) -> String {
    let mut body = format!(
        "<h1>{}</h1>\n<p role=\"alert\">{}</p>\n",
        escape(heading),
        escape(message)
    );
    if let Some(url) = back {
        let _ = writeln!(
            body,
            "<p><a class=\"btn\" href=\"{}\">Back to your subscriptions</a></p>",
            escape(url)
        );
    }
    document(ctx, heading, "", &body)
}

/// The portal URL (relative to the site) of these signed parameters (only the checked ones
/// reach here: the domain accepted them, or the page refuses them before any link is made).
pub fn portal_href(prefix: &str, p: &PortalParams) -> String {
    let mut href = format!(
        "{prefix}/portal?company={}&customer={}&expires={}&signature={}",
        p.company, p.customer, p.expires, p.signature
    );
    if let (Some(grant), Some(access)) = (&p.grant, &p.access) {
        let _ = write!(href, "&grant={grant}&access={access}");
    }
    href
}

/// `YYYY-MM-DD HH:MM UTC` of an instant (the link's expiry, payment times). Due dates are
/// calendar dates in the subscription's zone (`local_date`).
fn when(t: Timestamp) -> String {
    let s = t.to_string();
    match (s.get(..10), s.get(11..16)) {
        (Some(d), Some(hm)) => format!("{d} {hm} UTC"),
        _ => s,
    }
}

fn cadence_words(v: &pay_domain::subscriptions::Subscription) -> String {
    use pay_domain::subscriptions::calendar::Cadence;
    match v.cadence() {
        Cadence::Weekly => "every week".into(),
        Cadence::Biweekly => "every two weeks".into(),
        Cadence::Monthly => "every month".into(),
        Cadence::Yearly => "every year".into(),
        Cadence::CustomMonths => format!("every {} months", v.interval.count()),
    }
}

/// The hidden fields every state-changing form carries: the signed URL's parameters and the
/// token bound to them.
fn hidden(p: &PortalParams, token: &str) -> String {
    let mut s = String::new();
    for (name, value) in [
        ("company", Some(p.company.as_str())),
        ("customer", Some(p.customer.as_str())),
        ("expires", Some(p.expires.as_str())),
        ("signature", Some(p.signature.as_str())),
        ("grant", p.grant.as_deref()),
        ("access", p.access.as_deref()),
        ("token", Some(token)),
    ] {
        let Some(value) = value else { continue };
        let _ = write!(
            s,
            "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
            escape(value)
        );
    }
    s
}

fn status_form(
    ctx: Ctx<'_>,
    p: &PortalParams,
    token: &str,
    uid: &str,
    to: SubscriptionStatus,
    label: &str,
    class: &str,
) -> String {
    format!(
        "<form method=\"post\" action=\"{}/portal/subscriptions/{}/status\">{}\
         <input type=\"hidden\" name=\"status\" value=\"{}\">\
         <button class=\"btn small{class}\" type=\"submit\">{}</button></form>",
        escape(ctx.prefix),
        escape(uid),
        hidden(p, token),
        to.as_str(),
        escape(label)
    )
}

/// What a done action says at the top of the page.
pub fn notice_words(done: &str) -> Option<&'static str> {
    match done {
        "renamed" => Some("Your name was saved."),
        "paused" => Some("The subscription is paused: no invoices until you resume it."),
        "active" => Some("The subscription is active again."),
        "cancelled" => Some("The subscription is cancelled; its unpaid invoices are closed."),
        _ => None,
    }
}

fn pay_button(c: &Cycle, url: Option<&str>) -> String {
    match url {
        Some(u) => format!(
            "<a class=\"btn small primary\" href=\"{}\">Pay {} USD</a>",
            escape(u),
            escape(&c.amount_usd)
        ),
        None => String::new(),
    }
}

/// The portal: the customer's details (name editable, `clientId` read-only), open invoices
/// with a pay button, each subscription with its cycles and the moves it allows, and the paid
/// history.
pub fn portal(
    ctx: Ctx<'_>,
    view: &PortalView,
    params: &PortalParams,
    notice: Option<&str>,
    payment_url: &dyn Fn(&Cycle) -> Option<String>,
) -> String {
    let company_name = view.company_name.as_str();
    let access = &view.access;
    let contact = access.contact();
    let token = access.form_token();
    let mut body = String::new();
    let rights = access.rights();
    let title = if rights.see_subscriptions {
        "Your subscriptions"
    } else {
        "Your details"
    };
    let _ = writeln!(body, "<h1>{title}</h1>");
    if let Some(n) = notice {
        let _ = writeln!(
            body,
            "<p class=\"notice\" role=\"status\">{}</p>",
            escape(n)
        );
    }
    let expires = Timestamp::from_unix_millis(access.expires().saturating_mul(1000));
    let _ = writeln!(
        body,
        "<p class=\"muted\">{}{}</p>",
        escape(&contact.email),
        expires
            .map(|t| format!(" · this page's link works until {}", when(t)))
            .unwrap_or_default()
    );

    // Details.
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"details\"><h2 id=\"details\">Your details</h2>\
         <form method=\"post\" action=\"{}/portal/name\">{}\
         <p><label class=\"block\" for=\"name\">Name</label>\
         <input id=\"name\" name=\"name\" type=\"text\" maxlength=\"200\" autocomplete=\"name\" value=\"{}\"></p>\
         <div class=\"inline\"><button class=\"btn small\" type=\"submit\">Save name</button></div></form>",
        escape(ctx.prefix),
        hidden(params, token),
        escape(contact.name.as_deref().unwrap_or(""))
    );
    let _ = writeln!(
        body,
        "<dl class=\"rows\"><div><dt>E-mail</dt><dd>{}</dd></div><div><dt>Customer ID</dt><dd id=\"client-id\">{}</dd></div></dl></section>",
        escape(&contact.email),
        escape(contact.client_id.as_deref().unwrap_or("—"))
    );

    if !rights.see_subscriptions {
        // A URL whose minter may not read subscriptions (docs/subscriptions.md, Portal).
        body.push_str(
            "<p class=\"muted\">This link shows your details only. Ask the merchant about your subscriptions and invoices.</p>\n",
        );
        let heading = format!("<div class=\"merchant\">{}</div>", escape(company_name));
        return document(
            ctx,
            &format!("{company_name}: your details"),
            &heading,
            &body,
        );
    }

    // Open invoices.
    let open: Vec<(&Cycle, &Subscription)> = view
        .subscriptions
        .iter()
        .flat_map(|s| {
            s.cycles
                .iter()
                .filter(|c| c.status.is_unpaid())
                .map(move |c| (c, &s.subscription))
        })
        .collect();
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"open\"><h2 id=\"open\">Open invoices</h2>"
    );
    if open.is_empty() {
        body.push_str("<p class=\"muted\">Nothing to pay right now.</p>\n");
    } else {
        body.push_str("<table><thead><tr><th>Subscription</th><th>Due</th><th>Amount</th><th>Status</th><th></th></tr></thead><tbody>\n");
        for (c, sub) in open {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{} USD</td><td><span class=\"badge {}\">{}</span></td><td>{}</td></tr>",
                escape(&sub.label),
                local_date(c.due_at, sub.zone),
                escape(&c.amount_usd),
                c.status.as_str(),
                c.status.as_str(),
                pay_button(c, payment_url(c).as_deref())
            );
        }
        body.push_str("</tbody></table>\n");
    }
    body.push_str("</section>\n");

    // Subscriptions.
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"subs\"><h2 id=\"subs\">Subscriptions</h2>"
    );
    if view.subscriptions.is_empty() {
        body.push_str("<p class=\"muted\">You have no subscriptions.</p>\n");
    }
    for s in &view.subscriptions {
        let sub = &s.subscription;
        let uid = sub.uid.to_string();
        let _ = writeln!(
            body,
            "<article class=\"sub\" id=\"sub-{}\"><header><strong>{}</strong><span class=\"badge {}\">{}</span></header>",
            escape(&uid),
            escape(&sub.label),
            sub.status.as_str(),
            sub.status.as_str()
        );
        if let Some(d) = &sub.description {
            let _ = writeln!(body, "<p class=\"muted\">{}</p>", escape(d));
        }
        let _ = writeln!(
            body,
            "<p>{} USD {}, since {} ({})</p>",
            escape(&sub.amount_usd),
            cadence_words(sub),
            local_date(sub.start_at, sub.zone),
            escape(sub.zone.name())
        );
        body.push_str("<table><thead><tr><th>#</th><th>Due</th><th>Amount</th><th>Status</th><th>Paid</th></tr></thead><tbody>\n");
        for c in &s.cycles {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{} USD</td><td><span class=\"badge {}\">{}</span></td><td>{}</td></tr>",
                c.sequence + 1,
                local_date(c.due_at, sub.zone),
                escape(&c.amount_usd),
                c.status.as_str(),
                c.status.as_str(),
                c.paid_at
                    .map(|t| local_date(t, sub.zone))
                    .unwrap_or_default()
            );
        }
        body.push_str("</tbody></table>\n<div class=\"inline\">");
        let moves: &[(SubscriptionStatus, &str, &str)] = match sub.status {
            _ if !rights.manage_subscriptions => &[],
            SubscriptionStatus::Active | SubscriptionStatus::Overdue => &[
                (SubscriptionStatus::Paused, "Pause", ""),
                (
                    SubscriptionStatus::Cancelled,
                    "Cancel subscription",
                    " danger",
                ),
            ],
            SubscriptionStatus::Paused => &[
                (SubscriptionStatus::Active, "Resume", ""),
                (
                    SubscriptionStatus::Cancelled,
                    "Cancel subscription",
                    " danger",
                ),
            ],
            SubscriptionStatus::Cancelled => &[],
        };
        for (to, label, class) in moves {
            body.push_str(&status_form(ctx, params, token, &uid, *to, label, class));
        }
        body.push_str("</div></article>\n");
    }
    body.push_str("</section>\n");

    // Paid history, newest first.
    let mut paid: Vec<(&Cycle, &Subscription)> = view
        .subscriptions
        .iter()
        .flat_map(|s| {
            s.cycles
                .iter()
                .filter(|c| c.status == CycleStatus::Paid)
                .map(move |c| (c, &s.subscription))
        })
        .collect();
    paid.sort_by_key(|(c, _)| std::cmp::Reverse(c.paid_at));
    let _ = writeln!(
        body,
        "<section aria-labelledby=\"paid\"><h2 id=\"paid\">Payment history</h2>"
    );
    if paid.is_empty() {
        body.push_str("<p class=\"muted\">No payments yet.</p>\n");
    } else {
        body.push_str("<table><thead><tr><th>Subscription</th><th>Due</th><th>Amount</th><th>Paid</th></tr></thead><tbody>\n");
        for (c, sub) in paid {
            let _ = writeln!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{} USD</td><td>{}</td></tr>",
                escape(&sub.label),
                local_date(c.due_at, sub.zone),
                escape(&c.amount_usd),
                c.paid_at.map(when).unwrap_or_default()
            );
        }
        body.push_str("</tbody></table>\n");
    }
    body.push_str("</section>\n");
    let heading = format!("<div class=\"merchant\">{}</div>", escape(company_name));
    document(
        ctx,
        &format!("{company_name}: your subscriptions"),
        &heading,
        &body,
    )
}
