//! Recurring billing over the fakes: create, validation, tenancy, a simulated year of a
//! monthly subscription from Jan 31 on the fixed clock (clamped dates, paid and unpaid cycles,
//! overdue and back), pause (nothing issued), cancel (open cycle links archived), and the
//! webhooks each move writes.

use std::sync::atomic::Ordering;

use serde_json::Value;

use super::*;
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::sandbox::SandboxEvent;
use pay_domain::subscriptions::{
    CreateSubscriptionInput, CycleStatus, SubscriptionError, SubscriptionStatus,
};
use pay_domain::webhooks::EventKind;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const HOOK: &str = "https://hooks.acme.example/pay";
/// 2027-01-31T10:00:00Z (11:00 in Berlin).
pub(super) const JAN_31_MS: i64 = 1_801_389_600_000;

pub(super) fn monthly(email: &str) -> CreateSubscriptionInput {
    CreateSubscriptionInput {
        customer_email: email.into(),
        label: "Pro plan".into(),
        amount_usd: "19.99".into(),
        cadence: "monthly".into(),
        timezone: "Europe/Berlin".into(),
        ..Default::default()
    }
}

pub(super) fn shop(w: &World) -> (Principal, CompanyId) {
    let b = w.tenant("Acme", "ann@acme.example");
    let (_, owner) = w.sign_in("ann@acme.example");
    w.pay
        .webhooks()
        .put_company_callback(&owner, b.company_id, CallbackKind::CompanyPayment, HOOK)
        .unwrap();
    (w.key_principal(&b), b.company_id)
}

pub(super) fn pay_link(w: &World, key: &Principal, uid: &LinkUid) {
    let s = w
        .pay
        .checkout()
        .start_session(uid, BASE_USDC, "198.51.100.9")
        .unwrap();
    let s = if s.status == SessionStatus::Quote {
        w.pay.checkout().accept_session(uid, s.id).unwrap()
    } else {
        s
    };
    let done = w
        .pay
        .sandbox()
        .sandbox_event(
            Some(key),
            uid,
            SandboxEvent::Deposit {
                amount: s.required_sell_amount,
                hold: false,
            },
            None,
            None,
        )
        .unwrap();
    assert_eq!(done.status, SessionStatus::Complete);
}

