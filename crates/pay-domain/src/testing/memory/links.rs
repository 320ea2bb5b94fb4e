//! The in-memory store: links.

use super::{unique_violation, MemStore};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::idempotency::Completion;
use crate::kernel::ids::*;
use crate::kernel::timestamp::Timestamp;
use crate::links::gateway::FormKeyStore;
use crate::links::ports::{LinkFilter, PaymentLinkStore};
use crate::links::{LinkStatus, PaymentLink};
use crate::settings::ports::SettingsStore;
use crate::settings::PaySettings;
use crate::tenancy::keys::Integration;
use time::Duration;

impl PaymentLinkStore for MemStore {
    fn insert_link(&self, link: &PaymentLink, completion: Option<&Completion>) -> PortResult<bool> {
        self.count_call("insert_link");
        let mut t = self.write();
        if t.links.iter().any(|l| l.uid == link.uid || l.id == link.id) {
            return Err(unique_violation("payment_links.uid"));
        }
        if !super::webhooks::complete(&mut t, completion) {
            return Ok(false);
        }
        t.links.push(link.clone());
        Ok(true)
    }

    fn links(
        &self,
        company: CompanyId,
        filter: LinkFilter,
        limit: usize,
    ) -> PortResult<Vec<PaymentLink>> {
        self.count_call("links");
        let mut list: Vec<PaymentLink> = self
            .tables()
            .links
            .iter()
            .filter(|l| l.company_id == company && !l.is_anonymous())
            .filter(|l| filter.grant_id.is_none() || l.grant_id() == filter.grant_id)
            .filter(|l| filter.status.is_none_or(|s| l.status == s))
            .filter(|l| {
                filter
                    .search
                    .as_ref()
                    .is_none_or(|q| l.payload.search_text().contains(q.as_str()))
            })
            .cloned()
            .collect();
        list.sort_by_key(|l| std::cmp::Reverse((l.created_at, l.id)));
        list.truncate(limit);
        Ok(list)
    }

    fn link(&self, company: CompanyId, uid: &LinkUid) -> PortResult<Option<PaymentLink>> {
        self.count_call("link");
        Ok(self
            .tables()
            .links
            .iter()
            .find(|l| l.company_id == company && &l.uid == uid)
            .cloned())
    }

    fn set_link_status(
        &self,
        company: CompanyId,
        uid: &LinkUid,
        from: LinkStatus,
        to: LinkStatus,
        at: Timestamp,
        event: Option<&crate::kernel::events::EventRecord>,
    ) -> PortResult<bool> {
        self.count_call("set_link_status");
        let interference = self.cas_interference.lock().unwrap().pop_front();
        let mut t = self.write();
        let Some(link) = t
            .links
            .iter_mut()
            .find(|l| l.company_id == company && &l.uid == uid)
        else {
            return Ok(false);
        };
        if let Some(status) = interference {
            // Another writer got there a millisecond earlier.
            link.status = status;
            link.updated_at = at.minus(Duration::milliseconds(1));
        }
        if link.status != from {
            return Ok(false);
        }
        link.status = to;
        link.updated_at = at;
        t.events.extend(event.map(super::events::StoredEvent::new));
        Ok(true)
    }

    fn active_grant_subscription(&self, grant: uuid::Uuid) -> PortResult<Option<uuid::Uuid>> {
        self.count_call("active_grant_subscription");
        Ok(self
            .tables()
            .grant_subscriptions
            .iter()
            .find(|s| s.grant_id == grant && s.secret.is_some())
            .map(|s| s.id))
    }
}

impl SettingsStore for MemStore {
    fn save_settings(
        &self,
        company: CompanyId,
        settings: &PaySettings,
        _at: Timestamp,
    ) -> PortResult<()> {
        self.count_call("save_settings");
        let mut t = self.write();
        let (_, s) = t
            .companies
            .iter_mut()
            .find(|(c, _)| c.id == company)
            .ok_or_else(|| Fault::new("foreign key: company"))?;
        *s = settings.clone();
        Ok(())
    }
}

impl crate::links::ports::AnonymousLinkStore for MemStore {
    fn insert_anonymous_link(
        &self,
        link: &PaymentLink,
        webhook: Option<&crate::webhooks::LinkWebhook>,
    ) -> PortResult<()> {
        self.count_call("insert_anonymous_link");
        let mut t = self.write();
        if t.links.iter().any(|l| l.uid == link.uid || l.id == link.id) {
            return Err(unique_violation("payment_links.uid"));
        }
        t.links.push(link.clone());
        if let Some(w) = webhook {
            t.link_webhooks.push(w.clone());
        }
        Ok(())
    }

    fn link_webhook(&self, link_uid: &LinkUid) -> PortResult<Option<crate::webhooks::LinkWebhook>> {
        self.count_call("link_webhook");
        Ok(self
            .tables()
            .link_webhooks
            .iter()
            .find(|w| w.link_uid == link_uid.as_str())
            .cloned())
    }
}

impl FormKeyStore for MemStore {
    fn integration_by_form_key(&self, key: &FormKeyId) -> PortResult<Option<Integration>> {
        self.count_call("integration_by_form_key");
        Ok(self
            .tables()
            .integrations
            .iter()
            .find(|i| &i.integration.form_key_id == key)
            .map(|i| i.integration.clone()))
    }
}
