//! The customer portal as HTML: an askama template (`templates/portal.html`) on the one base
//! layout (the pages' part of the style sheet under the response's CSP nonce, no script), every
//! interpolated value escaped by the kernel's escaper. A pure function of the portal view, so
//! every state is unit-tested without a server.

use std::fmt::Write;

use askama::Template;
use pay_domain::customers::portal::PortalParams;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::subscriptions::{
    local_date, Cycle, CycleStatus, PortalView, Subscription, SubscriptionStatus,
};

use crate::pages::layout::{html, Layout};

/// What every portal page needs besides its content.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    pub nonce: &'a str,
    /// The path of the public pay URL (`""` at the root).
    pub prefix: &'a str,
}

/// One portal page (`templates/portal.html`).
#[derive(Template)]
#[template(path = "portal.html")]
struct PortalPage<'a> {
    layout: Layout<'a>,
    /// The company's name above the card (not on a refusal).
    merchant: Option<&'a str>,
    heading: &'a str,
    body: PortalBody<'a>,
}

enum PortalBody<'a> {
    Problem {
        message: &'a str,
        back: Option<&'a str>,
    },
    Portal(Box<Portal<'a>>),
}

/// What the portal shows of a customer.
struct Portal<'a> {
    prefix: &'a str,
    notice: Option<&'a str>,
    email: &'a str,
    expires: Option<String>,
    name: &'a str,
    client_id: &'a str,
    /// The signed URL's parameters and the form token, carried by every form.
    hidden: Vec<(&'static str, &'a str)>,
    see_subscriptions: bool,
    open: Vec<Invoice<'a>>,
    subscriptions: Vec<Sub<'a>>,
    paid: Vec<Invoice<'a>>,
}

/// An open or paid invoice (a cycle with its subscription's label).
struct Invoice<'a> {
    label: &'a str,
    due: String,
    amount: &'a str,
    status: &'static str,
    pay: Option<String>,
    paid: String,
}

struct Sub<'a> {
    uid: String,
    label: &'a str,
    status: &'static str,
    description: Option<&'a str>,
    amount: &'a str,
    cadence: String,
    since: String,
    zone: &'a str,
    cycles: Vec<CycleRow<'a>>,
    moves: Vec<Move>,
}

struct CycleRow<'a> {
    number: u32,
    due: String,
    amount: &'a str,
    status: &'static str,
    paid: String,
}

/// A status change the customer may make.
struct Move {
    to: &'static str,
    label: &'static str,
    class: &'static str,
}

fn document(
    ctx: Ctx<'_>,
    title: &str,
    merchant: Option<&str>,
    heading: &str,
    body: PortalBody<'_>,
) -> String {
    let mut layout = Layout::card(ctx.nonce, title);
    layout.main = "page portal";
    html(&PortalPage {
        layout,
        merchant,
        heading,
        body,
    })
}

/// A refusal or an error: what happened, nothing of the customer's data.
pub fn problem(ctx: Ctx<'_>, heading: &str, message: &str, back: Option<&str>) -> String {
    document(
        ctx,
        heading,
        None,
        heading,
        PortalBody::Problem { message, back },
    )
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

/// The hidden fields every state-changing form carries: the signed URL's parameters and the
/// token bound to them.
fn hidden<'a>(p: &'a PortalParams, token: &'a str) -> Vec<(&'static str, &'a str)> {
    [
        ("company", Some(p.company.as_str())),
        ("customer", Some(p.customer.as_str())),
        ("expires", Some(p.expires.as_str())),
        ("signature", Some(p.signature.as_str())),
        ("grant", p.grant.as_deref()),
        ("access", p.access.as_deref()),
        ("token", Some(token)),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value?)))
    .collect()
}

/// The moves a subscription in `status` allows.
fn moves(status: SubscriptionStatus) -> Vec<Move> {
    let m = |to: SubscriptionStatus, label, class| Move {
        to: to.as_str(),
        label,
        class,
    };
    match status {
        SubscriptionStatus::Active | SubscriptionStatus::Overdue => vec![
            m(SubscriptionStatus::Paused, "Pause", ""),
            m(
                SubscriptionStatus::Cancelled,
                "Cancel subscription",
                " danger",
            ),
        ],
        SubscriptionStatus::Paused => vec![
            m(SubscriptionStatus::Active, "Resume", ""),
            m(
                SubscriptionStatus::Cancelled,
                "Cancel subscription",
                " danger",
            ),
        ],
        SubscriptionStatus::Cancelled => vec![],
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
    let access = &view.access;
    let contact = access.contact();
    let rights = access.rights();
    let company_name = view.company_name.as_str();
    let (title, heading) = if rights.see_subscriptions {
        (
            format!("{company_name}: your subscriptions"),
            "Your subscriptions",
        )
    } else {
        (format!("{company_name}: your details"), "Your details")
    };
    let mut open = Vec::new();
    let mut paid: Vec<(&Cycle, &Subscription)> = Vec::new();
    let mut subscriptions = Vec::new();
    if rights.see_subscriptions {
        for s in &view.subscriptions {
            let sub = &s.subscription;
            for c in &s.cycles {
                if c.status.is_unpaid() {
                    open.push(Invoice {
                        label: &sub.label,
                        due: local_date(c.due_at, sub.zone).to_string(),
                        amount: &c.amount_usd,
                        status: c.status.as_str(),
                        pay: payment_url(c),
                        paid: String::new(),
                    });
                }
                if c.status == CycleStatus::Paid {
                    paid.push((c, sub));
                }
            }
            subscriptions.push(Sub {
                uid: sub.uid.to_string(),
                label: &sub.label,
                status: sub.status.as_str(),
                description: sub.description.as_deref(),
                amount: &sub.amount_usd,
                cadence: cadence_words(sub),
                since: local_date(sub.start_at, sub.zone).to_string(),
                zone: sub.zone.name(),
                cycles: s
                    .cycles
                    .iter()
                    .map(|c| CycleRow {
                        number: c.sequence + 1,
                        due: local_date(c.due_at, sub.zone).to_string(),
                        amount: &c.amount_usd,
                        status: c.status.as_str(),
                        paid: c
                            .paid_at
                            .map(|t| local_date(t, sub.zone).to_string())
                            .unwrap_or_default(),
                    })
                    .collect(),
                moves: if rights.manage_subscriptions {
                    moves(sub.status)
                } else {
                    Vec::new()
                },
            });
        }
    }
    // Paid history, newest first.
    paid.sort_by_key(|(c, _)| std::cmp::Reverse(c.paid_at));
    let paid = paid
        .into_iter()
        .map(|(c, sub)| Invoice {
            label: &sub.label,
            due: local_date(c.due_at, sub.zone).to_string(),
            amount: &c.amount_usd,
            status: c.status.as_str(),
            pay: None,
            paid: c.paid_at.map(when).unwrap_or_default(),
        })
        .collect();
    let portal = Portal {
        prefix: ctx.prefix,
        notice,
        email: &contact.email,
        expires: Timestamp::from_unix_millis(access.expires().saturating_mul(1000)).map(when),
        name: contact.name.as_deref().unwrap_or(""),
        client_id: contact.client_id.as_deref().unwrap_or("—"),
        hidden: hidden(params, access.form_token()),
        see_subscriptions: rights.see_subscriptions,
        open,
        subscriptions,
        paid,
    };
    document(
        ctx,
        &title,
        Some(company_name),
        heading,
        PortalBody::Portal(Box::new(portal)),
    )
}
