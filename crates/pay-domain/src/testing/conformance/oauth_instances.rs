//! Two instances of a store on one database (two server processes): a change made through one
//! to a DPoP-bound token, its family or its grant is what the other's next token lookup sees,
//! even when that other instance served the token before (and may keep a copy of it).

use super::fixtures::*;
use super::oauth::{authorized, Ports};
use crate::kernel::secret::SecretDigest;
use crate::oauth::ports::JtiRecord;
use crate::oauth::StoredToken;

const JKT: &str = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";
const HTU: &str = "https://pay.example/api/partner/v1/pay/payment-links";

fn fresh() -> String {
    super::oauth::digest().0
}

/// A bound access token (and its refresh token) of a new company's grant, through `store`.
fn bound_token<S: Ports>(store: &S) -> StoredToken {
    let (app, _, f, _) = authorized(store);
    let access = StoredToken {
        jkt: Some(JKT.into()),
        ..super::oauth::token(&app, &f, T0, 900_000)
    };
    store
        .insert_tokens(
            &access,
            &super::oauth::token(&app, &f, T0, 86_400_000),
            None,
        )
        .unwrap();
    access
}

/// The lookup with a fresh proof: the token as it is read, and whether the `jti` was new.
fn lookup<S: Ports>(
    store: &S,
    digest: &SecretDigest,
) -> (Option<crate::oauth::Held<StoredToken>>, Option<bool>) {
    let j = fresh();
    let proof = JtiRecord {
        jkt: JKT,
        htu: HTU,
        jti_digest: &j,
        keep_until: ts(T0 + 300_000),
    };
    store.access_token_recording_jti(digest, &proof).unwrap()
}

/// `second` serves a token twice (any copy it keeps is warm), then `first` revokes the access
/// token, the family or the grant: `second`'s very next lookup reads it revoked, and its
/// record of the proof still counts once. A token `first` never touched stays live on `second`.
pub fn every_instance_sees_a_revocation_at_once<S: Ports>(first: &S, second: &S) {
    let untouched = bound_token(first);
    for change in 0..3 {
        let access = bound_token(first);
        for _ in 0..2 {
            let (held, recorded) = lookup(second, &access.digest);
            let held = held.unwrap();
            assert_eq!(held.item, access);
            assert!(held.item.revoked_at.is_none() && held.family.revoked_at.is_none());
            assert!(held.grant.revoked_at.is_none());
            assert_eq!(recorded, Some(true));
        }
        assert_eq!(lookup(second, &untouched.digest).1, Some(true));
        let at = ts(T0 + 1_000);
        match change {
            0 => assert!(first.revoke_access_token(&access.digest, at).unwrap()),
            1 => assert!(first.revoke_family(access.family_id, at).unwrap()),
            _ => assert!(first.revoke_grant(access.grant_id, at).unwrap()),
        }
        let (held, recorded) = lookup(second, &access.digest);
        let held = held.unwrap();
        let revoked = match change {
            0 => held.item.revoked_at,
            1 => held.family.revoked_at,
            _ => held.grant.revoked_at,
        };
        assert_eq!(
            revoked,
            Some(at),
            "change {change} seen by the other instance"
        );
        assert_eq!(recorded, Some(true));
        let (held, _) = lookup(second, &untouched.digest);
        assert!(held.unwrap().item.revoked_at.is_none());
    }
}

