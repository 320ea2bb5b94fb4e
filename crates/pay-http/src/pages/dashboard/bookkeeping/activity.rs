//! An activity's page: its facts (`activity_detail`, the JSON detail's call), and for an
//! outgoing transfer its expense (counterparty, texts, amounts, evidence files, versions), the
//! counterparty search (`search_contacts`, a plain GET form) and, for owners and admins, the
//! expense form: one `multipart/form-data` POST that uploads its evidence file
//! (`upload_evidence`, the JSON upload's call, the same 10 MiB cap and sniffed types) and then
//! saves the expense (`save_expense`, the JSON save's call) with the whole file list.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpResponse};
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::bookkeeping::{ActivityDetail, ActivityRef, Direction, MAX_EVIDENCE_BYTES};
use pay_domain::customers::{Contact, ContactWithWallets};

use super::form::{split, ExpenseForm, NEW_VENDOR};
use super::{activity_path, asset_labels};
use crate::edge::error::ApiError;
use crate::edge::form::{self as forms, FormBody};
use crate::edge::multipart::{self, MultipartError};
use crate::pages::dashboard::flow::{self, given, read_refusal, refused_change, Done};
use crate::pages::dashboard::links::{outcome, Outcome};
use crate::pages::dashboard::{
    cross_site, refused, show, when, ChangeRefusals, Frame, Member, Refused, ScreenRefusals, Visit,
};
use crate::pages::layout::{html, Layout};
use crate::HttpConfig;

/// A label and its value.
struct Fact {
    name: &'static str,
    value: String,
}

/// A contact the counterparty can be.
struct Choice {
    id: String,
    label: String,
    selected: bool,
}

/// A contact the search found.
struct Hit {
    label: String,
    email: String,
    wallets: String,
}

struct FileRow {
    id: String,
    name: String,
    kind: &'static str,
    size: u64,
}

struct VersionRow {
    version: i64,
    when: String,
    by: String,
    changed: String,
}

/// The saved expense as shown.
struct Saved {
    facts: Vec<Fact>,
    files: Vec<FileRow>,
    versions: Vec<VersionRow>,
}

#[derive(Template)]
#[template(path = "dashboard/bookkeeping_activity.html")]
struct ActivityPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    id: String,
    outgoing: bool,
    facts: Vec<Fact>,
    saved: Option<Saved>,
    q: String,
    hits: Vec<Hit>,
    search_error: Option<String>,
    choices: Vec<Choice>,
    new_vendor: bool,
    error: Option<String>,
    f: ExpenseForm,
}

pub(crate) struct Screen {
    m: Member,
    detail: ActivityDetail,
    labels: HashMap<String, String>,
    q: String,
    hits: Vec<ContactWithWallets>,
    search_error: Option<String>,
    refused_form: Option<(String, ExpenseForm)>,
}

/// The activity of the path, the search's contacts, a refused form.
fn gather(
    pay: &Pay,
    m: Member,
    raw: &str,
    q: String,
    refused_form: Option<(String, ExpenseForm)>,
) -> Result<Result<Screen, Refused>, ApiError> {
    let back = activity_path(&m.principal.company_id.to_string(), raw);
    let Some(by) = ActivityRef::parse(raw) else {
        return Ok(Err(Refused::NotFound));
    };
    let detail = match pay.bookkeeping().activity_detail(&m.principal, &by) {
        Ok(d) => d,
        Err(e) => return Ok(Err(read_refusal(e, &back)?)),
    };
    let (mut hits, mut search_error) = (Vec::new(), None);
    if !q.trim().is_empty() {
        match pay.customers().search_contacts(&m.principal, &q, None) {
            Ok(found) => hits = found,
            Err(e) => match outcome(e, &back)? {
                Outcome::Shown(_, why) => search_error = Some(why),
                Outcome::Refused(r) => return Ok(Err(r)),
            },
        }
    }
    let labels = asset_labels(pay, &m)?;
    Ok(Ok(Screen {
        m,
        detail,
        labels,
        q,
        hits,
        search_error,
        refused_form,
    }))
}

fn contact_label(c: &Contact) -> String {
    match &c.name {
        Some(n) => format!("{n} <{}>", c.email),
        None => c.email.clone(),
    }
}

