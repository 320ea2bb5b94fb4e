//! An OAuth grant's own webhook subscription (spec: "Webhook subscription (grant-owned)", the
//! state table "Grant webhook subscription", "Grant subscription notes"): what a PUT may set,
//! which payment events it receives, and its status machine. One per grant; it receives only
//! the payment events of the links its grant created, never subscription events.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::kernel::error::{FieldError, NotFound};
use crate::kernel::ids::CompanyId;
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::webhooks::error::WebhookError;
use crate::webhooks::{validate_callback_url, EventKind, PaymentEvent, StoredSigningSecret};

/// Most event names of a subscription (spec, Limits).
pub const MAX_EVENTS: usize = 32;
/// Most characters of `description` (spec, Limits).
pub const MAX_DESCRIPTION: usize = 500;
/// Every payment event: the default filter.
pub const WILDCARD: &str = "pay.payment.*";
/// The names a PUT may give the URL under: the canonical one first, then its aliases.
pub const URL_FIELDS: [&str; 4] = ["url", "endpointUrl", "callbackUrl", "webhookUrl"];

/// The payment events a subscription receives: 1 to 32 fully qualified `pay.payment.<event>`
/// names of the spec's table, or the wildcard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter(Vec<String>);

impl EventFilter {
    pub fn wildcard() -> EventFilter {
        EventFilter(vec![WILDCARD.to_owned()])
    }

    /// Checks the names of a PUT (field `events`, `events[i]` for one name): known payment
    /// events or the wildcard, each once. Subscription events are refused by name: grant
    /// subscriptions never receive them.
    pub fn parse(names: Vec<String>) -> Result<EventFilter, FieldError> {
        if names.is_empty() || names.len() > MAX_EVENTS {
            return Err(FieldError::new(
                "events",
                format!("events must hold 1 to {MAX_EVENTS} names"),
            ));
        }
        for (i, name) in names.iter().enumerate() {
            let field = format!("events[{i}]");
            let known = name == WILDCARD
                || name
                    .strip_prefix("pay.payment.")
                    .and_then(PaymentEvent::parse)
                    .is_some();
            if !known {
                return Err(FieldError::new(
                    field,
                    format!(
                        "events[{i}] must be {WILDCARD} or a pay.payment.<event> name of the spec"
                    ),
                ));
            }
            if names[..i].contains(name) {
                return Err(FieldError::new(
                    field,
                    format!("events[{i}] is given twice"),
                ));
            }
        }
        Ok(EventFilter(names))
    }

    /// As stored (names already checked when saved).
    pub fn from_stored(names: Vec<String>) -> EventFilter {
        EventFilter(names)
    }

    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// Whether an event goes to the subscription: payment events it names (or all with the
    /// wildcard), and test events the grant asked for; never subscription events.
    pub fn accepts(&self, event: EventKind) -> bool {
        match event {
            EventKind::Payment(_) => self
                .0
                .iter()
                .any(|n| n == WILDCARD || *n == event.type_name()),
            EventKind::Test => true,
            EventKind::SubscriptionStatusChanged => false,
        }
    }
}

/// Where a subscription is (the spec's table; "none" is the absence of a record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionState {
    Active,
    /// Its signing secret erased; the record kept for connection status.
    Disabled,
}

/// What the grant asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionMove {
    Put { active: bool, rotate_secret: bool },
    Delete,
}

/// What becomes of the signing secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretChange {
    /// A new secret, returned once (creation, reactivation).
    Issue,
    /// A new secret, returned once; the previous one keeps signing for `ROTATION_GRACE`.
    Rotate,
    /// Preserved.
    Keep,
    /// None afterwards: the sealed secrets are erased.
    Erase,
}

