//! Grant webhook subscriptions and idempotency records: saved by compare-and-set per grant,
//! a keyed write's answer committed with it (never when its claim was taken over), a key
//! claimed by exactly one of many concurrent requests, dead claims taken over, pruning.

use std::thread;

use uuid::Uuid;

use super::fixtures::*;
use super::webhooks::values::sealed;
use crate::kernel::idempotency::{Claim, Completion, IdempotencyKey, IdempotentRequest};
use crate::tenancy::ports::TenancyStore;
use crate::webhooks::ports::WebhookStore;
use crate::webhooks::*;

/// The ports these cases need.
pub trait Ports: TenancyStore + WebhookStore + Sync {}

impl<T: TenancyStore + WebhookStore + Sync> Ports for T {}

fn subscription(company: crate::kernel::ids::CompanyId, grant: Uuid) -> GrantSubscription {
    let mut metadata = serde_json::Map::new();
    metadata.insert("shop".into(), serde_json::json!({"id": 7}));
    GrantSubscription {
        id: Uuid::now_v7(),
        grant_id: grant,
        company_id: company,
        url: "https://hooks.shop.example/pay".into(),
        events: EventFilter::parse(vec!["pay.payment.status_changed".into()]).unwrap(),
        description: Some("Shop \"one\"".into()),
        metadata: Some(metadata),
        secret: Some(sealed("s1")),
        previous: None,
        retained: None,
        created_at: ts(T0),
        updated_at: ts(T0),
        version: 1,
    }
}

fn request(key: &str, body: &str) -> IdempotentRequest {
    IdempotentRequest {
        scope: "grant:g:PUT:webhook-subscriptions/current".into(),
        key: IdempotencyKey::parse(key).unwrap(),
        fingerprint: format!("fp-{body}"),
    }
}

fn completion(r: &IdempotentRequest, token: &str, tag: &str) -> Completion {
    Completion {
        scope: r.scope.clone(),
        key: r.key.as_str().to_owned(),
        token: token.into(),
        answer: sealed(tag).sealed,
    }
}

pub fn grant_subscriptions_save_by_version<S: Ports>(store: &S) {
    let c = company(store);
    let (g1, g2) = (Uuid::now_v7(), Uuid::now_v7());
    assert_eq!(store.grant_subscription(g1).unwrap(), None);
    let first = subscription(c, g1);
    assert!(store.save_grant_subscription(&first, None).unwrap());
    assert_eq!(store.grant_subscription(g1).unwrap(), Some(first.clone()));
    // A second first version for the grant loses (one per grant), whatever its id.
    let again = subscription(c, g1);
    assert!(!store.save_grant_subscription(&again, None).unwrap());
    // Rotated: the previous secret with its grace period.
    let rotated = GrantSubscription {
        secret: Some(sealed("s2")),
        previous: Some((sealed("s1"), ts(T0 + 86_400_000))),
        events: EventFilter::wildcard(),
        description: None,
        metadata: None,
        updated_at: ts(T0 + 5),
        version: 2,
        ..first.clone()
    };
    assert!(store.save_grant_subscription(&rotated, None).unwrap());
    assert_eq!(store.grant_subscription(g1).unwrap(), Some(rotated.clone()));
    // Disabled by a native installation's disconnect: both secrets erased, a credential
    // retained apart, the rest kept.
    let disabled = GrantSubscription {
        secret: None,
        previous: None,
        retained: Some(crate::webhooks::RetainedCredential {
            sealed: sealed("s2").sealed,
            url: "https://hooks.shop.example/kept".into(),
            since: ts(T0 + 6),
        }),
        version: 3,
        ..rotated.clone()
    };
    // A save over the version it replaced loses and writes nothing.
    let stale = GrantSubscription {
        url: "https://stale.example/".into(),
        ..rotated.clone()
    };
    assert!(!store.save_grant_subscription(&stale, None).unwrap());
    assert!(store.save_grant_subscription(&disabled, None).unwrap());
    let read = store.grant_subscription(g1).unwrap().unwrap();
    assert_eq!(read, disabled);
    assert_eq!(read.state(), SubscriptionState::Disabled);
    // Another grant of the same company is its own row.
    assert_eq!(store.grant_subscription(g2).unwrap(), None);
    let other = subscription(c, g2);
    assert!(store.save_grant_subscription(&other, None).unwrap());
    assert_eq!(store.grant_subscription(g2).unwrap(), Some(other));
    assert_eq!(store.grant_subscription(g1).unwrap(), Some(disabled));
}

