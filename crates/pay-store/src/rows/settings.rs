//! The company's pay settings row.

use diesel::prelude::*;
use pay_domain::kernel::ids::CompanyId;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::settings::{FeePayer, PaySettings, ProductStatus};
use pay_domain::{Fault, PortResult};

use super::{corrupt, decimal};
use crate::conn::MultiBackend;
use crate::schema::pay_settings;

// ----- settings -----

#[derive(Queryable, Selectable)]
#[diesel(table_name = pay_settings, check_for_backend(MultiBackend))]
pub(crate) struct SettingsRow {
    status: String,
    default_destination_asset: Option<String>,
    fee_paid_by: String,
    skip_quote_acceptance: bool,
    merchant_surcharge_percent: String,
    return_redirect_url: Option<String>,
    success_redirect_url: Option<String>,
    failure_redirect_url: Option<String>,
    underpayment_percent_enabled: bool,
    underpayment_percent_threshold: String,
    underpayment_fixed_enabled: bool,
    underpayment_fixed_threshold: String,
}

impl TryFrom<SettingsRow> for PaySettings {
    type Error = Fault;

    fn try_from(r: SettingsRow) -> PortResult<PaySettings> {
        Ok(PaySettings {
            status: ProductStatus::parse(&r.status)
                .ok_or_else(|| corrupt("pay_settings.status"))?,
            default_destination_asset: r.default_destination_asset,
            fee_paid_by: FeePayer::parse(&r.fee_paid_by)
                .ok_or_else(|| corrupt("pay_settings.fee_paid_by"))?,
            skip_quote_acceptance: r.skip_quote_acceptance,
            merchant_surcharge_percent: decimal(
                &r.merchant_surcharge_percent,
                "pay_settings.merchant_surcharge_percent",
            )?,
            return_redirect_url: r.return_redirect_url,
            success_redirect_url: r.success_redirect_url,
            failure_redirect_url: r.failure_redirect_url,
            underpayment_percent_enabled: r.underpayment_percent_enabled,
            underpayment_percent_threshold: decimal(
                &r.underpayment_percent_threshold,
                "pay_settings.underpayment_percent_threshold",
            )?,
            underpayment_fixed_enabled: r.underpayment_fixed_enabled,
            underpayment_fixed_threshold: decimal(
                &r.underpayment_fixed_threshold,
                "pay_settings.underpayment_fixed_threshold",
            )?,
        })
    }
}

/// Written whole by both insert and update. `treat_none_as_null`: a cleared URL must become
/// NULL, not "leave the column alone" (diesel's default for `None` in a changeset).
#[derive(Insertable, AsChangeset)]
#[diesel(
    table_name = pay_settings,
    primary_key(company_id),
    treat_none_as_default_value = false,
    treat_none_as_null = true
)]
pub(crate) struct NewSettingsRow<'a> {
    company_id: String,
    status: &'static str,
    default_destination_asset: Option<&'a str>,
    fee_paid_by: &'static str,
    skip_quote_acceptance: bool,
    merchant_surcharge_percent: String,
    return_redirect_url: Option<&'a str>,
    success_redirect_url: Option<&'a str>,
    failure_redirect_url: Option<&'a str>,
    underpayment_percent_enabled: bool,
    underpayment_percent_threshold: String,
    underpayment_fixed_enabled: bool,
    underpayment_fixed_threshold: String,
    updated_at: i64,
}

impl<'a> NewSettingsRow<'a> {
    pub(crate) fn new(company: CompanyId, s: &'a PaySettings, at: Timestamp) -> Self {
        NewSettingsRow {
            company_id: company.to_string(),
            status: s.status.as_str(),
            default_destination_asset: s.default_destination_asset.as_deref(),
            fee_paid_by: s.fee_paid_by.as_str(),
            skip_quote_acceptance: s.skip_quote_acceptance,
            merchant_surcharge_percent: s.merchant_surcharge_percent.to_string(),
            return_redirect_url: s.return_redirect_url.as_deref(),
            success_redirect_url: s.success_redirect_url.as_deref(),
            failure_redirect_url: s.failure_redirect_url.as_deref(),
            underpayment_percent_enabled: s.underpayment_percent_enabled,
            underpayment_percent_threshold: s.underpayment_percent_threshold.to_string(),
            underpayment_fixed_enabled: s.underpayment_fixed_enabled,
            underpayment_fixed_threshold: s.underpayment_fixed_threshold.to_string(),
            updated_at: at.unix_millis(),
        }
    }
}