/// The spec's state table, every allowed and refused move: from `None` (no record yet).
pub fn transition(
    from: Option<SubscriptionState>,
    m: SubscriptionMove,
) -> Result<(SubscriptionState, SecretChange), WebhookError> {
    use SecretChange::*;
    use SubscriptionMove::*;
    use SubscriptionState::*;
    Ok(match (from, m) {
        (
            _,
            Put {
                active: false,
                rotate_secret: true,
            },
        ) => {
            return Err(FieldError::new(
                "rotateSecret",
                "rotateSecret needs an active subscription (active must not be false)",
            )
            .into())
        }
        (None, Delete) => {
            return Err(NotFound {
                kind: "Webhook subscription",
            }
            .into())
        }
        (None | Some(Disabled), Put { active: true, .. }) => (Active, Issue),
        (None | Some(Disabled), Put { active: false, .. }) | (Some(Disabled), Delete) => {
            (Disabled, Erase)
        }
        (
            Some(Active),
            Put {
                active: true,
                rotate_secret,
            },
        ) => (Active, if rotate_secret { Rotate } else { Keep }),
        (Some(Active), Put { active: false, .. } | Delete) => (Disabled, Erase),
    })
}

/// A grant's subscription as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct GrantSubscription {
    pub id: uuid::Uuid,
    pub grant_id: uuid::Uuid,
    pub company_id: CompanyId,
    pub url: String,
    pub events: EventFilter,
    pub description: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    /// Present exactly while active.
    pub secret: Option<StoredSigningSecret>,
    /// The secret before the last rotation, and until when it still signs.
    pub previous: Option<(StoredSigningSecret, Timestamp)>,
    /// An official native installation's credential kept at its disconnect (never shown by
    /// the API): it signs only the late canonical payment-status events of the links issued
    /// before (`retained_allows`).
    pub retained: Option<RetainedCredential>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Starts at 1 and grows by one with each save (compare-and-set).
    pub version: u64,
}

impl GrantSubscription {
    pub fn state(&self) -> SubscriptionState {
        if self.secret.is_some() {
            SubscriptionState::Active
        } else {
            SubscriptionState::Disabled
        }
    }

    /// The secrets that sign a delivery attempted at `now` (none while disabled).
    pub fn live_secrets(&self, now: Timestamp) -> Vec<&StoredSigningSecret> {
        let mut v: Vec<&StoredSigningSecret> = self.secret.iter().collect();
        if let (Some(_), Some((prev, until))) = (&self.secret, &self.previous) {
            if *until > now {
                v.push(prev);
            }
        }
        v
    }

    /// Associated data binding a sealed secret to its row.
    pub fn aad(id: uuid::Uuid) -> String {
        format!("grant_webhook_subscriptions:{id}")
    }

    /// Associated data of the retained credential: sealed apart from the live secret, so
    /// neither opens as the other.
    pub fn retained_aad(id: uuid::Uuid) -> String {
        format!("grant_webhook_subscriptions:retained:{id}")
    }

    /// Whether the retained credential may sign an event of `link` (as the link's subject
    /// says): a link of this company, made by this grant, that recorded this subscription at
    /// its creation, not after the disconnect (a revoked grant makes no link; the subscription
    /// it records is the check that counts).
    pub fn retains_link(&self, link: &dyn crate::webhooks::LinkSubject) -> bool {
        self.retained.as_ref().is_some_and(|r| {
            link.company() == self.company_id
                && link.origin() == crate::webhooks::LinkOrigin::Grant(self.grant_id)
                && link.grant_subscription() == Some(self.id)
                && link.created_at() <= r.since
        })
    }
}

/// What a disconnect of an official native installation keeps of its grant's subscription:
/// the endpoint and a copy of the signing secret, sealed apart (`retained_aad`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetainedCredential {
    pub sealed: crate::kernel::secret::SealedSecret,
    pub url: String,
    /// The disconnect, on the company's clock (links are dated on it).
    pub since: Timestamp,
}

/// The canonical payment-status events: the only ones a retained credential signs (spec,
/// "Grant subscription notes"; docs/native.md, "What a disconnect keeps").
pub fn is_payment_status(event: EventKind) -> bool {
    matches!(
        event,
        EventKind::Payment(PaymentEvent::StatusChanged | PaymentEvent::SettlementUpdated)
    )
}

/// A PUT body, typed by the edge, not yet checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubscriptionInput {
    /// The URL under each name it was given (`url` or an alias): exactly one is required.
    pub urls: Vec<(&'static str, String)>,
    pub events: Option<Vec<String>>,
    pub description: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub rotate_secret: bool,
    /// Defaults to true (a PUT on a disabled subscription reactivates it).
    pub active: Option<bool>,
}

