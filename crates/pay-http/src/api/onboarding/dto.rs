//! Request and response shapes of the partner onboarding route.

use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::onboarding::{Draft, NewDraft, NewDraftOAuth};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::edge::json::non_null;

/// Body of `POST /api/partner/v1/onboarding/company`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftBody {
    /// The partner's own key for this draft (1 to 255 printable ASCII characters): the same
    /// key with the same body answers the same draft (200); with another body, 409
    /// `idempotency_key_reused`. Keys are the partner's own: another partner's equal key is
    /// another draft.
    #[schema(
        example = "crm-lead-4711",
        min_length = 1,
        max_length = 255,
        pattern = "^[ -~]*[!-~][ -~]*$"
    )]
    pub idempotency_key: String,
    pub company: DraftCompanyBody,
    /// When given, the application is connected to the company as soon as the merchant
    /// claims it: the browser goes to `redirectUri` with `code` and `state`.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(nullable = false)]
    pub oauth: Option<DraftOAuthBody>,
}

/// The company the merchant is to own.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftCompanyBody {
    /// The company's name (1 to 200 characters, no control characters).
    #[schema(
        example = "Acme Goods",
        min_length = 1,
        max_length = 200,
        pattern = "[^\\s]"
    )]
    pub name: String,
    /// The company's website: an absolute http(s) URL without user info.
    #[serde(default, deserialize_with = "non_null")]
    #[schema(
        example = "https://acme.example",
        max_length = 2048,
        pattern = "^https?://[^/?#@\\s]+([/?#][^\\s]*)?$",
        nullable = false
    )]
    pub website: Option<String>,
}

/// An authorization request made in advance (RFC 6749 4.1.1 with PKCE S256), checked now.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DraftOAuthBody {
    /// A registered application's `client_id` (not a native installation's).
    #[schema(example = "oc_4Hk2m9QpX7vR1sT8wY3zB6nC0dF5gJ2L")]
    pub client_id: String,
    /// Exactly one of the application's registered redirect URIs.
    #[schema(example = "https://partner.example/oauth/callback")]
    pub redirect_uri: String,
    /// Space-separated scopes, each allowed for the application, each once.
    #[schema(example = "company:read pay:payment-links:read pay:payment-links:write")]
    pub scope: String,
    /// Returned unchanged with the code (1 to 1024 printable ASCII characters).
    #[schema(
        example = "af0ifjsldkj",
        min_length = 1,
        max_length = 1024,
        pattern = "^[ -~]+$"
    )]
    pub state: String,
    /// BASE64URL(SHA-256(code_verifier)): 43 characters.
    #[schema(
        example = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        pattern = "^[A-Za-z0-9_-]{43}$"
    )]
    pub code_challenge: String,
    /// `S256`, the only method accepted.
    #[schema(example = "S256", pattern = "^S256$")]
    pub code_challenge_method: String,
}

impl From<DraftBody> for NewDraft {
    fn from(b: DraftBody) -> Self {
        NewDraft {
            idempotency_key: b.idempotency_key,
            company_name: b.company.name,
            company_website: b.company.website,
            oauth: b.oauth.map(|o| NewDraftOAuth {
                client_id: o.client_id,
                redirect_uri: o.redirect_uri,
                scope: o.scope,
                state: o.state,
                code_challenge: o.code_challenge,
                code_challenge_method: o.code_challenge_method,
            }),
        }
    }
}

/// The draft and the URL to send the merchant to.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftResponse {
    pub draft: DraftDto,
    /// The merchant's claim page: whoever opens it can claim the company, so hand it to the
    /// merchant only. The same URL on every retry of the draft call.
    #[schema(
        example = "https://pay.example/onboarding/claim/obc_Xk2m9QpX7vR1sT8wY3zB6nC0dF5gJ2L4Hk2m9QpX7vR"
    )]
    pub claim_url: String,
}

/// A draft.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftDto {
    #[schema(example = "01936f0e-7c3a-7b51-9d3e-2f6f1c0a5b42")]
    pub id: String,
    /// `open` (waiting for the merchant), `claimed` (the company exists) or `expired`.
    #[schema(example = "open")]
    pub status: &'static str,
    pub company: DraftCompanyDto,
    #[schema(value_type = String, example = "2026-11-27T06:07:20.123Z")]
    pub created_at: Timestamp,
    /// Seven days after creation: unclaimed, the claim page says the link expired.
    #[schema(value_type = String, example = "2026-12-04T06:07:20.123Z")]
    pub expires_at: Timestamp,
}

/// The draft's company.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DraftCompanyDto {
    #[schema(example = "Acme Goods")]
    pub name: String,
    #[schema(example = "https://acme.example")]
    pub website: Option<String>,
}

impl DraftDto {
    pub fn of(d: &Draft, now: Timestamp) -> DraftDto {
        DraftDto {
            id: d.id.to_string(),
            status: d.status(now).as_str(),
            company: DraftCompanyDto {
                name: d.request.company_name.clone(),
                website: d.request.company_website.clone(),
            },
            created_at: d.created_at,
            expires_at: d.expires_at,
        }
    }
}
