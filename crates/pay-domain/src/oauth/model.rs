//! OAuth values: applications and their registration rules, scope sets, the authorization
//! request, grants, codes and tokens as stored, and the DPoP facts the edge verified.

use time::Duration;

use crate::kernel::error::FieldError;
use crate::kernel::ids::{ApplicationId, ClientId, CompanyId, FamilyId, GrantId, UserId};
use crate::kernel::secret::{Secret, SecretDigest};
use crate::kernel::timestamp::Timestamp;
use crate::kernel::validate;
use crate::tenancy::Scope;

/// Prefix of a confidential application's client secret.
pub const CLIENT_SECRET_PREFIX: &str = "ocs_";
/// Prefix of an authorization code.
pub const CODE_PREFIX: &str = "oac_";
/// Prefix of an access token.
pub const ACCESS_TOKEN_PREFIX: &str = "oat_";
/// Prefix of a refresh token.
pub const REFRESH_TOKEN_PREFIX: &str = "ort_";
/// Most characters of any code, token or secret a client sends back (ours are 47).
pub const MAX_TOKEN_LEN: usize = 128;

/// How long an authorization code can be redeemed (real time).
pub const CODE_TTL: Duration = Duration::seconds(60);
/// Default lifetime of an access token.
pub const DEFAULT_ACCESS_TTL: Duration = Duration::minutes(15);
/// Default refresh-token lifetime of an application (since its last rotation).
pub const DEFAULT_REFRESH_TTL: Duration = Duration::days(30);
/// Shortest and longest refresh-token lifetime an application may have.
pub const MIN_REFRESH_TTL: Duration = Duration::hours(1);
pub const MAX_REFRESH_TTL: Duration = Duration::days(365);
/// Most redirect URIs per application.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Most characters of `state`.
pub const MAX_STATE_LEN: usize = 1024;

/// The operator's OAuth settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OAuthConfig {
    /// Lifetime of an access token (15 minutes by default).
    pub access_ttl: Duration,
    /// How long after its `iat` a DPoP proof is accepted, so how long its `jti` is kept
    /// (`pay_dpop::DEFAULT_MAX_AGE_SECS`, 300 s).
    pub dpop_max_age: Duration,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        OAuthConfig {
            access_ttl: DEFAULT_ACCESS_TTL,
            dpop_max_age: Duration::seconds(300),
        }
    }
}

/// Whether an application can keep a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientType {
    /// A server that holds a client secret (`client_secret_basic` or `_post`).
    Confidential,
    /// A browser or distributed plugin: no secret, PKCE alone (a shared secret must never be
    /// embedded in a distributable plugin).
    Public,
}

impl ClientType {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientType::Confidential => "confidential",
            ClientType::Public => "public",
        }
    }

    pub fn parse(s: &str) -> Option<ClientType> {
        match s {
            "confidential" => Some(ClientType::Confidential),
            "public" => Some(ClientType::Public),
            _ => None,
        }
    }
}

/// A registered application (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Application {
    pub id: ApplicationId,
    pub client_id: ClientId,
    pub name: String,
    /// Compared exactly, byte for byte, with a request's `redirect_uri`.
    pub redirect_uris: Vec<String>,
    /// The scopes it may ever ask for, in `Scope::ALL` order.
    pub scopes: Vec<Scope>,
    pub client_type: ClientType,
    /// Every token must be DPoP-bound: a token request without a proof is refused.
    pub dpop_bound: bool,
    /// Lifetime of a refresh token since it was issued (each rotation starts it again); an
    /// official native installation's refresh tokens have none (`refresh_expiry`).
    pub refresh_ttl: Duration,
    /// The native platform template a native installation's application was made from
    /// (immutable name, icon, policies); `None` for applications an operator registers.
    pub template: Option<String>,
    /// A native installation's key: every code, grant and token of the application is bound
    /// to it. `None` for applications an operator registers.
    pub key: Option<RegisteredKey>,
    pub created_at: Timestamp,
}

impl Application {
    /// When a refresh token issued at `issued` expires from inactivity: `refresh_ttl` later,
    /// or never for an official native installation (an application made from a platform
    /// template), whose access ends only by disconnect, revocation, a security reset, refresh
    /// token reuse or the loss of its family.
    pub fn refresh_expiry(&self, issued: Timestamp) -> Timestamp {
        if self.template.is_some() {
            Timestamp::end_of_time()
        } else {
            issued.plus(self.refresh_ttl)
        }
    }
}

