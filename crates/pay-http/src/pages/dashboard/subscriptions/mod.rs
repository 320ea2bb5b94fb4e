//! The dashboard's Subscriptions screens: the list (`list_subscriptions`, the 200 newest,
//! narrowed on the screen by status and a search over label and customer e-mail) with the
//! create form (every field of the JSON create payload, read into `CreateSubscriptionInput`
//! and created by `create_subscription`, the JSON create's call), and a subscription's page
//! (`detail`: its fields, cycles and the merchant's status moves). A refusal of the domain is
//! the JSON route's status: a read-only member's change 403, another team's subscription 404,
//! a refused field or move the screen again with the reason.

pub mod detail;

use actix_web::http::StatusCode;
use actix_web::{get, post, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::subscriptions::calendar::Cadence;
use pay_domain::subscriptions::{CreateSubscriptionInput, Subscription, SubscriptionStatus};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::flow::{self, given, metadata_of, read_refusal, refused_change, Done};
use super::ChangeRefusals;
use super::{show, when, Frame, Member, Refused, ScreenRefusals, Visit, DASHBOARD_PATH};
use crate::edge::error::ApiError;
use crate::edge::form::{self, FormBody};
use crate::pages::layout::{html, Layout};
use crate::HttpConfig;

/// `/dashboard/{company}/subscriptions`.
pub(crate) fn list_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/subscriptions")
}

/// `/dashboard/{company}/subscriptions/{uid}`.
pub(crate) fn subscription_path(company: &str, uid: &str) -> String {
    format!("{}/{uid}", list_path(company))
}

/// The list's filters (`GET .../subscriptions?status=paused&q=pro`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubscriptionListQuery {
    /// `active`, `paused`, `overdue` or `cancelled`; absent or empty: every status.
    pub status: Option<String>,
    /// Part of the label or the customer e-mail, in any case.
    pub q: Option<String>,
}

/// The create form: every field of the JSON create payload (empty is absent).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSubscriptionForm {
    pub csrf_token: Option<String>,
    pub customer_email: Option<String>,
    pub label: Option<String>,
    pub amount_usd: Option<String>,
    /// `weekly`, `biweekly`, `monthly`, `custom_months` or `yearly`.
    pub cadence: Option<String>,
    /// A whole number (weekly: 1 to 52; custom_months: 1 to 12).
    pub billing_interval_count: Option<String>,
    /// An IANA zone such as `Europe/Berlin`.
    pub timezone: Option<String>,
    /// RFC 3339; empty: now.
    pub start_at: Option<String>,
    /// An enabled asset identifier; empty: the team's default.
    pub settlement_asset: Option<String>,
    pub description: Option<String>,
    /// A JSON object.
    pub metadata: Option<String>,
}

impl CreateSubscriptionForm {
    fn csrf(&self) -> Option<&str> {
        self.csrf_token.as_deref()
    }

    /// The JSON create's input; the count must read as a whole number and the metadata as a
    /// JSON object (the type checks a form cannot make by its shape).
    fn input(&self) -> Result<CreateSubscriptionInput, pay_domain::FieldError> {
        let count = match given(&self.billing_interval_count) {
            None => None,
            Some(n) => Some(n.parse::<i64>().map_err(|_| {
                pay_domain::FieldError::new(
                    "billingIntervalCount",
                    "billingIntervalCount must be a whole number",
                )
            })?),
        };
        let text = |v: &Option<String>| v.as_deref().unwrap_or("").trim().to_owned();
        Ok(CreateSubscriptionInput {
            customer_email: text(&self.customer_email),
            label: text(&self.label),
            amount_usd: text(&self.amount_usd),
            cadence: text(&self.cadence),
            timezone: text(&self.timezone),
            description: given(&self.description),
            settlement_asset: given(&self.settlement_asset),
            billing_interval_count: count,
            start_at: given(&self.start_at),
            metadata: metadata_of(&self.metadata)?,
        })
    }
}

/// One subscription as listed.
struct Row {
    uid: String,
    label: String,
    email: String,
    amount: String,
    cadence: String,
    status: &'static str,
    created: String,
}

/// One destination asset of the create form.
struct AssetChoice {
    id: String,
    label: String,
}

#[derive(Template)]
#[template(path = "dashboard/subscriptions.html")]
struct SubscriptionsPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    rows: Vec<Row>,
    status: String,
    q: String,
    statuses: Vec<&'static str>,
    cadences: Vec<&'static str>,
    assets: Vec<AssetChoice>,
    error: Option<String>,
    f: CreateSubscriptionForm,
}

pub(crate) struct Screen {
    m: Member,
    subscriptions: Vec<Subscription>,
    assets: Vec<AssetChoice>,
    status: Option<SubscriptionStatus>,
    q: String,
    refused_form: Option<(String, CreateSubscriptionForm)>,
}

