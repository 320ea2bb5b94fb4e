//! Keyed token requests (`TokenRecoveryStore`): one claim per key even at once, the answer
//! written with the issuance (or nothing at all), read back with its tokens from one snapshot,
//! and erased, its record kept, by every change that ends its tokens' live window.

use std::sync::Barrier;
use std::thread;

use super::fixtures::*;
use super::oauth::{authorized, digest, family, token, Ports};
use crate::kernel::ids::{ApplicationId, CompanyId};
use crate::kernel::secret::SealedSecret;
use crate::oauth::ports::CompanyGrant;
use crate::oauth::recovery::{TokenAnswer, TokenClaim, TokenRecoveryStore, TokenRequestKey};
use crate::oauth::{Grant, StoredToken};

/// The ports these cases need.
pub trait RecoveryPorts: Ports + TokenRecoveryStore {}

impl<T: Ports + TokenRecoveryStore> RecoveryPorts for T {}

fn key(app: ApplicationId, request: &str) -> TokenRequestKey {
    TokenRequestKey {
        application_id: app,
        key_digest: digest().0,
        request_digest: request.into(),
    }
}

fn answer(
    key: &TokenRequestKey,
    claim: &str,
    g: &Grant,
    access: &StoredToken,
    refresh: &StoredToken,
) -> TokenAnswer {
    TokenAnswer {
        key: key.clone(),
        token: claim.into(),
        company_id: g.company_id,
        grant_id: g.id,
        family_id: access.family_id,
        access_digest: access.digest.clone(),
        refresh_digest: refresh.digest.clone(),
        sealed: SealedSecret {
            key_id: "k1".into(),
            sealed: random_alnum(40),
        },
        until: access.expires_at,
    }
}

fn claim<S: RecoveryPorts>(store: &S, k: &TokenRequestKey, token: &str, at: i64) -> TokenClaim {
    store
        .claim_token_request(k, token, ts(at), ts(at + 60_000))
        .unwrap()
}

/// A claim holds its key: the same request again is in flight until the lease ends (then
/// taken over), another request is refused, a released claim frees the key; of 8 claims at
/// once exactly one wins.
pub fn a_token_request_key_is_claimed_once<S: RecoveryPorts>(store: &S) {
    let (app, _, _, _) = authorized(store);
    let k = key(app.app.id, "r1");
    let mine = TokenClaim::Claimed { token: "a".into() };
    assert_eq!(claim(store, &k, "a", T0), mine);
    assert_eq!(claim(store, &k, "b", T0 + 1), TokenClaim::InFlight);
    let other = TokenRequestKey {
        request_digest: "r2".into(),
        ..k.clone()
    };
    assert_eq!(claim(store, &other, "b", T0 + 1), TokenClaim::Reused);
    // Another client's same key is another record.
    let (app2, _, _, _) = authorized(store);
    let theirs = TokenRequestKey {
        application_id: app2.app.id,
        ..k.clone()
    };
    assert_eq!(
        claim(store, &theirs, "c", T0),
        TokenClaim::Claimed { token: "c".into() }
    );
    // The lease ended: taken over; the old holder's release frees nothing.
    assert_eq!(
        claim(store, &k, "d", T0 + 60_000),
        TokenClaim::Claimed { token: "d".into() }
    );
    store.release_token_request(&k, "a").unwrap();
    assert_eq!(claim(store, &k, "e", T0 + 60_001), TokenClaim::InFlight);
    store.release_token_request(&k, "d").unwrap();
    assert_eq!(
        claim(store, &k, "f", T0 + 60_001),
        TokenClaim::Claimed { token: "f".into() }
    );

    let burst = key(app.app.id, "r3");
    let barrier = Barrier::new(8);
    let won = thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (barrier, burst) = (&barrier, &burst);
                s.spawn(move || {
                    barrier.wait();
                    claim(store, burst, &format!("t{i}"), T0)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|c| matches!(c, TokenClaim::Claimed { .. }))
            .count()
    });
    assert_eq!(won, 1);
}

