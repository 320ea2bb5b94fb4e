//! Reminder e-mails of a cycle: when each is due (a sensible local hour in the subscription's
//! zone) and what it says (every value escaped).

use chrono::{DateTime, Days, NaiveTime, TimeZone};
use chrono_tz::Tz;

use crate::kernel::html::escape;
use crate::kernel::timestamp::Timestamp;
use crate::mail::RenderedMail;
use crate::subscriptions::{Cycle, Subscription};

/// The local hour reminders go out at.
pub const REMINDER_HOUR: u32 = 9;

/// The reminders of a cycle, in order (the number is the stage `Cycle::reminders` records).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReminderStage {
    /// Three days before the due date.
    BeforeDue = 1,
    /// On the due date.
    OnDue = 2,
    /// Two days after the due date (always 24 h or more past due).
    Overdue = 3,
}

impl ReminderStage {
    pub const ALL: [ReminderStage; 3] = [
        ReminderStage::BeforeDue,
        ReminderStage::OnDue,
        ReminderStage::Overdue,
    ];

    pub fn number(self) -> u8 {
        self as u8
    }

    /// Days from the due date (local) to the reminder's date.
    fn day_offset(self) -> i64 {
        match self {
            ReminderStage::BeforeDue => -3,
            ReminderStage::OnDue => 0,
            ReminderStage::Overdue => 2,
        }
    }

    /// When this reminder of a cycle due at `due` goes out: `REMINDER_HOUR`:00 local time in
    /// `zone` on the due date plus the stage's offset (the first instant of that hour when a
    /// clock change makes it ambiguous, the hour after when it skips it).
    pub fn at(self, due: Timestamp, zone: Tz) -> Option<Timestamp> {
        let local = DateTime::from_timestamp_millis(due.unix_millis())?
            .with_timezone(&zone)
            .date_naive();
        let off = self.day_offset();
        let date = if off < 0 {
            local.checked_sub_days(Days::new(off.unsigned_abs()))?
        } else {
            local.checked_add_days(Days::new(off.unsigned_abs()))?
        };
        let at_hour = |h: u32| {
            zone.from_local_datetime(&date.and_time(NaiveTime::from_hms_opt(h, 0, 0)?))
                .earliest()
        };
        let dt = at_hour(REMINDER_HOUR).or_else(|| at_hour(REMINDER_HOUR + 1))?;
        Timestamp::from_unix_millis(dt.timestamp_millis())
    }
}

/// The reminder a cycle should get at `now`: the latest stage whose time has come and that was
/// not handled yet. Stages whose time came before the link was issued are skipped (the new
/// invoice is news enough). `horizon` is where the clock is going: `now` for the scheduler,
/// the end of the move while a test clock walks; a stage that a later stage follows by then
/// is recorded but not mailed, so a clock jump sends each cycle at most the one reminder that
/// is due when it ends, not the ones it walked past. Returns the stage to record and whether
/// a mail goes out.
pub fn due_reminder(
    cycle: &Cycle,
    zone: Tz,
    now: Timestamp,
    horizon: Timestamp,
) -> Option<(ReminderStage, bool)> {
    if !cycle.status.is_unpaid() {
        return None;
    }
    let issued = cycle.issued_at?;
    let latest = ReminderStage::ALL
        .into_iter()
        .filter(|s| s.number() > cycle.reminders)
        .filter_map(|s| s.at(cycle.due_at, zone).map(|at| (s, at)))
        .rfind(|(_, at)| *at <= now)?;
    let superseded = ReminderStage::ALL
        .into_iter()
        .filter(|s| *s > latest.0)
        .filter_map(|s| s.at(cycle.due_at, zone))
        .any(|at| at <= horizon.max(now));
    Some((latest.0, latest.1 >= issued && !superseded))
}

/// When the next reminder of a cycle is due, if it gets one.
pub fn next_reminder_at(cycle: &Cycle, zone: Tz) -> Option<Timestamp> {
    if !cycle.status.is_unpaid() {
        return None;
    }
    ReminderStage::ALL
        .into_iter()
        .filter(|s| s.number() > cycle.reminders)
        .filter_map(|s| s.at(cycle.due_at, zone))
        .min()
}

