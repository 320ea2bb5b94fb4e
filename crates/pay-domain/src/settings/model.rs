//! Merchant settings (PaySettings) and the partial update the settings PUT applies.

use crate::kernel::amount::{Decimal, DecimalError};
use crate::kernel::assets::AssetCatalogue;
use crate::kernel::assets::AssetRefusal;
use crate::kernel::error::FieldError;
use crate::kernel::validate;
use crate::settings::SettingsError;
pub use crate::tenancy::{FeePayer, PaySettings, ProductStatus};

/// A partial update: `None` leaves a field alone; for nullable fields `Some(None)` clears it.
/// Numbers arrive as the decimal text of the JSON number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsPatch {
    pub status: Option<String>,
    pub default_destination_asset: Option<Option<String>>,
    pub fee_paid_by: Option<String>,
    pub skip_quote_acceptance: Option<bool>,
    pub merchant_surcharge_percent: Option<String>,
    pub return_redirect_url: Option<Option<String>>,
    pub success_redirect_url: Option<Option<String>>,
    pub failure_redirect_url: Option<Option<String>>,
    pub underpayment_percent_enabled: Option<bool>,
    pub underpayment_percent_threshold: Option<String>,
    pub underpayment_fixed_enabled: Option<bool>,
    pub underpayment_fixed_threshold: Option<String>,
}

/// The fields the settings PUT takes; which of them may be `null`.
pub const SETTINGS_FIELDS: &[(&str, bool)] = &[
    ("status", false),
    ("defaultDestinationAsset", true),
    ("feePaidBy", false),
    ("skipQuoteAcceptance", false),
    ("merchantSurchargePercent", false),
    ("returnRedirectUrl", true),
    ("successRedirectUrl", true),
    ("failureRedirectUrl", true),
    ("underpaymentPercentEnabled", false),
    ("underpaymentPercentThreshold", false),
    ("underpaymentFixedEnabled", false),
    ("underpaymentFixedThreshold", false),
];

/// A settings number from its exact decimal text (what the client sent, never a float): within
/// the range, at most 18 decimal places, and never `-0`. The value keeps its written scale, so
/// it is stored and echoed as sent (`0.50` stays `0.50`).
fn number_in(field: &str, text: &str, min: &str, max: Option<&str>) -> Result<Decimal, FieldError> {
    let range = match max {
        Some(max) => format!("{field} must be a number from {min} to {max}"),
        None => format!("{field} must be a number of at least {min}"),
    };
    let v = Decimal::parse(text).map_err(|e| {
        let why = match e {
            DecimalError::NegativeZero => format!("{field} must not be -0 (zero has no sign)"),
            DecimalError::TooPrecise(n) => {
                format!("{field} has more than {n} decimal places and cannot be kept exactly")
            }
            _ => range.clone(),
        };
        FieldError::new(field, why)
    })?;
    let lo = Decimal::parse(min).unwrap_or(Decimal::ZERO);
    let too_high = max
        .and_then(|m| Decimal::parse(m).ok())
        .is_some_and(|hi| v > hi);
    if v < lo || too_high {
        return Err(FieldError::new(field, range));
    }
    Ok(v)
}

