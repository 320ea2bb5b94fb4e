//! OAuth 2.0 for partner apps: applications, consent grants, one-time codes with PKCE S256,
//! rotating refresh tokens in families, DPoP-bound access tokens and the `jti` replay store.

mod connected;
mod error;
pub mod machine;
mod model;
pub mod pkce;
pub mod ports;
pub mod recovery;
mod service;

pub use connected::{ConnectedApp, InstalledSite};
pub use error::{
    NoRedirect, OAuthError, OAuthErrorCode, OAuthRefusal, ResourceErrorCode, ResourceRefusal,
    PROOF_REPLAYED,
};
pub use model::*;
pub use service::{DpopAccess, OAuthService, SecurityReset, TokenGrant, TokenOutcome};
