//! The mail outbox: rows read back exactly, claims oldest first on a lease, attempts recorded by compare-and-set, per-company reads, the cursor, the retention cut.

use std::collections::HashSet;

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::ids::*;
use crate::links::ports::PaymentLinkStore;
use crate::links::PaymentLink;
use crate::mail::{AfterMailAttempt, MailId, MailKind, MailStatus, MailStore, OutgoingMail};
use crate::tenancy::ports::TenancyStore;

/// The ports these cases need.
pub trait Ports: TenancyStore + PaymentLinkStore + MailStore + Sync {}

impl<T: TenancyStore + PaymentLinkStore + MailStore + Sync> Ports for T {}

/// How long a claim leases (ms).
const LEASE: i64 = 120_000;

pub fn prune_forgets_finished_mails_before_the_cut<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    // Created at T0: one sent, one failed, one still pending; one sent after the cut.
    let mut old_sent = mail(&l, T0, T0);
    old_sent.status = MailStatus::Sent;
    old_sent.next_attempt_at = None;
    old_sent.sent_at = Some(ts(T0));
    let mut old_failed = mail(&l, T0, T0);
    old_failed.status = MailStatus::Failed;
    old_failed.next_attempt_at = None;
    let old_pending = mail(&l, T0, T0);
    let mut new_sent = mail(&l, T0 + 10, T0 + 10);
    new_sent.status = MailStatus::Sent;
    new_sent.next_attempt_at = None;
    new_sent.sent_at = Some(ts(T0 + 10));
    for m in [&old_sent, &old_failed, &old_pending, &new_sent] {
        store.insert_mail(m, None).unwrap();
    }
    assert_eq!(store.prune_mails(ts(T0 + 10)).unwrap(), 2);
    assert!(store.mail(old_sent.id).unwrap().is_none());
    assert!(store.mail(old_failed.id).unwrap().is_none());
    assert!(
        store.mail(old_pending.id).unwrap().is_some(),
        "pending mails stay"
    );
    assert!(
        store.mail(new_sent.id).unwrap().is_some(),
        "the cut is exclusive"
    );
    assert_eq!(store.prune_mails(ts(T0 + 10)).unwrap(), 0);
}

pub fn insert_and_read_back_exactly<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let m = mail(&l, T0, T0);
    store.insert_mail(&m, None).unwrap();
    assert_eq!(store.mail(m.id).unwrap(), Some(m.clone()));
    assert_eq!(store.mail(MailId(Uuid::now_v7())).unwrap(), None);
    // Every optional column round-trips too.
    let mut full = mail(&l, T0 + 1, T0 + 1);
    full.status = MailStatus::Failed;
    full.attempts = 8;
    full.next_attempt_at = None;
    full.last_attempt_at = Some(ts(T0 + 5));
    full.last_error = Some("550 <recipient>: no".into());
    full.sent_at = Some(ts(T0 + 6));
    store.insert_mail(&full, None).unwrap();
    assert_eq!(store.mail(full.id).unwrap(), Some(full));
}

pub fn claim_due_oldest_first_with_lease<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let now = T0 + 1000;
    let late = mail(&l, T0, now - 10);
    let early = mail(&l, T0, now - 500);
    let future = mail(&l, T0, now + 1);
    let mut done = mail(&l, T0, now - 900);
    done.status = MailStatus::Sent;
    done.next_attempt_at = None;
    // A terminal row that still has a date (should not happen) is never claimed either.
    let mut odd = mail(&l, T0, now - 900);
    odd.status = MailStatus::Failed;
    for m in [&late, &early, &future, &done, &odd] {
        store.insert_mail(m, None).unwrap();
    }
    assert!(store
        .claim_due_mails(ts(now), ts(now + LEASE), 0)
        .unwrap()
        .is_empty());
    let got = store.claim_due_mails(ts(now), ts(now + LEASE), 1).unwrap();
    assert_eq!(got.iter().map(|m| m.id).collect::<Vec<_>>(), vec![early.id]);
    assert_eq!(got[0].next_attempt_at, Some(ts(now + LEASE)));
    let got = store.claim_due_mails(ts(now), ts(now + LEASE), 10).unwrap();
    assert_eq!(got.iter().map(|m| m.id).collect::<Vec<_>>(), vec![late.id]);
    // The claim is stored, not only returned.
    assert_eq!(
        store.mail(late.id).unwrap().unwrap().next_attempt_at,
        Some(ts(now + LEASE))
    );
    // Leased rows are not claimed again while the lease runs; `future` falls due meanwhile.
    let got = store
        .claim_due_mails(ts(now + LEASE - 1), ts(now + 2 * LEASE), 10)
        .unwrap();
    assert_eq!(
        got.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![future.id]
    );
    // When the lease ends they are claimable again (a mailer died mid-send).
    let got = store
        .claim_due_mails(ts(now + LEASE), ts(now + 3 * LEASE), 10)
        .unwrap();
    assert_eq!(
        got.iter().map(|m| m.id).collect::<HashSet<_>>(),
        HashSet::from([early.id, late.id])
    );
}

