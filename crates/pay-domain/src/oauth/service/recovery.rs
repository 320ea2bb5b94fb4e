//! The token endpoint with an `Idempotency-Key` (native installations only): the request is
//! claimed under its key before anything else, issued with its answer in the same store
//! transaction, and a retry of the exact request gets that answer back while its tokens are
//! the family's live successor (see `oauth/recovery.rs`).

use super::token::{require_proof, SealedResponse};
use super::{state_of, OAuthService, Result};
use crate::kernel::error::Fault;
use crate::kernel::idempotency::{IdempotencyKey, CLAIM_LEASE};
use crate::oauth::error::refused;
use crate::oauth::machine::CredentialState;
use crate::oauth::recovery::{HeldAnswer, TokenClaim, TokenRequestKey};
use crate::oauth::{
    intersect, parse_scopes, ClientAuth, OAuthErrorCode as C, ProofFacts, StoredApplication,
    TokenResponse, TokenType,
};

/// A token request's grant, as the edge read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenGrant<'a> {
    AuthorizationCode {
        code: &'a str,
        redirect_uri: &'a str,
        code_verifier: &'a str,
    },
    RefreshToken {
        refresh_token: &'a str,
        scope: Option<&'a str>,
    },
}

impl TokenGrant<'_> {
    /// The request's content as one unambiguous text (each value length-prefixed), whose
    /// digest tells "the exact request" from another one under the same key.
    fn canonical(&self) -> String {
        let mut out = String::new();
        let mut put = |name: &str, value: Option<&str>| {
            let v = value.unwrap_or("");
            out.push_str(&format!(
                "{name}:{}:{}:{v};",
                u8::from(value.is_some()),
                v.len()
            ));
        };
        match self {
            TokenGrant::AuthorizationCode {
                code,
                redirect_uri,
                code_verifier,
            } => {
                put("grant_type", Some("authorization_code"));
                put("code", Some(code));
                put("redirect_uri", Some(redirect_uri));
                put("code_verifier", Some(code_verifier));
            }
            TokenGrant::RefreshToken {
                refresh_token,
                scope,
            } => {
                put("grant_type", Some("refresh_token"));
                put("refresh_token", Some(refresh_token));
                put("scope", *scope);
            }
        }
        out
    }
}

/// A token response, and whether it is a keyed request's stored answer given again.
#[derive(Debug, Clone)]
pub struct TokenOutcome {
    pub response: TokenResponse,
    pub replayed: bool,
}

impl OAuthService {
    /// `POST /oauth/token`. Without `key`, `exchange_code` or `refresh`. With `key` (an
    /// official native installation's client only; any other is `invalid_request`): the
    /// request is claimed under its key first; a byte-for-byte retry gets the first answer
    /// again (`replayed`) while its tokens are still the family's live successor, revalidated
    /// as a use of them would be (grant, company, scopes, family, the proof's key, a fresh
    /// `jti`), and `invalid_grant` once they were used, revoked or expired (the answer is
    /// erased then); another request under the key, or one while the first runs, is refused
    /// (409). A refused request releases its claim, so the key can be used again.
    pub fn token(
        &self,
        client: &ClientAuth,
        grant: TokenGrant<'_>,
        proof: Option<&ProofFacts>,
        key: Option<&IdempotencyKey>,
    ) -> Result<TokenOutcome> {
        let app = self.authenticate_client(client)?;
        let Some(key) = key else {
            return self.issue_for(&app, grant, proof, None).map(fresh);
        };
        if app.app.template.is_none() {
            return Err(refused(
                C::InvalidRequest,
                "Idempotency-Key is accepted only on a native installation's token requests",
            ));
        }
        require_proof(&app, proof)?;
        let Some(proof) = proof else {
            return Err(refused(C::InvalidDpopProof, "a DPoP proof is required"));
        };
        let request = TokenRequestKey {
            application_id: app.app.id,
            key_digest: self.k.crypto.digest(key.as_str()).0,
            request_digest: self.k.crypto.digest(&grant.canonical()).0,
        };
        // Claims and their leases run on real time (the process clock).
        let now = self.k.clock.now();
        let token = self.k.crypto.random_alphanumeric(32);
        match self
            .store
            .claim_token_request(&request, &token, now, now.plus(CLAIM_LEASE))?
        {
            TokenClaim::Claimed { token } => {
                let result = self.issue_for(&app, grant, Some(proof), Some((&request, &token)));
                if result.is_err() {
                    // Nothing was written with the answer; a failed release leaves the claim
                    // to its lease, after which a retry takes it over.
                    let _ = self.store.release_token_request(&request, &token);
                }
                result.map(fresh)
            }
            TokenClaim::Answered => {
                self.replay(&app, &request, proof)
                    .map(|response| TokenOutcome {
                        response,
                        replayed: true,
                    })
            }
            TokenClaim::Reused => Err(refused(
                C::IdempotencyKeyReused,
                "Idempotency-Key was already used for a different token request",
            )),
            TokenClaim::InFlight => Err(refused(
                C::IdempotencyKeyInFlight,
                "a token request with this Idempotency-Key is still running",
            )),
        }
    }

