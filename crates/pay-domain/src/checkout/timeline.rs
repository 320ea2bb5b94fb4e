//! A link's timeline in the domain's terms: what kind of thing happened and its facts, typed.
//! The stores keep the facts as JSON in the form the serde attributes below give (the form
//! every stored row has); the HTTP adapter chooses the API's field names for them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::checkout::machine::SessionStatus;
use crate::checkout::settlement::{RefundReason, ResolutionRecord};
use crate::kernel::amount::Decimal;
use crate::kernel::ids::{PaymentLinkId, PaymentSessionId};
use crate::kernel::timestamp::Timestamp;
use crate::webhooks::PaymentEvent;

/// One entry of a link's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEvent {
    pub id: uuid::Uuid,
    pub link_id: PaymentLinkId,
    pub session_id: Option<PaymentSessionId>,
    pub kind: TimelineKind,
    pub created_at: Timestamp,
    pub facts: TimelineFacts,
}

/// What an entry records: a payment event, or a quote the payer was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimelineKind {
    Payment(PaymentEvent),
    QuoteCreated,
    QuoteRefreshed,
}

impl TimelineKind {
    /// The short name (`status_changed`, `quote_created`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TimelineKind::Payment(e) => e.as_str(),
            TimelineKind::QuoteCreated => "quote_created",
            TimelineKind::QuoteRefreshed => "quote_refreshed",
        }
    }

    pub fn parse(s: &str) -> Option<TimelineKind> {
        match s {
            "quote_created" => Some(TimelineKind::QuoteCreated),
            "quote_refreshed" => Some(TimelineKind::QuoteRefreshed),
            other => PaymentEvent::parse(other).map(TimelineKind::Payment),
        }
    }
}

/// The quote a payer was given (amounts in the pay asset, the link's target and fee in its
/// unit). The two session amounts keep the scale the session has (`25.376250`); the others are
/// normalised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuoteFacts {
    pub pay_asset: String,
    #[serde(with = "decimal_as_written")]
    pub required_sell_amount: Decimal,
    #[serde(with = "decimal_as_written")]
    pub expected_buy_amount: Decimal,
    #[serde(with = "decimal_text")]
    pub target: Decimal,
    #[serde(with = "decimal_text")]
    pub fee: Decimal,
    #[serde(with = "decimal_text")]
    pub pay_price: Decimal,
    #[serde(with = "timestamp_text")]
    pub expires_at: Timestamp,
}

/// The facts of an entry, by what happened. Stored untagged: each shape has members no other
/// has, so a stored object reads back as the variant that wrote it (`None`, the empty object,
/// last).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TimelineFacts {
    Quote(QuoteFacts),
    #[serde(rename_all = "camelCase")]
    StatusChanged {
        #[serde(with = "status_text")]
        previous_status: SessionStatus,
        #[serde(with = "status_text")]
        status: SessionStatus,
    },
    #[serde(rename_all = "camelCase")]
    ChannelOpened {
        channel_id: String,
        deposit_address: String,
        source_chain: String,
    },
    /// A start refused for want of the merchant's wallet on the pay asset's chain.
    #[serde(rename_all = "camelCase")]
    StartBlocked {
        asset: String,
        pay_asset: String,
    },
    /// The deposits settled: `short_by` when beyond the merchant's tolerance.
    #[serde(rename_all = "camelCase")]
    Settled {
        #[serde(with = "decimal_text")]
        received_amount: Decimal,
        #[serde(
            default,
            with = "optional_decimal_text",
            skip_serializing_if = "Option::is_none"
        )]
        short_by: Option<Decimal>,
    },
    #[serde(rename_all = "camelCase")]
    LateDeposit {
        #[serde(with = "decimal_text")]
        late_amount: Decimal,
    },
    Resolved {
        resolution: ResolutionRecord,
    },
    RefundRequested {
        reason: RefundReason,
    },
    /// Deposits seen but not yet final went away (a reorganisation of the chain).
    DepositsLeft {
        reason: DepositsLeftReason,
    },
    RefundAddress {
        address: String,
    },
    Deposit {
        #[serde(with = "decimal_text")]
        amount: Decimal,
    },
    /// Nothing beyond the kind (a cancellation, an expiry).
    None {},
}

/// Why deposits a session had seen are no longer counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DepositsLeftReason {
    /// The blocks they were in are no longer on the chain.
    DepositsLeftChain,
}

mod decimal_text {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Decimal, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&v.normalized())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Decimal, D::Error> {
        let t = String::deserialize(d)?;
        Decimal::parse_stored(&t)
            .map_err(|_| serde::de::Error::custom(format!("{t:?} is not a decimal")))
    }
}

mod decimal_as_written {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Decimal, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub use super::decimal_text::deserialize;
}

mod optional_decimal_text {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(d) => s.collect_str(&d.normalized()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| {
                Decimal::parse_stored(&t)
                    .map_err(|_| serde::de::Error::custom(format!("{t:?} is not a decimal")))
            })
            .transpose()
    }
}

