//! `MailStore` on `DieselStore`, run against SQLite and PostgreSQL alike: each case below
//! becomes a `sqlite` and a `postgres` test (the latter skips without `PAY_TEST_POSTGRES_URL`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::thread;

use pay_domain::kernel::ids::{CompanyId, PaymentLinkId};
use pay_domain::mail::{MailId, MailStore, OutgoingMail};
use pay_store::DieselStore;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;
use pay_domain::testing::conformance::mail::values::link;
use pay_domain::testing::conformance::mail::values::*;

const LEASE: i64 = 120_000;

both_backends!(
    insert_refuses_unknown_link_and_duplicate_id,
    concurrent_mailers_claim_each_mail_once,
);

conformance!(
    mail:
    insert_and_read_back_exactly,
    claim_due_oldest_first_with_lease,
    record_is_compare_and_set,
    link_mails_are_company_scoped_newest_first,
    pending_mails_after_a_cursor,
    prune_forgets_finished_mails_before_the_cut,
);

fn insert_refuses_unknown_link_and_duplicate_id(store: &DieselStore, url: &str) {
    let c = company(store);
    let l = link(store, c);
    let m = mail(&l, T0, T0);
    store.insert_mail(&m, None).unwrap();
    assert!(is_fault(store.insert_mail(&m, None)), "duplicate id");
    let mut orphan = mail(&l, T0, T0);
    orphan.link_id = PaymentLinkId(Uuid::now_v7());
    assert!(is_fault(store.insert_mail(&orphan, None)), "unknown link");
    let mut stranger = mail(&l, T0, T0);
    stranger.company_id = CompanyId(Uuid::now_v7());
    assert!(
        is_fault(store.insert_mail(&stranger, None)),
        "unknown company"
    );
    // A corrupt row is an internal error, not a panic or a default.
    raw_sql(
        url,
        &format!(
            "UPDATE mail_outbox SET status = 'bogus' WHERE id = '{}'",
            m.id
        ),
    );
    assert!(is_fault(store.mail(m.id)));
}

/// Two "servers" (two stores on one database), each with four mailer threads claiming batches
/// of five and recording a success for each, until nothing is due: every mail is claimed and
/// recorded exactly once.
fn concurrent_mailers_claim_each_mail_once(store: &DieselStore, url: &str) {
    const TOTAL: usize = 300;
    let c = company(store);
    let l = link(store, c);
    let all: Vec<OutgoingMail> = (0..TOTAL)
        .map(|i| mail(&l, T0, T0 - i64::try_from(i % 37).unwrap()))
        .collect();
    for m in &all {
        store.insert_mail(m, None).unwrap();
    }
    let servers = [store.clone(), open(url)];
    let claimed: Arc<Mutex<Vec<MailId>>> = Arc::default();
    let threads: Vec<_> = servers
        .iter()
        .flat_map(|server| (0..4).map(move |_| server.clone()))
        .map(|server| {
            let claimed = Arc::clone(&claimed);
            thread::spawn(move || loop {
                let batch = server.claim_due_mails(ts(T0), ts(T0 + LEASE), 5).unwrap();
                if batch.is_empty() {
                    return;
                }
                for m in batch {
                    claimed.lock().unwrap().push(m.id);
                    assert!(server
                        .record_mail_attempt(m.id, 1, ts(T0), &sent(T0))
                        .unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let claimed = claimed.lock().unwrap();
    assert_eq!(claimed.len(), TOTAL, "no mail claimed twice");
    assert_eq!(
        claimed.iter().copied().collect::<HashSet<_>>(),
        all.iter().map(|m| m.id).collect::<HashSet<_>>(),
        "no mail lost"
    );
    assert!(store.pending_mails_after(None, 10).unwrap().is_empty());
}