/// Many proofs of one bound token at once over both instances (each keeping a copy of the
/// token, so every record takes the hot path, where a store may write records in batches):
/// 8 proofs sent 4 times each (spread over both instances) pass exactly once each, and 16
/// proofs sent once all pass; a proof sent again afterwards is a replay on either instance.
pub fn concurrent_proofs_pass_once_over_both_instances<S: Ports>(first: &S, second: &S) {
    let access = bound_token(first);
    for store in [first, second] {
        assert_eq!(lookup(store, &access.digest).1, Some(true));
    }
    let repeated: Vec<String> = (0..8).map(|_| fresh()).collect();
    let single: Vec<String> = (0..16).map(|_| fresh()).collect();
    let sends: Vec<&str> = repeated
        .iter()
        .flat_map(|j| [j.as_str(); 4])
        .chain(single.iter().map(String::as_str))
        .collect();
    let barrier = std::sync::Barrier::new(sends.len());
    let passed: Vec<&str> = std::thread::scope(|s| {
        let handles: Vec<_> = sends
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let store = if i % 2 == 0 { first } else { second };
                let (barrier, access) = (&barrier, &access);
                s.spawn(move || {
                    let proof = JtiRecord {
                        jkt: JKT,
                        htu: HTU,
                        jti_digest: j,
                        keep_until: ts(T0 + 300_000),
                    };
                    barrier.wait();
                    let (held, recorded) = store
                        .access_token_recording_jti(&access.digest, &proof)
                        .unwrap();
                    assert!(held.is_some());
                    (recorded == Some(true)).then_some(*j)
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect()
    });
    let mut passed = passed;
    passed.sort_unstable();
    let mut expected: Vec<&str> = repeated.iter().chain(&single).map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(passed, expected, "each proof passes exactly once");
    for (store, j) in [(first, &repeated[0]), (second, &single[0])] {
        let proof = JtiRecord {
            jkt: JKT,
            htu: HTU,
            jti_digest: j,
            keep_until: ts(T0 + 300_000),
        };
        let (_, recorded) = store
            .access_token_recording_jti(&access.digest, &proof)
            .unwrap();
        assert_eq!(recorded, Some(false));
    }
}

/// Polls `f` to its end on this thread (a store's answer unparks it): the tests' executor.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

fn record(j: &str) -> JtiRecord<'_> {
    JtiRecord {
        jkt: JKT,
        htu: HTU,
        jti_digest: j,
        keep_until: ts(T0 + 300_000),
    }
}

/// Records started without waiting (`start_recording_jti`), as async requests do, over both
/// instances, each keeping a copy of the token: every record of one batch of calls is handed
/// over before any is awaited; 8 proofs started 4 times each and 16 started once pass exactly
/// once each; a proof started again while its first record is in
/// flight is a replay, and of one proof started on both instances at once one passes; after a revocation through `first`, `second`'s
/// copy is stale: the record still counts once, and the token is read again revoked. A store
/// without that path answers `None` for every call and records nothing.
pub fn records_in_flight_pass_once_over_both_instances<S: Ports>(first: &S, second: &S) {
    use crate::oauth::ports::HeldRecord;
    let access = bound_token(first);
    for store in [first, second] {
        assert_eq!(lookup(store, &access.digest).1, Some(true));
    }
    let repeated: Vec<String> = (0..8).map(|_| fresh()).collect();
    let single: Vec<String> = (0..16).map(|_| fresh()).collect();
    let sends: Vec<&str> = repeated
        .iter()
        .flat_map(|j| [j.as_str(); 4])
        .chain(single.iter().map(String::as_str))
        .collect();
    let started: Vec<_> = sends
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let store = if i % 2 == 0 { first } else { second };
            store.start_recording_jti(&access.digest, &record(j))
        })
        .collect();
    if started.iter().all(Option::is_none) {
        // No such path: nothing was recorded.
        for j in repeated.iter().chain(&single) {
            assert_eq!(lookup_jti(first, &access.digest, j), Some(true));
        }
        return;
    }
    let mut passed: Vec<&str> = Vec::new();
    for (i, pending) in started.into_iter().enumerate() {
        let pending = pending.expect("every call on a warm copy starts a record");
        match block_on(pending).unwrap() {
            HeldRecord::Current(held, new) => {
                assert_eq!(held.item, access);
                if new {
                    passed.push(sends[i]);
                }
            }
            HeldRecord::Stale(_) => panic!("nothing changed: the copy stands"),
        }
    }
    passed.sort_unstable();
    let mut expected: Vec<&str> = repeated.iter().chain(&single).map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(passed, expected, "each proof passes exactly once");

    // One proof started twice on one instance and once on the other before any is awaited:
    // the later one on the same instance is a replay, and one of the three passes.
    let j = fresh();
    let one = first
        .start_recording_jti(&access.digest, &record(&j))
        .unwrap();
    let two = first
        .start_recording_jti(&access.digest, &record(&j))
        .unwrap();
    let three = second
        .start_recording_jti(&access.digest, &record(&j))
        .unwrap();
    let news: Vec<bool> = [one, two, three]
        .into_iter()
        .map(|p| matches!(block_on(p).unwrap(), HeldRecord::Current(_, true)))
        .collect();
    assert!(!news[1], "a replay while the first is in flight");
    assert_eq!(news.iter().filter(|n| **n).count(), 1, "{news:?}");

    assert!(first
        .revoke_access_token(&access.digest, ts(T0 + 1_000))
        .unwrap());
    let j = fresh();
    let stale = second
        .start_recording_jti(&access.digest, &record(&j))
        .unwrap();
    assert!(matches!(block_on(stale).unwrap(), HeldRecord::Stale(true)));
    let (held, recorded) = lookup(second, &access.digest);
    assert!(held.unwrap().item.revoked_at.is_some());
    assert_eq!(recorded, Some(true));
    assert_eq!(lookup_jti(second, &access.digest, &j), Some(false));
}

/// The lookup recording the proof `j`: whether it was new.
fn lookup_jti<S: Ports>(store: &S, digest: &SecretDigest, j: &str) -> Option<bool> {
    store
        .access_token_recording_jti(digest, &record(j))
        .unwrap()
        .1
}