/// (nextStatus, reason) of each subscription webhook of `uid`, in order.
pub(super) fn sub_events(w: &World, uid: &str) -> Vec<(String, String)> {
    let mut v: Vec<(Timestamp, uuid::Uuid, String, String)> = w
        .store
        .stored_deliveries()
        .into_iter()
        .filter(|d| {
            d.event == EventKind::SubscriptionStatusChanged
                && d.subscription_uid.as_deref() == Some(uid)
        })
        .map(|d| {
            let b: Value = serde_json::from_str(&d.body).unwrap();
            assert_eq!(b["type"], "pay.subscription.status_changed");
            assert_eq!(b["event"]["type"], "subscription_status_changed");
            assert_eq!(b["subscription"]["uid"], uid);
            assert_eq!(b["subscription"]["status"], b["data"]["nextStatus"]);
            assert_eq!(
                b["subscription"]["previousStatus"],
                b["data"]["previousStatus"]
            );
            assert!(b["cycle"]["id"].is_string());
            assert_eq!(d.url, HOOK);
            (
                d.created_at,
                d.id,
                b["data"]["nextStatus"].as_str().unwrap().to_owned(),
                b["data"]["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, _, s, r)| (s, r)).collect()
}

pub(super) fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn create_issues_cycle_zero_and_validates_every_field() {
    let w = world();
    let (key, company) = shop(&w);
    let s = w.pay.subscriptions();
    let v = s
        .create_subscription(&key, monthly(" Bob@Shop.example "))
        .unwrap();
    let sub = &v.subscription;
    assert!(sub.uid.as_str().starts_with("sub_"));
    assert_eq!(sub.status, SubscriptionStatus::Active);
    assert_eq!(sub.customer_email, "Bob@Shop.example");
    assert_eq!(sub.settlement_asset, BASE_USDC, "the company default");
    assert_eq!(v.cycles.len(), 1);
    let c0 = &v.cycles[0];
    assert_eq!((c0.sequence, c0.status), (0, CycleStatus::Open));
    assert_eq!(c0.due_at, sub.start_at);
    let link = w
        .store
        .stored_link(c0.payment_link_uid.as_ref().unwrap())
        .unwrap();
    assert_eq!(link.company_id, company);
    assert_eq!(link.payload.amount.as_str(), "19.99");
    assert_eq!(link.payload.fiat_currency.as_deref(), Some("USD"));
    let meta = link.payload.metadata.as_ref().unwrap();
    assert_eq!(meta["subscriptionUid"], sub.uid.as_str());
    assert_eq!(meta["subscriptionCycle"], 0);
    assert_eq!(
        s.payment_url(c0).unwrap(),
        format!("https://pay.example/pay/{}", link.uid)
    );
    // The customer was upserted.
    let customers = w.pay.customers().list_customers(&key).unwrap();
    assert_eq!(customers.len(), 1);
    assert_eq!(customers[0].id, sub.contact_id);
    // Read back, listed; another company sees nothing.
    assert_eq!(s.get_subscription(&key, &sub.uid).unwrap(), v);
    assert_eq!(s.list_subscriptions(&key).unwrap(), vec![v.clone()]);
    let other = w.tenant("Other", "olga@other.example");
    let ok = w.key_principal(&other);
    assert_eq!(
        s.get_subscription(&ok, &sub.uid),
        Err(SubscriptionError::NotFound(NotFound {
            kind: "Subscription"
        }))
    );
    assert!(matches!(
        s.set_subscription_status(&ok, &sub.uid, SubscriptionStatus::Paused),
        Err(SubscriptionError::NotFound(_))
    ));
    assert!(s.list_subscriptions(&ok).unwrap().is_empty());
    // Scopes.
    let reader = grant(company, 1, &[Scope::SubscriptionsRead]);
    assert!(matches!(
        s.create_subscription(&reader, monthly("x@y.example")),
        Err(SubscriptionError::Denied(_))
    ));
    // Bad input names the field and writes nothing.
    let cases: Vec<(CreateSubscriptionInput, &str)> = vec![
        (
            CreateSubscriptionInput {
                cadence: "daily".into(),
                ..monthly("a@b.example")
            },
            "cadence",
        ),
        (
            CreateSubscriptionInput {
                cadence: "custom_months".into(),
                billing_interval_count: Some(0),
                ..monthly("a@b.example")
            },
            "billingIntervalCount",
        ),
        (
            CreateSubscriptionInput {
                cadence: "custom_months".into(),
                billing_interval_count: Some(25),
                ..monthly("a@b.example")
            },
            "billingIntervalCount",
        ),
        (
            CreateSubscriptionInput {
                timezone: "Mars/Olympus".into(),
                ..monthly("a@b.example")
            },
            "timezone",
        ),
        (
            CreateSubscriptionInput {
                amount_usd: "1.999".into(),
                ..monthly("a@b.example")
            },
            "amountUsd",
        ),
        (
            CreateSubscriptionInput {
                amount_usd: "-5".into(),
                ..monthly("a@b.example")
            },
            "amountUsd",
        ),
        (
            CreateSubscriptionInput {
                amount_usd: "1000000000000000000000000000000".into(),
                ..monthly("a@b.example")
            },
            "amountUsd",
        ),
        (monthly("nope"), "customerEmail"),
        (
            CreateSubscriptionInput {
                label: String::new(),
                ..monthly("a@b.example")
            },
            "label",
        ),
        (
            CreateSubscriptionInput {
                start_at: Some("yesterday".into()),
                ..monthly("a@b.example")
            },
            "startAt",
        ),
    ];
    w.store.reset_calls();
    for (input, field) in cases {
        match s.create_subscription(&key, input) {
            Err(SubscriptionError::Invalid(f)) => assert_eq!(f.field, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    assert_eq!(w.store.writes(), 0);
    assert!(matches!(
        s.create_subscription(
            &key,
            CreateSubscriptionInput {
                settlement_asset: Some("eip155:1/erc20:0xnope".into()),
                ..monthly("a@b.example")
            }
        ),
        Err(SubscriptionError::Asset(_))
    ));
}

#[test]
fn a_simulated_year_from_january_31() {
    let w = world();
    w.clock.0.store(JAN_31_MS, Ordering::SeqCst);
    let (key, _) = shop(&w);
    let s = w.pay.subscriptions();
    let sub = s
        .create_subscription(&key, monthly("bob@shop.example"))
        .unwrap()
        .subscription;
    let paused = s
        .create_subscription(&key, monthly("carol@shop.example"))
        .unwrap()
        .subscription;
    s.set_subscription_status(&key, &paused.uid, SubscriptionStatus::Paused)
        .unwrap();
    let uid = &sub.uid;
    let mut paid_late = false;
    // 340 days, a run every 6 hours: through the Dec 31 cycle, before the next one's lead.
    for step in 0..(340 * 4) {
        w.advance(Duration::hours(6));
        let run = s.run_due_billing(100).unwrap();
        assert!(run.failures.is_empty(), "{:?}", run.failures);
        let view = s.get_subscription(&key, uid).unwrap();
        for c in &view.cycles {
            let now = w.clock.now();
            // Cycle 3 (Apr 30) stays unpaid until ten days past due; the others are paid
            // on their due date.
            let pay_now = c.status.is_unpaid()
                && now >= c.due_at
                && (c.sequence != 3 || now >= c.due_at.plus(Duration::days(10)));
            if pay_now {
                pay_link(&w, &key, c.payment_link_uid.as_ref().unwrap());
                paid_late |= c.sequence == 3;
            }
        }
        if step == 4 * 95 {
            // Mid-May: cycle 3 is more than a day past due and unpaid.
            assert_eq!(
                s.get_subscription(&key, uid).unwrap().subscription.status,
                SubscriptionStatus::Overdue
            );
        }
    }
    assert!(paid_late);
    let view = s.get_subscription(&key, uid).unwrap();
    assert_eq!(view.subscription.status, SubscriptionStatus::Active);
    let dues: Vec<String> = view.cycles.iter().map(|c| c.due_at.to_rfc3339()).collect();
    assert_eq!(
        dues,
        [
            "2027-01-31T10:00:00.000Z",
            "2027-02-28T10:00:00.000Z",
            "2027-03-31T09:00:00.000Z",
            "2027-04-30T09:00:00.000Z",
            "2027-05-31T09:00:00.000Z",
            "2027-06-30T09:00:00.000Z",
            "2027-07-31T09:00:00.000Z",
            "2027-08-31T09:00:00.000Z",
            "2027-09-30T09:00:00.000Z",
            "2027-10-31T10:00:00.000Z",
            "2027-11-30T10:00:00.000Z",
            "2027-12-31T10:00:00.000Z",
        ],
        "12 cycles, the start day clamped to each month's end, 11:00 in Berlin"
    );
    assert!(view.cycles.iter().all(|c| c.status == CycleStatus::Paid));
    assert!(view.cycles.iter().all(|c| c.paid_at.is_some()));
    assert_eq!(
        sub_events(&w, uid.as_str()),
        pairs(&[
            ("overdue", "cycle_one_day_overdue"),
            ("active", "overdue_cycles_paid")
        ])
    );
    // The paused one issued nothing after cycle 0 and got only its pause webhook.
    let p = s.get_subscription(&key, &paused.uid).unwrap();
    assert_eq!(p.cycles.len(), 1);
    assert_eq!(p.subscription.status, SubscriptionStatus::Paused);
    assert_eq!(
        sub_events(&w, paused.uid.as_str()),
        pairs(&[("paused", "merchant_paused")])
    );
    // Reminders went through the mail outbox, never to the paused one.
    let mails = w.store.snapshot().mails;
    assert!(mails
        .iter()
        .all(|m| m.kind == pay_domain::mail::MailKind::SubscriptionReminder));
    assert!(mails
        .iter()
        .any(|m| m.subject.starts_with("Payment overdue")));
    assert!(mails.iter().all(|m| m.to == "bob@shop.example"));
}

#[test]
fn cancel_archives_open_cycle_links_and_is_terminal() {
    let w = world();
    w.clock.0.store(JAN_31_MS, Ordering::SeqCst);
    let (key, _) = shop(&w);
    let s = w.pay.subscriptions();
    let sub = s
        .create_subscription(&key, monthly("bob@shop.example"))
        .unwrap()
        .subscription;
    let uid = &sub.uid;
    pay_link(
        &w,
        &key,
        s.get_subscription(&key, uid).unwrap().cycles[0]
            .payment_link_uid
            .as_ref()
            .unwrap(),
    );
    w.advance(Duration::days(25));
    s.run_due_billing(10).unwrap();
    let before = s.get_subscription(&key, uid).unwrap();
    assert_eq!(before.cycles.len(), 2, "cycle 1 issued a week ahead");
    let v = s
        .set_subscription_status(&key, uid, SubscriptionStatus::Cancelled)
        .unwrap();
    assert_eq!(v.subscription.status, SubscriptionStatus::Cancelled);
    assert_eq!(
        v.cycles.iter().map(|c| c.status).collect::<Vec<_>>(),
        [CycleStatus::Paid, CycleStatus::Cancelled]
    );
    let open_link = w
        .store
        .stored_link(v.cycles[1].payment_link_uid.as_ref().unwrap())
        .unwrap();
    assert_eq!(open_link.status, LinkStatus::Archived);
    // Terminal: no move out, nothing more issued.
    assert!(matches!(
        s.set_subscription_status(&key, uid, SubscriptionStatus::Active),
        Err(SubscriptionError::Transition(_))
    ));
    w.advance(Duration::days(90));
    s.run_due_billing(10).unwrap();
    assert_eq!(s.get_subscription(&key, uid).unwrap().cycles.len(), 2);
    assert_eq!(
        sub_events(&w, uid.as_str()),
        pairs(&[("cancelled", "merchant_cancelled")])
    );
}

#[test]
fn a_grants_webhook_subscription_never_gets_subscription_events() {
    let w = world();
    w.clock.0.store(JAN_31_MS, Ordering::SeqCst);
    let (_, company) = shop(&w);
    let g = grant(
        company,
        9,
        &[
            Scope::SubscriptionsRead,
            Scope::SubscriptionsWrite,
            Scope::WebhooksWrite,
        ],
    );
    let input = pay_domain::webhooks::SubscriptionInput {
        urls: vec![("url", "https://grant.shop.example/hooks".into())],
        ..Default::default()
    };
    let made = w
        .pay
        .webhooks()
        .put_grant_subscription(&g, input, None, "")
        .unwrap();
    assert!(made.created && made.signing_secret.is_some());
    let s = w.pay.subscriptions();
    let sub = s
        .create_subscription(&g, monthly("bob@shop.example"))
        .unwrap()
        .subscription;
    s.set_subscription_status(&g, &sub.uid, SubscriptionStatus::Paused)
        .unwrap();
    // The move's webhook goes to the company callback (`sub_events` checks the URL), never to
    // the grant's subscription, even for a subscription the grant made.
    assert_eq!(
        sub_events(&w, sub.uid.as_str()),
        pairs(&[("paused", "merchant_paused")])
    );
    assert!(w
        .store
        .stored_deliveries()
        .iter()
        .filter(|d| d.event == EventKind::SubscriptionStatusChanged)
        .all(|d| d.grant_id.is_none() && d.target != CallbackKind::Grant));
}
