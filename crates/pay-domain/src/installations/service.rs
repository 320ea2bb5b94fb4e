//! Installations use cases over their own ports and OAuth (the application each installation
//! gets, its key, the DPoP `jti` store).

use std::sync::Arc;

use crate::installations::error::{InstallationError, PlatformExists, RegistrationConflict};
use crate::installations::model::{
    is_platform_id, Installation, NativeClient, NativePlatform, NewPlatform, NATIVE_SCOPES,
};
use crate::installations::ports::InstallationPorts;
use crate::installations::registration::{CheckedRegistration, RegistrationBody};
use crate::kernel::error::{Fault, FieldError};
use crate::kernel::ids::{ApplicationId, ClientId, CompanyId, GrantId};
use crate::kernel::service::Kernel;
use crate::oauth::{
    Application, ClientAuth, ClientType, ConnectedApp, OAuthError, OAuthService, ProofFacts,
    RegisteredKey, ResourceErrorCode, ResourceRefusal, SecurityReset, StoredApplication,
    DEFAULT_REFRESH_TTL,
};
use crate::tenancy::{SignedIn, TenancyError};
use crate::webhooks::WebhookService;

type Result<T, E = InstallationError> = std::result::Result<T, E>;

fn proof_refused(description: &'static str) -> InstallationError {
    ResourceRefusal::new(ResourceErrorCode::InvalidDpopProof, description).into()
}

/// Native platform templates and the installations registered on them.
#[derive(Clone)]
pub struct InstallationService {
    k: Kernel,
    oauth: OAuthService,
    /// What a disconnect keeps of the grant's webhook subscription.
    webhooks: WebhookService,
    store: Arc<dyn InstallationPorts>,
    /// The operator's private-targets switch: development sites on loopback or private
    /// addresses may register.
    allow_private_targets: bool,
}

impl std::fmt::Debug for InstallationService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallationService")
            .finish_non_exhaustive()
    }
}

impl InstallationService {
    /// The installations context over its own store and OAuth.
    pub fn new(
        k: Kernel,
        oauth: OAuthService,
        webhooks: WebhookService,
        store: Arc<dyn InstallationPorts>,
        allow_private_targets: bool,
    ) -> InstallationService {
        InstallationService {
            k,
            oauth,
            webhooks,
            store,
            allow_private_targets,
        }
    }

    /// `POST /oauth/revoke` (RFC 7009, `OAuthService::revoke`). Revoking a refresh token of
    /// an official native installation is its disconnect: the family and the grant end, and
    /// the grant's active webhook subscription is disabled for new links while its endpoint
    /// and a separately sealed copy of its secret are kept for the late payment-status events
    /// of the links issued before (`WebhookService::retain_grant_subscription`). A retry after
    /// a failure in between keeps what the first did not.
    pub fn revoke(&self, client: &ClientAuth, token: &str) -> Result<(), OAuthError> {
        if let Some(grant) = self.oauth.revoke_reporting(client, token)? {
            self.webhooks.retain_grant_subscription(grant.id.0)?;
        }
        Ok(())
    }

    /// A merchant revokes a connected application or disconnects a native installation (the
    /// dashboard's Developers screen, `settings.manage`): the grant and all its token families
    /// end in one transaction (`OAuthService::revoke_connected_app`); for an official native
    /// installation's grant, what a disconnect keeps is kept as on `revoke`
    /// (`WebhookService::retain_grant_subscription`); other applications have no such
    /// exception. A retry (the grant already revoked) keeps what the first did not. `NotFound`
    /// for another company's grant or none.
    pub fn disconnect(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        grant: GrantId,
    ) -> Result<ConnectedApp, TenancyError> {
        let app = self.oauth.revoke_connected_app(signed_in, company, grant)?;
        if app.is_native() {
            self.webhooks.retain_grant_subscription(app.grant.id.0)?;
        }
        Ok(app)
    }

