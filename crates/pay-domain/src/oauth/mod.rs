//! OAuth 2.0 for partner apps (room for the next issue): grants, PKCE, DPoP-bound tokens.
