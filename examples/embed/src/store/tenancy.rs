//! Merchants: users, companies, memberships, sign-ins and API keys; and the rate limits.

use std::collections::BTreeMap;

use pay_domain::kernel::events::EventRecord;
use pay_domain::kernel::ids::{CompanyId, KeyId, PartnerId, UserId};
use pay_domain::kernel::ratelimit::RateLimitStore;
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::settings::PaySettings;
use pay_domain::tenancy::keys::{Integration, StoredIntegration};
use pay_domain::tenancy::ports::{
    DomainWrite, IntegrationStore, NewTenant, SignInStore, StoredSignIn, TenancyStore,
};
use pay_domain::tenancy::{Company, Membership, Role, TeamMember, UserRecord};
use pay_domain::{Fault, PortResult};

use super::{HostStore, Tables};

impl Tables {
    fn email_taken(&self, user: &UserRecord) -> bool {
        self.users.contains_key(&user.id) || self.users.values().any(|u| u.email == user.email)
    }

    fn key_taken(&self, new: &Integration) -> bool {
        self.integrations.values().any(|s| {
            let i = &s.integration;
            i.partner_id == new.partner_id
                || i.key_id == new.key_id
                || i.form_key_id == new.form_key_id
        })
    }
}

impl TenancyStore for HostStore {
    fn create_tenant(&self, new: &NewTenant) -> PortResult<()> {
        let mut t = self.lock();
        let company = &new.company;
        let key = &new.integration.integration;
        match &new.new_user {
            Some(u) if t.email_taken(u) => return Err(Fault::new("e-mail already registered")),
            Some(u) if u.id != new.owner => return Err(Fault::new("owner is not the new user")),
            None if !t.users.contains_key(&new.owner) => return Err(Fault::new("unknown owner")),
            _ => {}
        }
        if t.companies.contains_key(&company.id) || key.company_id != company.id {
            return Err(Fault::new("company exists, or a key of another company"));
        }
        if t.key_taken(key) {
            return Err(Fault::new("key ids already used"));
        }
        if let Some(u) = &new.new_user {
            t.users.insert(u.id, u.clone());
        }
        t.companies
            .insert(company.id, (company.clone(), new.settings.clone()));
        t.members
            .insert((new.owner, company.id), (Role::Owner, company.created_at));
        t.integrations
            .insert(key.partner_id, new.integration.clone());
        Ok(())
    }

    fn add_member(
        &self,
        new_user: Option<&UserRecord>,
        user: UserId,
        company: CompanyId,
        role: Role,
        at: Timestamp,
    ) -> PortResult<()> {
        let mut t = self.lock();
        if !t.companies.contains_key(&company) || t.members.contains_key(&(user, company)) {
            return Err(Fault::new("no such company, or already a member"));
        }
        match new_user {
            Some(u) if u.id != user || t.email_taken(u) => {
                return Err(Fault::new("e-mail already registered"))
            }
            None if !t.users.contains_key(&user) => return Err(Fault::new("unknown user")),
            _ => {}
        }
        if let Some(u) = new_user {
            t.users.insert(u.id, u.clone());
        }
        t.members.insert((user, company), (role, at));
        Ok(())
    }

    fn user_by_email(&self, email: &str) -> PortResult<Option<UserRecord>> {
        Ok(self
            .lock()
            .users
            .values()
            .find(|u| u.email == email)
            .cloned())
    }

    fn is_empty(&self) -> PortResult<bool> {
        Ok(self.lock().users.is_empty())
    }

    fn memberships(&self, user: UserId) -> PortResult<Vec<Membership>> {
        let t = self.lock();
        let mut mine: Vec<(Timestamp, Membership)> = t
            .members
            .range((user, CompanyId(uuid::Uuid::nil()))..)
            .take_while(|((u, _), _)| *u == user)
            .map(|((_, c), (role, at))| {
                let name = t.companies.get(c).map(|(c, _)| c.name.clone());
                let m = Membership {
                    company_id: *c,
                    company_name: name.unwrap_or_default(),
                    role: *role,
                };
                (*at, m)
            })
            .collect();
        mine.sort_by_key(|(at, _)| *at);
        Ok(mine.into_iter().map(|(_, m)| m).collect())
    }

    fn members(&self, company: CompanyId) -> PortResult<Vec<TeamMember>> {
        let t = self.lock();
        let mut list: Vec<TeamMember> = t
            .members
            .iter()
            .filter(|((_, c), _)| *c == company)
            .filter_map(|((u, _), (role, at))| {
                Some(TeamMember {
                    user_id: *u,
                    email: t.users.get(u)?.email.clone(),
                    role: *role,
                    since: *at,
                })
            })
            .collect();
        list.sort_by(|a, b| (a.since, &a.email).cmp(&(b.since, &b.email)));
        Ok(list)
    }

    fn role(&self, user: UserId, company: CompanyId) -> PortResult<Option<Role>> {
        Ok(self.lock().members.get(&(user, company)).map(|(r, _)| *r))
    }

    fn advance_test_clock(
        &self,
        company: CompanyId,
        by_ms: i64,
        max_offset_ms: i64,
        event: Option<&EventRecord>,
    ) -> PortResult<Option<i64>> {
        let mut t = self.lock();
        let Some((c, _)) = t.companies.get_mut(&company) else {
            return Ok(None);
        };
        let moved = c.test_clock_offset_ms.saturating_add(by_ms);
        if moved > max_offset_ms {
            return Ok(None);
        }
        c.test_clock_offset_ms = moved;
        t.add_events(event.into_iter());
        Ok(Some(moved))
    }

