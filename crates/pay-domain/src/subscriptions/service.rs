//! Subscription use cases: create (customer upserted, cycle 0 issued), list, read, status
//! moves by the merchant or the customer's portal (one webhook each; cancel cancels unpaid
//! cycles and archives their links). The scheduler's steps are in `scheduler.rs`.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::customers::portal::PortalParams;
use crate::customers::{ContactUpsert, CustomerService, PortalAccess};
use crate::kernel::error::{Fault, NotFound, PortResult};
use crate::kernel::ids::{CycleId, SubscriptionId, SubscriptionUid};
use crate::kernel::keyed::{self, Answer, KeyedCall, Sealing};
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::links::{checkout_url, CreateLinkInput, LinkService, PaymentLink};
use crate::mail::MailService;
use crate::subscriptions::billing::{next_run, BillingConfig};
use crate::subscriptions::machine::oldest_overdue;
use crate::subscriptions::ports::{StatusWrite, SubscriptionFilter, SubscriptionStore};
use crate::subscriptions::{
    transition, Actor, CreateSubscriptionInput, Cycle, CycleStatus, Reason, Subscription,
    SubscriptionError, SubscriptionStatus, SubscriptionTransition, LIST_LIMIT,
};
use crate::tenancy::{Principal, Scope, TenancyService};
use crate::webhooks::{
    CycleSnapshot, StatusChangeData, SubscriptionEventDraft, SubscriptionSnapshot, WebhookService,
};

/// A subscription with its cycles (oldest first).
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionView {
    pub subscription: Subscription,
    pub cycles: Vec<Cycle>,
}

/// What the customer portal shows: the verified visit and the customer's subscriptions.
#[derive(Debug, Clone, PartialEq)]
pub struct PortalView {
    pub access: PortalAccess,
    /// The merchant's name, as its checkout shows it.
    pub company_name: String,
    pub subscriptions: Vec<SubscriptionView>,
}

/// Subscriptions and the billing scheduler, over the subscriptions store and the services
/// below (customers, links, webhooks, mail).
#[derive(Clone)]
pub struct SubscriptionService {
    pub(super) k: Kernel,
    pub(super) tenancy: TenancyService,
    pub(super) customers: CustomerService,
    pub(super) links: LinkService,
    pub(super) webhooks: WebhookService,
    pub(super) mail: MailService,
    pub(super) store: Arc<dyn SubscriptionStore + Send + Sync>,
    pub(super) config: BillingConfig,
}

impl std::fmt::Debug for SubscriptionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubscriptionService")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// An unknown subscription, another company's or grant's, or a uid that names none.
pub const SUBSCRIPTION_NOT_FOUND: NotFound = NotFound {
    kind: "Subscription",
};
const NOT_FOUND: NotFound = SUBSCRIPTION_NOT_FOUND;

