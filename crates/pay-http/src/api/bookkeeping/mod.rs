//! Bookkeeping: the merchant's wallet activity (list, detail, the sandbox's outgoing
//! transfer), `createBookkeepingExpenseFromActivity`, and the contact search the expense's
//! counterparty is picked from; the accountant's CSV exports (`export`); private evidence
//! files (`files`).

pub mod dto;
pub mod export;
pub mod files;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::bookkeeping::{ActivityFilter, Direction, SavedExpense};
use pay_domain::FieldError;

use crate::api::bookkeeping::dto::{
    parse_instant, BookkeepingContactDto, BookkeepingExpenseDto, ContactSearchHit,
    ContactSearchList, CreateBookkeepingExpenseRequest, SandboxOutgoingTransferRequest,
    WalletActivityDetailDto, WalletActivityDto, WalletActivityList,
};
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::form::read_query;
use crate::edge::idempotency::{json_answer, reply, Keyed, KEY_DOC};
use crate::edge::json::JsonBody;

fn read_filter(query: &str) -> Result<ActivityFilter, ApiError> {
    let mut f = ActivityFilter::default();
    for (k, v) in read_query(query, &["direction", "asset", "from", "to", "hasExpense"])? {
        match k.as_str() {
            "direction" => {
                f.direction = Some(Direction::parse(&v).ok_or_else(|| {
                    FieldError::new("direction", "direction must be incoming or outgoing")
                })?)
            }
            "asset" => f.asset = Some(v),
            "from" => f.from = Some(parse_instant("from", &v)?),
            "to" => f.to = Some(parse_instant("to", &v)?),
            _ => {
                f.has_expense = Some(match v.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => {
                        return Err(FieldError::new(
                            "hasExpense",
                            "hasExpense must be true or false",
                        )
                        .into())
                    }
                })
            }
        }
    }
    Ok(f)
}

