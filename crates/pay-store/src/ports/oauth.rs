//! `OAuthStore` on `DieselStore`, written once for both backends (`DpopReplayStore`: `dpop`).
//! The one-time steps are single statements (`UPDATE ... WHERE used_at IS NULL`); a rotation is one transaction whose compare-and-set comes last, so the new
//! refresh token is stored before the old one is spent and a lost race rolls back.

use diesel::prelude::*;
use diesel::result::{Error as DieselError, QueryResult};
use pay_domain::kernel::ids::{ApplicationId, ClientId, CompanyId, FamilyId, GrantId};
use pay_domain::kernel::secret::SecretDigest;
use pay_domain::kernel::timestamp::Timestamp;
use pay_domain::oauth::ports::{CompanyGrant, OAuthStore};
use pay_domain::oauth::recovery::TokenAnswer;
use pay_domain::oauth::{
    ConnectedApp, Family, Grant, Held, KeySwap, StoredApplication, StoredCode, StoredToken,
};
use pay_domain::{Fault, PortResult};

use crate::conn::{write_transaction, AnyConnection};
use crate::ports::oauth_recovery::{answer_claim, erase_answers, Erase};
use crate::rows::oauth::{
    scopes_text, AccessRow, ApplicationRow, CodeRow, FamilyRow, GrantRow, RefreshRow,
};
use crate::schema::{
    oauth_access_tokens as access, oauth_applications as apps, oauth_codes as codes,
    oauth_families as families, oauth_grants as grants, oauth_refresh_tokens as refresh,
};
use crate::DieselStore;

pub(crate) fn held<T, R: TryInto<T, Error = Fault>>(
    row: Option<(R, FamilyRow, GrantRow)>,
) -> PortResult<Option<Held<T>>> {
    row.map(|(item, family, grant)| {
        Ok(Held {
            item: item.try_into()?,
            family: Family::try_from(family)?,
            grant: Grant::try_from(grant)?,
        })
    })
    .transpose()
}

/// An access token's row with its family's and grant's.
pub(crate) fn access_token_row(
    conn: &mut AnyConnection,
    digest: &SecretDigest,
) -> QueryResult<Option<(AccessRow, FamilyRow, GrantRow)>> {
    access::table
        .inner_join(families::table.on(families::id.eq(access::family_id)))
        .inner_join(grants::table.on(grants::id.eq(families::grant_id)))
        .filter(access::digest.eq(&digest.0))
        .select((
            AccessRow::as_select(),
            FamilyRow::as_select(),
            GrantRow::as_select(),
        ))
        .first(conn)
        .optional()
}

/// `save_authorization`'s writes, inside the caller's transaction.
fn authorization_in(
    conn: &mut AnyConnection,
    grant: &Grant,
    family: &Family,
    code: &StoredCode,
) -> QueryResult<GrantRow> {
    let company = grant.company_id.to_string();
    let app = grant.application_id.to_string();
    let existing: Option<String> = grants::table
        .filter(grants::company_id.eq(&company))
        .filter(grants::application_id.eq(&app))
        .select(grants::id)
        .first(conn)
        .optional()?;
    let grant_id = match existing {
        Some(id) => {
            diesel::update(grants::table.find(&id))
                .set((
                    grants::user_id.eq(grant.user_id.to_string()),
                    grants::scopes.eq(scopes_text(&grant.scopes)),
                    grants::bound_jkt.eq(grant.bound_jkt.as_deref()),
                    grants::updated_at.eq(grant.updated_at.unix_millis()),
                    grants::revoked_at.eq(None::<i64>),
                ))
                .execute(conn)?;
            id
        }
        None => {
            insert_grant(conn, grant)?;
            grant.id.to_string()
        }
    };
    diesel::insert_into(families::table)
        .values((
            families::id.eq(family.id.to_string()),
            families::grant_id.eq(&grant_id),
            families::created_at.eq(family.created_at.unix_millis()),
            families::revoked_at.eq(family.revoked_at.map(Timestamp::unix_millis)),
        ))
        .execute(conn)?;
    diesel::insert_into(codes::table)
        .values((
            codes::digest.eq(&code.digest.0),
            codes::family_id.eq(code.family_id.to_string()),
            codes::application_id.eq(code.application_id.to_string()),
            codes::redirect_uri.eq(&code.redirect_uri),
            codes::scopes.eq(scopes_text(&code.scopes)),
            codes::code_challenge.eq(&code.code_challenge),
            codes::dpop_jkt.eq(code.dpop_jkt.as_deref()),
            codes::created_at.eq(code.created_at.unix_millis()),
            codes::expires_at.eq(code.expires_at.unix_millis()),
            codes::used_at.eq(code.used_at.map(Timestamp::unix_millis)),
        ))
        .execute(conn)?;
    grants::table
        .find(&grant_id)
        .select(GrantRow::as_select())
        .first(conn)
}

