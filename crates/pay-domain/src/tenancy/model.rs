//! Users, companies, memberships and the principal: the one place where a credential becomes
//! "this company, with these rights". Every use case takes the company from the principal.

use std::fmt;

use time::Duration;

use crate::kernel::ids::{CompanyId, PartnerId, SignInId, UserId};
use crate::kernel::timestamp::Timestamp;
use crate::tenancy::Denied;

/// Anonymous (one-time) payment links belong to this reserved company: they have no merchant account,
/// are never listed, and report to their own `webhookUrl`.
pub const ANONYMOUS_COMPANY: CompanyId = CompanyId(uuid::Uuid::nil());

/// A company's now: real time moved by its sandbox test clock's offset (`crate::sandbox::clock`).
pub fn company_now(real: Timestamp, offset_ms: i64) -> Timestamp {
    real.plus(Duration::milliseconds(offset_ms.max(0)))
}

/// A team permission. Only `settings.manage` exists today.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    SettingsManage,
}

impl Permission {
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::SettingsManage => "settings.manage",
        }
    }
}

/// A member's role in a company; roles give permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Owner,
    Admin,
    Member,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "owner" => Some(Role::Owner),
            "admin" => Some(Role::Admin),
            "member" => Some(Role::Member),
            _ => None,
        }
    }

    pub fn permissions(self) -> &'static [Permission] {
        match self {
            Role::Owner | Role::Admin => &[Permission::SettingsManage],
            Role::Member => &[],
        }
    }

    pub fn has(self, p: Permission) -> bool {
        self.permissions().contains(&p)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// OAuth scopes of the spec. API keys and sessions hold all of them; OAuth grants (later) hold
/// what the merchant approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    CompanyRead,
    PaymentLinksRead,
    PaymentLinksWrite,
    CustomersRead,
    CustomersWrite,
    SubscriptionsRead,
    SubscriptionsWrite,
    SettingsRead,
    SettingsWrite,
    WebhooksRead,
    WebhooksWrite,
    BookkeepingRead,
    BookkeepingWrite,
}

impl Scope {
    pub const ALL: [Scope; 13] = [
        Scope::CompanyRead,
        Scope::PaymentLinksRead,
        Scope::PaymentLinksWrite,
        Scope::CustomersRead,
        Scope::CustomersWrite,
        Scope::SubscriptionsRead,
        Scope::SubscriptionsWrite,
        Scope::SettingsRead,
        Scope::SettingsWrite,
        Scope::WebhooksRead,
        Scope::WebhooksWrite,
        Scope::BookkeepingRead,
        Scope::BookkeepingWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::CompanyRead => "company:read",
            Scope::PaymentLinksRead => "pay:payment-links:read",
            Scope::PaymentLinksWrite => "pay:payment-links:write",
            Scope::CustomersRead => "pay:customers:read",
            Scope::CustomersWrite => "pay:customers:write",
            Scope::SubscriptionsRead => "pay:subscriptions:read",
            Scope::SubscriptionsWrite => "pay:subscriptions:write",
            Scope::SettingsRead => "pay:settings:read",
            Scope::SettingsWrite => "pay:settings:write",
            Scope::WebhooksRead => "pay:webhooks:read",
            Scope::WebhooksWrite => "pay:webhooks:write",
            Scope::BookkeepingRead => "pay:bookkeeping:read",
            Scope::BookkeepingWrite => "pay:bookkeeping:write",
        }
    }

    /// Unknown scopes are rejected, never ignored.
    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Writing implies the right to change; reads are any member's.
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Scope::PaymentLinksWrite
                | Scope::CustomersWrite
                | Scope::SubscriptionsWrite
                | Scope::SettingsWrite
                | Scope::WebhooksWrite
                | Scope::BookkeepingWrite
        )
    }
}

/// Which kind of credential made the request, and its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A server API-key pair: trusted for its whole team.
    ApiKey { partner_id: PartnerId },
    /// A signed-in browser session of a member.
    SignIn {
        sign_in_id: SignInId,
        user_id: UserId,
        role: Role,
    },
    /// An OAuth grant (added with the OAuth work): only its approved scopes.
    OAuthGrant {
        grant_id: uuid::Uuid,
        scopes: Vec<Scope>,
        /// The access token is DPoP-bound (it authenticated with the DPoP scheme and a proof).
        dpop_bound: bool,
    },
}

