//! Checkout use cases: the public view of a link, a payer's session from quote to payment,
//! what the processor (or the sandbox) reports, the merchant's manual resolution, and the
//! expiry work. Every session move is one store write holding the session row (compare and
//! set), its timeline entries and its webhook deliveries.

use std::sync::Arc;

use crate::checkout::error::CheckoutResult;
use crate::checkout::machine::{transition, SessionEvent, SessionStatus};
use crate::checkout::ports::{PriceSource, Processor};
use crate::checkout::quote::{self, QuoteRequest};
use crate::checkout::tolerance;
use crate::checkout::CheckoutStore;
use crate::checkout::{
    CheckoutError, LinkAlreadyPaid, PaymentUnderWay, PriceUnavailable, SessionTransition,
    StartBlocked,
};
use crate::checkout::{DepositsLeftReason, QuoteFacts, TimelineFacts, TimelineKind};
use crate::checkout::{
    LinkEventWrite, PaymentSession, SessionChange, TimelineEvent, WriteOutcome, DEPOSIT_WINDOW,
};
use crate::checkout::{RefundReason, ResolutionRecord, Settlement};
use crate::kernel::amount::{Amount, Decimal};
use crate::kernel::assets::{fiat_decimals, DestinationAsset};
use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::kernel::events::{Consumed, Consumer, DomainEvent, EventConsumer, EventRecord};
use crate::kernel::ids::{EventId, LinkUid, PaymentSessionId};
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::links::LinkNotActive;
use crate::links::{LinkService, LINK_NOT_FOUND};
use crate::links::{LinkState, LinkStatus, PaymentLink};
use crate::settings::PaySettings;
use crate::tenancy::TenancyService;
use crate::tenancy::{Principal, Scope, Theme};
use crate::webhooks::PaymentEvent;
use crate::webhooks::WebhookService;
use crate::webhooks::{Delivery, EventKind};

/// How often a write that lost a compare-and-set race is re-read and re-decided.
const WRITE_ATTEMPTS: usize = 5;
/// Sessions per round of expiry work.
pub const DUE_BATCH: usize = 200;
/// What payers see of a link: the public checkout view.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckoutView {
    pub link: PaymentLink,
    /// Only `Active` takes new payments.
    pub state: LinkState,
    /// The amount's display unit: the link's fiat currency, else its settlement symbol.
    pub display_currency: String,
    pub merchant_name: String,
    pub logo_url: Option<String>,
    pub theme: Theme,
    /// Assets the payer can pay with.
    pub pay_assets: Vec<DestinationAsset>,
    pub review_required: bool,
    /// Now on the clock of the link's company (countdowns).
    pub now: Timestamp,
    pub success_url: Option<String>,
    pub failure_url: Option<String>,
    pub return_url: Option<String>,
    /// The fee the payer pays on top of the amount, when the payer pays it (shown beside the
    /// amount, so the quote's total is explained).
    pub payer_fee: Option<quote::PayerFee>,
    /// Payments here are the sandbox processor's: no real funds move (the page says so).
    pub sandbox: bool,
}

/// A link with its latest session and timeline (the API's link detail).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkDetail {
    pub link: PaymentLink,
    pub latest_session: Option<PaymentSession>,
    pub timeline: Vec<TimelineEvent>,
}

/// The merchant's decision on an underpaid session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Keep what arrived and complete the payment.
    Complete,
    /// Refund what arrived; the payer's address is requested.
    Refund,
}

impl Resolution {
    /// `complete` or `refund` (the `action` of the manual-resolution route).
    pub fn parse(action: &str) -> CheckoutResult<Self> {
        match action {
            "complete" => Ok(Resolution::Complete),
            "refund" => Ok(Resolution::Refund),
            _ => Err(FieldError::new("action", "action must be complete or refund").into()),
        }
    }
}

/// What a round of expiry work did.
#[derive(Debug, Default)]
pub struct DueWorkReport {
    /// Sessions that moved.
    pub moved: usize,
    /// Sessions whose move failed (retried next round).
    pub failed: Vec<(PaymentSessionId, CheckoutError)>,
}

/// One planned move: the event, and the session as it is after it (status set by the plan).
struct Plan {
    event: SessionEvent,
    after: PaymentSession,
    /// The facts of the event-specific timeline entry.
    facts: TimelineFacts,
    /// One-time link: this move completes the link's one payment.
    claim: bool,
}

