//! Companies: the verified payment-link domain is set, read back at once (no stale cached
//! read), cleared, and belongs to one company at most.

use super::fixtures::*;
use crate::kernel::ids::CompanyId;
use crate::tenancy::ports::{DomainWrite, TenancyStore};

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