impl SubscriptionService {
    /// Subscriptions and the billing scheduler over the subscription store; each cycle's invoice
    /// is a link (`links`), announced by webhook (`webhooks`) and mail (`mail`) to a customer
    /// (`customers`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        customers: CustomerService,
        links: LinkService,
        webhooks: WebhookService,
        mail: MailService,
        store: Arc<dyn SubscriptionStore + Send + Sync>,
        config: BillingConfig,
    ) -> SubscriptionService {
        SubscriptionService {
            k,
            tenancy,
            customers,
            links,
            webhooks,
            mail,
            store,
            config,
        }
    }

    /// The hosted checkout URL of a cycle's invoice (`paymentUrl`), once issued: on the
    /// company's verified payment-link domain when it has one. Both hosts serve the same
    /// checkout, so when the company row cannot be read (the store is failing; the read is
    /// the cached one the caller's authentication made) the URL is on the public site.
    pub fn payment_url(&self, cycle: &Cycle) -> Option<String> {
        let uid = cycle.payment_link_uid.as_ref()?;
        let base = self
            .tenancy
            .pay_base(cycle.company_id)
            .unwrap_or_else(|_| self.k.public_pay_url.to_string());
        Some(checkout_url(&base, uid))
    }

    /// Creates a subscription: the customer is upserted by e-mail, cycle 0 is due at
    /// `startAt` and its invoice link is issued now.
    pub fn create_subscription(
        &self,
        p: &Principal,
        input: CreateSubscriptionInput,
    ) -> Result<SubscriptionView, SubscriptionError> {
        let answer = self.create_subscription_keyed(p, input, None)?;
        answer
            .fresh()
            .ok_or_else(|| Fault::new("an unkeyed call replayed").into())
    }

    /// `create_subscription` with an `Idempotency-Key` (`kernel::keyed`): the subscription,
    /// its first cycle and the answer commit together; a byte-identical retry gets that answer.
    pub fn create_subscription_keyed(
        &self,
        p: &Principal,
        input: CreateSubscriptionInput,
        call: Option<KeyedCall<'_, SubscriptionView>>,
    ) -> Result<Answer<SubscriptionView>, SubscriptionError> {
        p.authorize(Scope::SubscriptionsWrite)?;
        self.k.keyed(
            &p.idempotency_credential(),
            "subscriptions",
            call,
            |sealing| self.start_subscription(p, input, sealing),
        )
    }

    fn start_subscription(
        &self,
        p: &Principal,
        input: CreateSubscriptionInput,
        sealing: Option<&Sealing<'_, SubscriptionView>>,
    ) -> Result<SubscriptionView, SubscriptionError> {
        let (company, settings) = self.tenancy.company_with_settings(p.company_id)?;
        let now = self.tenancy.company_now_of(&company);
        let new = input.check(&self.k.assets, &settings, now)?;
        let contact = self
            .customers
            .upsert_for(
                p.company_id,
                ContactUpsert {
                    email: new.customer_email.clone(),
                    name: None,
                    client_id: None,
                    metadata: None,
                },
                now,
            )?
            .into_contact();
        let mut sub = Subscription {
            id: SubscriptionId(self.k.crypto.new_uuid()),
            uid: self
                .k
                .new_public_id(SubscriptionUid::RANDOM_LEN, SubscriptionUid::from_random)?,
            company_id: p.company_id,
            contact_id: contact.id,
            status: SubscriptionStatus::Active,
            customer_email: new.customer_email,
            label: new.label,
            description: new.description,
            amount_usd: new.amount_usd,
            settlement_asset: new.settlement_asset,
            interval: new.interval,
            start_at: new.start_at,
            zone: new.zone,
            metadata: new.metadata,
            created_by: crate::links::CreatedBy::from_principal(p),
            created_at: now,
            updated_at: now,
            next_sequence: 1,
            next_run_at: None,
        };
        let mut first = self.new_cycle(&sub, 0, sub.start_at, now);
        let link = self.issue_cycle_link(&sub, &first, contact.client_id.clone())?;
        first.status = CycleStatus::Open;
        first.payment_link_id = Some(link.id);
        first.payment_link_uid = Some(link.uid.clone());
        first.issued_at = Some(now);
        sub.next_run_at = next_run(&sub, std::slice::from_ref(&first), &self.config);
        let view = SubscriptionView {
            subscription: sub,
            cycles: vec![first],
        };
        let inserted = keyed::completion(sealing, &view).and_then(|completion| {
            self.store
                .insert_subscription(&view.subscription, &view.cycles[0], completion.as_ref())
        });
        match inserted {
            Ok(true) => Ok(view),
            refused => {
                // The invoice belongs to nothing: take it off the customer's way.
                let _ = self
                    .links
                    .archive_link_of(view.subscription.company_id, &link.uid);
                Err(match refused {
                    Err(e) => e.into(),
                    _ => keyed::claim_lost().into(),
                })
            }
        }
    }

    pub(super) fn new_cycle(
        &self,
        sub: &Subscription,
        sequence: u32,
        due_at: Timestamp,
        now: Timestamp,
    ) -> Cycle {
        Cycle {
            id: CycleId(self.k.crypto.new_uuid()),
            subscription_id: sub.id,
            company_id: sub.company_id,
            sequence,
            due_at,
            amount_usd: sub.amount_usd.clone(),
            status: CycleStatus::Scheduled,
            payment_link_id: None,
            payment_link_uid: None,
            issued_at: None,
            paid_at: None,
            reminders: 0,
            created_at: now,
            updated_at: now,
        }
    }

    /// The invoice link of a cycle: an ordinary payment link in USD settling to the
    /// subscription's asset, open until paid or cancelled, tagged in its metadata with the
    /// subscription and the cycle, made by the credential that made the subscription. The
    /// subscription's advanced redirect and tolerance settings (`settings::LINK_SETTING_KEYS`
    /// of its metadata) go into the link's metadata, where the checkout applies them.
    pub(super) fn issue_cycle_link(
        &self,
        sub: &Subscription,
        cycle: &Cycle,
        client_id: Option<String>,
    ) -> Result<PaymentLink, SubscriptionError> {
        let mut tags: Map<String, Value> = crate::settings::LINK_SETTING_KEYS
            .iter()
            .filter_map(|k| Some((k.to_string(), sub.metadata.get(*k)?.clone())))
            .collect();
        tags.insert("subscriptionId".into(), Value::from(sub.id.to_string()));
        tags.insert("subscriptionUid".into(), Value::from(sub.uid.to_string()));
        tags.insert("subscriptionCycle".into(), Value::from(cycle.sequence));
        let input = CreateLinkInput {
            title: Some(sub.label.clone()),
            description: sub.description.clone().filter(|d| !d.is_empty()),
            amount: cycle.amount_usd.clone(),
            fiat_currency: Some("USD".into()),
            asset: Some(sub.settlement_asset.clone()),
            order_id: Some(format!("{}-{}", sub.uid, cycle.sequence)),
            customer_email: Some(sub.customer_email.clone()),
            client_id,
            expiration_time: Some("never".into()),
            metadata: Some(tags),
            ..Default::default()
        };
        Ok(self
            .links
            .issue_link(sub.company_id, input, sub.created_by.clone(), None)?)
    }

    /// Up to 200 newest subscriptions with their cycles: company-wide for keys and sessions,
    /// the grant's own for OAuth.
    pub fn list_subscriptions(
        &self,
        p: &Principal,
    ) -> Result<Vec<SubscriptionView>, SubscriptionError> {
        p.authorize(Scope::SubscriptionsRead)?;
        let filter = SubscriptionFilter {
            grant_id: p.grant_id(),
        };
        let subs = self.store.subscriptions(p.company_id, filter, LIST_LIMIT)?;
        Ok(self.with_cycles(p.company_id, subs)?)
    }

    fn with_cycles(
        &self,
        company: crate::kernel::ids::CompanyId,
        subs: Vec<Subscription>,
    ) -> PortResult<Vec<SubscriptionView>> {
        let ids: Vec<SubscriptionId> = subs.iter().map(|s| s.id).collect();
        let mut cycles = self.store.cycles(company, &ids)?;
        Ok(subs
            .into_iter()
            .map(|s| {
                let mine: Vec<Cycle>;
                (mine, cycles) = cycles.drain(..).partition(|c| c.subscription_id == s.id);
                let mut mine = mine;
                mine.sort_by_key(|c| c.sequence);
                SubscriptionView {
                    subscription: s,
                    cycles: mine,
                }
            })
            .collect())
    }

    /// One subscription with its cycles; another company's (or grant's) is `NotFound`.
    pub fn get_subscription(
        &self,
        p: &Principal,
        uid: &SubscriptionUid,
    ) -> Result<SubscriptionView, SubscriptionError> {
        p.authorize(Scope::SubscriptionsRead)?;
        let sub = self.visible(p, uid)?;
        self.view(sub)
    }

    fn view(&self, sub: Subscription) -> Result<SubscriptionView, SubscriptionError> {
        let company = sub.company_id;
        Ok(self
            .with_cycles(company, vec![sub])?
            .pop()
            .ok_or_else(|| Fault::new("subscription vanished"))?)
    }

    fn visible(
        &self,
        p: &Principal,
        uid: &SubscriptionUid,
    ) -> Result<Subscription, SubscriptionError> {
        let sub = self
            .store
            .subscription(p.company_id, uid)?
            .ok_or(NOT_FOUND)?;
        if let Some(g) = p.grant_id() {
            if sub.created_by != crate::links::CreatedBy::Grant(g) {
                return Err(NOT_FOUND.into());
            }
        }
        Ok(sub)
    }

    /// The merchant's move (`PATCH {status}`): the contract's table, one webhook per move.
    pub fn set_subscription_status(
        &self,
        p: &Principal,
        uid: &SubscriptionUid,
        to: SubscriptionStatus,
    ) -> Result<SubscriptionView, SubscriptionError> {
        p.authorize(Scope::SubscriptionsWrite)?;
        let sub = self.visible(p, uid)?;
        let sub = self.move_status(sub, to, Actor::Merchant)?;
        self.view(sub)
    }

    /// The customer portal: verified first (no read before), then the customer's
    /// subscriptions with their cycles, as far as the URL's rights reach (`PortalRights`:
    /// none without `see_subscriptions`, a grant's own only).
    pub fn portal(&self, params: &PortalParams) -> Result<PortalView, SubscriptionError> {
        let access = self.customers.open_portal(params)?;
        let rights = access.rights();
        let subs = if rights.see_subscriptions {
            self.store
                .contact_subscriptions(access.company_id, access.contact.id)?
                .into_iter()
                .filter(|s| reaches(&rights, s))
                .collect()
        } else {
            Vec::new()
        };
        let subscriptions = self.with_cycles(access.company_id, subs)?;
        let (company, _) = self.tenancy.company_with_settings(access.company_id)?;
        Ok(PortalView {
            access,
            company_name: company.name,
            subscriptions,
        })
    }

    /// The customer's own move from the portal (pause, resume, cancel): the signed URL and the
    /// form's token verified first (nothing read before); a subscription of another customer
    /// is `NotFound`.
    pub fn portal_set_status(
        &self,
        params: &PortalParams,
        token: &str,
        uid: &SubscriptionUid,
        to: SubscriptionStatus,
    ) -> Result<SubscriptionView, SubscriptionError> {
        let access = self.customers.open_portal_form(params, token)?;
        let rights = access.rights();
        if !rights.manage_subscriptions {
            return Err(crate::tenancy::Denied::Forbidden.into());
        }
        let sub = self
            .store
            .subscription(access.company_id, uid)?
            .filter(|s| s.contact_id == access.contact.id && reaches(&rights, s))
            .ok_or(NOT_FOUND)?;
        let sub = self.move_status(sub, to, Actor::Customer)?;
        self.view(sub)
    }

    /// Moves a subscription per the table (compare-and-set; a lost race is re-read and
    /// re-decided), writing one webhook delivery with the move. A cancel then archives the
    /// links of the cycles it cancelled.
    pub(super) fn move_status(
        &self,
        mut sub: Subscription,
        to: SubscriptionStatus,
        actor: Actor,
    ) -> Result<Subscription, SubscriptionError> {
        for _ in 0..3 {
            let (from, to, reason) = match transition(sub.status, to, actor)? {
                SubscriptionTransition::Same => return Ok(sub),
                SubscriptionTransition::Move { from, to, reason } => (from, to, reason),
            };
            let now = self.tenancy.company_now(sub.company_id)?;
            let cycles = self.store.cycles(sub.company_id, &[sub.id])?;
            let mut next_sequence = sub.next_sequence;
            let mut moved = Subscription {
                status: to,
                updated_at: now,
                ..sub.clone()
            };
            match to {
                SubscriptionStatus::Paused | SubscriptionStatus::Cancelled => {
                    moved.next_run_at = None
                }
                SubscriptionStatus::Active if from == SubscriptionStatus::Paused => {
                    // Cycles that fell due while paused are skipped, not billed late.
                    if let Some(n) = sub.schedule().first_cycle_at_or_after(now) {
                        next_sequence = next_sequence.max(n);
                    }
                    moved.next_run_at = Some(now);
                }
                _ => {}
            }
            moved.next_sequence = next_sequence;
            let cancel = to == SubscriptionStatus::Cancelled;
            let draft = self.draft(&moved, from, reason, actor, &cycles, now)?;
            let write = StatusWrite {
                company: sub.company_id,
                subscription: sub.id,
                from,
                to,
                at: now,
                next_sequence,
                next_run_at: moved.next_run_at,
                cancel_unpaid_cycles: cancel,
                deliveries: self.webhooks.subscription_deliveries(&draft)?,
            };
            if self.store.move_subscription(&write)? {
                if cancel {
                    for c in cycles.iter().filter(|c| c.status.is_cancellable()) {
                        if let Some(uid) = &c.payment_link_uid {
                            self.links.archive_link_of(sub.company_id, uid)?;
                        }
                    }
                }
                return Ok(moved);
            }
            sub = self
                .store
                .subscription(sub.company_id, &sub.uid)?
                .ok_or(NOT_FOUND)?;
        }
        Err(Fault::new("subscription status kept changing under us").into())
    }

    /// The webhook of a move: the subscription as the move leaves it and the cycle it is
    /// about (the oldest overdue one for the overdue rule, else the latest).
    fn draft(
        &self,
        moved: &Subscription,
        from: SubscriptionStatus,
        reason: Reason,
        actor: Actor,
        cycles: &[Cycle],
        now: Timestamp,
    ) -> PortResult<SubscriptionEventDraft> {
        let base = self.tenancy.pay_base(moved.company_id)?;
        let about = match reason {
            Reason::CycleOneDayOverdue => oldest_overdue(cycles, now),
            _ => None,
        }
        .or_else(|| cycles.iter().max_by_key(|c| c.sequence));
        let cycle = about.map(|c| {
            let status =
                if moved.status == SubscriptionStatus::Cancelled && c.status.is_cancellable() {
                    CycleStatus::Cancelled
                } else if reason == Reason::CycleOneDayOverdue && c.status == CycleStatus::Open {
                    CycleStatus::Overdue
                } else {
                    c.status
                };
            CycleSnapshot {
                id: c.id.to_string(),
                subscription_id: moved.id.to_string(),
                sequence: c.sequence,
                due_at: c.due_at,
                amount_usd: c.amount_usd.clone(),
                payment_link_id: c.payment_link_id.map(|l| l.to_string()),
                payment_link_uid: c.payment_link_uid.as_ref().map(|u| u.to_string()),
                payment_url: c.payment_link_uid.as_ref().map(|u| checkout_url(&base, u)),
                status: status.as_str().to_owned(),
            }
        });
        Ok(SubscriptionEventDraft {
            company: moved.company_id,
            trigger: actor.trigger().to_owned(),
            subscription: snapshot(moved, from),
            // Every subscription has cycle 0; the fallback is never used.
            cycle: cycle.unwrap_or_else(|| CycleSnapshot {
                id: String::new(),
                subscription_id: moved.id.to_string(),
                sequence: 0,
                due_at: moved.start_at,
                amount_usd: moved.amount_usd.clone(),
                payment_link_id: None,
                payment_link_uid: None,
                payment_url: None,
                status: CycleStatus::Scheduled.as_str().to_owned(),
            }),
            data: StatusChangeData {
                previous_status: from.as_str().to_owned(),
                next_status: moved.status.as_str().to_owned(),
                reason: reason.as_str().to_owned(),
            },
            created_at: now,
        })
    }
}

