//! Onboarding use cases over their own ports, tenancy (the merchant's user, company and
//! session) and OAuth (the application a draft connects).

use std::sync::Arc;

use crate::kernel::error::{Fault, FieldError, NotFound};
use crate::kernel::idempotency::IdempotencyConflict;
use crate::kernel::ids::{ClientId, DraftId, OnboardingPartnerId};
use crate::kernel::secret::Secret;
use crate::kernel::service::Kernel;
use crate::oauth::{parse_scopes, pkce, AuthorizeRequest, OAuthError, OAuthService, MAX_STATE_LEN};
use crate::onboarding::error::{ClaimRefused, OnboardingError};
use crate::onboarding::model::{
    check_company, check_idempotency_key, check_partner_name, shaped, ClaimView, Claimed, Draft,
    DraftOAuth, DraftRequest, DraftStatus, NewDraft, NewDraftOAuth, Partner, StoredDraft,
    StoredPartner, CLAIM_TOKEN_PREFIX, DRAFT_TTL, ONBOARDING_SECRET_PREFIX,
};
use crate::onboarding::ports::{ClaimedTenant, OnboardingPorts};
use crate::tenancy::{Denied, LoginOutcome, SignedIn, TenancyError, TenancyService};

type Result<T, E = OnboardingError> = std::result::Result<T, E>;

fn from_tenancy(e: TenancyError) -> OnboardingError {
    match e {
        TenancyError::Invalid(f) => f.into(),
        TenancyError::Denied(d) => d.into(),
        TenancyError::InvalidLogin(l) => l.into(),
        TenancyError::RateLimited(r) => r.into(),
        TenancyError::NotFound(n) => n.into(),
        TenancyError::ApiKeyNotFound(_) => Fault::new("onboarding: unexpected key refusal").into(),
        TenancyError::Fault(f) => f.into(),
    }
}

/// The grant at claim time: the draft's request was checked when it was made and
/// applications never change, so anything but a refused user or a fault is a fault.
fn from_oauth(e: OAuthError) -> OnboardingError {
    match e {
        OAuthError::Denied(d) => d.into(),
        OAuthError::Fault(f) => f.into(),
        other => Fault::new(format!(
            "onboarding: the draft's authorization failed: {other}"
        ))
        .into(),
    }
}

/// Sealing associated data of a draft's claim token.
fn claim_aad(draft: DraftId) -> String {
    format!("onboarding-claim:{draft}")
}

/// Partners, their drafts and the merchants' claims.
#[derive(Clone)]
pub struct OnboardingService {
    k: Kernel,
    tenancy: TenancyService,
    oauth: OAuthService,
    store: Arc<dyn OnboardingPorts>,
}

impl std::fmt::Debug for OnboardingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnboardingService").finish_non_exhaustive()
    }
}

impl OnboardingService {
    /// Onboarding over its own store, tenancy and OAuth.
    pub fn new(
        k: Kernel,
        tenancy: TenancyService,
        oauth: OAuthService,
        store: Arc<dyn OnboardingPorts>,
    ) -> OnboardingService {
        OnboardingService {
            k,
            tenancy,
            oauth,
            store,
        }
    }

    /// Creates a partner (`pay-server admin create-partner`). Its onboarding secret is
    /// returned here, once; only its digest is stored.
    pub fn create_partner(&self, name: &str) -> Result<(Partner, Secret)> {
        check_partner_name(name)?;
        let secret = self.k.new_secret(ONBOARDING_SECRET_PREFIX);
        let partner = Partner {
            id: OnboardingPartnerId(self.k.crypto.new_uuid()),
            name: name.trim().to_owned(),
            created_at: self.k.now(),
        };
        self.store.insert_partner(&StoredPartner {
            partner: partner.clone(),
            secret_digest: self.k.crypto.digest(secret.expose()),
        })?;
        Ok((partner, secret))
    }

    /// The partner of a `Bearer` onboarding secret: none is `Unauthenticated`, a wrong or
    /// unknown one `InvalidCredentials` (the spec's two 401 messages).
    pub fn authenticate_partner(&self, secret: Option<&str>) -> Result<Partner> {
        let secret = secret.ok_or(Denied::Unauthenticated)?;
        if !shaped(secret, ONBOARDING_SECRET_PREFIX) {
            return Err(Denied::InvalidCredentials.into());
        }
        Ok(self
            .store
            .partner_by_secret(&self.k.crypto.digest(secret))?
            .ok_or(Denied::InvalidCredentials)?)
    }

