//! The merchant's overview of payments (the dashboard's Home): what completed payments
//! collected per invoice asset, today and over the last days, day by day, and the underpaid
//! sessions that wait for the merchant's decision. Reads only: the checkout store's
//! `company_collected` (the completed sessions added up by day and asset: a daily roll-up on
//! the database stores) and `company_sessions_in` (the underpaid ones), both over an index.

use super::*;
use crate::checkout::DAY_MILLIS;

/// The days the overview covers, today included.
pub const SUMMARY_DAYS: usize = 30;
/// Underpaid sessions listed at most.
const UNDERPAID_MAX: usize = 20;

/// What completed payments collected in one invoice asset.
#[derive(Debug, Clone, PartialEq)]
pub struct Collected {
    /// The invoice unit (a fiat currency such as `USD`, or an asset identifier).
    pub asset: String,
    pub today: Decimal,
    pub today_count: u64,
    pub days: Decimal,
    pub days_count: u64,
}

/// The overview of a company's payments on its clock (days are UTC days).
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentsSummary {
    /// Now on the company's clock.
    pub now: Timestamp,
    /// Per invoice asset, by name.
    pub collected: Vec<Collected>,
    /// Completed payments per day, oldest first, `SUMMARY_DAYS` entries (the last is today).
    pub daily_counts: Vec<u64>,
    /// Underpaid sessions, newest change first.
    pub underpaid: Vec<PaymentSession>,
}

impl CheckoutService {
    /// The overview of the caller's company's payments (`PaymentLinksRead`): collected
    /// amounts and counts of completed sessions, by the UTC day of their last change (their
    /// completion), and the underpaid sessions.
    pub fn payments_summary(&self, p: &Principal) -> CheckoutResult<PaymentsSummary> {
        p.authorize(Scope::PaymentLinksRead)?;
        let now = self.tenancy.company_now(p.company_id)?;
        let today = now.datetime().date();
        let first_day = today - time::Duration::days(SUMMARY_DAYS as i64 - 1);
        let since = Timestamp::from_datetime(first_day.midnight().assume_utc());
        // Added up by the store, one row per day and asset: every completed session counts,
        // however many the company has.
        let first = since.unix_millis().div_euclid(DAY_MILLIS);
        let days = self.store.company_collected(p.company_id, first)?;
        let today_n = now.unix_millis().div_euclid(DAY_MILLIS);
        let mut daily_counts = vec![0u64; SUMMARY_DAYS];
        let mut collected: Vec<Collected> = Vec::new();
        for d in &days {
            let Some(i) = usize::try_from(d.day - first)
                .ok()
                .filter(|i| *i < SUMMARY_DAYS)
            else {
                continue;
            };
            daily_counts[i] += d.count;
            let at = match collected.iter().position(|c| c.asset == d.asset) {
                Some(at) => at,
                None => {
                    collected.push(Collected {
                        asset: d.asset.clone(),
                        today: Decimal::ZERO,
                        today_count: 0,
                        days: Decimal::ZERO,
                        days_count: 0,
                    });
                    collected.len() - 1
                }
            };
            let c = &mut collected[at];
            let overflow = || Fault::new("collected amount overflows");
            c.days = c.days.checked_add(d.amount).ok_or_else(overflow)?;
            c.days_count += d.count;
            if d.day == today_n {
                c.today = c.today.checked_add(d.amount).ok_or_else(overflow)?;
                c.today_count += d.count;
            }
        }
        collected.sort_by(|a, b| a.asset.cmp(&b.asset));
        let underpaid = self.store.company_sessions_in(
            p.company_id,
            SessionStatus::Underpaid,
            Timestamp::from_unix_millis(0).ok_or_else(|| Fault::new("epoch"))?,
            UNDERPAID_MAX,
        )?;
        Ok(PaymentsSummary {
            now,
            collected,
            daily_counts,
            underpaid,
        })
    }
}
