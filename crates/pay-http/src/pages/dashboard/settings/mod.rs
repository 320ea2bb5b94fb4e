//! The dashboard's Settings screen: every PaySettings field with the spec's ranges, saved by
//! the same settings service call as `PUT /api/partner/v1/pay/settings` (a refused field
//! shows the form again with the reason and what was typed, 400), the default settlement
//! asset, and the EVM settlement wallet (an extended public key, set by the same chain
//! service call as `PUT .../settlement-wallets/evm`, shown with its first derived addresses).
//! A read-only member reads the settings as a list, with no form, and each POST answers 403.

mod view;

use actix_web::http::StatusCode;
use actix_web::{get, post, web, HttpRequest, HttpResponse};
use pay_domain::app::Pay;
use pay_domain::chains::WalletError;
use pay_domain::settings::{SettingsError, SettingsPatch};
use serde::Deserialize;
use utoipa::ToSchema;

use super::screen::{change, denied, Answer};
use super::{blocking, member, session_token, ChangeRefusals, Refused, Visit, DASHBOARD_PATH};
use crate::edge::error::ApiError;
use crate::edge::form::FormBody;
use crate::HttpConfig;
use view::{screen, Extras, Values};

/// The settings form: the names of the settings PUT's fields. A checkbox sent (any value) is
/// on, absent off; a blank URL or asset clears it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsForm {
    #[serde(rename = "csrf_token")]
    pub csrf_token: Option<String>,
    /// `active` or `paused`.
    pub status: Option<String>,
    /// An enabled settlement asset; blank: none.
    pub default_destination_asset: Option<String>,
    /// `client` or `merchant`.
    pub fee_paid_by: Option<String>,
    pub skip_quote_acceptance: Option<String>,
    /// -1 to 1.
    pub merchant_surcharge_percent: Option<String>,
    pub return_redirect_url: Option<String>,
    pub success_redirect_url: Option<String>,
    pub failure_redirect_url: Option<String>,
    pub underpayment_percent_enabled: Option<String>,
    /// 0 to 100.
    pub underpayment_percent_threshold: Option<String>,
    pub underpayment_fixed_enabled: Option<String>,
    /// At least 0.
    pub underpayment_fixed_threshold: Option<String>,
}

impl SettingsForm {
    /// The whole form as the settings PUT's patch: every field given.
    fn patch(&self) -> SettingsPatch {
        let text = |v: &Option<String>| Some(v.clone().unwrap_or_default().trim().to_owned());
        let nullable = |v: &Option<String>| {
            Some(
                v.as_deref()
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            )
        };
        SettingsPatch {
            status: text(&self.status),
            default_destination_asset: nullable(&self.default_destination_asset),
            fee_paid_by: text(&self.fee_paid_by),
            skip_quote_acceptance: Some(self.skip_quote_acceptance.is_some()),
            merchant_surcharge_percent: text(&self.merchant_surcharge_percent),
            return_redirect_url: nullable(&self.return_redirect_url),
            success_redirect_url: nullable(&self.success_redirect_url),
            failure_redirect_url: nullable(&self.failure_redirect_url),
            underpayment_percent_enabled: Some(self.underpayment_percent_enabled.is_some()),
            underpayment_percent_threshold: text(&self.underpayment_percent_threshold),
            underpayment_fixed_enabled: Some(self.underpayment_fixed_enabled.is_some()),
            underpayment_fixed_threshold: text(&self.underpayment_fixed_threshold),
        }
    }
}

/// The wallet form.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WalletForm {
    pub csrf_token: Option<String>,
    /// A BIP32 extended public key (`xpub...`, 111 base58 characters); a private key is
    /// refused and never kept or shown.
    pub xpub: Option<String>,
}

pub(crate) fn page_path(company: &str) -> String {
    format!("{DASHBOARD_PATH}/{company}/settings")
}

/// A settings refusal that is no field's, as a page.
pub(crate) fn settings_refusal(e: SettingsError, back: &str) -> Result<Refused, ApiError> {
    match e {
        SettingsError::Denied(d) => Ok(denied(d, back)),
        other => Err(other.into()),
    }
}

