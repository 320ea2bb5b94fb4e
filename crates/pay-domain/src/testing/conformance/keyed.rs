//! Keyed creates (`kernel::keyed`): each create port writes its entity and the claimed
//! idempotency record's answer in ONE transaction, and writes neither when the claim was taken
//! over (another token holds the record) or answered already.

use uuid::Uuid;

use crate::kernel::error::PortResult;

use super::fixtures::*;
use super::webhooks::values::sealed;
use crate::bookkeeping::ports::{BookkeepingStore, ExpenseWrite};
use crate::customers::ports::ContactStore;
use crate::customers::{Contact, ContactRef, GivenFields};
use crate::kernel::idempotency::{
    Claim, Completion, IdempotencyKey, IdempotencyStore, IdempotentRequest,
};
use crate::links::ports::PaymentLinkStore;
use crate::mail::MailStore;
use crate::subscriptions::ports::SubscriptionStore;
use crate::tenancy::ports::TenancyStore;

/// A claimed key of its own scope (token `t1`), and a completion of it under `token`.
#[derive(Debug)]
pub struct Claimed {
    request: IdempotentRequest,
}

impl Claimed {
    pub fn new<S: IdempotencyStore + ?Sized>(store: &S, route: &str) -> Claimed {
        let request = IdempotentRequest {
            scope: format!("key:{}:POST:{route}", Uuid::now_v7()),
            key: IdempotencyKey::parse("order-1").unwrap(),
            fingerprint: "fp".into(),
        };
        let claim = store
            .claim_idempotency_key(&request, "t1", ts(T0), ts(T0 + 60_000))
            .unwrap();
        assert_eq!(claim, Claim::Claimed { token: "t1".into() });
        Claimed { request }
    }

    pub fn completion(&self, token: &str, tag: &str) -> Completion {
        Completion {
            scope: self.request.scope.clone(),
            key: self.request.key.as_str().to_owned(),
            token: token.into(),
            answer: sealed(tag).sealed,
        }
    }

    /// What a retry of the request finds now.
    pub fn state<S: IdempotencyStore + ?Sized>(&self, store: &S) -> Claim {
        store
            .claim_idempotency_key(&self.request, "probe", ts(T0 + 1), ts(T0 + 1))
            .unwrap()
    }
}

/// The contract of a keyed write on one port: `write` writes a new entity with the completion
/// given and returns what the port returned (written or not) and whether the entity reads
/// back.
fn commits_with_its_answer<S: IdempotencyStore + ?Sized>(
    store: &S,
    route: &str,
    mut write: impl FnMut(Option<&Completion>) -> (bool, bool),
) {
    let claimed = Claimed::new(store, route);
    // Another token's completion (the claim was taken over): nothing written.
    assert_eq!(
        write(Some(&claimed.completion("t-other", "x"))),
        (false, false)
    );
    assert_eq!(claimed.state(store), Claim::InFlight);
    // The claim's own: the entity and its answer.
    assert_eq!(write(Some(&claimed.completion("t1", "an"))), (true, true));
    assert_eq!(claimed.state(store), Claim::Answered(sealed("an").sealed));
    // Answered once: a second completion of the claim loses, with its entity.
    assert_eq!(
        write(Some(&claimed.completion("t1", "an2"))),
        (false, false)
    );
    assert_eq!(claimed.state(store), Claim::Answered(sealed("an").sealed));
    // Without a completion: written.
    assert_eq!(write(None), (true, true));
}

/// The ports of the link case.
pub trait LinkPorts: TenancyStore + PaymentLinkStore + IdempotencyStore {}

impl<T: TenancyStore + PaymentLinkStore + IdempotencyStore> LinkPorts for T {}

pub fn a_keyed_link_commits_with_its_answer<S: LinkPorts>(store: &S) {
    let c = company(store);
    commits_with_its_answer(store, "payment-links", |completion| {
        let l = link_value(c);
        let written = store.insert_link(&l, completion).unwrap();
        (written, store.link(c, &l.uid).unwrap() == Some(l))
    });
}

/// The ports of the mail case.
pub trait MailPorts: TenancyStore + PaymentLinkStore + MailStore + IdempotencyStore {}

impl<T: TenancyStore + PaymentLinkStore + MailStore + IdempotencyStore> MailPorts for T {}

pub fn a_keyed_mail_commits_with_its_answer<S: MailPorts>(store: &S) {
    let c = company(store);
    let l = link(store, c);
    commits_with_its_answer(store, "payment-links/x/send-request-email", |completion| {
        let m = super::mail::values::mail(&l, T0, T0);
        let written = store.insert_mail(&m, completion).unwrap();
        (written, store.mail(m.id).unwrap() == Some(m))
    });
}

/// The ports of the subscription case.
pub trait SubscriptionPorts:
    TenancyStore + ContactStore + SubscriptionStore + IdempotencyStore
{
}

impl<T: TenancyStore + ContactStore + SubscriptionStore + IdempotencyStore> SubscriptionPorts
    for T
{
}

