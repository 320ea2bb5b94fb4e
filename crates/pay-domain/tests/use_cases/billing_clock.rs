//! The sandbox test clock drives billing: one advance walks the company's clock through each
//! instant its subscriptions have work at, so every step happens at its own instant (issued a
//! week ahead, reminded at 09:00 local, overdue a day after due) as if the time had passed,
//! and only that company's subscriptions follow it.

use std::sync::atomic::Ordering;

use super::billing::{monthly, pairs, pay_link, shop, sub_events, JAN_31_MS};
use super::*;
use pay_domain::subscriptions::{CycleStatus, SubscriptionStatus};
use pay_domain::webhooks::EventKind;

fn at(ms: i64) -> Timestamp {
    Timestamp::from_unix_millis(ms).unwrap()
}

fn iso(t: Timestamp) -> String {
    t.to_rfc3339()
}

const DAY_S: i64 = 24 * 3600;

#[test]
fn advancing_the_clock_runs_each_billing_step_at_its_own_instant() {
    let w = world();
    w.clock.0.store(JAN_31_MS, Ordering::SeqCst);
    let (key, a) = shop(&w);
    let b = w.tenant("Beta", "ben@beta.example");
    let other = w.key_principal(&b);
    let s = w.pay.subscriptions();
    let sub = s
        .create_subscription(&key, monthly("bob@shop.example"))
        .unwrap()
        .subscription;
    let theirs = s
        .create_subscription(&other, monthly("dan@beta.example"))
        .unwrap()
        .subscription;
    let uid = &sub.uid;

    // One call: 40 days (Jan 31 10:00Z -> Mar 12 10:00Z), nothing paid.
    let now = w
        .pay
        .sandbox()
        .advance_test_clock(&key, 40 * DAY_S)
        .unwrap();
    assert_eq!(iso(now), "2027-03-12T10:00:00.000Z");

    let view = s.get_subscription(&key, uid).unwrap();
    assert_eq!(view.subscription.status, SubscriptionStatus::Overdue);
    let c: Vec<(u32, CycleStatus, String, Option<String>)> = view
        .cycles
        .iter()
        .map(|c| (c.sequence, c.status, iso(c.due_at), c.issued_at.map(iso)))
        .collect();
    assert_eq!(
        c,
        [
            (
                0,
                CycleStatus::Overdue,
                "2027-01-31T10:00:00.000Z".into(),
                Some("2027-01-31T10:00:00.000Z".into())
            ),
            // Issued a week ahead, at that instant, not at the end of the advance.
            (
                1,
                CycleStatus::Overdue,
                "2027-02-28T10:00:00.000Z".into(),
                Some("2027-02-21T10:00:00.000Z".into())
            ),
        ],
        "cycle 2 (Mar 31) is not within its week yet"
    );

    // The overdue move happened a day after cycle 0's due instant.
    let moves: Vec<(String, String)> = w
        .store
        .stored_deliveries()
        .into_iter()
        .filter(|d| d.event == EventKind::SubscriptionStatusChanged)
        .map(|d| {
            assert_eq!(d.company_id, a, "no webhook for the other company");
            (iso(d.created_at), d.subscription_uid.unwrap())
        })
        .collect();
    assert_eq!(
        moves,
        [("2027-02-01T10:00:00.000Z".to_owned(), uid.to_string())]
    );

    // Each reminder at 09:00 Berlin (08:00Z) on its own day, and one per cycle: the one due
    // when the move ends. Cycle 0's overdue reminder (its earlier ones fell before it was
    // issued); cycle 1's before-due and due-day reminders were walked past (recorded, not
    // sent: its overdue one, due by the end, supersedes them).
    let mut mails: Vec<(String, String)> = w
        .store
        .snapshot()
        .mails
        .into_iter()
        .map(|m| {
            assert_eq!(m.to, "bob@shop.example");
            (iso(m.created_at), m.subject)
        })
        .collect();
    mails.sort();
    let when: Vec<&str> = mails.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        when,
        ["2027-02-02T08:00:00.000Z", "2027-03-02T08:00:00.000Z",],
        "{mails:?}"
    );
    assert!(
        mails.iter().all(|m| m.1.starts_with("Payment overdue")),
        "{mails:?}"
    );

    // The other company's clock and subscription did not move.
    assert_eq!(
        w.pay.sandbox().test_clock_now(&other).unwrap(),
        at(JAN_31_MS)
    );
    let untouched = s.get_subscription(&other, &theirs.uid).unwrap();
    assert_eq!(untouched.subscription.status, SubscriptionStatus::Active);
    assert_eq!(untouched.cycles.len(), 1);
    assert_eq!(untouched.cycles[0].status, CycleStatus::Open);
    assert_eq!(untouched.cycles[0].reminders, 0);

    // Paying both: the next step of the clock moves it back to active, once.
    for c in &view.cycles {
        pay_link(&w, &key, c.payment_link_uid.as_ref().unwrap());
    }
    w.pay.sandbox().advance_test_clock(&key, 1).unwrap();
    let after = s.get_subscription(&key, uid).unwrap();
    assert_eq!(after.subscription.status, SubscriptionStatus::Active);
    assert!(after.cycles.iter().all(|c| c.status == CycleStatus::Paid));
    assert_eq!(
        sub_events(&w, uid.as_str()),
        pairs(&[
            ("overdue", "cycle_one_day_overdue"),
            ("active", "overdue_cycles_paid")
        ])
    );

    // Another month: cycle 2 issued on Mar 24 09:00Z (a week before Mar 31 11:00 Berlin).
    w.pay
        .sandbox()
        .advance_test_clock(&key, 30 * DAY_S)
        .unwrap();
    let later = s.get_subscription(&key, uid).unwrap();
    assert_eq!(later.cycles.len(), 3);
    assert_eq!(
        later.cycles[2].issued_at.map(iso).as_deref(),
        Some("2027-03-24T09:00:00.000Z")
    );
}

#[test]
fn a_clock_moved_past_its_limit_moves_nothing() {
    let w = world();
    w.clock.0.store(JAN_31_MS, Ordering::SeqCst);
    let (key, _) = shop(&w);
    let sandbox = w.pay.sandbox();
    for _ in 0..10 {
        sandbox
            .advance_test_clock(&key, pay_domain::app::MAX_CLOCK_ADVANCE_SECS)
            .unwrap();
    }
    let before = sandbox.test_clock_now(&key).unwrap();
    assert!(sandbox.advance_test_clock(&key, 1).is_err());
    assert_eq!(sandbox.test_clock_now(&key).unwrap(), before);
}
