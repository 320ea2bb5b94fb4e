//! The token endpoint's grants: `authorization_code` (PKCE S256, one redemption, a replay
//! revokes the family) and `refresh_token` (rotation in one store transaction, a spent token
//! revokes the family, a bound token refreshes only with its key, no scope escalation).

use super::{shaped, state_of, OAuthService, Result};
use crate::kernel::ids::GrantId;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::error::refused;
use crate::oauth::machine::{transition, CredentialEvent, CredentialMove};
use crate::oauth::recovery::{TokenAnswer, TokenRequestKey};
use crate::oauth::{
    intersect, parse_scopes, pkce, ClientAuth, Family, OAuthErrorCode as C, ProofFacts,
    StoredApplication, StoredToken, TokenResponse, TokenType, ACCESS_TOKEN_PREFIX, CODE_PREFIX,
    REFRESH_TOKEN_PREFIX,
};
use crate::tenancy::Scope;

/// A keyed request's claim: its key and the claim's token (`service/recovery.rs`).
pub(super) type Keyed<'a> = Option<(&'a TokenRequestKey, &'a str)>;

/// What one issuance writes and answers.
pub(super) struct Issue {
    access: StoredToken,
    refresh: StoredToken,
    response: TokenResponse,
}

impl OAuthService {
    /// `grant_type=authorization_code`: authenticates the client, then redeems the code for a
    /// first access and refresh token. The code must be the client's, live, for the same
    /// `redirect_uri`, and met by `code_verifier` (S256). A code used before is a replay: it
    /// revokes everything the first redemption issued. With a proof the tokens are bound to
    /// its key (and must be, for a `dpop_bound` application or a code bound by `dpop_jkt`).
    pub fn exchange_code(
        &self,
        client: &ClientAuth,
        code: &str,
        redirect_uri: &str,
        code_verifier: &str,
        proof: Option<&ProofFacts>,
    ) -> Result<TokenResponse> {
        let app = self.authenticate_client(client)?;
        self.redeem_code(&app, code, redirect_uri, code_verifier, proof, None)
    }

    /// `exchange_code` for an authenticated client, the tokens answering `keyed`'s claim.
    pub(super) fn redeem_code(
        &self,
        app: &StoredApplication,
        code: &str,
        redirect_uri: &str,
        code_verifier: &str,
        proof: Option<&ProofFacts>,
        keyed: Keyed<'_>,
    ) -> Result<TokenResponse> {
        require_proof(app, proof)?;
        let bad_code = || refused(C::InvalidGrant, "the authorization code is invalid");
        if !shaped(code, CODE_PREFIX) {
            return Err(bad_code());
        }
        let held = self
            .store
            .code(&self.k.crypto.digest(code))?
            .ok_or_else(bad_code)?;
        if held.item.application_id != app.app.id {
            return Err(bad_code());
        }
        let now = self.k.now();
        let c = &held.item;
        let state = state_of(
            c.used_at,
            None,
            c.expires_at,
            &held.family,
            &held.grant,
            now,
        );
        self.use_once(
            state,
            held.family.id,
            now,
            [
                "the authorization code was already used",
                "the authorization code is expired or revoked",
            ],
        )?;
        if c.redirect_uri != redirect_uri {
            return Err(refused(
                C::InvalidGrant,
                "redirect_uri differs from the authorization request's",
            ));
        }
        if pkce::verify_pkce_s256(code_verifier, &c.code_challenge).is_err() {
            return Err(refused(
                C::InvalidGrant,
                "code_verifier does not match the code_challenge",
            ));
        }
        if let Some(bound) = &c.dpop_jkt {
            if proof.map(|p| &p.jkt) != Some(bound) {
                return Err(refused(
                    C::InvalidDpopProof,
                    "the code is bound to another DPoP key (dpop_jkt)",
                ));
            }
        }
        let scopes = intersect(&intersect(&c.scopes, &held.grant.scopes), &app.app.scopes);
        if scopes.is_empty() {
            return Err(refused(C::InvalidScope, "no approved scope is left"));
        }
        self.check_proof_fresh(proof)?;
        if !self.store.claim_code(&c.digest, now)? {
            // Another redemption won between our read and our claim: a replay all the same.
            self.store.revoke_family(held.family.id, now)?;
            return Err(refused(
                C::InvalidGrant,
                "the authorization code was already used",
            ));
        }
        let issue = self.issue(
            app,
            held.grant.id,
            &held.family,
            &scopes,
            &scopes,
            proof.map(|p| p.jkt.clone()),
            now,
        );
        let answer = self.answer_of(keyed, &held.grant, &issue)?;
        self.store
            .insert_tokens(&issue.access, &issue.refresh, answer.as_ref())?;
        Ok(issue.response)
    }

