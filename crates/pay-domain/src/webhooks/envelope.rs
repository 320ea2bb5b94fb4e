//! The spec's two envelopes as typed structs. Receivers may get fields they do not know; we
//! add `sequence`, increasing per payment link, so a receiver can drop a stale event that
//! arrives after a newer one.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::kernel::timestamp::Timestamp;
use crate::webhooks::LinkSubject;

use super::event::EventKind;

/// `event` of an envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvelopeEvent {
    /// The short event name.
    #[serde(rename = "type")]
    pub kind: String,
    /// What produced it (a reconcile trigger, a scheduler, `merchant_api`, ...).
    pub trigger: String,
}

/// `paymentLink` of the payment envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkSnapshot {
    pub id: String,
    pub uid: String,
    pub status: String,
    pub public_url: String,
    pub expires_at: Option<Timestamp>,
    pub amount: String,
    pub currency: String,
    pub asset: String,
    pub label: Option<String>,
    pub description: Option<String>,
    pub merchant_order_id: Option<String>,
    pub client_email: Option<String>,
    pub client_id: Option<String>,
}

impl LinkSnapshot {
    /// The snapshot of `link` (with its public URL under `public_pay_url`).
    pub fn of(link: &dyn LinkSubject, public_pay_url: &str) -> Self {
        link.snapshot(public_pay_url)
    }
}

/// `session` of the payment envelope (payment sessions arrive with the payments work; every
/// field is here so the shape is fixed now).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    pub id: Option<String>,
    pub status: Option<String>,
    pub previous_status: Option<String>,
    pub invoice_asset: Option<String>,
    pub invoice_amount: Option<String>,
    pub selected_sell_asset: Option<String>,
    pub required_sell_amount: Option<String>,
    pub expected_buy_amount: Option<String>,
    pub destination_address: Option<String>,
    pub deposit_address: Option<String>,
    pub channel_id: Option<String>,
    pub composite_channel_id: Option<String>,
    pub source_chain: Option<String>,
    pub expires_at: Option<Timestamp>,
    /// The session's `settlement` object as checkout writes it (`checkout::Settlement`).
    pub settlement: Map<String, Value>,
    pub error_message: Option<String>,
}

/// The payment envelope (`pay.payment.<event>`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaymentEnvelope {
    pub delivery_id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub created_at: Timestamp,
    /// Increases by one with each event of the same link.
    pub sequence: u64,
    pub event: EnvelopeEvent,
    pub payment_link: LinkSnapshot,
    pub session: SessionSnapshot,
}

/// `subscription` of the subscription envelope (Subscription fields without cycles).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionSnapshot {
    pub id: String,
    pub uid: String,
    pub status: String,
    pub previous_status: Option<String>,
    pub customer_email: String,
    pub label: String,
    pub description: Option<String>,
    pub amount_usd: String,
    pub settlement_asset: String,
    pub cadence: String,
    pub billing_interval_unit: String,
    pub billing_interval_count: u32,
    pub start_at: Timestamp,
    pub timezone: String,
    pub metadata: Map<String, Value>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// `cycle` of the subscription envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CycleSnapshot {
    pub id: String,
    pub subscription_id: String,
    pub sequence: u32,
    pub due_at: Timestamp,
    pub amount_usd: String,
    pub payment_link_id: Option<String>,
    pub payment_link_uid: Option<String>,
    pub payment_url: Option<String>,
    pub status: String,
}

/// `data` of the subscription envelope.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusChangeData {
    pub previous_status: String,
    pub next_status: String,
    pub reason: String,
}

/// The subscription envelope (`pay.subscription.status_changed`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionEnvelope {
    pub delivery_id: String,
    #[serde(rename = "type")]
    pub type_name: String,
    pub created_at: Timestamp,
    pub event: EnvelopeEvent,
    pub subscription: SubscriptionSnapshot,
    pub cycle: CycleSnapshot,
    pub data: StatusChangeData,
}

/// A payment event about to be fanned out to its callbacks: each delivery gets the same body
/// but its own `deliveryId`.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentEventDraft {
    /// A payment event, or `Test`.
    pub event: EventKind,
    pub trigger: String,
    pub link: LinkSnapshot,
    pub session: SessionSnapshot,
    pub created_at: Timestamp,
    pub sequence: u64,
}