/// Whether the listed subscription matches the screen's filters.
fn matches(s: &Subscription, status: Option<SubscriptionStatus>, q: &str) -> bool {
    let q = q.trim().to_lowercase();
    status.is_none_or(|st| s.status == st)
        && (q.is_empty()
            || s.label.to_lowercase().contains(&q)
            || s.customer_email.to_lowercase().contains(&q))
}

fn gather(
    pay: &Pay,
    m: Member,
    status: Option<SubscriptionStatus>,
    q: String,
    refused_form: Option<(String, CreateSubscriptionForm)>,
) -> Result<Result<Screen, Refused>, ApiError> {
    let back = list_path(&m.principal.company_id.to_string());
    let subscriptions = match pay.subscriptions().list_subscriptions(&m.principal) {
        Ok(all) => all
            .into_iter()
            .map(|v| v.subscription)
            .filter(|s| matches(s, status, &q))
            .collect(),
        Err(e) => return Ok(Err(read_refusal(e, &back)?)),
    };
    let assets = pay
        .settings()
        .destination_assets(&m.principal)?
        .into_iter()
        .map(|(a, _)| AssetChoice {
            label: format!("{} ({})", a.symbol, a.chain_name),
            id: a.asset_identifier,
        })
        .collect();
    Ok(Ok(Screen {
        m,
        subscriptions,
        assets,
        status,
        q,
        refused_form,
    }))
}

/// `every 2 weeks`, `monthly`...
pub(crate) fn cadence_words(s: &Subscription) -> String {
    let (c, n) = (s.interval.cadence(), s.interval.count());
    match c {
        Cadence::Weekly if n > 1 => format!("every {n} weeks"),
        Cadence::CustomMonths if n > 1 => format!("every {n} months"),
        Cadence::CustomMonths => "monthly".to_owned(),
        other => other.as_str().to_owned(),
    }
}

fn render(pay: &Pay, config: &HttpConfig, s: Screen, code: StatusCode) -> HttpResponse {
    let (error, f) = match s.refused_form {
        Some((e, f)) => (Some(e), f),
        None => (
            None,
            CreateSubscriptionForm {
                cadence: Some("monthly".into()),
                timezone: Some("UTC".into()),
                ..Default::default()
            },
        ),
    };
    let m = &s.m;
    show(pay, config, code, |nonce, prefix| {
        html(&SubscriptionsPage {
            layout: Layout::wide(nonce, "Subscriptions"),
            frame: Frame::new(prefix, m, "subscriptions"),
            can_manage: m.can_manage,
            rows: s
                .subscriptions
                .iter()
                .map(|x| Row {
                    uid: x.uid.to_string(),
                    label: x.label.clone(),
                    email: x.customer_email.clone(),
                    amount: format!("{} USD", x.amount_usd),
                    cadence: cadence_words(x),
                    status: x.status.as_str(),
                    created: when(x.created_at),
                })
                .collect(),
            status: s.status.map(|x| x.as_str()).unwrap_or("").to_owned(),
            q: s.q,
            statuses: SubscriptionStatus::ALL.iter().map(|x| x.as_str()).collect(),
            cadences: Cadence::ALL.iter().map(|c| c.as_str()).collect(),
            assets: s.assets,
            error,
            f,
        })
    })
}

/// The team's subscriptions (HTML): the 200 newest, by status and search.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id"), SubscriptionListQuery),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The subscriptions and the create form (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/subscriptions")]
pub async fn subscriptions_page(v: Visit) -> Result<HttpResponse, ApiError> {
    // A query that does not read (a name twice, bad escapes) lists every subscription.
    let query: SubscriptionListQuery = form::decode_form(v.req.query_string().as_bytes())
        .ok()
        .and_then(|pairs| form::read(&pairs).ok())
        .unwrap_or_default();
    let status = query.status.as_deref().and_then(SubscriptionStatus::parse);
    let q = query.q.unwrap_or_default();
    let back = list_path(&v.company);
    flow::get(v, back, move |p, m| gather(p, m, status, q, None), render).await
}

/// Create a subscription from the form (its customer upserted, cycle 0 issued): to its page
/// (303). A refused field shows the form again with the reason and the typed values.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = CreateSubscriptionForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "A malformed form, or a refused field: the form again with the reason (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/subscriptions")]
pub async fn create_subscription(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = list_path(&v.company);
    let company = v.company.clone();
    flow::post(
        v,
        body,
        back.clone(),
        CreateSubscriptionForm::csrf,
        move |p, m, f: CreateSubscriptionForm| {
            let made = match f.input() {
                Ok(input) => p
                    .subscriptions()
                    .create_subscription(&m.principal, input)
                    .map_err(ApiError::from),
                Err(field) => Err(field.into()),
            };
            match made {
                Ok(v) => Ok(Done::Back(subscription_path(
                    &company,
                    v.subscription.uid.as_str(),
                ))),
                Err(e) => refused_change(e, &back, |why| {
                    let f = CreateSubscriptionForm {
                        csrf_token: None,
                        ..f
                    };
                    gather(p, m, None, String::new(), Some((why, f)))
                }),
            }
        },
        render,
    )
    .await
}
