//! A company's pay settings as stored: created with the company (`TenancyStore::create_tenant`)
//! and read with it (`company_with_settings`). The rules that change them (the settings patch,
//! a link's overrides) are the settings context's.

use serde::{Deserialize, Serialize};

use crate::kernel::amount::Decimal;
use crate::kernel::assets::AssetCatalogue;

/// Who pays the processing fee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeePayer {
    Client,
    Merchant,
}

impl FeePayer {
    pub fn as_str(self) -> &'static str {
        match self {
            FeePayer::Client => "client",
            FeePayer::Merchant => "merchant",
        }
    }

    pub fn parse(s: &str) -> Option<FeePayer> {
        match s {
            "client" => Some(FeePayer::Client),
            "merchant" => Some(FeePayer::Merchant),
            _ => None,
        }
    }
}

/// Product availability for the team.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProductStatus {
    Active,
    Paused,
}

impl ProductStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProductStatus::Active => "active",
            ProductStatus::Paused => "paused",
        }
    }

    pub fn parse(s: &str) -> Option<ProductStatus> {
        match s {
            "active" => Some(ProductStatus::Active),
            "paused" => Some(ProductStatus::Paused),
            _ => None,
        }
    }
}

/// A company's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaySettings {
    pub status: ProductStatus,
    pub default_destination_asset: Option<String>,
    pub fee_paid_by: FeePayer,
    pub skip_quote_acceptance: bool,
    /// Percent, -1 ..= 1.
    pub merchant_surcharge_percent: Decimal,
    pub return_redirect_url: Option<String>,
    pub success_redirect_url: Option<String>,
    pub failure_redirect_url: Option<String>,
    pub underpayment_percent_enabled: bool,
    /// Percent, 0 ..= 100.
    pub underpayment_percent_threshold: Decimal,
    pub underpayment_fixed_enabled: bool,
    /// In the invoice currency, >= 0.
    pub underpayment_fixed_threshold: Decimal,
}

impl PaySettings {
    /// What a new company starts with.
    pub fn new_company_default(catalogue: &AssetCatalogue) -> Self {
        PaySettings {
            status: ProductStatus::Active,
            default_destination_asset: Some(
                catalogue
                    .default_for_new_companies()
                    .asset_identifier
                    .clone(),
            ),
            fee_paid_by: FeePayer::Merchant,
            skip_quote_acceptance: false,
            merchant_surcharge_percent: Decimal::ZERO,
            return_redirect_url: None,
            success_redirect_url: None,
            failure_redirect_url: None,
            underpayment_percent_enabled: false,
            underpayment_percent_threshold: Decimal::ZERO,
            underpayment_fixed_enabled: false,
            underpayment_fixed_threshold: Decimal::ZERO,
        }
    }
}
