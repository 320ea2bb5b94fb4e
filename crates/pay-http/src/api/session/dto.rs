//! Request and response shapes of the session routes.

use serde::Deserialize;
use serde::Serialize;
use utoipa::ToSchema;

/// Answer of a successful login; the session itself is the `pay_session` cookie.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginResponse {
    /// Send as `x-csrf-token` on every state-changing request of this session.
    pub csrf_token: String,
}

/// Body of `POST /auth/login`.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub email: String,
    pub password: String,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginRequest(***)")
    }
}
