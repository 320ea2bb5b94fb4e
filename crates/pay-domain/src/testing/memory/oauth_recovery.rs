//! The in-memory store: keyed token requests and their sealed answers (`TokenRecoveryStore`).

use super::MemStore;
use crate::kernel::error::{Fault, PortResult};
use crate::kernel::ids::ApplicationId;
use crate::kernel::timestamp::Timestamp;
use crate::oauth::recovery::{
    token_claim_step, FoundRequest, HeldAnswer, TokenAnswer, TokenClaim, TokenClaimStep,
    TokenRecoveryStore, TokenRequestKey,
};

/// A keyed token request's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequestRecord {
    pub key: TokenRequestKey,
    pub token: String,
    pub lease_until: Timestamp,
    pub created_at: Timestamp,
    /// Set by the issuance that answered the claim.
    pub answer: Option<TokenAnswer>,
    /// The answer's sealed response was erased (the record stays).
    pub erased: bool,
}

fn of(
    records: &[TokenRequestRecord],
    application: ApplicationId,
    key_digest: &str,
) -> Option<usize> {
    records
        .iter()
        .position(|r| r.key.application_id == application && r.key.key_digest == key_digest)
}

impl TokenRecoveryStore for MemStore {
    fn claim_token_request(
        &self,
        key: &TokenRequestKey,
        token: &str,
        now: Timestamp,
        lease_until: Timestamp,
    ) -> PortResult<TokenClaim> {
        self.count_call("claim_token_request");
        let mut t = self.write();
        let records = &mut t.oauth.token_requests;
        let at = of(records, key.application_id, &key.key_digest);
        let found = at.map(|i| FoundRequest {
            request_digest: records[i].key.request_digest.clone(),
            answered: records[i].answer.is_some(),
            lease_until: records[i].lease_until,
        });
        let claimed = TokenClaim::Claimed {
            token: token.to_owned(),
        };
        Ok(match (token_claim_step(found.as_ref(), key, now), at) {
            (TokenClaimStep::Decided(claim), _) => claim,
            (TokenClaimStep::TakeOver, Some(i)) => {
                records[i].token = token.to_owned();
                records[i].lease_until = lease_until;
                claimed
            }
            _ => {
                records.push(TokenRequestRecord {
                    key: key.clone(),
                    token: token.to_owned(),
                    lease_until,
                    created_at: now,
                    answer: None,
                    erased: false,
                });
                claimed
            }
        })
    }

    fn release_token_request(&self, key: &TokenRequestKey, token: &str) -> PortResult<()> {
        self.count_call("release_token_request");
        let mut t = self.write();
        t.oauth.token_requests.retain(|r| {
            !(r.key.application_id == key.application_id
                && r.key.key_digest == key.key_digest
                && r.token == token
                && r.answer.is_none())
        });
        Ok(())
    }

    fn token_answer(
        &self,
        application: ApplicationId,
        key_digest: &str,
    ) -> PortResult<Option<HeldAnswer>> {
        self.count_call("token_answer");
        let t = self.tables();
        let o = &t.oauth;
        let Some(i) = of(&o.token_requests, application, key_digest) else {
            return Ok(None);
        };
        let record = &o.token_requests[i];
        let Some(a) = &record.answer else {
            return Ok(None);
        };
        let access = o.access_tokens.iter().find(|x| x.digest == a.access_digest);
        let refresh = o
            .refresh_tokens
            .iter()
            .find(|x| x.digest == a.refresh_digest);
        let (Some(access), Some(refresh)) = (access, refresh) else {
            return Ok(None);
        };
        let family = o
            .families
            .iter()
            .find(|f| f.id == access.family_id)
            .ok_or_else(|| Fault::new("foreign key: family"))?;
        let grant = o
            .grants
            .iter()
            .find(|g| g.id == family.grant_id)
            .ok_or_else(|| Fault::new("foreign key: grant"))?;
        Ok(Some(HeldAnswer {
            request_digest: record.key.request_digest.clone(),
            company_id: a.company_id,
            grant_id: a.grant_id,
            sealed: (!record.erased).then(|| a.sealed.clone()),
            until: a.until,
            access: access.clone(),
            refresh: refresh.clone(),
            family: family.clone(),
            grant: grant.clone(),
        }))
    }

    fn erase_token_answer(&self, application: ApplicationId, key_digest: &str) -> PortResult<bool> {
        self.count_call("erase_token_answer");
        let mut t = self.write();
        let records = &mut t.oauth.token_requests;
        match of(records, application, key_digest) {
            Some(i) if records[i].answer.is_some() && !records[i].erased => {
                records[i].erased = true;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn prune_token_requests(&self, now: Timestamp, created_before: Timestamp) -> PortResult<u64> {
        self.count_call("prune_token_requests");
        let mut t = self.write();
        let records = &mut t.oauth.token_requests;
        let n = records.len();
        records.retain(|r| r.created_at >= created_before);
        let mut changed = (n - records.len()) as u64;
        for r in records.iter_mut() {
            if !r.erased && r.answer.as_ref().is_some_and(|a| a.until < now) {
                r.erased = true;
                changed += 1;
            }
        }
        Ok(changed)
    }
}