/// The resolved caller: one company and what the credential may do there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub company_id: CompanyId,
    pub credential: Credential,
}

impl Principal {
    /// The credential an `Idempotency-Key` is scoped to: the API key pair, the OAuth grant,
    /// or the member signed in to the company.
    pub fn idempotency_credential(&self) -> String {
        match &self.credential {
            Credential::ApiKey { partner_id } => format!("key:{partner_id}"),
            Credential::OAuthGrant { grant_id, .. } => format!("grant:{grant_id}"),
            Credential::SignIn { user_id, .. } => format!("member:{user_id}@{}", self.company_id),
        }
    }

    /// Checks that the credential may use a route that needs `scope`. A missing OAuth scope is
    /// the spec's 401 `Invalid pay API credentials`; a session mutation without the team
    /// permission is 403 `Forbidden`.
    pub fn authorize(&self, scope: Scope) -> Result<(), Denied> {
        match &self.credential {
            Credential::ApiKey { .. } => Ok(()),
            Credential::SignIn { role, .. } => {
                if scope.is_write() && !role.has(Permission::SettingsManage) {
                    Err(Denied::Forbidden)
                } else {
                    Ok(())
                }
            }
            Credential::OAuthGrant {
                scopes, dpop_bound, ..
            } => {
                if scopes.contains(&scope) {
                    Ok(())
                } else {
                    Err(Denied::MissingScope {
                        scope,
                        dpop_bound: *dpop_bound,
                    })
                }
            }
        }
    }

    /// Checks a route that only a grant-bound OAuth token may use (the grant's own webhook
    /// subscription): API keys and sessions are refused as invalid credentials there (spec:
    /// "The webhook-subscription routes reject API keys"), a token without `scope` too.
    /// Returns the grant.
    pub fn authorize_grant(&self, scope: Scope) -> Result<uuid::Uuid, Denied> {
        match &self.credential {
            Credential::OAuthGrant { grant_id, .. } => {
                self.authorize(scope)?;
                Ok(*grant_id)
            }
            Credential::ApiKey { .. } | Credential::SignIn { .. } => {
                Err(Denied::InvalidCredentials)
            }
        }
    }

    /// The OAuth grant that made the request, if any (links record it).
    pub fn grant_id(&self) -> Option<uuid::Uuid> {
        match &self.credential {
            Credential::OAuthGrant { grant_id, .. } => Some(*grant_id),
            _ => None,
        }
    }
}

/// A merchant team with its branding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Company {
    pub id: CompanyId,
    pub name: String,
    pub picture_url: Option<String>,
    pub logo_url: Option<String>,
    pub theme: Theme,
    pub created_at: Timestamp,
    /// How far the company's sandbox test clock runs ahead of real time, in milliseconds (0
    /// until moved). Only what the company owns and schedules follows it (`crate::sandbox::clock`).
    pub test_clock_offset_ms: i64,
    /// The payment-link domain an operator verified for the company (a lower-case host name,
    /// `pay-server admin verify-domain`); its portal and hosted checkout URLs are on it.
    pub payment_link_domain: Option<String>,
    /// The company's website (an absolute http(s) URL), when known.
    pub website: Option<String>,
}

/// Merchant checkout theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    Light,
    Dark,
    System,
}

impl Theme {
    pub fn as_str(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
            Theme::System => "system",
        }
    }

    pub fn parse(s: &str) -> Option<Theme> {
        match s {
            "light" => Some(Theme::Light),
            "dark" => Some(Theme::Dark),
            "system" => Some(Theme::System),
            _ => None,
        }
    }
}

/// A user as stored, with the password hash (PHC string) that only the login use case reads.
#[derive(Clone, PartialEq, Eq)]
pub struct UserRecord {
    pub id: UserId,
    pub email: String,
    pub password_hash: String,
    pub created_at: Timestamp,
}

