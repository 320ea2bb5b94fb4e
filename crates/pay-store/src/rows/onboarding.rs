//! Onboarding partner and draft rows.

use diesel::prelude::*;
use pay_domain::kernel::ids::{CompanyId, DraftId, OnboardingPartnerId};
use pay_domain::kernel::secret::{SealedSecret, SecretDigest};
use pay_domain::onboarding::{
    Draft, DraftOAuth, DraftRequest, Partner, StoredDraft, StoredPartner,
};
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, opt_instant};
use crate::conn::MultiBackend;
use crate::schema::{onboarding_drafts, onboarding_partners};

#[derive(Queryable, Selectable)]
#[diesel(table_name = onboarding_partners, check_for_backend(MultiBackend))]
pub(crate) struct PartnerRow {
    id: String,
    name: String,
    created_at: i64,
}

impl TryFrom<PartnerRow> for Partner {
    type Error = Fault;

    fn try_from(r: PartnerRow) -> PortResult<Partner> {
        Ok(Partner {
            id: id(&r.id, OnboardingPartnerId::parse, "onboarding_partners.id")?,
            name: r.name,
            created_at: instant(r.created_at, "onboarding_partners.created_at")?,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = onboarding_partners)]
pub(crate) struct NewPartnerRow<'a> {
    id: String,
    name: &'a str,
    secret_digest: &'a str,
    created_at: i64,
}

impl<'a> From<&'a StoredPartner> for NewPartnerRow<'a> {
    fn from(p: &'a StoredPartner) -> Self {
        NewPartnerRow {
            id: p.partner.id.to_string(),
            name: &p.partner.name,
            secret_digest: &p.secret_digest.0,
            created_at: p.partner.created_at.unix_millis(),
        }
    }
}

#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = onboarding_drafts, check_for_backend(MultiBackend))]
pub(crate) struct DraftRow {
    id: String,
    partner_id: String,
    idempotency_key: String,
    company_name: String,
    company_website: Option<String>,
    oauth_client_id: Option<String>,
    oauth_redirect_uri: Option<String>,
    oauth_scope: Option<String>,
    oauth_state: Option<String>,
    oauth_code_challenge: Option<String>,
    claim_digest: String,
    claim_key_id: String,
    claim_sealed: String,
    created_at: i64,
    expires_at: i64,
    claimed_at: Option<i64>,
    company_id: Option<String>,
}

impl TryFrom<DraftRow> for StoredDraft {
    type Error = Fault;

    fn try_from(r: DraftRow) -> PortResult<StoredDraft> {
        let oauth = match (
            r.oauth_client_id,
            r.oauth_redirect_uri,
            r.oauth_scope,
            r.oauth_state,
            r.oauth_code_challenge,
        ) {
            (None, None, None, None, None) => None,
            (
                Some(client_id),
                Some(redirect_uri),
                Some(scope),
                Some(state),
                Some(code_challenge),
            ) => Some(DraftOAuth {
                client_id,
                redirect_uri,
                scope,
                state,
                code_challenge,
            }),
            _ => return Err(corrupt("onboarding_drafts.oauth_*")),
        };
        Ok(StoredDraft {
            draft: Draft {
                id: id(&r.id, DraftId::parse, "onboarding_drafts.id")?,
                partner_id: id(
                    &r.partner_id,
                    OnboardingPartnerId::parse,
                    "onboarding_drafts.partner_id",
                )?,
                idempotency_key: r.idempotency_key,
                request: DraftRequest {
                    company_name: r.company_name,
                    company_website: r.company_website,
                    oauth,
                },
                created_at: instant(r.created_at, "onboarding_drafts.created_at")?,
                expires_at: instant(r.expires_at, "onboarding_drafts.expires_at")?,
                claimed_at: opt_instant(r.claimed_at, "onboarding_drafts.claimed_at")?,
                company_id: r
                    .company_id
                    .map(|c| id(&c, CompanyId::parse, "onboarding_drafts.company_id"))
                    .transpose()?,
            },
            claim_digest: SecretDigest(r.claim_digest),
            claim_sealed: SealedSecret {
                key_id: r.claim_key_id,
                sealed: r.claim_sealed,
            },
        })
    }
}

impl From<&StoredDraft> for DraftRow {
    fn from(s: &StoredDraft) -> Self {
        let d = &s.draft;
        let o = d.request.oauth.as_ref();
        DraftRow {
            id: d.id.to_string(),
            partner_id: d.partner_id.to_string(),
            idempotency_key: d.idempotency_key.clone(),
            company_name: d.request.company_name.clone(),
            company_website: d.request.company_website.clone(),
            oauth_client_id: o.map(|o| o.client_id.clone()),
            oauth_redirect_uri: o.map(|o| o.redirect_uri.clone()),
            oauth_scope: o.map(|o| o.scope.clone()),
            oauth_state: o.map(|o| o.state.clone()),
            oauth_code_challenge: o.map(|o| o.code_challenge.clone()),
            claim_digest: s.claim_digest.0.clone(),
            claim_key_id: s.claim_sealed.key_id.clone(),
            claim_sealed: s.claim_sealed.sealed.clone(),
            created_at: d.created_at.unix_millis(),
            expires_at: d.expires_at.unix_millis(),
            claimed_at: d.claimed_at.map(|t| t.unix_millis()),
            company_id: d.company_id.map(|c| c.to_string()),
        }
    }
}
