//! The OAuth pages' inputs, read by these structs (`edge::form::read`). The authorization
//! request's query ignores parameters it does not know (RFC 6749 section 3.1); the pages' own
//! forms refuse them.

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

/// The authorization request (RFC 6749 section 4.1.1, RFC 7636, RFC 9449 section 10).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuthorizeQuery {
    /// `code`.
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    /// Exactly one of the application's registered redirect URIs.
    pub redirect_uri: Option<String>,
    /// Space-separated scopes, each within the application's allowlist.
    pub scope: Option<String>,
    /// Returned unchanged with the code (1 to 1024 printable ASCII characters).
    pub state: Option<String>,
    /// BASE64URL(SHA-256(code_verifier)), 43 characters.
    pub code_challenge: Option<String>,
    /// `S256` (`plain` is refused).
    pub code_challenge_method: Option<String>,
    /// Binds the code to this DPoP key thumbprint.
    pub dpop_jkt: Option<String>,
}

/// The consent page's form: the request's fields plus the decision.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsentForm {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub dpop_jkt: Option<String>,
    /// The company the app may act for (one of the user's, as owner or admin).
    pub company_id: Option<String>,
    /// `approve` or `deny`.
    pub decision: String,
    /// The sign-in's CSRF token.
    pub csrf_token: String,
}

impl ConsentForm {
    pub fn query(&self) -> AuthorizeQuery {
        AuthorizeQuery {
            response_type: self.response_type.clone(),
            client_id: self.client_id.clone(),
            redirect_uri: self.redirect_uri.clone(),
            scope: self.scope.clone(),
            state: self.state.clone(),
            code_challenge: self.code_challenge.clone(),
            code_challenge_method: self.code_challenge_method.clone(),
            dpop_jkt: self.dpop_jkt.clone(),
        }
    }
}

/// The sign-in page's form.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignInForm {
    pub email: String,
    pub password: String,
    /// An `/oauth/authorize?...` address to return to.
    pub return_to: Option<String>,
}

impl std::fmt::Debug for SignInForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignInForm(***)")
    }
}
