//! Retries and manual resends go to the delivery's owner's callback as it is when they are
//! attempted (URL and secrets), and the log's `url` says where they went; a delivery whose
//! owner has no callback any more ends `failed` with `no callback`.

use super::*;
use pay_domain::kernel::ids::DeliveryId;
use pay_domain::links::{CreateAnonymousLinkInput, ANONYMOUS_COMPANY};
use pay_domain::webhooks::{AttemptError, LinkWebhook, OutboundRequest};

impl World {
    /// Records a failed first attempt and lets the retry fall due.
    fn fail_once(&self, id: uuid::Uuid) -> Delivery {
        let claimed = self.claim();
        let d = claimed.iter().find(|d| d.id == id).unwrap();
        self.pay
            .webhooks()
            .record_attempt(d, answered(500))
            .unwrap();
        self.advance(Duration::minutes(5));
        self.delivery_now(id)
    }

    fn prepare(&self, d: &Delivery) -> OutboundRequest {
        self.pay.webhooks().prepare_attempt(d).unwrap()
    }
}

fn no_callback() -> AttemptOutcome {
    AttemptOutcome {
        status: None,
        duration_ms: 0,
        error: Some(AttemptError::NoCallback),
        response_excerpt: None,
        retry_after: None,
    }
}

#[test]
fn a_retry_goes_to_the_current_url_signed_with_the_current_secrets() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let first = w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    assert_eq!(d.url, HOOK);
    w.fail_once(d.id);
    // The merchant moves the callback and rotates its secret.
    w.pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, NEW_HOOK)
        .unwrap();
    let (_, second) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    let claimed = w.claim();
    assert_eq!(ids(&claimed), vec![d.id]);
    assert_eq!(claimed[0].url, HOOK, "queued for the old URL");

    let req = w.prepare(&claimed[0]);
    assert_eq!(req.url, NEW_HOOK);
    assert_eq!(header(&req, "x-pay-attempt"), "2");
    assert_eq!(
        w.signer.last().secrets,
        vec![second.expose().to_owned(), first.expose().to_owned()],
        "the current secrets (during the rotation's grace, both)"
    );
    // The log says where it goes.
    assert_eq!(w.delivery_now(d.id).url, NEW_HOOK);
    let (logged, _) = w.pay.webhooks().delivery(&a.key, DeliveryId(d.id)).unwrap();
    assert_eq!(logged.url, NEW_HOOK);
    // Once it points there, preparing again writes nothing.
    w.store.reset_calls();
    assert_eq!(w.prepare(&w.delivery_now(d.id)).url, NEW_HOOK);
    assert_eq!(w.store.writes(), 0);
}

#[test]
fn a_retry_follows_the_precedence_of_the_callbacks_as_they_are_now() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    let legacy = w.set_callback(&a, SHARED, LEGACY);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    assert_eq!((d.target, d.url.as_str()), (SHARED, LEGACY));
    let d = w.fail_once(d.id);
    // Only the legacy callback: it stays there, with its secret.
    assert_eq!(w.prepare(&d).url, LEGACY);
    assert_eq!(w.signer.last().secrets, vec![legacy.expose().to_owned()]);
    // The company payment callback is set: it takes precedence for the retry too.
    let payment = w.set_callback(&a, PAY, HOOK);
    let req = w.prepare(&d);
    assert_eq!(req.url, HOOK);
    assert_eq!(w.signer.last().secrets, vec![payment.expose().to_owned()]);
    assert_eq!(w.delivery_now(d.id).url, HOOK);
}

#[test]
fn a_manual_resend_goes_to_the_current_url() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    let claimed = w.claim();
    w.pay
        .webhooks()
        .record_attempt(&claimed[0], answered(200))
        .unwrap();
    w.pay
        .webhooks()
        .put_company_callback(&a.owner, a.company, PAY, NEW_HOOK)
        .unwrap();
    let (_, rotated) = w
        .pay
        .webhooks()
        .rotate_company_callback_secret(&a.owner, a.company, PAY)
        .unwrap();
    w.advance(Duration::hours(25));

    let resent = w
        .pay
        .webhooks()
        .resend_delivery(&a.key, DeliveryId(d.id))
        .unwrap();
    assert_eq!(resent.url, NEW_HOOK, "the resend says where it will go");
    assert_eq!(w.delivery_now(resent.id).url, NEW_HOOK);
    assert_eq!(w.delivery_now(d.id).url, HOOK, "the original is history");
    let claimed = w.claim();
    assert_eq!(ids(&claimed), vec![resent.id]);
    let req = w.prepare(&claimed[0]);
    assert_eq!(req.url, NEW_HOOK);
    assert_eq!(header(&req, "x-pay-delivery-origin"), "manual");
    assert_eq!(w.signer.last().secrets, vec![rotated.expose().to_owned()]);
}

