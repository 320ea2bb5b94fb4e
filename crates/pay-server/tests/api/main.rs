//! Black-box API tests: each test spawns the real server on port 0 with its own database and
//! drives it over HTTP. Every test runs twice, on SQLite and on PostgreSQL (the latter skips
//! with a printed line when `PAY_TEST_POSTGRES_URL` is unset, and fails instead under
//! `PAY_REQUIRE_ALL_TESTS=1`).

mod helpers;

#[path = "../support/openmetrics.rs"]
mod openmetrics;

mod anonymous;
mod billing_year;
mod books;
mod books_export;
mod books_files;
mod canonical_host;
mod checkout;
mod checkout_page;
mod clocks;
mod companies;
mod company;
mod credentials;
mod customers;
mod dashboard;
mod dashboard_apps;
mod dashboard_bookkeeping;
mod dashboard_bookkeeping_access;
mod dashboard_customers;
mod dashboard_keys;
mod dashboard_links;
mod dashboard_settings;
mod dashboard_subscriptions;
mod dashboard_team;
mod dashboard_webhooks;
mod events;
mod gateway;
mod grant_webhooks;
mod idempotent_creates;
mod links;
mod mail;
mod mail_flood;
mod meta;
mod metrics;
mod metrics_events;
mod metrics_jobs;
mod moved_clock;
mod native;
mod native_recovery;
mod native_reset;
mod native_retained;
mod oauth;
mod oauth_instances;
mod oauth_nonces;
mod oauth_pages;
mod oauth_support;
mod onboarding;
mod portal;
mod portal_rights;
mod refund_address;
mod review_lows;
mod settings;
mod strict_json;
mod subscriptions;
mod underpaid;
mod wallets;
mod webhook_fairness;
mod webhook_safety;
mod webhooks;
