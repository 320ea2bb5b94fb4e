//! What the Settings screen shows: every PaySettings field (in the form for owners and
//! admins, as a list for members), the settlement assets, and the EVM settlement wallet with
//! its first derived addresses.

use actix_web::http::StatusCode;
use askama::Template;
use pay_domain::app::Pay;
use pay_domain::chains::WalletError;
use pay_domain::settings::PaySettings;

use super::{page_path, settings_refusal, SettingsForm};
use crate::edge::error::ApiError;
use crate::pages::checkout::path_prefix;
use crate::pages::dashboard::screen::{denied, nonce, Answer};
use crate::pages::dashboard::{when, Frame, Member};
use crate::pages::layout::Layout;
use crate::HttpConfig;

/// The form's values: the stored settings, or what a refused form typed.
pub(super) struct Values {
    pub status: String,
    pub default_asset: String,
    pub fee_paid_by: String,
    pub skip_quote: bool,
    pub surcharge: String,
    pub return_url: String,
    pub success_url: String,
    pub failure_url: String,
    pub pct_enabled: bool,
    pub pct_threshold: String,
    pub fixed_enabled: bool,
    pub fixed_threshold: String,
}

impl From<&PaySettings> for Values {
    fn from(s: &PaySettings) -> Self {
        Values {
            status: s.status.as_str().into(),
            default_asset: s.default_destination_asset.clone().unwrap_or_default(),
            fee_paid_by: s.fee_paid_by.as_str().into(),
            skip_quote: s.skip_quote_acceptance,
            surcharge: s.merchant_surcharge_percent.to_string(),
            return_url: s.return_redirect_url.clone().unwrap_or_default(),
            success_url: s.success_redirect_url.clone().unwrap_or_default(),
            failure_url: s.failure_redirect_url.clone().unwrap_or_default(),
            pct_enabled: s.underpayment_percent_enabled,
            pct_threshold: s.underpayment_percent_threshold.to_string(),
            fixed_enabled: s.underpayment_fixed_enabled,
            fixed_threshold: s.underpayment_fixed_threshold.to_string(),
        }
    }
}

impl From<&SettingsForm> for Values {
    fn from(f: &SettingsForm) -> Self {
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        Values {
            status: text(&f.status),
            default_asset: text(&f.default_destination_asset),
            fee_paid_by: text(&f.fee_paid_by),
            skip_quote: f.skip_quote_acceptance.is_some(),
            surcharge: text(&f.merchant_surcharge_percent),
            return_url: text(&f.return_redirect_url),
            success_url: text(&f.success_redirect_url),
            failure_url: text(&f.failure_redirect_url),
            pct_enabled: f.underpayment_percent_enabled.is_some(),
            pct_threshold: text(&f.underpayment_percent_threshold),
            fixed_enabled: f.underpayment_fixed_enabled.is_some(),
            fixed_threshold: text(&f.underpayment_fixed_threshold),
        }
    }
}

/// A settlement asset of the select.
pub(super) struct AssetOption {
    pub id: String,
    pub label: String,
}

/// The wallet as shown.
pub(super) struct WalletRow {
    pub xpub: String,
    pub fingerprint: String,
    pub addresses: Vec<String>,
    pub handed_out: u32,
    pub updated: String,
}

/// What a POST adds: a notice, or a refused form (its field and why).
#[derive(Default)]
pub(super) struct Extras {
    pub notice: Option<String>,
    pub typed: Option<Values>,
    pub error_field: String,
    pub error: Option<String>,
    pub wallet_error: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/settings.html")]
struct SettingsPage<'a> {
    layout: Layout<'a>,
    frame: Frame<'a>,
    can_manage: bool,
    v: Values,
    summary: Vec<(&'static str, String)>,
    assets: Vec<AssetOption>,
    wallet: Option<WalletRow>,
    notice: Option<String>,
    error_field: String,
    error: Option<String>,
    wallet_error: Option<String>,
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn or_none(s: &str) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        s.to_owned()
    }
}

/// The settings as a member reads them.
fn summary(v: &Values, assets: &[AssetOption]) -> Vec<(&'static str, String)> {
    let asset = assets
        .iter()
        .find(|a| a.id == v.default_asset)
        .map(|a| a.label.clone())
        .unwrap_or_else(|| "none".into());
    vec![
        ("Status", v.status.clone()),
        ("Default settlement asset", asset),
        ("Fee paid by", v.fee_paid_by.clone()),
        ("Skip quote acceptance", yes_no(v.skip_quote)),
        ("Merchant surcharge (%)", v.surcharge.clone()),
        ("Return URL", or_none(&v.return_url)),
        ("Success URL", or_none(&v.success_url)),
        ("Failure URL", or_none(&v.failure_url)),
        (
            "Accept underpayments within a percentage",
            yes_no(v.pct_enabled),
        ),
        ("Underpayment tolerance (%)", v.pct_threshold.clone()),
        (
            "Accept underpayments within a fixed amount",
            yes_no(v.fixed_enabled),
        ),
        ("Underpayment tolerance (fixed)", v.fixed_threshold.clone()),
    ]
}

/// The screen of `m`'s team.
pub(super) fn screen(
    p: &Pay,
    c: &HttpConfig,
    m: &Member,
    extras: Extras,
    status: StatusCode,
) -> Result<Answer, ApiError> {
    let back = page_path(&m.principal.company_id.to_string());
    let stored = match p.settings().settings(&m.principal) {
        Ok(s) => s,
        Err(e) => return Ok(Answer::Refused(settings_refusal(e, &back)?)),
    };
    let assets: Vec<AssetOption> = match p.settings().destination_assets(&m.principal) {
        Ok(list) => list
            .into_iter()
            .map(|(a, _)| AssetOption {
                label: format!("{} ({})", a.symbol, a.chain_name),
                id: a.asset_identifier,
            })
            .collect(),
        Err(e) => return Ok(Answer::Refused(settings_refusal(e, &back)?)),
    };
    let wallet = match p.chains().wallet(&m.principal) {
        Ok(w) => Some(WalletRow {
            xpub: w.wallet.xpub,
            fingerprint: w.wallet.fingerprint,
            addresses: w.first_addresses,
            handed_out: w.wallet.next_index,
            updated: when(w.wallet.updated_at),
        }),
        Err(WalletError::NotFound(_)) => None,
        Err(WalletError::Denied(d)) => return Ok(Answer::Refused(denied(d, &back))),
        Err(e) => return Err(e.into()),
    };
    let v = extras.typed.unwrap_or_else(|| Values::from(&stored));
    let prefix = path_prefix(&c.base_url);
    let n = nonce(p);
    let page = SettingsPage {
        layout: Layout::wide(&n, "Settings"),
        frame: Frame::new(&prefix, m, "settings"),
        can_manage: m.can_manage,
        summary: summary(&v, &assets),
        v,
        assets,
        wallet,
        notice: extras.notice,
        error_field: extras.error_field,
        error: extras.error,
        wallet_error: extras.wallet_error,
    };
    Ok(Answer::page(status, n.clone(), &page))
}
