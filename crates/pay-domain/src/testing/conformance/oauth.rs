//! OAuth: applications by client id, one grant per company and application, one-time code
//! claims, refresh rotation with exactly one winner, family revocation that also covers later
//! tokens, the DPoP `jti` unique key (two at once included), and pruning by expiry.

use std::sync::Barrier;
use std::thread;

use time::Duration;
use uuid::Uuid;

use super::fixtures::*;
use crate::customers::ports::GrantScopes;
use crate::kernel::ids::*;
use crate::kernel::secret::SecretDigest;
use crate::oauth::ports::{DpopReplayStore, JtiRecord, OAuthStore};
use crate::oauth::{
    Application, ClientType, Family, Grant, StoredApplication, StoredCode, StoredToken,
};
use crate::tenancy::ports::TenancyStore;
use crate::tenancy::Scope;

/// The ports these cases need.
pub trait Ports: TenancyStore + OAuthStore + DpopReplayStore + GrantScopes + Sync {}

impl<T: TenancyStore + OAuthStore + DpopReplayStore + GrantScopes + Sync> Ports for T {}

pub(super) fn digest() -> SecretDigest {
    SecretDigest(random_alnum(64).to_lowercase())
}

/// A confidential application, not yet stored.
pub fn application(public: bool) -> StoredApplication {
    StoredApplication {
        app: Application {
            id: ApplicationId(Uuid::now_v7()),
            client_id: ClientId::from_random(&random_alnum(ClientId::RANDOM_LEN)).unwrap(),
            name: "Shop connector é".into(),
            redirect_uris: vec![
                "https://shop.example/cb".into(),
                "http://127.0.0.1:8123/cb?x=1".into(),
            ],
            scopes: vec![Scope::CompanyRead, Scope::PaymentLinksRead],
            client_type: if public {
                ClientType::Public
            } else {
                ClientType::Confidential
            },
            dpop_bound: public,
            refresh_ttl: Duration::days(30),
            template: None,
            key: None,
            created_at: ts(T0),
        },
        secret_digest: (!public).then(digest),
    }
}

pub(super) fn grant(company: CompanyId, app: &StoredApplication, at: i64) -> Grant {
    Grant {
        id: GrantId(Uuid::now_v7()),
        company_id: company,
        application_id: app.app.id,
        user_id: UserId(Uuid::now_v7()),
        scopes: vec![Scope::CompanyRead],
        bound_jkt: None,
        created_at: ts(at),
        updated_at: ts(at),
        revoked_at: None,
    }
}

pub(super) fn family(grant: &Grant, at: i64) -> Family {
    Family {
        id: FamilyId(Uuid::now_v7()),
        grant_id: grant.id,
        created_at: ts(at),
        revoked_at: None,
    }
}

pub(super) fn code(app: &StoredApplication, family: &Family, at: i64) -> StoredCode {
    StoredCode {
        digest: digest(),
        family_id: family.id,
        application_id: app.app.id,
        redirect_uri: "https://shop.example/cb".into(),
        scopes: vec![Scope::CompanyRead, Scope::PaymentLinksRead],
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
        dpop_jkt: Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I".into()),
        created_at: ts(at),
        expires_at: ts(at + 60_000),
        used_at: None,
    }
}

pub(super) fn token(app: &StoredApplication, family: &Family, at: i64, ttl_ms: i64) -> StoredToken {
    StoredToken {
        digest: digest(),
        family_id: family.id,
        grant_id: family.grant_id,
        application_id: app.app.id,
        scopes: vec![Scope::CompanyRead],
        jkt: None,
        created_at: ts(at),
        expires_at: ts(at + ttl_ms),
        spent_at: None,
        revoked_at: None,
    }
}

/// A stored application, grant, family and code of a new company.
pub(super) fn authorized<S: Ports>(store: &S) -> (StoredApplication, Grant, Family, StoredCode) {
    let company = company(store);
    let app = application(false);
    store.insert_application(&app).unwrap();
    let g = grant(company, &app, T0);
    let f = family(&g, T0);
    let c = code(&app, &f, T0);
    let g = store.save_authorization(&g, &f, &c).unwrap();
    (app, g, f, c)
}

