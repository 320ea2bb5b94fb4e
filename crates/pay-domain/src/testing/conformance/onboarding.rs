//! Onboarding partners and drafts: a partner found by its secret's digest; a draft unique per
//! partner and idempotency key (even two at once), read back exactly by key and by claim
//! digest; a draft claimed at most once, with its company, owner and settings in the same
//! write, even by concurrent claims, and never once expired.

use std::sync::Barrier;
use std::thread;

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::ids::{CompanyId, DraftId, OnboardingPartnerId, UserId};
use crate::kernel::secret::{SealedSecret, SecretDigest};
use crate::onboarding::ports::{ClaimedTenant, OnboardingStore};
use crate::onboarding::{Draft, DraftOAuth, DraftRequest, Partner, StoredDraft, StoredPartner};
use crate::tenancy::ports::TenancyStore;
use crate::tenancy::{Company, Theme, UserRecord};

fn partner<S: OnboardingStore + ?Sized>(store: &S) -> (Partner, SecretDigest) {
    let p = StoredPartner {
        partner: Partner {
            id: OnboardingPartnerId(Uuid::now_v7()),
            name: "Agency é".into(),
            created_at: ts(T0),
        },
        secret_digest: SecretDigest(random_alnum(64)),
    };
    store.insert_partner(&p).unwrap();
    (p.partner, p.secret_digest)
}

fn draft(partner: &Partner, key: &str, oauth: bool) -> StoredDraft {
    StoredDraft {
        draft: Draft {
            id: DraftId(Uuid::now_v7()),
            partner_id: partner.id,
            idempotency_key: key.into(),
            request: DraftRequest {
                company_name: "Bella Bakery".into(),
                company_website: oauth.then(|| "https://bella.example".into()),
                oauth: oauth.then(|| DraftOAuth {
                    client_id: format!("oc_{}", random_alnum(32)),
                    redirect_uri: "https://partner.example/cb".into(),
                    scope: "company:read".into(),
                    state: "s 1".into(),
                    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".into(),
                }),
            },
            created_at: ts(T0),
            expires_at: ts(T0 + 1_000),
            claimed_at: None,
            company_id: None,
        },
        claim_digest: SecretDigest(random_alnum(64)),
        claim_sealed: SealedSecret {
            key_id: "k1".into(),
            sealed: random_alnum(40),
        },
    }
}

fn tenant(email: &str) -> ClaimedTenant {
    let user = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: email.into(),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    ClaimedTenant {
        owner: user.id,
        new_user: Some(user),
        company: Company {
            id: CompanyId(Uuid::now_v7()),
            name: "Bella Bakery".into(),
            picture_url: None,
            logo_url: None,
            theme: Theme::System,
            created_at: ts(T0 + 10),
            test_clock_offset_ms: 0,
            payment_link_domain: None,
            website: Some("https://bella.example".into()),
        },
        settings: settings(),
    }
}

/// The ports the onboarding cases need.
pub trait Ports: OnboardingStore + TenancyStore + Sync {}

impl<T: OnboardingStore + TenancyStore + Sync> Ports for T {}

pub fn drafts_are_unique_per_partner_and_key<S: Ports>(store: &S) {
    let (a, digest) = partner(store);
    let (b, _) = partner(store);
    assert_eq!(store.partner_by_secret(&digest).unwrap(), Some(a.clone()));
    assert_eq!(
        store
            .partner_by_secret(&SecretDigest(random_alnum(64)))
            .unwrap(),
        None
    );
    let first = draft(&a, "lead-1", true);
    assert!(store.insert_draft(&first).unwrap());
    assert_eq!(
        store.draft_by_key(a.id, "lead-1").unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store.draft_by_claim(&first.claim_digest).unwrap(),
        Some((first.clone(), a.clone()))
    );
    // The same key again: nothing written, the first kept; another partner's key is its own.
    assert!(!store.insert_draft(&draft(&a, "lead-1", false)).unwrap());
    assert_eq!(store.draft_by_key(a.id, "lead-1").unwrap(), Some(first));
    let theirs = draft(&b, "lead-1", false);
    assert!(store.insert_draft(&theirs).unwrap());
    assert_eq!(store.draft_by_key(b.id, "lead-1").unwrap(), Some(theirs));
    assert_eq!(store.draft_by_key(b.id, "lead-2").unwrap(), None);
    // Two at once with one key: exactly one is written.
    let barrier = Barrier::new(2);
    let wins: usize = thread::scope(|s| {
        let handles: Vec<_> = [true, false]
            .into_iter()
            .map(|oauth| {
                let (barrier, a) = (&barrier, &a);
                s.spawn(move || {
                    let d = draft(a, "race", oauth);
                    barrier.wait();
                    usize::from(store.insert_draft(&d).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(wins, 1);
    assert!(store.draft_by_key(a.id, "race").unwrap().is_some());
}

pub fn a_draft_is_claimed_once<S: Ports>(store: &S) {
    let (p, _) = partner(store);
    // Expired: nothing written.
    let late = draft(&p, "late", false);
    store.insert_draft(&late).unwrap();
    let t = tenant(&format!("{}@late.example", random_alnum(10)));
    let expiry = late.draft.expires_at;
    assert!(!store.claim_draft(late.draft.id, expiry, &t).unwrap());
    assert!(store.company_with_settings(t.company.id).unwrap().is_none());
    assert!(store
        .user_by_email(&t.new_user.as_ref().unwrap().email)
        .unwrap()
        .is_none());
    // Racing claims, each with a company and a new user of its own: one wins, alone.
    let d = draft(&p, "race", true);
    store.insert_draft(&d).unwrap();
    let tenants: Vec<ClaimedTenant> = (0..4)
        .map(|i| tenant(&format!("{}-{i}@race.example", random_alnum(10))))
        .collect();
    let barrier = Barrier::new(tenants.len());
    let won: Vec<bool> = thread::scope(|s| {
        let handles: Vec<_> = tenants
            .iter()
            .map(|t| {
                let (barrier, id) = (&barrier, d.draft.id);
                s.spawn(move || {
                    barrier.wait();
                    store.claim_draft(id, ts(T0 + 500), t).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(won.iter().filter(|w| **w).count(), 1, "{won:?}");
    for (t, won) in tenants.iter().zip(&won) {
        let company = store.company_with_settings(t.company.id).unwrap();
        let user = store
            .user_by_email(&t.new_user.as_ref().unwrap().email)
            .unwrap();
        assert_eq!(company.is_some(), *won);
        assert_eq!(user.is_some(), *won);
        if *won {
            let (c, _) = company.unwrap();
            assert_eq!(c.name, "Bella Bakery");
            assert_eq!(c.website.as_deref(), Some("https://bella.example"));
            let members = store.memberships(t.owner).unwrap();
            assert_eq!(members.len(), 1);
            assert_eq!(members[0].company_id, t.company.id);
            assert_eq!(members[0].role, crate::tenancy::Role::Owner);
            let claimed = store.draft_by_key(p.id, "race").unwrap().unwrap().draft;
            assert_eq!(claimed.claimed_at, Some(ts(T0 + 500)));
            assert_eq!(claimed.company_id, Some(t.company.id));
        }
    }
    // Claimed: never again.
    let again = tenant(&format!("{}@again.example", random_alnum(10)));
    assert!(!store.claim_draft(d.draft.id, ts(T0 + 600), &again).unwrap());
    assert!(store
        .company_with_settings(again.company.id)
        .unwrap()
        .is_none());
}
