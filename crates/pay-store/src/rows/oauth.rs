//! OAuth rows: applications, grants, families, codes and tokens as read back. Scope lists are
//! stored as space-separated names, redirect URIs as a JSON array.

use diesel::prelude::*;
use pay_domain::kernel::ids::{ApplicationId, ClientId, CompanyId, FamilyId, GrantId, UserId};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::oauth::{
    scope_string, Application, ClientType, Family, Grant, RegisteredKey, StoredApplication,
    StoredCode, StoredToken,
};
use pay_domain::tenancy::Scope;
use pay_domain::{Fault, PortResult};

use super::{corrupt, id, instant, opt_instant};
use crate::conn::MultiBackend;
use crate::schema::{
    oauth_access_tokens, oauth_applications, oauth_codes, oauth_families, oauth_grants,
    oauth_refresh_tokens,
};

pub(crate) fn scopes_text(scopes: &[Scope]) -> String {
    scope_string(scopes)
}

pub(crate) fn scopes(text: &str, column: &str) -> PortResult<Vec<Scope>> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(' ')
        .map(|s| Scope::parse(s).ok_or_else(|| corrupt(column)))
        .collect()
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = oauth_applications, check_for_backend(MultiBackend))]
pub(crate) struct ApplicationRow {
    id: String,
    client_id: String,
    name: String,
    redirect_uris: String,
    scopes: String,
    client_type: String,
    secret_digest: Option<String>,
    dpop_bound: bool,
    refresh_ttl_ms: i64,
    template: Option<String>,
    created_at: i64,
    accepted_jkt: Option<String>,
    pending_jkt: Option<String>,
}

impl TryFrom<ApplicationRow> for StoredApplication {
    type Error = Fault;

