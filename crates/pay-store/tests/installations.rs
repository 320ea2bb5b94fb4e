//! `PlatformStore` on `DieselStore`: the conformance case on SQLite and PostgreSQL (the latter
//! skips without `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(
    installations: a_platform_template_is_written_once,
    an_installation_is_written_once_with_its_application,
    a_key_swap_at_consent_is_atomic,
    a_company_lists_its_grants
);