pub fn keyed_write_commits_its_answer_with_it<S: Ports>(store: &S) {
    let c = company(store);
    let g = Uuid::now_v7();
    let r = request("key-1", "a");
    let claim = store
        .claim_idempotency_key(&r, "t1", ts(T0), ts(T0 + 60_000))
        .unwrap();
    assert_eq!(claim, Claim::Claimed { token: "t1".into() });
    // While it runs: the same request is in flight, another one reuses the key.
    assert_eq!(
        store
            .claim_idempotency_key(&r, "t2", ts(T0 + 1), ts(T0 + 60_001))
            .unwrap(),
        Claim::InFlight
    );
    assert_eq!(
        store
            .claim_idempotency_key(&request("key-1", "b"), "t3", ts(T0 + 1), ts(T0 + 60_001))
            .unwrap(),
        Claim::Reused
    );
    // A completion under another token writes nothing, the subscription neither.
    let sub = subscription(c, g);
    assert!(!store
        .save_grant_subscription(&sub, Some(&completion(&r, "t-other", "x")))
        .unwrap());
    assert_eq!(store.grant_subscription(g).unwrap(), None);
    // The claim's own completion: both commit.
    assert!(store
        .save_grant_subscription(&sub, Some(&completion(&r, "t1", "an")))
        .unwrap());
    assert_eq!(store.grant_subscription(g).unwrap(), Some(sub.clone()));
    assert_eq!(
        store
            .claim_idempotency_key(&r, "t4", ts(T0 + 2), ts(T0 + 60_002))
            .unwrap(),
        Claim::Answered(sealed("an").sealed)
    );
    // Answered once: a second completion of the same claim loses, with its write.
    let later = GrantSubscription {
        version: 2,
        url: "https://later.example/".into(),
        ..sub.clone()
    };
    assert!(!store
        .save_grant_subscription(&later, Some(&completion(&r, "t1", "an2")))
        .unwrap());
    assert_eq!(store.grant_subscription(g).unwrap(), Some(sub));
    // The same key in another scope is another record.
    let elsewhere = IdempotentRequest {
        scope: "grant:h:PUT:webhook-subscriptions/current".into(),
        ..r.clone()
    };
    assert!(matches!(
        store
            .claim_idempotency_key(&elsewhere, "t5", ts(T0), ts(T0 + 60_000))
            .unwrap(),
        Claim::Claimed { .. }
    ));
}

pub fn a_key_is_claimed_once_and_dead_claims_are_taken_over<S: Ports>(store: &S) {
    let r = request("key-2", "a");
    let claims: Vec<Claim> = thread::scope(|scope| {
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let r = r.clone();
                scope.spawn(move || {
                    store
                        .claim_idempotency_key(&r, &format!("t{i}"), ts(T0), ts(T0 + 60_000))
                        .unwrap()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let won: Vec<&Claim> = claims
        .iter()
        .filter(|c| matches!(c, Claim::Claimed { .. }))
        .collect();
    assert_eq!(won.len(), 1, "{claims:?}");
    assert!(claims
        .iter()
        .all(|c| matches!(c, Claim::Claimed { .. } | Claim::InFlight)));
    let Claim::Claimed { token: first } = won[0].clone() else {
        unreachable!()
    };
    // Its lease over, the same request takes it over; the first can no longer complete.
    let after = ts(T0 + 60_000);
    assert_eq!(
        store
            .claim_idempotency_key(&r, "late", after, ts(T0 + 120_000))
            .unwrap(),
        Claim::Claimed {
            token: "late".into()
        }
    );
    let c = company(store);
    let g = Uuid::now_v7();
    assert!(!store
        .save_grant_subscription(&subscription(c, g), Some(&completion(&r, &first, "x")))
        .unwrap());
    // Release: only the holder's in-flight record goes.
    store
        .release_idempotency_key(&r.scope, r.key.as_str(), &first)
        .unwrap();
    assert_eq!(
        store
            .claim_idempotency_key(&r, "t9", ts(T0 + 60_001), ts(T0 + 120_001))
            .unwrap(),
        Claim::InFlight
    );
    store
        .release_idempotency_key(&r.scope, r.key.as_str(), "late")
        .unwrap();
    assert!(matches!(
        store
            .claim_idempotency_key(
                &request("key-2", "b"),
                "t10",
                ts(T0 + 60_002),
                ts(T0 + 120_002)
            )
            .unwrap(),
        Claim::Claimed { .. }
    ));
    // Pruning by creation time.
    let old = request("key-old", "a");
    store
        .claim_idempotency_key(&old, "o", ts(T0 - 1), ts(T0 + 60_000))
        .unwrap();
    assert!(store.prune_idempotency_keys(ts(T0)).unwrap() >= 1);
    assert!(matches!(
        store
            .claim_idempotency_key(&old, "o2", ts(T0 + 1), ts(T0 + 60_001))
            .unwrap(),
        Claim::Claimed { .. }
    ));
    assert_eq!(
        store
            .claim_idempotency_key(
                &request("key-2", "b"),
                "t11",
                ts(T0 + 60_003),
                ts(T0 + 120_003)
            )
            .unwrap(),
        Claim::InFlight,
        "records created at T0 or later are kept"
    );
}

/// What a grant's new link is tagged with: the grant's subscription while it is active (has a
/// secret), none before it exists or once it is disabled; the tag reads back with the link.
pub fn a_link_is_tagged_with_the_active_grant_subscription<S>(store: &S)
where
    S: Ports + crate::links::ports::PaymentLinkStore,
{
    use crate::links::CreatedBy;
    let c = company(store);
    let grant = Uuid::now_v7();
    assert_eq!(store.active_grant_subscription(grant).unwrap(), None);
    let first = subscription(c, grant);
    assert!(store.save_grant_subscription(&first, None).unwrap());
    assert_eq!(
        store.active_grant_subscription(grant).unwrap(),
        Some(first.id)
    );
    // Another grant's subscription is not this grant's.
    assert_eq!(
        store.active_grant_subscription(Uuid::now_v7()).unwrap(),
        None
    );

    let mut tagged = super::links::values::link(c, T0, CreatedBy::Grant(grant));
    tagged.grant_subscription_id = Some(first.id);
    store.insert_link(&tagged, None).unwrap();
    assert_eq!(store.link(c, &tagged.uid).unwrap(), Some(tagged.clone()));

    let disabled = GrantSubscription {
        secret: None,
        version: 2,
        ..first.clone()
    };
    assert!(store.save_grant_subscription(&disabled, None).unwrap());
    assert_eq!(store.active_grant_subscription(grant).unwrap(), None);
    // The link keeps what it was tagged with.
    assert_eq!(
        store
            .link(c, &tagged.uid)
            .unwrap()
            .unwrap()
            .grant_subscription_id,
        Some(first.id)
    );
}
