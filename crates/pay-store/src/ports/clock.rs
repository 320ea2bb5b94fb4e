//! Per-company sandbox test clocks: a company's clock is real time plus its
//! `companies.test_clock_offset_ms`. Moving one is one statement; due scans compare what a
//! company scheduled against that company's own clock, and leases against real time.

use diesel::backend::Backend;
use diesel::dsl::max;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::result::QueryResult;
use diesel::serialize::ToSql;
use diesel::sql_types::BigInt;

use crate::conn::AnyConnection;
use crate::schema::companies;

/// The largest offset of any company's test clock (0 while none moved): due scans first
/// select rows due by `now + max` (the index's range, exactly today's scan in production),
/// then keep the rows due on their own company's clock.
pub(super) fn max_clock_offset(conn: &mut AnyConnection) -> QueryResult<i64> {
    companies::table
        .filter(companies::test_clock_offset_ms.gt(0))
        .select(max(companies::test_clock_offset_ms))
        .first::<Option<i64>>(conn)
        .map(|m| m.unwrap_or(0))
}

/// `{table}.{column} <= ? + <the offset of the row's company>`, with `now` bound: a row of a
/// table with a `company_id` column, due on its company's clock. A company without a row (the
/// anonymous links' owner) runs on real time. When no clock moved, a plain `<= ?`.
pub(super) fn due_on_company_clock(
    table: &'static str,
    column: &'static str,
    company_column: &'static str,
    now: i64,
    any_moved: bool,
) -> DueOnCompanyClock {
    DueOnCompanyClock {
        table,
        column,
        company_column,
        now,
        any_moved,
    }
}

/// `due_on_company_clock`'s condition. Unlike a `sql()` literal, which diesel never caches, a
/// statement holding it is prepared once per connection: its text depends only on the names
/// and on whether a clock moved (diesel's cache keys such a statement by its text), and `now`
/// is its one bound value.
#[derive(Debug, Clone, Copy)]
pub(super) struct DueOnCompanyClock {
    table: &'static str,
    column: &'static str,
    company_column: &'static str,
    now: i64,
    any_moved: bool,
}

// Its text varies with the names and the moved clock.
bool_condition!(DueOnCompanyClock);

impl<DB> QueryFragment<DB> for DueOnCompanyClock
where
    DB: Backend,
    i64: ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let DueOnCompanyClock {
            table,
            column,
            company_column,
            ..
        } = *self;
        // In pieces: diesel walks the condition several times per statement (its text, the
        // cache's key, the binds), and pushing text is free on the walks that build none.
        for piece in [table, ".", column, " <= "] {
            out.push_sql(piece);
        }
        out.push_bind_param::<BigInt, i64>(&self.now)?;
        if self.any_moved {
            for piece in [
                " + COALESCE((SELECT c.test_clock_offset_ms FROM companies c WHERE c.id = ",
                table,
                ".",
                company_column,
                "), 0)",
            ] {
                out.push_sql(piece);
            }
        }
        Ok(())
    }
}
