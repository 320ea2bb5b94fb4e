//! The payer's moves: start a session on a quote, accept it, refresh the quote, cancel.

use super::*;

impl CheckoutService {
    /// Starts a session paying with `pay_asset`: a quote to review, or (review skipped) an
    /// open deposit channel at once. At most `limits.checkout_starts` per client address
    /// (the route is public and every start writes). A link that already holds a payer's
    /// money, or took its one payment, starts nothing (`PaymentUnderWay`): the payer is never
    /// asked for the full amount again.
    pub fn start_session(
        &self,
        uid: &LinkUid,
        pay_asset: &str,
        client_addr: &str,
    ) -> CheckoutResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        if let Some(held) = self.under_way(&link)? {
            return Err(held.into());
        }
        let now = self.links.link_now(&link)?;
        // A link that takes no payment is refused before the start is counted.
        let state = LinkState::of(&link, now);
        if !state.takes_payments() {
            return Err(LinkNotActive { state }.into());
        }
        self.k.throttle::<CheckoutError>(
            &format!("checkout-starts|{client_addr}"),
            &self.k.limits.checkout_starts,
        )?;
        let settings = self.link_settings(&link)?;
        let pay = self
            .pay_assets(&link)?
            .into_iter()
            .find(|a| a.asset_identifier == pay_asset)
            .ok_or_else(|| {
                FieldError::new(
                    "payAsset",
                    format!("{pay_asset} is not an asset this link can be paid with"),
                )
            })?;
        let blocked = |this: &Self| -> CheckoutResult<PaymentSession> {
            this.record_blocked_start(&link, pay_asset, now)?;
            Err(StartBlocked {
                asset: link.payload.asset.clone(),
            }
            .into())
        };
        let Some(settle) = self.k.assets.get(&link.payload.asset).cloned() else {
            return blocked(self);
        };
        // The price first: a start refused for want of a price takes no address.
        let (amounts, pay_price) = self.quote_for(&link, &settings, &pay, &settle)?;
        let id = PaymentSessionId(self.k.crypto.new_uuid());
        let destination = match &link.payload.settlement_address {
            Some(address) => Some(address.clone()),
            None => self
                .processor
                .session_destination(link.company_id, id.0, &settle)?,
        };
        let Some(destination) = destination else {
            return blocked(self);
        };
        let invoice_amount = Self::invoice_amount(&link, &settle)?;
        let session = PaymentSession {
            id,
            link_id: link.id,
            company_id: link.company_id,
            status: SessionStatus::Quote,
            previous_status: None,
            version: 1,
            invoice_asset: Self::invoice_unit(&link),
            invoice_amount,
            selected_sell_asset: pay.asset_identifier.clone(),
            required_sell_amount: amounts.required_sell_amount.normalized(),
            expected_buy_amount: amounts.expected_buy_amount.normalized(),
            destination_address: destination,
            deposit_address: None,
            channel_id: None,
            composite_channel_id: None,
            source_chain: None,
            expires_at: quote::quote_expires_at(now),
            settlement: Settlement::default(),
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
                TimelineKind::QuoteCreated,
                quote_facts(&session, &amounts, pay_price),
                now,
            )],
            webhook_events: 0,
            events: Vec::new(),
        };
        match self.store.write_link_event(&write, &|_| Vec::new())? {
            WriteOutcome::Applied(_) => {}
            other => return Err(Fault::new(format!("inserting a new session: {other:?}")).into()),
        }
        if quote::review_required(&link.payload, &settings) {
            Ok(session)
        } else {
            self.accept(&link, session)
        }
    }
    /// The link's amount as the invoice of a session: its text kept, at most the invoice
    /// unit's decimals (the fiat currency's, else the settlement asset's).
    fn invoice_amount(link: &PaymentLink, settle: &DestinationAsset) -> Result<Amount, Fault> {
        let decimals = match &link.payload.fiat_currency {
            Some(f) => fiat_decimals(f).unwrap_or(2),
            None => settle.decimals,
        };
        Amount::parse_stored(link.payload.amount.as_str(), decimals)
            .map_err(|_| Fault::new("stored link amount is bad"))
    }

    pub(super) fn quote_for(
        &self,
        link: &PaymentLink,
        settings: &PaySettings,
        pay: &DestinationAsset,
        settle: &DestinationAsset,
    ) -> CheckoutResult<(quote::QuoteAmounts, Decimal)> {
        let unit = Self::invoice_unit(link);
        let one = Decimal::parse("1").map_err(|_| arithmetic())?;
        let price = |asset: &str| -> CheckoutResult<Decimal> {
            if asset == unit {
                return Ok(one);
            }
            Ok(self
                .prices
                .price(asset, &unit)?
                .ok_or_else(|| PriceUnavailable {
                    asset: asset.to_owned(),
                    unit: unit.clone(),
                })?)
        };
        let pay_price = price(&pay.asset_identifier)?;
        let invoice_amount = Self::invoice_amount(link, settle)?.value();
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

    /// Records a start refused for want of the merchant's wallet: the
    /// `start_blocked_missing_company_wallet` timeline entry and webhook, at most once per
    /// link and [`BLOCKED_START_EVENT_EVERY`].
    pub(super) fn record_blocked_start(
        &self,
        link: &PaymentLink,
        pay_asset: &str,
        now: Timestamp,
    ) -> CheckoutResult<()> {
        // Once per link and hour at most (real time): a page reloaded or a script retrying
        // does not flood the merchant's endpoint; the payer is refused every time.
        let once_an_hour = crate::kernel::ratelimit::Limit::per(1, BLOCKED_START_EVENT_EVERY);
        let key = format!("blocked-start-event|{}", link.id);
        match self.k.throttle::<CheckoutError>(&key, &once_an_hour) {
            Ok(()) => {}
            Err(CheckoutError::RateLimited(_)) => return Ok(()),
            Err(e) => return Err(e),
        }
        let kind = PaymentEvent::StartBlockedMissingCompanyWallet;
        let facts = TimelineFacts::StartBlocked {
            asset: link.payload.asset.clone(),
            pay_asset: pay_asset.to_owned(),
        };
        let write = LinkEventWrite {
            link_id: link.id,
            change: SessionChange::None,
            processor_event_id: None,
            claim_link: None,
            timeline: vec![self.timeline_entry(
                link,
                None,
                TimelineKind::Payment(kind),
                facts,
                now,
            )],
            webhook_events: 1,
            events: Vec::new(),
        };
        let build = self.delivery_builder(link, None, &[kind], "payer_checkout", now)?;
        self.store.write_link_event(&write, &build)?;
        Ok(())
    }

    /// The payer accepts the quote: the deposit channel opens.
    pub fn accept_session(
        &self,
        uid: &LinkUid,
        session: PaymentSessionId,
    ) -> CheckoutResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        let s = self.settle_due(&link, s)?;
        if s.status == SessionStatus::Quote {
            let state = LinkState::of(&link, self.links.link_now(&link)?);
            if !state.takes_payments() {
                return Err(LinkNotActive { state }.into());
            }
        }
        self.accept(&link, s)
    }

    pub(super) fn accept(
        &self,
        link: &PaymentLink,
        s: PaymentSession,
    ) -> CheckoutResult<PaymentSession> {
        let pay = self
            .k
            .assets
            .get(&s.selected_sell_asset)
            .cloned()
            .ok_or_else(|| Fault::new("session pays in an unknown asset"))?;
        let channel = self
            .processor
            .open_channel(s.id.0, &pay, s.required_sell_amount)?;
        let now = self.links.link_now(link)?;
        self.move_session(link, s, "payer_checkout", None, &|cur| {
            let mut after = cur.clone();
            after.deposit_address = Some(channel.deposit_address.clone());
            after.channel_id = Some(channel.channel_id.clone());
            after.composite_channel_id = Some(channel.composite_channel_id.clone());
            after.source_chain = Some(channel.source_chain.clone());
            after.expires_at = now.plus(DEPOSIT_WINDOW);
            Ok(Some(Plan {
                event: SessionEvent::Accept,
                after,
                facts: TimelineFacts::ChannelOpened {
                    channel_id: channel.channel_id.clone(),
                    deposit_address: channel.deposit_address.clone(),
                    source_chain: channel.source_chain.clone(),
                },
                claim: false,
            }))
        })
    }

    /// The payer gets fresh prices on a quote that has not expired (`quote_refreshed`, internal).
    pub fn refresh_quote(
        &self,
        uid: &LinkUid,
        session: PaymentSessionId,
    ) -> CheckoutResult<PaymentSession> {
        let link = self.checkout_link(uid)?;
        let s = self.session_of(&link, session)?;
        let s = self.settle_due(&link, s)?;
        if s.status != SessionStatus::Quote {
            return Err(SessionTransition {
                from: s.status.as_str(),
                event: "RefreshQuote".into(),
            }
            .into());
        }
        let settings = self.link_settings(&link)?;
        let pay = self.k.assets.get(&s.selected_sell_asset).cloned();
        let settle = self.k.assets.get(&link.payload.asset).cloned();
        let (Some(pay), Some(settle)) = (pay, settle) else {
            return Err(Fault::new("session asset left the catalogue").into());
        };
        let (amounts, pay_price) = self.quote_for(&link, &settings, &pay, &settle)?;
        let now = self.links.link_now(&link)?;
        let mut after = s.clone();
        after.required_sell_amount = amounts.required_sell_amount.normalized();
        after.expected_buy_amount = amounts.expected_buy_amount.normalized();
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
                TimelineKind::QuoteRefreshed,
                quote_facts(&after, &amounts, pay_price),
                now,
            )],
            webhook_events: 0,
            events: Vec::new(),
        };
        match self.store.write_link_event(&write, &|_| Vec::new())? {
            WriteOutcome::Applied(_) => Ok(after),
            _ => Err(SessionTransition {
                from: s.status.as_str(),
                event: "RefreshQuote".into(),
            }
            .into()),
        }
    }

    /// The payer cancels.
    pub fn cancel_session(
        &self,
        uid: &LinkUid,
        session: PaymentSessionId,
    ) -> CheckoutResult<PaymentSession> {
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
}

/// How often a link's blocked starts are told to the merchant at most.
pub const BLOCKED_START_EVENT_EVERY: time::Duration = time::Duration::hours(1);
