//! The daily roll-up behind `CheckoutStore::company_collected` on `DieselStore`: the table
//! `collected_days` (company, UTC day, invoice asset: completed sessions and their invoice
//! amounts added up), changed by `write_link_event` in the transaction that writes the session
//! (`follow`), read as a range of its primary key (`read`). The overview reads at most 30 days
//! times the company's assets of rows, however many sessions the company has.
//!
//! The sums are exact without a decimal type on either backend: an amount (at most 18 integer
//! and 18 fractional digits, `Decimal`) is cut into four 9-digit groups, each added up as a
//! BIGINT in one upsert (`ON CONFLICT ... DO UPDATE`, atomic on PostgreSQL under concurrent
//! completions, same SQL on SQLite), and put together again when read. A reversal (a completed
//! session that leaves `complete`, or changes day or asset) adds the same groups negated.
//! The shown scale (`fraction_digits`) is the most fractional digits of any amount added to the
//! day, one reversed since included: it never drops digits, and a value is unchanged by it.

use diesel::prelude::*;
use diesel::result::QueryResult;
use diesel::sql_types::{BigInt, Text};
use pay_domain::checkout::machine::SessionStatus;
use pay_domain::checkout::{CollectedDay, DAY_MILLIS};
use pay_domain::kernel::amount::{Decimal, MAX_SCALE};
use pay_domain::{Fault, PortResult};

use crate::conn::AnyConnection;
use crate::schema::{collected_days, payment_sessions};

/// 10^9: the size of one digit group.
const GROUP: u128 = 1_000_000_000;

/// What a session adds to the roll-up while it is complete: its company, day and invoice
/// asset, and its amount in groups.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Counted {
    company: String,
    day: i64,
    asset: String,
    /// units_high, units_low, fraction_high, fraction_low.
    groups: [i64; 4],
    fraction_digits: i64,
}

impl Counted {
    /// What a session row counts for: `None` unless it is complete.
    pub(crate) fn of(
        status: &str,
        company: &str,
        updated_at: i64,
        asset: &str,
        amount: &str,
    ) -> PortResult<Option<Counted>> {
        if status != SessionStatus::Complete.as_str() {
            return Ok(None);
        }
        let corrupt = || Fault::new("payment_sessions.invoice_amount: not an amount");
        let value = Decimal::parse_stored(amount).map_err(|_| corrupt())?;
        if value.is_negative() {
            return Err(corrupt());
        }
        let m = value.mantissa_at(MAX_SCALE).ok_or_else(corrupt)?;
        let group = |g: u128| i64::try_from(g % GROUP).map_err(|_| corrupt());
        let (units, fraction) = (m / GROUP.pow(2), m % GROUP.pow(2));
        if units >= GROUP.pow(2) {
            return Err(corrupt());
        }
        Ok(Some(Counted {
            company: company.to_owned(),
            day: updated_at.div_euclid(DAY_MILLIS),
            asset: asset.to_owned(),
            groups: [
                group(units / GROUP)?,
                group(units)?,
                group(fraction / GROUP)?,
                group(fraction)?,
            ],
            fraction_digits: i64::from(value.scale()),
        }))
    }
}

/// The session row a compare-and-set update replaces, as counted (`Ok(None)` inside: not
/// complete); `None` when no row has that id, link and version (the update is stale).
pub(crate) fn before_update(
    conn: &mut AnyConnection,
    id: &str,
    link: &str,
    version: i64,
) -> QueryResult<Option<PortResult<Option<Counted>>>> {
    let row: Option<(String, String, i64, String, String)> = payment_sessions::table
        .filter(payment_sessions::id.eq(id))
        .filter(payment_sessions::link_id.eq(link))
        .filter(payment_sessions::version.eq(version))
        .select((
            payment_sessions::status,
            payment_sessions::company_id,
            payment_sessions::updated_at,
            payment_sessions::invoice_asset,
            payment_sessions::invoice_amount,
        ))
        .first(conn)
        .optional()?;
    Ok(row.map(|(status, company, at, asset, amount)| {
        Counted::of(&status, &company, at, &asset, &amount)
    }))
}

const ADD_SQLITE: &str = "INSERT INTO collected_days (company_id, day, invoice_asset, payments, \
    units_high, units_low, fraction_high, fraction_low, fraction_digits) \
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (company_id, day, invoice_asset) DO UPDATE SET \
    payments = collected_days.payments + excluded.payments, \
    units_high = collected_days.units_high + excluded.units_high, \
    units_low = collected_days.units_low + excluded.units_low, \
    fraction_high = collected_days.fraction_high + excluded.fraction_high, \
    fraction_low = collected_days.fraction_low + excluded.fraction_low, \
    fraction_digits = CASE WHEN excluded.fraction_digits > collected_days.fraction_digits \
    THEN excluded.fraction_digits ELSE collected_days.fraction_digits END";

