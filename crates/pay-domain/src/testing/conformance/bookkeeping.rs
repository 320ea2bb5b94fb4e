//! Bookkeeping and contact roles: an activity is recorded once per company and key, also
//! concurrently; the list filters and orders; an activity has at most one expense under
//! concurrent inserts, and expense updates are compare-and-set with their version rows; a
//! contact upserted with a new role becomes both; known wallets are idempotent and searchable.

use uuid::Uuid;

use super::fixtures::*;
use super::subscriptions::contact;
use crate::bookkeeping::ports::{BookkeepingStore, ExpenseWrite};
use crate::bookkeeping::{
    ActivityFilter, ActivityKey, Direction, Expense, ExpenseFields, ExpenseVersion, ExportCursor,
    ExportPeriod, FieldChange, Recorded, WalletActivity,
};
use crate::customers::ports::ContactStore;
use crate::customers::{ContactKind, ContactQuery, GivenFields};
use crate::kernel::amount::Decimal;
use crate::kernel::ids::*;
use crate::tenancy::ports::TenancyStore;

const BASE_USDC: &str = "eip155:8453/erc20:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

/// The ports these cases need.
pub trait Ports: TenancyStore + ContactStore + BookkeepingStore + Sync {}

impl<T> Ports for T where T: TenancyStore + ContactStore + BookkeepingStore + Sync {}

/// An activity of `company` with the key `eip155:8453:0x<hash>:<index>`.
pub fn activity(
    company: CompanyId,
    hash: &str,
    index: u32,
    direction: Direction,
    at: i64,
) -> WalletActivity {
    WalletActivity {
        id: WalletActivityId(Uuid::now_v7()),
        company_id: company,
        key: ActivityKey::new("eip155:8453", &format!("0x{hash}"), index).unwrap(),
        direction,
        asset: BASE_USDC.into(),
        amount: Decimal::parse("125.5").unwrap(),
        wallet_address: "0xmerchant".into(),
        counterparty_address: "0xvendor".into(),
        occurred_at: ts(at),
        payment_session_id: None,
        recorded_at: ts(at),
    }
}

pub fn expense(
    a: &WalletActivity,
    contact: ContactId,
    description: &str,
) -> (Expense, ExpenseVersion) {
    let fields = ExpenseFields {
        contact_id: contact,
        category: "Hosting".into(),
        description: description.into(),
        notes: None,
        fiat_currency: None,
        fiat_amount: None,
        tax_amount: None,
        evidence_file_ids: vec![],
    };
    let e = Expense {
        id: ExpenseId(Uuid::now_v7()),
        company_id: a.company_id,
        activity_id: a.id,
        version: 1,
        created_at: ts(T0),
        updated_at: ts(T0),
        fields,
    };
    let v = ExpenseVersion {
        expense_id: e.id,
        version: 1,
        saved_at: ts(T0),
        saved_by: "api_key:test".into(),
        changes: e.fields.changes_from(None),
    };
    (e, v)
}

pub fn an_activity_is_recorded_once_per_key<S: Ports>(store: &S) {
    let a = company(store);
    let b = company(store);
    let first = activity(a, "aa", 0, Direction::Outgoing, T0);
    assert_eq!(
        store.record_activity(&first).unwrap(),
        Recorded::Created(first.clone())
    );
    // The same movement again (another id, other values): the stored one, unchanged.
    let mut again = activity(a, "aa", 0, Direction::Outgoing, T0 + 5);
    again.amount = Decimal::parse("1").unwrap();
    assert_eq!(
        store.record_activity(&again).unwrap(),
        Recorded::Existing(first.clone())
    );
    // Another index is another movement; another company has its own key space.
    assert!(store
        .record_activity(&activity(a, "aa", 1, Direction::Outgoing, T0))
        .unwrap()
        .was_created());
    let theirs = activity(b, "aa", 0, Direction::Outgoing, T0);
    assert!(store.record_activity(&theirs).unwrap().was_created());
    assert_eq!(store.activity(a, first.id).unwrap(), Some(first.clone()));
    assert_eq!(store.activity(b, first.id).unwrap(), None);
    assert_eq!(
        store.activity_by_key(a, &first.key).unwrap(),
        Some(first.clone())
    );
    assert_eq!(store.activity_by_key(b, &first.key).unwrap(), Some(theirs));
    // Concurrent reports of one new movement record it once.
    let created = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                sc.spawn(|| {
                    store
                        .record_activity(&activity(a, "bb", 0, Direction::Incoming, T0))
                        .unwrap()
                        .was_created()
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .filter(|c| *c)
            .count()
    });
    assert_eq!(created, 1);
}

