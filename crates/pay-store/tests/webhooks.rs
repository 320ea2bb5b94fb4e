//! `WebhookStore` on `DieselStore`, run against SQLite and PostgreSQL alike: each case below
//! becomes a `sqlite` and a `postgres` test (the latter skips without `PAY_TEST_POSTGRES_URL`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::thread;

use pay_domain::kernel::ids::CompanyId;
use pay_domain::links::PaymentLink;
use pay_domain::webhooks::ports::WebhookStore;
use pay_domain::webhooks::{
    AfterAttempt, AttemptError, AttemptOutcome, CallbackKind, Delivery, DeliveryFilter,
    DeliveryOrigin, DeliveryStatus, EndpointHealth, EventKind, PaymentEvent,
};
use pay_store::DieselStore;
use uuid::Uuid;

#[macro_use]
mod common;
use common::*;
use pay_domain::testing::conformance::webhooks::values::*;

// ----- fixtures -----

const LEASE: i64 = 60_000;

const NONE: Vec<Uuid> = Vec::new();

fn ids(deliveries: &[Delivery]) -> Vec<Uuid> {
    deliveries.iter().map(|d| d.id).collect()
}

fn want(deliveries: &[&Delivery]) -> Vec<Uuid> {
    deliveries.iter().map(|d| d.id).collect()
}

both_backends!(
    delivery_log_filters,
    attempts_listing_and_scoping,
    corrupt_rows_are_internal_errors,
    errors_are_stored_as_words_and_old_texts_read_as_theirs,
    concurrent_dispatchers_claim_each_delivery_once,
);

conformance!(
    webhooks:
    callbacks_save_read_replace,
    enqueue_numbers_events_per_link,
    enqueue_rolls_back_with_its_deliveries,
    enqueue_concurrently_gets_distinct_numbers,
    insert_deliveries_is_all_or_nothing,
    outbox_gauges_count_live_deliveries,
    the_event_log_records_each_event_with_its_deliveries,
    the_event_log_pages_and_filters,
    the_event_log_is_pruned_by_age,
    claim_due_oldest_first_with_lease,
    record_attempt_moves_state_once,
    retarget_moves_live_deliveries_only,
    record_attempts_in_one_batch,
    claims_keep_each_endpoint_within_its_share,
    a_failing_endpoint_is_paused_then_probed,
);

conformance!(
    grant_webhooks:
    grant_subscriptions_save_by_version,
    keyed_write_commits_its_answer_with_it,
    a_key_is_claimed_once_and_dead_claims_are_taken_over,
    a_link_is_tagged_with_the_active_grant_subscription,
);

conformance!(
    keyed:
    a_keyed_link_commits_with_its_answer,
    a_keyed_mail_commits_with_its_answer,
    a_keyed_subscription_commits_with_its_answer,
    a_keyed_upsert_commits_with_its_answer,
    a_keyed_expense_save_commits_with_its_answer,
);

// ----- cases -----