/// `ADD_SQLITE` with PostgreSQL's numbered placeholders.
fn add_postgres() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        let mut n = 0;
        ADD_SQLITE
            .split('?')
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part.to_owned()
                } else {
                    n += 1;
                    format!("${n}{part}")
                }
            })
            .collect()
    })
}

/// Adds a session's figures to its day (`sign` 1), or takes them off (`sign` -1): one upsert.
fn add(conn: &mut AnyConnection, c: &Counted, sign: i64) -> QueryResult<()> {
    macro_rules! run {
        ($sql:expr, $conn:expr) => {
            diesel::sql_query($sql)
                .bind::<Text, _>(&c.company)
                .bind::<BigInt, _>(c.day)
                .bind::<Text, _>(&c.asset)
                .bind::<BigInt, _>(sign)
                .bind::<BigInt, _>(sign * c.groups[0])
                .bind::<BigInt, _>(sign * c.groups[1])
                .bind::<BigInt, _>(sign * c.groups[2])
                .bind::<BigInt, _>(sign * c.groups[3])
                .bind::<BigInt, _>(c.fraction_digits)
                .execute($conn)
        };
    }
    match conn {
        AnyConnection::Sqlite(s) => run!(ADD_SQLITE, s),
        AnyConnection::Postgresql(p) => run!(add_postgres(), p),
    }
    .map(drop)
}

/// Moves the roll-up from what the session counted for before a write to what it counts for
/// after (either may be nothing): in the write's transaction.
pub(crate) fn follow(
    conn: &mut AnyConnection,
    before: Option<&Counted>,
    after: Option<&Counted>,
) -> QueryResult<()> {
    if before == after {
        return Ok(());
    }
    if let Some(b) = before {
        add(conn, b, -1)?;
    }
    if let Some(a) = after {
        add(conn, a, 1)?;
    }
    Ok(())
}

type DayRow = (i64, String, i64, i64, i64, i64, i64, i64);

/// The company's rows from `first_day` on, day then asset (the primary key's order).
pub(crate) fn read(
    conn: &mut AnyConnection,
    company: &str,
    first_day: i64,
) -> QueryResult<Vec<DayRow>> {
    collected_days::table
        .filter(collected_days::company_id.eq(company))
        .filter(collected_days::day.ge(first_day))
        .order((collected_days::day, collected_days::invoice_asset))
        .select((
            collected_days::day,
            collected_days::invoice_asset,
            collected_days::payments,
            collected_days::units_high,
            collected_days::units_low,
            collected_days::fraction_high,
            collected_days::fraction_low,
            collected_days::fraction_digits,
        ))
        .load(conn)
}

/// The rows put together: each day's groups carried into one exact decimal at the most
/// fractional digits of its amounts. A day whose every payment was reversed is left out.
pub(crate) fn days(rows: Vec<DayRow>) -> PortResult<Vec<CollectedDay>> {
    let corrupt = |what: &str| Fault::new(format!("collected_days: {what}"));
    let mut days = Vec::with_capacity(rows.len());
    for (day, asset, payments, uh, ul, fh, fl, digits) in rows {
        if payments == 0 {
            continue;
        }
        let groups = [uh, ul, fh, fl].map(u128::try_from);
        let [Ok(uh), Ok(ul), Ok(fh), Ok(fl)] = groups else {
            return Err(corrupt("a negative sum"));
        };
        let scale = u32::try_from(digits)
            .ok()
            .filter(|d| *d <= MAX_SCALE)
            .ok_or_else(|| corrupt("fraction digits out of range"))?;
        // At 18 fractional digits: uh * 10^27 + ul * 10^18 + fh * 10^9 + fl.
        let at_18 = uh
            .checked_mul(GROUP.pow(3))
            .and_then(|x| x.checked_add(ul.checked_mul(GROUP.pow(2))?))
            .and_then(|x| x.checked_add(fh.checked_mul(GROUP)?))
            .and_then(|x| x.checked_add(fl))
            .ok_or_else(|| Fault::new("collected amount overflows"))?;
        let drop = 10u128.pow(MAX_SCALE - scale);
        if at_18 % drop != 0 {
            return Err(corrupt("more fractional digits than recorded"));
        }
        let amount = Decimal::from_mantissa(at_18 / drop, scale)
            .ok_or_else(|| corrupt("fraction digits out of range"))?;
        days.push(CollectedDay {
            day,
            asset,
            count: u64::try_from(payments).map_err(|_| corrupt("a negative count"))?,
            amount,
        });
    }
    Ok(days)
}
