//! `OnboardingStore` on `DieselStore`: the conformance cases on SQLite and PostgreSQL (the
//! latter skips without `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(
    onboarding: drafts_are_unique_per_partner_and_key,
    a_draft_is_claimed_once
);
