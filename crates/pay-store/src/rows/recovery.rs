//! Keyed token requests as read back (`oauth_token_requests`).

use diesel::prelude::*;
use pay_domain::kernel::ids::{CompanyId, GrantId};
use pay_domain::kernel::secret::SealedSecret;
use pay_domain::oauth::recovery::{FoundRequest, HeldAnswer};
use pay_domain::oauth::{Family, Grant, StoredToken};
use pay_domain::PortResult;

use super::oauth::{AccessRow, FamilyRow, GrantRow, RefreshRow};
use super::{corrupt, id, instant};
use crate::conn::MultiBackend;
use crate::schema::oauth_token_requests;

#[derive(Queryable, Selectable)]
#[diesel(table_name = oauth_token_requests, check_for_backend(MultiBackend))]
pub(crate) struct TokenRequestRow {
    pub(crate) request_digest: String,
    pub(crate) token: String,
    pub(crate) lease_until: i64,
    pub(crate) answered: bool,
    company_id: Option<String>,
    grant_id: Option<String>,
    answer_key_id: Option<String>,
    answer_sealed: Option<String>,
    answer_until: Option<i64>,
}

impl TokenRequestRow {
    pub(crate) fn found(&self) -> PortResult<FoundRequest> {
        Ok(FoundRequest {
            request_digest: self.request_digest.clone(),
            answered: self.answered,
            lease_until: instant(self.lease_until, "oauth_token_requests.lease_until")?,
        })
    }

    /// The answered record with its tokens, family and grant.
    pub(crate) fn held(
        self,
        access: AccessRow,
        refresh: RefreshRow,
        family: FamilyRow,
        grant: GrantRow,
    ) -> PortResult<HeldAnswer> {
        let col = |c: &str| corrupt(&format!("oauth_token_requests.{c}"));
        Ok(HeldAnswer {
            company_id: id(
                self.company_id
                    .as_deref()
                    .ok_or_else(|| col("company_id"))?,
                CompanyId::parse,
                "oauth_token_requests.company_id",
            )?,
            grant_id: id(
                self.grant_id.as_deref().ok_or_else(|| col("grant_id"))?,
                GrantId::parse,
                "oauth_token_requests.grant_id",
            )?,
            sealed: match (self.answer_key_id, self.answer_sealed) {
                (Some(key_id), Some(sealed)) => Some(SealedSecret { key_id, sealed }),
                _ => None,
            },
            until: instant(
                self.answer_until.ok_or_else(|| col("answer_until"))?,
                "oauth_token_requests.answer_until",
            )?,
            request_digest: self.request_digest,
            access: StoredToken::try_from(access)?,
            refresh: StoredToken::try_from(refresh)?,
            family: Family::try_from(family)?,
            grant: Grant::try_from(grant)?,
        })
    }
}