    /// `pay-server admin security-reset`: `OAuthService::security_reset` (every grant of the
    /// company with its families, its members' sign-ins, its API keys), then, for each
    /// official native installation's grant of the company, what a disconnect keeps is kept
    /// (`WebhookService::retain_grant_subscription`: disabled for new links, the endpoint and
    /// a sealed copy of the secret kept for the late payment-status events of the links
    /// issued before). A rerun after a failure in between keeps what the first did not.
    /// `None` when there is no such company.
    pub fn security_reset(&self, company: CompanyId) -> Result<Option<SecurityReset>, Fault> {
        let Some(reset) = self.oauth.security_reset(company)? else {
            return Ok(None);
        };
        for grant in &reset.native_grants {
            self.webhooks.retain_grant_subscription(grant.0)?;
        }
        Ok(Some(reset))
    }

    /// Creates a platform template (`pay-server admin create-native-platform`) with the
    /// official native scopes. An existing identifier is `PlatformExists`: a template is never
    /// changed, so installations keep the branding their merchants approved.
    pub fn create_platform(&self, input: NewPlatform) -> Result<NativePlatform> {
        input.validate()?;
        let platform = NativePlatform {
            platform: input.platform,
            name: input.name.trim().to_owned(),
            icon_url: input.icon_url,
            support_url: input.support_url,
            scopes: NATIVE_SCOPES.to_vec(),
            created_at: self.k.now(),
        };
        if !self.store.insert_platform(&platform)? {
            return Err(PlatformExists.into());
        }
        Ok(platform)
    }

    /// The template a registration names; an unknown (or malformed) one is `Invalid` on
    /// `platform`.
    pub fn platform(&self, platform: &str) -> Result<NativePlatform> {
        let unknown = || FieldError::new("platform", "unknown platform");
        if !is_platform_id(platform) {
            return Err(unknown().into());
        }
        Ok(self.store.platform(platform)?.ok_or_else(unknown)?)
    }

    /// The registration body's field rules (400 on the first wrong field), before any proof
    /// is looked at.
    pub fn check_registration(&self, body: RegistrationBody) -> Result<CheckedRegistration> {
        Ok(body.check(self.allow_private_targets)?)
    }

    /// The key a `DPoP-Previous` proof must be made with when this registration changes the
    /// installation's key: its accepted key, when it is registered and `reg` names another.
    pub fn key_to_replace(&self, reg: &CheckedRegistration) -> Result<Option<String>> {
        Ok(self
            .store
            .installation(&reg.registration_id)?
            .and_then(|(_, app)| app.app.key)
            .map(|k| k.accepted_jkt)
            .filter(|accepted| *accepted != reg.dpop_jkt))
    }