/// The issuance answers its claim in its own transaction: read back with its tokens; a claim
/// that is not (or no longer) in flight under its token makes the issuance fail whole.
pub fn an_answer_is_written_with_its_tokens<S: RecoveryPorts>(store: &S) {
    let (app, g, f, _) = authorized(store);
    let k = key(app.app.id, "r1");
    assert_eq!(store.token_answer(app.app.id, &k.key_digest).unwrap(), None);
    claim(store, &k, "a", T0);
    let (a, r) = (token(&app, &f, T0, 900_000), token(&app, &f, T0, 9_000_000));
    // Not our claim: nothing is written.
    let stolen = answer(&k, "zz", &g, &a, &r);
    assert!(is_fault(store.insert_tokens(&a, &r, Some(&stolen))));
    assert_eq!(store.access_token(&a.digest).unwrap(), None);
    assert_eq!(store.refresh_token(&r.digest).unwrap(), None);
    let ours = answer(&k, "a", &g, &a, &r);
    store.insert_tokens(&a, &r, Some(&ours)).unwrap();
    let held = store
        .token_answer(app.app.id, &k.key_digest)
        .unwrap()
        .unwrap();
    assert_eq!(held.sealed.as_ref(), Some(&ours.sealed));
    assert_eq!(
        (held.access, held.refresh, held.family, held.grant.id),
        (a.clone(), r.clone(), f.clone(), g.id)
    );
    assert_eq!(
        (
            held.company_id,
            held.grant_id,
            held.until,
            held.request_digest
        ),
        (g.company_id, g.id, a.expires_at, "r1".into())
    );
    assert_eq!(claim(store, &k, "b", T0 + 1), TokenClaim::Answered);
    // Answered: a second answer of the same claim fails.
    let (a2, r2) = (token(&app, &f, T0, 900_000), token(&app, &f, T0, 9_000_000));
    let again = answer(&k, "a", &g, &a2, &r2);
    assert!(is_fault(store.insert_tokens(&a2, &r2, Some(&again))));

    // A rotation answers its claim too, and (a lost claim) fails whole without spending.
    let k2 = key(app.app.id, "r2");
    claim(store, &k2, "x", T0);
    let (a3, r3) = (token(&app, &f, T0, 900_000), token(&app, &f, T0, 9_000_000));
    let lost = answer(&k2, "y", &g, &a3, &r3);
    assert!(store
        .rotate_refresh(&r.digest, &a3, &r3, ts(T0 + 5), Some(&lost))
        .is_err());
    assert_eq!(
        store
            .refresh_token(&r.digest)
            .unwrap()
            .unwrap()
            .item
            .spent_at,
        None
    );
    let rotated = answer(&k2, "x", &g, &a3, &r3);
    assert!(store
        .rotate_refresh(&r.digest, &a3, &r3, ts(T0 + 5), Some(&rotated))
        .unwrap());
    let held = store
        .token_answer(app.app.id, &k2.key_digest)
        .unwrap()
        .unwrap();
    assert_eq!(held.sealed, Some(rotated.sealed));
    // The first answer's successor was used: erased, its record kept.
    let first = store
        .token_answer(app.app.id, &k.key_digest)
        .unwrap()
        .unwrap();
    assert_eq!(first.sealed, None);
    assert_eq!(first.refresh.spent_at, Some(ts(T0 + 5)));
    assert_eq!(claim(store, &k, "c", T0 + 6), TokenClaim::Answered);
}

