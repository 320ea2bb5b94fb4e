//! `CheckoutStore` on `DieselStore`, run against SQLite and PostgreSQL alike: each case below
//! becomes a `sqlite` and a `postgres` test (the latter skips without `PAY_TEST_POSTGRES_URL`).

use std::sync::{Arc, Barrier};
use std::thread;

use diesel::{Connection, QueryableByName, RunQueryDsl};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{
    CheckoutStore, DueSession, LinkEventWrite, PaymentSession, SessionChange, WriteOutcome,
};
use pay_domain::kernel::ids::{CompanyId, LinkUid, PaymentSessionId};
use pay_domain::links::ports::{AnonymousLinkStore, PaymentLinkStore};
use pay_domain::links::{
    CreatedBy, LinkStatus, PaymentLink, PaymentLinkPayload, ANONYMOUS_COMPANY,
};
use pay_domain::webhooks::ports::WebhookStore;
use pay_store::DieselStore;

#[macro_use]
mod common;
use common::*;
use pay_domain::testing::conformance::checkout::values::link;
use pay_domain::testing::conformance::checkout::values::*;

// ----- fixtures -----

/// A link of the company with the given status and expiry, in the store.
fn link_with(
    store: &DieselStore,
    company: CompanyId,
    status: LinkStatus,
    expires_at: Option<i64>,
) -> PaymentLink {
    let l = new_link(company, status, expires_at);
    store.insert_link(&l, None).unwrap();
    l
}

/// What the ports do not show: the link's one paid session, read beside the store.
fn paid_session_id(url: &str, l: &PaymentLink) -> Option<String> {
    #[derive(QueryableByName)]
    struct Paid {
        #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
        paid_session_id: Option<String>,
    }
    // The id is a UUID we made: safe to put in the text.
    let sql = format!(
        "SELECT paid_session_id FROM payment_links WHERE id = '{}'",
        l.id
    );
    let rows: Vec<Paid> = if let Some(path) = url.strip_prefix("sqlite://") {
        diesel::sql_query(sql)
            .load(&mut diesel::SqliteConnection::establish(path).unwrap())
            .unwrap()
    } else {
        diesel::sql_query(sql)
            .load(&mut diesel::PgConnection::establish(url).unwrap())
            .unwrap()
    };
    assert_eq!(rows.len(), 1, "the link exists");
    rows.into_iter().next().unwrap().paid_session_id
}

both_backends!(
    failed_write_rolls_back_everything,
    claim_link_once,
    concurrent_claims_one_winner,
    concurrent_claim_and_emit_on_one_session,
    due_sessions_for_each_reason,
    public_link_of_any_company,
    caller_bugs_are_refused,
    corrupt_rows_are_internal_errors,
);

conformance!(
    checkout:
    session_and_timeline_round_trip,
    update_is_compare_and_set,
    duplicate_processor_event_writes_nothing,
    concurrent_duplicate_events_apply_once,
    webhook_events_take_consecutive_numbers,
    latest_session_newest_first,
    unfinished_sessions_oldest_first,
    latest_session_in_picks_the_newest_of_those_statuses,    company_sessions_in_status_newest_change_first,
    company_collected_adds_up_by_day_and_asset,
    company_collected_follows_every_session_change,
);

// ----- cases -----

/// A step failing late (a delivery that cannot be inserted) takes every earlier step with it:
/// the processor event, the claim, the session and the timeline.
fn failed_write_rolls_back_everything(store: &DieselStore, url: &str) {
    let c = company(store);
    let l = link(store, c);
    let v1 = session(&l, SessionStatus::Pending, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &v1), &never).unwrap());
    let existing = store.enqueue_link_event(l.id, &builder(c, &l, 1)).unwrap();

    let v2 = moved(&v1, SessionStatus::Complete, T0 + 10);
    let w = LinkEventWrite {
        processor_event_id: Some("evt_1".into()),
        claim_link: Some(v1.id),
        webhook_events: 1,
        ..update(&l, &v1, &v2)
    };
    let good = builder(c, &l, 1);
    let clashing = |n: u64| {
        let mut d = good(n);
        d[0].id = existing[0].id;
        d
    };
    assert!(is_fault(store.write_link_event(&w, &clashing)));
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v1.clone()));
    assert_eq!(store.timeline(l.id).unwrap().len(), 1);
    assert_eq!(store.public_link(&l.uid).unwrap(), Some(l.clone()));
    assert_eq!(paid_session_id(url, &l), None);
    assert_eq!(store.deliveries(c, &all_deliveries()).unwrap().len(), 1);

    // The same write again applies: the event id, the claim and the number were not used up.
    let out = applied(store.write_link_event(&w, &good).unwrap());
    assert_eq!(sequences(&out), vec![r#"{"sequence":2}"#]);
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v2));
    assert_eq!(paid_session_id(url, &l), Some(v1.id.to_string()));
}