pub fn a_keyed_subscription_commits_with_its_answer<S: SubscriptionPorts>(store: &S) {
    use super::subscriptions::{contact, subscription};
    let c = company(store);
    let bob = store
        .upsert_contact(&contact(c, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    commits_with_its_answer(store, "subscriptions", |completion| {
        let (s, first) = subscription(c, bob.id, T0);
        let written = store.insert_subscription(&s, &first, completion).unwrap();
        let cycles = store.cycles(c, &[s.id]).unwrap();
        let kept = store.subscription(c, &s.uid).unwrap() == Some(s) && cycles == vec![first];
        if !kept {
            assert!(cycles.is_empty(), "no cycle without its subscription");
        }
        (written, kept)
    });
}

/// The ports of the contact case.
pub trait ContactPorts: TenancyStore + ContactStore + IdempotencyStore {}

impl<T: TenancyStore + ContactStore + IdempotencyStore> ContactPorts for T {}

/// An upsert writes the answer of what it did (created, then updated) with it, and neither
/// when its claim was taken over.
pub fn a_keyed_upsert_commits_with_its_answer<S: ContactPorts>(store: &S) {
    use super::subscriptions::contact;
    use crate::customers::Upserted;
    let c = company(store);
    let mut n = 0;
    commits_with_its_answer(store, "customers", |completion| {
        // A new e-mail each time: the written ones read back as created.
        n += 1;
        let new = contact(c, &format!("ann{n}@shop.example"));
        let seal = |_: &Upserted| -> PortResult<Option<Completion>> { Ok(completion.cloned()) };
        let done = store
            .upsert_contact_sealed(&new, GivenFields::default(), &seal)
            .unwrap();
        let kept = store.contact(c, &ContactRef::Id(new.id)).unwrap() == Some(new.clone());
        assert!(matches!(done, None | Some(Upserted::Created(_))));
        (done.is_some(), kept)
    });
    // An update: the seal sees what the store did, and a lost claim changes nothing.
    let first = store
        .upsert_contact(&contact(c, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let claimed = Claimed::new(store, "customers");
    let renamed = Contact {
        name: Some("Bob".into()),
        ..contact(c, "BOB@shop.example")
    };
    let given = GivenFields {
        name: true,
        ..GivenFields::default()
    };
    let lost = |u: &Upserted| -> PortResult<Option<Completion>> {
        assert!(!u.was_created());
        Ok(Some(claimed.completion("t-other", "x")))
    };
    assert_eq!(
        store.upsert_contact_sealed(&renamed, given, &lost).unwrap(),
        None
    );
    let read = store
        .contact(c, &ContactRef::Id(first.id))
        .unwrap()
        .unwrap();
    assert_eq!(read, first);
    let own = |_: &Upserted| -> PortResult<Option<Completion>> {
        Ok(Some(claimed.completion("t1", "up")))
    };
    let done = store.upsert_contact_sealed(&renamed, given, &own).unwrap();
    let Some(Upserted::Updated(updated)) = done else {
        panic!("{done:?}");
    };
    assert_eq!(
        (updated.id, updated.name.as_deref()),
        (first.id, Some("Bob"))
    );
    assert_eq!(claimed.state(store), Claim::Answered(sealed("up").sealed));
}

/// The ports of the expense case.
pub trait ExpensePorts: TenancyStore + ContactStore + BookkeepingStore + IdempotencyStore {}

impl<T: TenancyStore + ContactStore + BookkeepingStore + IdempotencyStore> ExpensePorts for T {}

/// An expense save (insert, then update) writes its answer with it, and nothing, not even its
/// version, when its claim was taken over.
pub fn a_keyed_expense_save_commits_with_its_answer<S: ExpensePorts>(store: &S) {
    use super::bookkeeping::{activity, expense};
    use super::subscriptions::contact;
    use crate::bookkeeping::Direction;
    let c = company(store);
    let bob = store
        .upsert_contact(&contact(c, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let mut n = 0;
    commits_with_its_answer(store, "bookkeeping/expenses/from-activity", |completion| {
        // A new activity each time: an insert.
        n += 1;
        let a = activity(c, &format!("{n:02}"), 0, Direction::Outgoing, T0);
        store.record_activity(&a).unwrap();
        let (e, v) = expense(&a, bob.id, "Servers");
        let written = store.insert_expense(&e, &v, completion).unwrap();
        let kept = store.expense_of_activity(c, a.id).unwrap() == Some(e.clone());
        let versions = store.expense_versions(c, e.id).unwrap().len();
        assert_eq!(versions, usize::from(kept));
        match written {
            ExpenseWrite::Applied => (true, kept),
            ExpenseWrite::Unclaimed => (false, kept),
            ExpenseWrite::Lost => panic!("lost"),
        }
    });
    // An update: a lost claim writes neither the expense nor its version.
    let a = activity(c, "ff", 0, Direction::Outgoing, T0);
    store.record_activity(&a).unwrap();
    let (e, v) = expense(&a, bob.id, "Servers");
    assert_eq!(
        store.insert_expense(&e, &v, None).unwrap(),
        ExpenseWrite::Applied
    );
    let mut next = e.clone();
    next.version = 2;
    next.fields.description = "Cloud".into();
    let v2 = crate::bookkeeping::ExpenseVersion {
        version: 2,
        changes: next.fields.changes_from(Some(&e.fields)),
        ..v
    };
    let claimed = Claimed::new(store, "bookkeeping/expenses/from-activity");
    assert_eq!(
        store
            .update_expense(
                &next,
                1,
                &v2,
                ts(T0 + 1),
                Some(&claimed.completion("t-other", "x"))
            )
            .unwrap(),
        ExpenseWrite::Unclaimed
    );
    assert_eq!(store.expense_of_activity(c, a.id).unwrap(), Some(e.clone()));
    assert_eq!(store.expense_versions(c, e.id).unwrap().len(), 1);
    assert_eq!(
        store
            .update_expense(
                &next,
                1,
                &v2,
                ts(T0 + 1),
                Some(&claimed.completion("t1", "up"))
            )
            .unwrap(),
        ExpenseWrite::Applied
    );
    assert_eq!(store.expense_of_activity(c, a.id).unwrap(), Some(next));
    assert_eq!(store.expense_versions(c, e.id).unwrap().len(), 2);
    assert_eq!(claimed.state(store), Claim::Answered(sealed("up").sealed));
}