/// The reminder mail of a cycle, with its invoice's hosted checkout URL.
pub fn render_reminder(
    sub: &Subscription,
    cycle: &Cycle,
    stage: ReminderStage,
    pay_url: &str,
) -> RenderedMail {
    let label: String = sub.label.split_whitespace().collect::<Vec<_>>().join(" ");
    let due = local_date(cycle.due_at, sub.zone);
    let (subject, line) = match stage {
        ReminderStage::BeforeDue => (
            format!("Upcoming payment: {label}, due {due}"),
            format!(
                "Your payment of {} USD for {label} is due on {due}.",
                cycle.amount_usd
            ),
        ),
        ReminderStage::OnDue => (
            format!("Payment due today: {label}"),
            format!(
                "Your payment of {} USD for {label} is due today ({due}).",
                cycle.amount_usd
            ),
        ),
        ReminderStage::Overdue => (
            format!("Payment overdue: {label}"),
            format!(
                "Your payment of {} USD for {label} was due on {due} and is still open.",
                cycle.amount_usd
            ),
        ),
    };
    let text = format!("{line}\n\nPay here: {pay_url}\n");
    let html = format!(
        "<!doctype html><html><body><p>{}</p><p><a href=\"{}\">Pay now</a></p></body></html>",
        escape(&line),
        escape(pay_url)
    );
    RenderedMail {
        subject,
        text,
        html,
    }
    .neutralised()
}

/// The calendar date of `t` in `zone` (`2026-01-31`): what reminders and the customer portal
/// show for a due date.
pub fn local_date(t: Timestamp, zone: Tz) -> String {
    DateTime::from_timestamp_millis(t.unix_millis())
        .map(|d| d.with_timezone(&zone).date_naive().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        Timestamp::from_datetime(
            time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap(),
        )
    }

    #[test]
    fn reminders_go_out_at_nine_local() {
        let ny: Tz = "America/New_York".parse().unwrap();
        // Due 2026-03-10 18:30 New York (EDT, UTC-4).
        let due = ts("2026-03-10T22:30:00Z");
        // Three days before: 2026-03-07, still EST (UTC-5).
        assert_eq!(
            ReminderStage::BeforeDue.at(due, ny).unwrap().to_rfc3339(),
            "2026-03-07T14:00:00.000Z"
        );
        assert_eq!(
            ReminderStage::OnDue.at(due, ny).unwrap().to_rfc3339(),
            "2026-03-10T13:00:00.000Z"
        );
        assert_eq!(
            ReminderStage::Overdue.at(due, ny).unwrap().to_rfc3339(),
            "2026-03-12T13:00:00.000Z"
        );
        let kolkata: Tz = "Asia/Kolkata".parse().unwrap();
        assert_eq!(
            ReminderStage::OnDue.at(due, kolkata).unwrap().to_rfc3339(),
            // 04:00 on the 11th in Kolkata: the local due date is the 11th.
            "2026-03-11T03:30:00.000Z"
        );
    }

    #[test]
    fn a_clock_jump_announces_only_the_reminder_due_when_it_ends() {
        use crate::kernel::ids::{CompanyId, CycleId, SubscriptionId};
        use crate::subscriptions::CycleStatus;
        let utc: Tz = "UTC".parse().unwrap();
        let due = ts("2027-03-10T12:00:00Z");
        let mut c = Cycle {
            id: CycleId(uuid::Uuid::nil()),
            subscription_id: SubscriptionId(uuid::Uuid::nil()),
            company_id: CompanyId(uuid::Uuid::nil()),
            sequence: 1,
            due_at: due,
            amount_usd: "5.00".into(),
            status: CycleStatus::Open,
            payment_link_id: None,
            payment_link_uid: None,
            issued_at: Some(ts("2027-03-01T00:00:00Z")),
            paid_at: None,
            reminders: 0,
            created_at: due,
            updated_at: due,
        };
        let before = ts("2027-03-07T09:00:00Z");
        let on = ts("2027-03-10T09:00:00Z");
        let after = ts("2027-03-12T09:00:00Z");
        // The scheduler (horizon = now): each stage at its time.
        assert_eq!(
            due_reminder(&c, utc, before, before),
            Some((ReminderStage::BeforeDue, true))
        );
        // A walk to a point past the due-day reminder: the before-due one is recorded only.
        assert_eq!(
            due_reminder(&c, utc, before, on),
            Some((ReminderStage::BeforeDue, false))
        );
        c.reminders = 1;
        assert_eq!(
            due_reminder(&c, utc, on, after),
            Some((ReminderStage::OnDue, false))
        );
        c.reminders = 2;
        // The last stage is never superseded: due when the walk ends, it goes out.
        assert_eq!(
            due_reminder(&c, utc, after, ts("2028-03-01T00:00:00Z")),
            Some((ReminderStage::Overdue, true))
        );
        // A horizon before now is now.
        c.reminders = 0;
        assert_eq!(
            due_reminder(&c, utc, on, before),
            Some((ReminderStage::OnDue, true))
        );
    }
}