/// The company's wallet activity, newest first (up to 200). Filters: `direction`, `asset`,
/// the period `from` (inclusive) to `to` (exclusive), `hasExpense` (outgoing activities with
/// or without their expense). Scope `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(
        ("direction" = inline(Option<ActivityDirectionParam>), Query),
        ("asset" = Option<String>, Query, description = "An asset identifier"),
        ("from" = Option<String>, Query, format = DateTime, description = "RFC 3339; occurredAt >= from"),
        ("to" = Option<String>, Query, format = DateTime, description = "RFC 3339; occurredAt < to (after from)"),
        ("hasExpense" = Option<bool>, Query, description = "Outgoing activities with (true) or without (false) an expense"),
    ),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, body = WalletActivityList),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:bookkeeping:read`)", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/bookkeeping/wallet-activity")]
pub async fn list_wallet_activity(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let list = blocking(move || {
        let principal = creds.principal(&pay)?;
        let filter = read_filter(&query)?;
        Ok(pay.bookkeeping().list_activity(&principal, filter)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(WalletActivityList {
        data: list
            .into_iter()
            .map(|(a, has)| WalletActivityDto::new(a, has))
            .collect(),
    }))
}

/// One activity (by `id` or `key`) with its expense and that expense's versions; an outgoing
/// one also lists the contacts whose known wallet addresses include its counterparty
/// (`suggestedCounterparties`). Scope `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(("activityId" = String, Path, description = "The activity's `id` or `key`")),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, body = WalletActivityDetailDto),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 404, description = "Unknown, or another company's", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/bookkeeping/wallet-activity/{activityId}")]
pub async fn get_wallet_activity(
    pay: web::Data<Pay>,
    creds: Credentials,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let detail = blocking(move || {
        let principal = creds.principal(&pay)?;
        let by = crate::edge::activity_ref(&id)?;
        Ok(pay.bookkeeping().activity_detail(&principal, &by)?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(WalletActivityDetailDto::from(detail)))
}

/// Sandbox only: records an outgoing transfer from the company's settlement wallet as a real
/// processor's wallet view would report it. 201 when recorded, 200 when this key was
/// reported before (the stored activity, unchanged). Scope `pay:bookkeeping:write`.
#[utoipa::path(
    tag = "Bookkeeping",
    request_body = SandboxOutgoingTransferRequest,
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "Recorded", body = WalletActivityDto),
        (status = 200, description = "Reported before: the stored activity", body = WalletActivityDto),
        (status = 400, description = "Invalid body (the field is named)", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "Not in sandbox mode", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/sandbox/wallet-activity/outgoing")]
pub async fn sandbox_outgoing_transfer(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: JsonBody,
) -> Result<HttpResponse, ApiError> {
    let recorded = blocking(move || {
        let principal = creds.principal(&pay)?;
        let input = body
            .read::<SandboxOutgoingTransferRequest>()?
            .try_into_domain()?;
        Ok(pay.bookkeeping().report_outgoing(&principal, input)?)
    })
    .await?;
    let mut res = if recorded.was_created() {
        HttpResponse::Created()
    } else {
        HttpResponse::Ok()
    };
    Ok(res.json(WalletActivityDto::new(recorded.activity().clone(), false)))
}

/// `createBookkeepingExpenseFromActivity`: saves the bookkeeping details of one of the
/// company's outgoing transfers. Creates its expense (201) or updates the one it has (200),
/// never a second one, also under concurrent saves; every save is a version (who, when, what
/// changed). An incoming activity or another company's is 404. Scope `pay:bookkeeping:write`.
#[utoipa::path(
    tag = "Bookkeeping",
    operation_id = "createBookkeepingExpenseFromActivity",
    request_body = CreateBookkeepingExpenseRequest,
    params(("Idempotency-Key" = Option<String>, Header, min_length = 1, max_length = 255, pattern = "^[ -~]*[!-~][ -~]*$", description = KEY_DOC)),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 201, description = "Created; a replay carries `Idempotent-Replayed: true` (the first answer, status and body; no other version)", body = BookkeepingExpenseDto),
        (status = 200, description = "Updated: the activity's one expense", body = BookkeepingExpenseDto),
        (status = 400, description = "Invalid body (the field is named); `validation_failed` on `Idempotency-Key`", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:bookkeeping:write`)", body = ErrorBody),
        (status = 403, description = "Session without `settings.manage` or CSRF token", body = ErrorBody),
        (status = 404, description = "No such outgoing activity of the company, no such contact, or an `evidenceFileIds` entry that is no stored file of the company (`field` names it)", body = ErrorBody),
        (status = 409, description = "`evidence_file_linked`: an `evidenceFileIds` entry is linked to another expense (`field` names it); `idempotency_key_reused` (the key was used for another request) or `idempotency_key_in_flight` (the first is still running)", body = ErrorBody),
    )
)]
#[post("/api/partner/v1/pay/bookkeeping/expenses/from-activity")]
pub async fn create_expense_from_activity(
    pay: web::Data<Pay>,
    creds: Credentials,
    body: Keyed,
) -> Result<HttpResponse, ApiError> {
    blocking(move || {
        let principal = creds.principal(&pay)?;
        let body = body.open()?;
        let input = body
            .read::<CreateBookkeepingExpenseRequest>()?
            .try_into_domain()?;
        let render = |saved: &SavedExpense| {
            let status = if saved.created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            json_answer(status, &BookkeepingExpenseDto::from(saved.detail.clone()))
        };
        let answer =
            pay.bookkeeping()
                .save_expense_keyed(&principal, input, body.call(&render)?)?;
        reply(answer, &render)
    })
    .await?
    .response()
}

/// Searches the company's contacts (customers, vendors, both): `q` matches a part of the
/// name, e-mail or clientId without case, or a known wallet address exactly; `role` keeps
/// customers or vendors. The one list payment links, subscriptions and expenses pick from.
/// Scope `pay:customers:read` or `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Customers",
    params(
        ("q" = String, Query, min_length = 1, max_length = 200, description = "1 to 200 characters, not only spaces"),
        ("role" = inline(Option<ContactRoleParam>), Query),
    ),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, body = ContactSearchList),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials`", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/contacts/search")]
pub async fn search_contacts(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let hits = blocking(move || {
        let principal = creds.principal(&pay)?;
        let mut text = String::new();
        let mut role = None;
        for (k, v) in read_query(&query, &["q", "role"])? {
            if k == "q" {
                text = v;
            } else {
                role = Some(v);
            }
        }
        Ok(pay
            .customers()
            .search_contacts(&principal, &text, role.as_deref())?)
    })
    .await?;
    Ok(HttpResponse::Ok().json(ContactSearchList {
        data: hits
            .into_iter()
            .map(|h| ContactSearchHit {
                contact: BookkeepingContactDto::from(h.contact),
                wallet_addresses: h.wallets,
            })
            .collect(),
    }))
}

// The document's query enums; the queries themselves are read by `read_filter` and
// `search_contacts`.
/// Which way funds moved.
#[derive(Debug, Clone, Copy, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum ActivityDirectionParam {
    Incoming,
    Outgoing,
}

/// A contact role to search for.
#[derive(Debug, Clone, Copy, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum ContactRoleParam {
    Customer,
    Vendor,
}
