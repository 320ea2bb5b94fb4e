//! A company's security reset (`pay-server admin security-reset`): its OAuth access ends, and
//! with it the sign-ins of its members and its API keys (tenancy).

use super::*;

/// What a security reset ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityReset {
    /// Grants this reset revoked (a rerun counts none twice).
    pub grants_revoked: u64,
    /// Every official native installation's grant of the company (revoked now or before):
    /// what a disconnect keeps of each is kept (`InstallationService::security_reset`).
    pub native_grants: Vec<GrantId>,
    /// Sign-ins of the company's members that ended.
    pub sign_ins_ended: u64,
    /// API keys of the company that were disabled.
    pub api_keys_disabled: u64,
}

impl OAuthService {
    /// Ends every access to `company` in an order that leaves none behind, each step
    /// idempotent (a failure in between: run it again): first the sign-ins of its members
    /// (no new consent can start), then, in one transaction, every grant of the company with
    /// all its token families and their stored token answers (access tokens, refresh tokens
    /// and token-request retries all refused from then on; a later consent starts a new
    /// family), then its API keys. `None` when there is no such company.
    pub fn security_reset(&self, company: CompanyId) -> PortResult<Option<SecurityReset>> {
        if !self.tenancy.company_exists(company)? {
            return Ok(None);
        }
        let sign_ins_ended = self.tenancy.end_member_sign_ins(company)?;
        let grants = self.store.revoke_company_grants(company, self.k.now())?;
        let api_keys_disabled = self.tenancy.disable_api_keys(company)?;
        Ok(Some(SecurityReset {
            grants_revoked: grants.iter().filter(|g| g.revoked_now).count() as u64,
            native_grants: grants.iter().filter(|g| g.native).map(|g| g.id).collect(),
            sign_ins_ended,
            api_keys_disabled,
        }))
    }
}