    /// Creates a draft, or finds the partner's draft with the same `idempotencyKey`: the same
    /// request answers that draft (`created` false), another request is refused (`Reused`).
    /// Every field is checked first, `oauth` against its application (registered redirect URI,
    /// allowed scopes, S256 challenge). Returns the draft and its claim token.
    pub fn create_draft(
        &self,
        partner: &Partner,
        input: NewDraft,
    ) -> Result<(Draft, Secret, bool)> {
        check_idempotency_key(&input.idempotency_key)?;
        check_company(&input.company_name, input.company_website.as_deref())?;
        let oauth = input.oauth.map(|o| self.check_oauth(o)).transpose()?;
        let request = DraftRequest {
            company_name: input.company_name,
            company_website: input.company_website,
            oauth,
        };
        let key = input.idempotency_key;
        if let Some(found) = self.store.draft_by_key(partner.id, &key)? {
            return self.replay(found, &request);
        }
        let now = self.k.now();
        let id = DraftId(self.k.crypto.new_uuid());
        let token = self.k.new_secret(CLAIM_TOKEN_PREFIX);
        let stored = StoredDraft {
            draft: Draft {
                id,
                partner_id: partner.id,
                idempotency_key: key.clone(),
                request: request.clone(),
                created_at: now,
                expires_at: now.plus(DRAFT_TTL),
                claimed_at: None,
                company_id: None,
            },
            claim_digest: self.k.crypto.digest(token.expose()),
            claim_sealed: self.k.sealer.seal(&token, &claim_aad(id))?,
        };
        if self.store.insert_draft(&stored)? {
            return Ok((stored.draft, token, true));
        }
        // A concurrent call with this key won: answer as its retry.
        let found = self
            .store
            .draft_by_key(partner.id, &key)?
            .ok_or_else(|| Fault::new("draft lost after a unique violation"))?;
        self.replay(found, &request)
    }

    /// The answer to a retry of the draft call: the same draft for the same request.
    fn replay(&self, found: StoredDraft, request: &DraftRequest) -> Result<(Draft, Secret, bool)> {
        if found.draft.request != *request {
            return Err(IdempotencyConflict::Reused.into());
        }
        let token = self
            .k
            .sealer
            .open(&found.claim_sealed, &claim_aad(found.draft.id))?;
        Ok((found.draft, token, false))
    }

    /// `oauth` field by field: a known application that is not a native installation (those
    /// connect through their own consent), a redirect URI registered for it exactly, scopes it
    /// may ask for, a state, an S256 challenge.
    fn check_oauth(&self, o: NewDraftOAuth) -> Result<DraftOAuth> {
        let unknown = || FieldError::new("oauth.clientId", "unknown clientId");
        let client_id = ClientId::parse(&o.client_id).ok_or_else(unknown)?;
        let app = self.oauth.application(&client_id)?.ok_or_else(unknown)?;
        if app.template.is_some() {
            return Err(FieldError::new(
                "oauth.clientId",
                "a native installation is connected by its own consent, not by onboarding",
            )
            .into());
        }
        if !app.redirect_uris.contains(&o.redirect_uri) {
            return Err(FieldError::new(
                "oauth.redirectUri",
                "redirectUri must be exactly one of the application's registered redirect URIs",
            )
            .into());
        }
        let scopes = parse_scopes(&o.scope).map_err(|_| {
            FieldError::new(
                "oauth.scope",
                "scope must list known scopes, space-separated, each once",
            )
        })?;
        if scopes.iter().any(|s| !app.scopes.contains(s)) {
            return Err(FieldError::new(
                "oauth.scope",
                "scope asks for more than this application is allowed",
            )
            .into());
        }
        if o.state.is_empty()
            || o.state.len() > MAX_STATE_LEN
            || !o.state.bytes().all(|b| (0x20..=0x7e).contains(&b))
        {
            return Err(FieldError::new(
                "oauth.state",
                "state must be 1 to 1024 printable ASCII characters",
            )
            .into());
        }
        if !pkce::is_valid_challenge(&o.code_challenge) {
            return Err(FieldError::new(
                "oauth.codeChallenge",
                "codeChallenge must be an S256 challenge: 43 base64url characters",
            )
            .into());
        }
        if o.code_challenge_method != pkce::PKCE_METHOD_S256 {
            return Err(FieldError::new(
                "oauth.codeChallengeMethod",
                "codeChallengeMethod must be S256",
            )
            .into());
        }
        Ok(DraftOAuth {
            client_id: o.client_id,
            redirect_uri: o.redirect_uri,
            scope: o.scope,
            state: o.state,
            code_challenge: o.code_challenge,
        })
    }

