//! The links list and the create form. The list is `LinkService::find_links` (the JSON list's
//! 200 newest, narrowed by status and search in the store); the create is
//! `LinkService::create_link` on the form's fields as `CreateLinkInput`, the JSON create's
//! input, so every field is checked by the same rules. A refused field shows the form again
//! with the reason and what was typed (400).

use actix_web::http::StatusCode;
use actix_web::{get, post, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::links::{CreateLinkInput, ExpirationTime, LinkState, LinkStatus, PaymentLink};
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use super::{link_path, list_path, outcome, Outcome};
use crate::edge::error::ApiError;
use crate::edge::form::{self, FormBody};
use crate::pages::dashboard::screen::{self, Answer};
use crate::pages::dashboard::{
    when, ChangeRefusals, Frame, Member, Refused, ScreenRefusals, Visit,
};
use crate::pages::layout::{html, Layout};

/// The list's filters (`GET .../links?status=paused&q=mug`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LinkListQuery {
    /// `active`, `paused` or `archived`; absent or empty: every status.
    pub status: Option<String>,
    /// Part of an order id, title or customer e-mail, in any case.
    pub q: Option<String>,
}

/// The create form: every field of the JSON create payload (empty is absent).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateLinkForm {
    pub csrf_token: Option<String>,
    pub amount: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub fiat_currency: Option<String>,
    pub currency: Option<String>,
    pub asset: Option<String>,
    /// `on` when ticked.
    pub skip_quote_acceptance: Option<String>,
    /// `client` or `merchant`; empty: the team's setting.
    pub fee_paid_by: Option<String>,
    pub order_id: Option<String>,
    pub invoice_pdf_url: Option<String>,
    pub customer_email: Option<String>,
    pub client_id: Option<String>,
    pub return_url: Option<String>,
    pub success_url: Option<String>,
    pub failure_url: Option<String>,
    /// `15m`, `1h`, `12h`, `24h`, `72h` or `never`.
    pub expiration_time: Option<String>,
    /// A JSON object.
    pub metadata: Option<String>,
}

