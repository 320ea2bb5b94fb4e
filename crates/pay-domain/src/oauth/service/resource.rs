//! Access tokens on resource routes: a Bearer token, or a DPoP-bound token with the facts of
//! its verified proof. A DPoP request's `jti` is recorded in the token lookup's own round trip,
//! only for a token bound to the proof's key, and counts only once every other check passed.
//! Where the store holds the token in memory, the record can be awaited without holding a
//! thread (`authenticate_held_dpop`): the same checks, on the same answers of the store.

use super::{principal_of, shaped, state_of, OAuthService, Result};
use crate::kernel::secret::SecretDigest;
use crate::oauth::error::resource;
use crate::oauth::machine::CredentialState;
use crate::oauth::ports::{HeldRecord, JtiRecord};
use crate::oauth::{Held, ProofFacts, ResourceErrorCode as R, StoredToken, ACCESS_TOKEN_PREFIX};
use crate::tenancy::Principal;

/// How `OAuthService::authenticate_held_dpop` ended.
#[derive(Debug)]
pub enum DpopAccess {
    /// Decided: the principal, or the refusal (a replay among them).
    Decided(Result<Principal>),
    /// The proof's `jti` is recorded (`true` new, `false` a replay) but the token changed since
    /// its copy was read: finish with `authenticate_recorded` where a thread may block.
    Recorded(bool),
    /// Nothing was recorded or read: `authenticate_access_token` where a thread may block.
    NotHeld,
}

fn invalid() -> crate::oauth::OAuthError {
    resource(R::InvalidToken, "the access token is invalid")
}

impl OAuthService {
    /// Resolves an access token on a resource route. `presented` is the request's DPoP proof,
    /// verified by the edge (signature, `htm`, `htu`, `iat`, `ath`) and `None` for a Bearer
    /// request. Refuses unknown, expired and revoked tokens (their family or grant too), a
    /// bound token without a proof, a proof of another key, a proof for an unbound token, and
    /// a replayed `jti`. The principal holds the token's scopes that the grant still approves.
    pub fn authenticate_access_token(
        &self,
        token: &str,
        presented: Option<&ProofFacts>,
    ) -> Result<Principal> {
        let digest = self.token_digest(token)?;
        // With a proof, its `jti` is recorded in the token lookup's own round trip, and only
        // for a token bound to the proof's key; it counts only once every check below passed.
        let (held, recorded) = match presented {
            Some(proof) => {
                let jti_digest = crate::kernel::hex::encode(&proof.jti_digest);
                let record = self.jti_record(proof, &jti_digest)?;
                self.store.access_token_recording_jti(&digest, &record)?
            }
            None => (self.store.access_token(&digest)?, None),
        };
        self.judge(held, recorded, presented)
    }

    /// A DPoP request whose token the store holds in memory: the record is handed to the store
    /// at once (records are decided in the order of the calls) and awaited without holding a
    /// thread; the token's checks then run on the copy the store vouched for, exactly as in
    /// `authenticate_access_token`. `NotHeld` when the store has no copy bound to the proof's
    /// key (nothing recorded), `Recorded` when the copy went stale while the record committed.
    pub async fn authenticate_held_dpop(&self, token: &str, proof: &ProofFacts) -> DpopAccess {
        let Ok(digest) = self.token_digest(token) else {
            return DpopAccess::Decided(Err(invalid()));
        };
        let jti_digest = crate::kernel::hex::encode(&proof.jti_digest);
        let pending = match self.jti_record(proof, &jti_digest) {
            Ok(record) => self.store.start_recording_jti(&digest, &record),
            Err(fault) => return DpopAccess::Decided(Err(fault.into())),
        };
        let Some(pending) = pending else {
            return DpopAccess::NotHeld;
        };
        match pending.await {
            Ok(HeldRecord::Current(held, recorded)) => {
                DpopAccess::Decided(self.judge(Some(*held), Some(recorded), Some(proof)))
            }
            Ok(HeldRecord::Stale(recorded)) => DpopAccess::Recorded(recorded),
            Err(fault) => DpopAccess::Decided(Err(fault.into())),
        }
    }

    /// Finishes a DPoP request whose `jti` `authenticate_held_dpop` recorded (`recorded`: it was
    /// new) against a copy that went stale: the token is read again and checked as in
    /// `authenticate_access_token`; the record counts only for a token still bound to the key.
    pub fn authenticate_recorded(
        &self,
        token: &str,
        proof: &ProofFacts,
        recorded: bool,
    ) -> Result<Principal> {
        let digest = self.token_digest(token)?;
        let held = self.store.access_token(&digest)?;
        let bound = held
            .as_ref()
            .is_some_and(|h| h.item.jkt.as_deref() == Some(proof.jkt.as_str()));
        self.judge(held, bound.then_some(recorded), Some(proof))
    }

    fn token_digest(&self, token: &str) -> Result<SecretDigest> {
        if !shaped(token, ACCESS_TOKEN_PREFIX) {
            return Err(invalid());
        }
        Ok(self.k.crypto.digest(token))
    }

    fn jti_record<'a>(
        &self,
        proof: &'a ProofFacts,
        jti_digest: &'a str,
    ) -> crate::kernel::error::PortResult<JtiRecord<'a>> {
        Ok(JtiRecord {
            jkt: &proof.jkt,
            htu: &proof.htu,
            jti_digest,
            keep_until: self.keep_jti_until(proof)?,
        })
    }

    /// The checks on what the store answered: `held` the token (with family and grant),
    /// `recorded` the proof's record (`None`: nothing recorded).
    fn judge(
        &self,
        held: Option<Held<StoredToken>>,
        recorded: Option<bool>,
        presented: Option<&ProofFacts>,
    ) -> Result<Principal> {
        let held = held.ok_or_else(invalid)?;
        let now = self.k.now();
        let t = &held.item;
        if state_of(
            None,
            t.revoked_at,
            t.expires_at,
            &held.family,
            &held.grant,
            now,
        ) != CredentialState::Live
        {
            return Err(resource(
                R::InvalidToken,
                "the access token is expired or revoked",
            ));
        }
        match (&t.jkt, presented) {
            (Some(_), None) => {
                return Err(resource(
                    R::InvalidToken,
                    "a DPoP-bound token needs the DPoP scheme and a proof",
                ))
            }
            (Some(bound), Some(proof)) if *bound != proof.jkt => {
                return Err(resource(
                    R::InvalidDpopProof,
                    "the proof is not made with the token's key",
                ))
            }
            (None, Some(_)) => {
                return Err(resource(
                    R::InvalidToken,
                    "the access token is not DPoP-bound",
                ))
            }
            _ => {}
        }
        // A bound token with a proof of its key: the record was made, and a replay refused.
        if presented.is_some() && recorded != Some(true) {
            return Err(resource(R::InvalidDpopProof, crate::oauth::PROOF_REPLAYED));
        }
        Ok(principal_of(&held))
    }
}
