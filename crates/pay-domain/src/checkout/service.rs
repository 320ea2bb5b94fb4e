//! Checkout use cases: the public view of a link, a payer's session from quote to payment,
//! what the processor (or the sandbox) reports, the merchant's manual resolution, and the
//! expiry work. Every session move is one store write holding the session row (compare and
//! set), its timeline entries and its webhook deliveries.

use serde_json::{json, Map, Value};

use std::sync::Arc;

use crate::checkout::machine::{settles, transition, SessionEvent, SessionStatus};
use crate::checkout::ports::{PriceSource, Processor};
use crate::checkout::quote::{self, QuoteRequest};
use crate::checkout::CheckoutStore;
use crate::checkout::{
    LinkEventWrite, PaymentSession, SessionChange, TimelineEvent, WriteOutcome, DEPOSIT_WINDOW,
};
use crate::kernel::amount::{Amount, Decimal, Rounding};
use crate::kernel::assets::{fiat_decimals, DestinationAsset};
use crate::kernel::error::{DomainError, DomainResult};
use crate::kernel::ids::{LinkUid, PaymentSessionId};
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::links::ports::LinkObserver;
use crate::links::LinkService;
use crate::links::{LinkStatus, PaymentLink};
use crate::settings::PaySettings;
use crate::tenancy::TenancyService;
use crate::tenancy::{Principal, Scope, Theme};
use crate::webhooks::WebhookService;
use crate::webhooks::{Delivery, DeliveryOrigin, DeliveryStatus, EventKind, LinkSnapshot};
use crate::webhooks::{PaymentEvent, PaymentEventDraft};

/// How often a write that lost a compare-and-set race is re-read and re-decided.
const WRITE_ATTEMPTS: usize = 5;
/// Sessions per round of expiry work.
pub const DUE_BATCH: usize = 200;
/// What payers see of a link: the public checkout view.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckoutView {
    pub link: PaymentLink,
    /// `active`, `paused`, `archived` or `expired`: only `active` takes new payments.
    pub state: &'static str,
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
    pub fn parse(action: &str) -> DomainResult<Self> {
        match action {
            "complete" => Ok(Resolution::Complete),
            "refund" => Ok(Resolution::Refund),
            _ => Err(DomainError::validation(
                "action",
                "action must be complete or refund",
            )),
        }
    }
}

/// What a round of expiry work did.
#[derive(Debug, Default)]
pub struct DueWorkReport {
    /// Sessions that moved.
    pub moved: usize,
    /// Sessions whose move failed (retried next round).
    pub failed: Vec<(PaymentSessionId, DomainError)>,
}

/// One planned move: the event, and the session as it is after it (status set by the plan).
struct Plan {
    event: SessionEvent,
    after: PaymentSession,
    /// Timeline data of the event-specific entry.
    data: Map<String, Value>,
    /// One-time link: this move completes the link's one payment.
    claim: bool,
}

pub(crate) fn session_not_found() -> DomainError {
    DomainError::NotFound {
        kind: "Payment session",
    }
}

pub(crate) fn link_not_found() -> DomainError {
    DomainError::NotFound {
        kind: "Payment link",
    }
}

fn dec(s: &str) -> DomainResult<Decimal> {
    Decimal::parse(s).map_err(|_| DomainError::Internal(format!("stored amount {s:?} is bad")))
}

fn arithmetic() -> DomainError {
    DomainError::Internal("amount arithmetic out of range".into())
}

/// `received` of the pay asset expressed in the invoice unit, by the session's own quote ratio
/// (rounded down: the payer never gets credit for more than arrived).
fn in_invoice_units(s: &PaymentSession, received: Decimal) -> DomainResult<Decimal> {
    let required = dec(&s.required_sell_amount)?;
    let invoice = dec(&s.invoice_amount)?;
    received
        .checked_mul(invoice)
        .and_then(|x| x.checked_div(required, 18, Rounding::Down))
        .ok_or_else(arithmetic)
}

