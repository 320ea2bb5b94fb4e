//! A link's `payload` column: the link definition as JSON, a type of its own so that the stored
//! form changes only by a migration, never by a rename in the domain model.

use pay_domain::kernel::amount::Amount;
use pay_domain::links::{ExpirationTime, PaymentLinkPayload};
use pay_domain::settings::FeePayer;
use pay_domain::tenancy::Theme;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The stored JSON (camelCase keys, absent options left out).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoredPayload {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(with = "stored_amount")]
    amount: Amount,
    #[serde(skip_serializing_if = "Option::is_none")]
    fiat_currency: Option<String>,
    currency: String,
    asset: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    skip_quote_acceptance: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fee_paid_by: Option<FeePayer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    order_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invoice_pdf_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    customer_email: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    success_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure_url: Option<String>,
    expiration_time: ExpirationTime,
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata: Option<Map<String, Value>>,
    runtime_mode: String,
    billing_version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_picture_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_logo_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    merchant_payment_link_theme: Option<Theme>,
    /// Anonymous links: the address the payment settles to (from `settlement.priorities`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    settlement_address: Option<String>,
}

/// The link's amount as its text, exactly as the creator wrote it (leading zeros written before
/// input refused them still read); anything else makes the row corrupt.
mod stored_amount {
    use pay_domain::kernel::amount::Amount;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(a: &Amount, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(a.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Amount, D::Error> {
        // Read from the stored text in place: the amount keeps its own copy.
        d.deserialize_str(AmountText)
    }

    struct AmountText;

    impl serde::de::Visitor<'_> for AmountText {
        type Value = Amount;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a positive decimal as a string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Amount, E> {
            Amount::parse_stored(text, u32::MAX)
                .map_err(|_| E::custom("the amount is not a positive decimal"))
        }
    }
}

impl From<&PaymentLinkPayload> for StoredPayload {
    fn from(p: &PaymentLinkPayload) -> Self {
        let p = p.clone();
        StoredPayload {
            title: p.title,
            description: p.description,
            amount: p.amount,
            fiat_currency: p.fiat_currency,
            currency: p.currency,
            asset: p.asset,
            skip_quote_acceptance: p.skip_quote_acceptance,
            fee_paid_by: p.fee_paid_by,
            order_id: p.order_id,
            invoice_pdf_url: p.invoice_pdf_url,
            customer_email: p.customer_email,
            client_id: p.client_id,
            return_url: p.return_url,
            success_url: p.success_url,
            failure_url: p.failure_url,
            expiration_time: p.expiration_time,
            metadata: p.metadata,
            runtime_mode: p.runtime_mode,
            billing_version: p.billing_version,
            merchant_name: p.merchant_name,
            merchant_picture_url: p.merchant_picture_url,
            merchant_logo_url: p.merchant_logo_url,
            merchant_payment_link_theme: p.merchant_payment_link_theme,
            settlement_address: p.settlement_address,
        }
    }
}

impl From<StoredPayload> for PaymentLinkPayload {
    fn from(s: StoredPayload) -> Self {
        PaymentLinkPayload {
            title: s.title,
            description: s.description,
            amount: s.amount,
            fiat_currency: s.fiat_currency,
            currency: s.currency,
            asset: s.asset,
            skip_quote_acceptance: s.skip_quote_acceptance,
            fee_paid_by: s.fee_paid_by,
            order_id: s.order_id,
            invoice_pdf_url: s.invoice_pdf_url,
            customer_email: s.customer_email,
            client_id: s.client_id,
            return_url: s.return_url,
            success_url: s.success_url,
            failure_url: s.failure_url,
            expiration_time: s.expiration_time,
            metadata: s.metadata,
            runtime_mode: s.runtime_mode,
            billing_version: s.billing_version,
            merchant_name: s.merchant_name,
            merchant_picture_url: s.merchant_picture_url,
            merchant_logo_url: s.merchant_logo_url,
            merchant_payment_link_theme: s.merchant_payment_link_theme,
            settlement_address: s.settlement_address,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows written before the types were split read back, and are written again byte for byte.
    #[test]
    fn the_stored_json_round_trips_exactly() {
        let stored = r#"{"title":"Order 7","amount":"12.50","currency":"USDC","asset":"eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","feePaidBy":"merchant","expirationTime":"24h","metadata":{"b":1,"a":[true,null]},"runtimeMode":"merchant_target_net_v2","billingVersion":"v2","merchantPaymentLinkTheme":"dark","settlementAddress":"0x00000000000000000000000000000000000000aa"}"#;
        let payload: PaymentLinkPayload = serde_json::from_str::<StoredPayload>(stored)
            .unwrap()
            .into();
        assert_eq!(payload.skip_quote_acceptance, None);
        assert_eq!(payload.fee_paid_by, Some(FeePayer::Merchant));
        assert_eq!(payload.merchant_payment_link_theme, Some(Theme::Dark));
        assert_eq!(
            serde_json::to_string(&StoredPayload::from(&payload)).unwrap(),
            stored
        );
    }
}