/// A checked PUT.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedInput {
    pub url: String,
    pub events: EventFilter,
    pub description: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub moved: SubscriptionMove,
}

impl SubscriptionInput {
    /// Every field rule of the spec; the URL by the callbacks' rules (https, no user info,
    /// a public host), named as the client named it.
    pub fn check(self, allow_private: bool) -> Result<CheckedInput, FieldError> {
        let (field, url) =
            match self.urls.as_slice() {
                [one] => one.clone(),
                [] => return Err(FieldError::new(
                    "url",
                    "url is required (or one of its aliases endpointUrl, callbackUrl, webhookUrl)",
                )),
                [_, (second, _), ..] => {
                    return Err(FieldError::new(
                        *second,
                        format!("{second}: give the URL under one name only"),
                    ))
                }
            };
        validate_callback_url(field, &url, allow_private)?;
        let events = match self.events {
            Some(names) => EventFilter::parse(names)?,
            None => EventFilter::wildcard(),
        };
        if let Some(d) = &self.description {
            validate::text("description", d, MAX_DESCRIPTION, true)?;
        }
        if let Some(m) = &self.metadata {
            validate::metadata("metadata", m)?;
        }
        Ok(CheckedInput {
            url,
            events,
            description: self.description,
            metadata: self.metadata,
            moved: SubscriptionMove::Put {
                active: self.active.unwrap_or(true),
                rotate_secret: self.rotate_secret,
            },
        })
    }
}

/// What reads show: `secretLast4` and its timestamp only while active, never the secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionView {
    pub id: uuid::Uuid,
    pub url: String,
    pub events: Vec<String>,
    pub description: Option<String>,
    pub metadata: Option<Map<String, Value>>,
    pub active: bool,
    pub secret_last4: Option<String>,
    /// Unix milliseconds (the view is also the stored answer of a keyed request).
    pub secret_created_ms: Option<i64>,
    pub created_ms: i64,
    pub updated_ms: i64,
}

impl From<&GrantSubscription> for SubscriptionView {
    fn from(s: &GrantSubscription) -> Self {
        SubscriptionView {
            id: s.id,
            url: s.url.clone(),
            events: s.events.names().to_vec(),
            description: s.description.clone(),
            metadata: s.metadata.clone(),
            active: s.state() == SubscriptionState::Active,
            secret_last4: s.secret.as_ref().map(|x| x.last4.clone()),
            secret_created_ms: s.secret.as_ref().map(|x| x.created_at.unix_millis()),
            created_ms: s.created_at.unix_millis(),
            updated_ms: s.updated_at.unix_millis(),
        }
    }
}

