//! Integrations: the API-key pairs of a team (the spec's "integration" records).

use crate::kernel::error::FieldError;
use crate::kernel::ids::{CompanyId, FormKeyId, KeyId, PartnerId};
use crate::kernel::secret::SecretDigest;
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;

/// The payment product's slug; the only `appSlug` a pay integration takes.
pub const APP_SLUG: &str = "pay";
/// Most allowed origins per integration.
pub const MAX_ALLOWED_ORIGINS: usize = 20;
/// `lastUsedAt` is written at most this often, so that authentication stays a read.
pub const LAST_USED_GRANULARITY_SECS: i64 = 60;

/// An integration as listed (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integration {
    pub partner_id: PartnerId,
    pub company_id: CompanyId,
    pub key_id: KeyId,
    pub form_key_id: FormKeyId,
    pub name: String,
    pub app_slug: String,
    pub allowed_origins: Vec<String>,
    pub enabled: bool,
    pub created_at: Timestamp,
    pub last_used_at: Option<Timestamp>,
}

/// An integration with the digest of its secret, as the authenticating lookup returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredIntegration {
    pub integration: Integration,
    pub secret_digest: SecretDigest,
}

/// The create-integration body after the edge checked its JSON types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIntegrationInput {
    pub name: String,
    pub app_slug: String,
    pub allowed_origins: Vec<String>,
}

pub const CREATE_INTEGRATION_FIELDS: &[&str] = &["name", "appSlug", "allowedOrigins"];

impl NewIntegrationInput {
    pub fn validate(&self) -> Result<(), FieldError> {
        validate::text("name", &self.name, 100, false)?;
        if self.app_slug != APP_SLUG {
            return Err(FieldError::new("appSlug", "appSlug must be \"pay\""));
        }
        if self.allowed_origins.len() > MAX_ALLOWED_ORIGINS {
            return Err(FieldError::new(
                "allowedOrigins",
                format!("allowedOrigins must have at most {MAX_ALLOWED_ORIGINS} entries"),
            ));
        }
        for (i, o) in self.allowed_origins.iter().enumerate() {
            validate::origin(&format!("allowedOrigins[{i}]"), o)?;
        }
        Ok(())
    }
}

/// Whether an authenticated use should refresh `lastUsedAt`.
pub fn needs_touch(last_used_at: Option<Timestamp>, now: Timestamp) -> bool {
    match last_used_at {
        None => true,
        Some(t) => now.unix_seconds() - t.unix_seconds() >= LAST_USED_GRANULARITY_SECS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input() -> NewIntegrationInput {
        NewIntegrationInput {
            name: "Shop backend".into(),
            app_slug: "pay".into(),
            allowed_origins: vec!["https://shop.example".into()],
        }
    }

    fn field(r: Result<(), FieldError>) -> String {
        match r {
            Err(FieldError { field, .. }) => field,
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn rules() {
        assert!(input().validate().is_ok());
        assert_eq!(
            field(
                NewIntegrationInput {
                    name: "".into(),
                    ..input()
                }
                .validate()
            ),
            "name"
        );
        assert_eq!(
            field(
                NewIntegrationInput {
                    app_slug: "shop".into(),
                    ..input()
                }
                .validate()
            ),
            "appSlug"
        );
        assert_eq!(
            field(
                NewIntegrationInput {
                    allowed_origins: vec!["https://a.example".into(), "https://b.example/x".into()],
                    ..input()
                }
                .validate()
            ),
            "allowedOrigins[1]"
        );
        let many = (0..21).map(|i| format!("https://s{i}.example")).collect();
        assert_eq!(
            field(
                NewIntegrationInput {
                    allowed_origins: many,
                    ..input()
                }
                .validate()
            ),
            "allowedOrigins"
        );
    }

    #[test]
    fn touch_granularity() {
        let t = |s: i64| Timestamp::from_unix_millis(s * 1000).unwrap();
        assert!(needs_touch(None, t(0)));
        assert!(!needs_touch(Some(t(0)), t(59)));
        assert!(needs_touch(Some(t(0)), t(60)));
    }
}