pub fn activities_filter_and_order<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let inc = activity(a, "01", 0, Direction::Incoming, T0);
    let out1 = activity(a, "02", 0, Direction::Outgoing, T0 + 1000);
    let mut out2 = activity(a, "03", 0, Direction::Outgoing, T0 + 2000);
    out2.asset = "eip155:8453/slip44:60".into();
    for x in [&inc, &out1, &out2] {
        store.record_activity(x).unwrap();
    }
    let (e, v) = expense(&out1, bob.id, "Servers");
    assert_eq!(
        store.insert_expense(&e, &v, None).unwrap(),
        ExpenseWrite::Applied
    );
    let ids = |f: ActivityFilter| -> Vec<(WalletActivityId, bool)> {
        store
            .activities(a, &f, 200)
            .unwrap()
            .into_iter()
            .map(|(x, has)| (x.id, has))
            .collect()
    };
    assert_eq!(
        ids(ActivityFilter::default()),
        [(out2.id, false), (out1.id, true), (inc.id, false)]
    );
    assert_eq!(
        store
            .activities(a, &ActivityFilter::default(), 1)
            .unwrap()
            .len(),
        1
    );
    let only = |f: ActivityFilter| ids(f).into_iter().map(|x| x.0).collect::<Vec<_>>();
    assert_eq!(
        only(ActivityFilter {
            direction: Some(Direction::Incoming),
            ..Default::default()
        }),
        [inc.id]
    );
    assert_eq!(
        only(ActivityFilter {
            asset: Some(BASE_USDC.into()),
            ..Default::default()
        }),
        [out1.id, inc.id]
    );
    assert_eq!(
        only(ActivityFilter {
            from: Some(ts(T0 + 1000)),
            to: Some(ts(T0 + 2000)),
            ..Default::default()
        }),
        [out1.id]
    );
    assert_eq!(
        only(ActivityFilter {
            has_expense: Some(true),
            ..Default::default()
        }),
        [out1.id]
    );
    assert_eq!(
        only(ActivityFilter {
            has_expense: Some(false),
            ..Default::default()
        }),
        [out2.id],
        "incoming activities have no expense to have"
    );
    let b = company(store);
    assert!(store
        .activities(b, &ActivityFilter::default(), 200)
        .unwrap()
        .is_empty());
}

