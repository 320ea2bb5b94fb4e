//! Request and response shapes of the settings routes.

use crate::api::schema;
use crate::edge::error::ApiError;
use crate::edge::exact_json::ExactNumbers;
use crate::edge::json::{non_null, nullable};
use pay_domain::kernel::assets::DestinationAsset;
use pay_domain::settings::PaySettings;
use pay_domain::settings::SettingsPatch;
use serde::Deserialize;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Number;
use utoipa::ToSchema;

data_list!(
    DestinationAssetList,
    DestinationAssetDto,
    "Enabled settlement assets."
);

/// Merchant settings.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PaySettingsDto {
    #[schema(example = "active")]
    pub status: String,
    pub default_destination_asset: Option<String>,
    #[schema(example = "merchant")]
    pub fee_paid_by: String,
    pub skip_quote_acceptance: bool,
    #[schema(value_type = f64, example = 0.5)]
    pub merchant_surcharge_percent: Box<RawValue>,
    pub return_redirect_url: Option<String>,
    pub success_redirect_url: Option<String>,
    pub failure_redirect_url: Option<String>,
    pub underpayment_percent_enabled: bool,
    #[schema(value_type = f64)]
    pub underpayment_percent_threshold: Box<RawValue>,
    pub underpayment_fixed_enabled: bool,
    #[schema(value_type = f64)]
    pub underpayment_fixed_threshold: Box<RawValue>,
}

/// A settings decimal as a JSON number with exactly its digits (no float: `0.50` stays `0.50`,
/// 18 places stay 18). A `Decimal` prints `-?digits[.digits]`, always a valid JSON number.
fn json_number(d: pay_domain::kernel::amount::Decimal) -> Box<RawValue> {
    RawValue::from_string(d.to_string()).unwrap_or_else(|_| unreachable!("a decimal is JSON"))
}

impl From<PaySettings> for PaySettingsDto {
    fn from(s: PaySettings) -> Self {
        PaySettingsDto {
            status: s.status.as_str().into(),
            default_destination_asset: s.default_destination_asset,
            fee_paid_by: s.fee_paid_by.as_str().into(),
            skip_quote_acceptance: s.skip_quote_acceptance,
            merchant_surcharge_percent: json_number(s.merchant_surcharge_percent),
            return_redirect_url: s.return_redirect_url,
            success_redirect_url: s.success_redirect_url,
            failure_redirect_url: s.failure_redirect_url,
            underpayment_percent_enabled: s.underpayment_percent_enabled,
            underpayment_percent_threshold: json_number(s.underpayment_percent_threshold),
            underpayment_fixed_enabled: s.underpayment_fixed_enabled,
            underpayment_fixed_threshold: json_number(s.underpayment_fixed_threshold),
        }
    }
}

/// A settlement asset.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DestinationAssetDto {
    #[schema(example = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913")]
    pub asset_identifier: String,
    #[schema(example = "base")]
    pub chain_code: String,
    pub chain_name: String,
    #[schema(example = "USDC")]
    pub symbol: String,
    pub name: String,
    #[schema(example = 6)]
    pub decimals: u32,
    pub is_default: bool,
}

impl DestinationAssetDto {
    pub fn new(a: DestinationAsset, is_default: bool) -> Self {
        DestinationAssetDto {
            asset_identifier: a.asset_identifier,
            chain_code: a.chain_code,
            chain_name: a.chain_name,
            symbol: a.symbol,
            name: a.name,
            decimals: a.decimals,
            is_default,
        }
    }
}

/// Body of `PUT /api/partner/v1/pay/settings`: any subset of the fields; `null` clears a
/// nullable field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSettingsRequest {
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::product_status)]
    pub status: Option<String>,
    /// One of the enabled assets (`GET /api/partner/v1/pay/destination-assets`); `null` clears it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub default_destination_asset: Option<Option<String>>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(schema_with = schema::fee_paid_by_setting)]
    pub fee_paid_by: Option<String>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub skip_quote_acceptance: Option<bool>,
    /// -1 to 1.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Option<f64>, nullable = false, minimum = -1, maximum = 1)]
    pub merchant_surcharge_percent: Option<Number>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::settings_url)]
    pub return_redirect_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::settings_url)]
    pub success_redirect_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = schema::settings_url)]
    pub failure_redirect_url: Option<Option<String>>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub underpayment_percent_enabled: Option<bool>,
    /// 0 to 100.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(value_type = Option<f64>, nullable = false, minimum = 0, maximum = 100)]
    pub underpayment_percent_threshold: Option<Number>,
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub underpayment_fixed_enabled: Option<bool>,
    /// At least 0, below 10^18.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(
        value_type = Option<f64>,
        nullable = false,
        minimum = 0,
        exclusive_maximum = 1e18
    )]
    pub underpayment_fixed_threshold: Option<Number>,
}

impl UpdateSettingsRequest {
    /// The domain's patch; the decimal fields are taken as the exact text the client sent
    /// (`exact`), never through the float that `Number` holds.
    pub fn into_patch(self, exact: &ExactNumbers) -> Result<SettingsPatch, ApiError> {
        Ok(SettingsPatch {
            status: self.status,
            default_destination_asset: self.default_destination_asset,
            fee_paid_by: self.fee_paid_by,
            skip_quote_acceptance: self.skip_quote_acceptance,
            merchant_surcharge_percent: exact.get("merchantSurchargePercent")?,
            return_redirect_url: self.return_redirect_url,
            success_redirect_url: self.success_redirect_url,
            failure_redirect_url: self.failure_redirect_url,
            underpayment_percent_enabled: self.underpayment_percent_enabled,
            underpayment_percent_threshold: exact.get("underpaymentPercentThreshold")?,
            underpayment_fixed_enabled: self.underpayment_fixed_enabled,
            underpayment_fixed_threshold: exact.get("underpaymentFixedThreshold")?,
        })
    }
}