/// The DPoP key a native installation registered (its JWK thumbprint), and the replacement it
/// asked for with `DPoP-Previous`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredKey {
    /// What consent binds the grant and code to while no replacement waits.
    pub accepted_jkt: String,
    /// Registered with a proof by the accepted key; it becomes the accepted one at the next
    /// successful consent (which revokes the families of the old one), never before.
    pub pending_jkt: Option<String>,
}

impl RegisteredKey {
    /// The key the next consent binds to: the pending replacement when there is one.
    pub fn consent_jkt(&self) -> &str {
        self.pending_jkt.as_deref().unwrap_or(&self.accepted_jkt)
    }
}

/// An application as stored: with the digest of its secret (confidential ones only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredApplication {
    pub app: Application,
    pub secret_digest: Option<SecretDigest>,
}

/// What the operator registers (`pay-server admin create-oauth-app`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApplication {
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// Space-separated scope names.
    pub scopes: String,
    pub public: bool,
    pub dpop_bound: bool,
    /// `None`: `DEFAULT_REFRESH_TTL`.
    pub refresh_ttl: Option<Duration>,
}

impl NewApplication {
    /// Checks every field; the scopes in canonical order.
    pub fn validate(&self) -> Result<Vec<Scope>, FieldError> {
        validate::text("name", &self.name, 100, false)?;
        if self.redirect_uris.is_empty() || self.redirect_uris.len() > MAX_REDIRECT_URIS {
            return Err(FieldError::new(
                "redirectUris",
                format!("redirectUris must have 1 to {MAX_REDIRECT_URIS} entries"),
            ));
        }
        for (i, uri) in self.redirect_uris.iter().enumerate() {
            check_redirect_uri(&format!("redirectUris[{i}]"), uri)?;
            if self.redirect_uris[..i].contains(uri) {
                return Err(FieldError::new(
                    format!("redirectUris[{i}]"),
                    "redirect URI listed twice",
                ));
            }
        }
        let scopes = parse_scopes(&self.scopes).map_err(|e| FieldError::new("scopes", e))?;
        if let Some(ttl) = self.refresh_ttl {
            if ttl < MIN_REFRESH_TTL || ttl > MAX_REFRESH_TTL {
                return Err(FieldError::new(
                    "refreshTtl",
                    "refreshTtl must be between 1 hour and 365 days",
                ));
            }
        }
        Ok(scopes)
    }
}

/// A redirect URI an application may register: an absolute `https` URL, or `http` on a
/// loopback host (native apps and development, RFC 8252 section 7.3); no fragment, no user
/// info.
pub fn check_redirect_uri(field: &str, uri: &str) -> Result<(), FieldError> {
    validate::http_url(field, uri)?;
    if uri.contains('#') {
        return Err(FieldError::new(
            field,
            format!("{field} must not have a fragment"),
        ));
    }
    if let Some(rest) = uri.strip_prefix("http://") {
        let host = rest.split(['/', '?']).next().unwrap_or("");
        let host = match host.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host,
        };
        if !matches!(host, "127.0.0.1" | "[::1]" | "localhost") {
            return Err(FieldError::new(
                field,
                format!("{field} must use https (http only on a loopback host)"),
            ));
        }
    }
    Ok(())
}

/// Parses a space-separated scope list (RFC 6749 section 3.3): every name known, none twice,
/// at least one; the result in `Scope::ALL` order. The error names the problem, never echoes
/// more than the scope name.
pub fn parse_scopes(text: &str) -> Result<Vec<Scope>, String> {
    let mut out = Vec::new();
    for name in text.split(' ') {
        if name.is_empty() {
            if text.is_empty() {
                break;
            }
            return Err("scopes are separated by single spaces".into());
        }
        let scope = Scope::parse(name).ok_or_else(|| {
            let shown: String = name.chars().take(64).collect();
            format!("unknown scope {shown:?}")
        })?;
        if out.contains(&scope) {
            return Err(format!("scope {name} listed twice"));
        }
        out.push(scope);
    }
    if out.is_empty() {
        return Err("at least one scope is required".into());
    }
    Ok(canonical(out))
}