fn received_of(s: &PaymentSession) -> DomainResult<Decimal> {
    match s.settlement.get("receivedAmount").and_then(Value::as_str) {
        Some(v) => dec(v),
        None => Ok(Decimal::ZERO),
    }
}

fn link_state(link: &PaymentLink, now: Timestamp) -> &'static str {
    match link.status {
        LinkStatus::Paused => "paused",
        LinkStatus::Archived => "archived",
        LinkStatus::Active if link.expires_at.is_some_and(|e| e <= now) => "expired",
        LinkStatus::Active => "active",
    }
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

/// A merchant's pause or archive ends the payers' unfinished sessions of the link.
impl LinkObserver for CheckoutService {
    fn link_stopped(&self, link: &PaymentLink) -> DomainResult<()> {
        self.end_sessions_of_inactive_link(link)
    }
}

impl CheckoutService {
    pub(crate) fn new(
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

    pub(crate) fn checkout_link(&self, uid: &str) -> DomainResult<PaymentLink> {
        let uid = LinkUid::parse(uid).ok_or_else(link_not_found)?;
        self.store
            .public_link(uid.as_str())?
            .ok_or_else(link_not_found)
    }

    /// The settings a link is paid under: its company's; anonymous links have no company
    /// and take the defaults (link fields still override them).
    fn link_settings(&self, link: &PaymentLink) -> DomainResult<PaySettings> {
        if link.is_anonymous() {
            return Ok(PaySettings::new_company_default(&self.k.assets));
        }
        Ok(self.tenancy.company_with_settings(link.company_id)?.1)
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
    fn pay_assets(&self, link: &PaymentLink) -> DomainResult<Vec<DestinationAsset>> {
        let unit = Self::invoice_unit(link);
        let mut out = Vec::new();
        for a in self.k.assets.all() {
            if !self.processor.supports(a) {
                continue;
            }
            let priced = a.asset_identifier == unit
                || self.prices.price(&a.asset_identifier, &unit)?.is_some();
            if priced {
                out.push(a.clone());
            }
        }
        Ok(out)
    }

    /// The public view of a link (`GET /api/public/checkout/{uid}`).
    pub fn checkout_view(&self, uid: &str) -> DomainResult<CheckoutView> {
        let link = self.checkout_link(uid)?;
        let settings = self.link_settings(&link)?;
        let p = &link.payload;
        let display_currency = match &p.fiat_currency {
            Some(f) => f.clone(),
            None => p.currency.clone(),
        };
        let now = self.links.link_now(&link)?;
        Ok(CheckoutView {
            state: link_state(&link, now),
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
            link,
        })
    }

    /// The link detail of the partner API: the link, its latest session and its timeline.
    pub fn link_detail(&self, p: &Principal, uid: &str) -> DomainResult<LinkDetail> {
        let link = self.links.get_link(p, uid)?;
        Ok(LinkDetail {
            latest_session: self.store.latest_session(link.id)?,
            timeline: self.store.timeline(link.id)?,
            link,
        })
    }

    /// A session of the link, with any work that fell due applied first (so a payer never
    /// sees a session that should have expired).
    pub fn checkout_session(&self, uid: &str, session: &str) -> DomainResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        self.settle_due(&link, s)
    }

    pub(crate) fn session_of(
        &self,
        link: &PaymentLink,
        session: &str,
    ) -> DomainResult<PaymentSession> {
        let id = PaymentSessionId::parse(session).ok_or_else(session_not_found)?;
        match self.store.payment_session(id)? {
            Some(s) if s.link_id == link.id => Ok(s),
            _ => Err(session_not_found()),
        }
    }

    // ----- the payer -----

    /// Starts a session paying with `pay_asset`: a quote to review, or (review skipped) an
    /// open deposit channel at once. At most `limits.checkout_starts` per client address
    /// (the route is public and every start writes).
    pub fn start_session(
        &self,
        uid: &str,
        pay_asset: &str,
        client_addr: &str,
    ) -> DomainResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let now = self.links.link_now(&link)?;
        // A link that takes no payment is refused before the start is counted.
        let state = link_state(&link, now);
        if state != "active" {
            return Err(DomainError::LinkNotActive { state });
        }
        self.k.throttle(
            &format!("checkout-starts|{client_addr}"),
            &self.k.limits.checkout_starts,
        )?;
        let settings = self.link_settings(&link)?;
        let pay = self
            .pay_assets(&link)?
            .into_iter()
            .find(|a| a.asset_identifier == pay_asset)
            .ok_or_else(|| {
                DomainError::validation(
                    "payAsset",
                    format!("{pay_asset} is not an asset this link can be paid with"),
                )
            })?;
        let settle = self.k.assets.get(&link.payload.asset).cloned();
        let destination = match (&settle, &link.payload.settlement_address) {
            (Some(_), Some(address)) => Some(address.clone()),
            (Some(a), None) => self.processor.merchant_wallet(link.company_id, a)?,
            (None, _) => None,
        };
        let (Some(settle), Some(destination)) = (settle, destination) else {
            self.record_blocked_start(&link, pay_asset, now)?;
            return Err(DomainError::StartBlocked {
                asset: link.payload.asset.clone(),
            });
        };
        let (amounts, pay_price) = self.quote_for(&link, &settings, &pay, &settle)?;
        let id = PaymentSessionId(self.k.crypto.new_uuid());
        let session = PaymentSession {
            id,
            link_id: link.id,
            company_id: link.company_id,
            status: SessionStatus::Quote,
            previous_status: None,
            version: 1,
            invoice_asset: Self::invoice_unit(&link),
            invoice_amount: link.payload.amount.clone(),
            selected_sell_asset: pay.asset_identifier.clone(),
            required_sell_amount: amounts.required_sell_amount.normalized().to_string(),
            expected_buy_amount: amounts.expected_buy_amount.normalized().to_string(),
            destination_address: destination,
            deposit_address: None,
            channel_id: None,
            composite_channel_id: None,
            source_chain: None,
            expires_at: quote::quote_expires_at(now),
            settlement: Map::new(),
            error_message: None,
            created_at: now,
            updated_at: now,
        };
        let write = LinkEventWrite {
            link_id: link.id,
            change: SessionChange::Insert(session.clone()),
            processor_event_id: None,
            claim_link: None,
            timeline: vec![self.timeline_entry(
                &link,
                Some(id),
                "quote_created",
                quote_data(&session, &amounts, pay_price),
                now,
            )],
            webhook_events: 0,
        };
        match self.store.write_link_event(&write, &|_| Vec::new())? {
            WriteOutcome::Applied(_) => {}
            other => {
                return Err(DomainError::Internal(format!(
                    "inserting a new session: {other:?}"
                )))
            }
        }
        if quote::review_required(&link.payload, &settings) {
            Ok(session)
        } else {
            self.accept(&link, session)
        }
    }