fn claim_link_once(store: &DieselStore, url: &str) {
    let c = company(store);
    let l = link(store, c);
    let s1 = session(&l, SessionStatus::Processing, T0, T0 + 60_000);
    let s2 = session(&l, SessionStatus::Processing, T0 + 1, T0 + 60_000);
    for s in [&s1, &s2] {
        applied(store.write_link_event(&insert(&l, s), &never).unwrap());
    }
    assert_eq!(paid_session_id(url, &l), None);

    // A claim whose session write is stale: nothing written, the link stays unclaimed.
    let stale = LinkEventWrite {
        claim_link: Some(s1.id),
        ..update(
            &l,
            &moved(&s1, SessionStatus::Processing, T0),
            &moved(
                &moved(&s1, SessionStatus::Processing, T0),
                SessionStatus::Complete,
                T0 + 5,
            ),
        )
    };
    assert_eq!(
        store.write_link_event(&stale, &never).unwrap(),
        WriteOutcome::Stale
    );
    assert_eq!(paid_session_id(url, &l), None);
    assert_eq!(store.public_link(&l.uid).unwrap(), Some(l.clone()));

    // The first claim: the link is archived (at the session's time) and names the session.
    let s1_done = moved(&s1, SessionStatus::Complete, T0 + 10);
    let claim1 = LinkEventWrite {
        claim_link: Some(s1.id),
        webhook_events: 1,
        ..update(&l, &s1, &s1_done)
    };
    applied(store.write_link_event(&claim1, &builder(c, &l, 1)).unwrap());
    assert_eq!(paid_session_id(url, &l), Some(s1.id.to_string()));
    let archived = PaymentLink {
        status: LinkStatus::Archived,
        updated_at: ts(T0 + 10),
        ..l.clone()
    };
    assert_eq!(store.public_link(&l.uid).unwrap(), Some(archived.clone()));
    let timeline = store.timeline(l.id).unwrap();

    // A second session's claim: LinkAlreadyPaid, nothing written.
    let s2_done = moved(&s2, SessionStatus::Complete, T0 + 20);
    let claim2 = LinkEventWrite {
        claim_link: Some(s2.id),
        processor_event_id: Some("evt_s2".into()),
        webhook_events: 1,
        ..update(&l, &s2, &s2_done)
    };
    assert_eq!(
        store.write_link_event(&claim2, &never).unwrap(),
        WriteOutcome::LinkAlreadyPaid
    );
    assert_eq!(store.payment_session(s2.id).unwrap(), Some(s2.clone()));
    assert_eq!(store.timeline(l.id).unwrap(), timeline);
    assert_eq!(store.deliveries(c, &all_deliveries()).unwrap().len(), 1);
    assert_eq!(paid_session_id(url, &l), Some(s1.id.to_string()));
    assert_eq!(store.public_link(&l.uid).unwrap(), Some(archived));
    // Its processor event was not recorded either: without the claim it applies.
    let plain = LinkEventWrite {
        claim_link: None,
        ..claim2
    };
    applied(store.write_link_event(&plain, &builder(c, &l, 1)).unwrap());
    assert_eq!(store.payment_session(s2.id).unwrap(), Some(s2_done));
}

