//! The dashboard's Bookkeeping screens: the wallet activity (`list_activity`, the JSON list's
//! call: the 200 newest, filtered by direction and by whether an outgoing transfer has its
//! expense), the accountant's CSV exports of a period (`export_page`, streamed as the JSON
//! export routes stream it, for the team of the path), an evidence file's bytes
//! (`evidence_content`); and an activity's page (`activity`) with its expense, the
//! counterparty search and the expense form with its evidence upload (multipart). Reads are
//! every member's; a change is the owner's or an admin's (`pay:bookkeeping:write`).

pub mod activity;
pub mod form;

use std::collections::HashMap;

use actix_web::http::{header, StatusCode};
use actix_web::{get, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::bookkeeping::{
    ActivityFilter, Direction, ExportKind, ExportPeriod, WalletActivity,
};
use pay_domain::kernel::timestamp::Timestamp;
use serde::Deserialize;
use utoipa::IntoParams;

use super::flow::{self, read_refusal};
use super::{refused, show, when, Frame, Member, Refused, ScreenRefusals, Visit, DASHBOARD_PATH};
use crate::api::bookkeeping::export::streamed;
use crate::api::bookkeeping::files::attachment;
use crate::edge::error::ApiError;
use crate::edge::form as forms;
use crate::pages::layout::{html, Layout};
use crate::HttpConfig;

/// `/dashboard/{company}/bookkeeping`.
pub(crate) fn list_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/bookkeeping")
}

/// `/dashboard/{company}/bookkeeping/activity/{id}`.
pub(crate) fn activity_path(company: &str, id: &str) -> String {
    format!("{}/activity/{id}", list_path(company))
}

/// The list's filters (`GET .../bookkeeping?direction=outgoing&expense=missing`).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ActivityListQuery {
    /// `incoming` or `outgoing`; empty: both.
    pub direction: Option<String>,
    /// `missing` (outgoing transfers without their expense) or `given` (with it); empty: all.
    pub expense: Option<String>,
}

impl ActivityListQuery {
    fn filter(&self) -> ActivityFilter {
        let has_expense = match self.expense.as_deref() {
            Some("missing") => Some(false),
            Some("given") => Some(true),
            _ => None,
        };
        ActivityFilter {
            direction: self.direction.as_deref().and_then(Direction::parse),
            has_expense,
            ..ActivityFilter::default()
        }
    }
}

/// `asset identifier -> "USDC (Base)"` for the company's settlement assets.
pub(crate) fn asset_labels(pay: &Pay, m: &Member) -> Result<HashMap<String, String>, ApiError> {
    Ok(pay
        .settings()
        .destination_assets(&m.principal)?
        .into_iter()
        .map(|(a, _)| {
            (
                a.asset_identifier,
                format!("{} ({})", a.symbol, a.chain_name),
            )
        })
        .collect())
}

/// One activity as listed.
struct Row {
    id: String,
    when: String,
    incoming: bool,
    amount: String,
    asset: String,
    counterparty: String,
    /// Outgoing: whether its expense is saved.
    explained: bool,
}

fn row(a: &WalletActivity, explained: bool, labels: &HashMap<String, String>) -> Row {
    Row {
        id: a.id.to_string(),
        when: when(a.occurred_at),
        incoming: a.direction == Direction::Incoming,
        amount: a.amount.to_string(),
        asset: labels.get(&a.asset).cloned().unwrap_or(a.asset.clone()),
        counterparty: a.counterparty_address.clone(),
        explained,
    }
}

#[derive(Template)]
#[template(path = "dashboard/bookkeeping.html")]
struct BookkeepingPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    rows: Vec<Row>,
    direction: String,
    expense: String,
    /// The export form's default period: the first day of the company's month to today.
    from: String,
    to: String,
}

pub(crate) struct Screen {
    m: Member,
    rows: Vec<Row>,
    query: ActivityListQuery,
    today: Timestamp,
}

fn gather(
    pay: &Pay,
    m: Member,
    query: ActivityListQuery,
) -> Result<Result<Screen, Refused>, ApiError> {
    let back = list_path(&m.principal.company_id.to_string());
    let list = match pay
        .bookkeeping()
        .list_activity(&m.principal, query.filter())
    {
        Ok(list) => list,
        Err(e) => return Ok(Err(read_refusal(e, &back)?)),
    };
    let labels = asset_labels(pay, &m)?;
    let (_, today) = pay.tenancy().pay_base_and_now(m.principal.company_id)?;
    Ok(Ok(Screen {
        rows: list.iter().map(|(a, has)| row(a, *has, &labels)).collect(),
        m,
        query,
        today,
    }))
}