/// What a grant approves now, for the portal URLs it minted: its scopes while it is in force,
/// nothing once revoked, for another company or an unknown grant.
pub fn approved_scopes_of_a_grant_in_force_only<S: Ports>(store: &S) {
    let (_, g, _, _) = authorized(store);
    assert_eq!(
        store.approved_scopes(g.company_id, g.id.0).unwrap(),
        Some(g.scopes.clone())
    );
    let other = company(store);
    assert_eq!(store.approved_scopes(other, g.id.0).unwrap(), None);
    assert_eq!(
        store.approved_scopes(g.company_id, Uuid::now_v7()).unwrap(),
        None
    );
    let app = application(false);
    store.insert_application(&app).unwrap();
    let mut revoked = grant(g.company_id, &app, T0);
    revoked.revoked_at = Some(ts(T0 + 1));
    let f = family(&revoked, T0);
    let revoked = store
        .save_authorization(&revoked, &f, &code(&app, &f, T0))
        .unwrap();
    assert!(revoked.revoked_at.is_some());
    assert_eq!(
        store.approved_scopes(g.company_id, revoked.id.0).unwrap(),
        None
    );
}

pub fn applications_round_trip_by_client_id<S: Ports>(store: &S) {
    let confidential = application(false);
    let public = application(true);
    store.insert_application(&confidential).unwrap();
    store.insert_application(&public).unwrap();
    for a in [&confidential, &public] {
        assert_eq!(
            store.application(&a.app.client_id).unwrap().as_ref(),
            Some(a)
        );
    }
    let unknown = ClientId::from_random(&random_alnum(ClientId::RANDOM_LEN)).unwrap();
    assert_eq!(store.application(&unknown).unwrap(), None);
    let mut clash = application(false);
    clash.app.client_id = public.app.client_id.clone();
    assert!(is_fault(store.insert_application(&clash)));
    assert_eq!(
        store.application(&public.app.client_id).unwrap(),
        Some(public)
    );
}

pub fn one_grant_per_company_and_application<S: Ports>(store: &S) {
    let (app, first, f1, c1) = authorized(store);
    let held = store.code(&c1.digest).unwrap().unwrap();
    assert_eq!(
        (held.item, held.grant.clone(), held.family),
        (c1, first.clone(), f1)
    );
    // A second approval keeps the grant's id and creation, takes the new user and scopes,
    // and revives a revoked grant; its family belongs to the grant in force.
    let mut again = grant(first.company_id, &app, T0 + 5000);
    again.scopes = vec![Scope::CompanyRead, Scope::PaymentLinksRead];
    let f2 = family(&again, T0 + 5000);
    let c2 = code(&app, &f2, T0 + 5000);
    let in_force = store.save_authorization(&again, &f2, &c2).unwrap();
    let expect = Grant {
        id: first.id,
        created_at: first.created_at,
        ..again.clone()
    };
    assert_eq!(in_force, expect);
    assert_eq!(
        store.grant(first.company_id, app.app.id).unwrap(),
        Some(expect.clone())
    );
    let held = store.code(&c2.digest).unwrap().unwrap();
    assert_eq!(held.family.grant_id, first.id);
    assert_eq!(held.grant, expect);
    // Another company gets its own grant.
    let other = company(store);
    let g = grant(other, &app, T0);
    let f = family(&g, T0);
    let mine = store
        .save_authorization(&g, &f, &code(&app, &f, T0))
        .unwrap();
    assert_ne!(mine.id, first.id);
    assert_eq!(store.grant(other, app.app.id).unwrap(), Some(mine));
    // A code digest is unique: the whole approval is refused.
    let f3 = family(&again, T0);
    let mut dup = code(&app, &f3, T0);
    dup.digest = c2.digest.clone();
    assert!(is_fault(store.save_authorization(&again, &f3, &dup)));
    assert_eq!(
        store.grant(first.company_id, app.app.id).unwrap(),
        Some(expect)
    );
    assert_eq!(store.code(&digest()).unwrap(), None);
}

/// Many approvals of one company and application at once: one grant in the end.
pub fn concurrent_approvals_leave_one_grant<S: Ports>(store: &S) {
    let company = company(store);
    let app = application(false);
    store.insert_application(&app).unwrap();
    let barrier = Barrier::new(4);
    let ids: Vec<Option<GrantId>> = thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let g = grant(company, &app, T0);
                    let f = family(&g, T0);
                    let c = code(&app, &f, T0);
                    barrier.wait();
                    store.save_authorization(&g, &f, &c).ok().map(|g| g.id)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let stored = store.grant(company, app.app.id).unwrap().unwrap();
    assert!(ids.iter().any(Option::is_some));
    for id in ids.into_iter().flatten() {
        assert_eq!(id, stored.id);
    }
}

