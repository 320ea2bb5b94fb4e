//! Endpoints: each one's share of a claim, and the circuit that pauses one failing for an hour,
//! then lets one probe through.

use super::values::*;
use super::*;

/// `n` deliveries of company `c` to `url`, due at `due`, created in order.
fn to(c: CompanyId, url: &str, n: usize, due: i64) -> Vec<Delivery> {
    (0..n)
        .map(|i| Delivery {
            url: url.to_owned(),
            ..delivery(c, T0 + i as i64, due)
        })
        .collect()
}

fn endpoint(c: CompanyId, url: &str) -> Endpoint {
    Endpoint {
        company_id: c,
        url: url.to_owned(),
    }
}

/// Records `d`'s next attempt with `outcome`, and the endpoint's verdict, at `now` (real time).
fn record<S: Ports>(store: &S, d: &Delivery, outcome: AttemptOutcome, now: i64) -> RoundRecorded {
    let current = store.delivery(d.company_id, d.id).unwrap().unwrap();
    let ok = outcome.is_success();
    let after = AfterAttempt {
        status: if ok {
            DeliveryStatus::Succeeded
        } else {
            DeliveryStatus::Retrying
        },
        next_attempt_at: (!ok).then(|| ts(now)),
    };
    let results = [EndpointResult {
        endpoint: endpoint(d.company_id, &d.url),
        ok,
    }];
    store
        .record_attempts(
            &[(attempt(&current, current.attempts + 1, now, outcome), after)],
            &EndpointHealth {
                results: &results,
                now: ts(now),
                rule: &RULE,
            },
        )
        .unwrap()
}

fn failure() -> AttemptOutcome {
    AttemptOutcome {
        status: Some(503),
        ..success(2)
    }
}

pub fn claims_keep_each_endpoint_within_its_share<S: Ports>(store: &S) {
    let a = company(store);
    let b = company(store);
    let hanging = "https://hangs.example/hook";
    let share = ENDPOINT_HELD;
    assert_eq!(share, 64);
    // One endpoint's 80 deliveries are due before another's 5 and before a third's, which is
    // the same URL as the first but another company's.
    let slow = to(a, hanging, 80, T0);
    let other = to(a, "https://fine.example/hook", 5, T0 + 1);
    let same_url = to(b, hanging, 3, T0 + 2);
    store.insert_deliveries(&slow).unwrap();
    store.insert_deliveries(&other).unwrap();
    store.insert_deliveries(&same_url).unwrap();
    let now = T0 + 10;
    let ids = |ds: &[Delivery]| ds.iter().map(|d| d.id).collect::<Vec<_>>();
    let claim = |limit: usize, held: usize| {
        store
            .claim_due_deliveries_beside(
                ts(now),
                ts(now + LEASE),
                limit,
                &[(endpoint(a, hanging), held)],
            )
            .unwrap()
    };
    // A claim of 40 holding nothing takes the slow endpoint's oldest.
    assert_eq!(ids(&claim(40, 0)), ids(&slow[..40]));
    // Holding those 40, the next takes 24 more of it (64 at once), then reaches the others
    // behind its queue.
    let mut expected = ids(&slow[40..64]);
    expected.extend(ids(&other));
    expected.extend(ids(&same_url));
    assert_eq!(ids(&claim(100, 40)), expected);
    // Holding 64: nothing more of it.
    assert!(claim(100, 64).is_empty());
    // One sent: one place.
    assert_eq!(ids(&claim(100, 63)), ids(&slow[64..65]));
    // Another dispatcher (holding nothing) takes what is not leased, 64 at most.
    assert_eq!(ids(&claim(100, 0)), ids(&slow[65..80]));
    // Leases that ran out (a dispatcher died) make them claimable again, 64 at most.
    let later = store
        .claim_due_deliveries(ts(now + LEASE), ts(now + 2 * LEASE), 100)
        .unwrap();
    let of_slow = later
        .iter()
        .filter(|d| d.url == hanging && d.company_id == a)
        .count();
    assert_eq!(of_slow, share);
    assert_eq!(later.len(), share + other.len() + same_url.len());
}

