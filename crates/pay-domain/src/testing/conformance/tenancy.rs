//! Companies: the verified payment-link domain is set, read back at once (no stale cached
//! read), cleared, and belongs to one company at most. Sign-ins: a security reset ends every
//! sign-in of the company's members, and no one else's.

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::ids::{CompanyId, SignInId, UserId};
use crate::kernel::secret::SecretDigest;
use crate::tenancy::ports::{DomainWrite, SignInStore, StoredSignIn, TenancyStore};
use crate::tenancy::{Role, UserRecord};

fn domain_of<S: TenancyStore>(store: &S, c: CompanyId) -> Option<String> {
    store
        .company_with_settings(c)
        .unwrap()
        .unwrap()
        .0
        .payment_link_domain
}

pub fn a_payment_link_domain_belongs_to_one_company<S: TenancyStore>(store: &S) {
    let (a, b) = (company(store), company(store));
    assert_eq!(domain_of(store, a), None, "none until verified");
    assert_eq!(
        store
            .set_payment_link_domain(a, Some("pay.acme.example"))
            .unwrap(),
        DomainWrite::Written
    );
    assert_eq!(domain_of(store, a).as_deref(), Some("pay.acme.example"));
    assert_eq!(
        store
            .set_payment_link_domain(b, Some("pay.acme.example"))
            .unwrap(),
        DomainWrite::Taken
    );
    assert_eq!(domain_of(store, b), None, "a refused write writes nothing");
    // Setting it again on its own company is no conflict.
    assert_eq!(
        store
            .set_payment_link_domain(a, Some("pay.acme.example"))
            .unwrap(),
        DomainWrite::Written
    );
    assert_eq!(
        store
            .set_payment_link_domain(CompanyId(uuid::Uuid::now_v7()), Some("x.example"))
            .unwrap(),
        DomainWrite::NoCompany
    );
    // Cleared, it is free for another company.
    assert_eq!(
        store.set_payment_link_domain(a, None).unwrap(),
        DomainWrite::Written
    );
    assert_eq!(domain_of(store, a), None);
    assert_eq!(
        store
            .set_payment_link_domain(b, Some("pay.acme.example"))
            .unwrap(),
        DomainWrite::Written
    );
    assert_eq!(domain_of(store, b).as_deref(), Some("pay.acme.example"));
}

fn member<S: TenancyStore>(store: &S, company: CompanyId) -> UserId {
    let user = UserRecord {
        id: UserId(Uuid::now_v7()),
        email: format!("{}@example.com", random_alnum(12)),
        password_hash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into(),
        created_at: ts(T0),
    };
    store
        .add_member(Some(&user), user.id, company, Role::Member, ts(T0))
        .unwrap();
    user.id
}

fn sign_in<S: SignInStore>(store: &S, user: UserId, company: CompanyId) -> SecretDigest {
    let s = StoredSignIn {
        id: SignInId(Uuid::now_v7()),
        token_digest: SecretDigest(random_alnum(64)),
        csrf_digest: SecretDigest(random_alnum(64)),
        user_id: user,
        company_id: company,
        created_at: ts(T0),
        expires_at: ts(T0 + 3_600_000),
    };
    store.insert_sign_in(&s).unwrap();
    s.token_digest
}

/// `delete_member_sign_ins`: every sign-in of every member of the company goes, those acting
/// on another company too; a non-member's stays; a second call finds none.
pub fn a_reset_ends_the_sign_ins_of_the_company_members<S: TenancyStore + SignInStore>(store: &S) {
    let (a, b) = (company(store), company(store));
    let alice = member(store, a);
    store
        .add_member(None, alice, b, Role::Admin, ts(T0))
        .unwrap();
    let bob = member(store, b);
    let alice_a = sign_in(store, alice, a);
    let alice_b = sign_in(store, alice, b);
    let bob_b = sign_in(store, bob, b);
    assert_eq!(store.delete_member_sign_ins(a).unwrap(), 2);
    assert_eq!(store.sign_in_by_token(&alice_a).unwrap(), None);
    assert_eq!(store.sign_in_by_token(&alice_b).unwrap(), None);
    assert!(store.sign_in_by_token(&bob_b).unwrap().is_some());
    assert_eq!(store.delete_member_sign_ins(a).unwrap(), 0);
    assert_eq!(
        store
            .delete_member_sign_ins(CompanyId(Uuid::now_v7()))
            .unwrap(),
        0
    );
    assert!(store.sign_in_by_token(&bob_b).unwrap().is_some());
}
