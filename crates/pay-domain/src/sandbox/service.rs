//! Sandbox use cases: processor events a developer sends by hand, and each company's test
//! clock. Only in sandbox mode; otherwise their routes answer not found.

use crate::checkout::machine::{SessionEvent, SessionStatus};
use crate::checkout::CheckoutError;
use crate::checkout::{CheckoutService, PaymentSession, DUE_BATCH};
use crate::kernel::amount::{Decimal, DecimalError};
use std::sync::Arc;

use crate::kernel::error::{FieldError, NotFound, PortResult};
use crate::kernel::events::{DomainEvent, EventRecord};
use crate::kernel::ids::{CompanyId, EventId, LinkUid, PaymentSessionId};
use crate::kernel::observers::Observers;
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::links::LinkService;
use crate::sandbox::clock;
use crate::sandbox::ports::ClockFollower;
use crate::sandbox::SandboxError;
use crate::tenancy::{Principal, Scope, TenancyService};

/// Longest caller-given sandbox event id.
pub const MAX_EVENT_ID_LEN: usize = 200;

/// What the sandbox processor can be told to do (the contract's sandbox events).
#[derive(Debug, Clone, PartialEq)]
pub enum SandboxEvent {
    /// A deposit of `amount` of the pay asset; settled at once unless `hold`.
    Deposit { amount: Decimal, hold: bool },
    /// Settles a held deposit.
    Settle,
    /// The quote or the deposit request expires now.
    Expire,
    /// The processor gives up.
    Fail,
    /// Underpaid: the refund is decided; refund pending: the refund is sent.
    Refund,
}

impl SandboxEvent {
    /// The event a caller names (`type`), with `amount` (a positive decimal string) and `hold`
    /// for deposits only.
    pub fn parse(kind: &str, amount: Option<&str>, hold: Option<bool>) -> Result<Self, FieldError> {
        for (field, given) in [("amount", amount.is_some()), ("hold", hold.is_some())] {
            if given && kind != "deposit" {
                return Err(FieldError::new(
                    field,
                    format!("{field} is for deposit events only"),
                ));
            }
        }
        Ok(match kind {
            "deposit" => {
                let text =
                    amount.ok_or_else(|| FieldError::new("amount", "a deposit needs an amount"))?;
                let amount = match Decimal::parse(text) {
                    Ok(d) if !d.is_negative() && !d.is_zero() => d,
                    Err(DecimalError::LeadingZero) => {
                        return Err(FieldError::new(
                            "amount",
                            "amount must not start with a zero (\"7\", not \"007\")",
                        ))
                    }
                    _ => {
                        return Err(FieldError::new(
                            "amount",
                            "amount must be a positive decimal string",
                        ))
                    }
                };
                SandboxEvent::Deposit {
                    amount,
                    hold: hold.unwrap_or(false),
                }
            }
            "settle" => SandboxEvent::Settle,
            "expire" => SandboxEvent::Expire,
            "fail" => SandboxEvent::Fail,
            "refund" => SandboxEvent::Refund,
            _ => {
                return Err(FieldError::new(
                    "type",
                    "type must be deposit, settle, expire, fail or refund",
                ))
            }
        })
    }
}

/// The sandbox processor's events and the companies' test clocks.
#[derive(Clone)]
pub struct SandboxService {
    k: Kernel,
    tenancy: TenancyService,
    links: LinkService,
    checkout: CheckoutService,
    /// Sandbox mode: the sandbox events route and the companies' test clocks are on.
    enabled: bool,
    /// The work above the sandbox that follows a moved clock (the billing scheduler).
    followers: Observers<dyn ClockFollower>,
}

impl std::fmt::Debug for SandboxService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxService")
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