/// 50 payers of one one-time link complete at once: one wins, 49 find it paid.
fn concurrent_claims_one_winner(store: &DieselStore, url: &str) {
    const THREADS: usize = 50;
    let c = company(store);
    let l = link(store, c);
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|i| {
            let store = store.clone();
            let l = l.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let s = session(&l, SessionStatus::Processing, T0 + i as i64, T0 + 60_000);
                applied(store.write_link_event(&insert(&l, &s), &never).unwrap());
                barrier.wait();
                let done = moved(&s, SessionStatus::Complete, T0 + 100);
                let w = LinkEventWrite {
                    claim_link: Some(s.id),
                    processor_event_id: Some(format!("evt_{i}")),
                    webhook_events: 1,
                    ..update(&l, &s, &done)
                };
                let out = store.write_link_event(&w, &builder(c, &l, 1)).unwrap();
                (s.id, out)
            })
        })
        .collect();
    let results: Vec<(PaymentSessionId, WriteOutcome)> =
        threads.into_iter().map(|t| t.join().unwrap()).collect();
    let winners: Vec<PaymentSessionId> = results
        .iter()
        .filter(|(_, o)| matches!(o, WriteOutcome::Applied(_)))
        .map(|(id, _)| *id)
        .collect();
    let paid = results
        .iter()
        .filter(|(_, o)| *o == WriteOutcome::LinkAlreadyPaid)
        .count();
    assert_eq!(winners.len(), 1, "{results:?}");
    assert_eq!(paid, THREADS - 1);
    let winner = winners[0];
    assert_eq!(paid_session_id(url, &l), Some(winner.to_string()));
    assert_eq!(
        store.public_link(&l.uid).unwrap().unwrap().status,
        LinkStatus::Archived
    );
    // Only the winner moved; only its delivery and timeline entry were written.
    for (id, _) in &results {
        let s = store.payment_session(*id).unwrap().unwrap();
        let want = if *id == winner { 2 } else { 1 };
        assert_eq!(s.version, want);
    }
    let deliveries = store.deliveries(c, &all_deliveries()).unwrap();
    assert_eq!(sequences(&deliveries), vec![r#"{"sequence":1}"#]);
    assert_eq!(store.timeline(l.id).unwrap().len(), THREADS + 1);
}

/// Writes about one session racing, some claiming the link and some emitting webhooks: they
/// lock the link's and the session's rows in one order, so one applies and the others lose
/// cleanly (no deadlock error on PostgreSQL).
fn concurrent_claim_and_emit_on_one_session(store: &DieselStore, _url: &str) {
    const THREADS: usize = 20;
    let c = company(store);
    let l = link(store, c);
    let v1 = session(&l, SessionStatus::Processing, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &v1), &never).unwrap());
    let barrier = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|i| {
            let store = store.clone();
            let l = l.clone();
            let v1 = v1.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let claiming = i % 2 == 0;
                let to = if claiming {
                    SessionStatus::Complete
                } else {
                    SessionStatus::Underpaid
                };
                let w = LinkEventWrite {
                    claim_link: claiming.then_some(v1.id),
                    webhook_events: 1,
                    ..update(&l, &v1, &moved(&v1, to, T0 + 10))
                };
                barrier.wait();
                store.write_link_event(&w, &builder(c, &l, 1))
            })
        })
        .collect();
    let results: Vec<WriteOutcome> = threads
        .into_iter()
        .map(|t| t.join().unwrap().unwrap())
        .collect();
    let applied_count = results
        .iter()
        .filter(|o| matches!(o, WriteOutcome::Applied(_)))
        .count();
    assert_eq!(applied_count, 1, "{results:?}");
    assert!(results.iter().all(|o| matches!(
        o,
        WriteOutcome::Applied(_) | WriteOutcome::Stale | WriteOutcome::LinkAlreadyPaid
    )));
    assert_eq!(store.payment_session(v1.id).unwrap().unwrap().version, 2);
    assert_eq!(store.deliveries(c, &all_deliveries()).unwrap().len(), 1);
}

fn due_sessions_for_each_reason(store: &DieselStore, _url: &str) {
    let c = company(store);
    let now = T0 + 1_000;
    let active = link(store, c);
    let paused = link_with(store, c, LinkStatus::Paused, None);
    let archived = link_with(store, c, LinkStatus::Archived, None);
    let expired = link_with(store, c, LinkStatus::Active, Some(now - 100));
    let expiring_at_now = link_with(store, c, LinkStatus::Active, Some(now));
    let later = link_with(store, c, LinkStatus::Active, Some(now + 5_000));

    let add = |l: &PaymentLink, status: SessionStatus, expires_at: i64| {
        let s = session(l, status, T0, expires_at);
        applied(store.write_link_event(&insert(l, &s), &never).unwrap());
        s
    };
    // Due: its own deadline passed (or is now), the link paused / archived / expired.
    let past = add(&active, SessionStatus::Pending, now - 500);
    let at_now = add(&active, SessionStatus::Quote, now);
    let on_paused = add(&paused, SessionStatus::Quote, now + 5_000);
    let on_archived = add(&archived, SessionStatus::Pending, now + 6_000);
    let on_expired = add(&expired, SessionStatus::Quote, now + 7_000);
    let on_expiring = add(&expiring_at_now, SessionStatus::Pending, now + 8_000);
    // Not due: future deadlines on an active link, or finished sessions whatever their dates.
    add(&active, SessionStatus::Quote, now + 1);
    add(&later, SessionStatus::Pending, now + 9_000);
    for status in SessionStatus::ALL
        .into_iter()
        .filter(|s| !s.is_unfinished())
    {
        add(&active, status, now - 900);
        add(&paused, status, now + 1);
        add(&expired, status, now + 1);
    }

    let due = |l: &PaymentLink, s: &PaymentSession| DueSession {
        session: s.clone(),
        link: l.clone(),
    };
    let want = vec![
        due(&active, &past),
        due(&active, &at_now),
        due(&paused, &on_paused),
        due(&archived, &on_archived),
        due(&expired, &on_expired),
        due(&expiring_at_now, &on_expiring),
    ];
    assert_eq!(store.due_sessions(ts(now), 100).unwrap(), want);
    // Oldest deadline first, at most `limit`.
    assert_eq!(store.due_sessions(ts(now), 2).unwrap(), want[..2].to_vec());
    assert_eq!(store.due_sessions(ts(now), 0).unwrap(), vec![]);
    // Earlier, fewer are due: only the inactive links' sessions.
    assert_eq!(
        store.due_sessions(ts(T0), 100).unwrap(),
        vec![due(&paused, &on_paused), due(&archived, &on_archived)]
    );
    // Once a session is finished it is no longer due.
    let done = moved(&past, SessionStatus::Expired, now);
    applied(
        store
            .write_link_event(&update(&active, &past, &done), &never)
            .unwrap(),
    );
    assert_eq!(
        store.due_sessions(ts(now), 100).unwrap(),
        want[1..].to_vec()
    );
}

