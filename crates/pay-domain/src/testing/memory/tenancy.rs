//! The in-memory store: tenancy.

use super::{unique_violation, MemStore, MemberRow};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::*;
use crate::kernel::ports::HealthCheck;
use crate::kernel::ratelimit::RateLimitStore;
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::settings::PaySettings;
use crate::tenancy::keys::{Integration, StoredIntegration};
use crate::tenancy::ports::{
    DomainWrite, IntegrationStore, NewTenant, SignInStore, StoredSignIn, TenancyStore,
};
use crate::tenancy::{Company, Membership, Role, TeamMember, UserRecord};
use time::Duration;

impl TenancyStore for MemStore {
    fn create_tenant(&self, tenant: &NewTenant) -> PortResult<()> {
        self.count_call("create_tenant");
        let mut t = self.write();
        // Check everything first: all or nothing.
        if let Some(u) = &tenant.new_user {
            if t.users.iter().any(|x| x.email == u.email || x.id == u.id) {
                return Err(unique_violation("users.email"));
            }
            if u.id != tenant.owner {
                return Err(Fault::new("owner is not the new user"));
            }
        } else if !t.users.iter().any(|x| x.id == tenant.owner) {
            return Err(Fault::new("unknown owner"));
        }
        if t.companies.iter().any(|(c, _)| c.id == tenant.company.id) {
            return Err(unique_violation("companies.id"));
        }
        let i = &tenant.integration.integration;
        if i.company_id != tenant.company.id {
            return Err(Fault::new("integration of another company"));
        }
        if t.integrations.iter().any(|x| {
            x.integration.partner_id == i.partner_id
                || x.integration.key_id == i.key_id
                || x.integration.form_key_id == i.form_key_id
        }) {
            return Err(unique_violation("integrations"));
        }
        if let Some(u) = &tenant.new_user {
            t.users.push(u.clone());
        }
        t.companies
            .push((tenant.company.clone(), tenant.settings.clone()));
        t.members.push(MemberRow {
            user: tenant.owner,
            company: tenant.company.id,
            role: Role::Owner,
            at: tenant.company.created_at,
        });
        t.integrations.push(tenant.integration.clone());
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
        self.count_call("add_member");
        let mut t = self.write();
        if !t.companies.iter().any(|(c, _)| c.id == company) {
            return Err(Fault::new("foreign key: company"));
        }
        match new_user {
            Some(u) => {
                if u.id != user {
                    return Err(Fault::new("user id mismatch"));
                }
                if t.users.iter().any(|x| x.email == u.email || x.id == u.id) {
                    return Err(unique_violation("users.email"));
                }
            }
            None => {
                if !t.users.iter().any(|x| x.id == user) {
                    return Err(Fault::new("foreign key: user"));
                }
            }
        }
        if t.members
            .iter()
            .any(|m| m.user == user && m.company == company)
        {
            return Err(unique_violation("memberships"));
        }
        if let Some(u) = new_user {
            t.users.push(u.clone());
        }
        t.members.push(MemberRow {
            user,
            company,
            role,
            at,
        });
        Ok(())
    }

    fn user_by_email(&self, email: &str) -> PortResult<Option<UserRecord>> {
        self.count_call("user_by_email");
        Ok(self
            .tables()
            .users
            .iter()
            .find(|u| u.email == email)
            .cloned())
    }

    fn is_empty(&self) -> PortResult<bool> {
        self.count_call("is_empty");
        Ok(self.tables().users.is_empty())
    }

    fn memberships(&self, user: UserId) -> PortResult<Vec<Membership>> {
        self.count_call("memberships");
        let t = self.tables();
        let mut rows: Vec<&MemberRow> = t.members.iter().filter(|m| m.user == user).collect();
        // Oldest first; a stable sort keeps insertion order for equal instants.
        rows.sort_by_key(|m| m.at);
        Ok(rows
            .into_iter()
            .map(|m| Membership {
                company_id: m.company,
                company_name: t
                    .companies
                    .iter()
                    .find(|(c, _)| c.id == m.company)
                    .map(|(c, _)| c.name.clone())
                    .unwrap_or_default(),
                role: m.role,
            })
            .collect())
    }

