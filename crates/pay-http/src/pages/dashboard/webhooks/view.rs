//! What the Webhooks screen shows, read through the webhook service: the callback (for owners
//! and admins), the endpoints' circuits, and the delivery log under the JSON log's filters.

use actix_web::http::StatusCode;
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::webhooks::{CallbackKind, CircuitState, Delivery, DeliveryStatus};

use super::{page_path, refusal};
use crate::api::webhooks::read_filter;
use crate::edge::error::ApiError;
use crate::edge::form::decode_form;
use crate::pages::checkout::path_prefix;
use crate::pages::dashboard::screen::{nonce, Answer};
use crate::pages::dashboard::{when, Frame, Member};
use crate::pages::layout::Layout;
use crate::HttpConfig;

/// What a POST adds to the screen: a secret just issued, a refused form, a notice.
#[derive(Default)]
pub(super) struct Extras {
    /// A signing secret just issued: shown this once.
    pub secret: Option<String>,
    /// The URL typed in a refused callback form, and why.
    pub url_value: Option<String>,
    pub url_error: Option<String>,
    pub notice: Option<String>,
    /// The link typed in a refused test-event form, and why.
    pub test_link: String,
    pub test_error: Option<String>,
}

/// The callback as shown (never its secret).
pub(super) struct CallbackRow {
    pub url: String,
    pub last4: String,
    pub created: String,
}

/// An endpoint's circuit as shown.
pub(super) struct CircuitRow {
    pub url: String,
    pub state: &'static str,
    pub detail: String,
}

/// One delivery of the log as shown.
pub(super) struct DeliveryRow {
    pub id: String,
    pub event: &'static str,
    pub origin: &'static str,
    pub status: &'static str,
    pub attempts: u32,
    pub answer: String,
    pub link: String,
    pub created: String,
}

impl From<Delivery> for DeliveryRow {
    fn from(d: Delivery) -> Self {
        DeliveryRow {
            id: d.id.to_string(),
            event: d.event.short_name(),
            origin: d.origin.as_str(),
            status: d.status.as_str(),
            attempts: d.attempts,
            answer: last_answer(d.last_response_status, d.last_error.map(|e| e.as_str())),
            link: d
                .payment_link_uid
                .or(d.subscription_uid)
                .unwrap_or_default(),
            created: when(d.created_at),
        }
    }
}

/// `HTTP 500`, an error's words, or a dash before any attempt.
pub(super) fn last_answer(status: Option<u16>, error: Option<&str>) -> String {
    match (status, error) {
        (Some(s), _) => format!("HTTP {s}"),
        (None, Some(e)) => e.to_owned(),
        (None, None) => "none yet".to_owned(),
    }
}

#[derive(Template)]
#[template(path = "dashboard/webhooks.html")]
struct WebhooksPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    callback: Option<CallbackRow>,
    extras: Extras,
    url_value: String,
    circuits: Vec<CircuitRow>,
    deliveries: Vec<DeliveryRow>,
    statuses: Vec<&'static str>,
    f_status: String,
    f_link: String,
    f_search: String,
    f_limit: String,
    filter_error: Option<String>,
}

fn state_words(s: CircuitState) -> &'static str {
    match s {
        CircuitState::Closed => "Closed: delivering",
        CircuitState::Failing => "Failing: retrying",
        CircuitState::Open => "Open: paused",
        CircuitState::Probing => "Probing: one delivery at a time",
    }
}

/// The screen of `m`'s team: its log filtered by `query` (the JSON log's parameters; empty
/// values, which a GET form sends for blank fields, are left out).
pub(super) fn screen(
    p: &Pay,
    c: &HttpConfig,
    m: &Member,
    query: &str,
    extras: Extras,
    status: StatusCode,
) -> Result<Answer, ApiError> {
    let company = m.principal.company_id;
    let back = page_path(&company.to_string());
    let decoded = decode_form(query.as_bytes());
    let pairs: Vec<(String, String)> = decoded
        .as_ref()
        .map(|all| all.iter().filter(|(_, v)| !v.is_empty()).cloned().collect())
        .unwrap_or_default();
    let typed = |name: &str| {
        pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let given = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs.iter())
        .finish();
    let (filter, filter_error) = if decoded.is_err() {
        (None, Some("The filter could not be read.".to_owned()))
    } else {
        match read_filter(&given) {
            Ok(f) => (Some(f), None),
            Err(ApiError::Invalid(f)) => (None, Some(f.message)),
            Err(ApiError::UnknownField(u)) => (None, Some(u.to_string())),
            Err(e) => return Err(e),
        }
    };
    let status = if filter_error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        status
    };
    let webhooks = p.webhooks();
    let deliveries = match filter {
        Some(f) => match webhooks.deliveries(&m.principal, f) {
            Ok(list) => list.into_iter().map(DeliveryRow::from).collect(),
            Err(e) => return Ok(Answer::Refused(refusal(e, &back)?)),
        },
        None => vec![],
    };
    // The callback is an owner's or admin's setting (the service refuses a member).
    let callback = if m.can_manage {
        match webhooks.company_callback(&m.signed_in, company, CallbackKind::CompanyPayment) {
            Ok(v) => v.map(|v| CallbackRow {
                url: v.url,
                last4: v.secret_last4,
                created: when(v.secret_created_at),
            }),
            Err(e) => return Ok(Answer::Refused(refusal(e, &back)?)),
        }
    } else {
        None
    };
    let now = p.now();
    let mut circuits: Vec<CircuitRow> = webhooks
        .endpoint_circuits(company)?
        .into_iter()
        .map(|ci| CircuitRow {
            state: state_words(ci.state(now)),
            detail: format!(
                "{} failed attempt{} since {}, the last at {}{}",
                ci.failures,
                if ci.failures == 1 { "" } else { "s" },
                when(ci.failing_since),
                when(ci.last_failure_at),
                match ci.paused_until {
                    Some(t) if t > now => format!("; paused until {}", when(t)),
                    _ => String::new(),
                }
            ),
            url: ci.endpoint.url,
        })
        .collect();
    if let Some(cb) = &callback {
        if !circuits.iter().any(|ci| ci.url == cb.url) {
            circuits.insert(
                0,
                CircuitRow {
                    url: cb.url.clone(),
                    state: state_words(CircuitState::Closed),
                    detail: "No failure since the last delivered attempt.".into(),
                },
            );
        }
    }
    let url_value = extras
        .url_value
        .clone()
        .or_else(|| callback.as_ref().map(|cb| cb.url.clone()))
        .unwrap_or_default();
    let prefix = path_prefix(&c.base_url);
    let n = nonce(p);
    let page = WebhooksPage {
        layout: Layout::wide(&n, "Webhooks"),
        frame: Frame::new(&prefix, m, "webhooks"),
        can_manage: m.can_manage,
        callback,
        url_value,
        extras,
        circuits,
        deliveries,
        statuses: DeliveryStatus::ALL.iter().map(|s| s.as_str()).collect(),
        f_status: typed("deliveryStatus"),
        f_link: typed("paymentLinkUid"),
        f_search: typed("search"),
        f_limit: typed("limit"),
        filter_error,
    };
    Ok(Answer::page(status, n.clone(), &page))
}