fn render(pay: &Pay, config: &HttpConfig, s: Screen, code: StatusCode) -> HttpResponse {
    let a = &s.detail.activity;
    let outgoing = a.direction == Direction::Outgoing;
    let mut facts = vec![
        Fact {
            name: "When",
            value: when(a.occurred_at),
        },
        Fact {
            name: "Direction",
            value: if outgoing { "Outgoing" } else { "Incoming" }.into(),
        },
        Fact {
            name: "Amount",
            value: format!(
                "{} {}",
                a.amount,
                s.labels.get(&a.asset).cloned().unwrap_or(a.asset.clone())
            ),
        },
        Fact {
            name: "Our wallet",
            value: a.wallet_address.clone(),
        },
        Fact {
            name: if outgoing { "Paid to" } else { "Paid by" },
            value: a.counterparty_address.clone(),
        },
        Fact {
            name: "Transaction",
            value: a.key.tx_hash().to_owned(),
        },
        Fact {
            name: "Activity key",
            value: a.key.to_string(),
        },
    ];
    if let Some(sid) = a.payment_session_id {
        facts.push(Fact {
            name: "Payment session",
            value: sid.to_string(),
        });
    }
    let saved = s.detail.expense.as_ref().map(|d| {
        let f = &d.expense.fields;
        let mut facts = vec![
            Fact {
                name: "Counterparty",
                value: d.contact.as_ref().map(contact_label).unwrap_or_default(),
            },
            Fact {
                name: "Category",
                value: f.category.clone(),
            },
            Fact {
                name: "Description",
                value: f.description.clone(),
            },
        ];
        if let Some(n) = &f.notes {
            facts.push(Fact {
                name: "Notes",
                value: n.clone(),
            });
        }
        let fiat = f.fiat_currency.clone().unwrap_or_default();
        if let Some(x) = &f.fiat_amount {
            facts.push(Fact {
                name: "Fiat amount",
                value: format!("{} {fiat}", x.as_str()),
            });
        }
        if let Some(x) = &f.tax_amount {
            facts.push(Fact {
                name: "Tax",
                value: format!("{} {fiat}", x.as_str()),
            });
        }
        Saved {
            facts,
            files: d
                .evidence
                .iter()
                .map(|e| FileRow {
                    id: e.id.to_string(),
                    name: e.filename.clone(),
                    kind: e.content_type.mime(),
                    size: e.size,
                })
                .collect(),
            versions: d
                .versions
                .iter()
                .rev()
                .map(|v| VersionRow {
                    version: v.version,
                    when: when(v.saved_at),
                    by: v.saved_by.clone(),
                    changed: v
                        .changes
                        .iter()
                        .map(|c| c.field)
                        .collect::<Vec<_>>()
                        .join(", "),
                })
                .collect(),
        }
    });
    let (error, f) = match s.refused_form {
        Some((e, f)) => (Some(e), f),
        None => (None, ExpenseForm::of(s.detail.expense.as_ref())),
    };
    // The contacts to choose from: the saved one, those that know the address, the search's.
    let mut contacts: Vec<&Contact> = Vec::new();
    let saved_contact = s.detail.expense.as_ref().and_then(|d| d.contact.as_ref());
    for c in saved_contact
        .into_iter()
        .chain(&s.detail.suggested_contacts)
        .chain(s.hits.iter().map(|h| &h.contact))
    {
        if !contacts.iter().any(|x| x.id == c.id) {
            contacts.push(c);
        }
    }
    let chosen = given(&f.contact_id).unwrap_or_default();
    let choices = contacts
        .iter()
        .map(|c| Choice {
            id: c.uid.to_string(),
            label: contact_label(c),
            selected: chosen == c.uid.to_string() || chosen == c.id.to_string(),
        })
        .collect();
    let hits = s
        .hits
        .iter()
        .map(|h| Hit {
            label: h.contact.name.clone().unwrap_or_default(),
            email: h.contact.email.clone(),
            wallets: h.wallets.join(", "),
        })
        .collect();
    let m = &s.m;
    show(pay, config, code, |nonce, prefix| {
        html(&ActivityPage {
            layout: Layout::wide(nonce, "Wallet activity"),
            frame: Frame::new(prefix, m, "bookkeeping"),
            can_manage: m.can_manage,
            id: a.id.to_string(),
            outgoing,
            facts,
            saved,
            q: s.q,
            hits,
            search_error: s.search_error,
            choices,
            new_vendor: chosen == NEW_VENDOR,
            error,
            f,
        })
    })
}

/// The counterparty search of an activity's page (`?q=`).
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CounterpartyQuery {
    /// Part of a contact's name, e-mail or client id (any case), or a known wallet address.
    pub q: Option<String>,
}

/// An activity of the team (HTML): its facts; an outgoing one's expense, the counterparty
/// search and the expense form.
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("activityId" = String, Path, description = "The activity's `id` or `key`"),
        CounterpartyQuery,
    ),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The activity, its expense and the expense form (HTML); a refused search says why", content_type = "text/html", body = String),
        ScreenRefusals,
    )
)]
#[get("/dashboard/{companyId}/bookkeeping/activity/{activityId}")]
pub async fn activity_page(v: Visit) -> Result<HttpResponse, ApiError> {
    let raw = v
        .req
        .match_info()
        .get("activityId")
        .unwrap_or("")
        .to_owned();
    let query: CounterpartyQuery = forms::decode_form(v.req.query_string().as_bytes())
        .ok()
        .and_then(|pairs| forms::read(&pairs).ok())
        .unwrap_or_default();
    let q = query.q.unwrap_or_default();
    let back = activity_path(&v.company, &raw);
    flow::get(v, back, move |p, m| gather(p, m, &raw, q, None), render).await
}