/// Whether a portal URL with `rights` reaches `sub`: the company's URL every one of the
/// customer's, a grant's URL those the grant created (as the grant's API calls).
fn reaches(rights: &crate::customers::portal::PortalRights, sub: &Subscription) -> bool {
    match rights.grant {
        None => true,
        Some(g) => sub.created_by == crate::links::CreatedBy::Grant(g),
    }
}

/// `subscription` of the envelope: the fields without cycles, plus `previousStatus`.
pub(super) fn snapshot(s: &Subscription, previous: SubscriptionStatus) -> SubscriptionSnapshot {
    SubscriptionSnapshot {
        id: s.id.to_string(),
        uid: s.uid.to_string(),
        status: s.status.as_str().to_owned(),
        previous_status: Some(previous.as_str().to_owned()),
        customer_email: s.customer_email.clone(),
        label: s.label.clone(),
        description: s.description.clone(),
        amount_usd: s.amount_usd.clone(),
        settlement_asset: s.settlement_asset.clone(),
        cadence: s.interval.cadence().as_str().to_owned(),
        billing_interval_unit: s.interval.unit().as_str().to_owned(),
        billing_interval_count: u32::from(s.interval.count()),
        start_at: s.start_at,
        timezone: s.zone.name().to_owned(),
        metadata: s.metadata.clone(),
        created_at: s.created_at,
        updated_at: s.updated_at,
    }
}