    fn issue_for(
        &self,
        app: &StoredApplication,
        grant: TokenGrant<'_>,
        proof: Option<&ProofFacts>,
        keyed: super::token::Keyed<'_>,
    ) -> Result<TokenResponse> {
        match grant {
            TokenGrant::AuthorizationCode {
                code,
                redirect_uri,
                code_verifier,
            } => self.redeem_code(app, code, redirect_uri, code_verifier, proof, keyed),
            TokenGrant::RefreshToken {
                refresh_token,
                scope,
            } => self.rotate(app, refresh_token, scope, proof, keyed),
        }
    }

    /// The stored answer of `request`, given again only while everything a use of its tokens
    /// needs still holds; otherwise it is erased and the retry is `invalid_grant`.
    fn replay(
        &self,
        app: &StoredApplication,
        request: &TokenRequestKey,
        proof: &ProofFacts,
    ) -> Result<TokenResponse> {
        let gone = || {
            refused(
                C::InvalidGrant,
                "the token response can no longer be recovered: its tokens were used, revoked or expired",
            )
        };
        let Some(held) = self.store.token_answer(app.app.id, &request.key_digest)? else {
            return Err(gone());
        };
        let Some(sealed) = held.sealed.clone() else {
            return Err(gone());
        };
        if held.request_digest != request.request_digest {
            return Err(Fault::new("a token answer under another request").into());
        }
        if !self.still_live(app, &held) {
            self.store
                .erase_token_answer(app.app.id, &request.key_digest)?;
            return Err(gone());
        }
        let bound = Some(&proof.jkt);
        if held.access.jkt.as_ref() != bound || held.refresh.jkt.as_ref() != bound {
            return Err(refused(
                C::InvalidDpopProof,
                "the tokens are bound to another DPoP key",
            ));
        }
        self.check_proof_fresh(Some(proof))?;
        let text = self.k.sealer.open(&sealed, &request.aad())?;
        let stored: SealedResponse = serde_json::from_str(text.expose())
            .map_err(|e| Fault::caused("stored token answer", e))?;
        Ok(TokenResponse {
            access_token: crate::kernel::secret::Secret::new(stored.access_token),
            token_type: if stored.token_type == TokenType::DPoP.as_str() {
                TokenType::DPoP
            } else {
                TokenType::Bearer
            },
            expires_in_secs: stored.expires_in,
            refresh_token: crate::kernel::secret::Secret::new(stored.refresh_token),
            scopes: parse_scopes(&stored.scope)
                .map_err(|_| Fault::new("stored token answer: scopes"))?,
        })
    }

    /// Whether the answer's tokens are still the family's live successor, as a use of them
    /// would find: the refresh token unused, neither token revoked or expired, the family and
    /// grant in force, the grant still the company's that it was, the scopes still approved
    /// and allowed, and the installation's key still the one they are bound to.
    fn still_live(&self, app: &StoredApplication, held: &HeldAnswer) -> bool {
        let now = self.k.now();
        let (a, r) = (&held.access, &held.refresh);
        let live = |used, revoked, expires| {
            state_of(used, revoked, expires, &held.family, &held.grant, now)
                == CredentialState::Live
        };
        let allowed = intersect(&held.grant.scopes, &app.app.scopes);
        let within = |scopes: &[crate::tenancy::Scope]| scopes.iter().all(|s| allowed.contains(s));
        let key_in_force = app
            .app
            .key
            .as_ref()
            .map(|k| Some(&k.accepted_jkt) == a.jkt.as_ref());
        live(r.spent_at, r.revoked_at, r.expires_at)
            && live(None, a.revoked_at, a.expires_at)
            && now < held.until
            && held.grant.id == held.grant_id
            && held.grant.company_id == held.company_id
            && a.family_id == held.family.id
            && r.family_id == held.family.id
            && within(&a.scopes)
            && within(&r.scopes)
            && key_in_force != Some(false)
    }
}

fn fresh(response: TokenResponse) -> TokenOutcome {
    TokenOutcome {
        response,
        replayed: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_differ_by_every_field() {
        let code = |c, r, v| TokenGrant::AuthorizationCode {
            code: c,
            redirect_uri: r,
            code_verifier: v,
        };
        let refresh = |t, s| TokenGrant::RefreshToken {
            refresh_token: t,
            scope: s,
        };
        let all = [
            code("a", "b", "c"),
            code("a", "b", "d"),
            code("a", "bc", ""),
            code("ab", "", "c"),
            refresh("a", None),
            refresh("a", Some("")),
            refresh("a", Some("company:read")),
            refresh("b", None),
        ];
        for (i, x) in all.iter().enumerate() {
            for (j, y) in all.iter().enumerate() {
                assert_eq!(x.canonical() == y.canonical(), i == j, "{x:?} {y:?}");
            }
        }
    }
}
