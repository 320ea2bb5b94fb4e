//! The accountant's CSV exports (expenses, incoming payments) of a period, streamed page by
//! page (500 rows per store read). The caller, the query and the first page are checked
//! before the answer starts, so those failures keep their status; a later page's failure
//! can only cut the body short (and is logged).

use actix_web::web::Bytes;
use actix_web::{get, web, HttpRequest, HttpResponse};
use futures_util::stream;
use pay_domain::app::Pay;
use pay_domain::bookkeeping::{header_record, ExportCursor, ExportKind, ExportPage, ExportPeriod};
use pay_domain::tenancy::Principal;

use crate::api::bookkeeping::dto::parse_instant;
use crate::edge::credentials::{blocking, Credentials};
use crate::edge::error::{ApiError, ErrorBody};
use crate::edge::form::read_query;

fn read_period(query: &str) -> Result<ExportPeriod, ApiError> {
    let (mut from, mut to) = (None, None);
    for (k, v) in read_query(query, &["from", "to"])? {
        if k == "from" {
            from = Some(parse_instant("from", &v)?);
        } else {
            to = Some(parse_instant("to", &v)?);
        }
    }
    Ok(ExportPeriod::new(from, to)?)
}

/// What the stream carries from one page to the next.
struct Next {
    pay: web::Data<Pay>,
    principal: Principal,
    kind: ExportKind,
    period: ExportPeriod,
    after: ExportCursor,
}

async fn export(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
    kind: ExportKind,
) -> Result<HttpResponse, ApiError> {
    let query = req.query_string().to_owned();
    let p = pay.clone();
    let (principal, period, first) = blocking(move || {
        let principal = creds.principal(&p)?;
        let period = read_period(&query)?;
        let first = p
            .bookkeeping()
            .export_page(&principal, kind, &period, None)?;
        Ok((principal, period, first))
    })
    .await?;
    Ok(streamed(pay, principal, kind, period, first))
}

/// The export of `kind` for `principal`'s company, whose `first` page was read: the header
/// and that page, then the later pages read as the body streams. The API's routes and the
/// dashboard's export answer with it.
pub(crate) fn streamed(
    pay: web::Data<Pay>,
    principal: Principal,
    kind: ExportKind,
    period: ExportPeriod,
    first: ExportPage,
) -> HttpResponse {
    let mut head = header_record(kind);
    head.push_str(&first.csv);
    let next = first.next.map(|after| Next {
        pay,
        principal,
        kind,
        period,
        after,
    });
    let rest = stream::unfold(next, |state| async move {
        let n = state?;
        let (pay, principal) = (n.pay.clone(), n.principal.clone());
        let (kind, period, after) = (n.kind, n.period, n.after);
        let page = blocking(move || {
            Ok(pay
                .bookkeeping()
                .export_page(&principal, kind, &period, Some(&after))?)
        })
        .await;
        Some(match page {
            Ok(page) => {
                let next = page.next.map(|after| Next { after, ..n });
                (Ok(Bytes::from(page.csv)), next)
            }
            Err(e) => (Err(actix_web::Error::from(e)), None),
        })
    });
    let body = stream::iter([Ok::<_, actix_web::Error>(Bytes::from(head))]);
    let name = match kind {
        ExportKind::Expenses => "expenses",
        ExportKind::Payments => "payments",
    };
    let day = |t: pay_domain::kernel::timestamp::Timestamp| t.to_rfc3339()[..10].to_owned();
    HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            "Content-Disposition",
            format!(
                "attachment; filename=\"{name}_{}_{}.csv\"",
                day(period.from),
                day(period.to)
            ),
        ))
        .insert_header(("Cache-Control", "no-store"))
        .streaming(futures_util::StreamExt::chain(body, rest))
}

/// The company's expenses of a period as CSV (RFC 4180, CRLF, a header row), one row per
/// outgoing transfer that has its expense, oldest first: date (the transfer's, RFC 3339 UTC),
/// counterparty (contact name, else e-mail), its e-mail and address, asset, amount, fiat
/// currency and amount, tax, category, description, notes, tx hash, evidence count, expense
/// id, activity key. A cell starting with `=`, `+`, `-`, `@`, TAB or CR gets a leading `'`.
/// Streamed, 500 rows per page. Scope `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(
        ("from" = String, Query, format = DateTime, description = "RFC 3339; occurredAt >= from (required)"),
        ("to" = String, Query, format = DateTime, description = "RFC 3339; occurredAt < to, after from (required)"),
    ),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The CSV (`Content-Disposition: attachment`)", content_type = "text/csv", body = String),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:bookkeeping:read`)", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/bookkeeping/exports/expenses.csv")]
pub async fn export_expenses(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    export(pay, creds, req, ExportKind::Expenses).await
}

/// The company's incoming payments (incoming wallet activity) of a period as CSV, oldest
/// first: date, counterparty (the contact that knows the payer's address, else the
/// address), its e-mail and address, asset, amount, fiat currency and amount (the link's
/// fiat price, when it has one), tax (empty), tx hash, evidence count, link uid, session id,
/// activity key. Same format, guard and paging as the expenses export. Scope
/// `pay:bookkeeping:read`.
#[utoipa::path(
    tag = "Bookkeeping",
    params(
        ("from" = String, Query, format = DateTime, description = "RFC 3339; occurredAt >= from (required)"),
        ("to" = String, Query, format = DateTime, description = "RFC 3339; occurredAt < to, after from (required)"),
    ),
    security(("apiKeyId" = [], "apiKeySecret" = []), ("session" = [])),
    responses(
        (status = 200, description = "The CSV (`Content-Disposition: attachment`)", content_type = "text/csv", body = String),
        (status = 400, description = "`unknown_field` or `validation_failed` on a query parameter", body = ErrorBody),
        (status = 401, description = "`Unauthorized` or `Invalid pay API credentials` (also a grant without `pay:bookkeeping:read`)", body = ErrorBody),
    )
)]
#[get("/api/partner/v1/pay/bookkeeping/exports/payments.csv")]
pub async fn export_payments(
    pay: web::Data<Pay>,
    creds: Credentials,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    export(pay, creds, req, ExportKind::Payments).await
}