#[test]
fn without_a_callback_a_delivery_fails_at_once_with_no_callback() {
    let w = world();
    let a = w.team("Acme", "ops@acme.example");
    w.set_callback(&a, PAY, HOOK);
    let link = w.new_link(&a.key);
    let d = w.emit_one(&link);
    let d = w.fail_once(d.id);
    // The callback is gone (no route removes one today; an operator or a later feature may).
    w.store.write().callbacks.clear();
    let claimed = w.claim();
    assert_eq!(ids(&claimed), vec![d.id]);
    let refused = w.pay.webhooks().prepare_attempt(&claimed[0]).unwrap_err();
    assert_eq!(refused.error, AttemptError::NoCallback);
    assert_eq!(
        w.pay.webhooks().record_attempt(&claimed[0], no_callback()),
        Ok(AfterAttempt {
            status: DeliveryStatus::Failed,
            next_attempt_at: None,
        })
    );
    let failed = w.delivery_now(d.id);
    assert_eq!(failed.status, DeliveryStatus::Failed);
    assert_eq!(failed.last_error, Some(AttemptError::NoCallback));
    assert_eq!(failed.url, HOOK, "it went nowhere");
    w.advance(Duration::days(1));
    assert_eq!(w.claim(), vec![]);
    // A resend after a callback is set again goes there.
    w.set_callback(&a, PAY, NEW_HOOK);
    let resent = w
        .pay
        .webhooks()
        .resend_delivery(&a.key, DeliveryId(d.id))
        .unwrap();
    assert_eq!(resent.url, NEW_HOOK);
}

#[test]
fn anonymous_links_in_one_round_each_go_to_their_own_url_with_their_own_secret() {
    let w = world();
    w.reserve_anonymous_company();
    let mut links = Vec::new();
    for (i, url) in [
        "https://one.buyer.example/hook",
        "https://two.buyer.example/hook",
    ]
    .into_iter()
    .enumerate()
    {
        let input = CreateAnonymousLinkInput {
            link: CreateLinkInput {
                amount: "5".into(),
                ..Default::default()
            },
            priorities: vec![pay_domain::links::SettlementPriority {
                asset: "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
                address: "0xabc".into(),
            }],
            branding: Default::default(),
            webhook_url: Some(url.into()),
        };
        let (link, secret) = w
            .pay
            .links()
            .create_anonymous_link(input, &format!("198.51.100.{i}"))
            .unwrap();
        let d = w
            .pay
            .webhooks()
            .emit_link_event(&link, EventKind::Test, "test", SessionSnapshot::default())
            .unwrap()
            .remove(0);
        assert_eq!(d.company_id, ANONYMOUS_COMPANY);
        links.push((d.id, url, secret.unwrap()));
    }
    let claimed = w.claim();
    assert_eq!(claimed.len(), 2);
    w.signer.calls.lock().unwrap().clear();
    let prepared = w.pay.webhooks().prepare_attempts(&claimed);
    let signed = w.signer.calls();
    for ((d, req), call) in claimed.iter().zip(prepared).zip(signed) {
        let (_, url, secret) = links.iter().find(|(id, _, _)| *id == d.id).unwrap();
        assert_eq!(req.unwrap().url, *url);
        assert_eq!(call.secrets, vec![secret.expose().to_owned()], "{url}");
    }
    // A link's callback is fixed at creation: nothing to move.
    assert!(w
        .store
        .tables()
        .link_webhooks
        .iter()
        .all(|h: &LinkWebhook| links.iter().any(|(_, url, _)| h.url == *url)));
}