/// `YYYY-MM-DD` of `t` (UTC).
fn day(t: Timestamp) -> String {
    t.to_rfc3339()[..10].to_owned()
}

fn render(pay: &Pay, config: &HttpConfig, s: Screen, code: StatusCode) -> HttpResponse {
    let m = &s.m;
    let today = day(s.today);
    show(pay, config, code, |nonce, prefix| {
        html(&BookkeepingPage {
            layout: Layout::wide(nonce, "Bookkeeping"),
            frame: Frame::new(prefix, m, "bookkeeping"),
            rows: s.rows,
            direction: s.query.direction.clone().unwrap_or_default(),
            expense: s.query.expense.clone().unwrap_or_default(),
            from: format!("{}01", &today[..8]),
            to: today,
        })
    })
}

/// The team's wallet activity (HTML): the 200 newest, filtered; the export form.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id"), ActivityListQuery),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The wallet activity and the CSV export form (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/bookkeeping")]
pub async fn bookkeeping_page(v: Visit) -> Result<HttpResponse, ApiError> {
    // A query that does not read (an unknown name, a name twice) lists everything.
    let query: ActivityListQuery = forms::decode_form(v.req.query_string().as_bytes())
        .ok()
        .and_then(|pairs| forms::read(&pairs).ok())
        .unwrap_or_default();
    let back = list_path(&v.company);
    flow::get(v, back, move |p, m| gather(p, m, query), render).await
}

/// The export form's query: which file and the UTC days it covers.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    /// `payments` or `expenses`.
    #[param(value_type = String, pattern = "^(payments|expenses)$", example = "payments")]
    pub kind: String,
    /// The first day (`YYYY-MM-DD`, UTC), included.
    #[param(value_type = String, format = Date, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", example = "2026-11-01")]
    pub from: String,
    /// The last day (`YYYY-MM-DD`, UTC), included; not before `from`.
    #[param(value_type = String, format = Date, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", example = "2026-11-30")]
    pub to: String,
}

/// `YYYY-MM-DD` as the start of that UTC day.
fn parse_day(field: &str, v: &str) -> Result<Timestamp, String> {
    let bad = || format!("{field} must be a day such as 2026-11-01");
    let mut it = v.split('-');
    let (Some(y), Some(m), Some(d), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return Err(bad());
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return Err(bad());
    }
    let num = |s: &str| s.parse::<u8>().map_err(|_| bad());
    let month = time::Month::try_from(num(m)?).map_err(|_| bad())?;
    let year = y.parse::<i32>().map_err(|_| bad())?;
    let date = time::Date::from_calendar_date(year, month, num(d)?).map_err(|_| bad())?;
    Ok(Timestamp::from_datetime(date.midnight().assume_utc()))
}

impl ExportQuery {
    /// The kind and the period: `from`'s day to the end of `to`'s.
    fn read(&self) -> Result<(ExportKind, ExportPeriod), String> {
        let kind = match self.kind.as_str() {
            "payments" => ExportKind::Payments,
            "expenses" => ExportKind::Expenses,
            _ => return Err("kind must be payments or expenses".into()),
        };
        let from = parse_day("from", &self.from)?;
        let to = parse_day("to", &self.to)?.plus(time::Duration::days(1));
        let period = ExportPeriod::new(Some(from), Some(to)).map_err(|e| e.message)?;
        Ok((kind, period))
    }
}