/// The answer of a PUT or DELETE: the subscription, whether it was created, and the secret
/// when one was issued. Stored sealed for replay when the request carried a key, without the
/// secret itself: `issued_secret_digest` names the one issued (SHA-256), and a replay takes
/// it from the subscription while it still signs there, so that erasing it (DELETE,
/// `active: false`) or rotating it out erases it from every stored answer too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionAnswer {
    pub created: bool,
    pub subscription: SubscriptionView,
    pub signing_secret: Option<String>,
    /// The digest of the secret the request issued (the stored form; answers stored before
    /// it carry the secret in `signing_secret` instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_secret_digest: Option<String>,
    /// Set on a replay (`Idempotent-Replayed: true`); never stored.
    #[serde(skip)]
    pub replayed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use SecretChange::*;
    use SubscriptionMove::*;
    use SubscriptionState::*;

    fn put(active: bool, rotate_secret: bool) -> SubscriptionMove {
        Put {
            active,
            rotate_secret,
        }
    }

    #[test]
    fn every_move_of_the_state_table() {
        let allowed = [
            (None, put(true, false), Active, Issue),
            (None, put(true, true), Active, Issue),
            (None, put(false, false), Disabled, Erase),
            (Some(Active), put(true, false), Active, Keep),
            (Some(Active), put(true, true), Active, Rotate),
            (Some(Active), put(false, false), Disabled, Erase),
            (Some(Active), Delete, Disabled, Erase),
            (Some(Disabled), put(true, false), Active, Issue),
            (Some(Disabled), put(true, true), Active, Issue),
            (Some(Disabled), put(false, false), Disabled, Erase),
            (Some(Disabled), Delete, Disabled, Erase),
        ];
        for (from, m, to, secret) in allowed {
            assert_eq!(transition(from, m), Ok((to, secret)), "{from:?} {m:?}");
        }
        for from in [None, Some(Active), Some(Disabled)] {
            assert!(
                matches!(transition(from, put(false, true)), Err(WebhookError::Invalid(f)) if f.field == "rotateSecret")
            );
        }
        assert!(matches!(
            transition(None, Delete),
            Err(WebhookError::NotFound(_))
        ));
    }

    #[test]
    fn event_names() {
        let f = EventFilter::parse(vec!["pay.payment.status_changed".into()]).unwrap();
        assert!(f.accepts(EventKind::Payment(PaymentEvent::StatusChanged)));
        assert!(!f.accepts(EventKind::Payment(PaymentEvent::ChannelCreated)));
        assert!(f.accepts(EventKind::Test));
        assert!(!f.accepts(EventKind::SubscriptionStatusChanged));
        let all = EventFilter::wildcard();
        assert!(PaymentEvent::ALL
            .into_iter()
            .all(|e| all.accepts(EventKind::Payment(e))));
        assert!(!all.accepts(EventKind::SubscriptionStatusChanged));
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let field = |n: &[&str]| EventFilter::parse(names(n)).unwrap_err().field;
        assert_eq!(field(&[]), "events");
        assert_eq!(field(&vec!["pay.payment.*"; 33]), "events");
        assert_eq!(field(&["pay.payment.*", "pay.payment.*"]), "events[1]");
        for bad in [
            "pay.subscription.status_changed",
            "pay.payment.quote_created",
            "status_changed",
            "pay.payment.",
            "pay.*",
        ] {
            assert_eq!(
                field(&["pay.payment.status_changed", bad]),
                "events[1]",
                "{bad}"
            );
        }
        let every: Vec<String> = PaymentEvent::ALL
            .iter()
            .map(|e| format!("pay.payment.{}", e.as_str()))
            .collect();
        assert_eq!(EventFilter::parse(every.clone()).unwrap().names(), every);
    }

    #[test]
    fn put_bodies() {
        let input = |urls: Vec<(&'static str, &str)>| SubscriptionInput {
            urls: urls.into_iter().map(|(f, u)| (f, u.to_owned())).collect(),
            ..Default::default()
        };
        for alias in URL_FIELDS {
            let c = input(vec![(alias, "https://hooks.shop.example/pay")])
                .check(false)
                .unwrap();
            assert_eq!(c.url, "https://hooks.shop.example/pay");
            assert_eq!(c.events, EventFilter::wildcard());
            assert_eq!(c.moved, put(true, false));
            let e = input(vec![(alias, "http://hooks.shop.example/pay")])
                .check(false)
                .unwrap_err();
            assert_eq!(e.field, alias);
        }
        assert_eq!(input(vec![]).check(false).unwrap_err().field, "url");
        let two = input(vec![
            ("url", "https://a.example/"),
            ("webhookUrl", "https://a.example/"),
        ]);
        assert_eq!(two.check(false).unwrap_err().field, "webhookUrl");
        let ssrf = input(vec![("callbackUrl", "https://169.254.169.254/latest")]);
        assert_eq!(ssrf.check(false).unwrap_err().field, "callbackUrl");
        let mut long = input(vec![("url", "https://a.example/")]);
        long.description = Some("d".repeat(MAX_DESCRIPTION));
        assert!(long.clone().check(false).is_ok());
        long.description = Some("d".repeat(MAX_DESCRIPTION + 1));
        assert_eq!(long.check(false).unwrap_err().field, "description");
        let mut big = input(vec![("url", "https://a.example/")]);
        let mut m = Map::new();
        m.insert("k".into(), Value::String("v".repeat(8 * 1024)));
        big.metadata = Some(m);
        assert_eq!(big.check(false).unwrap_err().field, "metadata");
    }
}