fn delivery_log_filters(store: &DieselStore, _url: &str) {
    let a = company(store);
    let b = company(store);
    let l1 = link(store, a);
    let l2 = link(store, a);
    let lb = link(store, b);

    let mk = |company: CompanyId, created: i64, l: &PaymentLink, order: Option<&str>| {
        let mut d = delivery(company, created, T0);
        d.payment_link_uid = Some(l.uid.to_string());
        d.order_id = order.map(str::to_owned);
        d
    };
    let d1 = mk(a, T0 + 1, &l1, Some("Order-77"));
    let mut d2 = mk(a, T0 + 2, &l1, Some("Order-77"));
    d2.event = EventKind::Test;
    d2.status = DeliveryStatus::Failed;
    d2.next_attempt_at = None;
    let mut d3 = mk(a, T0 + 3, &l2, None);
    d3.event = EventKind::Payment(PaymentEvent::PaymentLinkExpired);
    d3.status = DeliveryStatus::Succeeded;
    d3.next_attempt_at = None;
    // Same instant as d3: the id breaks the tie (v7 ids: d4 sorts after d3).
    let mut d4 = mk(a, T0 + 3, &l2, Some("order-77"));
    d4.origin = DeliveryOrigin::Manual;
    let mut subscription = delivery(a, T0 + 4, T0);
    subscription.event = EventKind::SubscriptionStatusChanged;
    subscription.subscription_uid = Some("sub_1".into());
    // Another company: same order id, same event, never listed for `a`.
    let other = mk(b, T0 + 5, &lb, Some("Order-77"));
    store
        .insert_deliveries(&[
            d3.clone(),
            other.clone(),
            d1.clone(),
            subscription.clone(),
            d4.clone(),
            d2.clone(),
        ])
        .unwrap();
    let list = |f: DeliveryFilter| store.deliveries(a, &f).unwrap();

    // Newest first, ties by id descending; the whole row comes back.
    assert_eq!(
        list(filter()),
        vec![
            subscription.clone(),
            d4.clone(),
            d3.clone(),
            d2.clone(),
            d1.clone()
        ]
    );
    assert_eq!(store.deliveries(b, &filter()).unwrap(), vec![other.clone()]);
    assert_eq!(
        ids(&list(DeliveryFilter {
            limit: 2,
            ..filter()
        })),
        want(&[&subscription, &d4])
    );

    // Link uid and status, alone and together.
    let by_link = |uid: &str| DeliveryFilter {
        payment_link_uid: Some(uid.to_owned()),
        ..filter()
    };
    assert_eq!(ids(&list(by_link(l1.uid.as_str()))), want(&[&d2, &d1]));
    assert_eq!(ids(&list(by_link(l2.uid.as_str()))), want(&[&d4, &d3]));
    assert_eq!(
        list(by_link(lb.uid.as_str())),
        vec![],
        "another company's link"
    );
    let by_status = |s: DeliveryStatus| DeliveryFilter {
        status: Some(s),
        ..filter()
    };
    assert_eq!(
        ids(&list(by_status(DeliveryStatus::Pending))),
        want(&[&subscription, &d4, &d1])
    );
    assert_eq!(ids(&list(by_status(DeliveryStatus::Failed))), want(&[&d2]));
    assert_eq!(list(by_status(DeliveryStatus::Retrying)), vec![]);
    assert_eq!(
        ids(&list(DeliveryFilter {
            status: Some(DeliveryStatus::Pending),
            ..by_link(l2.uid.as_str())
        })),
        want(&[&d4])
    );

    // Search: delivery id (any UUID spelling), event name (any case), link uid, order id
    // (exact: "order-77" is another order than "Order-77").
    let search = |s: &str| {
        ids(&list(DeliveryFilter {
            search: Some(s.to_owned()),
            ..filter()
        }))
    };
    assert_eq!(search(&d3.id.to_string()), want(&[&d3]));
    assert_eq!(
        search(&d3.id.hyphenated().to_string().to_uppercase()),
        want(&[&d3])
    );
    assert_eq!(search(&d3.id.simple().to_string()), want(&[&d3]));
    assert_eq!(
        search(&other.id.to_string()),
        NONE,
        "another company's delivery"
    );
    assert_eq!(search("payment_link_expired"), want(&[&d3]));
    assert_eq!(search("Payment_Link_Expired"), want(&[&d3]));
    assert_eq!(search("test"), want(&[&d2]));
    assert_eq!(
        search("subscription_status_changed"),
        want(&[&subscription])
    );
    assert_eq!(search(l2.uid.as_str()), want(&[&d4, &d3]));
    assert_eq!(search(lb.uid.as_str()), NONE);
    assert_eq!(search("Order-77"), want(&[&d2, &d1]));
    assert_eq!(search("order-77"), want(&[&d4]));
    assert_eq!(search("Order-7"), NONE);
    assert_eq!(search("status_changed"), want(&[&d4, &d1]));
    assert_eq!(search("nothing"), NONE);
    assert_eq!(
        ids(&list(DeliveryFilter {
            search: Some("Order-77".into()),
            status: Some(DeliveryStatus::Pending),
            ..filter()
        })),
        want(&[&d1])
    );
    assert_eq!(
        ids(&list(DeliveryFilter {
            search: Some("status_changed".into()),
            limit: 1,
            ..filter()
        })),
        want(&[&d4])
    );
}

