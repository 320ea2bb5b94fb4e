//! Event names of the spec.

use std::fmt;

/// A payment event (`pay.payment.<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PaymentEvent {
    ChannelCreated,
    StatusChanged,
    SettlementUpdated,
    PaymentCancelledByPayer,
    PaymentRequestExpired,
    QuoteExpired,
    PaymentLinkExpired,
    PaymentLinkInactive,
    StartBlockedMissingCompanyWallet,
    ManualResolutionCompleted,
    UnderpaymentDifferenceRequested,
    RefundAddressRequested,
    RefundAddressReceived,
}

impl PaymentEvent {
    pub const ALL: [PaymentEvent; 13] = [
        PaymentEvent::ChannelCreated,
        PaymentEvent::StatusChanged,
        PaymentEvent::SettlementUpdated,
        PaymentEvent::PaymentCancelledByPayer,
        PaymentEvent::PaymentRequestExpired,
        PaymentEvent::QuoteExpired,
        PaymentEvent::PaymentLinkExpired,
        PaymentEvent::PaymentLinkInactive,
        PaymentEvent::StartBlockedMissingCompanyWallet,
        PaymentEvent::ManualResolutionCompleted,
        PaymentEvent::UnderpaymentDifferenceRequested,
        PaymentEvent::RefundAddressRequested,
        PaymentEvent::RefundAddressReceived,
    ];

    /// The short name (`x-pay-event`, `event.type`).
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentEvent::ChannelCreated => "channel_created",
            PaymentEvent::StatusChanged => "status_changed",
            PaymentEvent::SettlementUpdated => "settlement_updated",
            PaymentEvent::PaymentCancelledByPayer => "payment_cancelled_by_payer",
            PaymentEvent::PaymentRequestExpired => "payment_request_expired",
            PaymentEvent::QuoteExpired => "quote_expired",
            PaymentEvent::PaymentLinkExpired => "payment_link_expired",
            PaymentEvent::PaymentLinkInactive => "payment_link_inactive",
            PaymentEvent::StartBlockedMissingCompanyWallet => {
                "start_blocked_missing_company_wallet"
            }
            PaymentEvent::ManualResolutionCompleted => "manual_resolution_completed",
            PaymentEvent::UnderpaymentDifferenceRequested => "underpayment_difference_requested",
            PaymentEvent::RefundAddressRequested => "refund_address_requested",
            PaymentEvent::RefundAddressReceived => "refund_address_received",
        }
    }

    pub fn parse(s: &str) -> Option<PaymentEvent> {
        PaymentEvent::ALL.into_iter().find(|e| e.as_str() == s)
    }
}

/// Any event a delivery can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    Payment(PaymentEvent),
    /// `pay.subscription.status_changed`.
    SubscriptionStatusChanged,
    /// `pay.webhook.test`: sent on request to check an endpoint; it carries the payment
    /// envelope of a link but reports no change (receivers ignore types they do not know).
    Test,
}

impl EventKind {
    /// The short name (`x-pay-event`).
    pub fn short_name(self) -> &'static str {
        match self {
            EventKind::Payment(e) => e.as_str(),
            EventKind::SubscriptionStatusChanged => "subscription_status_changed",
            EventKind::Test => "test",
        }
    }

    /// The top-level `type` (`pay.payment.status_changed`, `pay.subscription.status_changed`).
    pub fn type_name(self) -> String {
        match self {
            EventKind::Payment(e) => format!("pay.payment.{}", e.as_str()),
            EventKind::SubscriptionStatusChanged => "pay.subscription.status_changed".into(),
            EventKind::Test => "pay.webhook.test".into(),
        }
    }

    pub fn parse_short(s: &str) -> Option<EventKind> {
        match s {
            "subscription_status_changed" => return Some(EventKind::SubscriptionStatusChanged),
            "test" => return Some(EventKind::Test),
            _ => {}
        }
        PaymentEvent::parse(s).map(EventKind::Payment)
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in PaymentEvent::ALL {
            assert_eq!(PaymentEvent::parse(e.as_str()), Some(e));
            let k = EventKind::Payment(e);
            assert_eq!(EventKind::parse_short(k.short_name()), Some(k));
            assert_eq!(k.type_name(), format!("pay.payment.{}", e.as_str()));
        }
        let s = EventKind::SubscriptionStatusChanged;
        assert_eq!(s.type_name(), "pay.subscription.status_changed");
        assert_eq!(
            EventKind::parse_short("subscription_status_changed"),
            Some(s)
        );
        assert_eq!(EventKind::parse_short("test"), Some(EventKind::Test));
        assert_eq!(EventKind::Test.type_name(), "pay.webhook.test");
        // Internal timeline events are never webhook events.
        assert_eq!(PaymentEvent::parse("quote_created"), None);
        assert_eq!(PaymentEvent::parse("quote_refreshed"), None);
    }
}
