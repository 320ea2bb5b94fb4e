//! `TenancyStore`'s company writes on `DieselStore`, run against SQLite and PostgreSQL alike:
//! each case below becomes a `sqlite` and a `postgres` test (the latter skips without
//! `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(
    tenancy: a_payment_link_domain_belongs_to_one_company,
    a_reset_ends_the_sign_ins_of_the_company_members
);
