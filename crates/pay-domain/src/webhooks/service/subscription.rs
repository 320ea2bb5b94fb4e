//! The delivery of a subscription's status change: one delivery of
//! `pay.subscription.status_changed` to the company callback (grant subscriptions never get
//! subscription events), built here and written by the subscriptions store in the same
//! transaction as the move.

use super::*;
use crate::webhooks::{
    CycleSnapshot, EnvelopeEvent, StatusChangeData, SubscriptionEnvelope, SubscriptionSnapshot,
};

/// A subscription status change about to be written (the envelope without its delivery id).
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionEventDraft {
    pub company: CompanyId,
    pub trigger: String,
    pub subscription: SubscriptionSnapshot,
    pub cycle: CycleSnapshot,
    pub data: StatusChangeData,
    pub created_at: Timestamp,
}

impl SubscriptionEventDraft {
    /// The raw body for one delivery.
    pub fn body_for(&self, delivery_id: uuid::Uuid) -> String {
        let kind = EventKind::SubscriptionStatusChanged;
        let env = SubscriptionEnvelope {
            delivery_id: delivery_id.to_string(),
            type_name: kind.type_name(),
            created_at: self.created_at,
            event: EnvelopeEvent {
                kind: kind.short_name().to_owned(),
                trigger: self.trigger.clone(),
            },
            subscription: self.subscription.clone(),
            cycle: self.cycle.clone(),
            data: self.data.clone(),
        };
        // Serialising these plain structs cannot fail.
        serde_json::to_string(&env).unwrap_or_default()
    }
}

impl WebhookService {
    /// The deliveries of one subscription status change: one to the company payment callback
    /// (else the legacy shared one), none when the company has neither. Nothing is written.
    pub(crate) fn subscription_deliveries(
        &self,
        draft: &SubscriptionEventDraft,
    ) -> PortResult<Vec<Delivery>> {
        let Some(cb) = self.company_target(draft.company)? else {
            return Ok(vec![]);
        };
        let id = self.k.crypto.new_uuid();
        Ok(vec![Delivery {
            id,
            group_id: self.k.crypto.new_uuid(),
            company_id: draft.company,
            origin: DeliveryOrigin::Event,
            event: EventKind::SubscriptionStatusChanged,
            status: DeliveryStatus::Pending,
            attempts: 0,
            next_attempt_at: Some(draft.created_at),
            last_attempt_at: None,
            last_response_status: None,
            last_error: None,
            payment_link_uid: draft.cycle.payment_link_uid.clone(),
            subscription_uid: Some(draft.subscription.uid.clone()),
            // Grant subscriptions never receive subscription events.
            grant_id: None,
            order_id: None,
            target: cb.kind,
            url: cb.url,
            body: draft.body_for(id),
            created_at: draft.created_at,
        }])
    }
}