/// 8 redemptions of one code at once: exactly one claims it; later claims fail.
pub fn code_claim_is_one_time_under_concurrency<S: Ports>(store: &S) {
    let (_, _, _, c) = authorized(store);
    let barrier = Barrier::new(8);
    let wins = thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    store.claim_code(&c.digest, ts(T0 + 1000)).unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|won| *won)
            .count()
    });
    assert_eq!(wins, 1);
    assert!(!store.claim_code(&c.digest, ts(T0 + 2000)).unwrap());
    assert!(!store.claim_code(&digest(), ts(T0)).unwrap());
    let held = store.code(&c.digest).unwrap().unwrap();
    assert_eq!(held.item.used_at, Some(ts(T0 + 1000)));
}

pub fn tokens_insert_together_and_read_back<S: Ports>(store: &S) {
    let (app, g, f, _) = authorized(store);
    let access = StoredToken {
        jkt: Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I".into()),
        ..token(&app, &f, T0, 900_000)
    };
    let refresh = token(&app, &f, T0, 86_400_000);
    store.insert_tokens(&access, &refresh, None).unwrap();
    let held = store.access_token(&access.digest).unwrap().unwrap();
    assert_eq!(
        (held.item, held.grant, held.family),
        (access.clone(), g.clone(), f.clone())
    );
    let held = store.refresh_token(&refresh.digest).unwrap().unwrap();
    assert_eq!(held.item, refresh);
    // The kinds are apart: an access digest is no refresh token.
    assert_eq!(store.refresh_token(&access.digest).unwrap(), None);
    assert_eq!(store.access_token(&refresh.digest).unwrap(), None);
    // Both or neither: a clashing refresh digest leaves no new access token behind.
    let lone = token(&app, &f, T0, 900_000);
    assert!(is_fault(store.insert_tokens(&lone, &refresh, None)));
    assert_eq!(store.access_token(&lone.digest).unwrap(), None);
    // Revoking one access token.
    assert!(store
        .revoke_access_token(&access.digest, ts(T0 + 1))
        .unwrap());
    assert!(!store
        .revoke_access_token(&access.digest, ts(T0 + 2))
        .unwrap());
    assert!(!store.revoke_access_token(&digest(), ts(T0 + 2)).unwrap());
    let held = store.access_token(&access.digest).unwrap().unwrap();
    assert_eq!(held.item.revoked_at, Some(ts(T0 + 1)));
}

