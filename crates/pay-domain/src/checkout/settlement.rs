//! What arrived on a payment session and what was decided about it: typed, with the wire
//! names of the session's `settlement` object (API, webhooks and the stored row) written once,
//! here.

use serde::{Deserialize, Serialize};

use crate::kernel::amount::Decimal;

/// Why a session's deposit goes back without the merchant deciding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefundReason {
    /// A one-time link another payer completed first.
    LinkAlreadyPaid,
}

/// The merchant's decision on an underpaid session, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionRecord {
    CompletedByMerchant,
    RefundedByMerchant,
}

/// The session's `settlement`. Amounts are in the pay asset, written normalised (`1.5`, not
/// `1.50`). The members come out in this order, the order in which a session can gain them,
/// so every session reads as it always did; absent ones are left out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settlement {
    /// Everything deposited before the session settled.
    #[serde(
        default,
        with = "decimal_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub received_amount: Option<Decimal>,
    /// The asset the deposits came in (the session's pay asset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asset: Option<String>,
    /// What arrived above the required amount.
    #[serde(
        default,
        with = "decimal_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub overpaid_by: Option<Decimal>,
    /// What was missing, but within the merchant's tolerance (the session completed).
    #[serde(
        default,
        with = "decimal_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub short_within_tolerance: Option<Decimal>,
    /// What is missing beyond the tolerance (the session is underpaid).
    #[serde(
        default,
        with = "decimal_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub short_by: Option<Decimal>,
    /// Everything deposited after the session ended.
    #[serde(
        default,
        with = "decimal_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub late_amount: Option<Decimal>,
    /// Set with the first late deposit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_reason: Option<RefundReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ResolutionRecord>,
    /// Where the payer asked the refund to go (the first address given stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund_address: Option<String>,
    /// The chain processor: the transfers to the session's address the watcher saw, oldest
    /// first, each with its confirmations (absent before the first one, and under the sandbox).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfers: Vec<ChainTransfer>,
}

/// One transfer to a session's deposit address, as the chain watcher saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChainTransfer {
    /// `0x` and 64 lower-case hex digits.
    pub tx_hash: String,
    /// The token `Transfer` log's index in its block; `None` (`null`) for a coin transfer,
    /// whose key `eip155:<chainId>:<txHash>:native` has `native` in its place (as wallet
    /// activity shows it).
    pub log_index: Option<u64>,
    /// In the pay asset.
    #[serde(with = "decimal_plain")]
    pub amount: Decimal,
    pub block_number: u64,
    /// `head - blockNumber + 1`, counted up to the chain's `confirmations` and kept there once
    /// the transfer is final (a final transfer never changes again).
    pub confirmations: u64,
}

impl Settlement {
    /// Deposited so far (zero before the first deposit).
    pub fn received(&self) -> Decimal {
        self.received_amount.unwrap_or(Decimal::ZERO)
    }

    /// The wire object (what the API, the webhooks and the stored row hold).
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            // A struct of strings, decimals and enums always serialises to an object.
            _ => serde_json::Map::new(),
        }
    }
}

/// `Decimal` as normalised decimal text.
mod decimal_plain {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::kernel::amount::Decimal;

    pub fn serialize<S: Serializer>(v: &Decimal, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&v.normalized())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        let t = String::deserialize(d)?;
        Decimal::parse_stored(&t)
            .map_err(|_| serde::de::Error::custom(format!("{t:?} is not a decimal")))
    }
}

/// `Option<Decimal>` as normalised decimal text.
mod decimal_text {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::kernel::amount::Decimal;

    pub fn serialize<S: Serializer>(v: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.collect_str(&d.normalized()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| {
            Decimal::parse_stored(&t)
                .map_err(|_| serde::de::Error::custom(format!("{t:?} is not a decimal")))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn every_member_in_the_order_a_session_gains_them() {
        let s = Settlement {
            received_amount: Some(d("10.50")),
            asset: Some("eip155:8453/erc20:0xabc".into()),
            overpaid_by: Some(d("0.5")),
            short_within_tolerance: Some(d("0.1")),
            short_by: Some(d("2")),
            late_amount: Some(d("1.000")),
            late: Some(true),
            refund_reason: Some(RefundReason::LinkAlreadyPaid),
            resolution: Some(ResolutionRecord::RefundedByMerchant),
            refund_address: Some("0xdef".into()),
            transfers: vec![
                ChainTransfer {
                    tx_hash: "0xaa".into(),
                    log_index: Some(3),
                    amount: d("4.50"),
                    block_number: 7,
                    confirmations: 2,
                },
                ChainTransfer {
                    tx_hash: "0xbb".into(),
                    log_index: None,
                    amount: d("6"),
                    block_number: 8,
                    confirmations: 1,
                },
            ],
        };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(
            text,
            r#"{"receivedAmount":"10.5","asset":"eip155:8453/erc20:0xabc","overpaidBy":"0.5","shortWithinTolerance":"0.1","shortBy":"2","lateAmount":"1","late":true,"refundReason":"link_already_paid","resolution":"refunded_by_merchant","refundAddress":"0xdef","transfers":[{"txHash":"0xaa","logIndex":3,"amount":"4.5","blockNumber":7,"confirmations":2},{"txHash":"0xbb","logIndex":null,"amount":"6","blockNumber":8,"confirmations":1}]}"#
        );
        let back: Settlement = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        assert_eq!(serde_json::to_string(&Settlement::default()).unwrap(), "{}");
    }

    #[test]
    fn stored_objects_of_every_shape_read_back_the_same() {
        for text in [
            r#"{}"#,
            r#"{"receivedAmount":"5","asset":"a"}"#,
            r#"{"receivedAmount":"5","asset":"a","shortBy":"1.25"}"#,
            r#"{"receivedAmount":"5","asset":"a","shortBy":"1","resolution":"completed_by_merchant"}"#,
            r#"{"receivedAmount":"5","asset":"a","refundReason":"link_already_paid","refundAddress":"0x1"}"#,
            r#"{"lateAmount":"0.001","late":true}"#,
        ] {
            let s: Settlement = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&s).unwrap(), text);
        }
    }

    #[test]
    fn unknown_members_and_bad_values_are_refused() {
        for text in [
            r#"{"shortby":"1"}"#,
            r#"{"receivedAmount":5}"#,
            r#"{"receivedAmount":"five"}"#,
            r#"{"resolution":"maybe"}"#,
            r#"{"late":"yes"}"#,
            r#"{"transfers":[{"txHash":"0x1","logIndex":"native","amount":"1","blockNumber":1,"confirmations":1}]}"#,
            r#"{"transfers":[{"txHash":"0x1","logIndex":1,"amount":1,"blockNumber":1,"confirmations":1}]}"#,
        ] {
            assert!(serde_json::from_str::<Settlement>(text).is_err(), "{text}");
        }
    }
}