pub fn export_pages_run_in_order_within_the_period<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    // Three at one instant (the cursor breaks the tie by id), one before, one at `to`.
    let mut outs = Vec::new();
    for (i, at) in [
        (0, T0 + 1000),
        (1, T0),
        (2, T0 + 1000),
        (3, T0 + 1000),
        (4, T0 + 9000),
    ] {
        let x = activity(a, &format!("1{i}"), 0, Direction::Outgoing, at);
        store.record_activity(&x).unwrap();
        let (e, v) = expense(&x, bob.id, &format!("e{i}"));
        store.insert_expense(&e, &v, None).unwrap();
        outs.push(x);
    }
    let bare = activity(a, "20", 0, Direction::Outgoing, T0 + 2000);
    let inc = activity(a, "21", 0, Direction::Incoming, T0 + 3000);
    store.record_activity(&bare).unwrap();
    store.record_activity(&inc).unwrap();
    let period = ExportPeriod::new(Some(ts(T0)), Some(ts(T0 + 9000))).unwrap();
    let all = |direction: Direction, company: CompanyId| {
        let mut seen = Vec::new();
        let mut after: Option<ExportCursor> = None;
        loop {
            let page = store
                .export_page(company, direction, &period, after.as_ref(), 2)
                .unwrap();
            assert!(page.len() <= 2);
            for item in &page {
                assert_eq!(item.activity.direction, direction);
                assert_eq!(item.expense.is_some(), direction == Direction::Outgoing);
                if let Some(e) = &item.expense {
                    assert_eq!(e.activity_id, item.activity.id);
                }
                assert_eq!(item.payment, None, "no session behind these");
                seen.push(item.activity.id);
            }
            assert!(seen.len() <= 10, "the cursor moves on");
            let Some(last) = page.last() else { break };
            after = Some(ExportCursor {
                occurred_at: last.activity.occurred_at,
                id: last.activity.id,
            });
        }
        seen
    };
    let mut tied: Vec<_> = [&outs[0], &outs[2], &outs[3]].map(|x| x.id).into();
    tied.sort();
    let mut expected = vec![outs[1].id];
    expected.extend(tied);
    assert_eq!(
        all(Direction::Outgoing, a),
        expected,
        "oldest first, ties by id, no expense no row, `to` excluded"
    );
    assert_eq!(all(Direction::Incoming, a), [inc.id]);
    let b = company(store);
    assert!(all(Direction::Outgoing, b).is_empty());
    assert!(all(Direction::Incoming, b).is_empty());
}

pub fn one_expense_per_activity_and_versions_by_compare_and_set<S: Ports>(store: &S) {
    let a = company(store);
    let bob = store
        .upsert_contact(&contact(a, "bob@shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let out = activity(a, "cc", 0, Direction::Outgoing, T0);
    store.record_activity(&out).unwrap();
    // Concurrent inserts of an expense for one activity: exactly one is written.
    let applied = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let (e, v) = expense(&out, bob.id, &format!("insert {i}"));
                sc.spawn(move || store.insert_expense(&e, &v, None).unwrap())
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .filter(|w| *w == ExpenseWrite::Applied)
            .count()
    });
    assert_eq!(applied, 1);
    let stored = store.expense_of_activity(a, out.id).unwrap().unwrap();
    assert_eq!(stored.version, 1);
    // Concurrent updates from version 1: exactly one is written, with its version row.
    let applied = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let mut next = stored.clone();
                next.version = 2;
                next.fields.description = format!("update {i}");
                let v = ExpenseVersion {
                    expense_id: next.id,
                    version: 2,
                    saved_at: ts(T0 + 1),
                    saved_by: "user:test".into(),
                    changes: next.fields.changes_from(Some(&stored.fields)),
                };
                sc.spawn(move || {
                    (
                        store
                            .update_expense(&next, 1, &v, ts(T0 + 1), None)
                            .unwrap(),
                        next,
                    )
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap())
            .filter(|(w, _)| *w == ExpenseWrite::Applied)
            .map(|(_, e)| e)
            .collect::<Vec<_>>()
    });
    assert_eq!(applied.len(), 1);
    let now = store.expense_of_activity(a, out.id).unwrap().unwrap();
    assert_eq!(now, applied[0]);
    let versions = store.expense_versions(a, now.id).unwrap();
    assert_eq!(
        versions.iter().map(|v| v.version).collect::<Vec<_>>(),
        [1, 2]
    );
    assert_eq!(
        versions[1].changes,
        vec![FieldChange {
            field: "description",
            from: Some(stored.fields.description.clone()),
            to: Some(now.fields.description.clone()),
        }]
    );
    assert_eq!(versions[1].saved_by, "user:test");
    // Another company sees neither the expense nor its versions.
    let b = company(store);
    assert_eq!(store.expense_of_activity(b, out.id).unwrap(), None);
    assert!(store.expense_versions(b, now.id).unwrap().is_empty());
}