    fn try_from(r: ApplicationRow) -> PortResult<StoredApplication> {
        Ok(StoredApplication {
            app: Application {
                id: id(&r.id, ApplicationId::parse, "oauth_applications.id")?,
                client_id: id(
                    &r.client_id,
                    ClientId::parse,
                    "oauth_applications.client_id",
                )?,
                name: r.name,
                redirect_uris: serde_json::from_str(&r.redirect_uris)
                    .map_err(|_| corrupt("oauth_applications.redirect_uris"))?,
                scopes: scopes(&r.scopes, "oauth_applications.scopes")?,
                client_type: ClientType::parse(&r.client_type)
                    .ok_or_else(|| corrupt("oauth_applications.client_type"))?,
                dpop_bound: r.dpop_bound,
                refresh_ttl: time::Duration::milliseconds(r.refresh_ttl_ms),
                template: r.template,
                key: match (r.accepted_jkt, r.pending_jkt) {
                    (Some(accepted_jkt), pending_jkt) => Some(RegisteredKey {
                        accepted_jkt,
                        pending_jkt,
                    }),
                    (None, None) => None,
                    (None, Some(_)) => return Err(corrupt("oauth_applications.pending_jkt")),
                },
                created_at: instant(r.created_at, "oauth_applications.created_at")?,
            },
            secret_digest: r.secret_digest.map(SecretDigest),
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = oauth_grants, check_for_backend(MultiBackend))]
pub(crate) struct GrantRow {
    id: String,
    company_id: String,
    application_id: String,
    user_id: String,
    scopes: String,
    bound_jkt: Option<String>,
    created_at: i64,
    updated_at: i64,
    revoked_at: Option<i64>,
}

impl GrantRow {
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn application_id(&self) -> &str {
        &self.application_id
    }
}

impl TryFrom<GrantRow> for Grant {
    type Error = Fault;

    fn try_from(r: GrantRow) -> PortResult<Grant> {
        Ok(Grant {
            id: id(&r.id, GrantId::parse, "oauth_grants.id")?,
            company_id: id(&r.company_id, CompanyId::parse, "oauth_grants.company_id")?,
            application_id: id(
                &r.application_id,
                ApplicationId::parse,
                "oauth_grants.application_id",
            )?,
            user_id: id(&r.user_id, UserId::parse, "oauth_grants.user_id")?,
            scopes: scopes(&r.scopes, "oauth_grants.scopes")?,
            bound_jkt: r.bound_jkt,
            created_at: instant(r.created_at, "oauth_grants.created_at")?,
            updated_at: instant(r.updated_at, "oauth_grants.updated_at")?,
            revoked_at: opt_instant(r.revoked_at, "oauth_grants.revoked_at")?,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = oauth_families, check_for_backend(MultiBackend))]
pub(crate) struct FamilyRow {
    id: String,
    grant_id: String,
    created_at: i64,
    revoked_at: Option<i64>,
}

impl TryFrom<FamilyRow> for Family {
    type Error = Fault;

    fn try_from(r: FamilyRow) -> PortResult<Family> {
        Ok(Family {
            id: id(&r.id, FamilyId::parse, "oauth_families.id")?,
            grant_id: id(&r.grant_id, GrantId::parse, "oauth_families.grant_id")?,
            created_at: instant(r.created_at, "oauth_families.created_at")?,
            revoked_at: opt_instant(r.revoked_at, "oauth_families.revoked_at")?,
        })
    }
}

#[derive(Queryable, Selectable)]
#[diesel(table_name = oauth_codes, check_for_backend(MultiBackend))]
pub(crate) struct CodeRow {
    digest: String,
    family_id: String,
    application_id: String,
    redirect_uri: String,
    scopes: String,
    code_challenge: String,
    dpop_jkt: Option<String>,
    created_at: i64,
    expires_at: i64,
    used_at: Option<i64>,
}

impl TryFrom<CodeRow> for StoredCode {
    type Error = Fault;

    fn try_from(r: CodeRow) -> PortResult<StoredCode> {
        Ok(StoredCode {
            digest: SecretDigest(r.digest),
            family_id: id(&r.family_id, FamilyId::parse, "oauth_codes.family_id")?,
            application_id: id(
                &r.application_id,
                ApplicationId::parse,
                "oauth_codes.application_id",
            )?,
            redirect_uri: r.redirect_uri,
            scopes: scopes(&r.scopes, "oauth_codes.scopes")?,
            code_challenge: r.code_challenge,
            dpop_jkt: r.dpop_jkt,
            created_at: instant(r.created_at, "oauth_codes.created_at")?,
            expires_at: instant(r.expires_at, "oauth_codes.expires_at")?,
            used_at: opt_instant(r.used_at, "oauth_codes.used_at")?,
        })
    }
}

/// The columns both token tables share, plus `spent_at` (refresh tokens only).
macro_rules! token_row {
    ($row:ident, $table:ident, $name:literal $(, $spent:ident)?) => {
        #[derive(Queryable, Selectable)]
        #[diesel(table_name = $table, check_for_backend(MultiBackend))]
        pub(crate) struct $row {
            digest: String,
            family_id: String,
            grant_id: String,
            application_id: String,
            scopes: String,
            jkt: Option<String>,
            created_at: i64,
            expires_at: i64,
            $($spent: Option<i64>,)?
            revoked_at: Option<i64>,
        }

        impl TryFrom<$row> for StoredToken {
            type Error = Fault;

            fn try_from(r: $row) -> PortResult<StoredToken> {
                let spent: Option<i64> = None $(.or(r.$spent))?;
                let spent_at = opt_instant(spent, concat!($name, ".spent_at"))?;
                Ok(StoredToken {
                    digest: SecretDigest(r.digest),
                    family_id: id(&r.family_id, FamilyId::parse, concat!($name, ".family_id"))?,
                    grant_id: id(&r.grant_id, GrantId::parse, concat!($name, ".grant_id"))?,
                    application_id: id(
                        &r.application_id,
                        ApplicationId::parse,
                        concat!($name, ".application_id"),
                    )?,
                    scopes: scopes(&r.scopes, concat!($name, ".scopes"))?,
                    jkt: r.jkt,
                    created_at: instant(r.created_at, concat!($name, ".created_at"))?,
                    expires_at: instant(r.expires_at, concat!($name, ".expires_at"))?,
                    spent_at,
                    revoked_at: opt_instant(r.revoked_at, concat!($name, ".revoked_at"))?,
                })
            }
        }
    };
}

token_row!(
    RefreshRow,
    oauth_refresh_tokens,
    "oauth_refresh_tokens",
    spent_at
);
token_row!(AccessRow, oauth_access_tokens, "oauth_access_tokens");

/// An access token with its family and grant, read by name from PostgreSQL's lookup that also
/// records the proof's `jti` (`ports::oauth`), and whether it recorded it.
#[derive(QueryableByName)]
pub(crate) struct HeldAccessRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    t_digest: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    t_family_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    t_grant_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    t_application_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    t_scopes: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    t_jkt: Option<String>,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    t_created_at: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    t_expires_at: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    t_revoked_at: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    f_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    f_grant_id: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    f_created_at: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    f_revoked_at: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Text)]
    g_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    g_company_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    g_application_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    g_user_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    g_scopes: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    g_bound_jkt: Option<String>,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    g_created_at: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    g_updated_at: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    g_revoked_at: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    recorded: bool,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    generation: i64,
}

impl HeldAccessRow {
    /// The three rows the typed lookup reads, whether the `jti` was recorded, and the OAuth
    /// revocation generation of the same snapshot.
    pub(crate) fn split(self) -> ((AccessRow, FamilyRow, GrantRow), bool, i64) {
        let token = AccessRow {
            digest: self.t_digest,
            family_id: self.t_family_id,
            grant_id: self.t_grant_id,
            application_id: self.t_application_id,
            scopes: self.t_scopes,
            jkt: self.t_jkt,
            created_at: self.t_created_at,
            expires_at: self.t_expires_at,
            revoked_at: self.t_revoked_at,
        };
        let family = FamilyRow {
            id: self.f_id,
            grant_id: self.f_grant_id,
            created_at: self.f_created_at,
            revoked_at: self.f_revoked_at,
        };
        let grant = GrantRow {
            id: self.g_id,
            company_id: self.g_company_id,
            application_id: self.g_application_id,
            user_id: self.g_user_id,
            scopes: self.g_scopes,
            bound_jkt: self.g_bound_jkt,
            created_at: self.g_created_at,
            updated_at: self.g_updated_at,
            revoked_at: self.g_revoked_at,
        };
        ((token, family, grant), self.recorded, self.generation)
    }
}