impl fmt::Debug for UserRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserRecord")
            .field("id", &self.id)
            .field("email", &"***")
            .finish_non_exhaustive()
    }
}

/// A company as one member sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub company_id: CompanyId,
    pub company_name: String,
    pub role: Role,
}

/// A member of a company as its team list shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamMember {
    pub user_id: UserId,
    pub email: String,
    pub role: Role,
    /// When they joined the company.
    pub since: Timestamp,
}

/// Normalises an e-mail for lookup: trimmed, lower case.
pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_moves_now_forward_only() {
        let real = Timestamp::from_unix_millis(1_000_000).unwrap();
        assert_eq!(company_now(real, 0), real);
        assert_eq!(company_now(real, 5_000).unix_millis(), 1_005_000);
        // A negative offset never happens (moves only add); it reads as real time.
        assert_eq!(company_now(real, -5_000), real);
    }

    fn principal(credential: Credential) -> Principal {
        Principal {
            company_id: CompanyId(uuid::Uuid::nil()),
            credential,
        }
    }

    #[test]
    fn api_keys_hold_every_scope() {
        let p = principal(Credential::ApiKey {
            partner_id: PartnerId(uuid::Uuid::nil()),
        });
        for s in Scope::ALL {
            assert_eq!(p.authorize(s), Ok(()));
        }
    }

    #[test]
    fn sessions_need_settings_manage_to_write() {
        for (role, can_write) in [
            (Role::Owner, true),
            (Role::Admin, true),
            (Role::Member, false),
        ] {
            let p = principal(Credential::SignIn {
                sign_in_id: SignInId(uuid::Uuid::nil()),
                user_id: UserId(uuid::Uuid::nil()),
                role,
            });
            for s in Scope::ALL {
                let expect = if s.is_write() && !can_write {
                    Err(Denied::Forbidden)
                } else {
                    Ok(())
                };
                assert_eq!(p.authorize(s), expect, "{role} {s:?}");
            }
        }
    }

    #[test]
    fn oauth_grants_hold_only_their_scopes() {
        for dpop_bound in [false, true] {
            let p = principal(Credential::OAuthGrant {
                grant_id: uuid::Uuid::nil(),
                scopes: vec![Scope::PaymentLinksRead],
                dpop_bound,
            });
            assert_eq!(p.authorize(Scope::PaymentLinksRead), Ok(()));
            assert_eq!(
                p.authorize(Scope::PaymentLinksWrite),
                Err(Denied::MissingScope {
                    scope: Scope::PaymentLinksWrite,
                    dpop_bound
                })
            );
        }
    }

    #[test]
    fn grant_only_routes_refuse_keys_and_sessions() {
        let grant = uuid::Uuid::from_u128(7);
        let p = principal(Credential::OAuthGrant {
            grant_id: grant,
            scopes: vec![Scope::WebhooksRead],
            dpop_bound: false,
        });
        assert_eq!(p.authorize_grant(Scope::WebhooksRead), Ok(grant));
        assert_eq!(
            p.authorize_grant(Scope::WebhooksWrite),
            Err(Denied::MissingScope {
                scope: Scope::WebhooksWrite,
                dpop_bound: false
            })
        );
        for c in [
            Credential::ApiKey {
                partner_id: PartnerId(uuid::Uuid::nil()),
            },
            Credential::SignIn {
                sign_in_id: SignInId(uuid::Uuid::nil()),
                user_id: UserId(uuid::Uuid::nil()),
                role: Role::Owner,
            },
        ] {
            assert_eq!(
                principal(c).authorize_grant(Scope::WebhooksRead),
                Err(Denied::InvalidCredentials)
            );
        }
    }

    #[test]
    fn scopes_round_trip_and_unknown_is_refused() {
        for s in Scope::ALL {
            assert_eq!(Scope::parse(s.as_str()), Some(s));
        }
        assert_eq!(Scope::parse("pay:everything"), None);
    }

    #[test]
    fn roles_round_trip() {
        for r in [Role::Owner, Role::Admin, Role::Member] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(normalize_email("  Ann@Example.COM "), "ann@example.com");
    }
}