    fn members(&self, company: CompanyId) -> PortResult<Vec<TeamMember>> {
        self.count_call("members");
        let t = self.tables();
        let mut list: Vec<TeamMember> = t
            .members
            .iter()
            .filter(|m| m.company == company)
            .filter_map(|m| {
                let user = t.users.iter().find(|u| u.id == m.user)?;
                Some(TeamMember {
                    user_id: m.user,
                    email: user.email.clone(),
                    role: m.role,
                    since: m.at,
                })
            })
            .collect();
        list.sort_by(|a, b| (a.since, &a.email).cmp(&(b.since, &b.email)));
        Ok(list)
    }

    fn role(&self, user: UserId, company: CompanyId) -> PortResult<Option<Role>> {
        self.count_call("role");
        Ok(self
            .tables()
            .members
            .iter()
            .find(|m| m.user == user && m.company == company)
            .map(|m| m.role))
    }

    fn company_with_settings(
        &self,
        company: CompanyId,
    ) -> PortResult<Option<(Company, PaySettings)>> {
        self.count_call("company_with_settings");
        Ok(self
            .tables()
            .companies
            .iter()
            .find(|(c, _)| c.id == company)
            .cloned())
    }

    fn advance_test_clock(
        &self,
        company: CompanyId,
        by_ms: i64,
        max_offset_ms: i64,
        event: Option<&crate::kernel::events::EventRecord>,
    ) -> PortResult<Option<i64>> {
        self.count_call("advance_test_clock");
        let mut t = self.write();
        let Some((c, _)) = t.companies.iter_mut().find(|(c, _)| c.id == company) else {
            return Ok(None);
        };
        if c.test_clock_offset_ms > max_offset_ms - by_ms {
            return Ok(None);
        }
        c.test_clock_offset_ms += by_ms;
        let offset = c.test_clock_offset_ms;
        t.events.extend(event.map(super::events::StoredEvent::new));
        Ok(Some(offset))
    }

    fn set_payment_link_domain(
        &self,
        company: CompanyId,
        domain: Option<&str>,
    ) -> PortResult<DomainWrite> {
        self.count_call("set_payment_link_domain");
        let mut t = self.write();
        if let Some(d) = domain {
            if t.companies
                .iter()
                .any(|(c, _)| c.id != company && c.payment_link_domain.as_deref() == Some(d))
            {
                return Ok(DomainWrite::Taken);
            }
        }
        let Some((c, _)) = t.companies.iter_mut().find(|(c, _)| c.id == company) else {
            return Ok(DomainWrite::NoCompany);
        };
        c.payment_link_domain = domain.map(str::to_owned);
        Ok(DomainWrite::Written)
    }

    fn set_company_website(&self, company: CompanyId, website: Option<&str>) -> PortResult<bool> {
        self.count_call("set_company_website");
        let mut t = self.write();
        let Some((c, _)) = t.companies.iter_mut().find(|(c, _)| c.id == company) else {
            return Ok(false);
        };
        c.website = website.map(str::to_owned);
        Ok(true)
    }
}

impl SignInStore for MemStore {
    fn insert_sign_in(&self, session: &StoredSignIn) -> PortResult<()> {
        self.count_call("insert_sign_in");
        let mut t = self.write();
        if t.sessions
            .iter()
            .any(|s| s.id == session.id || s.token_digest == session.token_digest)
        {
            return Err(unique_violation("sessions"));
        }
        t.sessions.push(session.clone());
        Ok(())
    }

    fn sign_in_by_token(&self, token_digest: &SecretDigest) -> PortResult<Option<StoredSignIn>> {
        self.count_call("sign_in_by_token");
        Ok(self
            .tables()
            .sessions
            .iter()
            .find(|s| &s.token_digest == token_digest)
            .cloned())
    }

    fn delete_sign_in(&self, token_digest: &SecretDigest) -> PortResult<()> {
        self.count_call("delete_sign_in");
        self.write()
            .sessions
            .retain(|s| &s.token_digest != token_digest);
        Ok(())
    }

    fn delete_member_sign_ins(&self, company: CompanyId) -> PortResult<u64> {
        self.count_call("delete_member_sign_ins");
        let mut t = self.write();
        let members: Vec<UserId> = t
            .members
            .iter()
            .filter(|m| m.company == company)
            .map(|m| m.user)
            .collect();
        let before = t.sessions.len();
        t.sessions.retain(|s| !members.contains(&s.user_id));
        Ok((before - t.sessions.len()) as u64)
    }
}

