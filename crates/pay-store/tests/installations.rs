//! `PlatformStore` on `DieselStore`: the conformance case on SQLite and PostgreSQL (the latter
//! skips without `PAY_TEST_POSTGRES_URL`).

#[macro_use]
mod common;
use common::*;

conformance!(installations: a_platform_template_is_written_once);