    /// Registers a native installation (`POST /oauth/native/installations`). `proof` is the
    /// request's `DPoP` proof, verified by the edge; it must be made with the key `dpopJkt`
    /// names. The first registration of a `registrationId` creates the installation and its
    /// public, DPoP-bound application (`svc_app_...`) with the template's name and scopes;
    /// again with the same key it is found (support metadata updated, a pending replacement
    /// withdrawn). With another key, `previous` (`DPoP-Previous`) must be made with the
    /// accepted key: the new key then waits, pending, for the next consent (a pending key
    /// registered before is replaced). Platform and site never change (409).
    pub fn register(
        &self,
        reg: CheckedRegistration,
        proof: &ProofFacts,
        previous: Option<&ProofFacts>,
    ) -> Result<NativeClient> {
        if proof.jkt != reg.dpop_jkt {
            return Err(proof_refused(
                "the DPoP proof is not made with the key dpopJkt names",
            ));
        }
        let platform = self.platform(&reg.platform)?;
        for p in std::iter::once(proof).chain(previous) {
            if !self.oauth.record_proof(p)? {
                return Err(proof_refused(crate::oauth::PROOF_REPLAYED));
            }
        }
        let found = match self.store.installation(&reg.registration_id)? {
            Some(found) => found,
            None => {
                let (installation, app) = self.new_installation(&reg, &platform)?;
                if self.store.insert_installation(&installation, &app)? {
                    return Ok(client_of(&installation, &app, true));
                }
                // Another registration of this id won the race: answer as a re-registration.
                self.store
                    .installation(&reg.registration_id)?
                    .ok_or_else(|| Fault::new("installation lost after a unique violation"))?
            }
        };
        let (mut installation, app) = found;
        if installation.platform != reg.platform {
            return Err(RegistrationConflict { field: "platform" }.into());
        }
        if installation.site_url != reg.site_url {
            return Err(RegistrationConflict { field: "siteUrl" }.into());
        }
        let key = app
            .app
            .key
            .as_ref()
            .ok_or_else(|| Fault::new("native application without a key"))?;
        let accepted = key.accepted_jkt.as_str();
        let pending = if reg.dpop_jkt == accepted {
            None
        } else {
            match previous {
                Some(p) if p.jkt == accepted => Some(reg.dpop_jkt.as_str()),
                Some(_) => {
                    return Err(proof_refused(
                        "DPoP-Previous is not made with the installation's registered key",
                    ))
                }
                None => {
                    return Err(proof_refused(
                        "a new dpopJkt needs DPoP-Previous made with the registered key",
                    ))
                }
            }
        };
        if key.pending_jkt.as_deref() != pending
            && !self.oauth.set_pending_key(app.app.id, accepted, pending)?
        {
            // A consent accepted the pending key meanwhile: the proofs named an old key.
            return Err(proof_refused(
                "the installation's key changed meanwhile: register again with the key accepted now",
            ));
        }
        installation.platform_version = reg.platform_version;
        installation.plugin_version = reg.plugin_version;
        installation.site_name = reg.site_name;
        self.store
            .update_installation_metadata(&installation, self.k.now())?;
        Ok(client_of(&installation, &app, false))
    }

    /// A first registration's installation and application (not stored yet).
    fn new_installation(
        &self,
        reg: &CheckedRegistration,
        platform: &NativePlatform,
    ) -> Result<(Installation, StoredApplication)> {
        let now = self.k.now();
        let app = Application {
            id: ApplicationId(self.k.crypto.new_uuid()),
            client_id: self
                .k
                .new_public_id(ClientId::RANDOM_LEN, ClientId::native_from_random)?,
            // The template's immutable branding; `siteName` never shows as the app.
            name: platform.name.clone(),
            redirect_uris: vec![reg.redirect_uri.clone()],
            scopes: platform.scopes.clone(),
            client_type: ClientType::Public,
            dpop_bound: true,
            refresh_ttl: DEFAULT_REFRESH_TTL,
            template: Some(platform.platform.clone()),
            key: Some(RegisteredKey {
                accepted_jkt: reg.dpop_jkt.clone(),
                pending_jkt: None,
            }),
            created_at: now,
        };
        let installation = Installation {
            registration_id: reg.registration_id.clone(),
            platform: platform.platform.clone(),
            application_id: app.id,
            client_id: app.client_id.clone(),
            site_url: reg.site_url.clone(),
            redirect_uri: reg.redirect_uri.clone(),
            platform_version: reg.platform_version.clone(),
            plugin_version: reg.plugin_version.clone(),
            site_name: reg.site_name.clone(),
            created_at: now,
            updated_at: now,
        };
        let app = StoredApplication {
            app,
            secret_digest: None,
        };
        Ok((installation, app))
    }
}

/// The response's client: the same public fields on every registration of one installation.
fn client_of(installation: &Installation, app: &StoredApplication, created: bool) -> NativeClient {
    NativeClient {
        client_id: app.app.client_id.clone(),
        registration_id: installation.registration_id.clone(),
        redirect_uri: installation.redirect_uri.clone(),
        scopes: app.app.scopes.clone(),
        created,
    }
}