/// Revoking the family, the access token, or the application's key erases the answers they
/// end, and no other; an explicit erasure once; pruning erases expired answers and forgets
/// old records.
pub fn answers_are_erased_when_their_tokens_end<S: RecoveryPorts>(store: &S) {
    let (app, g, f, _) = authorized(store);
    let f2 = family(&g, T0);
    let c2 = super::oauth::code(&app, &f2, T0);
    store.save_authorization(&g, &f2, &c2).unwrap();
    let issue = |fam, request: &str, ttl: i64| {
        let k = key(app.app.id, request);
        claim(store, &k, "t", T0);
        let (a, r) = (token(&app, fam, T0, ttl), token(&app, fam, T0, 9_000_000));
        store
            .insert_tokens(&a, &r, Some(&answer(&k, "t", &g, &a, &r)))
            .unwrap();
        (k, a)
    };
    let held = |k: &TokenRequestKey| {
        store
            .token_answer(app.app.id, &k.key_digest)
            .unwrap()
            .unwrap()
            .sealed
            .is_some()
    };
    let (in_f, _) = issue(&f, "r1", 900_000);
    let (in_f2, a2) = issue(&f2, "r2", 900_000);
    let (short, _) = issue(&f2, "r3", 1_000);
    let (kept, _) = issue(&f2, "r4", 900_000);
    assert!(store.revoke_family(f.id, ts(T0 + 1)).unwrap());
    assert!(!held(&in_f));
    assert!(held(&in_f2) && held(&short));
    assert!(store.revoke_access_token(&a2.digest, ts(T0 + 1)).unwrap());
    assert!(!held(&in_f2));
    assert!(held(&kept));
    // Expired answers go at the next prune; the records stay until they are old.
    assert_eq!(store.prune_token_requests(ts(T0 + 999), ts(T0)).unwrap(), 0);
    assert_eq!(
        store.prune_token_requests(ts(T0 + 1_001), ts(T0)).unwrap(),
        1
    );
    assert!(!held(&short) && held(&kept));
    assert!(store
        .erase_token_answer(app.app.id, &kept.key_digest)
        .unwrap());
    assert!(!store
        .erase_token_answer(app.app.id, &kept.key_digest)
        .unwrap());
    assert!(!held(&kept));
    assert_eq!(claim(store, &kept, "u", T0 + 2), TokenClaim::Answered);
    assert_eq!(
        store
            .prune_token_requests(ts(T0 + 2_000), ts(T0 + 1))
            .unwrap(),
        4
    );
    assert_eq!(
        store.token_answer(app.app.id, &kept.key_digest).unwrap(),
        None
    );
    assert_eq!(
        claim(store, &kept, "v", T0 + 3),
        TokenClaim::Claimed { token: "v".into() }
    );
}

/// A revoked grant (a native installation's disconnect) ends every token and family of it and
/// erases its answers; revoking it again changes nothing; a new approval clears the grant, not
/// its old families.
pub fn a_revoked_grant_ends_its_tokens_and_answers<S: RecoveryPorts>(store: &S) {
    let (app, g, f, _) = authorized(store);
    let k = key(app.app.id, "r1");
    claim(store, &k, "t", T0);
    let (a, r) = (token(&app, &f, T0, 900_000), token(&app, &f, T0, 9_000_000));
    store
        .insert_tokens(&a, &r, Some(&answer(&k, "t", &g, &a, &r)))
        .unwrap();
    assert!(store.revoke_grant(g.id, ts(T0 + 1)).unwrap());
    assert!(!store.revoke_grant(g.id, ts(T0 + 2)).unwrap());
    let held = store.access_token(&a.digest).unwrap().unwrap();
    assert_eq!(held.grant.revoked_at, Some(ts(T0 + 1)));
    let held = store.refresh_token(&r.digest).unwrap().unwrap();
    assert_eq!(held.grant.revoked_at, Some(ts(T0 + 1)));
    let answer = store
        .token_answer(app.app.id, &k.key_digest)
        .unwrap()
        .unwrap();
    assert_eq!(answer.sealed, None);
    assert_eq!(held.family.revoked_at, Some(ts(T0 + 1)));
    let f2 = family(&g, T0 + 3);
    let c2 = super::oauth::code(&app, &f2, T0 + 3);
    assert_eq!(
        store.save_authorization(&g, &f2, &c2).unwrap().revoked_at,
        None
    );
    // The new approval brings none of the old family's tokens back.
    let held = store.refresh_token(&r.digest).unwrap().unwrap();
    assert_eq!(held.grant.revoked_at, None);
    assert_eq!(held.family.revoked_at, Some(ts(T0 + 1)));
}