fn insert_grant(conn: &mut AnyConnection, g: &Grant) -> QueryResult<usize> {
    diesel::insert_into(grants::table)
        .values((
            grants::id.eq(g.id.to_string()),
            grants::company_id.eq(g.company_id.to_string()),
            grants::application_id.eq(g.application_id.to_string()),
            grants::user_id.eq(g.user_id.to_string()),
            grants::scopes.eq(scopes_text(&g.scopes)),
            grants::bound_jkt.eq(g.bound_jkt.as_deref()),
            grants::created_at.eq(g.created_at.unix_millis()),
            grants::updated_at.eq(g.updated_at.unix_millis()),
            grants::revoked_at.eq(g.revoked_at.map(Timestamp::unix_millis)),
        ))
        .execute(conn)
}

macro_rules! insert_token {
    ($conn:expr, $table:ident, $t:expr $(, $spent:ident)?) => {{
        let t: &StoredToken = $t;
        diesel::insert_into($table::table)
            .values((
                (
                    $table::digest.eq(&t.digest.0),
                    $table::family_id.eq(t.family_id.to_string()),
                    $table::grant_id.eq(t.grant_id.to_string()),
                    $table::application_id.eq(t.application_id.to_string()),
                    $table::scopes.eq(scopes_text(&t.scopes)),
                    $table::jkt.eq(t.jkt.as_deref()),
                ),
                (
                    $table::created_at.eq(t.created_at.unix_millis()),
                    $table::expires_at.eq(t.expires_at.unix_millis()),
                    $($table::$spent.eq(t.spent_at.map(Timestamp::unix_millis)),)?
                    $table::revoked_at.eq(t.revoked_at.map(Timestamp::unix_millis)),
                ),
            ))
            .execute($conn)
    }};
}

fn insert_pair(conn: &mut AnyConnection, a: &StoredToken, r: &StoredToken) -> QueryResult<()> {
    insert_token!(conn, refresh, r, spent_at)?;
    insert_token!(conn, access, a)?;
    Ok(())
}

/// What an application row stores beside its fields: its redirect URIs as JSON and its refresh
/// lifetime in milliseconds (computed before the write, since they can fail).
pub(crate) struct ApplicationValues {
    uris: String,
    ttl_ms: i64,
}

impl ApplicationValues {
    pub(crate) fn of(s: &StoredApplication) -> PortResult<ApplicationValues> {
        Ok(ApplicationValues {
            uris: serde_json::to_string(&s.app.redirect_uris)
                .map_err(|e| Fault::caused("encode redirect URIs", e))?,
            ttl_ms: i64::try_from(s.app.refresh_ttl.whole_milliseconds())
                .map_err(|_| Fault::new("refresh TTL out of range"))?,
        })
    }

