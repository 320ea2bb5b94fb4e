//! The in-memory store: onboarding partners and drafts, and the claim that creates a draft's
//! company.

use super::{unique_violation, MemStore, MemberRow};
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::{DraftId, OnboardingPartnerId};
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::onboarding::ports::{ClaimedTenant, OnboardingStore};
use crate::onboarding::{Partner, StoredDraft, StoredPartner};
use crate::tenancy::Role;

impl OnboardingStore for MemStore {
    fn insert_partner(&self, partner: &StoredPartner) -> PortResult<()> {
        self.count_call("insert_partner");
        let mut t = self.write();
        if t.onboarding_partners
            .iter()
            .any(|p| p.partner.id == partner.partner.id || p.secret_digest == partner.secret_digest)
        {
            return Err(unique_violation("onboarding_partners"));
        }
        t.onboarding_partners.push(partner.clone());
        Ok(())
    }

    fn partner_by_secret(&self, digest: &SecretDigest) -> PortResult<Option<Partner>> {
        self.count_call("partner_by_secret");
        Ok(self
            .tables()
            .onboarding_partners
            .iter()
            .find(|p| p.secret_digest == *digest)
            .map(|p| p.partner.clone()))
    }

    fn insert_draft(&self, draft: &StoredDraft) -> PortResult<bool> {
        self.count_call("insert_draft");
        let mut t = self.write();
        let d = &draft.draft;
        if !t
            .onboarding_partners
            .iter()
            .any(|p| p.partner.id == d.partner_id)
        {
            return Err(Fault::new("foreign key: partner"));
        }
        if t.onboarding_drafts.iter().any(|x| {
            x.draft.partner_id == d.partner_id && x.draft.idempotency_key == d.idempotency_key
        }) {
            return Ok(false);
        }
        if t.onboarding_drafts
            .iter()
            .any(|x| x.draft.id == d.id || x.claim_digest == draft.claim_digest)
        {
            return Err(unique_violation("onboarding_drafts"));
        }
        t.onboarding_drafts.push(draft.clone());
        Ok(true)
    }

    fn draft_by_key(
        &self,
        partner: OnboardingPartnerId,
        key: &str,
    ) -> PortResult<Option<StoredDraft>> {
        self.count_call("draft_by_key");
        Ok(self
            .tables()
            .onboarding_drafts
            .iter()
            .find(|x| x.draft.partner_id == partner && x.draft.idempotency_key == key)
            .cloned())
    }

    fn draft_by_claim(&self, digest: &SecretDigest) -> PortResult<Option<(StoredDraft, Partner)>> {
        self.count_call("draft_by_claim");
        let t = self.tables();
        let Some(d) = t
            .onboarding_drafts
            .iter()
            .find(|x| x.claim_digest == *digest)
        else {
            return Ok(None);
        };
        let p = t
            .onboarding_partners
            .iter()
            .find(|p| p.partner.id == d.draft.partner_id)
            .ok_or_else(|| Fault::new("foreign key: partner"))?;
        Ok(Some((d.clone(), p.partner.clone())))
    }

    fn claim_draft(
        &self,
        draft: DraftId,
        at: Timestamp,
        tenant: &ClaimedTenant,
    ) -> PortResult<bool> {
        self.count_call("claim_draft");
        let mut t = self.write();
        let Some(i) = t.onboarding_drafts.iter().position(|x| x.draft.id == draft) else {
            return Ok(false);
        };
        let d = &t.onboarding_drafts[i].draft;
        if d.claimed_at.is_some() || d.expires_at <= at {
            return Ok(false);
        }
        match &tenant.new_user {
            Some(u) => {
                if u.id != tenant.owner {
                    return Err(Fault::new("owner is not the new user"));
                }
                if t.users.iter().any(|x| x.email == u.email || x.id == u.id) {
                    return Err(unique_violation("users.email"));
                }
            }
            None if !t.users.iter().any(|x| x.id == tenant.owner) => {
                return Err(Fault::new("unknown owner"));
            }
            None => {}
        }
        if t.companies.iter().any(|(c, _)| c.id == tenant.company.id) {
            return Err(unique_violation("companies.id"));
        }
        let d = &mut t.onboarding_drafts[i].draft;
        d.claimed_at = Some(at);
        d.company_id = Some(tenant.company.id);
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
        Ok(true)
    }
}