/// A security reset (`revoke_company_grants`): every grant of the company and every family of
/// each (so a later approval brings no old token back) end in one call, their answers are
/// erased, a native installation's grant is said to be one; another company's grant is
/// untouched; a second call revokes nothing more.
pub fn a_company_reset_ends_every_grant_family_and_answer<S: RecoveryPorts>(store: &S) {
    let (app, g, f, _) = authorized(store);
    let company = g.company_id;
    let mut native = super::oauth::application(true);
    native.app.template = Some("shop".into());
    store.insert_application(&native).unwrap();
    let ng = super::oauth::grant(company, &native, T0);
    let nf = family(&ng, T0);
    let ng = store
        .save_authorization(&ng, &nf, &super::oauth::code(&native, &nf, T0))
        .unwrap();
    let k = key(native.app.id, "r1");
    claim(store, &k, "t", T0);
    let (a, r) = (
        token(&native, &nf, T0, 900_000),
        token(&native, &nf, T0, 9_000_000),
    );
    store
        .insert_tokens(&a, &r, Some(&answer(&k, "t", &ng, &a, &r)))
        .unwrap();
    // Another company's grant of the same application.
    let (_, other, of, _) = authorized(store);
    let (oa, or) = (
        token(&app, &of, T0, 900_000),
        token(&app, &of, T0, 9_000_000),
    );
    store.insert_tokens(&oa, &or, None).unwrap();

    let mut got = store.revoke_company_grants(company, ts(T0 + 7)).unwrap();
    got.sort_by_key(|x| x.id.0);
    let mut want = vec![
        CompanyGrant {
            id: g.id,
            revoked_now: true,
            native: false,
        },
        CompanyGrant {
            id: ng.id,
            revoked_now: true,
            native: true,
        },
    ];
    want.sort_by_key(|x| x.id.0);
    assert_eq!(got, want);
    for t in [&a, &r] {
        let held = store
            .access_token(&t.digest)
            .unwrap()
            .or(store.refresh_token(&t.digest).unwrap())
            .unwrap();
        assert_eq!(held.grant.revoked_at, Some(ts(T0 + 7)));
        assert_eq!(held.family.revoked_at, Some(ts(T0 + 7)));
    }
    let held = store.refresh_token(&r.digest).unwrap().unwrap();
    assert_eq!(held.family.id, nf.id);
    assert_eq!(
        store
            .token_answer(native.app.id, &k.key_digest)
            .unwrap()
            .unwrap()
            .sealed,
        None
    );
    // A later approval clears the grant, not its old families.
    let f2 = family(&g, T0 + 9);
    let again = store
        .save_authorization(&g, &f2, &super::oauth::code(&app, &f2, T0 + 9))
        .unwrap();
    assert_eq!(again.revoked_at, None);
    let _ = f;
    let held = store.refresh_token(&r.digest).unwrap().unwrap();
    assert!(held.family.revoked_at.is_some());
    // The other company's tokens live on.
    let held = store.access_token(&oa.digest).unwrap().unwrap();
    assert_eq!(held.grant.id, other.id);
    assert_eq!(
        (held.grant.revoked_at, held.family.revoked_at),
        (None, None)
    );
    // Again: the approved-again grant is revoked (anew), the native one was already.
    let got = store.revoke_company_grants(company, ts(T0 + 11)).unwrap();
    assert_eq!(got.iter().filter(|x| x.revoked_now).count(), 1);
    assert!(got
        .iter()
        .any(|x| x.id == ng.id && !x.revoked_now && x.native));
    assert_eq!(
        store
            .revoke_company_grants(CompanyId(uuid::Uuid::now_v7()), ts(T0 + 12))
            .unwrap(),
        vec![]
    );
}
