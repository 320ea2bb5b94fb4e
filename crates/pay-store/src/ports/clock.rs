//! Per-company sandbox test clocks: a company's clock is real time plus its
//! `companies.test_clock_offset_ms`. Moving one is one statement; due scans compare what a
//! company scheduled against that company's own clock, and leases against real time.

use diesel::dsl::{max, sql};
use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::{BigInt, Bool};

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
) -> diesel::expression::SqlLiteral<
    Bool,
    diesel::expression::UncheckedBind<
        diesel::expression::SqlLiteral<Bool>,
        <i64 as diesel::expression::AsExpression<BigInt>>::Expression,
    >,
> {
    let offset = if any_moved {
        format!(
            " + COALESCE((SELECT c.test_clock_offset_ms FROM companies c \
             WHERE c.id = {table}.{company_column}), 0)"
        )
    } else {
        String::new()
    };
    sql::<Bool>(&format!("{table}.{column} <= "))
        .bind::<BigInt, _>(now)
        .sql(&offset)
}