fn given(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

impl CreateLinkForm {
    fn csrf(&self) -> Option<&str> {
        self.csrf_token.as_deref()
    }

    /// The JSON create's input: empty fields absent; `metadata` must read as a JSON object
    /// (the one type check a form cannot make by its shape).
    fn input(&self) -> Result<CreateLinkInput, pay_domain::FieldError> {
        let metadata = match given(&self.metadata) {
            None => None,
            Some(text) => Some(serde_json::from_str::<Map<String, Value>>(&text).map_err(
                |_| {
                    pay_domain::FieldError::new(
                        "metadata",
                        "metadata must be a JSON object such as {\"orderRef\": \"A-17\"}",
                    )
                },
            )?),
        };
        Ok(CreateLinkInput {
            title: given(&self.title),
            description: given(&self.description),
            amount: self.amount.as_deref().unwrap_or("").trim().to_owned(),
            fiat_currency: given(&self.fiat_currency),
            currency: given(&self.currency),
            asset: given(&self.asset),
            skip_quote_acceptance: self.skip_quote_acceptance.as_ref().map(|_| true),
            fee_paid_by: given(&self.fee_paid_by),
            order_id: given(&self.order_id),
            invoice_pdf_url: given(&self.invoice_pdf_url),
            customer_email: given(&self.customer_email),
            client_id: given(&self.client_id),
            return_url: given(&self.return_url),
            success_url: given(&self.success_url),
            failure_url: given(&self.failure_url),
            expiration_time: given(&self.expiration_time),
            metadata,
        })
    }
}

/// One link as listed.
struct Row {
    uid: String,
    title: String,
    amount: String,
    state: &'static str,
    order_id: String,
    email: String,
    created: String,
}

/// One destination asset of the create form.
struct AssetChoice {
    id: String,
    label: String,
}

#[derive(Template)]
#[template(path = "dashboard/links.html")]
struct LinksPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    rows: Vec<Row>,
    status: String,
    q: String,
    statuses: [&'static str; 3],
    expirations: Vec<&'static str>,
    assets: Vec<AssetChoice>,
    error: Option<String>,
    f: CreateLinkForm,
}

/// What the screen shows besides the list: the filters and a refused form.
struct Screen {
    m: Member,
    links: Vec<PaymentLink>,
    now: pay_domain::kernel::timestamp::Timestamp,
    assets: Vec<AssetChoice>,
    status: Option<LinkStatus>,
    q: String,
    refused_form: Option<(String, CreateLinkForm)>,
}

fn gather(
    pay: &Pay,
    m: Member,
    status: Option<LinkStatus>,
    q: String,
    refused_form: Option<(String, CreateLinkForm)>,
) -> Result<Result<Screen, Refused>, ApiError> {
    let back = list_path(&m.principal.company_id.to_string());
    let links = match pay.links().find_links(&m.principal, status, &q) {
        Ok(l) => l,
        Err(e) => {
            return Ok(Err(match outcome(e, &back)? {
                Outcome::Refused(r) => r,
                Outcome::Shown(..) => Refused::NotFound,
            }))
        }
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
    let (_, now) = pay.tenancy().pay_base_and_now(m.principal.company_id)?;
    Ok(Ok(Screen {
        m,
        links,
        now,
        assets,
        status,
        q,
        refused_form,
    }))
}

fn render(pay: &Pay, config: &crate::HttpConfig, s: Screen, code: StatusCode) -> Answer {
    let (error, f) = match s.refused_form {
        Some((e, f)) => (Some(e), f),
        None => (None, CreateLinkForm::default()),
    };
    let m = &s.m;
    Answer::shown(pay, config, code, |nonce, prefix| {
        html(&LinksPage {
            layout: Layout::wide(nonce, "Payment links"),
            frame: Frame::new(prefix, m, "links"),
            can_manage: m.can_manage,
            rows: s
                .links
                .iter()
                .map(|l| Row {
                    uid: l.uid.to_string(),
                    title: l.payload.title.clone().unwrap_or_default(),
                    amount: format!(
                        "{} {}",
                        l.payload.amount.as_str(),
                        l.payload
                            .fiat_currency
                            .as_deref()
                            .unwrap_or(&l.payload.currency)
                    ),
                    state: LinkState::of(l, s.now).as_str(),
                    order_id: l.payload.order_id.clone().unwrap_or_default(),
                    email: l.payload.customer_email.clone().unwrap_or_default(),
                    created: when(l.created_at),
                })
                .collect(),
            status: s.status.map(|x| x.as_str()).unwrap_or("").to_owned(),
            q: s.q,
            statuses: ["active", "paused", "archived"],
            expirations: ExpirationTime::ALL.iter().map(|e| e.as_str()).collect(),
            assets: s.assets,
            error,
            f,
        })
    })
}

/// The team's payment links (HTML): the 200 newest, by status and search.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id"), LinkListQuery),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The links and the create form (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/links")]
pub async fn links_page(v: Visit) -> Result<HttpResponse, ApiError> {
    // A query that does not read (a name twice, bad escapes) lists every link.
    let query: LinkListQuery = form::decode_form(v.req.query_string().as_bytes())
        .ok()
        .and_then(|pairs| form::read(&pairs).ok())
        .unwrap_or_default();
    let status = query.status.as_deref().and_then(LinkStatus::parse);
    let q = query.q.unwrap_or_default();
    let c = v.config.clone();
    let got = v
        .screen(list_path(&v.company), move |p, m| {
            Ok(match gather(p, m, status, q, None)? {
                Ok(s) => render(p, &c, s, StatusCode::OK),
                Err(r) => Answer::Refused(r),
            })
        })
        .await?;
    Ok(match got {
        Ok(answer) => answer.respond(&v.pay, &v.config),
        Err(answer) => answer,
    })
}

/// Create a payment link from the form: to its detail (303). A refused field shows the form
/// again with the reason and the typed values.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = CreateLinkForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "A malformed form, or a refused field: the form again with the reason (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/links")]
pub async fn create_link(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = list_path(&v.company);
    let company = v.company.clone();
    screen::change(
        v,
        body,
        back.clone(),
        CreateLinkForm::csrf,
        move |p, c, m, f| {
            let made = match f.input() {
                Ok(input) => p
                    .links()
                    .create_link(&m.principal, input)
                    .map_err(ApiError::from),
                Err(field) => Err(field.into()),
            };
            let why = match made {
                Ok(link) => return Ok(Answer::Back(link_path(&company, link.uid.as_str()))),
                Err(e) => e,
            };
            Ok(match outcome(why, &back)? {
                Outcome::Refused(r) => Answer::Refused(r),
                Outcome::Shown(code, why) => {
                    let f = CreateLinkForm {
                        csrf_token: None,
                        ..f
                    };
                    match gather(p, m, None, String::new(), Some((why, f)))? {
                        Ok(s) => render(p, c, s, code),
                        Err(r) => Answer::Refused(r),
                    }
                }
            })
        },
    )
    .await
}