pub fn contact_roles_merge_and_wallets_are_known_once<S: Ports>(store: &S) {
    let a = company(store);
    let customer = store
        .upsert_contact(&contact(a, "Hoster@Shop.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    assert_eq!(customer.kind, ContactKind::Customer);
    assert!(store
        .contacts(a, ContactKind::Vendor, 200)
        .unwrap()
        .is_empty());
    let mut vendor = contact(a, "hoster@shop.example");
    vendor.kind = ContactKind::Vendor;
    vendor.client_id = Some("HOST_7%".into());
    let got = store
        .upsert_contact(
            &vendor,
            GivenFields {
                client_id: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(!got.was_created());
    assert_eq!(got.contact().id, customer.id);
    assert_eq!(got.contact().kind, ContactKind::Both);
    for role in [ContactKind::Customer, ContactKind::Vendor] {
        assert_eq!(store.contacts(a, role, 200).unwrap().len(), 1, "{role}");
    }
    // Known wallets: once per address key, whoever adds it how often.
    std::thread::scope(|sc| {
        for _ in 0..4 {
            sc.spawn(|| {
                store
                    .add_contact_wallet(a, customer.id, "0xAbC", "0xabc", ts(T0))
                    .unwrap()
            });
        }
    });
    let with = store.contacts_with_wallet(a, "0xabc").unwrap();
    assert_eq!(with.iter().map(|c| c.id).collect::<Vec<_>>(), [customer.id]);
    let b = company(store);
    assert!(store.contacts_with_wallet(b, "0xabc").unwrap().is_empty());
    // Search: name, e-mail and clientId by part without case, wallets by key; wildcards are
    // plain characters.
    let other = store
        .upsert_contact(&contact(a, "zed@else.example"), GivenFields::default())
        .unwrap()
        .into_contact();
    let hits = |text: &str, role: Option<&str>| -> Vec<ContactId> {
        store
            .search_contacts(a, &ContactQuery::parse(text, role).unwrap(), 50)
            .unwrap()
            .into_iter()
            .map(|h| h.contact.id)
            .collect()
    };
    assert_eq!(hits("HOSTER@", None), [customer.id]);
    assert_eq!(hits("host_7%", Some("vendor")), [customer.id]);
    assert_eq!(hits("0xABC", None), [customer.id]);
    assert_eq!(hits("bob", None), [other.id, customer.id], "newest first");
    assert_eq!(hits("bob", Some("vendor")), [customer.id]);
    assert_eq!(hits("%", None), [customer.id], "% matches only itself");
    assert!(hits("h_ster", None).is_empty(), "_ is no wildcard");
    assert_eq!(hits("t_7", None), [customer.id]);
    let found = store
        .search_contacts(a, &ContactQuery::parse("hoster", None).unwrap(), 50)
        .unwrap();
    assert_eq!(found[0].wallets, ["0xAbC"]);
}

/// A completed session reads back with its own link, whatever company it is of; a session
/// not complete (or unknown) reads as `None`.
pub fn a_completed_session_reads_back_with_its_link<S>(store: &S)
where
    S: Ports + crate::links::ports::PaymentLinkStore + crate::checkout::CheckoutStore,
{
    use super::checkout::values::{session, write};
    use crate::checkout::machine::SessionStatus;
    use crate::checkout::{PaymentSession, SessionChange};
    use crate::links::PaymentLink;

    let a = company(store);
    let own = link_value(a);
    store.insert_link(&own, None).unwrap();
    let put = |l: &PaymentLink, status: SessionStatus, at: i64| {
        let s = PaymentSession {
            updated_at: ts(at),
            ..session(l, status, at, at + 1_800_000)
        };
        store
            .write_link_event(&write(l, SessionChange::Insert(s.clone())), &|_| vec![])
            .unwrap();
        s
    };
    let done = put(&own, SessionStatus::Complete, T0);
    let pending = put(&own, SessionStatus::Pending, T0 + 1000);
    let (l, s) = store.completed_session(done.id).unwrap().unwrap();
    assert_eq!((l.id, s), (own.id, done));
    assert_eq!(store.completed_session(pending.id).unwrap(), None);
    assert_eq!(
        store
            .completed_session(PaymentSessionId(Uuid::now_v7()))
            .unwrap(),
        None
    );
}