impl PaymentEventDraft {
    /// The raw body for one delivery.
    pub fn body_for(&self, delivery_id: uuid::Uuid) -> String {
        let kind = self.event;
        let env = PaymentEnvelope {
            delivery_id: delivery_id.to_string(),
            type_name: kind.type_name(),
            created_at: self.created_at,
            sequence: self.sequence,
            event: EnvelopeEvent {
                kind: kind.short_name().to_owned(),
                trigger: self.trigger.clone(),
            },
            payment_link: self.link.clone(),
            session: self.session.clone(),
        };
        // Serialising these plain structs cannot fail.
        serde_json::to_string(&env).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::PaymentEvent;

    fn draft() -> PaymentEventDraft {
        PaymentEventDraft {
            event: EventKind::Payment(PaymentEvent::StatusChanged),
            trigger: "sandbox_deposit".into(),
            link: LinkSnapshot {
                id: "0192f0c4-1a2b-7c3d-8e4f-0123456789ab".into(),
                uid: "Xk3pQ9rT2mVw8LzA4bN7cD".into(),
                status: "active".into(),
                public_url: "https://pay.example/pay/Xk3pQ9rT2mVw8LzA4bN7cD".into(),
                expires_at: None,
                amount: "12.50".into(),
                currency: "USDC".into(),
                asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
                label: Some("Order 42".into()),
                description: None,
                merchant_order_id: Some("42".into()),
                client_email: Some("payer@example.com".into()),
                client_id: None,
            },
            session: SessionSnapshot {
                id: Some("s1".into()),
                status: Some("complete".into()),
                previous_status: Some("pending".into()),
                ..Default::default()
            },
            created_at: Timestamp::from_unix_millis(1_795_327_640_123).unwrap(),
            sequence: 7,
        }
    }

    #[test]
    fn payment_envelope_has_the_spec_paths() {
        let id = uuid::Uuid::nil();
        let v: Value = serde_json::from_str(&draft().body_for(id)).unwrap();
        assert_eq!(v["deliveryId"], id.to_string());
        assert_eq!(v["type"], "pay.payment.status_changed");
        assert_eq!(v["createdAt"], "2026-11-22T06:07:20.123Z");
        assert_eq!(v["sequence"], 7);
        assert_eq!(v["event"]["type"], "status_changed");
        assert_eq!(v["event"]["trigger"], "sandbox_deposit");
        let l = &v["paymentLink"];
        for k in [
            "id",
            "uid",
            "status",
            "publicUrl",
            "expiresAt",
            "amount",
            "currency",
            "asset",
            "label",
            "description",
            "merchantOrderId",
            "clientEmail",
            "clientId",
        ] {
            assert!(l.get(k).is_some(), "paymentLink.{k}");
        }
        assert_eq!(l["amount"], "12.50");
        assert_eq!(l["clientId"], Value::Null);
        let s = &v["session"];
        for k in [
            "id",
            "status",
            "previousStatus",
            "invoiceAsset",
            "invoiceAmount",
            "selectedSellAsset",
            "requiredSellAmount",
            "expectedBuyAmount",
            "destinationAddress",
            "depositAddress",
            "channelId",
            "compositeChannelId",
            "sourceChain",
            "expiresAt",
            "settlement",
            "errorMessage",
        ] {
            assert!(s.get(k).is_some(), "session.{k}");
        }
        assert_eq!(s["settlement"], serde_json::json!({}));
        assert_eq!(
            (s["status"].as_str(), s["previousStatus"].as_str()),
            (Some("complete"), Some("pending"))
        );
    }

    #[test]
    fn each_delivery_gets_its_own_id_and_otherwise_the_same_body() {
        let d = draft();
        let a = d.body_for(uuid::Uuid::from_u128(1));
        let b = d.body_for(uuid::Uuid::from_u128(2));
        assert_ne!(a, b);
        assert_eq!(
            a.replace(&uuid::Uuid::from_u128(1).to_string(), ""),
            b.replace(&uuid::Uuid::from_u128(2).to_string(), "")
        );
    }
}
