//! The session's `settlement` as the API shows it: the domain's object (`checkout::Settlement`,
//! which the webhooks and the stored row share) with a schema. A test keeps the two
//! serialisations equal.

use pay_domain::checkout::{ChainTransfer, RefundReason, ResolutionRecord, Settlement};
use serde::Serialize;
use utoipa::ToSchema;

/// What arrived on a session and what was decided about it. Members appear as the session
/// gains them; a session without any deposit has `{}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettlementDto {
    /// Everything deposited before the session settled, in the pay asset.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "25")]
    pub received_amount: Option<String>,
    /// The asset the deposits came in (the session's pay asset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asset: Option<String>,
    /// What arrived above the required amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overpaid_by: Option<String>,
    /// What was missing, within the merchant's tolerance (the session completed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_within_tolerance: Option<String>,
    /// What is missing beyond the tolerance (the session is underpaid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_by: Option<String>,
    /// Everything deposited after the session ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_amount: Option<String>,
    /// Set with the first late deposit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late: Option<bool>,
    /// `link_already_paid`: a one-time link another payer completed first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "link_already_paid")]
    pub refund_reason: Option<&'static str>,
    /// `completed_by_merchant` or `refunded_by_merchant`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<&'static str>,
    /// Where the payer asked the refund to go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refund_address: Option<String>,
    /// The chain processor: the transfers to the deposit address the watcher saw, oldest
    /// first (absent before the first one, and under the sandbox). A transfer that leaves the
    /// chain before its confirmations leaves the list.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transfers: Vec<ChainTransferDto>,
}

/// One transfer to the session's deposit address.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChainTransferDto {
    #[schema(example = "0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060")]
    pub tx_hash: String,
    /// The token `Transfer` log's index in its block; `null` for a transfer of the chain's
    /// coin (its key `eip155:<chainId>:<txHash>:native`), as wallet activity shows it.
    #[schema(example = 0)]
    pub log_index: Option<u64>,
    /// In the pay asset.
    #[schema(example = "25")]
    pub amount: String,
    #[schema(example = 1234567)]
    pub block_number: u64,
    /// `head - blockNumber + 1`, counted up to the chain's `confirmations` and kept there:
    /// the transfer is final when this equals the chain's `confirmations`.
    #[schema(example = 1)]
    pub confirmations: u64,
}

fn text(d: Option<pay_domain::kernel::amount::Decimal>) -> Option<String> {
    d.map(|d| d.normalized().to_string())
}

impl From<ChainTransfer> for ChainTransferDto {
    fn from(t: ChainTransfer) -> Self {
        ChainTransferDto {
            tx_hash: t.tx_hash,
            log_index: t.log_index,
            amount: t.amount.normalized().to_string(),
            block_number: t.block_number,
            confirmations: t.confirmations,
        }
    }
}

impl From<Settlement> for SettlementDto {
    fn from(s: Settlement) -> Self {
        SettlementDto {
            received_amount: text(s.received_amount),
            asset: s.asset,
            overpaid_by: text(s.overpaid_by),
            short_within_tolerance: text(s.short_within_tolerance),
            short_by: text(s.short_by),
            late_amount: text(s.late_amount),
            late: s.late,
            refund_reason: s.refund_reason.map(|r| match r {
                RefundReason::LinkAlreadyPaid => "link_already_paid",
            }),
            resolution: s.resolution.map(|r| match r {
                ResolutionRecord::CompletedByMerchant => "completed_by_merchant",
                ResolutionRecord::RefundedByMerchant => "refunded_by_merchant",
            }),
            refund_address: s.refund_address,
            transfers: s.transfers.into_iter().map(Into::into).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pay_domain::kernel::amount::Decimal;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn the_api_shows_the_settlement_as_the_webhooks_and_the_store_write_it() {
        let full = Settlement {
            received_amount: Some(d("10.50")),
            asset: Some("eip155:8453/erc20:0xabc".into()),
            overpaid_by: Some(d("0.5")),
            short_within_tolerance: Some(d("0.1")),
            short_by: Some(d("2")),
            late_amount: Some(d("1.000")),
            late: Some(true),
            refund_reason: Some(RefundReason::LinkAlreadyPaid),
            resolution: Some(ResolutionRecord::CompletedByMerchant),
            refund_address: Some("0xdef".into()),
            transfers: vec![
                ChainTransfer {
                    tx_hash: "0xaa".into(),
                    log_index: Some(0),
                    amount: d("4.50"),
                    block_number: 7,
                    confirmations: 2,
                },
                ChainTransfer {
                    tx_hash: "0xbb".into(),
                    log_index: None,
                    amount: d("6"),
                    block_number: 9,
                    confirmations: 1,
                },
            ],
        };
        let refunded = Settlement {
            resolution: Some(ResolutionRecord::RefundedByMerchant),
            ..Settlement::default()
        };
        for s in [full, refunded, Settlement::default()] {
            let api = serde_json::to_value(SettlementDto::from(s.clone())).unwrap();
            assert_eq!(api, serde_json::Value::Object(s.to_json()), "{s:?}");
        }
    }
}