    /// `grant_type=refresh_token`: authenticates the client and rotates its refresh token. A
    /// spent token is a replay and revokes the whole family; so does losing the rotation to a
    /// concurrent use of the same token (exactly one wins; the two presentations cannot be
    /// told apart from a theft). A bound token refreshes only with a proof of its key.
    /// `scope` may narrow the new access token, never widen it; the new refresh token keeps
    /// the family's scopes, as far as the grant and the application still allow them.
    pub fn refresh(
        &self,
        client: &ClientAuth,
        refresh_token: &str,
        scope: Option<&str>,
        proof: Option<&ProofFacts>,
    ) -> Result<TokenResponse> {
        let app = self.authenticate_client(client)?;
        self.rotate(&app, refresh_token, scope, proof, None)
    }

    /// `refresh` for an authenticated client, the tokens answering `keyed`'s claim.
    pub(super) fn rotate(
        &self,
        app: &StoredApplication,
        refresh_token: &str,
        scope: Option<&str>,
        proof: Option<&ProofFacts>,
        keyed: Keyed<'_>,
    ) -> Result<TokenResponse> {
        require_proof(app, proof)?;
        let bad = || refused(C::InvalidGrant, "the refresh token is invalid");
        if !shaped(refresh_token, REFRESH_TOKEN_PREFIX) {
            return Err(bad());
        }
        let held = self
            .store
            .refresh_token(&self.k.crypto.digest(refresh_token))?
            .ok_or_else(bad)?;
        let t = &held.item;
        if t.application_id != app.app.id {
            return Err(bad());
        }
        let now = self.k.now();
        let state = state_of(
            t.spent_at,
            t.revoked_at,
            t.expires_at,
            &held.family,
            &held.grant,
            now,
        );
        self.use_once(
            state,
            held.family.id,
            now,
            [
                "the refresh token was already used",
                "the refresh token is expired or revoked",
            ],
        )?;
        let jkt = match (&t.jkt, proof) {
            (Some(bound), Some(p)) if *bound == p.jkt => Some(p.jkt.clone()),
            (Some(_), _) => {
                return Err(refused(
                    C::InvalidDpopProof,
                    "the refresh token is bound to another DPoP key",
                ))
            }
            (None, p) => p.map(|p| p.jkt.clone()),
        };
        let allowed = intersect(&intersect(&t.scopes, &held.grant.scopes), &app.app.scopes);
        let access_scopes = match scope {
            None => allowed.clone(),
            Some(text) => {
                let asked = parse_scopes(text).map_err(|_| {
                    refused(C::InvalidScope, "scope must list known scopes once each")
                })?;
                if asked.iter().any(|s| !t.scopes.contains(s)) {
                    return Err(refused(
                        C::InvalidScope,
                        "scope asks for more than the refresh token holds",
                    ));
                }
                intersect(&asked, &allowed)
            }
        };
        if access_scopes.is_empty() {
            return Err(refused(C::InvalidScope, "no approved scope is left"));
        }
        self.check_proof_fresh(proof)?;
        let issue = self.issue(
            app,
            held.grant.id,
            &held.family,
            &access_scopes,
            &allowed,
            jkt,
            now,
        );
        let answer = self.answer_of(keyed, &held.grant, &issue)?;
        if !self.store.rotate_refresh(
            &t.digest,
            &issue.access,
            &issue.refresh,
            now,
            answer.as_ref(),
        )? {
            self.store.revoke_family(held.family.id, now)?;
            return Err(refused(
                C::InvalidGrant,
                "the refresh token was already used",
            ));
        }
        Ok(issue.response)
    }

    /// Records the token request's proof `jti`; a replay is `invalid_dpop_proof`.
    pub(super) fn check_proof_fresh(&self, proof: Option<&ProofFacts>) -> Result<()> {
        if let Some(p) = proof {
            if !self.record_proof(p)? {
                return Err(refused(C::InvalidDpopProof, crate::oauth::PROOF_REPLAYED));
            }
        }
        Ok(())
    }