/// 8 rotations of one refresh token at once: exactly one wins, and only the winner's new
/// tokens exist; the old token is spent once.
pub fn refresh_rotation_has_exactly_one_winner<S: Ports>(store: &S) {
    let (app, _, f, _) = authorized(store);
    let old = token(&app, &f, T0, 86_400_000);
    store
        .insert_tokens(&token(&app, &f, T0, 900_000), &old, None)
        .unwrap();
    let news: Vec<(StoredToken, StoredToken)> = (0..8)
        .map(|_| {
            (
                token(&app, &f, T0 + 10, 900_000),
                token(&app, &f, T0 + 10, 86_400_000),
            )
        })
        .collect();
    let barrier = Barrier::new(news.len());
    let won: Vec<bool> = thread::scope(|s| {
        let handles: Vec<_> = news
            .iter()
            .map(|(a, r)| {
                let (barrier, old) = (&barrier, &old);
                s.spawn(move || {
                    barrier.wait();
                    store
                        .rotate_refresh(&old.digest, a, r, ts(T0 + 10), None)
                        .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(won.iter().filter(|w| **w).count(), 1);
    for ((a, r), won) in news.iter().zip(&won) {
        assert_eq!(store.access_token(&a.digest).unwrap().is_some(), *won);
        assert_eq!(store.refresh_token(&r.digest).unwrap().is_some(), *won);
    }
    let spent = store.refresh_token(&old.digest).unwrap().unwrap();
    assert_eq!(spent.item.spent_at, Some(ts(T0 + 10)));
    // A spent, revoked or unknown token never rotates.
    let (a, r) = (token(&app, &f, T0, 1), token(&app, &f, T0, 1));
    assert!(!store
        .rotate_refresh(&old.digest, &a, &r, ts(T0 + 20), None)
        .unwrap());
    assert!(!store
        .rotate_refresh(&digest(), &a, &r, ts(T0 + 20), None)
        .unwrap());
    assert_eq!(store.access_token(&a.digest).unwrap(), None);
}

/// Revoking a family shows on every code and token of it, also on tokens written later (a
/// redemption that lost to a replay), and on no other family.
pub fn family_revocation_covers_every_token_of_the_family<S: Ports>(store: &S) {
    let (app, g, f, c) = authorized(store);
    let f2 = family(&g, T0);
    let c2 = code(&app, &f2, T0);
    store.save_authorization(&g, &f2, &c2).unwrap();
    let (a1, r1) = (token(&app, &f, T0, 900_000), token(&app, &f, T0, 9_000_000));
    store.insert_tokens(&a1, &r1, None).unwrap();
    assert!(store.revoke_family(f.id, ts(T0 + 5)).unwrap());
    assert!(!store.revoke_family(f.id, ts(T0 + 6)).unwrap());
    assert!(!store
        .revoke_family(FamilyId(Uuid::now_v7()), ts(T0 + 6))
        .unwrap());
    let (a2, r2) = (
        token(&app, &f, T0 + 7, 900_000),
        token(&app, &f, T0 + 7, 9_000_000),
    );
    store.insert_tokens(&a2, &r2, None).unwrap();
    for d in [&a1.digest, &a2.digest] {
        let held = store.access_token(d).unwrap().unwrap();
        assert_eq!(held.family.revoked_at, Some(ts(T0 + 5)));
    }
    for d in [&r1.digest, &r2.digest] {
        let held = store.refresh_token(d).unwrap().unwrap();
        assert_eq!(held.family.revoked_at, Some(ts(T0 + 5)));
    }
    assert_eq!(
        store.code(&c.digest).unwrap().unwrap().family.revoked_at,
        Some(ts(T0 + 5))
    );
    assert_eq!(
        store.code(&c2.digest).unwrap().unwrap().family.revoked_at,
        None
    );
}

/// The `(htu, jti)` key: a second record is a replay, another htu or jti is not, and of 8
/// records of one pair at once exactly one passes.
pub fn jti_is_recorded_once_even_concurrently<S: Ports>(store: &S) {
    let htu = "https://pay.example/api/partner/v1/pay/payment-links";
    let j = digest().0;
    assert!(store.record_jti(htu, &j, ts(T0 + 300_000)).unwrap());
    assert!(!store.record_jti(htu, &j, ts(T0 + 300_000)).unwrap());
    assert!(!store.record_jti(htu, &j, ts(T0 + 900_000)).unwrap());
    assert!(store
        .record_jti("https://pay.example/oauth/token", &j, ts(T0))
        .unwrap());
    assert!(store.record_jti(htu, &digest().0, ts(T0)).unwrap());
    let burst = digest().0;
    let barrier = Barrier::new(8);
    let passed = thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    store.record_jti(htu, &burst, ts(T0 + 300_000)).unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|p| *p)
            .count()
    });
    assert_eq!(passed, 1);
}

/// The token lookup that records a proof's `jti`: the token comes back whole; the `jti` is
/// recorded only for a token bound to the proof's key (an unknown token or another key
/// writes nothing: the same pair is still new afterwards); a second record of a pair is a
/// replay, also against `record_jti`; of 8 concurrent lookups with one proof exactly one
/// records it.
pub fn jti_is_recorded_with_the_token_lookup<S: Ports>(store: &S) {
    let (app, g, f, _) = authorized(store);
    let jkt = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";
    let access = StoredToken {
        jkt: Some(jkt.into()),
        ..token(&app, &f, T0, 900_000)
    };
    let unbound = token(&app, &f, T0, 900_000);
    store
        .insert_tokens(&access, &token(&app, &f, T0, 86_400_000), None)
        .unwrap();
    store
        .insert_tokens(&unbound, &token(&app, &f, T0, 86_400_000), None)
        .unwrap();
    let htu = "https://pay.example/api/partner/v1/pay/payment-links";
    let j = digest().0;
    let proof = |jkt, jti_digest| JtiRecord {
        jkt,
        htu,
        jti_digest,
        keep_until: ts(T0 + 300_000),
    };

    // No record: an unknown token, a token bound to another key, an unbound token.
    let (none, recorded) = store
        .access_token_recording_jti(&digest(), &proof(jkt, &j))
        .unwrap();
    assert!(none.is_none());
    assert_eq!(recorded, None);
    let (held, recorded) = store
        .access_token_recording_jti(&access.digest, &proof("another-key", &j))
        .unwrap();
    assert_eq!(held.unwrap().item, access);
    assert_eq!(recorded, None);
    let (held, recorded) = store
        .access_token_recording_jti(&unbound.digest, &proof(jkt, &j))
        .unwrap();
    assert_eq!(held.unwrap().item, unbound);
    assert_eq!(recorded, None);

    // The bound token with its key: recorded once, then a replay by either path.
    let (held, recorded) = store
        .access_token_recording_jti(&access.digest, &proof(jkt, &j))
        .unwrap();
    let held = held.unwrap();
    assert_eq!((held.item, held.grant, held.family), (access.clone(), g, f));
    assert_eq!(recorded, Some(true));
    let (_, recorded) = store
        .access_token_recording_jti(&access.digest, &proof(jkt, &j))
        .unwrap();
    assert_eq!(recorded, Some(false));
    assert!(!store.record_jti(htu, &j, ts(T0 + 300_000)).unwrap());
    let k = digest().0;
    assert!(store.record_jti(htu, &k, ts(T0 + 300_000)).unwrap());
    let (_, recorded) = store
        .access_token_recording_jti(&access.digest, &proof(jkt, &k))
        .unwrap();
    assert_eq!(recorded, Some(false));

    let burst = digest().0;
    let barrier = Barrier::new(8);
    let passed = thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    store
                        .access_token_recording_jti(&access.digest, &proof(jkt, &burst))
                        .unwrap()
                        .1
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|p| *p == Some(true))
            .count()
    });
    assert_eq!(passed, 1);
}