fn attempts_listing_and_scoping(store: &DieselStore, _url: &str) {
    let a = company(store);
    let b = company(store);
    let d = delivery(a, T0, T0);
    let e = delivery(a, T0, T0);
    store.insert_deliveries(&[d.clone(), e.clone()]).unwrap();
    let retry = |at: i64| AfterAttempt {
        status: DeliveryStatus::Retrying,
        next_attempt_at: Some(ts(at)),
    };
    let failed = AttemptOutcome {
        status: Some(500),
        duration_ms: 7,
        error: None,
        response_excerpt: Some("boom".into()),
        retry_after: None,
    };
    let mut records = Vec::new();
    for n in 1..=3u32 {
        let at = T0 + i64::from(n) * 300_000;
        let r = attempt(&d, n, at, failed.clone());
        store.record_attempt(&r, &retry(at + 300_000)).unwrap();
        records.push(r);
    }
    let only = attempt(&e, 1, T0, success(3));
    store
        .record_attempt(
            &only,
            &AfterAttempt {
                status: DeliveryStatus::Succeeded,
                next_attempt_at: None,
            },
        )
        .unwrap();

    assert_eq!(store.attempts(a, d.id).unwrap(), records);
    assert_eq!(store.attempts(a, e.id).unwrap(), vec![only]);
    // Another company sees neither the delivery nor its attempts.
    assert_eq!(store.delivery(b, d.id).unwrap(), None);
    assert_eq!(store.attempts(b, d.id).unwrap(), vec![]);
    assert_eq!(store.delivery(a, Uuid::now_v7()).unwrap(), None);
    assert_eq!(store.attempts(a, Uuid::now_v7()).unwrap(), vec![]);
}

fn corrupt_rows_are_internal_errors(store: &DieselStore, url: &str) {
    let c = company(store);
    let d = delivery(c, T0, T0);
    store.insert_deliveries(std::slice::from_ref(&d)).unwrap();
    store
        .record_attempt(
            &attempt(&d, 1, T0, success(1)),
            &AfterAttempt {
                status: DeliveryStatus::Succeeded,
                next_attempt_at: None,
            },
        )
        .unwrap();
    let mut cb = callback(c, CallbackKind::CompanyPayment, "https://a.example");
    cb.previous = Some((sealed("z9"), ts(T0)));
    assert!(store.save_company_callback(&cb).unwrap());
    raw_sql(
        url,
        "UPDATE webhook_deliveries SET status = 'lost'; \
         UPDATE webhook_attempts SET status_code = 70000; \
         UPDATE webhook_callbacks SET prev_last4 = NULL;",
    );
    assert!(is_fault(store.deliveries(c, &filter())));
    assert!(is_fault(store.delivery(c, d.id)));
    assert!(is_fault(store.attempts(c, d.id)));
    assert!(is_fault(
        store.company_callback(c, CallbackKind::CompanyPayment)
    ));
}

/// The values of the one nullable text column `v` that `sql` selects.
fn raw_sql_texts(url: &str, sql: &str) -> Vec<Option<String>> {
    use diesel::sql_types::{Nullable, Text};
    use diesel::{Connection, RunQueryDsl};

    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = Nullable<Text>)]
        v: Option<String>,
    }
    let rows: Vec<Row> = if let Some(path) = url.strip_prefix("sqlite://") {
        diesel::sql_query(sql)
            .load(&mut diesel::SqliteConnection::establish(path).unwrap())
            .unwrap()
    } else {
        diesel::sql_query(sql)
            .load(&mut diesel::PgConnection::establish(url).unwrap())
            .unwrap()
    };
    rows.into_iter().map(|r| r.v).collect()
}