    /// The draft of a claim token, for the claim page: its status now, its partner, and the
    /// application it connects. An unknown or malformed token is `NotFound`.
    pub fn claim_view(&self, token: &str) -> Result<ClaimView> {
        let not_found = NotFound {
            kind: "Onboarding link",
        };
        if !shaped(token, CLAIM_TOKEN_PREFIX) {
            return Err(not_found.into());
        }
        let (stored, partner) = self
            .store
            .draft_by_claim(&self.k.crypto.digest(token))?
            .ok_or(not_found)?;
        let draft = stored.draft;
        let app = match &draft.request.oauth {
            Some(o) => Some(
                self.oauth
                    .check_authorization(&authorize_request(o))
                    .map_err(from_oauth)?,
            ),
            None => None,
        };
        Ok(ClaimView {
            status: draft.status(self.k.now()),
            draft,
            partner_name: partner.name,
            app,
        })
    }

    /// An open draft, or why it cannot be claimed.
    fn open_draft(&self, token: &str) -> Result<ClaimView> {
        let view = self.claim_view(token)?;
        match view.status {
            DraftStatus::Open => Ok(view),
            DraftStatus::Claimed => Err(ClaimRefused::Claimed.into()),
            DraftStatus::Expired => Err(ClaimRefused::Expired.into()),
        }
    }

    /// The signed-in user claims the draft (the edge checked the session's CSRF token): the
    /// company is created with them as owner, once; with `oauth`, its application is granted
    /// the draft's scopes on that company and a code issued.
    pub fn claim(&self, token: &str, signed_in: &SignedIn) -> Result<Claimed> {
        let view = self.open_draft(token)?;
        let owner = signed_in.sign_in.user_id;
        let claimed = self.create_company(&view.draft, None, owner)?;
        self.connect(claimed, &view.draft, signed_in)
    }

    /// A new user signs up on the claim page and claims the draft: the user, the company and
    /// the claim in one write, then a session for them (returned once, as a login's).
    pub fn claim_with_sign_up(
        &self,
        token: &str,
        email: &str,
        password: &Secret,
    ) -> Result<(Claimed, LoginOutcome)> {
        let view = self.open_draft(token)?;
        let user = self
            .tenancy
            .new_user(email, password)
            .map_err(from_tenancy)?;
        let owner = user.id;
        let claimed = self.create_company(&view.draft, Some(user), owner)?;
        let login = self
            .tenancy
            .start_session(owner, claimed.company_id)
            .map_err(from_tenancy)?;
        let signed_in = self
            .tenancy
            .authenticate_sign_in(login.session_token.expose())
            .map_err(from_tenancy)?;
        Ok((self.connect(claimed, &view.draft, &signed_in)?, login))
    }

    /// The claim's write: the draft's company for `owner`, unless another claim won or the
    /// draft expired meanwhile.
    fn create_company(
        &self,
        draft: &Draft,
        new_user: Option<crate::tenancy::UserRecord>,
        owner: crate::kernel::ids::UserId,
    ) -> Result<Claimed> {
        let r = &draft.request;
        let (company, settings) = self
            .tenancy
            .new_company(&r.company_name, r.company_website.as_deref());
        let claimed = Claimed {
            company_id: company.id,
            company_name: company.name.clone(),
            code: None,
        };
        let tenant = ClaimedTenant {
            new_user,
            owner,
            company,
            settings,
        };
        let now = self.k.now();
        if self.store.claim_draft(draft.id, now, &tenant)? {
            return Ok(claimed);
        }
        Err(if now >= draft.expires_at {
            ClaimRefused::Expired
        } else {
            ClaimRefused::Claimed
        }
        .into())
    }

    /// With `oauth`: the application's grant on the new company and its code.
    fn connect(
        &self,
        mut claimed: Claimed,
        draft: &Draft,
        signed_in: &SignedIn,
    ) -> Result<Claimed> {
        if let Some(o) = &draft.request.oauth {
            claimed.code = Some(
                self.oauth
                    .authorize(signed_in, claimed.company_id, &authorize_request(o))
                    .map_err(from_oauth)?,
            );
        }
        Ok(claimed)
    }
}

/// The draft's `oauth` as an authorization request (no DPoP key: native installations are
/// refused).
fn authorize_request(o: &DraftOAuth) -> AuthorizeRequest {
    AuthorizeRequest {
        client_id: o.client_id.clone(),
        redirect_uri: o.redirect_uri.clone(),
        scope: o.scope.clone(),
        state: Some(o.state.clone()),
        code_challenge: o.code_challenge.clone(),
        dpop_jkt: None,
    }
}