mod status_text {
    use super::*;

    pub fn serialize<S: Serializer>(v: &SessionStatus, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SessionStatus, D::Error> {
        let t = String::deserialize(d)?;
        SessionStatus::parse(&t)
            .ok_or_else(|| serde::de::Error::custom(format!("{t:?} is not a session status")))
    }
}

mod timestamp_text {
    use super::*;
    use time::format_description::well_known::Rfc3339;

    pub fn serialize<S: Serializer>(v: &Timestamp, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Timestamp, D::Error> {
        let t = String::deserialize(d)?;
        time::OffsetDateTime::parse(&t, &Rfc3339)
            .map(Timestamp::from_datetime)
            .map_err(|_| serde::de::Error::custom(format!("{t:?} is not an RFC 3339 instant")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    /// Every shape is stored as the JSON it always was, and reads back as itself.
    #[test]
    fn each_shape_keeps_its_stored_json() {
        let quote = QuoteFacts {
            pay_asset: "eip155:8453/erc20:0xabc".into(),
            required_sell_amount: d("25.3762500"),
            expected_buy_amount: d("25"),
            target: d("25.00"),
            fee: d("0.37625"),
            pay_price: d("1"),
            expires_at: Timestamp::from_unix_millis(1_800_000_000_000).unwrap(),
        };
        let cases = [
            (
                TimelineFacts::Quote(quote),
                json!({"payAsset": "eip155:8453/erc20:0xabc", "requiredSellAmount": "25.3762500",
                       "expectedBuyAmount": "25", "target": "25", "fee": "0.37625",
                       "payPrice": "1", "expiresAt": "2027-01-15T08:00:00.000Z"}),
            ),
            (
                TimelineFacts::StatusChanged {
                    previous_status: SessionStatus::Quote,
                    status: SessionStatus::Pending,
                },
                json!({"previousStatus": "quote", "status": "pending"}),
            ),
            (
                TimelineFacts::ChannelOpened {
                    channel_id: "base:7".into(),
                    deposit_address: "0xdef".into(),
                    source_chain: "base".into(),
                },
                json!({"channelId": "base:7", "depositAddress": "0xdef", "sourceChain": "base"}),
            ),
            (
                TimelineFacts::StartBlocked {
                    asset: "USD".into(),
                    pay_asset: "eip155:1/slip44:60".into(),
                },
                json!({"asset": "USD", "payAsset": "eip155:1/slip44:60"}),
            ),
            (
                TimelineFacts::Settled {
                    received_amount: d("10.50"),
                    short_by: Some(d("2.0")),
                },
                json!({"receivedAmount": "10.5", "shortBy": "2"}),
            ),
            (
                TimelineFacts::Settled {
                    received_amount: d("10"),
                    short_by: None,
                },
                json!({"receivedAmount": "10"}),
            ),
            (
                TimelineFacts::LateDeposit {
                    late_amount: d("1.000"),
                },
                json!({"lateAmount": "1"}),
            ),
            (
                TimelineFacts::Resolved {
                    resolution: ResolutionRecord::CompletedByMerchant,
                },
                json!({"resolution": "completed_by_merchant"}),
            ),
            (
                TimelineFacts::RefundRequested {
                    reason: RefundReason::LinkAlreadyPaid,
                },
                json!({"reason": "link_already_paid"}),
            ),
            (
                TimelineFacts::DepositsLeft {
                    reason: DepositsLeftReason::DepositsLeftChain,
                },
                json!({"reason": "deposits_left_chain"}),
            ),
            (
                TimelineFacts::RefundAddress {
                    address: "0x8ba1".into(),
                },
                json!({"address": "0x8ba1"}),
            ),
            (
                TimelineFacts::Deposit { amount: d("3.50") },
                json!({"amount": "3.5"}),
            ),
            (TimelineFacts::None {}, json!({})),
        ];
        for (facts, stored) in cases {
            assert_eq!(serde_json::to_value(&facts).unwrap(), stored, "{facts:?}");
            let back: TimelineFacts = serde_json::from_value(stored.clone()).unwrap();
            assert_eq!(
                serde_json::to_value(&back).unwrap(),
                stored,
                "{stored} read back as another shape: {back:?}"
            );
            assert_eq!(
                std::mem::discriminant(&back),
                std::mem::discriminant(&facts),
                "{stored}"
            );
        }
    }

    #[test]
    fn kinds_round_trip_by_name() {
        for e in PaymentEvent::ALL {
            let k = TimelineKind::Payment(e);
            assert_eq!(TimelineKind::parse(k.as_str()), Some(k));
        }
        for k in [TimelineKind::QuoteCreated, TimelineKind::QuoteRefreshed] {
            assert_eq!(TimelineKind::parse(k.as_str()), Some(k));
        }
        assert_eq!(TimelineKind::parse("nope"), None);
    }
}