    fn quote_for(
        &self,
        link: &PaymentLink,
        settings: &PaySettings,
        pay: &DestinationAsset,
        settle: &DestinationAsset,
    ) -> DomainResult<(quote::QuoteAmounts, Decimal)> {
        let unit = Self::invoice_unit(link);
        let one = Decimal::parse("1").map_err(|_| arithmetic())?;
        let price = |asset: &str| -> DomainResult<Decimal> {
            if asset == unit {
                return Ok(one);
            }
            self.prices.price(asset, &unit)?.ok_or_else(|| {
                DomainError::validation("payAsset", format!("no price for {asset} in {unit}"))
            })
        };
        let pay_price = price(&pay.asset_identifier)?;
        let invoice_decimals = match &link.payload.fiat_currency {
            Some(f) => fiat_decimals(f).unwrap_or(2),
            None => settle.decimals,
        };
        let invoice_amount = Amount::parse_stored(&link.payload.amount, invoice_decimals)
            .map_err(|_| DomainError::Internal("stored link amount is bad".into()))?
            .value();
        let amounts = quote::quote(&QuoteRequest {
            invoice_amount,
            pay_price,
            pay_decimals: pay.decimals,
            buy_price: price(&settle.asset_identifier)?,
            buy_decimals: settle.decimals,
            fee_percent: self.processor.fee_percent(),
            fee_payer: quote::fee_payer(&link.payload, settings),
            surcharge_percent: settings.merchant_surcharge_percent,
        })?;
        Ok((amounts, pay_price))
    }