/// Scopes in `Scope::ALL` order, each once.
pub fn canonical(scopes: impl IntoIterator<Item = Scope>) -> Vec<Scope> {
    let set: Vec<Scope> = scopes.into_iter().collect();
    Scope::ALL.into_iter().filter(|s| set.contains(s)).collect()
}

/// `a` and `b` both hold it.
pub fn intersect(a: &[Scope], b: &[Scope]) -> Vec<Scope> {
    canonical(a.iter().copied().filter(|s| b.contains(s)))
}

/// Space-separated names (what a token response's `scope` says).
pub fn scope_string(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The authorization request (`GET`/`POST /oauth/authorize`) after the edge read its fields.
/// The edge has checked `response_type=code` and the PKCE method (`S256`) and challenge syntax
/// (`oauth::pkce::check_challenge`); the domain checks the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizeRequest {
    pub client_id: String,
    pub redirect_uri: String,
    /// Space-separated scope names; required.
    pub scope: String,
    pub state: Option<String>,
    /// The S256 `code_challenge`.
    pub code_challenge: String,
    /// RFC 9449 section 10: binds the code to this key thumbprint (`dpop_jkt`).
    pub dpop_jkt: Option<String>,
}

/// What the consent page shows, once the request is known to be valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentView {
    pub client_id: ClientId,
    pub app_name: String,
    pub redirect_uri: String,
    pub scopes: Vec<Scope>,
    pub state: Option<String>,
}

/// An issued authorization code, returned once: the edge answers 303 to
/// `redirect_uri?code=...&state=...`.
#[derive(Debug, Clone)]
pub struct IssuedCode {
    pub code: Secret,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub grant_id: GrantId,
    pub expires_at: Timestamp,
}

/// A merchant's approval of one application on one company (one per company and
/// application: a new consent updates it, so the links and webhook subscription it owns stay
/// with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub id: GrantId,
    pub company_id: CompanyId,
    pub application_id: ApplicationId,
    /// Who approved last.
    pub user_id: UserId,
    /// The approved scopes; a token never holds more.
    pub scopes: Vec<Scope>,
    /// A native installation's grant: the key thumbprint its last consent bound it to.
    /// `None` for ordinary grants.
    pub bound_jkt: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// A disconnected grant authenticates nothing.
    pub revoked_at: Option<Timestamp>,
}

/// A native installation's key change taking effect at consent (`save_authorization_with_key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySwap {
    /// The key accepted until now: its families are revoked.
    pub from_jkt: String,
    /// The pending key, accepted from now on.
    pub to_jkt: String,
}

/// A code as stored (its digest only), with the family its redemption starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCode {
    pub digest: SecretDigest,
    pub family_id: FamilyId,
    pub application_id: ApplicationId,
    pub redirect_uri: String,
    pub scopes: Vec<Scope>,
    pub code_challenge: String,
    pub dpop_jkt: Option<String>,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    /// Set once, by the one redemption that wins.
    pub used_at: Option<Timestamp>,
}

/// A token family: everything one code's redemption issued, and its rotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    pub id: FamilyId,
    pub grant_id: GrantId,
    pub created_at: Timestamp,
    /// Set by a replayed code or refresh token, or a revocation: every token of the family is
    /// dead from then on, even one written later.
    pub revoked_at: Option<Timestamp>,
}

/// An access or refresh token as stored (its digest only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    pub digest: SecretDigest,
    pub family_id: FamilyId,
    pub grant_id: GrantId,
    pub application_id: ApplicationId,
    pub scopes: Vec<Scope>,
    /// The DPoP key thumbprint the token is bound to.
    pub jkt: Option<String>,
    pub created_at: Timestamp,
    pub expires_at: Timestamp,
    /// Refresh tokens: set once, by the one rotation that wins. Always `None` for access tokens.
    pub spent_at: Option<Timestamp>,
    pub revoked_at: Option<Timestamp>,
}

/// A stored code or token with the grant and family it belongs to (one read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held<T> {
    pub item: T,
    pub grant: Grant,
    pub family: Family,
}

/// What the edge verified of a DPoP proof (`pay_dpop::verify_proof`), as plain values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofFacts {
    /// RFC 7638 thumbprint of the proof key.
    pub jkt: String,
    /// `pay_dpop::jti_digest(jti)`.
    pub jti_digest: [u8; 32],
    /// The normalised `htu`.
    pub htu: String,
    /// The proof's `iat`, unix seconds (already inside the window).
    pub iat: i64,
}