pub fn a_failing_endpoint_is_paused_then_probed<S: Ports>(store: &S) {
    let a = company(store);
    let url = "https://down.example/hook";
    let down = to(a, url, 80, T0);
    let fine = to(a, "https://up.example/hook", 1, T0 + 5);
    store.insert_deliveries(&down).unwrap();
    store.insert_deliveries(&fine).unwrap();
    let minute = 60_000;
    // Failing for 59 minutes, 12 failures: not paused.
    for (i, d) in down[..12].iter().enumerate() {
        let at = T0 + (i as i64) * 5 * minute;
        assert!(record(store, d, failure(), at.min(T0 + 59 * minute))
            .opened
            .is_empty());
    }
    let c = &store.endpoint_circuits(a).unwrap()[0];
    assert_eq!((c.failures, c.pauses, c.paused_until), (12, 0, None));
    assert_eq!(c.state(ts(T0 + 59 * minute)), CircuitState::Failing);
    // The failure at an hour opens it: recorded, and returned once.
    let hour = T0 + 60 * minute;
    let opened = record(store, &down[12], failure(), hour).opened;
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0].endpoint, endpoint(a, url));
    assert_eq!(opened[0].paused_until, Some(ts(hour + 5 * minute)));
    assert_eq!(store.endpoint_circuits(a).unwrap(), opened);
    // The metrics' read counts it open while paused, not once the pause ended.
    if let Some(g) = store.outbox_gauges(ts(hour + 1)).unwrap() {
        assert_eq!(g.circuits_open, 1);
        let ended = store.outbox_gauges(ts(hour + 5 * minute)).unwrap().unwrap();
        assert_eq!(ended.circuits_open, 0);
    }
    // Paused: none of its deliveries is claimed, even the due ones; others are.
    let claimed = store
        .claim_due_deliveries(ts(hour + 1), ts(hour + 1 + LEASE), 100)
        .unwrap();
    assert_eq!(
        claimed.iter().map(|d| d.id).collect::<Vec<_>>(),
        vec![fine[0].id]
    );
    assert!(record(store, &fine[0], success(1), hour + 1)
        .opened
        .is_empty());
    // The pause ends: one probe at a time.
    let probe_at = hour + 5 * minute;
    let probe = store
        .claim_due_deliveries(ts(probe_at), ts(probe_at + LEASE), 100)
        .unwrap();
    assert_eq!(probe.len(), 1);
    assert!(store
        .claim_due_deliveries(ts(probe_at), ts(probe_at + LEASE), 100)
        .unwrap()
        .is_empty());
    // It fails: paused again, twice as long.
    let again = record(store, &probe[0], failure(), probe_at + 1).opened;
    assert_eq!(again[0].pauses, 2);
    assert_eq!(again[0].paused_until, Some(ts(probe_at + 1 + 10 * minute)));
    assert!(store
        .claim_due_deliveries(ts(probe_at + 2), ts(probe_at + 2 + LEASE), 100)
        .unwrap()
        .is_empty());
    // The next probe succeeds: closed, the whole share is back.
    let next_at = probe_at + 1 + 10 * minute;
    let probe = store
        .claim_due_deliveries(ts(next_at), ts(next_at + LEASE), 100)
        .unwrap();
    assert_eq!(probe.len(), 1);
    assert!(record(store, &probe[0], success(1), next_at)
        .opened
        .is_empty());
    assert!(store.endpoint_circuits(a).unwrap().is_empty());
    let resumed = store
        .claim_due_deliveries(ts(next_at), ts(next_at + LEASE), 100)
        .unwrap();
    assert_eq!(resumed.len(), ENDPOINT_HELD);
    // Another company's circuits are its own.
    let b = company(store);
    assert!(store.endpoint_circuits(b).unwrap().is_empty());
}