fn errors_are_stored_as_words_and_old_texts_read_as_theirs(store: &DieselStore, url: &str) {
    let c = company(store);
    let d = delivery(c, T0, T0);
    store.insert_deliveries(std::slice::from_ref(&d)).unwrap();
    let refused = AttemptOutcome {
        status: None,
        duration_ms: 1,
        error: Some(AttemptError::RefusedTarget),
        response_excerpt: None,
        retry_after: None,
    };
    let retry = AfterAttempt {
        status: DeliveryStatus::Retrying,
        next_attempt_at: Some(ts(T0 + 300_000)),
    };
    // Recorded one by one and as a batch (PostgreSQL's own statement).
    store
        .record_attempt(&attempt(&d, 1, T0, refused.clone()), &retry)
        .unwrap();
    let timed_out = AttemptOutcome {
        error: Some(AttemptError::TimedOut),
        ..refused.clone()
    };
    assert_eq!(
        store
            .record_attempts(
                &[(attempt(&d, 2, T0 + 1, timed_out.clone()), retry)],
                &EndpointHealth {
                    results: &[],
                    now: ts(T0),
                    rule: &Default::default(),
                }
            )
            .unwrap()
            .recorded,
        vec![true]
    );
    let errors = |sql: &str| raw_sql_texts(url, sql);
    assert_eq!(
        errors("SELECT last_error AS v FROM webhook_deliveries"),
        vec![Some("timed out".to_owned())]
    );
    assert_eq!(
        errors("SELECT error AS v FROM webhook_attempts ORDER BY number"),
        vec![
            Some("refused target".to_owned()),
            Some("timed out".to_owned())
        ]
    );
    // Rows from before the fixed words: read as their word, never as the detail.
    raw_sql(
        url,
        "UPDATE webhook_deliveries SET last_error = \
         'refused target: localhost resolves to a forbidden address (127.0.0.1)'; \
         UPDATE webhook_attempts SET error = 'connect error: Connection refused (os error 111)' \
         WHERE number = 1;",
    );
    let got = store.delivery(c, d.id).unwrap().unwrap();
    assert_eq!(got.last_error, Some(AttemptError::RefusedTarget));
    let history = store.attempts(c, d.id).unwrap();
    assert_eq!(
        history.iter().map(|a| a.outcome.error).collect::<Vec<_>>(),
        vec![
            Some(AttemptError::ConnectionFailed),
            Some(AttemptError::TimedOut)
        ]
    );
}

/// The acceptance test of the outbox: two "servers" (two stores on one database), each with
/// four dispatcher threads claiming batches of ten and recording a success for each, until
/// nothing is due. Every delivery is claimed and recorded exactly once.
fn concurrent_dispatchers_claim_each_delivery_once(store: &DieselStore, url: &str) {
    const TOTAL: usize = 1000;
    let c = company(store);
    let all: Vec<Delivery> = (0..TOTAL)
        .map(|i| delivery(c, T0, T0 - i64::try_from(i % 97).unwrap()))
        .collect();
    for chunk in all.chunks(100) {
        store.insert_deliveries(chunk).unwrap();
    }

    let servers = [store.clone(), open(url)];
    let claimed: Arc<Mutex<Vec<Uuid>>> = Arc::default();
    let threads: Vec<_> = servers
        .iter()
        .flat_map(|server| (0..4).map(move |_| server.clone()))
        .map(|server| {
            let claimed = Arc::clone(&claimed);
            thread::spawn(move || {
                let mut mine = 0usize;
                loop {
                    let batch = server
                        .claim_due_deliveries(ts(T0), ts(T0 + LEASE), 10)
                        .unwrap();
                    if batch.is_empty() {
                        return mine;
                    }
                    assert!(batch.len() <= 10);
                    for d in batch {
                        assert_eq!(d.next_attempt_at, Some(ts(T0 + LEASE)));
                        claimed.lock().unwrap().push(d.id);
                        server
                            .record_attempt(
                                &attempt(&d, d.attempts + 1, T0, success(1)),
                                &AfterAttempt {
                                    status: DeliveryStatus::Succeeded,
                                    next_attempt_at: None,
                                },
                            )
                            .unwrap();
                        mine += 1;
                    }
                }
            })
        })
        .collect();
    let per_thread: Vec<usize> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(per_thread.iter().sum::<usize>(), TOTAL);

    let claimed = claimed.lock().unwrap();
    let unique: HashSet<Uuid> = claimed.iter().copied().collect();
    assert_eq!(claimed.len(), TOTAL, "no delivery claimed twice");
    assert_eq!(
        unique,
        all.iter().map(|d| d.id).collect::<HashSet<_>>(),
        "no delivery lost"
    );
    let done = store
        .deliveries(
            c,
            &DeliveryFilter {
                status: Some(DeliveryStatus::Succeeded),
                limit: 2 * TOTAL,
                ..DeliveryFilter::default()
            },
        )
        .unwrap();
    assert_eq!(done.len(), TOTAL);
    assert!(done
        .iter()
        .all(|d| d.attempts == 1 && d.next_attempt_at.is_none()));
    for d in all.iter().step_by(37) {
        assert_eq!(store.attempts(c, d.id).unwrap().len(), 1);
    }
    assert_eq!(
        store
            .claim_due_deliveries(ts(T0 + 10 * LEASE), ts(T0 + 11 * LEASE), 10)
            .unwrap(),
        vec![]
    );
}
