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
