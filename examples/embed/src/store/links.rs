//! Payment links (the merchant's and anonymous ones) and the gateway form's key lookup.

use std::collections::BTreeMap;

use pay_domain::kernel::events::EventRecord;
use pay_domain::kernel::idempotency::Completion;
use pay_domain::kernel::ids::{CompanyId, FormKeyId, LinkUid};
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::links::gateway::FormKeyStore;
use pay_domain::links::ports::{AnonymousLinkStore, LinkFilter, PaymentLinkStore};
use pay_domain::links::{LinkStatus, PaymentLink};
use pay_domain::tenancy::keys::Integration;
use pay_domain::webhooks::LinkWebhook;
use pay_domain::{Fault, PortResult};

use super::{HostStore, Tables};

impl Tables {
    fn add_link(&mut self, link: &PaymentLink) -> PortResult<()> {
        let uid = link.uid.as_str();
        if self.links.contains_key(uid) || self.link_by_id(link.id).is_some() {
            return Err(Fault::new("payment link uid or id already used"));
        }
        self.links.insert(uid.to_owned(), link.clone());
        Ok(())
    }
}

impl PaymentLinkStore for HostStore {
    fn insert_link(&self, link: &PaymentLink, completion: Option<&Completion>) -> PortResult<bool> {
        let mut t = self.lock();
        // One lock: the link and its keyed answer are one transaction.
        if let Some(c) = completion {
            let id = (c.scope.clone(), c.key.clone());
            let claimed = t
                .idempotency
                .get(&id)
                .is_some_and(|r| r.token == c.token && r.answer.is_none());
            if !claimed {
                return Ok(false);
            }
            t.add_link(link)?;
            if let Some(r) = t.idempotency.get_mut(&id) {
                r.answer = Some(c.answer.clone());
            }
            return Ok(true);
        }
        t.add_link(link)?;
        Ok(true)
    }

    fn links(
        &self,
        company: CompanyId,
        filter: LinkFilter,
        limit: usize,
    ) -> PortResult<Vec<PaymentLink>> {
        let t = self.lock();
        let by_age: BTreeMap<_, &PaymentLink> = t
            .links
            .values()
            .filter(|l| l.company_id == company && !l.is_anonymous())
            .filter(|l| filter.grant_id.is_none() || l.grant_id() == filter.grant_id)
            .filter(|l| filter.status.is_none_or(|s| l.status == s))
            .filter(|l| {
                filter
                    .search
                    .as_ref()
                    .is_none_or(|q| l.payload.search_text().contains(q.as_str()))
            })
            .map(|l| ((l.created_at, l.id), l))
            .collect();
        // Newest first.
        Ok(by_age.into_values().rev().take(limit).cloned().collect())
    }

    fn link(&self, company: CompanyId, uid: &LinkUid) -> PortResult<Option<PaymentLink>> {
        let t = self.lock();
        let found = t
            .links
            .get(uid.as_str())
            .filter(|l| l.company_id == company);
        Ok(found.cloned())
    }

    fn set_link_status(
        &self,
        company: CompanyId,
        uid: &LinkUid,
        from: LinkStatus,
        to: LinkStatus,
        at: Timestamp,
        event: Option<&EventRecord>,
    ) -> PortResult<bool> {
        let mut t = self.lock();
        let Some(link) = t
            .links
            .get_mut(uid.as_str())
            .filter(|l| l.company_id == company && l.status == from)
        else {
            return Ok(false);
        };
        link.status = to;
        link.updated_at = at;
        t.add_events(event.into_iter());
        Ok(true)
    }

    fn active_grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<uuid::Uuid>> {
        let t = self.lock();
        let sub = t.grant_subscriptions.get(&grant);
        Ok(sub.filter(|s| s.secret.is_some()).map(|s| s.id))
    }
}

impl AnonymousLinkStore for HostStore {
    fn insert_anonymous_link(
        &self,
        link: &PaymentLink,
        webhook: Option<&LinkWebhook>,
    ) -> PortResult<()> {
        let mut t = self.lock();
        t.add_link(link)?;
        if let Some(w) = webhook {
            t.link_webhooks.insert(w.link_uid.clone(), w.clone());
        }
        Ok(())
    }

    fn link_webhook(&self, link_uid: &LinkUid) -> PortResult<Option<LinkWebhook>> {
        Ok(self.lock().link_webhooks.get(link_uid.as_str()).cloned())
    }
}

impl FormKeyStore for HostStore {
    fn integration_by_form_key(&self, key: &FormKeyId) -> PortResult<Option<Integration>> {
        let t = self.lock();
        let found = t.integrations.values().map(|s| &s.integration);
        Ok(found.into_iter().find(|i| &i.form_key_id == key).cloned())
    }
}
