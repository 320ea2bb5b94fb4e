//! OAuth use cases: register an application (operator), decide an authorization request
//! (consent), authenticate a client, revoke (RFC 7009) and authenticate an access token on a
//! resource route. The token endpoint's two grants are in `service/token.rs`.

mod connected;
mod recovery;
mod reset;
mod resource;
mod token;

pub use recovery::{TokenGrant, TokenOutcome};
pub use reset::SecurityReset;
pub use resource::DpopAccess;

use std::sync::Arc;

use crate::kernel::error::{Fault, PortResult};
use crate::kernel::hex;
use crate::kernel::ids::{ApplicationId, ClientId, CompanyId, FamilyId, GrantId};
use crate::kernel::secret::Secret;
use crate::kernel::service::Kernel;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::error::refused;
use crate::oauth::machine::CredentialState;
use crate::oauth::ports::OAuthPorts;
use crate::oauth::{
    canonical, intersect, parse_scopes, pkce, Application, AuthorizeRequest, ClientAuth,
    ClientType, ConsentView, Family, Grant, Held, IssuedCode, KeySwap, NewApplication, NoRedirect,
    OAuthConfig, OAuthError, OAuthErrorCode as C, ProofFacts, StoredApplication, StoredCode,
    ACCESS_TOKEN_PREFIX, CLIENT_SECRET_PREFIX, CODE_PREFIX, CODE_TTL, DEFAULT_REFRESH_TTL,
    MAX_REFRESH_TTL, MAX_STATE_LEN, MAX_TOKEN_LEN, REFRESH_TOKEN_PREFIX,
};
use crate::tenancy::{Credential, Permission, Principal, SignedIn, TenancyService};

type Result<T, E = OAuthError> = std::result::Result<T, E>;

/// How long pruned codes and tokens stay after their expiry, so a late replay of a used one
/// still revokes its family for a day.
const PRUNE_GRACE: time::Duration = time::Duration::days(1);

/// OAuth for partner applications, over the OAuth ports and the tenancy service.
#[derive(Clone)]
pub struct OAuthService {
    k: Kernel,
    tenancy: TenancyService,
    store: Arc<dyn OAuthPorts>,
    config: OAuthConfig,
}

impl std::fmt::Debug for OAuthService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthService")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Where a held code or token stands now (real time): revoked (itself, its family or its
/// grant) before used, used before expired, so a second use is a replay even when late.
pub(crate) fn state_of(
    used_at: Option<Timestamp>,
    revoked_at: Option<Timestamp>,
    expires_at: Timestamp,
    family: &Family,
    grant: &Grant,
    now: Timestamp,
) -> CredentialState {
    if revoked_at.is_some() || family.revoked_at.is_some() || grant.revoked_at.is_some() {
        CredentialState::Revoked
    } else if used_at.is_some() {
        CredentialState::Used
    } else if now >= expires_at {
        CredentialState::Expired
    } else {
        CredentialState::Live
    }
}