    /// The answer a keyed issuance stores beside its tokens: the response sealed for its
    /// client, key and request, held until the access token expires at the latest.
    fn answer_of(
        &self,
        keyed: Keyed<'_>,
        grant: &crate::oauth::Grant,
        issue: &Issue,
    ) -> Result<Option<TokenAnswer>> {
        let Some((key, token)) = keyed else {
            return Ok(None);
        };
        Ok(Some(TokenAnswer {
            key: key.clone(),
            token: token.to_owned(),
            company_id: grant.company_id,
            grant_id: grant.id,
            family_id: issue.access.family_id,
            access_digest: issue.access.digest.clone(),
            refresh_digest: issue.refresh.digest.clone(),
            sealed: self
                .k
                .sealer
                .seal(&seal_text(&issue.response)?, &key.aad())?,
            until: issue.access.expires_at,
        }))
    }

    /// New access and refresh tokens of `family` (not stored yet).
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &self,
        app: &StoredApplication,
        grant: GrantId,
        family: &Family,
        access_scopes: &[Scope],
        refresh_scopes: &[Scope],
        jkt: Option<String>,
        now: Timestamp,
    ) -> Issue {
        let access = self.k.new_secret(ACCESS_TOKEN_PREFIX);
        let refresh = self.k.new_secret(REFRESH_TOKEN_PREFIX);
        let token = |digest, scopes: &[Scope], expires_at| StoredToken {
            digest,
            family_id: family.id,
            grant_id: grant,
            application_id: app.app.id,
            scopes: scopes.to_vec(),
            jkt: jkt.clone(),
            created_at: now,
            expires_at,
            spent_at: None,
            revoked_at: None,
        };
        let access_ttl = self.config.access_ttl;
        Issue {
            access: token(
                self.k.crypto.digest(access.expose()),
                access_scopes,
                now.plus(access_ttl),
            ),
            refresh: token(
                self.k.crypto.digest(refresh.expose()),
                refresh_scopes,
                app.app.refresh_expiry(now),
            ),
            response: TokenResponse {
                access_token: access,
                token_type: if jkt.is_some() {
                    TokenType::DPoP
                } else {
                    TokenType::Bearer
                },
                expires_in_secs: access_ttl.whole_seconds(),
                refresh_token: refresh,
                scopes: access_scopes.to_vec(),
            },
        }
    }
}

/// A token response as its sealed answer holds it.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct SealedResponse {
    pub access_token: String,
    pub token_type: String,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: String,
}

fn seal_text(r: &TokenResponse) -> Result<crate::kernel::secret::Secret> {
    let text = serde_json::to_string(&SealedResponse {
        access_token: r.access_token.expose().to_owned(),
        token_type: r.token_type.as_str().to_owned(),
        expires_in: r.expires_in_secs,
        refresh_token: r.refresh_token.expose().to_owned(),
        scope: crate::oauth::scope_string(&r.scopes),
    })
    .map_err(|e| crate::kernel::error::Fault::caused("seal a token answer", e))?;
    Ok(crate::kernel::secret::Secret::new(text))
}

/// A `dpop_bound` application gets bound tokens only: a token request without a proof is
/// refused.
pub(super) fn require_proof(app: &StoredApplication, proof: Option<&ProofFacts>) -> Result<()> {
    if app.app.dpop_bound && proof.is_none() {
        return Err(refused(
            C::InvalidDpopProof,
            "this client's token requests need a DPoP proof",
        ));
    }
    Ok(())
}

impl OAuthService {
    /// The one rule of a one-time credential (code or refresh token): live, it moves on; used
    /// before, it is a replay and revokes its whole family; expired or revoked, it is refused
    /// (the two messages, in that order).
    fn use_once(
        &self,
        state: crate::oauth::machine::CredentialState,
        family: crate::kernel::ids::FamilyId,
        now: Timestamp,
        [replayed, dead]: [&'static str; 2],
    ) -> Result<()> {
        match transition(state, CredentialEvent::Use) {
            CredentialMove::Move { .. } => Ok(()),
            CredentialMove::Replay => {
                self.store.revoke_family(family, now)?;
                Err(refused(C::InvalidGrant, replayed))
            }
            CredentialMove::Refuse | CredentialMove::Nothing => Err(refused(C::InvalidGrant, dead)),
        }
    }
}
