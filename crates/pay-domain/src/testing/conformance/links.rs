//! Payment links: stored and read back per company, listed newest first, status moved only by compare-and-set.

use uuid::Uuid;

use super::fixtures::*;
use crate::kernel::ids::*;
use crate::kernel::secret::SecretDigest;
use crate::links::ports::{LinkFilter, PaymentLinkStore};
use crate::links::{CreatedBy, ExpirationTime, LinkStatus, PaymentLink, PaymentLinkPayload};
use crate::settings::FeePayer;
use crate::tenancy::keys::{Integration, StoredIntegration};
use crate::tenancy::ports::{NewTenant, TenancyStore};
use crate::tenancy::{Company, Theme, UserRecord};

/// The ports these cases need.
pub trait Ports: TenancyStore + PaymentLinkStore + Sync {}

impl<T: TenancyStore + PaymentLinkStore + Sync> Ports for T {}

pub fn payment_links<S: Ports>(store: &S) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    let company = t.company.id;
    let key = CreatedBy::ApiKey(t.integration.integration.partner_id);
    let grant = Uuid::new_v4();

    let oldest = link(company, T0, CreatedBy::User(t.owner));
    let mut by_grant = link(company, T0 + 1000, CreatedBy::Grant(grant));
    by_grant.expires_at = None;
    by_grant.payload.metadata = None;
    // Two links in the same millisecond: the larger id comes first.
    let tie_a = link(company, T0 + 2000, key.clone());
    let tie_b = link(company, T0 + 2000, key.clone());
    let anonymous = link(company, T0 + 3000, CreatedBy::Anonymous);
    let other_grant = link(company, T0 + 4000, CreatedBy::Grant(Uuid::new_v4()));
    let foreign = link(other.company.id, T0 + 5000, key.clone());
    for l in [
        &tie_b,
        &oldest,
        &anonymous,
        &by_grant,
        &tie_a,
        &other_grant,
        &foreign,
    ] {
        store.insert_link(l, None).unwrap();
    }
    // `uid` is unique across companies.
    let mut clash = link(other.company.id, T0, key.clone());
    clash.uid = oldest.uid.clone();
    assert!(is_fault(store.insert_link(&clash, None)));

    let (first_tie, second_tie) = if tie_a.id.to_string() > tie_b.id.to_string() {
        (&tie_a, &tie_b)
    } else {
        (&tie_b, &tie_a)
    };
    let all = store.links(company, LinkFilter::default(), 200).unwrap();
    assert_eq!(
        all,
        vec![
            other_grant.clone(),
            first_tie.clone(),
            second_tie.clone(),
            by_grant.clone(),
            oldest.clone()
        ],
        "newest first, ties by id, anonymous excluded"
    );
    let top = store.links(company, LinkFilter::default(), 2).unwrap();
    assert_eq!(top, vec![other_grant.clone(), first_tie.clone()]);
    assert_eq!(
        store.links(company, LinkFilter::default(), 0).unwrap(),
        vec![]
    );
    assert_eq!(
        store
            .links(
                company,
                LinkFilter {
                    grant_id: Some(grant),
                    ..LinkFilter::default()
                },
                200
            )
            .unwrap(),
        vec![by_grant.clone()]
    );
    assert_eq!(
        store
            .links(
                company,
                LinkFilter {
                    grant_id: Some(Uuid::new_v4()),
                    ..LinkFilter::default()
                },
                200
            )
            .unwrap(),
        vec![]
    );
    assert_eq!(
        store
            .links(other.company.id, LinkFilter::default(), 200)
            .unwrap(),
        vec![foreign.clone()]
    );

    // By uid: every field round-trips (anonymous links too), only within the company.
    for l in [&oldest, &by_grant, &tie_a, &anonymous] {
        assert_eq!(store.link(company, &l.uid).unwrap().as_ref(), Some(l));
    }
    assert_eq!(store.link(other.company.id, &oldest.uid).unwrap(), None);
    assert_eq!(store.link(company, &foreign.uid).unwrap(), None);
    let unknown = LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap();
    assert_eq!(store.link(company, &unknown).unwrap(), None);
}