impl RateLimitStore for MemStore {
    fn hit(&self, bucket: &str, at: Timestamp, window: Duration, limit: u64) -> PortResult<bool> {
        self.count_call("rate_hit");
        // One lock for the count and the insert: atomic, as the port asks.
        let mut t = self.write();
        let since = at.minus(window);
        let n = t
            .rate_hits
            .iter()
            .filter(|(b, a)| b == bucket && *a >= since)
            .count() as u64;
        if n >= limit {
            return Ok(false);
        }
        t.rate_hits.push((bucket.to_owned(), at));
        Ok(true)
    }

    fn clear_hits(&self, bucket: &str) -> PortResult<()> {
        self.count_call("clear_hits");
        self.write().rate_hits.retain(|(b, _)| b != bucket);
        Ok(())
    }

    fn forget_hit(&self, bucket: &str, at: Timestamp) -> PortResult<()> {
        self.count_call("forget_hit");
        let mut t = self.write();
        if let Some(i) = t
            .rate_hits
            .iter()
            .position(|(b, a)| b == bucket && *a == at)
        {
            t.rate_hits.remove(i);
        }
        Ok(())
    }
}

impl IntegrationStore for MemStore {
    fn insert_integration(&self, integration: &StoredIntegration) -> PortResult<()> {
        self.count_call("insert_integration");
        let mut t = self.write();
        let i = &integration.integration;
        if t.integrations.iter().any(|x| {
            x.integration.partner_id == i.partner_id
                || x.integration.key_id == i.key_id
                || x.integration.form_key_id == i.form_key_id
        }) {
            return Err(unique_violation("integrations"));
        }
        t.integrations.push(integration.clone());
        Ok(())
    }

    fn integrations(&self, company: CompanyId) -> PortResult<Vec<Integration>> {
        self.count_call("integrations");
        let mut list: Vec<Integration> = self
            .tables()
            .integrations
            .iter()
            .filter(|i| i.integration.company_id == company)
            .map(|i| i.integration.clone())
            .collect();
        // Newest first; partner ids (time-ordered) break ties.
        list.sort_by_key(|i| std::cmp::Reverse((i.created_at, i.partner_id)));
        Ok(list)
    }

    fn integration_by_key_id(&self, key_id: &KeyId) -> PortResult<Option<StoredIntegration>> {
        self.count_call("integration_by_key_id");
        Ok(self
            .tables()
            .integrations
            .iter()
            .find(|i| &i.integration.key_id == key_id)
            .cloned())
    }

    fn set_integration_enabled(
        &self,
        company: CompanyId,
        partner: PartnerId,
        enabled: bool,
    ) -> PortResult<Option<Integration>> {
        self.count_call("set_integration_enabled");
        let mut t = self.write();
        Ok(t.integrations
            .iter_mut()
            .find(|i| i.integration.company_id == company && i.integration.partner_id == partner)
            .map(|i| {
                i.integration.enabled = enabled;
                i.integration.clone()
            }))
    }

    fn delete_integration(&self, company: CompanyId, partner: PartnerId) -> PortResult<bool> {
        self.count_call("delete_integration");
        let mut t = self.write();
        let before = t.integrations.len();
        t.integrations.retain(|i| {
            !(i.integration.company_id == company && i.integration.partner_id == partner)
        });
        Ok(t.integrations.len() != before)
    }

    fn touch_integration(&self, partner: PartnerId, at: Timestamp) -> PortResult<()> {
        self.count_call("touch_integration");
        let mut t = self.write();
        if let Some(i) = t
            .integrations
            .iter_mut()
            .find(|i| i.integration.partner_id == partner)
        {
            i.integration.last_used_at = Some(at);
        }
        Ok(())
    }
}

impl HealthCheck for MemStore {
    fn ping(&self) -> PortResult<()> {
        self.count_call("ping");
        Ok(())
    }

    fn prune(&self, sessions_before: Timestamp, hits_before: Timestamp) -> PortResult<u64> {
        self.count_call("prune");
        let mut t = self.write();
        let before = t.sessions.len() + t.rate_hits.len();
        t.sessions.retain(|s| s.expires_at >= sessions_before);
        t.rate_hits.retain(|(_, at)| *at >= hits_before);
        Ok((before - t.sessions.len() - t.rate_hits.len()) as u64)
    }
}