impl SettingsPatch {
    /// Checks every given field and returns the settings with the patch applied.
    pub fn apply(
        self,
        current: &PaySettings,
        catalogue: &AssetCatalogue,
    ) -> Result<PaySettings, SettingsError> {
        let mut s = current.clone();
        if let Some(v) = self.status {
            s.status = ProductStatus::parse(&v)
                .ok_or_else(|| FieldError::new("status", "status must be active or paused"))?;
        }
        if let Some(v) = self.default_destination_asset {
            if let Some(id) = &v {
                if catalogue.get(id).is_none() {
                    return Err(AssetRefusal::InvalidDestinationAsset {
                        field: "defaultDestinationAsset".into(),
                        message: format!("asset {id} is not an enabled destination asset"),
                    }
                    .into());
                }
            }
            s.default_destination_asset = v;
        }
        if let Some(v) = self.fee_paid_by {
            s.fee_paid_by = FeePayer::parse(&v).ok_or_else(|| {
                FieldError::new("feePaidBy", "feePaidBy must be client or merchant")
            })?;
        }
        if let Some(v) = self.skip_quote_acceptance {
            s.skip_quote_acceptance = v;
        }
        if let Some(v) = self.merchant_surcharge_percent {
            s.merchant_surcharge_percent =
                number_in("merchantSurchargePercent", &v, "-1", Some("1"))?;
        }
        for (field, patch, slot) in [
            (
                "returnRedirectUrl",
                self.return_redirect_url,
                &mut s.return_redirect_url,
            ),
            (
                "successRedirectUrl",
                self.success_redirect_url,
                &mut s.success_redirect_url,
            ),
            (
                "failureRedirectUrl",
                self.failure_redirect_url,
                &mut s.failure_redirect_url,
            ),
        ] {
            if let Some(v) = patch {
                if let Some(url) = &v {
                    validate::http_url(field, url)?;
                }
                *slot = v;
            }
        }
        if let Some(v) = self.underpayment_percent_enabled {
            s.underpayment_percent_enabled = v;
        }
        if let Some(v) = self.underpayment_percent_threshold {
            s.underpayment_percent_threshold =
                number_in("underpaymentPercentThreshold", &v, "0", Some("100"))?;
        }
        if let Some(v) = self.underpayment_fixed_enabled {
            s.underpayment_fixed_enabled = v;
        }
        if let Some(v) = self.underpayment_fixed_threshold {
            s.underpayment_fixed_threshold =
                number_in("underpaymentFixedThreshold", &v, "0", None)?;
        }
        Ok(s)
    }
}

/// The metadata keys a link (and a subscription, for its cycle links) may carry to override
/// the company's redirect and underpayment-tolerance settings for that link alone: the
/// settings' own names and rules. A link's own `successUrl`/`failureUrl`/`returnUrl` still win.
pub const LINK_SETTING_KEYS: &[&str] = &[
    "returnRedirectUrl",
    "successRedirectUrl",
    "failureRedirectUrl",
    "underpaymentPercentEnabled",
    "underpaymentPercentThreshold",
    "underpaymentFixedEnabled",
    "underpaymentFixedThreshold",
];