/// The accountant's CSV of the team (`payments` or `expenses`) for whole UTC days, streamed as
/// the JSON export routes stream it (same columns, format and file name; 500 rows per read).
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id"), ExportQuery),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The CSV (`Content-Disposition: attachment`), as `exports/payments.csv` or `exports/expenses.csv` gives it", content_type = "text/csv", body = String),
        (status = 400, description = "A kind or day that does not read, or `to` before `from` (HTML)", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/bookkeeping/export")]
pub async fn export_csv(v: Visit) -> Result<HttpResponse, ApiError> {
    let asked = forms::decode_form(v.req.query_string().as_bytes())
        .map_err(|_| "The export's query could not be read.".to_owned())
        .and_then(|pairs| forms::read::<ExportQuery>(&pairs))
        .and_then(|q| q.read());
    // As every dashboard form, the query is checked before the session: 400 whoever asks.
    let (kind, period) = match asked {
        Ok(k) => k,
        Err(why) => return Ok(refused(&v.pay, &v.config, Refused::BadForm(why))),
    };
    let back = list_path(&v.company);
    let got = v
        .screen(back.clone(), move |p, m| {
            match p
                .bookkeeping()
                .export_page(&m.principal, kind, &period, None)
            {
                Ok(first) => Ok(Ok((m.principal, kind, period, first))),
                Err(e) => Ok(Err(read_refusal(e, &back)?)),
            }
        })
        .await?;
    Ok(match got {
        Ok(Ok((principal, kind, period, first))) => {
            streamed(v.pay.clone(), principal, kind, period, first)
        }
        Ok(Err(r)) => refused(&v.pay, &v.config, r),
        Err(answer) => answer,
    })
}

/// An evidence file of the team: its bytes as an attachment of the sniffed type (as the JSON
/// route serves them: `nosniff`, never cached).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("fileId" = String, Path, description = "The evidence file's id"),
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The bytes (`Content-Disposition: attachment`)",
            content(
                (crate::api::bookkeeping::files::EvidenceBytes = "application/pdf"),
                (crate::api::bookkeeping::files::EvidenceBytes = "image/png"),
                (crate::api::bookkeeping::files::EvidenceBytes = "image/jpeg"),
                (crate::api::bookkeeping::files::EvidenceBytes = "image/webp"),
            )),
        (status = 303, description = "Not signed in: to `/signin` with `return_to`"),
        (status = 404, description = "Unknown company or file, or another team's (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/dashboard/{companyId}/bookkeeping/files/{fileId}")]
pub async fn evidence_download(v: Visit) -> Result<HttpResponse, ApiError> {
    let raw = v.req.match_info().get("fileId").unwrap_or("").to_owned();
    let back = list_path(&v.company);
    let got = v
        .screen(back.clone(), move |p, m| {
            let Ok(id) = crate::edge::evidence_file_id(&raw) else {
                return Ok(Err(Refused::NotFound));
            };
            match p.bookkeeping().evidence_content(&m.principal, id) {
                Ok(found) => Ok(Ok(found)),
                Err(e) => Ok(Err(read_refusal(e, &back)?)),
            }
        })
        .await?;
    Ok(match got {
        Ok(Ok((file, bytes))) => HttpResponse::Ok()
            .insert_header((header::CONTENT_TYPE, file.content_type.mime()))
            .insert_header((header::CONTENT_DISPOSITION, attachment(&file.filename)))
            .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
            .insert_header((header::CACHE_CONTROL, "private, no-store"))
            .body(bytes),
        Ok(Err(r)) => refused(&v.pay, &v.config, r),
        Err(answer) => answer,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_reads_whole_utc_days() {
        let q = |kind: &str, from: &str, to: &str| {
            ExportQuery {
                kind: kind.into(),
                from: from.into(),
                to: to.into(),
            }
            .read()
        };
        let (kind, p) = q("payments", "2026-11-01", "2026-11-30").unwrap();
        assert_eq!(kind, ExportKind::Payments);
        assert_eq!(p.from.to_rfc3339(), "2026-11-01T00:00:00.000Z");
        assert_eq!(p.to.to_rfc3339(), "2026-12-01T00:00:00.000Z");
        assert_eq!(
            q("expenses", "2026-11-05", "2026-11-05")
                .unwrap()
                .1
                .to
                .to_rfc3339(),
            "2026-11-06T00:00:00.000Z"
        );
        for (k, f, t) in [
            ("refunds", "2026-11-01", "2026-11-02"),
            ("payments", "2026-11-1", "2026-11-02"),
            ("payments", "2026-13-01", "2026-11-02"),
            ("payments", "2026-02-30", "2026-11-02"),
            ("payments", "2026-11-01T00:00:00Z", "2026-11-02"),
            ("payments", "2026-11-03", "2026-11-01"),
        ] {
            assert!(q(k, f, t).is_err(), "{k} {f} {t}");
        }
    }
}