fn public_link_of_any_company(store: &DieselStore, _url: &str) {
    let a = company(store);
    let b = company(store);
    let la = link(store, a);
    let lb = link_with(store, b, LinkStatus::Paused, Some(T0 + 86_400_000));
    let anon = PaymentLink {
        company_id: ANONYMOUS_COMPANY,
        payload: PaymentLinkPayload {
            settlement_address: Some("0x00000000000000000000000000000000000000aa".into()),
            ..new_link(a, LinkStatus::Active, None).payload
        },
        created_by: CreatedBy::Anonymous,
        ..new_link(a, LinkStatus::Active, Some(T0 + 86_400_000))
    };
    store.insert_anonymous_link(&anon, None).unwrap();
    for l in [&la, &lb, &anon] {
        assert_eq!(store.public_link(&l.uid).unwrap().as_ref(), Some(l));
    }
    let unknown = LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap();
    assert_eq!(store.public_link(&unknown).unwrap(), None);
}

/// Writes that can only come from a bug are refused before anything is written.
fn caller_bugs_are_refused(store: &DieselStore, _url: &str) {
    let c = company(store);
    let l = link(store, c);
    let other = link(store, c);
    let v1 = session(&l, SessionStatus::Quote, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &v1), &never).unwrap());

    // An update that does not store expected_version + 1.
    let same_version = PaymentSession {
        version: 1,
        ..moved(&v1, SessionStatus::Pending, T0 + 1)
    };
    assert!(is_fault(
        store.write_link_event(&update(&l, &v1, &same_version), &never)
    ));
    // A session filed under another link.
    let foreign = session(&other, SessionStatus::Quote, T0, T0 + 60_000);
    assert!(is_fault(store.write_link_event(
        &write(&l, SessionChange::Insert(foreign.clone())),
        &never
    )));
    // A timeline entry of another link.
    assert!(is_fault(store.write_link_event(
        &LinkEventWrite {
            timeline: vec![entry(&other, None, "quote_created", T0)],
            ..write(&l, SessionChange::None)
        },
        &never
    )));
    // A session inserted twice.
    assert!(is_fault(store.write_link_event(&insert(&l, &v1), &never)));
    assert_eq!(store.payment_session(v1.id).unwrap(), Some(v1));
    assert_eq!(store.payment_session(foreign.id).unwrap(), None);
    assert_eq!(store.timeline(l.id).unwrap().len(), 1);
    assert_eq!(store.timeline(other.id).unwrap(), vec![]);
}

fn corrupt_rows_are_internal_errors(store: &DieselStore, url: &str) {
    let c = company(store);
    let l = link(store, c);
    let s = session(&l, SessionStatus::Pending, T0, T0 + 60_000);
    applied(store.write_link_event(&insert(&l, &s), &never).unwrap());
    raw_sql(
        url,
        &format!(
            "UPDATE payment_sessions SET settlement = 'not json' WHERE id = '{}'",
            s.id
        ),
    );
    assert!(is_fault(store.payment_session(s.id)));
    assert!(is_fault(store.latest_session(l.id)));
    assert!(is_fault(store.unfinished_sessions(l.id)));
    assert!(is_fault(store.due_sessions(ts(T0 + 120_000), 10)));
    raw_sql(
        url,
        &format!(
            "UPDATE payment_sessions SET settlement = '{{}}', status = 'paid' WHERE id = '{}'",
            s.id
        ),
    );
    assert!(is_fault(store.payment_session(s.id)));
    raw_sql(
        url,
        &format!(
            "UPDATE timeline_events SET data = '[1]' WHERE link_id = '{}'",
            l.id
        ),
    );
    assert!(is_fault(store.timeline(l.id)));
}