    /// Inserts the application `s` these values were made of.
    pub(crate) fn insert(
        &self,
        conn: &mut AnyConnection,
        s: &StoredApplication,
    ) -> QueryResult<()> {
        let a = &s.app;
        let key = a.key.as_ref();
        diesel::insert_into(apps::table)
            .values((
                (
                    apps::id.eq(a.id.to_string()),
                    apps::client_id.eq(a.client_id.as_str()),
                    apps::name.eq(&a.name),
                    apps::redirect_uris.eq(&self.uris),
                    apps::scopes.eq(scopes_text(&a.scopes)),
                    apps::client_type.eq(a.client_type.as_str()),
                    apps::secret_digest.eq(s.secret_digest.as_ref().map(|d| d.0.as_str())),
                ),
                (
                    apps::dpop_bound.eq(a.dpop_bound),
                    apps::refresh_ttl_ms.eq(self.ttl_ms),
                    apps::template.eq(a.template.as_deref()),
                    apps::created_at.eq(a.created_at.unix_millis()),
                    apps::accepted_jkt.eq(key.map(|k| k.accepted_jkt.as_str())),
                    apps::pending_jkt.eq(key.and_then(|k| k.pending_jkt.as_deref())),
                ),
            ))
            .execute(conn)
            .map(|_| ())
    }
}

impl OAuthStore for DieselStore {
    fn insert_application(&self, s: &StoredApplication) -> PortResult<()> {
        let values = ApplicationValues::of(s)?;
        self.write("insert oauth application", |conn| values.insert(conn, s))
    }