/// A credential a client sends back: our prefix and at most `MAX_TOKEN_LEN` characters.
fn shaped(value: &str, prefix: &str) -> bool {
    value.len() <= MAX_TOKEN_LEN
        && value.starts_with(prefix)
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// A JWK thumbprint: 43 base64url characters (SHA-256).
fn is_thumbprint(jkt: &str) -> bool {
    jkt.len() == 43
        && jkt
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

impl OAuthService {
    /// OAuth applications, grants and tokens over the OAuth store (with its DPoP replay cache).
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        store: Arc<dyn OAuthPorts>,
        config: OAuthConfig,
    ) -> OAuthService {
        OAuthService {
            k,
            tenancy,
            store,
            config,
        }
    }

    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Registers an application (`pay-server admin create-oauth-app`). A confidential one gets
    /// its secret here, once; only its digest is stored.
    pub fn register_application(
        &self,
        input: NewApplication,
    ) -> Result<(Application, Option<Secret>)> {
        let scopes = input.validate()?;
        let client_id = self
            .k
            .new_public_id(ClientId::RANDOM_LEN, ClientId::from_random)?;
        let (client_type, secret) = if input.public {
            (ClientType::Public, None)
        } else {
            (
                ClientType::Confidential,
                Some(self.k.new_secret(CLIENT_SECRET_PREFIX)),
            )
        };
        let app = Application {
            id: ApplicationId(self.k.crypto.new_uuid()),
            client_id,
            name: input.name.trim().to_owned(),
            redirect_uris: input.redirect_uris,
            scopes,
            client_type,
            dpop_bound: input.dpop_bound,
            refresh_ttl: input.refresh_ttl.unwrap_or(DEFAULT_REFRESH_TTL),
            template: None,
            key: None,
            created_at: self.k.now(),
        };
        let stored = StoredApplication {
            secret_digest: secret.as_ref().map(|s| self.k.crypto.digest(s.expose())),
            app,
        };
        self.store.insert_application(&stored)?;
        Ok((stored.app, secret))
    }

    /// The application with this client id (onboarding checks a draft's `oauth` against it).
    pub fn application(&self, client_id: &ClientId) -> PortResult<Option<Application>> {
        Ok(self.store.application(client_id)?.map(|a| a.app))
    }

    /// Checks an authorization request (RFC 6749 section 4.1.1) and says what the consent
    /// page shows. An unknown client or unregistered redirect URI is `NoRedirect` (an error
    /// page); every other refusal is `Refused`, to be redirected to `redirect_uri` with its
    /// code and the `state`.
    pub fn check_authorization(&self, req: &AuthorizeRequest) -> Result<ConsentView> {
        self.checked_request(req).map(|(_, view)| view)
    }

    fn checked_request(&self, req: &AuthorizeRequest) -> Result<(StoredApplication, ConsentView)> {
        let unknown = NoRedirect {
            description: "unknown client_id",
        };
        let client_id = ClientId::parse(&req.client_id).ok_or(unknown)?;
        let app = self.store.application(&client_id)?.ok_or(unknown)?;
        if !app.app.redirect_uris.contains(&req.redirect_uri) {
            return Err(NoRedirect {
                description: "redirect_uri is not registered for this client",
            }
            .into());
        }
        if let Some(state) = &req.state {
            if state.is_empty()
                || state.len() > MAX_STATE_LEN
                || !state.bytes().all(|b| (0x20..=0x7e).contains(&b))
            {
                return Err(refused(
                    C::InvalidRequest,
                    "state must be 1 to 1024 printable ASCII characters",
                ));
            }
        }
        if !pkce::is_valid_challenge(&req.code_challenge) {
            return Err(refused(
                C::InvalidRequest,
                "code_challenge must be an S256 challenge (43 base64url characters)",
            ));
        }
        if req.dpop_jkt.as_deref().is_some_and(|j| !is_thumbprint(j)) {
            return Err(refused(
                C::InvalidRequest,
                "dpop_jkt must be a JWK SHA-256 thumbprint",
            ));
        }
        if let (Some(key), Some(asked)) = (&app.app.key, &req.dpop_jkt) {
            if key.consent_jkt() != asked {
                return Err(refused(
                    C::InvalidRequest,
                    "dpop_jkt is not the key this installation registered",
                ));
            }
        }
        let scopes = parse_scopes(&req.scope)
            .map_err(|_| refused(C::InvalidScope, "scope must list known scopes once each"))?;
        if scopes.iter().any(|s| !app.app.scopes.contains(s)) {
            return Err(refused(
                C::InvalidScope,
                "scope asks for more than this client is allowed",
            ));
        }
        let view = ConsentView {
            client_id,
            app_name: app.app.name.clone(),
            redirect_uri: req.redirect_uri.clone(),
            scopes,
            state: req.state.clone(),
        };
        Ok((app, view))
    }

    /// The signed-in user approves `req` for `company`: they must be a member holding
    /// `settings.manage` there (as for API keys). Creates or updates the grant of the company
    /// and application with the requested scopes, and issues a one-time code (60 s, real
    /// time) that starts a new token family. A native installation's grant and code are bound
    /// to its registered key, so only that key redeems the code. The edge checked the
    /// session's CSRF token.
    pub fn authorize(
        &self,
        signed_in: &SignedIn,
        company: CompanyId,
        req: &AuthorizeRequest,
    ) -> Result<IssuedCode> {
        let (app, view) = self.checked_request(req)?;
        self.tenancy.team_role::<OAuthError>(
            signed_in,
            company,
            Some(Permission::SettingsManage),
        )?;
        let now = self.k.now();
        let bound = app.app.key.as_ref().map(|k| k.consent_jkt().to_owned());
        let grant = Grant {
            id: GrantId(self.k.crypto.new_uuid()),
            company_id: company,
            application_id: app.app.id,
            user_id: signed_in.sign_in.user_id,
            scopes: view.scopes.clone(),
            bound_jkt: bound.clone(),
            created_at: now,
            updated_at: now,
            revoked_at: None,
        };
        let family = Family {
            id: FamilyId(self.k.crypto.new_uuid()),
            grant_id: grant.id,
            created_at: now,
            revoked_at: None,
        };
        let code = self.k.new_secret(CODE_PREFIX);
        let stored = StoredCode {
            digest: self.k.crypto.digest(code.expose()),
            family_id: family.id,
            application_id: app.app.id,
            redirect_uri: req.redirect_uri.clone(),
            scopes: view.scopes,
            code_challenge: req.code_challenge.clone(),
            dpop_jkt: bound.or_else(|| req.dpop_jkt.clone()),
            created_at: now,
            expires_at: now.plus(CODE_TTL),
            used_at: None,
        };
        let swap = app.app.key.as_ref().and_then(|k| {
            k.pending_jkt.as_ref().map(|to| KeySwap {
                from_jkt: k.accepted_jkt.clone(),
                to_jkt: to.clone(),
            })
        });
        let grant = match swap {
            None => self.store.save_authorization(&grant, &family, &stored)?,
            // The pending key is accepted now, and the old key's families end, all at once.
            Some(swap) => self
                .store
                .save_authorization_with_key(&grant, &family, &stored, &swap)?
                .ok_or_else(|| {
                    refused(
                        C::InvalidRequest,
                        "the installation's key changed during consent: start the authorization again",
                    )
                })?,
        };
        Ok(IssuedCode {
            code,
            redirect_uri: req.redirect_uri.clone(),
            state: req.state.clone(),
            grant_id: grant.id,
            expires_at: stored.expires_at,
        })
    }

    /// The application a token or revocation request authenticates as: a confidential client
    /// with its secret (compared by digest in constant time), a public client with none.
    /// Anything else is `invalid_client`.
    pub fn authenticate_client(&self, client: &ClientAuth) -> Result<StoredApplication> {
        let invalid = || refused(C::InvalidClient, "client authentication failed");
        let client_id = ClientId::parse(&client.client_id).ok_or_else(invalid)?;
        let app = self.store.application(&client_id)?.ok_or_else(invalid)?;
        match (app.app.client_type, &client.secret, &app.secret_digest) {
            (ClientType::Confidential, Some(secret), Some(digest))
                if self.k.crypto.digest_matches(secret.expose(), digest) =>
            {
                Ok(app)
            }
            (ClientType::Public, None, _) => Ok(app),
            _ => Err(invalid()),
        }
    }

    /// RFC 7009: revokes a refresh token (its whole family) or an access token (that token)
    /// of the authenticated client. An unknown, malformed, foreign or already dead token is
    /// answered OK all the same; only client authentication can fail. `token_type_hint` is
    /// not needed: our tokens say their kind in their prefix.
    pub fn revoke(&self, client: &ClientAuth, token: &str) -> Result<()> {
        self.revoke_reporting(client, token).map(drop)
    }

    /// `revoke`, saying which official native installation's grant it disconnected: a refresh
    /// token of a native installation (whose family was live, or whose grant is already
    /// disconnected: a retry) ends its family and its whole grant, and the answer is that
    /// grant, so that what a disconnect keeps is kept (`InstallationService::revoke`).
    pub fn revoke_reporting(&self, client: &ClientAuth, token: &str) -> Result<Option<Grant>> {
        let app = self.authenticate_client(client)?;
        let now = self.k.now();
        if shaped(token, REFRESH_TOKEN_PREFIX) {
            if let Some(held) = self.store.refresh_token(&self.k.crypto.digest(token))? {
                if held.item.application_id == app.app.id {
                    self.store.revoke_family(held.family.id, now)?;
                    let disconnects = app.app.template.is_some()
                        && (held.family.revoked_at.is_none() || held.grant.revoked_at.is_some());
                    if disconnects {
                        self.store.revoke_grant(held.grant.id, now)?;
                        return Ok(Some(held.grant));
                    }
                }
            }
        } else if shaped(token, ACCESS_TOKEN_PREFIX) {
            if let Some(held) = self.store.access_token(&self.k.crypto.digest(token))? {
                if held.item.application_id == app.app.id {
                    self.store.revoke_access_token(&held.item.digest, now)?;
                }
            }
        }
        Ok(None)
    }

    /// Sets a native installation's pending key (`None` clears it) where `accepted_jkt` is
    /// still its accepted key; false when it is not.
    pub(crate) fn set_pending_key(
        &self,
        application: ApplicationId,
        accepted_jkt: &str,
        pending_jkt: Option<&str>,
    ) -> PortResult<bool> {
        self.store
            .set_pending_key(application, accepted_jkt, pending_jkt)
    }

    /// Records a proof's `jti` for its whole `iat` window; false for a replay.
    pub(crate) fn record_proof(&self, proof: &ProofFacts) -> PortResult<bool> {
        let keep_until = self.keep_jti_until(proof)?;
        self.store
            .record_jti(&proof.htu, &hex::encode(&proof.jti_digest), keep_until)
    }

    /// Until when a proof's `jti` is kept: its whole `iat` window.
    pub(super) fn keep_jti_until(&self, proof: &ProofFacts) -> PortResult<Timestamp> {
        let issued = Timestamp::from_unix_millis(proof.iat.saturating_mul(1000))
            .ok_or_else(|| Fault::new("proof iat out of range"))?;
        Ok(issued.max(self.k.now()).plus(self.config.dpop_max_age))
    }

    /// Housekeeping: forgets `jti`s past their window, codes and tokens a day past their
    /// expiry, token answers past their access token's expiry and token-request keys a day
    /// old. Returns how many rows went or were erased.
    pub fn prune(&self) -> PortResult<u64> {
        let now = self.k.now();
        // A spent refresh token is kept as long as one of an ordinary application can live,
        // and a day more: the reuse of a rotated one revokes its family until then. (An
        // official native installation's never expire by themselves: without this, every
        // rotation would stay forever.)
        let spent_before = now.minus(MAX_REFRESH_TTL).minus(PRUNE_GRACE);
        Ok(self.store.prune_jtis(now)?
            + self
                .store
                .prune_oauth(now.minus(PRUNE_GRACE), spent_before)?
            // Token answers go when their access token expires; the keys stay a day.
            + self
                .store
                .prune_token_requests(now, now.minus(crate::kernel::idempotency::KEEP_FOR))?)
    }
}

/// The principal of a live access token: the grant's company, the token's scopes that the
/// grant still approves.
pub(super) fn principal_of(held: &Held<crate::oauth::StoredToken>) -> Principal {
    Principal {
        company_id: held.grant.company_id,
        credential: Credential::OAuthGrant {
            grant_id: held.grant.id.0,
            scopes: canonical(intersect(&held.item.scopes, &held.grant.scopes)),
            dpop_bound: held.item.jkt.is_some(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(shaped("oat_abc", ACCESS_TOKEN_PREFIX));
        assert!(!shaped("oat_a-c", ACCESS_TOKEN_PREFIX));
        assert!(!shaped("ort_abc", ACCESS_TOKEN_PREFIX));
        assert!(!shaped(
            &format!("oat_{}", "a".repeat(200)),
            ACCESS_TOKEN_PREFIX
        ));
        assert!(is_thumbprint("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"));
        assert!(!is_thumbprint("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4"));
    }
}