/// Pruning forgets `jti`s kept until before the cut, and codes and tokens that expired before
/// it; nothing else.
pub fn prune_cuts_by_expiry<S: Ports>(store: &S) {
    let old = digest().0;
    let live = digest().0;
    assert!(store.record_jti("h", &old, ts(T0 - 1)).unwrap());
    assert!(store.record_jti("h", &live, ts(T0)).unwrap());
    assert_eq!(store.prune_jtis(ts(T0)).unwrap(), 1);
    assert!(store.record_jti("h", &old, ts(T0 + 1)).unwrap());
    assert!(!store.record_jti("h", &live, ts(T0 + 1)).unwrap());

    let (app, _, f, c) = authorized(store); // code expires at T0 + 60 s
    let (a, r) = (token(&app, &f, T0, 1000), token(&app, &f, T0, 120_000));
    store.insert_tokens(&a, &r, None).unwrap();
    let never = ts(T0 - 1);
    assert_eq!(store.prune_oauth(ts(T0 + 1000), never).unwrap(), 0);
    assert_eq!(store.prune_oauth(ts(T0 + 60_001), never).unwrap(), 2);
    assert_eq!(store.access_token(&a.digest).unwrap(), None);
    assert_eq!(store.code(&c.digest).unwrap(), None);
    assert!(store.refresh_token(&r.digest).unwrap().is_some());

    // A refresh token that never expires goes once spent long enough ago; live ones stay.
    let century = 100 * 365 * 86_400_000;
    let (a2, r2) = (token(&app, &f, T0, 120_000), token(&app, &f, T0, century));
    let r3 = StoredToken {
        digest: digest(),
        ..r2.clone()
    };
    let a3 = StoredToken {
        digest: digest(),
        ..a2.clone()
    };
    store.insert_tokens(&a2, &r2, None).unwrap();
    assert!(store
        .rotate_refresh(&r2.digest, &a3, &r3, ts(T0 + 5_000), None)
        .unwrap());
    assert_eq!(
        store.prune_oauth(ts(T0 + 60_001), ts(T0 + 5_000)).unwrap(),
        0
    );
    assert_eq!(
        store.prune_oauth(ts(T0 + 60_001), ts(T0 + 5_001)).unwrap(),
        1
    );
    assert_eq!(store.refresh_token(&r2.digest).unwrap(), None);
    assert!(store.refresh_token(&r3.digest).unwrap().is_some());
}