/// A list narrowed by status and by a search over order id, title and customer e-mail (any
/// case, a part of one field, never across two), newest first, within the company.
pub fn links_by_status_and_search<S: Ports>(store: &S) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    let company = t.company.id;
    let by = || CreatedBy::User(t.owner);
    let mut mug = link(company, T0, by());
    mug.payload.title = Some("Blue Mug".into());
    mug.payload.order_id = Some("ORD-77".into());
    mug.payload.customer_email = None;
    let mut shirt = link(company, T0 + 1000, by());
    shirt.payload.title = Some("Shirt".into());
    shirt.payload.order_id = None;
    shirt.payload.customer_email = Some("Mugsy@Example.com".into());
    shirt.status = LinkStatus::Paused;
    let mut plain = link(company, T0 + 2000, by());
    plain.payload.title = None;
    plain.payload.order_id = None;
    plain.payload.customer_email = None;
    plain.payload.description = Some("mug".into());
    let mut foreign = link(other.company.id, T0 + 3000, by());
    foreign.payload.title = Some("Blue Mug".into());
    for l in [&mug, &shirt, &plain, &foreign] {
        store.insert_link(l, None).unwrap();
    }
    let find = |status: Option<LinkStatus>, q: &str| {
        let filter = LinkFilter {
            status,
            search: crate::links::search_query(q),
            ..LinkFilter::default()
        };
        store.links(company, filter, 200).unwrap()
    };
    // Title, then e-mail, in any case; the description is not searched.
    assert_eq!(find(None, " MUG "), vec![shirt.clone(), mug.clone()]);
    assert_eq!(find(None, "ord-7"), vec![mug.clone()]);
    assert_eq!(find(None, "example.COM"), vec![shirt.clone()]);
    // Not across two fields, and a `%` or `_` is a character, not a pattern.
    assert_eq!(find(None, "77blue"), vec![]);
    assert_eq!(find(None, "ord%77"), vec![]);
    assert_eq!(find(None, "b_ue"), vec![]);
    // By status, alone and with a search.
    assert_eq!(find(Some(LinkStatus::Paused), ""), vec![shirt.clone()]);
    assert_eq!(
        find(Some(LinkStatus::Active), ""),
        vec![plain.clone(), mug.clone()]
    );
    assert_eq!(find(Some(LinkStatus::Active), "mug"), vec![mug.clone()]);
    assert_eq!(find(Some(LinkStatus::Archived), ""), vec![]);
}

pub fn link_status_compare_and_set<S: Ports>(store: &S) {
    let t = tenant("ann@example.com");
    store.create_tenant(&t).unwrap();
    let other = tenant("bob@example.com");
    store.create_tenant(&other).unwrap();
    let company = t.company.id;
    let l = link(company, T0, CreatedBy::User(t.owner));
    store.insert_link(&l, None).unwrap();

    use LinkStatus::*;
    assert!(store
        .set_link_status(company, &l.uid, Active, Paused, ts(T0 + 10), None)
        .unwrap());
    // Stale `from`: the status already moved.
    assert!(!store
        .set_link_status(company, &l.uid, Active, Archived, ts(T0 + 20), None)
        .unwrap());
    let now = store.link(company, &l.uid).unwrap().unwrap();
    assert_eq!(now.status, Paused);
    assert_eq!(now.updated_at, ts(T0 + 10));
    assert_eq!(now.created_at, l.created_at);
    // Another company cannot move it.
    assert!(!store
        .set_link_status(
            other.company.id,
            &l.uid,
            Paused,
            Archived,
            ts(T0 + 30),
            None
        )
        .unwrap());
    let unknown = LinkUid::parse(&random_alnum(LinkUid::LEN)).unwrap();
    assert!(!store
        .set_link_status(company, &unknown, Active, Paused, ts(T0), None)
        .unwrap());
    assert!(store
        .set_link_status(company, &l.uid, Paused, Archived, ts(T0 + 40), None)
        .unwrap());
    assert_eq!(
        store.link(company, &l.uid).unwrap().unwrap().status,
        Archived
    );
}

pub mod values;
use values::link;
use values::*;