    fn application(&self, client_id: &ClientId) -> PortResult<Option<StoredApplication>> {
        let row = self.run("oauth application", |conn| {
            apps::table
                .filter(apps::client_id.eq(client_id.as_str()))
                .select(ApplicationRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(StoredApplication::try_from).transpose()
    }

    fn save_authorization(
        &self,
        grant: &Grant,
        family: &Family,
        code: &StoredCode,
    ) -> PortResult<Grant> {
        let row = self.write("save oauth authorization", |conn| {
            write_transaction(conn, |conn| authorization_in(conn, grant, family, code))
        })?;
        Grant::try_from(row)
    }

    fn save_authorization_with_key(
        &self,
        grant: &Grant,
        family: &Family,
        code: &StoredCode,
        swap: &KeySwap,
    ) -> PortResult<Option<Grant>> {
        let app = grant.application_id.to_string();
        let row = self.write("save oauth authorization with a new key", |conn| {
            let outcome = write_transaction(conn, |conn| {
                let swapped = diesel::update(
                    apps::table
                        .filter(apps::id.eq(&app))
                        .filter(apps::accepted_jkt.eq(&swap.from_jkt))
                        .filter(apps::pending_jkt.eq(&swap.to_jkt)),
                )
                .set((
                    apps::accepted_jkt.eq(&swap.to_jkt),
                    apps::pending_jkt.eq(None::<String>),
                ))
                .execute(conn)?;
                if swapped != 1 {
                    return Err(DieselError::RollbackTransaction);
                }
                let of_app = grants::table
                    .filter(grants::application_id.eq(&app))
                    .select(grants::id);
                diesel::update(
                    families::table
                        .filter(families::grant_id.eq_any(of_app))
                        .filter(families::revoked_at.is_null()),
                )
                .set(families::revoked_at.eq(grant.updated_at.unix_millis()))
                .execute(conn)?;
                erase_answers(conn, Erase::Application(&app))?;
                authorization_in(conn, grant, family, code)
            });
            match outcome {
                Ok(row) => Ok(Some(row)),
                Err(DieselError::RollbackTransaction) => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        row.map(Grant::try_from).transpose()
    }

    fn set_pending_key(
        &self,
        application: ApplicationId,
        accepted_jkt: &str,
        pending_jkt: Option<&str>,
    ) -> PortResult<bool> {
        let n = self.write("set a native application's pending key", |conn| {
            diesel::update(
                apps::table
                    .filter(apps::id.eq(application.to_string()))
                    .filter(apps::accepted_jkt.eq(accepted_jkt)),
            )
            .set(apps::pending_jkt.eq(pending_jkt))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    fn grant(&self, company: CompanyId, application: ApplicationId) -> PortResult<Option<Grant>> {
        let row = self.run("oauth grant", |conn| {
            grants::table
                .filter(grants::company_id.eq(company.to_string()))
                .filter(grants::application_id.eq(application.to_string()))
                .select(GrantRow::as_select())
                .first(conn)
                .optional()
        })?;
        row.map(Grant::try_from).transpose()
    }

    fn company_grants(&self, company: CompanyId) -> PortResult<Vec<ConnectedApp>> {
        crate::ports::oauth_grants::company_grants(self, company)
    }

    fn code(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredCode>>> {
        let row = self.run("oauth code", |conn| {
            codes::table
                .inner_join(families::table.on(families::id.eq(codes::family_id)))
                .inner_join(grants::table.on(grants::id.eq(families::grant_id)))
                .filter(codes::digest.eq(&digest.0))
                .select((
                    CodeRow::as_select(),
                    FamilyRow::as_select(),
                    GrantRow::as_select(),
                ))
                .first(conn)
                .optional()
        })?;
        held(row)
    }

    fn claim_code(&self, digest: &SecretDigest, at: Timestamp) -> PortResult<bool> {
        let n = self.write("claim oauth code", |conn| {
            diesel::update(
                codes::table
                    .filter(codes::digest.eq(&digest.0))
                    .filter(codes::used_at.is_null()),
            )
            .set(codes::used_at.eq(at.unix_millis()))
            .execute(conn)
        })?;
        Ok(n == 1)
    }

    fn insert_tokens(
        &self,
        a: &StoredToken,
        r: &StoredToken,
        answer: Option<&TokenAnswer>,
    ) -> PortResult<()> {
        self.write("insert oauth tokens", |conn| {
            write_transaction(conn, |conn| {
                insert_pair(conn, a, r)?;
                answer_claim(conn, answer)
            })
        })
    }

    fn refresh_token(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredToken>>> {
        let row = self.run("oauth refresh token", |conn| {
            refresh::table
                .inner_join(families::table.on(families::id.eq(refresh::family_id)))
                .inner_join(grants::table.on(grants::id.eq(families::grant_id)))
                .filter(refresh::digest.eq(&digest.0))
                .select((
                    RefreshRow::as_select(),
                    FamilyRow::as_select(),
                    GrantRow::as_select(),
                ))
                .first(conn)
                .optional()
        })?;
        held(row)
    }

    fn rotate_refresh(
        &self,
        old: &SecretDigest,
        a: &StoredToken,
        r: &StoredToken,
        at: Timestamp,
        answer: Option<&TokenAnswer>,
    ) -> PortResult<bool> {
        self.write("rotate oauth refresh token", |conn| {
            let outcome = write_transaction(conn, |conn| {
                insert_pair(conn, a, r)?;
                answer_claim(conn, answer)?;
                let spent = diesel::update(
                    refresh::table
                        .filter(refresh::digest.eq(&old.0))
                        .filter(refresh::spent_at.is_null())
                        .filter(refresh::revoked_at.is_null()),
                )
                .set(refresh::spent_at.eq(at.unix_millis()))
                .execute(conn)?;
                if spent != 1 {
                    return Err(DieselError::RollbackTransaction);
                }
                // The old token's answer is no longer its family's live successor.
                erase_answers(conn, Erase::Successor(&old.0))?;
                Ok(())
            });
            match outcome {
                Ok(()) => Ok(true),
                Err(DieselError::RollbackTransaction) => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    fn access_token(&self, digest: &SecretDigest) -> PortResult<Option<Held<StoredToken>>> {
        let row = self.run("oauth access token", |conn| access_token_row(conn, digest))?;
        held(row)
    }

    fn revoke_family(&self, family: FamilyId, at: Timestamp) -> PortResult<bool> {
        let family = family.to_string();
        let n = self.write("revoke oauth family", |conn| {
            write_transaction(conn, |conn| {
                let n = diesel::update(
                    families::table
                        .filter(families::id.eq(&family))
                        .filter(families::revoked_at.is_null()),
                )
                .set(families::revoked_at.eq(at.unix_millis()))
                .execute(conn)?;
                erase_answers(conn, Erase::Family(&family))?;
                Ok(n)
            })
        })?;
        Ok(n == 1)
    }

    fn revoke_grant(&self, grant: GrantId, at: Timestamp) -> PortResult<bool> {
        let grant = grant.to_string();
        let n = self.write("revoke oauth grant", |conn| {
            write_transaction(conn, |conn| {
                let n = diesel::update(
                    grants::table
                        .filter(grants::id.eq(&grant))
                        .filter(grants::revoked_at.is_null()),
                )
                .set(grants::revoked_at.eq(at.unix_millis()))
                .execute(conn)?;
                if n == 1 {
                    diesel::update(
                        families::table
                            .filter(families::grant_id.eq(&grant))
                            .filter(families::revoked_at.is_null()),
                    )
                    .set(families::revoked_at.eq(at.unix_millis()))
                    .execute(conn)?;
                }
                erase_answers(conn, Erase::Grant(&grant))?;
                Ok(n)
            })
        })?;
        Ok(n == 1)
    }

    fn revoke_company_grants(
        &self,
        company: CompanyId,
        at: Timestamp,
    ) -> PortResult<Vec<CompanyGrant>> {
        let company = company.to_string();
        let at = at.unix_millis();
        let rows = self.write("revoke company oauth grants", |conn| {
            write_transaction(conn, |conn| {
                let rows: Vec<(String, String)> = grants::table
                    .filter(grants::company_id.eq(&company))
                    .select((grants::id, grants::application_id))
                    .load(conn)?;
                let native: Vec<String> = apps::table
                    .filter(apps::id.eq_any(rows.iter().map(|r| &r.1)))
                    .filter(apps::template.is_not_null())
                    .select(apps::id)
                    .load(conn)?;
                let mut out = Vec::with_capacity(rows.len());
                for (id, app) in rows {
                    let n = diesel::update(
                        grants::table
                            .filter(grants::id.eq(&id))
                            .filter(grants::revoked_at.is_null()),
                    )
                    .set(grants::revoked_at.eq(at))
                    .execute(conn)?;
                    diesel::update(
                        families::table
                            .filter(families::grant_id.eq(&id))
                            .filter(families::revoked_at.is_null()),
                    )
                    .set(families::revoked_at.eq(at))
                    .execute(conn)?;
                    erase_answers(conn, Erase::Grant(&id))?;
                    out.push((id, n == 1, native.contains(&app)));
                }
                Ok(out)
            })
        })?;
        rows.into_iter()
            .map(|(id, revoked_now, native)| {
                Ok(CompanyGrant {
                    id: GrantId::parse(&id).ok_or_else(|| Fault::new("bad grant id"))?,
                    revoked_now,
                    native,
                })
            })
            .collect()
    }

    fn revoke_access_token(&self, digest: &SecretDigest, at: Timestamp) -> PortResult<bool> {
        let n = self.write("revoke oauth access token", |conn| {
            write_transaction(conn, |conn| {
                let n = diesel::update(
                    access::table
                        .filter(access::digest.eq(&digest.0))
                        .filter(access::revoked_at.is_null()),
                )
                .set(access::revoked_at.eq(at.unix_millis()))
                .execute(conn)?;
                erase_answers(conn, Erase::Access(&digest.0))?;
                Ok(n)
            })
        })?;
        Ok(n == 1)
    }

    fn prune_oauth(&self, before: Timestamp, spent_before: Timestamp) -> PortResult<u64> {
        let (before, spent_before) = (before.unix_millis(), spent_before.unix_millis());
        let n = self.write("prune oauth", |conn| {
            write_transaction(conn, |conn| {
                Ok(
                    diesel::delete(codes::table.filter(codes::expires_at.lt(before)))
                        .execute(conn)?
                        + diesel::delete(access::table.filter(access::expires_at.lt(before)))
                            .execute(conn)?
                        + diesel::delete(
                            refresh::table.filter(
                                refresh::expires_at
                                    .lt(before)
                                    .or(refresh::spent_at.lt(spent_before)),
                            ),
                        )
                        .execute(conn)?,
                )
            })
        })?;
        Ok(n as u64)
    }
}