    fn set_payment_link_domain(
        &self,
        company: CompanyId,
        domain: Option<&str>,
    ) -> PortResult<DomainWrite> {
        let mut t = self.lock();
        let taken = domain.is_some()
            && t.companies
                .values()
                .any(|(c, _)| c.id != company && c.payment_link_domain.as_deref() == domain);
        Ok(match t.companies.get_mut(&company) {
            None => DomainWrite::NoCompany,
            Some(_) if taken => DomainWrite::Taken,
            Some((c, _)) => {
                c.payment_link_domain = domain.map(str::to_owned);
                DomainWrite::Written
            }
        })
    }

    fn set_company_website(&self, company: CompanyId, website: Option<&str>) -> PortResult<bool> {
        let mut t = self.lock();
        let found = t.companies.get_mut(&company);
        let written = found.is_some();
        if let Some((c, _)) = found {
            c.website = website.map(str::to_owned);
        }
        Ok(written)
    }

    fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> PortResult<Option<(Company, PaySettings)>> {
        Ok(self.lock().companies.get(&company).cloned())
    }
}

impl SignInStore for HostStore {
    fn insert_sign_in(&self, s: &StoredSignIn) -> PortResult<()> {
        let mut t = self.lock();
        if t.sign_ins.contains_key(&s.token_digest.0) || t.sign_ins.values().any(|x| x.id == s.id) {
            return Err(Fault::new("sign-in already stored"));
        }
        t.sign_ins.insert(s.token_digest.0.clone(), s.clone());
        Ok(())
    }

    fn sign_in_by_token(&self, token_digest: &SecretDigest) -> PortResult<Option<StoredSignIn>> {
        Ok(self.lock().sign_ins.get(&token_digest.0).cloned())
    }

    fn delete_sign_in(&self, token_digest: &SecretDigest) -> PortResult<()> {
        self.lock().sign_ins.remove(&token_digest.0);
        Ok(())
    }

    fn delete_member_sign_ins(&self, company: CompanyId) -> PortResult<u64> {
        let mut t = self.lock();
        let members: Vec<UserId> = t
            .members
            .keys()
            .filter(|(_, c)| *c == company)
            .map(|(u, _)| *u)
            .collect();
        let before = t.sign_ins.len();
        t.sign_ins.retain(|_, s| !members.contains(&s.user_id));
        Ok((before - t.sign_ins.len()) as u64)
    }
}

impl IntegrationStore for HostStore {
    fn insert_integration(&self, new: &StoredIntegration) -> PortResult<()> {
        let mut t = self.lock();
        if t.key_taken(&new.integration) {
            return Err(Fault::new("key ids already used"));
        }
        t.integrations
            .insert(new.integration.partner_id, new.clone());
        Ok(())
    }

    fn integrations(&self, company: CompanyId) -> PortResult<Vec<Integration>> {
        let t = self.lock();
        let by_age: BTreeMap<_, &Integration> = t
            .integrations
            .values()
            .map(|s| &s.integration)
            .filter(|i| i.company_id == company)
            .map(|i| ((i.created_at, i.partner_id), i))
            .collect();
        // Newest first.
        Ok(by_age.into_values().rev().cloned().collect())
    }

    fn integration_by_key_id(&self, key_id: &KeyId) -> PortResult<Option<StoredIntegration>> {
        let t = self.lock();
        let found = t
            .integrations
            .values()
            .find(|s| &s.integration.key_id == key_id);
        Ok(found.cloned())
    }

    fn set_integration_enabled(
        &self,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> PortResult<Option<Integration>> {
        let mut t = self.lock();
        let row = t
            .integrations
            .get_mut(&partner)
            .filter(|s| s.integration.company_id == company);
        Ok(row.map(|s| {
            s.integration.enabled = enabled;
            s.integration.clone()
        }))
    }

    fn delete_integration(&self, company: CompanyId, partner: PartnerId) -> PortResult<bool> {
        let mut t = self.lock();
        let mine = t
            .integrations
            .get(&partner)
            .is_some_and(|s| s.integration.company_id == company);
        if mine {
            t.integrations.remove(&partner);
        }
        Ok(mine)
    }

    fn touch_integration(&self, partner: PartnerId, at: Timestamp) -> PortResult<()> {
        if let Some(s) = self.lock().integrations.get_mut(&partner) {
            s.integration.last_used_at = Some(at);
        }
        Ok(())
    }
}

impl RateLimitStore for HostStore {
    fn hit(
        &self,
        bucket: &str,
        at: Timestamp,
        window: time::Duration,
        limit: u64,
    ) -> PortResult<bool> {
        let mut t = self.lock();
        let hits = t.hits.entry(bucket.to_owned()).or_default();
        let since = at.minus(window);
        // A hit older than two windows counts for no call whose `at` is at most a window
        // behind this one (callers read the clock just before): forgotten, so that a
        // long-running host does not keep every hit.
        hits.retain(|h| *h >= since.minus(window));
        let counted = (hits.iter().filter(|h| **h >= since).count() as u64) < limit;
        if counted {
            hits.push(at);
        }
        Ok(counted)
    }

    fn clear_hits(&self, bucket: &str) -> PortResult<()> {
        self.lock().hits.remove(bucket);
        Ok(())
    }

    fn forget_hit(&self, bucket: &str, at: Timestamp) -> PortResult<()> {
        if let Some(hits) = self.lock().hits.get_mut(bucket) {
            if let Some(i) = hits.iter().position(|h| *h == at) {
                hits.swap_remove(i);
            }
        }
        Ok(())
    }
}
