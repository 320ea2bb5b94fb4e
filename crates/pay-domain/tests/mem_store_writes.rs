//! The in-memory store counts its own writes: `MemStore::writes` is the number of times the
//! tables were taken to write, so a use case's "nothing was written" check cannot miss a
//! write method. The three write methods a hand-kept list of names once left out
//! (`insert_mail`, `insert_expense`, `add_contact_wallet`) are counted like every other, and a
//! write that went around the count would not compile (the `compile_fail` example on
//! `MemStore`).

use pay_domain::bookkeeping::ports::BookkeepingStore;
use pay_domain::bookkeeping::Direction;
use pay_domain::customers::ports::ContactStore;
use pay_domain::customers::GivenFields;
use pay_domain::mail::MailStore;
use pay_domain::testing::conformance::bookkeeping::{activity, expense};
use pay_domain::testing::conformance::fixtures::{company, ts, T0};
use pay_domain::testing::conformance::mail::values::{link, mail};
use pay_domain::testing::conformance::subscriptions::contact;
use pay_domain::testing::MemStore;

#[test]
fn the_write_methods_a_list_once_missed_are_counted() {
    let store = MemStore::default();
    let c = company(&store);
    let l = link(&store, c);
    let bob = store
        .upsert_contact(&contact(c, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let out = activity(c, "aa", 0, Direction::Outgoing, T0);
    store.record_activity(&out).unwrap();
    store.reset_calls();
    assert_eq!(store.writes(), 0);

    store.insert_mail(&mail(&l, T0, T0), None).unwrap();
    assert_eq!(store.writes(), 1, "insert_mail");
    let (e, v) = expense(&out, bob.id, "hosting");
    store.insert_expense(&e, &v, None).unwrap();
    assert_eq!(store.writes(), 2, "insert_expense");
    store
        .add_contact_wallet(c, bob.id, "0xvendor", "0xvendor", ts(T0))
        .unwrap();
    assert_eq!(store.writes(), 3, "add_contact_wallet");

    // Reads are not writes, and a reset starts the count again.
    let _ = store.mail(mail(&l, T0, T0).id).unwrap();
    assert_eq!(store.writes(), 3);
    store.reset_calls();
    assert_eq!(store.writes(), 0);
}

#[test]
fn a_refused_write_still_took_the_tables_to_write() {
    // The count is of write accesses, not of rows changed: a write method that refuses (here
    // a wallet for a contact that does not exist) still counts, as the named calls did.
    let store = MemStore::default();
    let c = company(&store);
    store.reset_calls();
    let unknown = pay_domain::kernel::ids::ContactId(uuid::Uuid::now_v7());
    assert!(store
        .add_contact_wallet(c, unknown, "0xvendor", "0xvendor", ts(T0))
        .is_err());
    assert_eq!(store.writes(), 1);
}
