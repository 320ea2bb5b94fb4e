//! A merchant's view of the company's OAuth access (the dashboard's Developers screen): the
//! connected applications and native installations, and the revocation of one of them.

use super::*;
use crate::kernel::error::NotFound;
use crate::oauth::ConnectedApp;
use crate::tenancy::TenancyError;

impl OAuthService {
    /// Every grant of `company` (revoked ones too, newest first) with its application, scopes,
    /// last use and native installation (`OAuthStore::company_grants`), to any member of the
    /// team.
    pub fn connected_apps(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
    ) -> Result<Vec<ConnectedApp>, TenancyError> {
        self.tenancy
            .team_role::<TenancyError>(signed_in, company, None)?;
        Ok(self.store.company_grants(company)?)
    }

    /// A merchant ends a grant of `company` (a member with `settings.manage`): the grant and
    /// every token family of it are revoked in one transaction (`OAuthStore::revoke_grant`, the
    /// step the RFC 7009 disconnect of a native installation takes), so every code, access and
    /// refresh token of it, and every stored token answer, is refused from then on; a later
    /// consent starts new families. Returns the grant as it was listed before. An already
    /// revoked grant is answered the same, nothing changed (a retry). `NotFound` for another
    /// company's grant or none. What a native installation's disconnect keeps besides is
    /// `InstallationService::disconnect`'s.
    pub(crate) fn revoke_connected_app(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        grant: GrantId,
    ) -> Result<ConnectedApp, TenancyError> {
        self.tenancy.team_role::<TenancyError>(
            signed_in,
            company,
            Some(Permission::SettingsManage),
        )?;
        let app = self
            .store
            .company_grants(company)?
            .into_iter()
            .find(|a| a.grant.id == grant)
            .ok_or(NotFound { kind: "grant" })?;
        self.store.revoke_grant(app.grant.id, self.k.now())?;
        Ok(app)
    }
}