pub fn record_is_compare_and_set<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let m = mail(&l, T0, T0);
    store.insert_mail(&m, None).unwrap();
    // Attempt 1 fails and is rescheduled.
    assert!(store
        .record_mail_attempt(m.id, 1, ts(T0 + 10), &retry(T0 + 60_010, "421 busy"))
        .unwrap());
    let stored = store.mail(m.id).unwrap().unwrap();
    assert_eq!(stored.attempts, 1);
    assert_eq!(stored.status, MailStatus::Pending);
    assert_eq!(stored.last_attempt_at, Some(ts(T0 + 10)));
    assert_eq!(stored.next_attempt_at, Some(ts(T0 + 60_010)));
    assert_eq!(stored.last_error.as_deref(), Some("421 busy"));
    // A duplicate of attempt 1 (a stale claim) and an attempt out of order change nothing.
    assert!(!store
        .record_mail_attempt(m.id, 1, ts(T0 + 20), &sent(T0 + 20))
        .unwrap());
    assert!(!store
        .record_mail_attempt(m.id, 3, ts(T0 + 20), &sent(T0 + 20))
        .unwrap());
    assert!(!store
        .record_mail_attempt(MailId(Uuid::now_v7()), 1, ts(T0), &sent(T0))
        .unwrap());
    assert_eq!(store.mail(m.id).unwrap().unwrap(), stored);
    // Attempt 2 succeeds: terminal, the error cleared.
    assert!(store
        .record_mail_attempt(m.id, 2, ts(T0 + 60_020), &sent(T0 + 60_020))
        .unwrap());
    let done = store.mail(m.id).unwrap().unwrap();
    assert_eq!(done.status, MailStatus::Sent);
    assert_eq!(done.attempts, 2);
    assert_eq!(done.sent_at, Some(ts(T0 + 60_020)));
    assert_eq!(
        (done.next_attempt_at, done.last_error.clone()),
        (None, None)
    );
    // Nothing moves a terminal mail.
    assert!(!store
        .record_mail_attempt(m.id, 3, ts(T0 + 70_000), &retry(T0 + 80_000, "x"))
        .unwrap());
    assert_eq!(store.mail(m.id).unwrap().unwrap(), done);
    assert!(store
        .claim_due_mails(ts(T0 + 10_000_000), ts(T0 + 20_000_000), 10)
        .unwrap()
        .is_empty());
}

pub fn link_mails_are_company_scoped_newest_first<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let other_link = link(store, c);
    let a = mail(&l, T0, T0);
    let b = mail(&l, T0 + 5, T0);
    let elsewhere = mail(&other_link, T0, T0);
    for m in [&a, &b, &elsewhere] {
        store.insert_mail(m, None).unwrap();
    }
    let got: Vec<MailId> = store
        .link_mails(c, &l.uid)
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(got, vec![b.id, a.id]);
    let stranger = company(store);
    assert!(store.link_mails(stranger, &l.uid).unwrap().is_empty());
}

pub fn pending_mails_after_a_cursor<S: Ports>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    let ms: Vec<OutgoingMail> = (0..5).map(|i| mail(&l, T0 + i, T0)).collect();
    for m in &ms {
        store.insert_mail(m, None).unwrap();
    }
    // One of them is done already.
    assert!(store
        .record_mail_attempt(ms[2].id, 1, ts(T0), &sent(T0))
        .unwrap());
    let ids = |v: Vec<OutgoingMail>| v.into_iter().map(|m| m.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.pending_mails_after(None, 10).unwrap()),
        vec![ms[0].id, ms[1].id, ms[3].id, ms[4].id]
    );
    assert_eq!(
        ids(store.pending_mails_after(Some(ms[1].id), 1).unwrap()),
        vec![ms[3].id]
    );
    assert!(store
        .pending_mails_after(Some(ms[4].id), 10)
        .unwrap()
        .is_empty());
    // Listing claims nothing.
    assert_eq!(
        store
            .claim_due_mails(ts(T0), ts(T0 + LEASE), 10)
            .unwrap()
            .len(),
        4
    );
}

pub mod values;
use values::link;
use values::*;
