//! The dashboard's Home: what completed payments collected today and over the last 30 days
//! per invoice asset, with the payments per day as a small inline SVG bar chart; what needs
//! attention (underpaid sessions, failing webhook endpoints, overdue subscriptions); and the
//! latest events sent to the team's webhooks. Reads through the domain services only.

use actix_web::http::StatusCode;
use actix_web::{get, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::checkout::{PaymentsSummary, SUMMARY_DAYS};
use pay_domain::subscriptions::SubscriptionStatus;
use pay_domain::webhooks::DeliveryFilter;

use super::{show, when, Frame, ScreenRefusals, Visit, DASHBOARD_PATH};
use crate::edge::error::ApiError;
use crate::pages::layout::{html, Layout};

/// Latest events listed.
const EVENTS_SHOWN: usize = 10;
/// The chart's drawing box (SVG user units).
const CHART_W: u32 = 600;
const CHART_H: u32 = 80;

/// One row of the collected table, as shown.
struct CollectedRow {
    asset: String,
    today: String,
    today_count: u64,
    days: String,
    days_count: u64,
}

/// One bar of the chart: a day's completed payments.
struct Bar {
    x: u32,
    y: u32,
    h: u32,
    label: String,
}

/// One line of a list (attention, events): its text and a detail.
struct Line {
    text: String,
    detail: String,
}

#[derive(Template)]
#[template(path = "dashboard/home.html")]
struct HomePage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    collected: Vec<CollectedRow>,
    today_count: u64,
    days_count: u64,
    days: usize,
    bars: Vec<Bar>,
    bar_w: u32,
    chart_w: u32,
    chart_h: u32,
    chart_label: String,
    underpaid: Vec<Line>,
    failing: Vec<Line>,
    overdue: Vec<Line>,
    events: Vec<Line>,
}

fn bars(daily: &[u64], first_day: time::Date) -> (Vec<Bar>, u32) {
    let n = u32::try_from(daily.len().max(1)).unwrap_or(1);
    let slot = CHART_W / n;
    let w = slot.saturating_sub(2).max(1);
    let max = daily.iter().copied().max().unwrap_or(0).max(1);
    let bars = daily
        .iter()
        .enumerate()
        .map(|(i, &count)| {
            // At least one unit tall, so a day without payments still shows on the axis.
            let h = u32::try_from(count * u64::from(CHART_H - 1) / max)
                .unwrap_or(CHART_H)
                .max(1);
            let day = first_day + time::Duration::days(i as i64);
            Bar {
                x: u32::try_from(i).unwrap_or(0) * slot,
                y: CHART_H - h,
                h,
                label: format!(
                    "{} {}: {count} payment{}",
                    day.month(),
                    day.day(),
                    if count == 1 { "" } else { "s" }
                ),
            }
        })
        .collect();
    (bars, w)
}

struct Gathered {
    summary: PaymentsSummary,
    events: Vec<Line>,
    failing: Vec<Line>,
    overdue: Vec<Line>,
}

fn gather(pay: &Pay, m: &super::Member) -> Result<Gathered, ApiError> {
    let p = &m.principal;
    let summary = pay.checkout().payments_summary(p)?;
    let events = pay
        .webhooks()
        .deliveries(
            p,
            DeliveryFilter {
                limit: EVENTS_SHOWN,
                ..DeliveryFilter::default()
            },
        )?
        .into_iter()
        .map(|d| Line {
            text: format!("{} to {}", d.event.short_name(), d.url),
            detail: format!(
                "{}, {} attempt{}, {}",
                d.status.as_str(),
                d.attempts,
                if d.attempts == 1 { "" } else { "s" },
                when(d.created_at)
            ),
        })
        .collect();
    let failing = pay
        .webhooks()
        .endpoint_circuits(p.company_id)?
        .into_iter()
        .map(|c| Line {
            text: c.endpoint.url,
            detail: format!(
                "{} failed attempt{} since {}{}",
                c.failures,
                if c.failures == 1 { "" } else { "s" },
                when(c.failing_since),
                match c.paused_until {
                    Some(t) if t > pay.now() => format!(", paused until {}", when(t)),
                    _ => String::new(),
                }
            ),
        })
        .collect();
    let overdue = pay
        .subscriptions()
        .list_subscriptions(p)?
        .into_iter()
        .filter(|v| v.subscription.status == SubscriptionStatus::Overdue)
        .map(|v| Line {
            text: format!(
                "{} ({})",
                v.subscription.label, v.subscription.customer_email
            ),
            detail: format!(
                "{} USD a cycle, subscription {}",
                v.subscription.amount_usd, v.subscription.uid
            ),
        })
        .collect();
    Ok(Gathered {
        summary,
        events,
        failing,
        overdue,
    })
}

/// The team's home page (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The home page (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}")]
pub async fn home_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let back = format!("{DASHBOARD_PATH}/{}", v.company);
    let got = v
        .screen(back, |p, m| {
            let g = gather(p, &m)?;
            Ok((m, g))
        })
        .await?;
    let (m, g) = match got {
        Ok(ok) => ok,
        Err(refused) => return Ok(refused),
    };
    let pay = &v.pay;
    let s = &g.summary;
    let today = s.now.datetime().date();
    let first_day = today - time::Duration::days(SUMMARY_DAYS as i64 - 1);
    let (bars, bar_w) = bars(&s.daily_counts, first_day);
    let days_count: u64 = s.daily_counts.iter().sum();
    Ok(show(&v.pay, &v.config, StatusCode::OK, |nonce, prefix| {
        html(&HomePage {
            layout: Layout::wide(nonce, "Home"),
            frame: Frame::new(prefix, &m, "home"),
            collected: s
                .collected
                .iter()
                .map(|c| CollectedRow {
                    asset: asset_name(pay, &c.asset),
                    today: c.today.to_string(),
                    today_count: c.today_count,
                    days: c.days.to_string(),
                    days_count: c.days_count,
                })
                .collect(),
            today_count: s.daily_counts.last().copied().unwrap_or(0),
            days_count,
            days: SUMMARY_DAYS,
            bars,
            bar_w,
            chart_w: CHART_W,
            chart_h: CHART_H,
            chart_label: format!(
                "Completed payments per day, {} to {}: {days_count} in all",
                when_day(first_day),
                when_day(today)
            ),
            underpaid: s
                .underpaid
                .iter()
                .map(|u| Line {
                    text: format!(
                        "{} {} invoiced",
                        u.invoice_amount.as_str(),
                        asset_name(pay, &u.invoice_asset)
                    ),
                    detail: format!(
                        "{}short by {}, session {}, since {}",
                        u.settlement
                            .received_amount
                            .as_ref()
                            .map(|r| format!("received {r}, "))
                            .unwrap_or_default(),
                        u.settlement
                            .short_by
                            .as_ref()
                            .map(|d| d.to_string())
                            .unwrap_or_else(|| "an unknown amount".into()),
                        u.id,
                        when(u.updated_at)
                    ),
                })
                .collect(),
            failing: g.failing,
            overdue: g.overdue,
            events: g.events,
        })
    }))
}

/// An invoice unit as a merchant reads it: a catalogue asset as its symbol and chain
/// (`USDC (Base)`), a fiat currency as its code.
fn asset_name(pay: &Pay, unit: &str) -> String {
    match pay.settings().asset(unit) {
        Some(a) => format!("{} ({})", a.symbol, a.chain_name),
        None => unit.to_owned(),
    }
}

fn when_day(d: time::Date) -> String {
    format!("{}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}