/// The team's Settings screen (HTML).
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "The settings and the settlement wallet (HTML)", content_type = "text/html", body = String),
        (status = 303, description = "Not signed in: to `/signin` with `return_to`"),
        (status = 404, description = "Unknown company, or one the user is not a member of (HTML)", content_type = "text/html", body = String),
    )
)]
#[get("/dashboard/{companyId}/settings")]
pub async fn settings_page(
    pay: web::Data<Pay>,
    config: web::Data<HttpConfig>,
    req: HttpRequest,
    company: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let company = company.into_inner();
    let token = session_token(&req);
    let (p, c) = (pay.clone(), config.clone());
    let answer =
        blocking(
            move || match member(&p, token.as_deref(), &company, &page_path(&company))? {
                Ok(m) => screen(&p, &c, &m, Extras::default(), StatusCode::OK),
                Err(r) => Ok(Answer::Refused(r)),
            },
        )
        .await?;
    Ok(answer.respond(&pay, &config))
}

/// Save the settings (every field of the form, checked as the settings PUT checks them); a
/// refused field shows the form again with the reason and the typed values.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = SettingsForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "Saved: the screen (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "No form, one that cannot be read, or a refused field: the form again (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/settings")]
pub async fn save_settings(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = page_path(&v.company);
    change(
        v,
        body,
        back,
        |f: &SettingsForm| f.csrf_token.as_deref(),
        |p, c, m, f| {
            let back = page_path(&m.principal.company_id.to_string());
            let refused = |field: String, why: String| Extras {
                typed: Some(Values::from(&f)),
                error_field: field,
                error: Some(why),
                ..Extras::default()
            };
            let extras = match p.settings().update_settings(&m.principal, f.patch()) {
                Ok(_) => Extras {
                    notice: Some("The settings are saved.".into()),
                    ..Extras::default()
                },
                Err(SettingsError::Invalid(e)) => refused(e.field, e.message),
                Err(SettingsError::Asset(a)) => {
                    refused("defaultDestinationAsset".into(), a.to_string())
                }
                Err(e) => return Ok(Answer::Refused(settings_refusal(e, &back)?)),
            };
            let status = if extras.error.is_some() {
                StatusCode::BAD_REQUEST
            } else {
                StatusCode::OK
            };
            screen(p, c, &m, extras, status)
        },
    )
    .await
}

/// Set the EVM settlement wallet's extended public key (sessions already started keep their
/// addresses): the screen with its first derived addresses. A refused key is never shown
/// again.
#[utoipa::path(
    tag = "Dashboard",
    params(("companyId" = String, Path, description = "The team's company id")),
    request_body(content = WalletForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("session" = [])),
    responses(
        (status = 200, description = "Set: the screen with the wallet's first addresses (HTML)", content_type = "text/html", body = String),
        (status = 400, description = "No form, one that cannot be read, or a refused key (a private key is never kept) (HTML)", content_type = "text/html", body = String),
        ChangeRefusals,
    )
)]
#[post("/dashboard/{companyId}/settings/wallet")]
pub async fn set_wallet(v: Visit, body: FormBody) -> Result<HttpResponse, ApiError> {
    let back = page_path(&v.company);
    change(
        v,
        body,
        back,
        |f: &WalletForm| f.csrf_token.as_deref(), |p, c, m, f| {
        let back = page_path(&m.principal.company_id.to_string());
        let xpub = f.xpub.unwrap_or_default();
        let (extras, status) = match p.chains().put_wallet(&m.principal, &xpub) {
            Ok(_) => (
                Extras {
                    notice: Some("The settlement wallet is set: check its first addresses against your wallet.".into()),
                    ..Extras::default()
                },
                StatusCode::OK,
            ),
            Err(WalletError::Xpub(why)) => (
                Extras {
                    wallet_error: Some(why.to_string()),
                    ..Extras::default()
                },
                StatusCode::BAD_REQUEST,
            ),
            Err(WalletError::Invalid(e)) => (
                Extras {
                    wallet_error: Some(e.message),
                    ..Extras::default()
                },
                StatusCode::BAD_REQUEST,
            ),
            Err(WalletError::Denied(d)) => return Ok(Answer::Refused(denied(d, &back))),
            Err(e) => return Err(e.into()),
        };
        screen(p, c, &m, extras, status)
    })
    .await
}