impl SandboxService {
    /// The sandbox events and test clocks (`enabled`: sandbox mode). It has no store of its own:
    /// it drives `checkout` and moves the company clock through `tenancy`; clock followers
    /// (`follow`) walk with each moved clock.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        links: LinkService,
        checkout: CheckoutService,
        enabled: bool,
    ) -> SandboxService {
        SandboxService {
            k,
            tenancy,
            links,
            checkout,
            enabled,
            followers: Observers::default(),
        }
    }

    /// `follower` walks with every moved test clock from now on (held weakly: the caller
    /// keeps it alive).
    pub fn follow(&self, follower: &Arc<dyn ClockFollower>) {
        self.followers.add(follower);
    }

    /// A sandbox event on the link's latest session, or on `session` of the link (sandbox
    /// mode only). `event_id` makes it idempotent: the same id is applied once.
    pub fn sandbox_event(
        &self,
        p: Option<&Principal>,
        uid: &LinkUid,
        event: SandboxEvent,
        event_id: Option<&str>,
        session: Option<PaymentSessionId>,
    ) -> Result<PaymentSession, CheckoutError> {
        if !self.enabled {
            return Err(crate::checkout::link_not_found().into());
        }
        let link = match p {
            Some(p) => {
                p.authorize(Scope::PaymentLinksWrite)?;
                self.links.readable_link::<CheckoutError>(p, uid)?
            }
            None => {
                let link = self.checkout.checkout_link(uid)?;
                if !link.is_anonymous() {
                    return Err(crate::checkout::link_not_found().into());
                }
                link
            }
        };
        if let Some(id) = event_id {
            if id.is_empty() || id.len() > MAX_EVENT_ID_LEN || id.chars().any(char::is_control) {
                return Err(FieldError::new(
                    "eventId",
                    format!("eventId is 1 to {MAX_EVENT_ID_LEN} printable characters"),
                )
                .into());
            }
        }
        let s = match session {
            Some(id) => self.checkout.session_of(&link, id)?,
            None => self.checkout.latest_session(&link)?,
        };
        // Sandbox ids are the caller's: namespaced by link, so `evt-1` on two links are two.
        let id = match event_id {
            Some(given) => format!("sandbox:{}:{given}", link.uid),
            None => format!("sandbox:{}", self.k.crypto.new_uuid().simple()),
        };
        let trigger = "sandbox_processor";
        match event {
            SandboxEvent::Deposit { amount, hold } => {
                self.checkout.deposit(&link, s, amount, hold, &id, trigger)
            }
            SandboxEvent::Settle => {
                self.checkout
                    .settle(&link, s, &format!("{id}:settled"), trigger)
            }
            SandboxEvent::Expire => {
                let ev = match s.status {
                    SessionStatus::Quote => SessionEvent::QuoteExpired,
                    _ => SessionEvent::RequestExpired,
                };
                self.checkout.simple_move(&link, s, ev, trigger, Some(&id))
            }
            SandboxEvent::Fail => {
                let mut s = s;
                s.error_message = Some("the processor could not complete the payment".into());
                self.checkout
                    .simple_move(&link, s, SessionEvent::Fail, trigger, Some(&id))
            }
            SandboxEvent::Refund => {
                let ev = match s.status {
                    SessionStatus::RefundPending => SessionEvent::Refunded,
                    _ => SessionEvent::RequestRefund,
                };
                if ev == SessionEvent::Refunded && s.settlement.refund_address.is_none() {
                    return Err(FieldError::new(
                        "type",
                        "the payer has not given a refund address yet",
                    )
                    .into());
                }
                self.checkout.simple_move(&link, s, ev, trigger, Some(&id))
            }
        }
    }

    /// The calling company's test clock (sandbox mode).
    pub fn test_clock_now(&self, p: &Principal) -> Result<Timestamp, SandboxError> {
        if !self.enabled {
            return Err(NotFound { kind: "Test clock" }.into());
        }
        p.authorize(Scope::SettingsRead)?;
        Ok(self.tenancy.company_now(p.company_id)?)
    }

    /// Moves the calling company's test clock forward by `seconds` (1 to one year; at most ten
    /// years ahead in all) and runs the work that became due, in order: the clock walks
    /// through each instant a follower has work at (a cycle's issue, reminder or overdue
    /// instant); each step's write carries a `DomainEvent::ClockMoved`, and at each step the
    /// due checkout work runs, then the reactions to the move (the billing scheduler's work for
    /// this company), as if the time had passed. Only that company's links, sessions, retries and
    /// subscriptions follow it; a credential that may change the company's settings moves it.
    pub fn advance_test_clock(
        &self,
        p: &Principal,
        seconds: i64,
    ) -> Result<Timestamp, SandboxError> {
        if !self.enabled {
            return Err(NotFound { kind: "Test clock" }.into());
        }
        p.authorize(Scope::SettingsWrite)?;
        let by = clock::advance_ms(seconds)?;
        let too_far = || {
            FieldError::new(
                "advanceSeconds",
                "the test clock may run at most ten years ahead of real time",
            )
        };
        let (company, _) = self.tenancy.company_with_settings(p.company_id)?;
        if company.test_clock_offset_ms.saturating_add(by) > clock::MAX_OFFSET_MS {
            return Err(too_far().into());
        }
        let mut at = self.tenancy.company_now_of(&company);
        let target = at.plus(time::Duration::milliseconds(by));
        let mut offset = company.test_clock_offset_ms;
        // What is due already runs first (nothing has moved yet: the followers' work at the
        // present instant, as their own schedulers would run it); then each step ahead runs at
        // its own instant.
        self.run_checkout_due()?;
        for f in self.followers.each() {
            f.run_due(p.company_id, target)?;
        }
        while at < target {
            let step_to = self
                .next_follower_instant(p.company_id, at)?
                .filter(|t| *t < target)
                .unwrap_or(target);
            // The move writes its event in its own transaction; the store's check stays the
            // guard (another request may move the clock too).
            let moved = EventRecord::new(
                EventId(self.k.crypto.new_uuid()),
                DomainEvent::ClockMoved {
                    company: p.company_id,
                    until: target,
                },
                self.k.now(),
            );
            offset = self
                .tenancy
                .advance_test_clock(
                    p.company_id,
                    step_to.unix_millis() - at.unix_millis(),
                    clock::MAX_OFFSET_MS,
                    &moved,
                )?
                .ok_or_else(too_far)?;
            at = step_to;
            // The checkout's due work on the moved clock, then the reactions to the move (the
            // billing scheduler's work at this step, `DomainEvent::ClockMoved`); a crash in
            // between leaves the event to the drain.
            self.run_checkout_due()?;
            self.k
                .events
                .deliver(std::slice::from_ref(&moved), self.k.now())?;
        }
        Ok(crate::tenancy::company_now(self.k.now(), offset))
    }

    /// The earliest instant after `after` at which any follower has work for `company`.
    fn next_follower_instant(
        &self,
        company: CompanyId,
        after: Timestamp,
    ) -> PortResult<Option<Timestamp>> {
        let mut next: Option<Timestamp> = None;
        for f in self.followers.each() {
            if let Some(t) = f.next_due_after(company, after)? {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        Ok(next)
    }

    /// What a step of the clock makes due in checkout: link and session expiry (in bounded
    /// rounds).
    fn run_checkout_due(&self) -> Result<(), SandboxError> {
        // The company's links may have expired on its new clock.
        self.links.changed();
        for _ in 0..100 {
            let report = self.checkout.run_due_work(DUE_BATCH)?;
            if report.moved == 0 {
                break;
            }
        }
        Ok(())
    }
}