/// How a client authenticates at the token and revocation endpoints (the edge read
/// `client_secret_basic` or `client_secret_post`, never both).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAuth {
    pub client_id: String,
    pub secret: Option<Secret>,
}

/// `token_type` of a token response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenType {
    Bearer,
    DPoP,
}

impl TokenType {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenType::Bearer => "Bearer",
            TokenType::DPoP => "DPoP",
        }
    }
}

/// A successful token response; the secrets are shown this once.
#[derive(Debug, Clone)]
pub struct TokenResponse {
    pub access_token: Secret,
    pub token_type: TokenType,
    pub expires_in_secs: i64,
    pub refresh_token: Secret,
    pub scopes: Vec<Scope>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_parse_strictly_in_canonical_order() {
        assert_eq!(
            parse_scopes("pay:payment-links:write company:read"),
            Ok(vec![Scope::CompanyRead, Scope::PaymentLinksWrite])
        );
        for bad in [
            "",
            " company:read",
            "company:read ",
            "company:read  pay:settings:read",
            "company:read company:read",
            "pay:everything",
            "COMPANY:READ",
            "company:read\tpay:settings:read",
        ] {
            assert!(parse_scopes(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            intersect(
                &[Scope::SettingsRead, Scope::CompanyRead],
                &[Scope::CompanyRead, Scope::WebhooksRead]
            ),
            vec![Scope::CompanyRead]
        );
        assert_eq!(
            scope_string(&[Scope::CompanyRead, Scope::SettingsRead]),
            "company:read pay:settings:read"
        );
    }

    #[test]
    fn redirect_uris_are_https_or_loopback_http() {
        for ok in [
            "https://shop.example/cb",
            "https://shop.example:8443/oauth/cb?x=1",
            "http://127.0.0.1:8123/cb",
            "http://localhost/cb",
            "http://[::1]:9/cb",
        ] {
            assert_eq!(check_redirect_uri("r", ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://shop.example/cb",
            "https://shop.example/cb#frag",
            "https://user@shop.example/cb",
            "shop.example/cb",
            "com.example.app:/cb",
            "http://localhost.evil.example/cb",
            "https://shop.example/c b",
        ] {
            assert!(check_redirect_uri("r", bad).is_err(), "{bad}");
        }
    }

    fn app() -> NewApplication {
        NewApplication {
            name: "Shop".into(),
            redirect_uris: vec!["https://shop.example/cb".into()],
            scopes: "company:read".into(),
            public: false,
            dpop_bound: false,
            refresh_ttl: None,
        }
    }

    #[test]
    fn registration_rules() {
        assert_eq!(app().validate(), Ok(vec![Scope::CompanyRead]));
        let field = |a: NewApplication| a.validate().unwrap_err().field;
        assert_eq!(
            field(NewApplication {
                name: " ".into(),
                ..app()
            }),
            "name"
        );
        assert_eq!(
            field(NewApplication {
                redirect_uris: vec![],
                ..app()
            }),
            "redirectUris"
        );
        let many = (0..11).map(|i| format!("https://s.example/{i}")).collect();
        assert_eq!(
            field(NewApplication {
                redirect_uris: many,
                ..app()
            }),
            "redirectUris"
        );
        let twice = vec!["https://s.example/a".into(), "https://s.example/a".into()];
        assert_eq!(
            field(NewApplication {
                redirect_uris: twice,
                ..app()
            }),
            "redirectUris[1]"
        );
        assert_eq!(
            field(NewApplication {
                scopes: "nope".into(),
                ..app()
            }),
            "scopes"
        );
        assert_eq!(
            field(NewApplication {
                scopes: "".into(),
                ..app()
            }),
            "scopes"
        );
        for ttl in [Duration::minutes(59), Duration::days(366)] {
            let a = NewApplication {
                refresh_ttl: Some(ttl),
                ..app()
            };
            assert_eq!(field(a), "refreshTtl");
        }
        let a = NewApplication {
            refresh_ttl: Some(Duration::hours(1)),
            ..app()
        };
        assert!(a.validate().is_ok());
    }
}