    fn record_blocked_start(
        &self,
        link: &PaymentLink,
        pay_asset: &str,
        now: Timestamp,
    ) -> DomainResult<()> {
        let kind = PaymentEvent::StartBlockedMissingCompanyWallet;
        let mut data = Map::new();
        data.insert("asset".into(), json!(link.payload.asset));
        data.insert("payAsset".into(), json!(pay_asset));
        let write = LinkEventWrite {
            link_id: link.id,
            change: SessionChange::None,
            processor_event_id: None,
            claim_link: None,
            timeline: vec![self.timeline_entry(link, None, kind.as_str(), data, now)],
            webhook_events: 1,
        };
        let build = self.delivery_builder(link, None, &[kind], "payer_checkout", now)?;
        self.store.write_link_event(&write, &build)?;
        Ok(())
    }

    /// The payer accepts the quote: the deposit channel opens.
    pub fn accept_session(&self, uid: &str, session: &str) -> DomainResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        let s = self.settle_due(&link, s)?;
        if s.status == SessionStatus::Quote {
            let state = link_state(&link, self.links.link_now(&link)?);
            if state != "active" {
                return Err(DomainError::LinkNotActive { state });
            }
        }
        self.accept(&link, s)
    }

    fn accept(&self, link: &PaymentLink, s: PaymentSession) -> DomainResult<PaymentSession> {
        let pay = self
            .k
            .assets
            .get(&s.selected_sell_asset)
            .cloned()
            .ok_or_else(|| DomainError::Internal("session pays in an unknown asset".into()))?;
        let channel = self
            .processor
            .open_channel(s.id.0, &pay, dec(&s.required_sell_amount)?)?;
        let now = self.links.link_now(link)?;
        self.move_session(link, s, "payer_checkout", None, &|cur| {
            let mut after = cur.clone();
            after.deposit_address = Some(channel.deposit_address.clone());
            after.channel_id = Some(channel.channel_id.clone());
            after.composite_channel_id = Some(channel.composite_channel_id.clone());
            after.source_chain = Some(channel.source_chain.clone());
            after.expires_at = now.plus(DEPOSIT_WINDOW);
            let mut data = Map::new();
            data.insert("channelId".into(), json!(channel.channel_id));
            data.insert("depositAddress".into(), json!(channel.deposit_address));
            data.insert("sourceChain".into(), json!(channel.source_chain));
            Ok(Some(Plan {
                event: SessionEvent::Accept,
                after,
                data,
                claim: false,
            }))
        })
    }

    /// The payer gets fresh prices on a quote that has not expired (`quote_refreshed`, internal).
    pub fn refresh_quote(&self, uid: &str, session: &str) -> DomainResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        let s = self.settle_due(&link, s)?;
        if s.status != SessionStatus::Quote {
            return Err(DomainError::SessionTransition {
                from: s.status.as_str(),
                event: "RefreshQuote".into(),
            });
        }
        let settings = self.link_settings(&link)?;
        let pay = self.k.assets.get(&s.selected_sell_asset).cloned();
        let settle = self.k.assets.get(&link.payload.asset).cloned();
        let (Some(pay), Some(settle)) = (pay, settle) else {
            return Err(DomainError::Internal(
                "session asset left the catalogue".into(),
            ));
        };
        let (amounts, pay_price) = self.quote_for(&link, &settings, &pay, &settle)?;
        let now = self.links.link_now(&link)?;
        let mut after = s.clone();
        after.required_sell_amount = amounts.required_sell_amount.normalized().to_string();
        after.expected_buy_amount = amounts.expected_buy_amount.normalized().to_string();
        after.expires_at = quote::quote_expires_at(now);
        after.version = s.version + 1;
        after.updated_at = now;
        let write = LinkEventWrite {
            link_id: link.id,
            change: SessionChange::Update {
                session: after.clone(),
                expected_version: s.version,
            },
            processor_event_id: None,
            claim_link: None,
            timeline: vec![self.timeline_entry(
                &link,
                Some(s.id),
                "quote_refreshed",
                quote_data(&after, &amounts, pay_price),
                now,
            )],
            webhook_events: 0,
        };
        match self.store.write_link_event(&write, &|_| Vec::new())? {
            WriteOutcome::Applied(_) => Ok(after),
            _ => Err(DomainError::SessionTransition {
                from: s.status.as_str(),
                event: "RefreshQuote".into(),
            }),
        }
    }

    /// The payer cancels.
    pub fn cancel_session(&self, uid: &str, session: &str) -> DomainResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        let s = self.settle_due(&link, s)?;
        self.simple_move(
            &link,
            s,
            SessionEvent::CancelByPayer,
            "payer_checkout",
            None,
        )
    }

    /// The link's newest session (the sandbox's default target).
    pub(crate) fn latest_session(&self, link: &PaymentLink) -> DomainResult<PaymentSession> {
        self.store
            .latest_session(link.id)?
            .ok_or_else(session_not_found)
    }

    // ----- the processor -----

    /// A deposit seen on the session's channel; settles at once unless `hold`. A deposit on a
    /// session that already ended is recorded as a late payment.
    pub fn deposit(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        amount: Decimal,
        hold: bool,
        event_id: &str,
        trigger: &str,
    ) -> DomainResult<PaymentSession> {
        if amount.is_negative() || amount.is_zero() {
            return Err(DomainError::validation("amount", "a deposit is positive"));
        }
        if matches!(
            s.status,
            SessionStatus::Expired | SessionStatus::Cancelled | SessionStatus::Failed
        ) {
            return self.late_deposit(link, s, amount, event_id, trigger);
        }
        let seen = self.move_session(
            link,
            s,
            trigger,
            Some(&format!("{event_id}:seen")),
            &|cur| {
                let total = received_of(cur)?
                    .checked_add(amount)
                    .ok_or_else(arithmetic)?;
                let mut after = cur.clone();
                after.settlement.insert(
                    "receivedAmount".into(),
                    json!(total.normalized().to_string()),
                );
                after
                    .settlement
                    .insert("asset".into(), json!(cur.selected_sell_asset));
                let mut data = Map::new();
                data.insert("amount".into(), json!(amount.normalized().to_string()));
                Ok(Some(Plan {
                    event: SessionEvent::DepositSeen,
                    after,
                    data,
                    claim: false,
                }))
            },
        )?;
        if hold || seen.status != SessionStatus::Processing {
            return Ok(seen);
        }
        self.settle(link, seen, &format!("{event_id}:settled"), trigger)
    }

    /// Settles the deposits received: complete, or underpaid beyond the tolerance. On a
    /// one-time link another payer already completed, the deposit is to be refunded.
    pub fn settle(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        event_id: &str,
        trigger: &str,
    ) -> DomainResult<PaymentSession> {
        let settings = self.link_settings(link)?;
        let one_time = link.is_anonymous();
        let result = self.move_session(link, s.clone(), trigger, Some(event_id), &|cur| {
            let received = received_of(cur)?;
            let required = dec(&cur.required_sell_amount)?;
            let invoice = dec(&cur.invoice_amount)?;
            let ok = settles(invoice, in_invoice_units(cur, received)?, &settings);
            let mut after = cur.clone();
            let mut data = Map::new();
            data.insert(
                "receivedAmount".into(),
                json!(received.normalized().to_string()),
            );
            if ok {
                if received > required {
                    let over = received.checked_sub(required).ok_or_else(arithmetic)?;
                    after
                        .settlement
                        .insert("overpaidBy".into(), json!(over.normalized().to_string()));
                } else if received < required {
                    let short = required.checked_sub(received).ok_or_else(arithmetic)?;
                    after.settlement.insert(
                        "shortWithinTolerance".into(),
                        json!(short.normalized().to_string()),
                    );
                }
                after.settlement.remove("shortBy");
            } else {
                let short = required.checked_sub(received).ok_or_else(arithmetic)?;
                after
                    .settlement
                    .insert("shortBy".into(), json!(short.normalized().to_string()));
                data.insert("shortBy".into(), json!(short.normalized().to_string()));
            }
            Ok(Some(Plan {
                event: SessionEvent::Settled { short: !ok },
                after,
                data,
                claim: ok && one_time,
            }))
        });
        match result {
            Err(DomainError::LinkAlreadyPaid) => {
                // Another payer completed this one-time link first: this deposit goes back.
                self.move_session(link, s, trigger, Some(event_id), &|cur| {
                    let mut after = cur.clone();
                    after
                        .settlement
                        .insert("refundReason".into(), json!("link_already_paid"));
                    let mut data = Map::new();
                    data.insert("reason".into(), json!("link_already_paid"));
                    Ok(Some(Plan {
                        event: SessionEvent::RequestRefund,
                        after,
                        data,
                        claim: false,
                    }))
                })
            }
            other => other,
        }
    }

    fn late_deposit(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        amount: Decimal,
        event_id: &str,
        trigger: &str,
    ) -> DomainResult<PaymentSession> {
        self.move_session(link, s, trigger, Some(event_id), &|cur| {
            let late = match cur.settlement.get("lateAmount").and_then(Value::as_str) {
                Some(v) => dec(v)?,
                None => Decimal::ZERO,
            }
            .checked_add(amount)
            .ok_or_else(arithmetic)?;
            let mut after = cur.clone();
            after
                .settlement
                .insert("lateAmount".into(), json!(late.normalized().to_string()));
            after.settlement.insert("late".into(), json!(true));
            let mut data = Map::new();
            data.insert("lateAmount".into(), json!(amount.normalized().to_string()));
            Ok(Some(Plan {
                event: SessionEvent::LateDeposit,
                after,
                data,
                claim: false,
            }))
        })
    }

    // ----- the merchant -----

    /// The merchant resolves the link's underpaid session by hand.
    pub fn resolve_underpayment(
        &self,
        p: &Principal,
        uid: &str,
        resolution: Resolution,
    ) -> DomainResult<PaymentSession> {
        p.authorize(Scope::PaymentLinksWrite)?;
        let link = self.links.get_link(p, uid)?;
        let s = self
            .store
            .latest_session(link.id)?
            .ok_or_else(session_not_found)?;
        let (event, name) = match resolution {
            Resolution::Complete => (SessionEvent::ManualResolution, "completed_by_merchant"),
            Resolution::Refund => (SessionEvent::RequestRefund, "refunded_by_merchant"),
        };
        self.move_session(&link, s, "merchant_api", None, &|cur| {
            let mut after = cur.clone();
            after.settlement.insert("resolution".into(), json!(name));
            let mut data = Map::new();
            data.insert("resolution".into(), json!(name));
            Ok(Some(Plan {
                event,
                after,
                data,
                claim: event == SessionEvent::ManualResolution && link.is_anonymous(),
            }))
        })
    }

    /// Ends the unfinished sessions of a link the merchant paused or archived.
    pub(crate) fn end_sessions_of_inactive_link(&self, link: &PaymentLink) -> DomainResult<()> {
        for s in self.store.unfinished_sessions(link.id)? {
            match self.simple_move(link, s, SessionEvent::LinkInactive, "merchant_api", None) {
                Ok(_) | Err(DomainError::SessionTransition { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    // ----- expiry -----

    /// Applies the work that fell due (expired quotes and deposit requests, sessions of links
    /// that expired or stopped), at most `limit` sessions.
    pub fn run_due_work(&self, limit: usize) -> DomainResult<DueWorkReport> {
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
    fn settle_due(&self, link: &PaymentLink, s: PaymentSession) -> DomainResult<PaymentSession> {
        let now = self.links.link_now(link)?;
        let Some(event) = due_event(link, &s, now) else {
            return Ok(s);
        };
        let trigger = "expiry_worker";
        match self.simple_move(link, s.clone(), event, trigger, None) {
            Ok(after) => Ok(after),
            Err(DomainError::SessionTransition { .. }) => self.reread(s.id),
            Err(e) => Err(e),
        }
    }

    // ----- the one write path -----

    pub(crate) fn simple_move(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        event: SessionEvent,
        trigger: &str,
        event_id: Option<&str>,
    ) -> DomainResult<PaymentSession> {
        let error = s.error_message.clone();
        self.move_session(link, s, trigger, event_id, &|cur| {
            let mut after = cur.clone();
            if event == SessionEvent::Fail {
                after.error_message = error.clone();
            }
            Ok(Some(Plan {
                event,
                after,
                data: Map::new(),
                claim: false,
            }))
        })
    }

    fn reread(&self, id: PaymentSessionId) -> DomainResult<PaymentSession> {
        self.store
            .payment_session(id)?
            .ok_or_else(session_not_found)
    }

    /// Decides a move on the current session, writes it with its timeline and webhooks, and on
    /// a lost compare-and-set race re-reads and decides again. A processor event already
    /// applied returns the session as it is. A one-time link another session already paid is
    /// `DomainError::LinkAlreadyPaid`.
    fn move_session(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
        trigger: &str,
        event_id: Option<&str>,
        decide: &dyn Fn(&PaymentSession) -> DomainResult<Option<Plan>>,
    ) -> DomainResult<PaymentSession> {
        if let Some(id) = event_id {
            if self.store.processor_event_applied(id)? {
                return self.reread(s.id);
            }
        }
        let mut current = s;
        for _ in 0..WRITE_ATTEMPTS {
            let Some(plan) = decide(&current)? else {
                return Ok(current);
            };
            let to = transition(current.status, plan.event)?;
            let now = self.links.link_now(link)?;
            let mut after = plan.after;
            if to != current.status {
                after.previous_status = Some(current.status);
                after.status = to;
            }
            after.version = current.version + 1;
            after.updated_at = now;
            let mut kinds: Vec<PaymentEvent> = plan.event.webhook().into_iter().collect();
            let mut timeline = Vec::new();
            if let Some(kind) = plan.event.webhook() {
                timeline.push(self.timeline_entry(
                    link,
                    Some(after.id),
                    kind.as_str(),
                    plan.data.clone(),
                    now,
                ));
            }
            if to != current.status {
                kinds.push(PaymentEvent::StatusChanged);
                let mut data = Map::new();
                data.insert("previousStatus".into(), json!(current.status.as_str()));
                data.insert("status".into(), json!(to.as_str()));
                timeline.push(self.timeline_entry(
                    link,
                    Some(after.id),
                    PaymentEvent::StatusChanged.as_str(),
                    data,
                    now,
                ));
            }
            let write = LinkEventWrite {
                link_id: link.id,
                change: SessionChange::Update {
                    session: after.clone(),
                    expected_version: current.version,
                },
                processor_event_id: event_id.map(str::to_owned),
                claim_link: plan.claim.then_some(after.id),
                timeline,
                webhook_events: kinds.len() as u64,
            };
            // The events describe the link as this write leaves it: a one-time link that this
            // payment completes is archived in the same transaction.
            let closed;
            let link_after = if plan.claim {
                closed = PaymentLink {
                    status: LinkStatus::Archived,
                    updated_at: now,
                    ..link.clone()
                };
                &closed
            } else {
                link
            };
            let build = self.delivery_builder(link_after, Some(&after), &kinds, trigger, now)?;
            match self.store.write_link_event(&write, &build)? {
                WriteOutcome::Applied(_) => {
                    if plan.claim {
                        self.links.changed();
                    }
                    return Ok(after);
                }
                WriteOutcome::Duplicate => return self.reread(current.id),
                WriteOutcome::LinkAlreadyPaid => return Err(DomainError::LinkAlreadyPaid),
                WriteOutcome::Stale => current = self.reread(current.id)?,
            }
        }
        Err(DomainError::Internal(
            "session kept changing under us".into(),
        ))
    }

    fn timeline_entry(
        &self,
        link: &PaymentLink,
        session: Option<PaymentSessionId>,
        kind: &str,
        data: Map<String, Value>,
        now: Timestamp,
    ) -> TimelineEvent {
        TimelineEvent {
            id: self.k.crypto.new_uuid(),
            link_id: link.id,
            session_id: session,
            kind: kind.to_owned(),
            created_at: now,
            data,
        }
    }

    /// Builds the deliveries of `kinds` (consecutive sequence numbers from the first the
    /// store hands out), one group per event, one delivery per receiving callback.
    fn delivery_builder(
        &self,
        link: &PaymentLink,
        session: Option<&PaymentSession>,
        kinds: &[PaymentEvent],
        trigger: &str,
        now: Timestamp,
    ) -> DomainResult<impl Fn(u64) -> Vec<Delivery>> {
        let targets = self.webhooks.targets(link)?;
        let snapshot = LinkSnapshot::of(link, &self.k.public_pay_url);
        let session = session.map(PaymentSession::snapshot).unwrap_or_default();
        let planned: Vec<(PaymentEvent, uuid::Uuid, Vec<uuid::Uuid>)> = kinds
            .iter()
            .map(|k| {
                (
                    *k,
                    self.k.crypto.new_uuid(),
                    targets.iter().map(|_| self.k.crypto.new_uuid()).collect(),
                )
            })
            .collect();
        let company = link.company_id;
        let uid = link.uid.to_string();
        let order_id = link.payload.order_id.clone();
        let trigger = trigger.to_owned();
        Ok(move |first: u64| {
            let mut out = Vec::new();
            for (i, (kind, group_id, ids)) in planned.iter().enumerate() {
                let draft = PaymentEventDraft {
                    event: EventKind::Payment(*kind),
                    trigger: trigger.clone(),
                    link: snapshot.clone(),
                    session: session.clone(),
                    created_at: now,
                    sequence: first + i as u64,
                };
                for ((target, url), id) in targets.iter().zip(ids) {
                    out.push(Delivery {
                        id: *id,
                        group_id: *group_id,
                        company_id: company,
                        origin: DeliveryOrigin::Event,
                        event: EventKind::Payment(*kind),
                        status: DeliveryStatus::Pending,
                        attempts: 0,
                        next_attempt_at: Some(now),
                        last_attempt_at: None,
                        last_response_status: None,
                        last_error: None,
                        payment_link_uid: Some(uid.clone()),
                        subscription_uid: None,
                        order_id: order_id.clone(),
                        target: *target,
                        url: url.clone(),
                        body: draft.body_for(*id),
                        created_at: now,
                    });
                }
            }
            out
        })
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

fn quote_data(
    s: &PaymentSession,
    amounts: &quote::QuoteAmounts,
    pay_price: Decimal,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("payAsset".into(), json!(s.selected_sell_asset));
    m.insert("requiredSellAmount".into(), json!(s.required_sell_amount));
    m.insert("expectedBuyAmount".into(), json!(s.expected_buy_amount));
    m.insert(
        "target".into(),
        json!(amounts.target.normalized().to_string()),
    );
    m.insert("fee".into(), json!(amounts.fee.normalized().to_string()));
    m.insert("payPrice".into(), json!(pay_price.normalized().to_string()));
    m.insert("expiresAt".into(), json!(s.expires_at.to_rfc3339()));
    m
}

mod refund;