/// An unknown session, or one of another link.
pub const SESSION_NOT_FOUND: NotFound = NotFound {
    kind: "Payment session",
};

pub(crate) fn session_not_found() -> NotFound {
    SESSION_NOT_FOUND
}

pub(crate) fn link_not_found() -> NotFound {
    LINK_NOT_FOUND
}

fn arithmetic() -> Fault {
    Fault::new("amount arithmetic out of range")
}

fn received_of(s: &PaymentSession) -> Decimal {
    s.settlement.received()
}

/// The metadata tag of a subscription cycle's invoice link (`subscriptions` writes it).
const CYCLE_TAG: &str = "subscriptionCycle";

/// A link that takes one payment: an anonymous one-time link, or a subscription cycle's
/// invoice (paid once, its cycle is paid).
fn takes_one_payment(link: &PaymentLink) -> bool {
    link.is_anonymous()
        || link
            .payload
            .metadata
            .as_ref()
            .is_some_and(|m| m.contains_key(CYCLE_TAG))
}

/// Payers' sessions, processor events, the merchant's resolution and the expiry work, over
/// the checkout ports only.
#[derive(Clone)]
pub struct CheckoutService {
    k: Kernel,
    tenancy: TenancyService,
    links: LinkService,
    webhooks: WebhookService,
    store: Arc<dyn CheckoutStore + Send + Sync>,
    processor: Arc<dyn Processor>,
    prices: Arc<dyn PriceSource>,
}

impl std::fmt::Debug for CheckoutService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckoutService")
            .field("processor", &self.processor.name())
            .finish_non_exhaustive()
    }
}

/// What checkout needs besides its store.
pub struct CheckoutAdapters {
    pub processor: Arc<dyn Processor>,
    pub prices: Arc<dyn PriceSource>,
}

impl std::fmt::Debug for CheckoutAdapters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckoutAdapters").finish_non_exhaustive()
    }
}

/// A merchant's pause or archive ends the payers' unfinished sessions of the link. Each end is
/// a compare-and-set move the state machine refuses twice, and only a link still stopped has
/// its sessions ended (one activated again meanwhile keeps its new ones), so telling it again
/// changes nothing; the consumption is recorded after the moves.
impl EventConsumer for CheckoutService {
    fn consume(&self, e: &EventRecord) -> crate::kernel::error::PortResult<()> {
        let DomainEvent::LinkStopped { link, .. } = &e.event else {
            return Ok(());
        };
        let done = Consumed {
            event: e.id,
            consumer: Consumer::SessionEnd,
        };
        if self.k.events.consumed(&done)? {
            return Ok(());
        }
        if let Some(link) = self.store.public_link(link)? {
            if link.status != LinkStatus::Active {
                self.end_sessions_of_inactive_link(&link)
                    .map_err(|e| Fault::caused("ending the sessions of a stopped link", e))?;
            }
        }
        self.k.events.record_consumed(&done, self.k.now())
    }
}