/// Save the expense of an outgoing transfer (`multipart/form-data`): the file in `evidence`,
/// if one is chosen, is uploaded and linked; `remove_evidence` unlinks one; the other linked
/// files stay. Done: back to the activity's page (303). As every dashboard form, the body is
/// read and checked before the session (a form that does not read is 400). A refused field or file shows the form again with the reason (the JSON
/// routes' status: 400, 404, 409, 413, 415).
#[utoipa::path(
    tag = "Dashboard",
    params(
        ("companyId" = String, Path, description = "The team's company id"),
        ("activityId" = String, Path, description = "The activity's `id` or `key`"),
    ),
    request_body(content = ExpenseForm, content_type = "multipart/form-data"),
    security((), ("session" = [])),
    responses(
        (status = 400, description = "Not a multipart form, a malformed one, an unknown or repeated field, or a refused field: the form again with the reason (HTML)", content_type = "text/html", body = String),
        (status = 409, description = "The file is linked to another expense: the form again (HTML)", content_type = "text/html", body = String),
        (status = 413, description = "A file over 10 MiB (HTML)", content_type = "text/html", body = String),
        (status = 415, description = "A file that is no PDF, PNG, JPEG or WebP by its bytes: the form again (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/bookkeeping/activity/{activityId}/expense")]
pub async fn save_expense(v: Visit, payload: web::Payload) -> Result<HttpResponse, ApiError> {
    let raw = v
        .req
        .match_info()
        .get("activityId")
        .unwrap_or("")
        .to_owned();
    let back = activity_path(&v.company, &raw);
    if let Some(r) = cross_site(&v.pay, &v.config, &v.req) {
        return Ok(r);
    }
    let bad = |why: String| refused(&v.pay, &v.config, Refused::BadForm(why));
    if multipart::boundary(&v.req).is_none() {
        return Ok(bad("The form could not be read.".into()));
    }
    let parts = multipart::read(&v.req, &mut payload.into_inner(), MAX_EVIDENCE_BYTES).await;
    let (pairs, upload) = match parts
        .map_err(|e| (e, String::new()))
        .and_then(|parts| split(parts).map_err(|why| (MultipartError::Malformed(why.clone()), why)))
    {
        Ok(x) => x,
        Err((MultipartError::TooLarge, _)) => {
            let mut res = bad("The file is larger than 10 MiB.".into());
            *res.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            return Ok(res);
        }
        Err((_, why)) if !why.is_empty() => return Ok(bad(why)),
        Err(_) => return Ok(bad("The form could not be read.".into())),
    };
    let company = v.company.clone();
    flow::post(
        v,
        FormBody(Ok(pairs)),
        back.clone(),
        ExpenseForm::csrf,
        move |p, m, f: ExpenseForm| {
            let again = |p: &Pay, m: Member, why: String, f: ExpenseForm| {
                let f = ExpenseForm {
                    csrf_token: None,
                    ..f
                };
                gather(p, m, &raw, String::new(), Some((why, f)))
            };
            let Some(by) = ActivityRef::parse(&raw) else {
                return Ok(Done::Refused(Refused::NotFound));
            };
            let detail = match p.bookkeeping().activity_detail(&m.principal, &by) {
                Ok(d) => d,
                Err(e) => return Ok(Done::Refused(read_refusal(e, &back)?)),
            };
            if detail.activity.direction != Direction::Outgoing {
                return Ok(Done::Refused(Refused::NotFound));
            }
            let remove = given(&f.remove_evidence).unwrap_or_default();
            let mut evidence: Vec<String> = detail
                .expense
                .iter()
                .flat_map(|d| d.expense.fields.evidence_file_ids.iter())
                .map(|id| id.to_string())
                .filter(|id| *id != remove)
                .collect();
            if let Some(up) = upload {
                match p
                    .bookkeeping()
                    .upload_evidence(&m.principal, &up.filename, &up.bytes)
                {
                    Ok(file) => evidence.push(file.id.to_string()),
                    Err(e) => return refused_change(e, &back, |why| again(p, m, why, f)),
                }
            }
            let input = f.input(detail.activity.id.to_string(), evidence);
            match p.bookkeeping().save_expense(&m.principal, input) {
                Ok(_) => Ok(Done::Back(activity_path(&company, &raw))),
                Err(e) => refused_change(e, &back, |why| again(p, m, why, f)),
            }
        },
        render,
    )
    .await
}