/// The company's settings as one link sees them: the advanced settings of the link's
/// `metadata` (`LINK_SETTING_KEYS`) applied over `company`, each checked by the settings' own
/// rule; a bad one names `metadata.<key>`. Without such keys, `company` unchanged.
pub fn with_link_overrides(
    company: &PaySettings,
    metadata: Option<&serde_json::Map<String, serde_json::Value>>,
    catalogue: &AssetCatalogue,
) -> Result<PaySettings, FieldError> {
    use serde_json::Value;
    let Some(m) = metadata else {
        return Ok(company.clone());
    };
    let field = |k: &str| format!("metadata.{k}");
    let url = |k: &str| -> Result<Option<Option<String>>, FieldError> {
        match m.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(Some(s.clone()))),
            Some(_) => Err(FieldError::new(
                field(k),
                format!("{} must be a URL string", field(k)),
            )),
        }
    };
    let flag = |k: &str| -> Result<Option<bool>, FieldError> {
        match m.get(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            // The gateway form's metadata values are strings.
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(_) => Err(FieldError::new(
                field(k),
                format!("{} must be true or false", field(k)),
            )),
        }
    };
    let number = |k: &str| -> Result<Option<String>, FieldError> {
        match m.get(k) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(FieldError::new(
                field(k),
                format!("{} must be a number", field(k)),
            )),
        }
    };
    let patch = SettingsPatch {
        return_redirect_url: url("returnRedirectUrl")?,
        success_redirect_url: url("successRedirectUrl")?,
        failure_redirect_url: url("failureRedirectUrl")?,
        underpayment_percent_enabled: flag("underpaymentPercentEnabled")?,
        underpayment_percent_threshold: number("underpaymentPercentThreshold")?,
        underpayment_fixed_enabled: flag("underpaymentFixedEnabled")?,
        underpayment_fixed_threshold: number("underpaymentFixedThreshold")?,
        ..SettingsPatch::default()
    };
    patch.apply(company, catalogue).map_err(|e| match e {
        SettingsError::Invalid(f) => FieldError::new(field(&f.field), f.message),
        other => FieldError::new("metadata", other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> PaySettings {
        PaySettings::new_company_default(&AssetCatalogue::builtin())
    }

    fn apply(p: SettingsPatch) -> Result<PaySettings, SettingsError> {
        p.apply(&base(), &AssetCatalogue::builtin())
    }

    fn field(r: Result<PaySettings, SettingsError>) -> String {
        match r {
            Err(SettingsError::Invalid(FieldError { field, .. }))
            | Err(SettingsError::Asset(AssetRefusal::InvalidDestinationAsset { field, .. })) => {
                field
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn empty_patch_changes_nothing() {
        assert_eq!(apply(SettingsPatch::default()).unwrap(), base());
    }

    #[test]
    fn surcharge_edges() {
        for ok in ["-1", "1", "0", "0.25", "-0.999"] {
            let s = apply(SettingsPatch {
                merchant_surcharge_percent: Some(ok.into()),
                ..Default::default()
            })
            .unwrap();
            assert_eq!(s.merchant_surcharge_percent, Decimal::parse(ok).unwrap());
        }
        for bad in [
            "1.0001",
            "-1.01",
            "2",
            "x",
            "-0",
            "-0.0",
            "0.1234567890123456789",
        ] {
            let r = apply(SettingsPatch {
                merchant_surcharge_percent: Some(bad.into()),
                ..Default::default()
            });
            assert_eq!(field(r), "merchantSurchargePercent");
        }
    }

    #[test]
    fn numbers_keep_their_exact_text_and_refuse_negative_zero() {
        let s = apply(SettingsPatch {
            merchant_surcharge_percent: Some("0.123456789012345678".into()),
            underpayment_percent_threshold: Some("99.999999999999999999".into()),
            underpayment_fixed_threshold: Some("123456789012345678.5".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            s.merchant_surcharge_percent.to_string(),
            "0.123456789012345678"
        );
        assert_eq!(
            s.underpayment_percent_threshold.to_string(),
            "99.999999999999999999"
        );
        assert_eq!(
            s.underpayment_fixed_threshold.to_string(),
            "123456789012345678.5"
        );
        let s = apply(SettingsPatch {
            merchant_surcharge_percent: Some("0.50".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(s.merchant_surcharge_percent.to_string(), "0.50");
        for (patch, field) in [
            (
                SettingsPatch {
                    merchant_surcharge_percent: Some("-0".into()),
                    ..Default::default()
                },
                "merchantSurchargePercent",
            ),
            (
                SettingsPatch {
                    underpayment_percent_threshold: Some("-0.0".into()),
                    ..Default::default()
                },
                "underpaymentPercentThreshold",
            ),
            (
                SettingsPatch {
                    underpayment_fixed_threshold: Some("-0".into()),
                    ..Default::default()
                },
                "underpaymentFixedThreshold",
            ),
        ] {
            match apply(patch) {
                Err(SettingsError::Invalid(FieldError { field: f, message })) => {
                    assert_eq!(f, field);
                    assert_eq!(
                        message,
                        format!("{field} must not be -0 (zero has no sign)")
                    );
                }
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn thresholds_and_enums() {
        let r = apply(SettingsPatch {
            underpayment_percent_threshold: Some("100.5".into()),
            ..Default::default()
        });
        assert_eq!(field(r), "underpaymentPercentThreshold");
        let r = apply(SettingsPatch {
            underpayment_fixed_threshold: Some("-0.01".into()),
            ..Default::default()
        });
        assert_eq!(field(r), "underpaymentFixedThreshold");
        let r = apply(SettingsPatch {
            status: Some("gone".into()),
            ..Default::default()
        });
        assert_eq!(field(r), "status");
        let r = apply(SettingsPatch {
            fee_paid_by: Some("x".into()),
            ..Default::default()
        });
        assert_eq!(field(r), "feePaidBy");
        let r = apply(SettingsPatch {
            default_destination_asset: Some(Some("eip155:1/erc20:0xnope".into())),
            ..Default::default()
        });
        assert_eq!(field(r), "defaultDestinationAsset");
        let r = apply(SettingsPatch {
            success_redirect_url: Some(Some("nope".into())),
            ..Default::default()
        });
        assert_eq!(field(r), "successRedirectUrl");
    }

    #[test]
    fn null_clears_and_values_set() {
        let s = apply(SettingsPatch {
            default_destination_asset: Some(None),
            success_redirect_url: Some(Some("https://shop.example/ok".into())),
            skip_quote_acceptance: Some(true),
            status: Some("paused".into()),
            fee_paid_by: Some("client".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(s.default_destination_asset, None);
        assert_eq!(
            s.success_redirect_url.as_deref(),
            Some("https://shop.example/ok")
        );
        assert!(s.skip_quote_acceptance);
        assert_eq!(s.status, ProductStatus::Paused);
        assert_eq!(s.fee_paid_by, FeePayer::Client);
    }

    #[test]
    fn link_overrides_apply_the_settings_rules_under_metadata() {
        let company = base();
        let catalogue = AssetCatalogue::builtin();
        let m = |v: serde_json::Value| v.as_object().unwrap().clone();
        assert_eq!(
            with_link_overrides(&company, None, &catalogue),
            Ok(company.clone())
        );
        let plain = m(serde_json::json!({"order": "A-1"}));
        assert_eq!(
            with_link_overrides(&company, Some(&plain), &catalogue),
            Ok(company.clone())
        );
        let s = with_link_overrides(
            &company,
            Some(&m(serde_json::json!({
                "successRedirectUrl": "https://shop.example/ok",
                "underpaymentFixedEnabled": true,
                "underpaymentPercentEnabled": "true",
                "underpaymentFixedThreshold": 1.5,
                "underpaymentPercentThreshold": "2",
            }))),
            &catalogue,
        )
        .unwrap();
        assert_eq!(
            s.success_redirect_url.as_deref(),
            Some("https://shop.example/ok")
        );
        assert!(s.underpayment_fixed_enabled && s.underpayment_percent_enabled);
        assert_eq!(s.underpayment_fixed_threshold.to_string(), "1.5");
        assert_eq!(s.underpayment_percent_threshold.to_string(), "2");
        assert_eq!(s.fee_paid_by, company.fee_paid_by, "other settings stay");
        for (bad, field) in [
            (
                serde_json::json!({"returnRedirectUrl": "nope"}),
                "metadata.returnRedirectUrl",
            ),
            (
                serde_json::json!({"failureRedirectUrl": 5}),
                "metadata.failureRedirectUrl",
            ),
            (
                serde_json::json!({"underpaymentPercentEnabled": 1}),
                "metadata.underpaymentPercentEnabled",
            ),
            (
                serde_json::json!({"underpaymentFixedEnabled": "yes"}),
                "metadata.underpaymentFixedEnabled",
            ),
            (
                serde_json::json!({"underpaymentPercentThreshold": 100.5}),
                "metadata.underpaymentPercentThreshold",
            ),
            (
                serde_json::json!({"underpaymentFixedThreshold": -1}),
                "metadata.underpaymentFixedThreshold",
            ),
            (
                serde_json::json!({"underpaymentFixedThreshold": null}),
                "metadata.underpaymentFixedThreshold",
            ),
        ] {
            let got = with_link_overrides(&company, Some(&m(bad.clone())), &catalogue);
            assert_eq!(got.unwrap_err().field, field, "{bad}");
        }
    }
}
