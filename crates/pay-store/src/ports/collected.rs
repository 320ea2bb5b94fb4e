//! `CheckoutStore::company_collected` on `DieselStore`: a company's sessions in one status since
//! a time, added up by UTC day and invoice asset. Both backends read a range of the index
//! `payment_sessions_company_status` (company, status, updated_at, id, invoice asset, invoice
//! amount), which holds every column read, so the table itself is not read. PostgreSQL adds
//! them up where they are (a hash aggregate; one row per day and asset comes back, the
//! amounts' exact texts joined, as neither backend sums decimal text exactly). SQLite sends the
//! range's three columns in index order and they are added up here: its GROUP BY would sort the
//! range first, and with the pool's small page cache that sort spilled to temporary files
//! (bench/dashboard.py: 100,000 sessions, the overview's time was mostly that sort).

use diesel::prelude::*;
use diesel::result::QueryResult;
use pay_domain::checkout::{collect_days, CollectedDay};
use pay_domain::kernel::amount::Decimal;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::{Fault, PortResult};

use crate::conn::AnyConnection;
use crate::schema::payment_sessions;

/// One day and invoice asset (PostgreSQL): the count, and the amounts' texts joined by commas.
#[derive(QueryableByName)]
pub(crate) struct DayRow {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    day: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    asset: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    amounts: String,
}

/// What the database answered.
pub(crate) enum Read {
    /// PostgreSQL: one row per day and asset.
    Days(Vec<DayRow>),
    /// SQLite: each session's (updated_at, invoice asset, invoice amount), in index order.
    Sessions(Vec<(i64, String, String)>),
}

const POSTGRES: &str = "SELECT updated_at / 86400000 AS day, invoice_asset AS asset, \
    COUNT(*) AS n, string_agg(invoice_amount, ',') AS amounts FROM payment_sessions \
    WHERE company_id = $1 AND status = $2 AND updated_at >= $3 \
    GROUP BY updated_at / 86400000, invoice_asset";

pub(crate) fn read(
    conn: &mut AnyConnection,
    company: &str,
    status: &str,
    since: i64,
) -> QueryResult<Read> {
    use diesel::sql_types::{BigInt, Text};
    match conn {
        AnyConnection::Postgresql(c) => diesel::sql_query(POSTGRES)
            .bind::<Text, _>(company)
            .bind::<Text, _>(status)
            .bind::<BigInt, _>(since)
            .load(c)
            .map(Read::Days),
        AnyConnection::Sqlite(c) => payment_sessions::table
            .filter(payment_sessions::company_id.eq(company))
            .filter(payment_sessions::status.eq(status))
            .filter(payment_sessions::updated_at.ge(since))
            .select((
                payment_sessions::updated_at,
                payment_sessions::invoice_asset,
                payment_sessions::invoice_amount,
            ))
            .load(c)
            .map(Read::Sessions),
    }
}

fn amount(text: &str) -> PortResult<Decimal> {
    Decimal::parse_stored(text)
        .map_err(|_| Fault::new("payment_sessions.invoice_amount: not a decimal"))
}

/// The days, day then asset ascending.
pub(crate) fn days(read: Read) -> PortResult<Vec<CollectedDay>> {
    match read {
        Read::Sessions(rows) => {
            let mut parsed = Vec::with_capacity(rows.len());
            for (at, asset, text) in &rows {
                let at = Timestamp::from_unix_millis(*at)
                    .ok_or_else(|| Fault::new("payment_sessions.updated_at: out of range"))?;
                parsed.push((at, asset.as_str(), amount(text)?));
            }
            collect_days(parsed)
        }
        Read::Days(rows) => {
            let mut days = Vec::with_capacity(rows.len());
            for r in rows {
                let mut sum = Decimal::ZERO;
                for text in r.amounts.split(',') {
                    sum = sum
                        .checked_add(amount(text)?)
                        .ok_or_else(|| Fault::new("collected amount overflows"))?;
                }
                days.push(CollectedDay {
                    day: r.day,
                    asset: r.asset,
                    count: u64::try_from(r.n)
                        .map_err(|_| Fault::new("payment_sessions: a negative count"))?,
                    amount: sum,
                });
            }
            days.sort_by(|a, b| (a.day, &a.asset).cmp(&(b.day, &b.asset)));
            Ok(days)
        }
    }
}