impl CheckoutService {
    /// Hosted checkout over the checkout store, the processor and the price source; it reads the
    /// links it sells (`links`) and queues their webhook events (`webhooks`). Settlement
    /// observers (`observe_settlements`) hear of each completed session.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        links: LinkService,
        webhooks: WebhookService,
        store: Arc<dyn CheckoutStore + Send + Sync>,
        adapters: CheckoutAdapters,
    ) -> CheckoutService {
        CheckoutService {
            k,
            tenancy,
            links,
            webhooks,
            store,
            processor: adapters.processor,
            prices: adapters.prices,
        }
    }

    // ----- reads -----

    pub(crate) fn checkout_link(&self, uid: &LinkUid) -> CheckoutResult<PaymentLink> {
        Ok(self.store.public_link(uid)?.ok_or_else(link_not_found)?)
    }

    /// The settings a link is paid under: its company's; anonymous links have no company
    /// and take the defaults (link fields still override them).
    fn link_settings(&self, link: &PaymentLink) -> CheckoutResult<PaySettings> {
        let company = if link.is_anonymous() {
            PaySettings::new_company_default(&self.k.assets)
        } else {
            self.tenancy.company_with_settings(link.company_id)?.1
        };
        // The link's advanced settings were checked when it was made.
        crate::settings::with_link_overrides(
            &company,
            link.payload.metadata.as_ref(),
            &self.k.assets,
        )
        .map_err(|e| Fault::new(format!("stored link settings refused: {e}")).into())
    }

    /// The invoice unit of a link: its fiat currency, else its settlement asset.
    fn invoice_unit(link: &PaymentLink) -> String {
        link.payload
            .fiat_currency
            .clone()
            .unwrap_or_else(|| link.payload.asset.clone())
    }

    /// Assets a payer can pay this link with: the catalogue's assets the processor takes and
    /// the price source prices in the invoice unit.
    fn pay_assets(&self, link: &PaymentLink) -> CheckoutResult<Vec<DestinationAsset>> {
        let unit = Self::invoice_unit(link);
        let mut out = Vec::new();
        for a in self.k.assets.all() {
            if !self.processor.supports(a)
                || !(self.processor.swaps() || a.asset_identifier == link.payload.asset)
            {
                continue;
            }
            let priced =
                a.asset_identifier == unit || self.prices.lists(&a.asset_identifier, &unit)?;
            if priced {
                out.push(a.clone());
            }
        }
        Ok(out)
    }

    /// The public view of a link (`GET /api/public/checkout/{uid}`).
    pub fn checkout_view(&self, uid: &LinkUid) -> CheckoutResult<CheckoutView> {
        let link = self.checkout_link(uid)?;
        let settings = self.link_settings(&link)?;
        let p = &link.payload;
        let display_currency = match &p.fiat_currency {
            Some(f) => f.clone(),
            None => p.currency.clone(),
        };
        let now = self.links.link_now(&link)?;
        Ok(CheckoutView {
            state: LinkState::of(&link, now),
            now,
            display_currency,
            merchant_name: p.merchant_name.clone().unwrap_or_default(),
            logo_url: p.merchant_logo_url.clone(),
            theme: p.merchant_payment_link_theme.unwrap_or(Theme::System),
            pay_assets: self.pay_assets(&link)?,
            review_required: quote::review_required(p, &settings),
            success_url: p
                .success_url
                .clone()
                .or_else(|| settings.success_redirect_url.clone()),
            failure_url: p
                .failure_url
                .clone()
                .or_else(|| settings.failure_redirect_url.clone()),
            return_url: p
                .return_url
                .clone()
                .or_else(|| settings.return_redirect_url.clone()),
            payer_fee: quote::payer_fee(p, &settings, self.processor.fee_percent()),
            sandbox: self.processor.name() == "sandbox",
            link,
        })
    }

    /// How many confirmations a payment in `pay_asset` needs (the chain processor's chain);
    /// `None` under a processor that does not count them.
    pub fn required_confirmations(&self, pay_asset: &str) -> Option<u32> {
        self.processor.confirmations(pay_asset)
    }

    /// The link detail of the partner API: the link, its latest session and its timeline.
    pub fn link_detail(&self, p: &Principal, uid: &LinkUid) -> CheckoutResult<LinkDetail> {
        let link = self.links.readable_link::<CheckoutError>(p, uid)?;
        let (latest_session, timeline) = self.store.latest_session_and_timeline(link.id)?;
        Ok(LinkDetail {
            latest_session,
            timeline,
            link,
        })
    }

    /// A session of the link, with any work that fell due applied first (so a payer never
    /// sees a session that should have expired).
    pub fn checkout_session(
        &self,
        uid: &LinkUid,
        session: PaymentSessionId,
    ) -> CheckoutResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        self.settle_due(&link, s)
    }

    pub(crate) fn session_of(
        &self,
        link: &PaymentLink,
        session: PaymentSessionId,
    ) -> CheckoutResult<PaymentSession> {
        match self.store.payment_session(session)? {
            Some(s) if s.link_id == link.id => Ok(s),
            _ => Err(session_not_found().into()),
        }
    }

    /// The payment of the link that a new start would ask for again, if any
    /// (`PaymentUnderWay`): a link that takes one payment and has it, else the newest session
    /// holding the payer's money unresolved (`processing`, `underpaid`).
    pub(crate) fn under_way(&self, link: &PaymentLink) -> CheckoutResult<Option<PaymentUnderWay>> {
        let of = |s: PaymentSession| PaymentUnderWay {
            session: s.id,
            status: s.status,
        };
        if takes_one_payment(link) {
            let paid = self
                .store
                .latest_session_in(link.id, &[SessionStatus::Complete])?;
            if let Some(s) = paid {
                return Ok(Some(of(s)));
            }
        }
        let held = self.store.latest_session_in(
            link.id,
            &[SessionStatus::Processing, SessionStatus::Underpaid],
        )?;
        Ok(held.map(of))
    }

    /// `under_way` of the link `uid`, for the hosted page: it shows the payer (known by the
    /// session the browser started) that payment instead of a new start.
    pub fn payment_under_way(&self, uid: &LinkUid) -> CheckoutResult<Option<PaymentUnderWay>> {
        let link = self.checkout_link(uid)?;
        self.under_way(&link)
    }

    /// The link's newest session (the sandbox's default target).
    pub(crate) fn latest_session(&self, link: &PaymentLink) -> CheckoutResult<PaymentSession> {
        Ok(self
            .store
            .latest_session(link.id)?
            .ok_or_else(session_not_found)?)
    }

    /// Ends the unfinished sessions of a link the merchant paused or archived.
    pub(crate) fn end_sessions_of_inactive_link(&self, link: &PaymentLink) -> CheckoutResult<()> {
        for s in self.store.unfinished_sessions(link.id)? {
            match self.simple_move(link, s, SessionEvent::LinkInactive, "merchant_api", None) {
                Ok(_) | Err(CheckoutError::Transition(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    // ----- expiry -----

    /// Applies the work that fell due (expired quotes and deposit requests, sessions of links
    /// that expired or stopped), at most `limit` sessions.
    pub fn run_due_work(&self, limit: usize) -> crate::kernel::error::PortResult<DueWorkReport> {
        let due = self.store.due_sessions(self.k.now(), limit)?;
        let mut report = DueWorkReport::default();
        for d in due {
            let id = d.session.id;
            let before = d.session.status;
            match self.settle_due(&d.link, d.session) {
                Ok(s) if s.status != before => report.moved += 1,
                Ok(_) => {}
                Err(e) => report.failed.push((id, e)),
            }
        }
        Ok(report)
    }

    /// Applies the due move of one session, if any; returns the session as it is after.
    fn settle_due(&self, link: &PaymentLink, s: PaymentSession) -> CheckoutResult<PaymentSession> {
        let now = self.links.link_now(link)?;
        let Some(event) = due_event(link, &s, now) else {
            return Ok(s);
        };
        let trigger = "expiry_worker";
        match self.simple_move(link, s.clone(), event, trigger, None) {
            Ok(after) => Ok(after),
            Err(CheckoutError::Transition(_)) => self.reread(s.id),
            Err(e) => Err(e),
        }
    }
}

/// The move due on an unfinished session at `now`, if any: a stopped link first, then the
/// earlier of the link's expiry and the session's own deadline.
fn due_event(link: &PaymentLink, s: &PaymentSession, now: Timestamp) -> Option<SessionEvent> {
    if !s.status.is_unfinished() {
        return None;
    }
    if link.status != LinkStatus::Active {
        return Some(SessionEvent::LinkInactive);
    }
    let own = match s.status {
        SessionStatus::Quote => SessionEvent::QuoteExpired,
        _ => SessionEvent::RequestExpired,
    };
    match link.expires_at {
        Some(e) if e <= now && e <= s.expires_at => Some(SessionEvent::LinkExpired),
        _ if s.expires_at <= now => Some(own),
        Some(e) if e <= now => Some(SessionEvent::LinkExpired),
        _ => None,
    }
}

fn quote_facts(
    s: &PaymentSession,
    amounts: &quote::QuoteAmounts,
    pay_price: Decimal,
) -> TimelineFacts {
    TimelineFacts::Quote(QuoteFacts {
        pay_asset: s.selected_sell_asset.clone(),
        required_sell_amount: s.required_sell_amount,
        expected_buy_amount: s.expected_buy_amount,
        target: amounts.target,
        fee: amounts.fee,
        pay_price,
        expires_at: s.expires_at,
    })
}

mod chain;
mod payer;
mod processor;
mod refund;
pub(super) mod summary;
mod write;
